"""A Monarch wire client of the attack suite's own (no Swift codec): framing, JSON, base64.

A frame is a 4-byte big-endian length, then that many bytes of UTF-8 JSON holding one object
(Protocols/README.md, section 2). Everything here is blocking with explicit time limits, so a
misbehaving coordinator makes a case fail instead of hanging the suite.
"""
import base64
import json
import socket
import struct
import time

MAX_FRAME = 16 << 20  # what we accept from the coordinator (its default maximum)


class WireError(Exception):
    """The peer broke the framing, or something did not arrive in time."""


class Closed(WireError):
    """The peer closed the connection (cleanly or by reset)."""


class TimedOut(WireError):
    """Nothing (or not enough) arrived within the time limit."""


def parse_address(address):
    """'unix:PATH' or 'tcp:HOST:PORT' -> (family, sockaddr)."""
    if address.startswith("unix:"):
        return socket.AF_UNIX, address[5:]
    if address.startswith("tcp:"):
        host, _, port = address[4:].rpartition(":")
        host = host.strip("[]")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return family, (host, int(port))
    raise ValueError("not an address: %r" % address)


def frame(obj):
    """One frame holding `obj` (a dict) as compact UTF-8 JSON."""
    payload = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return struct.pack(">I", len(payload)) + payload


def raw_frame(payload):
    """One frame holding the bytes `payload` as they are."""
    return struct.pack(">I", len(payload)) + payload


def b64(data):
    return base64.b64encode(data).decode("ascii")


def body_of(message):
    """The decoded body of a response message (b'' when absent)."""
    return base64.b64decode(message.get("body") or "", validate=True)


class FrameReader:
    """Splits a byte stream into frames; decodes each payload as a JSON object."""

    def __init__(self, max_frame=MAX_FRAME):
        self.buffer = bytearray()
        self.max_frame = max_frame

    def feed(self, data):
        self.buffer += data

    def next(self):
        """The next complete message (a dict), or None when more bytes are needed."""
        if len(self.buffer) < 4:
            return None
        (length,) = struct.unpack(">I", self.buffer[:4])
        if length > self.max_frame:
            raise WireError("the peer announced a frame of %d bytes" % length)
        if len(self.buffer) < 4 + length:
            return None
        payload = bytes(self.buffer[4:4 + length])
        del self.buffer[:4 + length]
        try:
            message = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise WireError("the peer sent a payload that is not JSON: %s" % error)
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise WireError("the peer sent a payload that is not a message: %r" % payload[:200])
        return message


class Conn:
    """One stream connection to the coordinator, blocking with deadlines."""

    def __init__(self, address, timeout=10.0, sock=None):
        self.address = address
        if sock is None:
            family, where = parse_address(address)
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(where)
            except BaseException:
                sock.close()
                raise
            if family != socket.AF_UNIX:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self.reader = FrameReader()
        self.closed_by_peer = False
        self.next_id = 1
        # Answers that arrived for ids nobody is waiting on yet.
        self.pending = {}
        self.others = []

    def fileno(self):
        return self.sock.fileno()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # Sending

    def send_bytes(self, data, timeout=10.0):
        """Writes all of `data`; raises Closed when the peer is gone, TimedOut when it does not read."""
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(data)
        except socket.timeout:
            raise TimedOut("the peer did not take %d bytes within %.1f s" % (len(data), timeout))
        except (BrokenPipeError, ConnectionResetError) as error:
            raise Closed("the peer closed the connection while we wrote: %s" % error)

    def send(self, obj, timeout=10.0):
        self.send_bytes(frame(obj), timeout)

    def shutdown_write(self):
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    # Receiving

    def recv(self, timeout=10.0):
        """The next message; raises Closed at end of stream, TimedOut after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.reader.next()
            if message is not None:
                return message
            if self.closed_by_peer:
                raise Closed("the peer closed the connection" + (" mid-frame" if self.reader.buffer else ""))
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimedOut("no message within %.1f s" % timeout)
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                self.closed_by_peer = True
            else:
                self.reader.feed(data)

    def wait_closed(self, timeout=10.0):
        """Reads (and returns) every message until the peer closes; TimedOut if it does not."""
        messages = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                messages.append(self.recv(max(0.0, deadline - time.monotonic())))
            except Closed:
                return messages

    # Exchanges

    def hello(self, token=None, role="client", timeout=10.0, **extra):
        """Says hello; returns the welcome, raises WireError with the error message otherwise."""
        message = {"type": "hello", "role": role, "version": 1}
        if token is not None:
            message["token"] = token
        message.update(extra)
        self.send(message, timeout)
        reply = self.recv(timeout)
        if reply.get("type") != "welcome":
            raise Refused(reply)
        return reply

    def new_id(self):
        value = self.next_id
        self.next_id += 1
        return value

    def request(self, path, **fields):
        """Sends a request; returns its id."""
        message = {"type": "request", "id": fields.pop("id", None) or self.new_id(), "path": path}
        message.update({k: v for k, v in fields.items() if v is not None})
        self.send(message)
        return message["id"]

    def answer(self, id, timeout=10.0):
        """The final reply to exchange `id` (a response/failure/result/pong)."""
        deadline = time.monotonic() + timeout
        while id not in self.pending:
            message = self.recv(max(0.0, deadline - time.monotonic()))
            self._file(message)
        return self.pending.pop(id)

    def answers(self, ids, timeout=30.0):
        """The final replies to every id in `ids`, as a dict; raises TimedOut with what is missing."""
        wanted = set(ids)
        got = {}
        deadline = time.monotonic() + timeout
        while True:
            for id in list(wanted):
                if id in self.pending:
                    got[id] = self.pending.pop(id)
                    wanted.discard(id)
            if not wanted:
                return got
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimedOut("%d of %d answers missing after %.1f s" % (len(wanted), len(ids), timeout))
            self._file(self.recv(left))

    def _file(self, message):
        id = message.get("id")
        if message.get("type") in ("response", "failure", "result", "pong") and id is not None:
            if id in self.pending:
                raise WireError("two answers for id %r: %r and %r" % (id, self.pending[id], message))
            self.pending[id] = message
        elif message.get("type") == "error":
            raise Refused(message)
        else:
            self.others.append(message)

    def get(self, path, timeout=10.0, **fields):
        """One request and its answer."""
        return self.answer(self.request(path, **fields), timeout)

    def status(self, timeout=10.0):
        id = self.new_id()
        self.send({"type": "status", "id": id})
        reply = self.answer(id, timeout)
        if reply.get("type") != "result":
            raise WireError("status answered %r" % reply)
        return reply.get("data") or {}


class Refused(WireError):
    """The coordinator answered with an `error` (or something other than what we asked for)."""

    def __init__(self, message):
        self.message = message
        super().__init__("%s: %s" % (message.get("code", message.get("type")), message.get("message", "")))

    @property
    def code(self):
        return self.message.get("code")


def describe(message):
    """A short text for a reply: 'response 200 (n bytes)' or 'failure CODE [attempt codes]'."""
    if message is None:
        return "nothing"
    kind = message.get("type")
    if kind == "response":
        return "response %s (%d bytes)" % (message.get("status"), len(body_of(message)))
    if kind == "failure":
        error = message.get("error") or {}
        attempts = error.get("attempts") or []
        codes = ",".join("%s:%s%s" % (a.get("provider"), a.get("outcome"), "/" + a["code"] if a.get("code") else "")
                         for a in attempts)
        return "failure %s%s" % (error.get("code"), " [%s]" % codes if codes else "")
    if kind == "error":
        return "error %s" % message.get("code")
    return kind


def serving_workers(status):
    """The workers of a status report that serve requests now: state `ready` (reports without
    a state list only registered workers)."""
    return [w for w in status.get("workers") or [] if w.get("state", "ready") == "ready"]


def failure_codes(message):
    """Every failure code in a failure message: the top-level one, then each attempt's."""
    error = message.get("error") or {}
    return [error.get("code")] + [a.get("code") for a in error.get("attempts") or [] if a.get("code")]


def connect_raw(address, timeout=5.0):
    """A plain socket connected to `address` (no hello)."""
    family, where = parse_address(address)
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(where)
    except BaseException:
        sock.close()
        raise
    return sock


def peer_closed(sock, timeout):
    """Whether the peer closes `sock` within `timeout` (reading and discarding what it sends)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
        except OSError:
            return True
        if not data:
            return True

