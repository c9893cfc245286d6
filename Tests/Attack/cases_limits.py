"""Cases on the coordinator's limits: slow readers, requests in flight, connections, the
pre-hello frame, huge requests, the token, invalidation memory, logs, and descriptors."""
import os
import re
import signal
import socket
import stat
import struct
import threading
import time

import cluster as clusters
import config
import wire
from harness import case, expect_failure


def mb(kib):
    return kib / 1024


def large_requests(count):
    return b"".join(wire.frame({"type": "request", "id": i, "path": "docs/large.bin", "deadlineMs": 120000})
                    for i in range(1, count + 1))


def read_answers(conn, count, timeout):
    """Answers to ids 1...count until all are there, the peer closes, or `timeout` passes:
    (answers by id, closed?)."""
    answers = {}
    deadline = time.monotonic() + timeout
    try:
        while len(answers) < count and time.monotonic() < deadline:
            message = conn.recv(max(0.01, deadline - time.monotonic()))
            if message.get("id") is not None:
                answers[message["id"]] = message
    except wire.Closed:
        return answers, True
    except wire.TimedOut:
        pass
    return answers, False


def wrong_answers(answers, body):
    return [wire.describe(a) for a in answers.values()
            if not (a.get("type") == "response" and wire.body_of(a) == body)
            and expect_failure(a, ["overloaded"], "") is not None]


@case("slow-reader", "2", "limits maxFrame 4MB, clientQueue 8MB: a client sends 200 requests for a 1.3 MB file and "
      "reads nothing for 8 s: coordinator RSS grows by less than 100 MB; it then reads 200 answers and keeps its "
      "connection (bodies, and overloaded failures past the queue bound); a client that reads gets all 200; a client that pipelines 50,000 "
      "small requests without reading is paused, not dropped, and gets all 50,000 answers once it reads",
      config={"limits": {"maxFrame": "4MB", "clientQueue": "8MB"}}, budget=150)
def slow_reader(ctx):
    count = 200
    before = ctx.cluster.sampler.current()
    conn = ctx.connect()
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    stream = large_requests(count)
    conn.sock.settimeout(None)
    sender = threading.Thread(target=lambda: conn.sock.sendall(stream), daemon=True)
    sender.start()
    started = time.monotonic()
    time.sleep(8)
    peak = ctx.cluster.sampler.peak(started)
    grown = mb(peak - before)
    ctx.extra["rssGrowthMB"] = round(grown, 1)
    ctx.check(grown < 100, "coordinator RSS grew by %.0f MB (from %.0f to %.0f MB) while a client did not read "
              "its answers (bound: < 100 MB)" % (grown, mb(before), mb(peak)))
    answers, closed = read_answers(conn, count, 60)
    wrong = wrong_answers(answers, config.LARGE)
    ctx.check(not wrong, "the slow reader got %d wrong answers: %s" % (len(wrong), wrong[:3]))
    ctx.check(not closed and len(answers) == count,
              "the slow reader got %d of %d answers (closed: %s)" % (len(answers), count, closed))
    refused = sum(1 for a in answers.values() if a.get("type") == "failure")
    ctx.note("the slow reader got %d of %d answers, %d of them overloaded (past limits.clientQueue)" % (
        len(answers), count, refused))
    conn.close()
    # A client that reads is not cut off.
    with ctx.connect() as reader:
        reader.send_bytes(stream, timeout=30)
        answers, closed = read_answers(reader, count, 60)
    ctx.check(len(answers) == count and not wrong_answers(answers, config.LARGE),
              "a client reading its answers got %d of %d right (closed: %s)" % (
                  count - len(wrong_answers(answers, config.LARGE)) - (count - len(answers)), count, closed))
    # Back-pressure on requests: many small ones, nothing read for 5 s.
    many = 50000
    body = config.BUNDLE["docs/hello.txt"]
    small = b"".join(wire.frame({"type": "request", "id": i, "path": "docs/hello.txt"}) for i in range(1, many + 1))
    conn = ctx.connect()
    conn.sock.settimeout(None)
    sender = threading.Thread(target=lambda: conn.sock.sendall(small), daemon=True)
    sender.start()
    time.sleep(5)
    ctx.note("50,000 small requests: the writer was %s after 5 s without reading" % (
        "still blocked (the coordinator stopped reading)" if sender.is_alive() else "done"))
    answers, closed = read_answers(conn, many, 60)
    sender.join(5)
    wrong = wrong_answers(answers, body)
    ctx.check(len(answers) == many and not wrong and not closed,
              "a client pipelining 50,000 small requests without reading for 5 s got %d answers (%d wrong), "
              "closed: %s" % (len(answers), len(wrong), closed))
    ctx.sent, ctx.answered = many, len(answers)
    conn.close()


def slow_requests(conn, count, tag, deadline_ms=30000):
    """Sends `count` distinct slow network requests (no coalescing, no cache); returns their ids."""
    ids = []
    for index in range(count):
        ids.append(conn.request("up/slow", query=[{"name": "ms", "value": "4000"},
                                                   {"name": "n", "value": "%s-%d" % (tag, index)}],
                                policy="noCache", deadlineMs=deadline_ms))
    return ids


def collect(conn, ids, seconds):
    """Whatever answers to `ids` arrive within `seconds`: {id: message}."""
    wanted = set(ids)
    got = {}
    deadline = time.monotonic() + seconds
    while wanted and time.monotonic() < deadline:
        try:
            message = conn.recv(max(0.01, deadline - time.monotonic()))
        except wire.TimedOut:
            break
        if message.get("id") in wanted:
            got[message["id"]] = message
            wanted.discard(message["id"])
    return got


def overloaded(messages):
    return [m for m in messages if m.get("type") == "failure" and "overloaded" in wire.failure_codes(m)]


@case("inflight-caps", "5", "limits inFlightPerClient 100, inFlight 400: one client's 1,000 (quick) / 3,000 "
      "slow requests (4 s each) get >= N-100 `overloaded` answers within 5 s while another client's requests "
      "are answered (the bundle < 1 s; through the network pool, the origin and the flood's upstream, < 8 s: one "
      "round, not behind the flood); 6 clients x 90 slow requests get >= 140 `overloaded` in all",
      config={"limits": {"inFlightPerClient": 100, "inFlight": 400}}, budget=150, tolerate=("overloaded",),
      during=(1000, 8000))
def inflight_caps(ctx):
    count = 1000 if ctx.quick else 3000
    flood = ctx.connect()
    started = time.monotonic()
    ids = slow_requests(flood, count, "flood")
    sent_in = time.monotonic() - started
    # Another client's fast requests while the flood is in flight: the bundle at once; through
    # the network pool (the origin, and the flood's own upstream) within one round of the
    # flood's 4 s requests, which may hold every slot of the network worker's capacity: with
    # turns between clients, not behind the flood (1,000 of them, 64 at a time: a minute).
    fast = ctx.connect()
    for name, path, fields, bound in (("the bundle", "docs/hello.txt", {}, 1.0),
                                      ("the origin", "api/json", {"policy": "noCache"}, 8.0),
                                      ("the flood's upstream", "up/echo",
                                       {"policy": "noCache", "query": [{"name": "cc", "value": "no-store"}]}, 8.0)):
        slowest = 0.0
        for _ in range(3):
            t = time.monotonic()
            try:
                reply = fast.get(path, timeout=15, **fields)
            except wire.TimedOut:
                ctx.check(False, "another client's request to %s got no answer within 15 s" % name)
                break
            slowest = max(slowest, time.monotonic() - t)
            ctx.check(reply.get("type") == "response", "another client's request to %s: %s" % (name, wire.describe(reply)))
        ctx.extra["slowest to %s" % name] = round(slowest, 2)
        ctx.check(slowest < bound, "another client's requests to %s took up to %.1f s during the flood (bound %.0f s)" % (
            name, slowest, bound))
    got = collect(flood, ids, 5)
    refused = overloaded(got.values())
    ctx.extra["perClientOverloaded"] = len(refused)
    ctx.check(len(refused) >= count - 100, "%d of %d requests from one client answered `overloaded` within 5 s "
              "(sent in %.1f s; inFlightPerClient 100)" % (len(refused), count, sent_in))
    flood.close()
    fast.close()
    time.sleep(1)

    conns = [ctx.connect() for _ in range(6)]
    all_ids = [(conn, slow_requests(conn, 90, "many-%d" % index)) for index, conn in enumerate(conns)]
    time.sleep(2)  # `overloaded` is answered at once: by now it is waiting in the sockets
    refused_total = 0
    for conn, conn_ids in all_ids:
        refused_total += len(overloaded(collect(conn, conn_ids, 0.5).values()))
    ctx.extra["globalOverloaded"] = refused_total
    ctx.check(refused_total >= 140, "%d of 540 requests from 6 clients answered `overloaded` (inFlight 400)" % refused_total)
    for conn in conns:
        conn.close()


@case("connection-limits", "6", "limits clients 16, helloTimeout 3s, idleTimeout 3s: of 40 clients at most 15 "
      "are welcomed beside the sentinel, the others closed within 5 s and the refusals logged; a freed slot "
      "is usable again; a silent and an idle welcomed connection are closed within 8 s",
      config={"limits": {"clients": 16, "helloTimeout": "3s", "idleTimeout": "3s"}}, budget=90)
def connection_limits(ctx):
    offset = ctx.cluster.stderr_size()
    hello = wire.frame({"type": "hello", "role": "client", "version": 1, **({"token": ctx.token} if ctx.token else {})})
    socks = []
    for _ in range(40):
        try:
            sock = wire.connect_raw(ctx.cluster.client_address, timeout=2)
            sock.sendall(hello)
            socks.append(sock)
        except OSError:
            pass
    welcomed, closed, undecided = 0, 0, 0
    for sock in socks:
        conn = wire.Conn(None, sock=sock)
        try:
            message = conn.recv(5)
            if message.get("type") == "welcome":
                welcomed += 1
                continue
            closed += 1 if wire.peer_closed(sock, 5) else 0
        except wire.Closed:
            closed += 1
        except wire.TimedOut:
            undecided += 1
    ctx.note("40 hellos: %d welcomed, %d refused, %d neither within 5 s" % (welcomed, closed, undecided))
    ctx.check(welcomed <= 15, "%d of 40 clients welcomed beside the sentinel (limits.clients 16)" % welcomed)
    ctx.check(undecided == 0, "%d clients neither welcomed nor closed within 5 s" % undecided)
    logged = ctx.cluster.stderr_since(offset).decode("utf-8", "replace").lower()
    ctx.check(any(word in logged for word in ("refus", "too many", "limit")), "no log line mentions the refused clients")
    for sock in socks:
        sock.close()
    time.sleep(1)
    try:
        with ctx.connect() as again:
            reply = again.get("docs/hello.txt")
            ctx.check(reply.get("type") == "response", "a client after the others left: %s" % wire.describe(reply))
    except wire.WireError as error:
        ctx.check(False, "a client after the others left was refused: %s" % error)
    # Silent before hello, and idle after it.
    silent = wire.connect_raw(ctx.cluster.client_address)
    idle = ctx.connect()
    started = time.monotonic()
    ctx.check(wire.peer_closed(silent, 8), "a connection that sent nothing was still open after 8 s (helloTimeout 3s)")
    ctx.check(wire.peer_closed(idle.sock, 8 - (time.monotonic() - started)),
              "a welcomed client that sent nothing was still open after 8 s (idleTimeout 3s)")
    silent.close()
    idle.close()


@case("pre-hello-frame", "7", "limits helloFrame 64KB, handshakes 32: a 1 MiB or 64 KiB+1 first frame gets "
      "`error` oversizedFrame and a close within 2 s; a 60 KB hello is welcomed; a 1 MiB frame after hello is "
      "fine; 40 connections each sending 14 MiB of a 15 MiB first frame raise RSS by < 50 MB; of 100 connections "
      "that never finish their hello at most 32 are kept", config={
          "limits": {"helloFrame": "64KB", "handshakes": 32, "helloTimeout": "10s"}}, budget=120)
def pre_hello_frame(ctx):
    token = {"token": ctx.token} if ctx.token else {}
    for length in (1 << 20, (64 << 10) + 1):
        sock = wire.connect_raw(ctx.cluster.client_address)
        try:
            sock.sendall(struct.pack(">I", length) + b'{"type":"hello","role":"client","version":1,"name":"')
            conn = wire.Conn(None, sock=sock)
            try:
                messages = conn.wait_closed(2)
                code = next((m.get("code") for m in messages if m.get("type") == "error"), None)
                ctx.check(code == "oversizedFrame", "a first frame of %d bytes: got %s before the close" % (
                    length, [m.get("code", m.get("type")) for m in messages]))
            except wire.TimedOut:
                ctx.check(False, "a first frame of %d bytes: no error and no close within 2 s" % length)
        finally:
            sock.close()
    # A 60 KB hello is under the limit.
    with wire.Conn(ctx.cluster.client_address) as conn:
        try:
            conn.hello(name="n" * (60 << 10), **token)
            conn.send({"type": "ping", "id": 1, "padding": "p" * (1 << 20)})
            reply = conn.answer(1, 5)
            ctx.check(reply.get("type") == "pong", "a 1 MiB ping after hello: %s" % wire.describe(reply))
        except wire.WireError as error:
            ctx.check(False, "a 60 KB hello, then a 1 MiB ping: %s" % error)
    # Memory: many connections each sending most of a huge first frame.
    before = ctx.cluster.sampler.current()
    started = time.monotonic()
    chunk = b"x" * (1 << 20)
    socks = []
    for _ in range(40):
        sock = wire.connect_raw(ctx.cluster.client_address, timeout=3)
        socks.append(sock)
        try:
            # 14 MiB of a 15 MiB frame: never complete, so only a pre-hello limit stops it.
            sock.sendall(struct.pack(">I", 15 << 20))
            for _ in range(14):
                sock.sendall(chunk)
        except OSError:
            pass  # refused early: what the fix does
    time.sleep(1)
    grown = mb(ctx.cluster.sampler.peak(started) - before)
    ctx.extra["rssGrowthMB"] = round(grown, 1)
    ctx.check(grown < 50, "40 connections sending 14 MiB of 15 MiB first frames raised coordinator RSS by %.0f MB (bound 50)" % grown)
    for sock in socks:
        sock.close()
    # Handshakes: connections that start a hello and never finish it.
    socks = []
    for _ in range(100):
        try:
            sock = wire.connect_raw(ctx.cluster.client_address, timeout=2)
            sock.sendall(struct.pack(">I", 200) + b'{"type":"hello"')
            socks.append(sock)
        except OSError:
            pass
    time.sleep(2)
    kept = sum(1 for sock in socks if not wire.peer_closed(sock, 0.05))
    ctx.check(kept <= 32, "%d of 100 unfinished handshakes still open after 2 s (handshakes 32)" % kept)
    for sock in socks:
        sock.close()


HUGE_LIMITS = {"pathBytes": "8KB", "pathComponents": 128, "headers": 64, "headerBytes": "32KB",
               "queryItems": 256, "queryBytes": "16KB"}


@case("huge-request", "8", "limits pathBytes 8KB, pathComponents 128, headers 64, headerBytes 32KB, queryItems 256, "
      "queryBytes 16KB: a 16 MB path (one component, or 8 million) gets `requestTooLarge` within 3 s, as do a 9 KB "
      "path, 200 components, 65 headers, a 40 KB header, 300 query items and a 20 KB query; requests under "
      "every limit are not refused; the sentinel waits at most 3 s meanwhile (decoding a 16 MB frame takes time)",
      config={"limits": HUGE_LIMITS}, budget=90, during=(3000, 3000))
def huge_request(ctx):
    conn = ctx.connect(timeout=30)
    # 16 MB in one component, and 16 MB of 8 million components (the slow one to split and route).
    for what, path in (("a 16 MB path", "docs/" + "a" * 16_000_000),
                       ("a 16 MB path of 8 million components", "docs/" + "a/" * 7_999_990 + "x")):
        started = time.monotonic()
        reply = conn.get(path, timeout=30)
        took = time.monotonic() - started
        ctx.extra[what] = round(took, 2)
        problem = expect_failure(reply, ["requestTooLarge"], what)
        ctx.check(problem is None, problem)
        ctx.check(took < 3, "%s was answered in %.1f s (bound 3 s)" % (what, took))
    over = [
        ("a 9 KB path", "docs/" + "b" * 9000, {}),
        ("200 path components", "docs/" + "c/" * 199 + "x.txt", {}),
        ("65 headers", "docs/hello.txt", {"headers": {"x-h%d" % i: "v" for i in range(65)}}),
        ("a 40 KB header", "docs/hello.txt", {"headers": {"x-big": "v" * 40000}}),
        ("300 query items", "docs/hello.txt", {"query": [{"name": "q%d" % i, "value": "1"} for i in range(300)]}),
        ("a 20 KB query", "docs/hello.txt", {"query": [{"name": "q", "value": "v" * 20000}]}),
        ("a 20 KB query in the path", "docs/hello.txt?q=" + "v" * 20000, {}),
    ]
    for what, path, fields in over:
        reply = conn.get(path, timeout=10, **fields)
        problem = expect_failure(reply, ["requestTooLarge"], what)
        ctx.check(problem is None, problem)
    under = [
        ("a 7 KB path", "docs/" + "b" * 7000, {}),
        ("100 path components", "docs/" + "c/" * 99 + "x.txt", {}),
        ("30 headers", "docs/hello.txt", {"headers": {"x-h%d" % i: "v" for i in range(30)}}),
        ("100 query items", "docs/hello.txt", {"query": [{"name": "q%d" % i, "value": "1"} for i in range(100)]}),
    ]
    for what, path, fields in under:
        reply = conn.get(path, timeout=10, **fields)
        ctx.check("requestTooLarge" not in (wire.failure_codes(reply) if reply.get("type") == "failure" else []),
                  "%s (under the limits) was refused: %s" % (what, wire.describe(reply)))
    conn.close()


def expect_refused(ctx, what, make, codes=("unauthorized",)):
    """Connects, runs `make(conn)` (a hello), expects an `error` with one of `codes` and a close."""
    try:
        with make() as conn:
            ctx.check(False, "%s was welcomed" % what)
    except wire.Refused as error:
        ctx.check(error.code in codes, "%s: expected %s, got %s" % (what, "/".join(codes), error.code))
    except wire.Closed:
        ctx.check(False, "%s: closed without an error (expected %s)" % (what, "/".join(codes)))
    except wire.WireError as error:
        ctx.check(False, "%s: %s" % (what, error))


def hello_on(address, **hello):
    def make():
        conn = wire.Conn(address)
        try:
            conn.hello(**hello)
        except BaseException:
            conn.close()
            raise
        return conn
    return make


@case("auth", "9", "with auth.token: hellos without or with a wrong token get `unauthorized` on the Unix and "
      "loopback TCP client listeners and on the worker listener (100 wrong tokens in a row too); the socket "
      "files are 0600; a worker that takes a connected worker's name is refused; the right token works",
      config={"token": True, "tcp": True}, budget=90)
def auth(ctx):
    addresses = [ctx.cluster.client_address] + ([ctx.cluster.tcp_address] if ctx.cluster.tcp_address else [])
    ctx.check(ctx.cluster.tcp_address is not None, "no TCP client address in the ready line")
    for address in addresses:
        expect_refused(ctx, "a client without a token on %s" % address, hello_on(address))
        expect_refused(ctx, "a client with a wrong token on %s" % address, hello_on(address, token="wrong"))
        expect_refused(ctx, "a client with a token one byte short on %s" % address,
                       hello_on(address, token=ctx.token[:-1]))
        try:
            with ctx.connect(address=address) as conn:
                reply = conn.get("docs/hello.txt")
                ctx.check(reply.get("type") == "response", "with the token on %s: %s" % (address, wire.describe(reply)))
        except wire.WireError as error:
            ctx.check(False, "the right token on %s was refused: %s" % (address, error))
    started = time.monotonic()
    wrong = 0
    for index in range(100):
        try:
            with hello_on(ctx.cluster.client_address, token="guess-%d" % index)():
                pass
        except wire.Refused as error:
            wrong += error.code == "unauthorized"
        except wire.WireError:
            pass
    ctx.check(wrong == 100, "%d of 100 wrong tokens were answered `unauthorized`" % wrong)
    ctx.note("100 wrong tokens refused in %.1f s" % (time.monotonic() - started))
    for name in ("c.sock", "w.sock"):
        mode = stat.S_IMODE(os.stat(os.path.join(ctx.cluster.folder, name)).st_mode)
        ctx.check(mode & 0o077 == 0, "%s has mode %04o (expected 0600; the suite runs with umask 022)" % (name, mode))
    worker = ctx.cluster.worker_address
    expect_refused(ctx, "a worker without a token", hello_on(worker, role="worker", kind="bundle", name="rogue"))
    expect_refused(ctx, "a worker with a wrong token", hello_on(worker, role="worker", kind="bundle", name="rogue",
                                                                token="wrong"))
    names = [w.get("name") or w.get("id") for w in wire.serving_workers(ctx.cluster.status(ctx.token))
             if w.get("kind") == "bundle"]
    if not names:
        ctx.check(False, "the status report names no bundle worker")
        return
    try:
        with hello_on(worker, role="worker", kind="bundle", name=names[0], token=ctx.token, capacity=4, pid=1)() as rogue:
            # Welcomed: whatever it is sent must not be requests meant for the real worker.
            ctx.check(False, "a second worker named %r (a connected worker's name) was welcomed" % names[0])
            rogue.close()
    except wire.Refused as error:
        ctx.note("a worker reusing the name %r was refused: %s" % (names[0], error.code))
    except wire.WireError as error:
        ctx.note("a worker reusing the name %r: %s" % (names[0], error))
    with ctx.connect() as conn:
        for _ in range(5):
            reply = conn.get("docs/hello.txt")
            ctx.check(reply.get("type") == "response" and wire.body_of(reply) == config.BUNDLE["docs/hello.txt"],
                      "after the rogue worker: %s" % wire.describe(reply))


@case("invalidation-memory", "12", "20 (quick: 10) invalidations with 8 MB prefixes, then 20,000 (quick: 5,000) "
      "of distinct 1 KB keys: every one answered (result or failure) and coordinator RSS 3 s later within "
      "40 MB of where it started", budget=120)
def invalidation_memory(ctx):
    conn = ctx.connect(timeout=30)
    before = ctx.cluster.sampler.current()
    big = 10 if ctx.quick else 20
    for index in range(big):
        id = conn.new_id()
        conn.send({"type": "invalidate", "id": id, "prefix": "GET api %d" % index + "p" * (8 << 20)}, timeout=30)
        reply = conn.answer(id, 30)
        ctx.check(reply.get("type") in ("result", "failure"), "an 8 MB prefix: %s" % wire.describe(reply))
    many = 5000 if ctx.quick else 20000
    answered = 0
    for start in range(0, many, 200):
        ids = []
        for index in range(start, min(many, start + 200)):
            id = conn.new_id()
            conn.send({"type": "invalidate", "id": id, "key": "GET api k%06d-" % index + "k" * 1000})
            ids.append(id)
        answered += len(conn.answers(ids, 60))
    ctx.check(answered == many, "%d of %d invalidations answered" % (answered, many))
    time.sleep(3)
    after = ctx.cluster.sampler.current()
    grown = mb(after - before)
    ctx.extra["rssGrowthMB"] = round(grown, 1)
    ctx.check(grown <= 40, "coordinator RSS %.0f MB -> %.0f MB after the invalidations (+%.0f MB, bound +40 MB)" % (
        mb(before), mb(after), grown))
    conn.close()


CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")


@case("log-injection", "14", "client text with newlines and escapes (a client `error`, an invalidation key, a "
      "worker's name, a path) forges no log line and leaves no control byte in the log; a 200 KB message or key gives "
      "no line over 16 KB; 2,000 client `error`s (20 connections) and 2,000 invalidations give at most 500 log "
      "lines each", budget=90)
def log_injection(ctx):
    marker = "FORGED%06d" % ctx.rng.randrange(1_000_000)
    offset = ctx.cluster.stderr_size()
    forged = "x\n%s monarch: ready — forged\r\x1b[2K%s\x00end" % (marker, marker)
    with ctx.connect() as conn:
        conn.send({"type": "error", "code": "invalidJSON", "message": forged})
        id = conn.new_id()
        conn.send({"type": "invalidate", "id": id, "key": forged})
        conn.answer(id, 10)
        conn.get("docs/%s" % forged.replace("\x00", ""), timeout=10)
        conn.send({"type": "error", "code": "invalidJSON", "message": marker + "L" * 200_000})
        id = conn.new_id()
        conn.send({"type": "invalidate", "id": id, "key": marker + "K" * 200_000})
        conn.answer(id, 10)
    try:
        with wire.Conn(ctx.cluster.worker_address) as rogue:
            rogue.hello(role="worker", kind="bundle", name=forged, token=ctx.token, pid=1)
            time.sleep(0.3)
    except wire.WireError:
        pass
    # Many loggable events: client errors on fresh connections, and invalidations.
    for batch in range(20):
        with ctx.connect() as conn:
            for index in range(100):
                conn.send({"type": "error", "code": "invalidJSON", "message": "%s flood %d-%d" % (marker, batch, index)})
    with ctx.connect() as conn:
        ids = []
        for index in range(2000):
            id = conn.new_id()
            conn.send({"type": "invalidate", "id": id, "key": "%s flood key %d" % (marker, index)})
            ids.append(id)
            if len(ids) == 200:
                conn.answers(ids, 30)
                ids = []
        conn.answers(ids, 30)
    time.sleep(1)
    log = ctx.cluster.stderr_since(offset)
    lines = log.split(b"\n")
    forged_lines = [line for line in lines if line.lstrip().startswith(marker.encode())]
    ctx.check(not forged_lines, "%d log lines start with client text: %r" % (len(forged_lines), forged_lines[:1]))
    control = CONTROL.findall(log)
    ctx.check(not control, "the log holds %d raw control bytes from clients (%r)" % (
        len(control), sorted(set(control))[:5]))
    longest = max((len(line) for line in lines), default=0)
    ctx.check(longest <= 16384, "a log line of %d bytes (bound 16 KB)" % longest)
    for what, needle in (("client `error` messages", b"%s flood " % marker.encode()),
                         ("invalidations", b"%s flood key " % marker.encode())):
        if what == "client `error` messages":
            count = sum(1 for line in lines if needle in line and b"flood key" not in line)
        else:
            count = sum(1 for line in lines if needle in line)
        ctx.extra["lines from 2,000 %s" % what] = count
        ctx.check(count <= 500, "%d log lines carry the text of 2,000 %s (bound 500: rate-limited)" % (count, what))


def hold_all_descriptors(ctx, count=400):
    """Up to `count` idle clients, one at a time (each hello answered before the next, so the
    handshake cap plays no part): as many as the coordinator welcomes. Returns the sockets
    and how many were welcomed."""
    hello = wire.frame({"type": "hello", "role": "client", "version": 1, **({"token": ctx.token} if ctx.token else {})})
    held = []
    welcomed = 0
    for _ in range(count):
        try:
            sock = wire.connect_raw(ctx.cluster.client_address, timeout=1)
        except OSError:
            break  # the coordinator no longer accepts: its descriptors are gone
        held.append(sock)
        try:
            sock.sendall(hello)
            welcomed += wire.Conn(None, sock=sock).recv(1).get("type") == "welcome"
        except (OSError, wire.WireError):
            pass
    ctx.note("%d connections made, %d welcomed; the coordinator holds %s descriptors" % (
        len(held), welcomed, clusters.fd_count(ctx.cluster.pid)))
    return held, welcomed


def kill_bundle_worker(ctx):
    bundles = ctx.cluster.workers_by_kind().get("bundle") or []
    if not bundles:
        ctx.fail("no bundle worker process found")
    os.kill(bundles[0], signal.SIGKILL)
    return time.monotonic()


def wait_for_bundle(admin, seconds):
    """Seconds until the status report (over the open connection `admin`) shows a bundle
    worker again, or None."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        time.sleep(0.5)
        try:
            data = admin.status(timeout=5)
        except wire.WireError:
            continue
        if any(w.get("kind") == "bundle" for w in wire.serving_workers(data)):
            return time.monotonic() - started
    return None


@case("worker-restart-fds", "3", "coordinator with RLIMIT_NOFILE 256 (soft and hard) and caps that fit it "
      "(limits clients 100, workers 16, handshakes 32): 400 idle clients get at most 99 welcomes, and the bundle "
      "worker SIGKILLed meanwhile is registered again within 10 s (descriptors reserved for workers)",
      config={"nofile": 256, "limits": {"clients": 100, "workers": 16, "handshakes": 32}}, budget=90, fault=True)
def worker_restart_fds(ctx):
    admin = ctx.connect()
    held, welcomed = hold_all_descriptors(ctx)
    ctx.check(welcomed <= 98, "%d idle clients welcomed beside the sentinel and the admin client (limits.clients 100)" % (
        welcomed))
    kill_bundle_worker(ctx)
    back = wait_for_bundle(admin, 10)
    ctx.check(back is not None, "the killed bundle worker was not registered again within 10 s while idle clients "
              "held every descriptor they could")
    if back is not None:
        ctx.note("bundle worker back %.1f s after the kill" % back)
    for sock in held:
        sock.close()
    reply = admin.get("docs/hello.txt", timeout=10)
    ctx.check(reply.get("type") == "response", "afterwards: %s" % wire.describe(reply))
    admin.close()


@case("worker-restart-retry", "3", "coordinator with RLIMIT_NOFILE 256 (soft and hard) and the default caps, which do "
      "not fit it: it warns about the descriptor budget at start; idle clients take every descriptor, the bundle "
      "worker is SIGKILLed and cannot start; once the clients leave it is registered again within 15 s (failed "
      "starts retried)", config={"nofile": 256}, budget=90, fault=True)
def worker_restart_retry(ctx):
    ctx.check("descriptor" in ctx.cluster.stderr().lower(),
              "no warning at start that the connection caps do not fit 256 descriptors")
    admin = ctx.connect()
    held, _ = hold_all_descriptors(ctx)
    killed = kill_bundle_worker(ctx)
    time.sleep(5)
    for sock in held:
        sock.close()
    back = wait_for_bundle(admin, 15)
    ctx.check(back is not None, "the killed bundle worker was not registered again within 15 s after the idle "
              "clients left (its failed start was not retried)")
    if back is not None:
        ctx.note("bundle worker back %.1f s after the kill, %.1f s after the clients left" % (
            time.monotonic() - killed, back))
        reply = admin.get("docs/hello.txt", timeout=10)
        ctx.check(reply.get("type") == "response", "after the restart: %s" % wire.describe(reply))
    admin.close()
