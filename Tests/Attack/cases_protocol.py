"""Cases on the wire itself: a control case, the protocol's invalid vectors, random garbage,
4 GiB length prefixes, byte-at-a-time trickles, and thousands of idle connections."""
import json
import os
import random
import selectors
import socket
import struct
import time

import config
import wire
from harness import case, expect_failure

VECTORS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "Protocols", "vectors", "frames.json")
CLIENT_TYPES = {"hello", "request", "cancel", "invalidate", "status", "scale", "watch", "unwatch", "ping", "pong", "error"}


@case("smoke", "-", "control: bundle files, an origin fetch, a cache hit and status answer correctly "
      "(a failure here means the suite or the cluster is broken, not a defect)", budget=60)
def smoke(ctx):
    with ctx.connect() as conn:
        for path, data in config.BUNDLE.items():
            if path.startswith("docs/") and "/." not in path:
                reply = conn.get(path)
                ctx.check(reply.get("type") == "response" and wire.body_of(reply) == data,
                          "%s: %s" % (path, wire.describe(reply)))
        origin_json = ctx.origin.fetch("/json")
        first = conn.get("api/json")
        ctx.check(wire.body_of(first) == origin_json, "api/json: %s" % wire.describe(first))
        # Asked again before the write-back is stored, it gets the trip's answer (the
        # coordinator holds it until then); once stored, the cache's.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not conn.status().get("writeBacks"):
            time.sleep(0.05)
        second = conn.get("api/json")
        ctx.check(second.get("type") == "response" and wire.body_of(second) == origin_json
                  and second.get("source") == "cache", "api/json again: %s from %s" % (
                      wire.describe(second), second.get("source")))
        status = conn.status()
        kinds = sorted(w.get("kind") for w in wire.serving_workers(status))
        ctx.check(kinds == ["bundle", "cache", "network"], "status workers: %s" % kinds)
        reply = conn.get("docs/missing.txt")
        ctx.check(expect_failure(reply, ["exhausted"], "missing file") is None, wire.describe(reply))


def load_vectors():
    with open(VECTORS) as f:
        return json.load(f)["vectors"]


def outcome_of(sock, timeout):
    """(error code or None, closed?) after sending: the first `error` message and whether the
    coordinator then closed the connection."""
    conn = wire.Conn(None, sock=sock)
    code = None
    try:
        messages = conn.wait_closed(timeout)
        closed = True
    except wire.TimedOut:
        messages = []
        closed = False
    except wire.WireError:
        messages, closed = [], True
    for message in messages:
        if message.get("type") == "error":
            code = message.get("code")
            break
    return code, closed, messages


@case("invalid-vectors", "P", "every invalid vector of Protocols/vectors/frames.json, before and after hello, "
      "whole and byte by byte: an `error` with the vector's code (unexpectedMessage where a valid message the "
      "client may not send comes first; invalidJSON for a raw-body vector before hello, when no extension is "
      "agreed yet), then a close, within 5 s", budget=240, quick_budget=150)
def invalid_vectors(ctx):
    vectors = [v for v in load_vectors() if "error" in v["expect"] and not v.get("maxFrameBytes")]
    hello_fields = {"type": "hello", "role": "client", "version": 1, **({"token": ctx.token} if ctx.token else {})}
    hello = wire.frame(hello_fields)
    # Vectors for a receiver that agreed to raw bodies (protocol section 2.1) follow a hello offering them.
    raw_hello = wire.frame(dict(hello_fields, features=["rawBodies"]))
    checked = 0
    for vector in vectors:
        data = bytes.fromhex(vector["hex"])
        expected = vector["expect"]["error"]
        prior = [m.get("type") for m in vector["expect"]["messages"]]
        # After hello, a valid message a client may send (a ping) comes first and is answered;
        # before hello, any valid first frame other than hello is unexpectedMessage.
        allowed = {expected}
        if any(kind not in CLIENT_TYPES or kind == "hello" for kind in prior):
            allowed.add("unexpectedMessage")
        raw_bodies = vector.get("rawBodies", False)
        for phase in ("before-hello", "after-hello"):
            for trickle in (False, True):
                if trickle and len(data) > 200:
                    continue
                sock = wire.connect_raw(ctx.cluster.client_address)
                try:
                    if phase == "after-hello":
                        sock.sendall(raw_hello if raw_bodies else hello)
                        conn = wire.Conn(None, sock=sock)
                        welcome = conn.recv(5)
                        if welcome.get("type") != "welcome":
                            ctx.check(False, "%s: hello answered %s" % (vector["name"], wire.describe(welcome)))
                            continue
                        if raw_bodies and "rawBodies" not in (welcome.get("features") or []):
                            ctx.check(False, "%s: the welcome did not agree to rawBodies: %s" % (
                                vector["name"], wire.describe(welcome)))
                            continue
                    allowed_here = allowed | ({"unexpectedMessage"} if prior and phase == "before-hello" else set())
                    if raw_bodies and phase == "before-hello":
                        allowed_here = {"invalidJSON"}
                    try:
                        if trickle:
                            for byte in data:
                                sock.sendall(bytes([byte]))
                        else:
                            sock.sendall(data)
                        if expected == "truncatedFrame":
                            sock.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass  # the coordinator may close as soon as it has seen enough
                    code, closed, messages = outcome_of(sock, 5)
                    want = allowed_here
                    where = "%s (%s%s)" % (vector["name"], phase, ", byte by byte" if trickle else "")
                    if expected == "truncatedFrame":
                        # The peer is gone once the stream ends: an error is best effort.
                        ctx.check(closed and code in want | {None},
                                  "%s: expected %s or a plain close, got %s, closed=%s" % (
                                      where, "/".join(sorted(want)), code, closed))
                    else:
                        ctx.check(code in want and closed, "%s: expected error %s then close, got %s, closed=%s" % (
                            where, "/".join(sorted(want)), code or [m.get("type") for m in messages], closed))
                    checked += 1
                finally:
                    sock.close()
    ctx.note("%d vector runs against %d invalid vectors" % (checked, len(vectors)))


@case("garbage", "P", "random bytes (seeded) on many connections, before and after hello: each connection "
      "gets an error or is closed within 5 s; the coordinator stays up", budget=120)
def garbage(ctx):
    rng = random.Random(1111)
    count = 60 if ctx.quick else 300
    hello = wire.frame({"type": "hello", "role": "client", "version": 1, **({"token": ctx.token} if ctx.token else {})})
    open_after = []
    for index in range(count):
        sock = wire.connect_raw(ctx.cluster.client_address)
        size = rng.choice([1, 3, 7, 64, 1000, 65536])
        data = rng.randbytes(size)
        if index % 3 == 0:
            # A header that announces a small frame, then garbage as its payload.
            data = struct.pack(">I", min(size, 4096)) + data[:4096]
        try:
            if index % 2:
                sock.sendall(hello)
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        open_after.append((index, sock, size))
    unclosed = 0
    for index, sock, size in open_after:
        if not wire.peer_closed(sock, 5):
            unclosed += 1
        sock.close()
    ctx.check(unclosed == 0, "%d of %d garbage connections were not closed within 5 s" % (unclosed, count))
    ctx.note("%d garbage connections" % count)


@case("length-4gib", "P", "frames announcing 4 GiB, 2 GiB, 16 MiB+1 (before and after hello): `error` "
      "oversizedFrame and a close within 2 s, without waiting for or allocating the payload "
      "(RSS growth < 20 MB)", budget=60)
def length_4gib(ctx):
    hello = wire.frame({"type": "hello", "role": "client", "version": 1, **({"token": ctx.token} if ctx.token else {})})
    before = ctx.cluster.sampler.current()
    for length in (0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, (16 << 20) + 1):
        for phase in ("before-hello", "after-hello"):
            sock = wire.connect_raw(ctx.cluster.client_address)
            try:
                if phase == "after-hello":
                    sock.sendall(hello)
                    welcome = wire.Conn(None, sock=sock).recv(5)
                    if welcome.get("type") != "welcome":
                        ctx.check(False, "hello answered %s" % wire.describe(welcome))
                        continue
                started = time.monotonic()
                sock.sendall(struct.pack(">I", length) + b'{"type":"ping"')
                code, closed, _ = outcome_of(sock, 2)
                ctx.check(code == "oversizedFrame" and closed, "length %#x %s: expected oversizedFrame and close "
                          "within 2 s, got %s, closed=%s (%.1f s)" % (length, phase, code, closed,
                                                                        time.monotonic() - started))
            finally:
                sock.close()
    time.sleep(0.5)
    grown = (ctx.cluster.sampler.peak(time.monotonic() - 30) - before) / 1024
    ctx.check(grown < 20, "coordinator RSS grew by %.0f MB" % grown)


@case("trickle", "P", "a hello and a request sent one byte every 10 ms get a correct answer; 100 connections "
      "trickling a hello one byte per 500 ms are closed by the hello timeout (default 10 s; within 16 s)",
      budget=90)
def trickle(ctx):
    token = {"token": ctx.token} if ctx.token else {}
    data = wire.frame({"type": "hello", "role": "client", "version": 1, **token}) + wire.frame(
        {"type": "request", "id": 1, "path": "docs/data.json"})
    slow = []
    count = 100
    for _ in range(count):
        sock = wire.connect_raw(ctx.cluster.client_address)
        sock.setblocking(False)
        slow.append(sock)
    slow_started = time.monotonic()
    good = wire.connect_raw(ctx.cluster.client_address, timeout=20)
    payload = wire.frame({"type": "hello", "role": "client", "version": 1, **token})
    position = 0
    next_slow = time.monotonic()
    for index, byte in enumerate(data):
        good.sendall(bytes([byte]))
        time.sleep(0.01)
        if time.monotonic() >= next_slow and position < len(payload) - 1:
            for sock in slow:
                try:
                    sock.send(payload[position:position + 1])
                except OSError:
                    pass
            position += 1
            next_slow += 0.5
    conn = wire.Conn(None, sock=good)
    welcome = conn.recv(10)
    ctx.check(welcome.get("type") == "welcome", "trickled hello answered %s" % wire.describe(welcome))
    reply = conn.answer(1, 10)
    ctx.check(reply.get("type") == "response" and wire.body_of(reply) == config.BUNDLE["docs/data.json"],
              "trickled request answered %s" % wire.describe(reply))
    good.close()
    # Keep trickling until each slow connection is closed or 16 s have passed.
    open_socks = set(slow)
    while open_socks and time.monotonic() - slow_started < 16:
        for sock in list(open_socks):
            try:
                data_in = sock.recv(4096)
                if data_in == b"":
                    open_socks.discard(sock)
                    continue
            except BlockingIOError:
                pass
            except OSError:
                open_socks.discard(sock)
                continue
            if time.monotonic() >= next_slow and position < len(payload) - 1:
                try:
                    sock.send(payload[position:position + 1])
                except OSError:
                    open_socks.discard(sock)
        if time.monotonic() >= next_slow:
            position = min(position + 1, len(payload) - 1)
            next_slow += 0.5
        time.sleep(0.05)
    ctx.check(not open_socks, "%d of %d connections trickling a hello were still open after 16 s" % (
        len(open_socks), count))
    for sock in slow:
        sock.close()


def open_many(address, count, batch=256):
    """Up to `count` connected sockets (non-blocking); connections the kernel refuses at
    connect (listen queue full, EAGAIN) are counted, not retried."""
    family, where = wire.parse_address(address)
    socks, refused = [], 0
    for start in range(0, count, batch):
        for _ in range(min(batch, count - start)):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(where)
            except BlockingIOError:
                pass  # TCP: in progress
            except OSError:
                refused += 1
                sock.close()
                continue
            socks.append(sock)
        time.sleep(0.01)
    return socks, refused


def watch(socks, seconds, on_message=None, until=None):
    """Reads every socket for `seconds` (or until `until()`), returns {sock: (closed_at, messages)}."""
    selector = selectors.DefaultSelector()
    state = {}
    for sock in socks:
        reader = wire.FrameReader()
        state[sock] = [None, [], reader]
        selector.register(sock, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    open_count = len(socks)
    while open_count and time.monotonic() < deadline and not (until and until()):
        for key, _ in selector.select(timeout=0.1):
            sock = key.fileobj
            entry = state[sock]
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                entry[0] = time.monotonic()
                selector.unregister(sock)
                open_count -= 1
                continue
            entry[2].feed(data)
            try:
                while True:
                    message = entry[2].next()
                    if message is None:
                        break
                    entry[1].append(message)
                    if on_message:
                        on_message(sock, message)
            except wire.WireError:
                pass
    selector.close()
    return {sock: (entry[0], entry[1]) for sock, entry in state.items()}


class Tracker:
    """Many non-blocking client sockets: when each was welcomed and when the peer closed it."""

    def __init__(self):
        self.selector = selectors.DefaultSelector()
        self.socks = []
        self.welcomed_at = {}
        self.closed_at = {}
        self.readers = {}

    def add(self, socks):
        for sock in socks:
            self.socks.append(sock)
            self.readers[sock] = wire.FrameReader()
            self.selector.register(sock, selectors.EVENT_READ)

    def run(self, seconds, until=None):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (until and until()) and self.selector.get_map():
            for key, _ in self.selector.select(timeout=0.05):
                sock = key.fileobj
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                now = time.monotonic()
                if not data:
                    self.closed_at[sock] = now
                    self.selector.unregister(sock)
                    continue
                self.readers[sock].feed(data)
                try:
                    while True:
                        message = self.readers[sock].next()
                        if message is None:
                            break
                        if message.get("type") == "welcome":
                            self.welcomed_at.setdefault(sock, now)
                except wire.WireError:
                    pass

    def undecided(self, socks):
        return sum(1 for sock in socks if sock not in self.welcomed_at and sock not in self.closed_at)

    def open_count(self):
        return sum(1 for sock in self.socks if sock not in self.closed_at)

    def welcomed(self):
        return list(self.welcomed_at)

    def most_open_welcomed(self):
        """The most welcomed connections open at the same time."""
        events = []
        for sock, at in self.welcomed_at.items():
            events.append((at, 1))
            events.append((self.closed_at.get(sock, float("inf")), -1))
        most = current = 0
        for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
            current += delta
            most = max(most, current)
        return most

    def close(self):
        self.selector.close()
        for sock in self.socks:
            sock.close()


def idle_clients_cap(suite):
    """Below the greeted half of the connections, so that the cap is reached."""
    return 512 if suite.quick else 1024


def idle_config(suite):
    return {"limits": {"clients": idle_clients_cap(suite), "handshakes": 128, "helloTimeout": "3s", "idleTimeout": "5s"}}


@case("idle-connections", "6,7", "2,000 (quick) or 10,000 idle connections, half silent, half idle after "
      "hello (sent 100 at a time), with limits clients 512 (full: 1024), handshakes 128, helloTimeout 3s, "
      "idleTimeout 5s: silent ones closed within 10 s; at most clients-1 welcomed at once beside the sentinel, the "
      "rest refused (closed) and the refusals logged; welcomed idle ones closed within 15 s", config=idle_config, budget=180, quick_budget=90)
def idle_connections(ctx):
    total = ctx.suite.idle_connections
    half = total // 2
    ctx.note("RLIMIT_NOFILE %d for %d connections" % (ctx.suite.nofile, total))
    log_offset = ctx.cluster.stderr_size()
    silent, refused = open_many(ctx.cluster.client_address, half)
    opened = time.monotonic()
    state = watch(silent, 10)
    still_open = sum(1 for closed, _ in state.values() if closed is None)
    ctx.check(still_open == 0, "%d of %d silent connections still open 10 s after they connected (helloTimeout 3s)" % (
        still_open, len(silent)))
    ctx.note("silent: %d connected (%d refused at connect), %d closed within %.0f s" % (
        len(silent), refused, len(silent) - still_open, time.monotonic() - opened))
    for sock in silent:
        sock.close()

    # Hellos in batches below the handshake cap, so that the client cap is what refuses.
    hello = wire.frame({"type": "hello", "role": "client", "version": 1, **({"token": ctx.token} if ctx.token else {})})
    tracker = Tracker()
    refused = 0
    for start in range(0, total - half, 100):
        batch, batch_refused = open_many(ctx.cluster.client_address, min(100, total - half - start), batch=100)
        refused += batch_refused
        for sock in batch:
            try:
                sock.send(hello)
            except OSError:
                pass
        tracker.add(batch)
        tracker.run(3, until=lambda: tracker.undecided(batch) == 0)
    greeted_at = time.monotonic()
    tracker.run(15, until=lambda: tracker.open_count() == 0)
    welcomed = tracker.welcomed()
    still_open = tracker.open_count()
    most = tracker.most_open_welcomed()
    ctx.extra["welcomed"] = len(welcomed)
    ctx.extra["most welcomed at once"] = most
    ctx.note("greeted: %d connected (%d refused at connect), %d welcomed (at most %d at once), %d still open %.0f s "
             "after the last hello" % (len(tracker.socks), refused, len(welcomed), most, still_open,
                                       time.monotonic() - greeted_at))
    cap = idle_clients_cap(ctx.suite)
    ctx.check(most <= cap - 1, "%d connections welcomed at once beside the sentinel (limits.clients %d)" % (most, cap))
    ctx.check(len(welcomed) < len(tracker.socks), "every one of %d clients was welcomed (limits.clients %d)" % (
        len(tracker.socks), cap))
    ctx.check(not still_open, "%d connections still open 15 s after their hello (idleTimeout 5s)" % still_open)
    tracker.close()
    logged = ctx.cluster.stderr_since(log_offset).decode("utf-8", "replace").lower()
    if len(welcomed) < len(tracker.socks):
        ctx.check(any(word in logged for word in ("refus", "too many", "limit")),
                  "no log line mentions the refused connections")
