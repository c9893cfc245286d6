#!/usr/bin/env python3
"""The example cluster's upstream on 127.0.0.1:8081 (Examples/monarch.yml routes api/... here).

GET serves the files under Bundle/data (as `python3 -m http.server --directory Bundle/data`
would); /counter answers {"value": N} to GET, and adds one on POST; POST /notes with a JSON
body {"text": "..."} keeps a note and answers it, 201 {"id": N, "text": "..."}, and GET /notes
lists them. Each request is logged on standard error. Ctrl-C stops it.
"""
import json
import os
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from functools import partial

LOCK = threading.Lock()
COUNT = {"value": 0}
NOTES = []


class Handler(SimpleHTTPRequestHandler):
    def answer(self, status, value):
        body = json.dumps(value).encode() + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def counter(self, add):
        with LOCK:
            COUNT["value"] += add
            value = dict(COUNT)
        self.answer(200, value)

    def add_note(self, data):
        try:
            text = json.loads(data)["text"]
            if not isinstance(text, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self.answer(400, {"error": 'send a JSON object {"text": "..."}'})
            return
        with LOCK:
            note = {"id": len(NOTES) + 1, "text": text}
            NOTES.append(note)
        self.answer(201, note)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/counter":
            self.counter(0)
        elif path == "/notes":
            with LOCK:
                notes = list(NOTES)
            self.answer(200, notes)
        else:
            super().do_GET()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length)
        path = self.path.split("?")[0]
        if path == "/counter":
            self.counter(1)
        elif path == "/notes":
            self.add_note(data)
        else:
            self.send_error(404)


if __name__ == "__main__":
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Bundle", "data")
    server = ThreadingHTTPServer(("127.0.0.1", 8081), partial(Handler, directory=folder))
    print("serving Bundle/data, /counter and /notes on http://127.0.0.1:8081", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
