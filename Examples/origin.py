#!/usr/bin/env python3
"""The example cluster's upstream on 127.0.0.1:8080 (Examples/monarch.yml routes api/... here).

GET serves the files under Bundle/data (as `python3 -m http.server --directory Bundle/data`
would); /counter answers {"value": N} to GET, and adds one on POST. Ctrl-C stops it.
"""
import json
import os
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from functools import partial

LOCK = threading.Lock()
COUNT = {"value": 0}


class Handler(SimpleHTTPRequestHandler):
    def counter(self, add):
        with LOCK:
            COUNT["value"] += add
            body = json.dumps(COUNT).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.split("?")[0] == "/counter":
            self.counter(0)
        else:
            super().do_GET()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.path.split("?")[0] == "/counter":
            self.counter(1)
        else:
            self.send_error(404)


if __name__ == "__main__":
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Bundle", "data")
    server = ThreadingHTTPServer(("127.0.0.1", 8080), partial(Handler, directory=folder))
    print("serving Bundle/data and /counter on http://127.0.0.1:8080", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
