#!/usr/bin/env python3
"""The attack suite's own HTTP upstream: misbehaving and private answers on 127.0.0.1.

Listens on 127.0.0.1 (port: first argument, 0 for a free one), prints the port on its own
line, and serves until its standard input closes or it is terminated. One asyncio loop, so
thousands of hanging connections cost little. Keeps a log of every request it receives, with
the request target and header bytes exactly as they arrived (as latin-1 text).

Endpoints (any method):
  /personal?ms=N&cc=V&cookie=1&vary=H&by=accept
                  "you are KEY" for the request's X-Api-Key (else "anonymous"), after N ms;
                  Cache-Control: V (default max-age=60); Set-Cookie: sid=KEY when cookie=1
                  and a key was sent; Vary: H when given. by=accept: the body is JSON or XML
                  after the Accept header (Content-Type to match).
  /echo?ms=N&cc=V&vary=H JSON {method, target, headers, body} of the request, after N ms,
                  Cache-Control: V (default max-age=60); Vary: H when given
  /slow?ms=N      "finally" after N ms
  /big?bytes=N    N bytes (a repeating pattern), Content-Length set
  /hang           reads the request and never answers (until the client goes)
  /reset          reads the request, then resets the connection (RST)
  /garbage        reads the request, answers bytes that are not HTTP, closes
  /half           announces 1000 bytes, sends 10, closes
  /drip?ms=N      headers at once, then one body byte every N ms (100 bytes)
  /_log?since=K   JSON: the log entries from index K on (itself not logged), and "next"
"""
import asyncio
import json
import os
import random
import socket
import struct
import sys
import threading
from urllib.parse import parse_qs, urlsplit

LOG = []
PATTERN = bytes(range(32, 127)) * 64


def big_body(size):
    reps = size // len(PATTERN) + 1
    return (PATTERN * reps)[:size]


def response(status, body=b"", headers=(), reason="OK"):
    lines = ["HTTP/1.1 %d %s" % (status, reason)]
    for name, value in headers:
        lines.append("%s: %s" % (name, value))
    lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def read_request(reader):
    """(method, target, headers [(name, value)], body) or None at end of stream."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    try:
        method, target, _ = lines[0].split(" ", 2)
    except ValueError:
        return None
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        name, _, value = line.partition(":")
        headers.append((name, value.strip(" ")))
    length = 0
    chunked = False
    for name, value in headers:
        if name.lower() == "content-length":
            length = int(value)
        if name.lower() == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    body = b""
    try:
        if chunked:
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    break
                body += await reader.readexactly(size)
                await reader.readexactly(2)
        elif length:
            body = await reader.readexactly(length)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    return method, target, headers, body


def header(headers, name):
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def reset(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def handle(reader, writer):
    try:
        while True:
            request = await read_request(reader)
            if request is None:
                break
            method, target, headers, body = request
            url = urlsplit(target)
            query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            path = url.path
            if path != "/_log":
                LOG.append({"method": method, "target": target, "headers": headers, "bodyLength": len(body),
                            "body": body.decode("latin-1")})
            ms = int(query.get("ms", "0") or 0)
            if ms and path in ("/personal", "/echo", "/slow"):
                await asyncio.sleep(ms / 1000)
            if path == "/personal":
                key = header(headers, "x-api-key") or "anonymous"
                extra = [("Cache-Control", query.get("cc", "max-age=60"))]
                if query.get("cookie") == "1" and header(headers, "x-api-key"):
                    extra.append(("Set-Cookie", "sid=%s; Path=/" % key))
                if query.get("vary"):
                    extra.append(("Vary", query["vary"]))
                if query.get("by") == "accept":
                    accept = header(headers, "accept") or ""
                    if "xml" in accept:
                        text, kind = "<you>%s</you>" % key, "application/xml"
                    else:
                        text, kind = json.dumps({"you": key}), "application/json"
                else:
                    text, kind = "you are %s" % key, "text/plain"
                writer.write(response(200, text.encode(), [("Content-Type", kind)] + extra))
            elif path == "/echo":
                echoed = {"method": method, "target": target, "headers": headers, "body": body.decode("latin-1")}
                writer.write(response(200, json.dumps(echoed).encode(), [
                    ("Content-Type", "application/json"), ("Cache-Control", query.get("cc", "max-age=60"))]
                    + ([("Vary", query["vary"])] if query.get("vary") else [])))
            elif path == "/slow":
                writer.write(response(200, b"finally", [("Content-Type", "text/plain"), ("Cache-Control", "no-store")]))
            elif path == "/big":
                writer.write(response(200, big_body(int(query.get("bytes", "0"))), [
                    ("Content-Type", "application/octet-stream"), ("Cache-Control", "no-store")]))
            elif path == "/hang":
                # Hold the connection until the client goes away.
                while await reader.read(65536):
                    pass
                break
            elif path == "/reset":
                reset(writer)
                return
            elif path == "/garbage":
                writer.write(random.Random(len(LOG)).randbytes(4096).replace(b"HTTP", b"xxxx"))
                await writer.drain()
                break
            elif path == "/half":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n0123456789")
                await writer.drain()
                break
            elif path == "/drip":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n")
                for _ in range(100):
                    writer.write(b"d")
                    await writer.drain()
                    await asyncio.sleep(int(query.get("ms", "100")) / 1000)
            elif path == "/_log":
                since = int(query.get("since", "0"))
                data = json.dumps({"entries": LOG[since:], "next": len(LOG)}).encode()
                writer.write(response(200, data, [("Content-Type", "application/json"), ("Cache-Control", "no-store")]))
            else:
                writer.write(response(404, b"no such endpoint", [("Content-Type", "text/plain")], "Not Found"))
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


def exit_when_stdin_closes():
    try:
        while sys.stdin.buffer.read(1):
            pass
    finally:
        os._exit(0)


async def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024, limit=1 << 20)
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
