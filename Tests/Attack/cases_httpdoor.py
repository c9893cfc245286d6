"""Cases on the coordinator's HTTP/1.1 front door (`listen.http`, issue 29): slow heads and
bodies, header floods, every request-smuggling form, pipelining floods and 10,000 idle
keep-alive connections. Each cluster has the front door on a loopback port, and the sentinel
probes it (a bundle file and a noCache trip to upstream.py) beside its wire probes. Each case
asserts the exact refusal (the status, `Connection: close`, the close itself), a bound on the
coordinator's RSS, and that the upstream never received what it must not.

(`cases_http.py` is about what wire requests and answers carry, not about this listener.)
"""
import itertools
import json
import os
import selectors
import socket
import threading
import time

import config
import http1
from harness import case

UNIQUE = itertools.count(1)
HELLO = config.BUNDLE["docs/hello.txt"]
DATA = config.BUNDLE["docs/data.json"]
README = config.BUNDLE["docs/public/readme.txt"]


def http_options(limits, **extra):
    """A cluster with the front door on 127.0.0.1:0 and the `limits:` keys of the case. The
    cases connect from one address, so a case that raises httpConnections lets that one peer
    hold them all (httpConnectionsPerPeer) unless it says otherwise."""
    limits = dict(limits)
    if "httpConnections" in limits:
        limits.setdefault("httpConnectionsPerPeer", limits["httpConnections"])
    return dict({"http": True, "limits": limits}, **extra)


def door(ctx):
    address = ctx.cluster.http_address
    if not address:
        ctx.fail("monarch up printed no HTTP listener (no '; http on …' in its ready line)")
    return address


def mb(kib):
    return (kib or 0) / 1024


def rss_growth_mb(ctx, before_kib, since):
    """The coordinator's peak RSS since `since` above `before_kib`, in MB."""
    peak = ctx.cluster.sampler.peak(since) or before_kib
    return mb(peak - before_kib)


def marker(name):
    """A unique, harmless token to find a case's requests in upstream.py's log."""
    return "m%d%s" % (next(UNIQUE), "".join(ch for ch in name if ch.isalnum())[:24])


def upstream_saw(ctx, needle):
    """The upstream's log entries (since the case's mark) whose target, headers or body hold `needle`."""
    found = []
    for entry in ctx.upstream.log():
        text = entry["target"] + json.dumps(entry["headers"]) + entry.get("body", "")
        if needle.lower() in text.lower():
            found.append(entry)
    return found


def expect_refusal(ctx, conn, status, what, timeout=5.0, close_within=3.0):
    """Reads one answer on `conn`: it must be `status` with `Connection: close`, and the
    connection must then end within `close_within` seconds with no byte more (nothing
    pipelined behind the refused request is answered)."""
    started = time.monotonic()
    try:
        answer = conn.response(timeout)
    except http1.wire.WireError as error:
        ctx.check(False, "%s: the answer is not HTTP: %s" % (what, error))
        return None
    if not ctx.check(answer is not None, "%s: no answer within %.0f s (expected %d; the connection %s)" % (
            what, timeout, status, "ended" if conn.eof else "stayed open")):
        return None
    ctx.check(answer.status == status, "%s: answered %d %s, expected %d" % (what, answer.status, answer.body[:120], status))
    ctx.check(answer.closing, "%s: the %d answer has no Connection: close" % (what, answer.status))
    closed = conn.closed_within(close_within)
    ctx.check(closed, "%s: the connection stayed open %.0f s after the %d answer" % (what, close_within, answer.status))
    ctx.check(not conn.leftover(), "%s: bytes after the refusal (a request behind it was answered?): %r" % (
        what, conn.leftover()[:160]))
    return time.monotonic() - started


class Crowd:
    """Many front-door connections driven from one selector: what each received (answers
    parsed in order), when its first byte and its end came."""

    def __init__(self, address):
        self.address = address
        self.selector = selectors.DefaultSelector()
        self.socks = []
        self.readers = {}
        self.answers = {}       # sock -> [Response]
        self.first_byte = {}    # sock -> monotonic time of the first byte received
        self.ended = {}         # sock -> monotonic time of EOF or reset
        self.reset = set()
        self.garbled = {}       # sock -> error text when its bytes were not HTTP
        self.refused_at_connect = 0

    def open(self, count, request=None, batch=200, answer_timeout=10.0):
        """Opens `count` connections, `batch` at a time; each sends `request` (bytes) when
        given, and the next batch waits until the last one's answers came (or the timeout)."""
        opened = []
        for start in range(0, count, batch):
            group = []
            for _ in range(min(batch, count - start)):
                try:
                    sock = http1.connect(self.address, timeout=5)
                except OSError:
                    self.refused_at_connect += 1
                    continue
                if request is not None:
                    try:
                        sock.sendall(request)
                    except OSError:
                        pass
                sock.setblocking(False)
                self.add(sock)
                group.append(sock)
            if request is not None:
                self.run(answer_timeout, until=lambda: all(self.answers[s] or s in self.ended for s in group))
            opened += group
        return opened

    def add(self, sock):
        self.socks.append(sock)
        self.readers[sock] = http1.ResponseReader()
        self.answers[sock] = []
        self.selector.register(sock, selectors.EVENT_READ)

    def run(self, seconds, until=None):
        """Reads whatever arrives for `seconds` (or until `until()` holds)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (until and until()) and self.selector.get_map():
            for key, _ in self.selector.select(timeout=min(0.05, max(0.0, deadline - time.monotonic()))):
                self._read(key.fileobj)

    def _read(self, sock):
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = None
            self.reset.add(sock)
        now = time.monotonic()
        if not data:
            self.ended[sock] = now
            self.selector.unregister(sock)
            return
        self.first_byte.setdefault(sock, now)
        reader = self.readers[sock]
        reader.feed(data)
        try:
            while True:
                answer = reader.next()
                if answer is None:
                    break
                answer.at = now
                self.answers[sock].append(answer)
        except http1.wire.WireError as error:
            self.garbled[sock] = str(error)

    def open_count(self, socks=None):
        return sum(1 for sock in (socks or self.socks) if sock not in self.ended)

    def close(self):
        self.selector.close()
        for sock in self.socks:
            try:
                sock.close()
            except OSError:
                pass


# --------------------------------------------------------------------------------------------
# Slow heads.

def slowloris_count(ctx):
    return 400 if ctx.quick else 2000


def slowloris_options(suite):
    return http_options({"httpHeaderTimeout": "3s", "httpKeepAlive": "20s",
                         "httpConnections": (400 if suite.quick else 2000) + 64})


@case("http-slowloris", "29", "limits httpHeaderTimeout 3s: 400 (full: 2,000) connections each sending a head one "
      "header byte per 500 ms all get 408 with Connection: close and are closed 2.5-15 s after their first byte "
      "(none earlier; 4 s on an idle machine, the timeout being checked once a second); a head sent one byte per 40 ms that is whole in 1.8 s is answered 200; RSS growth < 40 MB",
      config=slowloris_options, budget=90, quick_budget=60)
def http_slowloris(ctx):
    address = door(ctx)
    count = slowloris_count(ctx)
    before = ctx.cluster.sampler.current()
    t0 = time.monotonic()

    # The control: a slow head that is whole within the timeout is served.
    head = http1.request_bytes("/docs/hello.txt")
    control = http1.Conn(address)
    control_result = {}

    def send_control():
        for byte in head:
            if not control.send(bytes([byte])):
                control_result["error"] = "closed while sending"
                return
            time.sleep(0.04)

    sender = threading.Thread(target=send_control, daemon=True)
    sender.start()

    crowd = Crowd(address)
    started = {}
    line = b"GET /docs/hello.txt HTTP/1.1\r\n"
    for sock in crowd.open(count):
        try:
            sock.send(line)
        except OSError:
            continue
        started[sock] = time.monotonic()
    ctx.check(crowd.refused_at_connect == 0, "%d of %d connections refused at connect (httpConnections %d)" % (
        crowd.refused_at_connect, count, count + 64))
    ctx.note("%d slow heads started in %.1f s" % (len(started), time.monotonic() - t0))
    trickle = b"X-Slow: a\r\n"
    position = dict.fromkeys(started, 0)
    sent_after_answer = 0
    deadline = time.monotonic() + 18
    while time.monotonic() < deadline and crowd.open_count(list(started)) > 0:
        tick = time.monotonic()
        for sock in started:
            if sock in crowd.ended or crowd.answers[sock]:
                continue
            try:
                sock.send(trickle[position[sock] % len(trickle):][:1])
                position[sock] += 1
            except OSError:
                sent_after_answer += 1
        crowd.run(max(0.0, 0.5 - (time.monotonic() - tick)))
    sender.join(5)
    answer = control.response(10)
    ctx.check(answer is not None and answer.status == 200 and answer.body == HELLO,
              "a head sent one byte per 40 ms (whole in about 1.8 s, within httpHeaderTimeout 3s) got %r%s" % (
                  answer, " (%s)" % control_result["error"] if control_result else ""))
    control.close()

    late, early, wrong, still_open, garbled = [], [], [], [], []
    for sock, begun in started.items():
        answers = crowd.answers[sock]
        if sock in crowd.garbled:
            garbled.append(crowd.garbled[sock])
        if sock not in crowd.ended:
            still_open.append(sock)
            continue
        if len(answers) != 1 or answers[0].status != 408 or not answers[0].closing:
            wrong.append(answers)
            continue
        at = answers[0].at - begun
        if at < 2.5:
            early.append(at)
        if crowd.ended[sock] - begun > 15:
            late.append(crowd.ended[sock] - begun)
    ctx.check(not garbled, "%d slow heads got bytes that are not HTTP: %s" % (len(garbled), garbled[:1]))
    ctx.check(not still_open, "%d of %d slow heads still open 18 s on (httpHeaderTimeout 3s)" % (len(still_open), len(started)))
    ctx.check(not wrong, "%d slow heads were not answered exactly one 408 with Connection: close; e.g. %r" % (
        len(wrong), wrong[:1]))
    ctx.check(not early, "%d slow heads answered before 2.5 s of their first byte (httpHeaderTimeout 3s): %s" % (
        len(early), ["%.1f s" % t for t in early[:3]]))
    ctx.check(not late, "%d slow heads closed later than 15 s after their first byte: %s" % (
        len(late), ["%.1f s" % t for t in late[:3]]))
    times = sorted(answers[0].at - started[sock] for sock, answers in crowd.answers.items() if answers and sock in started)
    if times:
        ctx.note("408 after %.1f-%.1f s (median %.1f s) of the first byte" % (times[0], times[-1], times[len(times) // 2]))
    growth = rss_growth_mb(ctx, before, t0)
    ctx.note("RSS growth %.1f MB" % growth)
    ctx.check(growth < 40, "coordinator RSS grew %.0f MB under %d slow heads (bound 40 MB)" % (growth, len(started)))
    crowd.close()


# --------------------------------------------------------------------------------------------
# Slow bodies.

def slow_body_count(ctx):
    return 200 if ctx.quick else 1000


SLOW_BODY_AGE_S = 10


def slow_body_options(suite):
    return http_options({"httpHeaderTimeout": "3s", "httpBody": "64KB", "httpKeepAlive": "20s",
                         "httpConnectionAge": "%ds" % SLOW_BODY_AGE_S,
                         "httpConnections": (200 if suite.quick else 1000) + 64})


@case("http-slow-body", "29", "limits httpHeaderTimeout 3s, httpBody 64KB, httpConnectionAge 10s: a Content-Length "
      "body and a chunked body that pause get 408 + close 2.5-15 s after their last byte and never reach the "
      "upstream; a body sent a byte a second (each pause under the timeout) gets 408 + close 9.5-20 s after its "
      "connection opened; a body trickled one byte per 400 ms (6.4 s) is answered with it; Content-Length over 64 KB "
      "and a chunked body past it get 413 + close at once; a body cut short never reaches the upstream; 200 (full: "
      "1,000) connections each holding 64 KB - 1 of a body: RSS growth < 2 x 64 KB x N + 40 MB, each 408 + closed "
      "within 15 s",
      config=slow_body_options, budget=120, quick_budget=90)
def http_slow_body(ctx):
    address = door(ctx)
    ctx.upstream.mark()
    before = ctx.cluster.sampler.current()
    t0 = time.monotonic()

    # A body that never pauses long enough for the timeout, a byte a second: it may not keep
    # its connection past httpConnectionAge (it would for 100 s, or weeks for a megabyte).
    aged = {}
    aged_tag = marker("aged")

    def trickle_past_the_age():
        with http1.Conn(address) as conn:
            opened = time.monotonic()
            conn.send(("POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" % aged_tag).encode())
            while time.monotonic() - opened < SLOW_BODY_AGE_S + 12:
                try:
                    answer = conn.response(1)  # a second's pause, reading meanwhile
                except http1.wire.WireError as error:
                    aged["error"] = str(error)
                    return
                if answer is not None:
                    aged["answer"], aged["at"] = answer, time.monotonic() - opened
                    aged["closed"] = conn.closed_within(3)
                    return
                if conn.eof or not conn.send(b"a"):
                    aged["error"] = "closed without an answer after %.1f s" % (time.monotonic() - opened)
                    return

    ager = threading.Thread(target=trickle_past_the_age, daemon=True)
    ager.start()

    # Paused bodies: 408 after the pause, the request never forwarded.
    paused = []
    for name, head, part in (
        ("content-length", "POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", b"0123456789"),
        ("chunked", "POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", b"5\r\nhello\r\n"),
    ):
        tag = marker("paused" + name)
        conn = http1.Conn(address)
        conn.send((head % tag).encode() + part)
        paused.append((name, tag, conn, time.monotonic()))
    for name, tag, conn, sent in paused:
        took = expect_refusal(ctx, conn, 408, "a %s body paused after its first bytes" % name, timeout=16)
        if took is not None:
            waited = time.monotonic() - sent
            ctx.check(2.5 <= waited <= 15, "a paused %s body was refused %.1f s after its last byte (timeout 3s)" % (
                name, waited))
        conn.close()

    # A steady trickle, each pause under the timeout: served, body intact.
    body = b"trickled-body-16"
    tag = marker("trickle")
    with http1.Conn(address) as conn:
        conn.send(("POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % (
            tag, len(body))).encode())
        for byte in body:
            time.sleep(0.4)
            if not conn.send(bytes([byte])):
                break
        answer = conn.response(10)
    ok = answer is not None and answer.status == 200
    echoed = json.loads(answer.body).get("body") if ok else None
    ctx.check(ok and echoed == body.decode(), "a body trickled one byte per 400 ms (each pause under 3 s) got %r "
              "(echoed body %r)" % (answer, echoed))

    # Over httpBody: refused at once.
    tag = marker("toolarge")
    with http1.Conn(address) as conn:
        conn.send(("POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nContent-Length: 65537\r\n\r\n" % tag).encode() + b"x" * 1000)
        took = expect_refusal(ctx, conn, 413, "Content-Length 65537 (httpBody 64KB)")
        ctx.check(took is None or took < 2, "Content-Length over httpBody refused after %.1f s" % (took or 0))
    with http1.Conn(address) as conn:
        conn.send(("POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" % tag).encode()
                  + b"8000\r\n" + b"y" * 0x8000 + b"\r\n" + b"8001\r\n" + b"z" * 100)
        expect_refusal(ctx, conn, 413, "a chunked body passing 64 KB (httpBody 64KB)")
    # Cut short: the client goes before the body is whole.
    with http1.Conn(address) as conn:
        conn.send(("POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" % tag).encode() + b"a" * 50)
        time.sleep(0.3)
    for name, tag, _, _ in paused:
        ctx.check(not upstream_saw(ctx, tag), "the upstream received the paused %s request" % name)
    ctx.check(not upstream_saw(ctx, tag), "the upstream received a request whose body was over the limit or cut short")

    # Many connections, each holding 64 KB - 1 of a 64 KB body.
    count = slow_body_count(ctx)
    crowd = Crowd(address)
    head = b"POST /up/echo?held HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n"
    socks = crowd.open(count, batch=100)
    sent_at = {}
    filler = b"b" * 65535
    for sock in socks:
        sock.setblocking(True)
        sock.settimeout(5)
        try:
            sock.sendall(head + filler)
            sent_at[sock] = time.monotonic()
        except OSError:
            pass
        sock.setblocking(False)
    ctx.check(len(sent_at) == count, "only %d of %d connections took a 64 KB - 1 body" % (len(sent_at), count))
    crowd.run(18, until=lambda: crowd.open_count() == 0)
    bound = 2 * 64 * count / 1024 + 40
    growth = rss_growth_mb(ctx, before, t0)
    ctx.note("%d held bodies: RSS growth %.0f MB (bound %.0f MB)" % (count, growth, bound))
    ctx.check(growth < bound, "coordinator RSS grew %.0f MB with %d held 64 KB bodies (bound %.0f MB)" % (
        growth, count, bound))
    wrong = [crowd.answers[s] for s in sent_at if len(crowd.answers[s]) != 1 or crowd.answers[s][0].status != 408
             or not crowd.answers[s][0].closing]
    ctx.check(not wrong, "%d held bodies not answered exactly one 408 with Connection: close: %r" % (len(wrong), wrong[:1]))
    late = [crowd.ended.get(s, float("inf")) - at for s, at in sent_at.items() if crowd.ended.get(s, float("inf")) - at > 15]
    ctx.check(not late, "%d held bodies not closed within 15 s of their last byte" % len(late))
    crowd.close()

    ager.join(SLOW_BODY_AGE_S + 18)
    answer = aged.get("answer")
    ctx.check(answer is not None and answer.status == 408 and answer.closing and aged.get("closed"),
              "a body sent a byte a second (each pause under httpHeaderTimeout 3s) past httpConnectionAge %ds got %r%s" % (
                  SLOW_BODY_AGE_S, answer, " (%s)" % aged["error"] if "error" in aged else ""))
    if answer is not None:
        ctx.check(SLOW_BODY_AGE_S - 0.5 <= aged["at"] <= SLOW_BODY_AGE_S + 10,
                  "the body trickled past httpConnectionAge %ds was refused %.1f s after the connection opened" % (
                      SLOW_BODY_AGE_S, aged["at"]))
        ctx.note("a body trickled a byte a second: 408 %.1f s after its connection opened (httpConnectionAge %ds)" % (
            aged["at"], SLOW_BODY_AGE_S))
    ctx.check(not upstream_saw(ctx, aged_tag), "the upstream received the body trickled past the connection's age")


# --------------------------------------------------------------------------------------------
# Chunked bodies of small chunks, arriving in small pieces.

def cpu_seconds(pid):
    """User + system CPU seconds `pid` has used (from /proc/PID/stat), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def chunked(data, size):
    """`data` as a chunked body of `size`-byte chunks, the last chunk included."""
    parts = [b"%x\r\n%s\r\n" % (len(data[i:i + size]), data[i:i + size]) for i in range(0, len(data), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def echoed_length(answer):
    try:
        return len(json.loads(answer.body)["body"])
    except (ValueError, KeyError, TypeError):
        return None


def large_body_count(ctx):
    return 100 if ctx.quick else 300


@case("http-large-bodies", "29", "default httpBody (1MB): a 900 KB body in 16-byte chunks (1.24 MB framed, more than "
      "one request's read-ahead) and a 200 KB body in 1-byte chunks (1.2 MB framed) are answered whole; 4 "
      "connections each sending 160 KB of 1-byte chunks at once, then one byte every millisecond or so for 6 s: "
      "the coordinator spends < 1.5 CPU seconds on those 6 s and their bodies are answered whole at the last "
      "chunk; 100 (full: 300) connections that each sent a 1000 KB body and were answered, then idle: RSS growth "
      "< 40 MB (each keeping its request's buffer: 100 MB)",
      config=http_options({"httpHeaderTimeout": "5s", "httpConnectionsPerPeer": 1024}), budget=120, quick_budget=90)
def http_large_bodies(ctx):
    address = door(ctx)
    head = b"POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

    # Framing heavier than the data: still within httpBody, so answered.
    for what, size, chunk in (("a 900 KB body in 16-byte chunks", 900 * 1024, 16),
                              ("a 200 KB body in 1-byte chunks", 200 * 1024, 1)):
        data = bytes(48 + i % 64 for i in range(size))
        with http1.Conn(address, timeout=30) as conn:
            sender = send_in_background(conn, head % marker("framed").encode() + chunked(data, chunk))
            answer = conn.response(30)
            sender.join(10)
        ctx.check(answer is not None and answer.status == 200 and echoed_length(answer) == size,
                  "%s (%d bytes framed, within httpBody 1MB) got %r (echoed %s bytes)" % (
                      what, len(chunked(data, chunk)), answer, echoed_length(answer) if answer else None))

    # Trickled 1-byte chunks after a burst: each arrival must not cost the whole body again.
    piece = b"1\r\nx\r\n"
    conns = []
    for _ in range(4):
        conn = http1.Conn(address, timeout=30)
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.send(head % marker("trickle").encode() + piece * (160 * 1024))
        conns.append(conn)
    time.sleep(0.5)
    before = cpu_seconds(ctx.cluster.pid)
    began = time.monotonic()
    sends = 0
    while time.monotonic() - began < 6:
        for byte in piece:
            for conn in conns:
                conn.sock.send(bytes([byte]))
                sends += 1
            time.sleep(0.001)
    used = cpu_seconds(ctx.cluster.pid) - before
    trickled = sends // len(conns) // len(piece)
    ctx.note("4 connections trickling 1-byte chunks after 160 KB of them, %d sends of one byte in %.1f s: the "
             "coordinator used %.2f CPU seconds" % (sends, time.monotonic() - began, used))
    ctx.check(used < 1.5, "4 connections trickling 1-byte chunks (%d one-byte sends) after 160 KB of them cost the "
              "coordinator %.1f CPU seconds in 6 s (bound 1.5: an arrival must not read the whole body again)" % (
                  sends, used))
    for conn in conns:
        conn.send(b"0\r\n\r\n")
    for conn in conns:
        answer = conn.response(30)
        ctx.check(answer is not None and answer.status == 200 and echoed_length(answer) == 160 * 1024 + trickled,
                  "a trickled chunked body of %d bytes got %r (echoed %s)" % (
                      160 * 1024 + trickled, answer, echoed_length(answer) if answer else None))
        conn.close()

    # Connections that sent a large body, were answered, and idle: they keep no copy of it.
    count = large_body_count(ctx)
    before = ctx.cluster.sampler.current()
    body = b"L" * (1000 * 1024)
    idle = []
    wrong = []
    for _ in range(count):
        conn = http1.Conn(address, timeout=30)
        conn.send(http1.request_bytes("/docs/hello.txt", method="POST", body=body))
        answer = conn.response(30)
        if answer is None or answer.status != 404 or answer.closing:
            wrong.append(answer)
        idle.append(conn)
    time.sleep(2)
    growth = mb(ctx.cluster.sampler.current() - before)
    ctx.note("%d idle connections that each sent 1000 KB: RSS growth %.0f MB" % (count, growth))
    ctx.check(not wrong, "%d POSTs of 1000 KB to a bundle file not answered 404 (the bundle serves GET and HEAD) "
              "keeping the connection: %r" % (len(wrong), wrong[:1]))
    ctx.check(growth < 40, "coordinator RSS grew %.0f MB with %d idle connections that each sent a 1000 KB body "
              "(bound 40 MB)" % (growth, count))
    for conn in idle:
        conn.close()


# --------------------------------------------------------------------------------------------
# Header floods.

FLOOD_LIMITS = {"httpHeaders": 100, "httpHeaderBlock": "32KB", "httpRequestLine": 8000, "httpHeaderTimeout": "3s"}


@case("http-header-floods", "29", "limits httpHeaders 100, httpHeaderBlock 32KB, httpRequestLine 8000: 101 header "
      "lines, one 33 KB header, 90 headers of 370 bytes get 431 + close; 100 lines and 31 KB are served; a request "
      "line of 8,001 bytes gets 414 + close (7,999: not 414); 20 connections streaming 4 MB of header lines and 20 "
      "streaming a 4 MB request line each get 431 / 414 + close; RSS growth < 30 MB (160 MB if they were kept)",
      config=http_options(FLOOD_LIMITS), budget=90, quick_budget=60)
def http_header_floods(ctx):
    address = door(ctx)
    before = ctx.cluster.sampler.current()
    t0 = time.monotonic()

    def one(what, data, status):
        with http1.Conn(address) as conn:
            conn.send(data)
            if status in (200, 404):
                answer = conn.response(10)
                ctx.check(answer is not None and answer.status == status, "%s: expected %d, got %r" % (what, status, answer))
            else:
                expect_refusal(ctx, conn, status, what)

    many = [("X-H-%d" % i, "v") for i in range(100)]  # with Host: 101 header lines
    one("101 header lines", http1.request_bytes("/docs/hello.txt", headers=many), 431)
    one("100 header lines", http1.request_bytes("/docs/hello.txt", headers=many[:99]), 200)
    one("one 33 KB header", http1.request_bytes("/docs/hello.txt", headers=[("X-Big", "a" * 33000)]), 431)
    one("90 headers of 370 bytes (33 KB)", http1.request_bytes(
        "/docs/hello.txt", headers=[("X-H-%02d" % i, "b" * 362) for i in range(90)]), 431)
    one("80 headers of 385 bytes (31 KB)", http1.request_bytes(
        "/docs/hello.txt", headers=[("X-H-%02d" % i, "c" * 377) for i in range(80)]), 200)
    # "GET " + target + " HTTP/1.1" = len(target) + 13.
    one("a request line of 8,001 bytes", http1.request_bytes("/docs/" + "a" * (8001 - 13 - 6)), 414)
    with http1.Conn(address) as conn:
        conn.send(http1.request_bytes("/docs/" + "a" * (7999 - 13 - 6)))
        answer = conn.response(10)
        ctx.check(answer is not None and answer.status not in (414, 431, 400),
                  "a request line of 7,999 bytes (limit 8000) was refused: %r" % answer)

    # Floods: heads that never end, sent as fast as the coordinator takes them.
    def flood(kind, prefix, unit, status, results):
        try:
            conn = http1.Conn(address)
        except OSError as error:
            results.append((kind, None, 0, "connect: %s" % error))
            return
        taken = 0
        conn.sock.settimeout(3)
        try:
            conn.sock.sendall(prefix)
            taken += len(prefix)
            block = unit * (65536 // len(unit))
            while taken < 4 << 20:
                conn.sock.sendall(block)
                taken += len(block)
        except OSError:
            pass  # closed (or reset) by the coordinator, or it stopped reading
        answer = None
        try:
            answer = conn.response(5)
        except http1.wire.WireError:
            pass
        results.append((kind, answer, taken, conn.closed_within(3)))
        conn.close()

    results = []
    threads = []
    for i in range(20):
        threads.append(threading.Thread(target=flood, args=(
            "headers", b"GET /docs/hello.txt HTTP/1.1\r\nHost: x\r\n", b"X-Flood: 0123456789abcdef\r\n", 431, results)))
        threads.append(threading.Thread(target=flood, args=(
            "request line", b"GET /docs/", b"a", 414, results)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    ctx.check(len(results) == 40, "only %d of 40 floods finished within 30 s" % len(results))
    for kind, answer, taken, closed in results:
        status = 431 if kind == "headers" else 414
        if not ctx.check(answer is not None and answer.status == status and answer.closing,
                         "a flood of %s got %r, expected %d with Connection: close" % (kind, answer, status)):
            break
        if not ctx.check(closed is True, "a flood of %s: the connection stayed open after the %d" % (kind, status)):
            break
    if results:
        # What the kernel took (its socket buffers grow to megabytes on loopback); what the
        # coordinator kept of it shows in its RSS: 40 floods of 4 MB kept would be 160 MB.
        ctx.note("floods: at most %d KB taken by the kernel each before the close" % (max(r[2] for r in results) // 1024))
    growth = rss_growth_mb(ctx, before, t0)
    ctx.note("RSS growth %.1f MB" % growth)
    ctx.check(growth < 30, "coordinator RSS grew %.0f MB under header floods (bound 30 MB; 40 floods of 4 MB)" % growth)


# --------------------------------------------------------------------------------------------
# Request smuggling and injection.

def smuggling_forms():
    """(name, request bytes with MARK where the case's marker goes, expected status)."""
    post = "POST /up/echo?MARK HTTP/1.1\r\nHost: x\r\n"
    get = "GET /up/echo?MARK HTTP/1.1\r\nHost: x\r\n"
    forms = [
        # Content-Length with Transfer-Encoding, both orders.
        ("CL then TE", post + "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("TE then CL", post + "Transfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n0\r\n\r\n", 400),
        ("CL then TE: identity", post + "Content-Length: 6\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n", 400),
        # Two Content-Lengths, alike or not, and lengths that are not a number of bytes.
        ("two Content-Lengths alike", post + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400),
        ("two Content-Lengths differing", post + "Content-Length: 5\r\nContent-Length: 50\r\n\r\nhello", 400),
        ("Content-Length list", post + "Content-Length: 5, 5\r\n\r\nhello", 400),
        ("Content-Length +5", post + "Content-Length: +5\r\n\r\nhello", 400),
        ("Content-Length -1", post + "Content-Length: -1\r\n\r\nhello", 400),
        ("Content-Length hex", post + "Content-Length: 0x5\r\n\r\nhello", 400),
        ("Content-Length 19 digits", post + "Content-Length: 0000000000000000005\r\n\r\nhello", 400),
        ("Content-Length empty", post + "Content-Length: \r\n\r\nhello", 400),
        # Transfer codings other than chunked, twice, in HTTP/1.0, or hidden by whitespace.
        ("TE chunked, identity", post + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 501),
        ("TE gzip, chunked", post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
        ("TE xchunked", post + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 501),
        ("TE twice", post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501),
        ("TE space before colon", post + "Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400),
        ("TE vertical tab", post + "Transfer-Encoding:\x0bchunked\r\n\r\n0\r\n\r\n", 400),
        ("TE in HTTP/1.0", post.replace("HTTP/1.1", "HTTP/1.0") + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        # Bad chunk sizes and framing.
        ("chunk size G", post + "Transfer-Encoding: chunked\r\n\r\nG\r\nhello\r\n0\r\n\r\n", 400),
        ("chunk size -5", post + "Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", 400),
        ("chunk size 0x5", post + "Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", 400),
        ("chunk size with a space", post + "Transfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n", 400),
        ("chunk size empty", post + "Transfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n", 400),
        ("chunk size 16 hex digits", post + "Transfer-Encoding: chunked\r\n\r\n0000000000000005\r\nhello\r\n0\r\n\r\n", 400),
        ("chunk size 2^64+5", post + "Transfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n", 400),
        ("chunk size over the body limit", post + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\nhello\r\n0\r\n\r\n", 413),
        ("chunk extension with a space", post + "Transfer-Encoding: chunked\r\n\r\n5;a b\r\nhello\r\n0\r\n\r\n", 400),
        ("chunk data longer than its size", post + "Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n", 400),
        ("chunk trailer field", post + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n", 400),
        ("chunk size line ending with LF", post + "Transfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", 400),
        ("chunk size line ending with CR", post + "Transfer-Encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n", 400),
        # Bare CR and bare LF line ends, obsolete line folding.
        ("bare LF line ends", get.replace("\r\n", "\n") + "\n", 400),
        ("one bare LF", get + "X-A: 1\n\r\n", 400),
        ("bare CR in the request line", "GET /up/echo?MARK\rHTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("bare CR in a header", get + "X-A: 1\rX-B: 2\r\n\r\n", 400),
        ("obs-fold with a space", get + "X-A: 1\r\n 2\r\n\r\n", 400),
        ("obs-fold with a tab", get + "X-A: 1\r\n\t2\r\n\r\n", 400),
        ("folded Content-Length", post + "X-A: 1\r\n Content-Length: 5\r\n\r\nhello", 400),
        # Request lines: HTTP/0.9 and versions, separators.
        ("HTTP/0.9 request line", "GET /up/echo?MARK\r\n\r\n", 400),
        ("HTTP/2.0", get.replace("HTTP/1.1", "HTTP/2.0") + "\r\n", 505),
        ("HTTP/1.2", get.replace("HTTP/1.1", "HTTP/1.2") + "\r\n", 505),
        ("HTTP/1.10", get.replace("HTTP/1.1", "HTTP/1.10") + "\r\n", 400),
        ("lowercase http/1.1", get.replace("HTTP/1.1", "http/1.1") + "\r\n", 400),
        ("two spaces after the method", get.replace("GET ", "GET  ") + "\r\n", 400),
        ("a tab between method and target", get.replace("GET ", "GET\t") + "\r\n", 400),
        ("a space after the version", get.replace("HTTP/1.1", "HTTP/1.1 ") + "\r\n", 400),
        # Control characters in the request line and in headers.
        ("SOH in the target", "GET /up/echo?MARK\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("NUL in the target", "GET /up/echo?MARK\x00 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("DEL in the target", "GET /up/echo?MARK\x7f HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("a byte over 0x7F in the target", "GET /up/echo?MARK\xff HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("NUL in the method", "G\x00T /up/echo?MARK HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("NUL in a header value", get + "X-A: a\x00b\r\n\r\n", 400),
        ("ESC in a header value", get + "X-A: a\x1b[31mb\r\n\r\n", 400),
        ("DEL in a header value", get + "X-A: a\x7fb\r\n\r\n", 400),
        ("form feed in a header value", get + "X-A: a\x0cb\r\n\r\n", 400),
        ("NUL in a header name", get + "X-\x00A: b\r\n\r\n", 400),
        ("a space in a header name", get + "X A: b\r\n\r\n", 400),
        ("space before a colon", get + "Accept : */*\r\n\r\n", 400),
        ("a header line without a colon", get + "X-A\r\n\r\n", 400),
        # Host: none or two; no tunnels.
        ("no Host in HTTP/1.1", "GET /up/echo?MARK HTTP/1.1\r\nX-A: 1\r\n\r\n", 400),
        ("two Hosts", get + "Host: y\r\n\r\n", 400),
        ("CONNECT", "CONNECT 127.0.0.1:1?MARK HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", 501),
        ("Expect other than 100-continue", post + "Expect: 200-ok\r\nContent-Length: 5\r\n\r\nhello", 417),
        # CR, LF and NUL percent-encoded into what would reach the upstream's URL.
        ("%0d%0a in the path", "GET /up/echo%0d%0aX-Injected:%20MARK HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("%0D%0A in the path", "GET /up/echo%0D%0AX-Injected:%20MARK HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("%0a in the path", "GET /up/echo%0aX-Injected:%20MARK HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("%0d in the path", "GET /up/echo%0dX-Injected:%20MARK HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("%00 in the path", "GET /up/echo%00MARK HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("%0d%0a in the query", "GET /up/echo?q=%0d%0aX-Injected:%20MARK HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("%0A in a query name", "GET /up/echo?%0AX-Injected:%20MARK=1 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("%00 in the query", "GET /up/echo?MARK=%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ]
    return forms


# Encodings that are not CR, LF or NUL but that a careless decoder turns into them, and an
# absolute-form target naming the upstream: whatever the answer, no raw control byte and no
# injected header may reach the upstream.
PASSING_FORMS = [
    ("double-encoded CRLF in the path", "/up/echo%250d%250aX-Injected:%20MARK"),
    ("double-encoded CRLF in the query", "/up/echo?q=%250d%250aX-Injected:%20MARK"),
    ("U+560A U+560D in the path (low bytes 0A 0D)", "/up/echo%E5%98%8A%E5%98%8DX-Injected:%20MARK"),
    ("U+560A U+560D in the query", "/up/echo?q=%E5%98%8A%E5%98%8DX-Injected:%20MARK"),
    ("overlong UTF-8 CR LF in the path", "/up/echo%C0%8D%C0%8AX-Injected:%20MARK"),
    ("overlong UTF-8 NUL in the query", "/up/echo?q=%C0%80MARK"),
    ("a backslash-escaped CRLF", "/up/echo?q=\\r\\nX-Injected:%20MARK"),
    ("absolute-form target naming the upstream", "http://UPSTREAM/echo?MARK"),
]


@case("http-smuggling", "29", "every smuggling form on its own connection, each followed by a smuggled GET: CL with "
      "TE (both orders), two CLs, CLs that are not digits, TE other than chunked, TE twice, in HTTP/1.0, hidden by "
      "whitespace or VT, bad chunk sizes, extensions, trailers, bare CR / LF (head and chunk framing), obs-fold, "
      "HTTP/0.9, other versions, control characters in the request line and headers, no or two Hosts, CONNECT, "
      "%0d %0a %00 in path or query: exactly the documented 400 / 413 / 417 / 501 / 505 with Connection: close, "
      "then closed, the smuggled request never answered; none of them, nor the smuggled requests, nor the "
      "double-encoded / overlong / U+560A forms, reach the upstream with a raw CR, LF or NUL or an injected header; "
      "a valid request pipelined before a smuggling form is answered 200 first",
      config=http_options({"httpHeaderTimeout": "3s", "httpBody": "64KB"}), budget=120, quick_budget=90)
def http_smuggling(ctx):
    address = door(ctx)
    ctx.upstream.mark()
    upstream_host = "127.0.0.1:%d" % ctx.upstream.port
    marks = []
    statuses = {}
    for name, text, status in smuggling_forms():
        mark = marker(name)
        smuggled = marker("smuggled")
        marks += [(name, mark), (name + " (the smuggled request)", smuggled)]
        data = text.replace("MARK", mark).encode("latin-1")
        data += ("GET /up/echo?%s HTTP/1.1\r\nHost: x\r\n\r\n" % smuggled).encode()
        with http1.Conn(address) as conn:
            conn.send(data)
            expect_refusal(ctx, conn, status, name)
        statuses[status] = statuses.get(status, 0) + 1
    ctx.note("refused: " + ", ".join("%d × %d" % (n, s) for s, n in sorted(statuses.items())))

    # HTTP/0.9 as a 0.9 client sends it (no empty line): never answered with a bare body; 408.
    with http1.Conn(address) as conn:
        mark = marker("http09")
        marks.append(("HTTP/0.9 without an empty line", mark))
        conn.send(("GET /docs/hello.txt?%s\r\n" % mark).encode())
        expect_refusal(ctx, conn, 408, "an HTTP/0.9 request (GET PATH CRLF, nothing more)", timeout=8)

    # A valid request, then a smuggling form, then a smuggled one, in one write.
    with http1.Conn(address) as conn:
        mark, smuggled = marker("pipelined"), marker("pipelinedsmuggled")
        marks += [("CL+TE behind a valid request", mark), ("smuggled behind a valid request", smuggled)]
        conn.send(http1.request_bytes("/docs/hello.txt")
                  + ("POST /up/echo?%s HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "0\r\n\r\nGET /up/echo?%s HTTP/1.1\r\nHost: x\r\n\r\n" % (mark, smuggled)).encode())
        first = conn.response(10)
        ctx.check(first is not None and first.status == 200 and first.body == HELLO and not first.closing,
                  "a valid request pipelined before a smuggling form got %r" % first)
        expect_refusal(ctx, conn, 400, "CL+TE pipelined behind a valid request")

    # Encodings that must not turn into raw control bytes upstream.
    passing = []
    for name, target in PASSING_FORMS:
        mark = marker(name)
        marks.append((name, mark))
        target = target.replace("MARK", mark).replace("UPSTREAM", upstream_host)
        answer = http1.get(address, target)
        ctx.check(answer is not None, "%s: no answer" % name)
        passing.append("%s %s" % (name.split(" ")[0], answer.status if answer else "-"))
    ctx.note("passing forms answered: " + ", ".join(passing))

    time.sleep(0.5)
    entries = ctx.upstream.log()
    passing_names = {name for name, _ in PASSING_FORMS}
    for name, mark in marks:
        if name in passing_names:
            continue
        seen = [e for e in entries if mark.lower() in (e["target"] + json.dumps(e["headers"]) + e["body"]).lower()]
        ctx.check(not seen, "%s reached the upstream: %s" % (name, seen[0]["target"][:160] if seen else ""))
    for entry in entries:
        raw = entry["target"] + "".join(n + v for n, v in entry["headers"])
        ctx.check(not any(c in raw for c in "\r\n\x00"), "a raw CR, LF or NUL reached the upstream: %r" % raw[:200])
        names = [n.strip().lower() for n, _ in entry["headers"]]
        ctx.check("x-injected" not in names, "an injected header reached the upstream: %r" % entry["headers"])
    absolute = [e for e in entries if e["target"].startswith("http")]
    ctx.check(not absolute, "an absolute-form target reached the upstream as one: %r" % absolute[:1])


# --------------------------------------------------------------------------------------------
# Pipelining floods.

def pipeline_count(ctx):
    return 3000 if ctx.quick else 10000


def pipelining_options(suite):
    count = 3000 if suite.quick else 10000
    return http_options({"httpRequests": count + 1000, "httpKeepAlive": "5s", "httpHeaderTimeout": "3s"})


def pipelined(index, run):
    """The index-th request of a pipeline and what its answer must be: (bytes, status, body or None)."""
    kind = index % 4
    if kind == 0:
        target = "/up/echo?pipe=%s-%d" % (run, index)
        return http1.request_bytes(target), 200, target
    if kind == 1:
        return http1.request_bytes("/docs/hello.txt"), 200, HELLO
    if kind == 2:
        return http1.request_bytes("/docs/data.json"), 200, DATA
    return http1.request_bytes("/docs/missing-%d.txt" % index), 404, None


def check_pipeline(ctx, answers, count, run, what):
    """Every answer in order: bodies of files, the upstream's echo of its own target, 404s."""
    wrong = []
    for index in range(min(count, len(answers))):
        _, status, expected = pipelined(index, run)
        answer = answers[index]
        if answer.status != status:
            wrong.append((index, "status %d, expected %d" % (answer.status, status)))
        elif isinstance(expected, bytes) and answer.body != expected:
            wrong.append((index, "body %r" % answer.body[:60]))
        elif isinstance(expected, str):
            try:
                target = json.loads(answer.body)["target"]
            except (ValueError, KeyError):
                target = None
            if target != expected.replace("/up", "", 1):
                wrong.append((index, "the echo of %r, expected %r" % (target, expected)))
        if len(wrong) >= 3:
            break
    ctx.check(len(answers) == count, "%s: %d of %d pipelined requests answered" % (what, len(answers), count))
    ctx.check(not wrong, "%s: answers out of order or wrong: %s" % (what, wrong))


def send_in_background(conn, data, timeout=60):
    """Sends `data` on a duplicate of `conn`'s socket from a thread (so that its time limit
    is its own while the case reads on the original); returns the thread."""
    duplicate = conn.sock.dup()
    duplicate.settimeout(timeout)

    def send():
        try:
            duplicate.sendall(data)
        except OSError:
            pass
        finally:
            duplicate.close()

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def socket_buffer_bound():
    """The most the kernel may hold of a loopback stream nobody reads: the receiver's and
    the sender's buffer maxima (tcp_rmem, tcp_wmem)."""
    total = 0
    for name in ("tcp_rmem", "tcp_wmem"):
        try:
            with open("/proc/sys/net/ipv4/" + name) as f:
                total += int(f.read().split()[2])
        except (OSError, ValueError, IndexError):
            total += 8 << 20
    return total


def read_answers(conn, count, timeout):
    answers = []
    deadline = time.monotonic() + timeout
    while len(answers) < count and time.monotonic() < deadline:
        answer = conn.response(max(0.1, deadline - time.monotonic()))
        if answer is None:
            break
        answers.append(answer)
    return answers


@case("http-pipelining", "29", "limits httpRequests N+1000, httpKeepAlive 5s: N = 3,000 (full: 10,000) tiny requests "
      "pipelined in one write, unread for 2 s, are answered in order (files, 404s, the upstream's echo of each "
      "distinct target); 8 connections × 500 at once likewise; httpRequests+50 pipelined get exactly httpRequests "
      "answers, the last with Connection: close, then a close; a client writing requests for 4 s and reading none "
      "has < 2 MB + the kernel's socket buffers taken and its connection ends; one asking for 40 × 1.3 MB and reading "
      "nothing for 12 s is cut off (fewer than 40 answers, then the close); RSS growth < 60 MB",
      config=pipelining_options, budget=180, quick_budget=90)
def http_pipelining(ctx):
    address = door(ctx)
    count = pipeline_count(ctx)
    limit = count + 1000
    before = ctx.cluster.sampler.current()
    t0 = time.monotonic()

    # One connection, N requests in one write, nothing read for 2 s.
    run = marker("pipe")
    data = b"".join(pipelined(i, run)[0] for i in range(count))
    with http1.Conn(address, timeout=30) as conn:
        started = time.monotonic()
        sender = send_in_background(conn, data)
        time.sleep(2)
        answers = read_answers(conn, count, 60)
        took = time.monotonic() - started
        sender.join(5)
        check_pipeline(ctx, answers, count, run, "one connection")
        ctx.check(not any(a.closing for a in answers), "an answer within httpRequests said Connection: close")
        conn.send(http1.request_bytes("/docs/hello.txt", close=True))
        last = conn.response(10)
        ctx.check(last is not None and last.status == 200 and last.closing and conn.closed_within(3),
                  "Connection: close after the pipeline: %r, closed %s" % (last, conn.eof))
    ctx.note("%d pipelined requests (%d KB) answered in %.1f s (2 s unread)" % (count, len(data) // 1024, took))

    # Eight at once.
    results = {}

    def pipeline(slot):
        tag = marker("par%d" % slot)
        with http1.Conn(address, timeout=30) as conn:
            sender = send_in_background(conn, b"".join(pipelined(i, tag)[0] for i in range(500)))
            results[slot] = (tag, read_answers(conn, 500, 60))
            sender.join(5)

    threads = [threading.Thread(target=pipeline, args=(slot,)) for slot in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    ctx.check(len(results) == 8, "only %d of 8 parallel pipelines finished" % len(results))
    for slot, (tag, answers) in sorted(results.items()):
        check_pipeline(ctx, answers, 500, tag, "parallel pipeline %d" % slot)

    # Past httpRequests: exactly that many answers, the last one closing.
    with http1.Conn(address, timeout=30) as conn:
        request = http1.request_bytes("/docs/hello.txt")
        sender = send_in_background(conn, request * (limit + 50))
        answers = read_answers(conn, limit + 50, 90)
        closed = conn.closed_within(5)
        sender.join(5)
        ctx.check(len(answers) == limit, "%d pipelined requests with httpRequests %d: %d answered" % (
            limit + 50, limit, len(answers)))
        ctx.check(all(a.status == 200 and a.body == HELLO for a in answers), "a wrong answer within httpRequests")
        ctx.check(bool(answers) and answers[-1].closing and not any(a.closing for a in answers[:-1]),
                  "the answer number httpRequests (%d) is not the only one with Connection: close" % limit)
        ctx.check(closed, "the connection stayed open after its httpRequests-th answer")

    # A client that writes and never reads.
    with http1.Conn(address, timeout=30) as conn:
        conn.sock.setblocking(False)
        block = http1.request_bytes("/docs/hello.txt") * 1000
        taken = 0
        stop = time.monotonic() + 4
        while time.monotonic() < stop:
            try:
                taken += conn.sock.send(block)
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                break
        conn.sock.setblocking(True)
        # The coordinator reads one request ahead (httpBody 1MB: about 1.2 MB) while answers wait;
        # the rest is the kernel's socket buffers.
        bound = (2 << 20) + socket_buffer_bound()
        ctx.note("a writer that never reads: %.1f MB taken in 4 s (bound %.0f MB)" % (taken / 2**20, bound / 2**20))
        ctx.check(taken < bound, "a client that never reads had %.1f MB of requests taken in 4 s (bound %.0f MB: "
                  "2 MB of read-ahead + the kernel's socket buffers)" % (taken / 2**20, bound / 2**20))
        # Its connection ends: at the httpRequests-th answer (the writer sent far more), or once it
        # has taken none of its answers for httpKeepAlive (5 s); read nothing meanwhile.
        cut = None
        waited = time.monotonic()
        while time.monotonic() - waited < 12:
            try:
                conn.sock.send(b"")
                info = conn.sock.getsockopt(socket.SOL_TCP, socket.TCP_INFO, 8)
                if info[0] in (7, 8):  # TCP_CLOSE, TCP_CLOSE_WAIT: the coordinator closed its end
                    cut = time.monotonic() - waited
                    break
            except OSError:
                cut = time.monotonic() - waited
                break
            time.sleep(0.2)
        ctx.check(cut is not None, "the connection of a client writing requests and reading none of its answers "
                  "did not end within 12 s of its last write (httpRequests %d, httpKeepAlive 5s)" % limit)
        if cut is not None:
            ctx.note("a writer that never reads: its connection ended %.1f s after its last write" % cut)

    # A client asking for 40 large answers and taking none: cut off after httpKeepAlive.
    large = config.BUNDLE["docs/large.bin"]
    with http1.Conn(address, timeout=30) as conn:
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
        conn.send(http1.request_bytes("/docs/large.bin") * 40)
        time.sleep(12)
        answers = read_answers(conn, 40, 15)
        ended = conn.closed_within(5)
        complete = [a for a in answers if a.status == 200 and a.body == large]
        ctx.note("a client asking for 40 × 1.3 MB and reading nothing for 12 s then got %d whole answers and %s" % (
            len(complete), "the close" if ended else "no close"))
        ctx.check(len(answers) == len(complete), "a wrong answer to a client that did not read: %r" % (
            [a for a in answers if a not in complete][:1],))
        ctx.check(len(complete) < 40 and ended, "a client that took none of its answers for 12 s (httpKeepAlive 5s) "
                  "was not cut off: %d of 40 answers, %s" % (len(complete), "closed" if ended else "still open"))

    growth = rss_growth_mb(ctx, before, t0)
    ctx.note("RSS growth %.1f MB" % growth)
    ctx.check(growth < 60, "coordinator RSS grew %.0f MB under pipelining floods (bound 60 MB)" % growth)


# --------------------------------------------------------------------------------------------
# Idle keep-alive connections.

IDLE_KEEPALIVE_S = 15
IDLE_SPARE = 16


def idle_count(suite):
    return suite.idle_connections  # 2,000 with --quick, 10,000 in full


def idle_options(suite):
    return http_options({"httpConnections": idle_count(suite) + IDLE_SPARE, "httpKeepAlive": "%ds" % IDLE_KEEPALIVE_S})


@case("http-idle-connections", "29", "limits httpConnections N+16, httpKeepAlive 15s: N = 2,000 (full: 10,000) "
      "keep-alive connections, 95 % after one answered request, 5 % silent, all held open; of 40 more at most 15 "
      "are answered, the others closed at once with no byte; RSS growth < 12 KB per connection + 40 MB; every one "
      "closed with no byte 14.5-25 s after its last activity, none sooner; then a new connection is served",
      config=idle_options, budget=180, quick_budget=90)
def http_idle_connections(ctx):
    address = door(ctx)
    count = idle_count(ctx.suite)
    needed = count + 256
    if ctx.suite.nofile < needed:
        ctx.fail("RLIMIT_NOFILE %d is below the %d this case needs (the hard limit keeps the suite from raising it)" % (
            ctx.suite.nofile, needed))
    before = ctx.cluster.sampler.current()
    t0 = time.monotonic()
    crowd = Crowd(address)
    silent_count = count // 20
    request = http1.request_bytes("/docs/hello.txt")
    silent = crowd.open(silent_count)
    silent_at = time.monotonic()
    talking = crowd.open(count - silent_count, request=request, batch=200, answer_timeout=20)
    opened = time.monotonic() - t0
    ctx.check(crowd.refused_at_connect == 0, "%d connections refused at connect" % crowd.refused_at_connect)
    crowd.run(2, until=lambda: all(crowd.answers[s] or s in crowd.ended for s in talking))
    bad = [crowd.answers[s] for s in talking if len(crowd.answers[s]) != 1 or crowd.answers[s][0].status != 200
           or crowd.answers[s][0].body != HELLO or crowd.answers[s][0].closing]
    ctx.check(not bad, "%d of %d keep-alive requests not answered 200 with the file, kept open: %r" % (
        len(bad), len(talking), bad[:1]))
    early = [s for s in crowd.socks if s in crowd.ended]
    ctx.check(not early, "%d connections closed while the others were still being opened (%.0f s)" % (len(early), opened))
    held_rss = ctx.cluster.sampler.current()
    growth = mb(held_rss - before)
    bound = 12 * count / 1024 + 40
    ctx.note("%d connections opened in %.1f s; RSS %.0f MB (+%.0f MB, %.1f KB each; bound %.0f MB)" % (
        count, opened, mb(held_rss), growth, growth * 1024 / count, bound))
    ctx.check(growth < bound, "coordinator RSS grew %.0f MB holding %d idle connections (bound %.0f MB)" % (
        growth, count, bound))

    # Past httpConnections: closed at once, nothing written.
    extra = Crowd(address)
    more = extra.open(40, request=request, batch=40, answer_timeout=5)
    extra.run(3, until=lambda: all(extra.answers[s] or s in extra.ended for s in more))
    served = [s for s in more if extra.answers[s]]
    refused = [s for s in more if not extra.answers[s] and s in extra.ended and s not in extra.first_byte]
    ctx.note("of 40 connections past the idle ones: %d served, %d refused (%d by reset), %d refused at connect" % (
        len(served), len(refused), len(extra.reset & set(refused)), extra.refused_at_connect))
    ctx.check(len(served) <= IDLE_SPARE - 1, "%d of 40 connections past %d idle ones were served (httpConnections %d, "
              "the sentinel holds one)" % (len(served), count, count + IDLE_SPARE))
    ctx.check(len(served) + len(refused) + extra.refused_at_connect == 40,
              "%d of 40 connections past the limit neither served nor closed at once without a byte" % (
                  40 - len(served) - len(refused) - extra.refused_at_connect))
    extra.close()

    # Held until httpKeepAlive, then closed without a byte.
    last_activity = {s: silent_at for s in silent}
    for sock in talking:
        if crowd.answers[sock]:
            last_activity[sock] = crowd.answers[sock][0].at
    crowd.run(IDLE_KEEPALIVE_S + 12, until=lambda: crowd.open_count() == 0)
    still_open = crowd.open_count()
    too_soon = [crowd.ended[s] - at for s, at in last_activity.items() if s in crowd.ended
                and crowd.ended[s] - at < IDLE_KEEPALIVE_S - 0.5]
    too_late = [crowd.ended[s] - at for s, at in last_activity.items() if s in crowd.ended
                and crowd.ended[s] - at > IDLE_KEEPALIVE_S + 10]
    with_bytes = [s for s in crowd.socks if len(crowd.answers[s]) > (1 if s in talking else 0)
                  or (s in silent and s in crowd.first_byte)]
    ctx.check(still_open == 0, "%d of %d idle connections still open %d s after their last activity (httpKeepAlive "
              "%ds)" % (still_open, count, IDLE_KEEPALIVE_S + 12, IDLE_KEEPALIVE_S))
    ctx.check(not too_soon, "%d idle connections closed before httpKeepAlive (%ds): after %s" % (
        len(too_soon), IDLE_KEEPALIVE_S, ["%.1f s" % t for t in sorted(too_soon)[:3]]))
    ctx.check(not too_late, "%d idle connections closed more than 10 s after httpKeepAlive: %s" % (
        len(too_late), ["%.1f s" % t for t in sorted(too_late)[-3:]]))
    ctx.check(not with_bytes, "%d idle connections got bytes when closed (a close for idleness sends nothing)" % len(
        with_bytes))
    closes = sorted(crowd.ended[s] - at for s, at in last_activity.items() if s in crowd.ended)
    if closes:
        ctx.note("closed %.1f-%.1f s after their last activity" % (closes[0], closes[-1]))
    crowd.close()
    answer = http1.get(address, "/docs/hello.txt")
    ctx.check(answer is not None and answer.status == 200 and answer.body == HELLO,
              "a new connection after the idle ones closed got %r" % answer)
