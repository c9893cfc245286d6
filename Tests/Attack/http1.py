"""An HTTP/1.1 client of the attack suite's own, for the coordinator's front door
(`listen.http`): raw sockets, requests written byte for byte as a case wants them (smuggling
forms included), answers split off the stream by their `Content-Length`. Everything is
blocking with explicit time limits, so a misbehaving front door makes a case fail instead of
hanging the suite. Python 3 standard library only.
"""
import socket
import time

import wire


class Response:
    """One answer read off a connection: status, headers (lowercased names, in order), body."""

    def __init__(self, status, reason, headers, body, raw_head):
        self.status = status
        self.reason = reason
        self.headers = headers  # [(name lowercased, value)]
        self.body = body
        self.raw_head = raw_head

    def header(self, name):
        name = name.lower()
        for key, value in self.headers:
            if key == name:
                return value
        return None

    @property
    def closing(self):
        """Whether the answer says the connection closes after it."""
        return "close" in (self.header("connection") or "").lower()

    def __repr__(self):
        return "<%d %s%s, %d bytes: %r>" % (self.status, self.reason, " (close)" if self.closing else "",
                                            len(self.body), self.body[:80])


class ResponseReader:
    """Splits a byte stream into responses. Interim 1xx answers are kept apart (`interim`).
    `head_requests` answers carry no body whatever their Content-Length says."""

    def __init__(self):
        self.buffer = bytearray()
        self.interim = []

    def feed(self, data):
        self.buffer += data

    def next(self, head_request=False):
        """The next whole final response, or None when more bytes are needed. Raises
        wire.WireError when the bytes are not an HTTP/1.1 response."""
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > 1 << 20:
                    raise wire.WireError("a response head over 1 MiB")
                return None
            head = bytes(self.buffer[:end]).decode("latin-1")
            lines = head.split("\r\n")
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
                raise wire.WireError("not an HTTP response: %r" % lines[0][:120])
            status = int(parts[1])
            headers = []
            for line in lines[1:]:
                name, colon, value = line.partition(":")
                if not colon:
                    raise wire.WireError("a response header line without a colon: %r" % line[:120])
                headers.append((name.strip().lower(), value.strip()))
            if 100 <= status < 200:
                del self.buffer[:end + 4]
                self.interim.append(status)
                continue
            length = 0
            for name, value in headers:
                if name == "transfer-encoding":
                    raise wire.WireError("the front door sent a chunked answer (this client reads Content-Length)")
                if name == "content-length":
                    length = int(value)
            if head_request or status in (204, 304):
                length = 0
            if len(self.buffer) < end + 4 + length:
                return None
            body = bytes(self.buffer[end + 4:end + 4 + length])
            del self.buffer[:end + 4 + length]
            return Response(status, parts[2] if len(parts) > 2 else "", headers, body, head)


def connect(address, timeout=5.0):
    """A TCP (or Unix) connection to the front door at `address` (tcp:HOST:PORT / unix:PATH)."""
    family, target = wire.parse_address(address)
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(target)
    except BaseException:
        sock.close()
        raise
    return sock


class Conn:
    """One front-door connection: send raw bytes, read answers in order, see it closed."""

    def __init__(self, address, timeout=5.0):
        self.sock = connect(address, timeout)
        self.reader = ResponseReader()
        self.eof = False
        self.reset = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data, timeout=10.0):
        """Sends every byte of `data`; False when the peer has closed or reset the connection."""
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _fill(self, deadline):
        """Reads once into the reader; False at end of stream (or reset) or past the deadline."""
        left = deadline - time.monotonic()
        if left <= 0 or self.eof:
            return False
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(262144)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            self.eof = self.reset = True
            return False
        if not data:
            self.eof = True
            return False
        self.reader.feed(data)
        return True

    def response(self, timeout=10.0, head_request=False):
        """The next answer; None when the connection ends or nothing whole arrives in time."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.reader.next(head_request)
            if found is not None:
                return found
            if not self._fill(deadline):
                return None

    def closed_within(self, timeout):
        """Whether the peer ends the connection within `timeout` seconds; bytes arriving meanwhile
        stay in the reader (a case asserts there are none where none may come)."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            if time.monotonic() >= deadline:
                return False
            self._fill(deadline)
        return True

    def leftover(self):
        return bytes(self.reader.buffer)


def request_bytes(target, method="GET", host="monarch", headers=(), body=None, close=False, version="HTTP/1.1"):
    """A well-formed request: `headers` as (name, value) pairs, a Content-Length for `body`."""
    lines = ["%s %s %s" % (method, target, version)]
    if host is not None:
        lines.append("Host: %s" % host)
    for name, value in headers:
        lines.append("%s: %s" % (name, value))
    if body is not None:
        lines.append("Content-Length: %d" % len(body))
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


def get(address, target, timeout=10.0, **kwargs):
    """One request on a connection of its own: its answer (or None)."""
    with Conn(address, timeout) as conn:
        conn.send(request_bytes(target, close=True, **kwargs))
        return conn.response(timeout)
