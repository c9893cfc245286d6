#!/usr/bin/env python3
"""A small HTTP origin for the network worker's tests.

Listens on 127.0.0.1, on the port given as the first argument (0: a free one), prints the
port on its own line on stdout, and serves until its standard input closes (so it never
outlives the test process that started it) or it is terminated.

Endpoints (any method; HEAD answers without a body):
  /json                      1 KB of JSON, with a header sent twice (X-Repeated)
  /status/N                  status N
  /flaky/NAME?fail=K         503 the first K times per NAME, then 200
  /slow?ms=N&name=X          answers after N ms; notes X in /stats "closed" if the client
                             goes away first
  /big?bytes=N&length=0|1    N bytes, with a Content-Length (1) or chunked (0)
  /hangup?ms=N               1 KB of JSON, kept alive, then the connection closed by the
                             server N ms later (an idle timeout)
  /redirect?to=URL&status=S  S (302) with Location: URL
  /redirect-loop             302 to itself
  /etag                      ETag "v1" and max-age=60; 304 when If-None-Match matches
  /cache-control?value=V     Cache-Control: V
  /tagged/NAME?keys=K&header=H   "NAME N" (N: hits of the path) with header H (Surrogate-Key) set to K
  /gzip                      a gzip-encoded text body
  /echo                      JSON of the method, headers and body received
  /mirror?vary=V             JSON of the request target and headers (names lowercase), with
                             Vary: V when given
  /stats                     JSON: connections accepted, hits per path, closed slow names
"""
import gzip
import json
import os
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

LOCK = threading.Lock()
STATE = {"connections": 0, "hits": {}, "closed": [], "flaky": {}}
JSON_BODY = json.dumps({"items": [{"id": i, "name": "item %03d" % i} for i in range(36)]})[:1000]
JSON_BODY = (JSON_BODY + " " * (1024 - len(JSON_BODY))).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Small answers leave at once instead of waiting for the client's delayed ACK (~40 ms each).
    disable_nagle_algorithm = True

    def setup(self):
        super().setup()
        with LOCK:
            STATE["connections"] += 1

    def log_message(self, format, *args):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(body)

    def client_gone(self):
        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def handle_any(self):
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = url.path
        with LOCK:
            STATE["hits"][path] = STATE["hits"].get(path, 0) + 1

        if path == "/json":
            self.send(200, JSON_BODY, [("Content-Type", "application/json"), ("X-Repeated", "one"), ("X-Repeated", "two")])
        elif path.startswith("/status/"):
            status = int(path.split("/")[2])
            self.send(status, ("status %d" % status).encode(), [("Content-Type", "text/plain")])
        elif path.startswith("/flaky/"):
            name = path.split("/")[2]
            fail = int(query.get("fail", "1"))
            with LOCK:
                seen = STATE["flaky"].get(name, 0)
                STATE["flaky"][name] = seen + 1
            if seen < fail:
                self.send(503, b"try again", [("Content-Type", "text/plain")])
            else:
                self.send(200, ("ok after %d" % seen).encode(), [("Content-Type", "text/plain")])
        elif path == "/slow":
            end = time.monotonic() + int(query.get("ms", "1000")) / 1000
            while time.monotonic() < end:
                if self.client_gone():
                    with LOCK:
                        STATE["closed"].append(query.get("name", ""))
                    self.close_connection = True
                    return
                time.sleep(0.01)
            self.send(200, b"finally", [("Content-Type", "text/plain")])
        elif path == "/big":
            size = int(query.get("bytes", "0"))
            chunk = b"x" * 65536
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            if query.get("length", "1") == "1":
                self.send_header("Content-Length", str(size))
                self.end_headers()
                try:
                    while size > 0 and self.command != "HEAD":
                        part = chunk[: min(size, len(chunk))]
                        self.wfile.write(part)
                        size -= len(part)
                except OSError:
                    self.close_connection = True
            else:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    while size > 0 and self.command != "HEAD":
                        part = chunk[: min(size, len(chunk))]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                        size -= len(part)
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    self.close_connection = True
        elif path == "/hangup":
            self.send(200, JSON_BODY, [("Content-Type", "application/json")])
            self.wfile.flush()
            connection = self.connection

            def hang_up():
                time.sleep(int(query.get("ms", "50")) / 1000)
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            threading.Thread(target=hang_up, daemon=True).start()
        elif path == "/redirect":
            status = int(query.get("status", "302"))
            self.send(status, b"moved", [("Location", query.get("to", "/json"))])
        elif path == "/redirect-loop":
            self.send(302, b"again", [("Location", "/redirect-loop")])
        elif path == "/etag":
            headers = [("ETag", '"v1"'), ("Cache-Control", "max-age=" + query.get("max-age", "60"))]
            if self.headers.get("If-None-Match") == '"v1"':
                with LOCK:
                    STATE["notModified"] = STATE.get("notModified", 0) + 1
                self.send(304, b"", headers)
            else:
                self.send(200, b"tagged body", headers + [("Content-Type", "text/plain")])
        elif path.startswith("/tagged/"):
            with LOCK:
                seen = STATE["hits"][path]
            header = query.get("header", "Surrogate-Key")
            self.send(200, ("%s %d" % (path.split("/")[2], seen)).encode(),
                      [("Content-Type", "text/plain"), (header, query.get("keys", ""))])
        elif path == "/cache-control":
            self.send(200, b"hinted", [("Cache-Control", query.get("value", ""))])
        elif path == "/gzip":
            text = ("compressible text " * 200).encode()
            self.send(200, gzip.compress(text), [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")])
        elif path == "/echo":
            echoed = {
                "method": self.command,
                "headers": {name: value for name, value in self.headers.items()},
                "body": body.decode("utf-8", "replace"),
            }
            self.send(200, json.dumps(echoed).encode(), [("Content-Type", "application/json")])
        elif path == "/mirror":
            # The request target and headers, with Vary: V when ?vary=V (variants, query order).
            mirrored = {"target": self.path, "headers": {name.lower(): value for name, value in self.headers.items()}}
            extra = [("Vary", query["vary"])] if query.get("vary") else []
            self.send(200, json.dumps(mirrored).encode(), [("Content-Type", "application/json")] + extra)
        elif path == "/counter":
            # POST adds one; every method answers the count (for mutations that invalidate).
            with LOCK:
                if self.command == "POST":
                    STATE["counter"] = STATE.get("counter", 0) + 1
                value = STATE.get("counter", 0)
            self.send(200, json.dumps({"value": value}).encode(), [("Content-Type", "application/json")])
        elif path == "/items":
            # The numbers 0..<total, `per` at a time: ?page=N (from 1).
            total, per, page = int(query.get("total", "10")), int(query.get("per", "4")), int(query.get("page", "1"))
            items = list(range(total))[(page - 1) * per:page * per]
            self.send(200, json.dumps(items).encode(), [("Content-Type", "application/json")])
        elif path == "/stats":
            with LOCK:
                stats = json.dumps(STATE).encode()
            self.send(200, stats, [("Content-Type", "application/json"), ("Cache-Control", "no-store")])
        else:
            self.send(404, b"no such endpoint", [("Content-Type", "text/plain")])

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512

    def handle_error(self, request, client_address):
        # Clients that go away mid-answer (cancelled or refused transfers) are expected.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def exit_when_stdin_closes():
    try:
        while sys.stdin.buffer.read(1):
            pass
    finally:
        os._exit(0)


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = Server(("127.0.0.1", port), Handler)
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
