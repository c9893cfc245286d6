"""Cases on what requests and answers carry: coalescing and caching of private answers,
deadlines of joiners, upstream templates, oversized answers, failure codes, cache keys, the
bundle's boundaries, file modes and header bytes."""
import itertools
import json
import os
import stat
import subprocess
import threading
import time

import config
import wire
from harness import case, expect_failure

UNIQUE = itertools.count(1)


def q(**items):
    return [{"name": name, "value": str(value)} for name, value in items.items()]


def text_of(reply):
    """Everything a client could read in a reply: body and headers, as text."""
    if reply.get("type") != "response":
        return json.dumps(reply)
    return wire.body_of(reply).decode("latin-1") + json.dumps(reply.get("headers") or {})


def pair(ctx, path, first, second, gap=0.15, timeout=20):
    """Sends `first` then, `gap` seconds later, `second` (dicts of request fields) on two
    connections; returns both replies."""
    a, b = ctx.connect(), ctx.connect()
    try:
        ida = a.request(path, **first)
        time.sleep(gap)
        idb = b.request(path, **second)
        return a.answer(ida, timeout), b.answer(idb, timeout)
    finally:
        a.close()
        b.close()


@case("coalesce-private", "1", "a keyless client joining (or following) a trip of a client with X-Api-Key never "
      "sees the key (Set-Cookie answer, private answer, public max-age answer); with Vary: Accept a JSON client "
      "gets JSON; a no-store answer is not shared (each joiner its own trip)", budget=90)
def coalesce_private(ctx):
    secret = "alice-secret"
    key = {"x-api-key": secret}
    cases = [
        ("Set-Cookie answer", dict(ms=800, cookie=1)),
        ("Cache-Control: private answer", dict(ms=800, cc="private, max-age=60")),
        ("public max-age answer", dict(ms=800, cc="max-age=60")),
    ]
    for what, params in cases:
        query = q(u=next(UNIQUE), **params)
        alice, joiner = pair(ctx, "up/personal", {"query": query, "headers": key}, {"query": query})
        ctx.check(alice.get("type") == "response" and wire.body_of(alice) == ("you are %s" % secret).encode(),
                  "%s: the client with the key got %s" % (what, wire.describe(alice)))
        ctx.check(secret not in text_of(joiner), "%s: a keyless client joining the trip saw the key: %s" % (
            what, text_of(joiner)[:160]))
        with ctx.connect() as later:
            after = later.get("up/personal", query=query)
        ctx.check(secret not in text_of(after), "%s: a keyless client afterwards saw the key: %s" % (
            what, text_of(after)[:160]))
    # Stored without overlap: the keyed request alone first.
    query = q(u=next(UNIQUE), cc="max-age=60")
    with ctx.connect() as conn:
        first = conn.get("up/personal", query=query, headers=key)
        second = conn.get("up/personal", query=query)
    ctx.check(secret in text_of(first), "keyed request alone: %s" % wire.describe(first))
    ctx.check(secret not in text_of(second), "a keyless request after a keyed one was answered from its cache "
              "entry: %s" % text_of(second)[:160])
    # Vary: Accept.
    query = q(u=next(UNIQUE), ms=800, by="accept", vary="Accept")
    xml, js = pair(ctx, "up/personal", {"query": query, "headers": {"accept": "application/xml"}},
                   {"query": query, "headers": {"accept": "application/json"}})
    ctx.check(wire.body_of(xml).startswith(b"<you>"), "Vary: the XML client got %s" % wire.body_of(xml)[:60])
    ctx.check(wire.body_of(js).startswith(b"{"), "Vary: a JSON client joining an XML client's trip got %r" % (
        wire.body_of(js)[:60],))
    with ctx.connect() as later:
        after = later.get("up/personal", query=query, headers={"accept": "application/json"})
    ctx.check(wire.body_of(after).startswith(b"{"), "Vary: a JSON client afterwards got %r" % (wire.body_of(after)[:60],))
    # no-store: each joiner makes its own trip.
    ctx.upstream.mark()
    query = q(u=next(UNIQUE), ms=800, cc="no-store")
    one, two = pair(ctx, "up/echo", {"query": query}, {"query": query})
    hits = [e for e in ctx.upstream.log() if e["target"].startswith("/echo")]
    ctx.check(one.get("type") == "response" and two.get("type") == "response",
              "no-store: %s / %s" % (wire.describe(one), wire.describe(two)))
    ctx.check(len(hits) == 2, "no-store: two overlapping identical requests made %d upstream trip(s), expected 2" % len(hits))


@case("deadline-joiner", "4", "identical slow GETs on two connections, deadlines 400 ms and 8 s, in both orders, "
      "and with the first one cancelled: the short one fails `deadlineExceeded` (or `cancelled`), the long "
      "one gets the upstream's answer (the short one may also end with the network worker's `timeout`)", budget=90)
def deadline_joiner(ctx):
    for order in ("short-first", "long-first", "cancel-first"):
        query = q(ms=1500, n=next(UNIQUE))
        a, b = ctx.connect(), ctx.connect()
        try:
            if order == "long-first":
                long_id = b.request("up/slow", query=query, deadlineMs=8000)
                time.sleep(0.15)
                short_id = a.request("up/slow", query=query, deadlineMs=400)
            else:
                short_id = a.request("up/slow", query=query, deadlineMs=400 if order == "short-first" else 8000)
                time.sleep(0.15)
                long_id = b.request("up/slow", query=query, deadlineMs=8000)
                if order == "cancel-first":
                    time.sleep(0.15)
                    a.send({"type": "cancel", "id": short_id})
            short = a.answer(short_id, 15)
            long = b.answer(long_id, 15)
        finally:
            a.close()
            b.close()
        # The network worker keeps a margin inside the deadline: its `timeout` may come first.
        problem = expect_failure(short, ["deadlineExceeded", "cancelled", "timeout"], "%s: the short request" % order)
        ctx.check(problem is None, problem)
        ctx.check(long.get("type") == "response" and wire.body_of(long) == b"finally",
                  "%s: the request with 8 s left got %s" % (order, wire.describe(long)))


def escape_config(suite):
    return {"routes": [
        {"match": "u/:name", "domain": "api", "upstream": "http://UPSTREAM/data/users/:name", "policy": "noCache"},
        {"match": "f/...", "domain": "api", "upstream": "http://UPSTREAM/data/files/...", "policy": "noCache"},
    ]}


@case("param-escape", "10", "route parameters and remainders that would carry `/`, `\\`, `.` or `..` upstream "
      "(u/..%2F..%2F.env, u/a%2Fb, u/a%5Cb, u/%2E, f/a/..%2F.env, ...) are refused and never reach the upstream; "
      "u/alice does", config=escape_config, budget=60)
def param_escape(ctx):
    bad = ["u/..%2F..%2F.env", "u/a%2Fb", "u/a%5Cb", "u/..%5C..%5C.env", "u/%2E", "u/%2E%2E", "u/%2e%2e%2fx",
           "f/a/..%2F..%2F.env", "f/a%2Fb/c", "f/x/..%5Cy", "f/%2E%2E/%2E%2E/.env"]
    ctx.upstream.mark()
    with ctx.connect() as conn:
        for path in bad:
            reply = conn.get(path)
            ctx.check(reply.get("type") == "failure", "%s was answered %s" % (path, wire.describe(reply)))
        conn.get("u/alice")  # the control: its answer (a 404, a miss) does not matter, its trip does
    targets = [e["target"] for e in ctx.upstream.log()]
    ctx.check("/data/users/alice" in targets, "the control request u/alice did not reach the upstream (%s)" % targets[:5])
    leaked = [t for t in targets if t != "/data/users/alice"]
    ctx.check(not leaked, "the upstream received %s" % leaked)


@case("response-too-large", "11", "limits maxFrame 1MB: a 2 MB upstream body and a 1.5 MB bundle file each get a "
      "failure carrying `responseTooLarge` within 5 s; an id whose request hit its deadline, or was cancelled, "
      "can be used again at once", config={"limits": {"maxFrame": "1MB"}}, budget=60)
def response_too_large(ctx):
    conn = ctx.connect()
    # Ids the coordinator gave up on (deadline) or cancelled are free again at once, while the
    # worker may still have them.
    reply = conn.get("up/hang", id=4242, deadlineMs=300, policy="noCache", timeout=10)
    ctx.check(expect_failure(reply, ["deadlineExceeded", "timeout"], "") is None,
              "up/hang with 300 ms: %s" % wire.describe(reply))
    try:
        again = conn.get("docs/hello.txt", id=4242, timeout=5)
        ctx.check(again.get("type") == "response", "id 4242 again after its deadline: %s" % wire.describe(again))
    except wire.WireError as error:
        ctx.check(False, "id 4242 reused after its deadline passed: %s" % error)
        conn.close()
        conn = ctx.connect()
    conn.request("up/hang", id=4343, deadlineMs=20000, policy="noCache")
    time.sleep(0.3)
    conn.send({"type": "cancel", "id": 4343})
    reply = conn.answer(4343, 10)
    ctx.check(expect_failure(reply, ["cancelled"], "") is None, "a cancelled request: %s" % wire.describe(reply))
    try:
        again = conn.get("docs/hello.txt", id=4343, timeout=5)
        ctx.check(again.get("type") == "response", "id 4343 again after its cancel: %s" % wire.describe(again))
    except wire.WireError as error:
        ctx.check(False, "id 4343 reused after its cancel was answered: %s" % error)
        conn.close()
        conn = ctx.connect()
    # Answers over the frame limit.
    for what, path, fields in (("a 2 MB upstream body", "up/big", {"query": q(bytes=2_000_000), "policy": "noCache"}),
                               ("a 1.5 MB bundle file", "docs/over-frame.bin", {})):
        started = time.monotonic()
        try:
            reply = conn.get(path, timeout=15, deadlineMs=10000, **fields)
        except wire.TimedOut:
            ctx.check(False, "%s: no answer within 15 s" % what)
            continue
        took = time.monotonic() - started
        problem = expect_failure(reply, ["responseTooLarge"], what)
        ctx.check(problem is None, problem)
        ctx.check(took < 5, "%s: answered after %.1f s (bound 5 s)" % (what, took))
    conn.close()


class FakeWorker(threading.Thread):
    """A worker of our own. A request for `.../hold` is answered with a response after
    `hold` seconds (counting how many it holds at once); any other is answered at once with
    the failure (or miss) its last path component names."""

    def __init__(self, address, kind, name, token=None, capacity=16, hold=0.3):
        super().__init__(daemon=True)
        self.conn = wire.Conn(address)
        self.conn.hello(role="worker", kind=kind, name=name, capacity=capacity, pid=os.getpid(), token=token)
        self.halt = False
        self.hold = hold
        self.lock = threading.Lock()
        self.holding = 0
        self.most_held = 0
        self.received = 0

    def run(self):
        try:
            self.serve()
        except (wire.WireError, OSError):
            pass

    def send(self, message):
        with self.lock:
            self.conn.send(message)

    def release(self, id):
        with self.lock:
            self.holding -= 1
        try:
            self.send({"type": "response", "id": id, "status": 200, "body": wire.b64(b"held")})
        except (wire.WireError, OSError):
            pass

    def serve(self):
        while not self.halt:
            try:
                message = self.conn.recv(0.5)
            except wire.TimedOut:
                continue
            kind = message.get("type")
            if kind == "ping":
                self.send({"type": "pong", "id": message.get("id")})
            elif kind == "request":
                code = message["path"].split("/")[-1]
                with self.lock:
                    self.received += 1
                if code == "hold":
                    with self.lock:
                        self.holding += 1
                        self.most_held = max(self.most_held, self.holding)
                    threading.Timer(self.hold, self.release, args=(message["id"],)).start()
                elif code == "miss":
                    self.send({"type": "miss", "id": message["id"], "reason": "fake miss"})
                else:
                    self.send({"type": "failure", "id": message["id"],
                               "error": {"code": code, "message": "the fake worker says %s" % code}})

    def stop(self):
        self.halt = True
        self.conn.close()


def codes_config(suite):
    return {"network": 0, "domains": {"odd": ["network"]}, "routes": [{"match": "odd/...", "domain": "odd"}],
            "sentinel": ("bundle",)}


@case("error-codes", "13", "a worker's failure codes (unknown `teapotExploded`, `overloaded`, `responseTooLarge`) "
      "reach the client in the attempts, on the wire and through `monarch get --json`; the coordinator's own "
      "`requestTooLarge` (a 16 KB path, default pathBytes) stays `requestTooLarge` in both", config=codes_config,
      budget=60)
def error_codes(ctx):
    worker = FakeWorker(ctx.cluster.worker_address, "network", "fake-network", ctx.token)
    worker.start()
    try:
        monarch = os.path.join(ctx.cluster.bin_dir, "monarch")
        for code in ("teapotExploded", "overloaded", "responseTooLarge"):
            with ctx.connect() as conn:
                reply = conn.get("odd/" + code)
            attempts = (reply.get("error") or {}).get("attempts") or []
            ctx.check(any(a.get("code") == code and a.get("message") == "the fake worker says %s" % code
                          for a in attempts), "wire: a worker's %s came back as %s" % (code, wire.describe(reply)))
            out = subprocess.run([monarch, "get", "odd/" + code, "--json", "--address", ctx.cluster.client_address],
                                 capture_output=True, text=True, timeout=30,
                                 env=dict(os.environ, **({"MONARCH_TOKEN": ctx.token} if ctx.token else {})))
            try:
                error = json.loads(out.stdout)["error"]
            except (ValueError, KeyError):
                ctx.check(False, "monarch get --json printed %r" % out.stdout[:200])
                continue
            ctx.check(any(a.get("code") == code for a in error.get("attempts") or []),
                      "monarch get: a worker's %s came back as %s" % (code, json.dumps(error)[:200]))
        path = "docs/" + "z" * 16384
        with ctx.connect() as conn:
            reply = conn.get(path)
        ctx.check((reply.get("error") or {}).get("code") == "requestTooLarge",
                  "wire: a 16 KB path got %s" % wire.describe(reply))
        out = subprocess.run([monarch, "get", path, "--json", "--address", ctx.cluster.client_address],
                             capture_output=True, text=True, timeout=30)
        try:
            code = json.loads(out.stdout)["error"]["code"]
        except (ValueError, KeyError):
            code = out.stdout[:120]
        ctx.check(code == "requestTooLarge", "monarch get: a 16 KB path got %s" % code)
    finally:
        worker.stop()


@case("worker-capacity", "5", "a worker that announces capacity 4 never holds more than 4 requests at once "
      "although 40 arrive together; each of the 40 gets its response (or `overloaded`)", config=codes_config, budget=60)
def worker_capacity(ctx):
    worker = FakeWorker(ctx.cluster.worker_address, "network", "fake-network", ctx.token, capacity=4, hold=0.3)
    worker.start()
    try:
        with ctx.connect() as conn:
            ids = [conn.request("odd/%d/hold" % index, deadlineMs=20000) for index in range(40)]
            replies = conn.answers(ids, 30)
        wrong = [wire.describe(r) for r in replies.values()
                 if not (r.get("type") == "response" and wire.body_of(r) == b"held")
                 and expect_failure(r, ["overloaded"], "") is not None]
        ctx.check(not wrong, "%d of 40 answers wrong: %s" % (len(wrong), wrong[:3]))
        ctx.check(worker.most_held <= 4, "the worker announced capacity 4 and was sent %d requests at once" % (
            worker.most_held))
        ctx.extra["mostHeld"] = worker.most_held
    finally:
        worker.stop()


@case("query-order", "15", "up/echo?tag=b&tag=a then up/echo?tag=a&tag=b (cacheable): the second answer "
      "shows the second order; two overlapping GETs with different bodies each get their own answer, and "
      "a GET with a body is not stored", budget=60)
def query_order(ctx):
    n = next(UNIQUE)
    with ctx.connect() as conn:
        first = conn.get("up/echo?n=%d&tag=b&tag=a" % n)
        second = conn.get("up/echo?n=%d&tag=a&tag=b" % n)
    got = [json.loads(wire.body_of(r))["target"] if r.get("type") == "response" else wire.describe(r)
           for r in (first, second)]
    ctx.check(got[0].endswith("tag=b&tag=a"), "the first request reached the upstream as %s" % got[0])
    ctx.check(got[1].endswith("tag=a&tag=b"), "tag=a&tag=b was answered with the upstream's answer to %s" % got[1])
    path = "up/echo"
    query = q(ms=600, n=next(UNIQUE))
    a, b = pair(ctx, path, {"query": query, "body": wire.b64(b"alpha")}, {"query": query, "body": wire.b64(b"beta")})
    bodies = [json.loads(wire.body_of(r))["body"] if r.get("type") == "response" else None for r in (a, b)]
    ctx.check(bodies[1] != "alpha", "a GET with body beta got the answer to body alpha")
    with ctx.connect() as conn:
        plain = conn.get(path, query=query)
    plain_body = json.loads(wire.body_of(plain))["body"] if plain.get("type") == "response" else None
    ctx.check(plain_body not in ("alpha", "beta"), "a GET without a body was answered from a GET with body %r" % plain_body)
    ctx.note("upstream saw GET bodies %s" % bodies)


def bundle_escape_config(suite):
    return {"routes": [{"match": "...", "domain": "static"}]}


def normalized(reply, name):
    """A reply without its id and with the requested name taken out, to compare the outcomes of two paths."""
    return json.dumps({k: v for k, v in reply.items() if k != "id"}, sort_keys=True).replace(name, "NAME")


@case("bundle-escape", "16", "through planted symlinks, an existing file outside the bundle and a missing one "
      "give the same answer; dotfiles (.env, docs/.secret, .git/config) are not served; a symlink swapped "
      "in and out under load never serves the outside file; a link inside the bundle still works",
      config=bundle_escape_config, budget=90)
def bundle_escape(ctx):
    outside = os.path.join(ctx.cluster.folder, "outside")
    os.makedirs(outside, exist_ok=True)
    with open(os.path.join(outside, "secret.txt"), "w") as f:
        f.write("TOP SECRET outside the bundle\n")
    docs = os.path.join(ctx.bundle, "docs")
    os.symlink(outside, os.path.join(docs, "out"))
    os.symlink(os.path.join(outside, "secret.txt"), os.path.join(docs, "outfile"))
    os.symlink(os.path.join(outside, "nothing.txt"), os.path.join(docs, "outmissing"))
    os.symlink("public/readme.txt", os.path.join(docs, "inlink"))
    with ctx.connect() as conn:
        exists = conn.get("docs/out/secret.txt")
        missing = conn.get("docs/out/nothing.txt")
        ctx.check(normalized(exists, "secret.txt") == normalized(missing, "nothing.txt"),
                  "through a directory link: an outside file gives %s, a missing one %s" % (
                      wire.describe(exists), wire.describe(missing)))
        link = conn.get("docs/outfile")
        dangling = conn.get("docs/outmissing")
        ctx.check(normalized(link, "outfile") == normalized(dangling, "outmissing"),
                  "a link to an outside file gives %s, a dangling one %s" % (wire.describe(link), wire.describe(dangling)))
        for reply in (exists, link):
            ctx.check(b"TOP SECRET" not in text_of(reply).encode("latin-1"), "an outside file was served")
        for path in (".env", "docs/.secret", ".git/config"):
            reply = conn.get(path)
            ctx.check(reply.get("type") == "failure" and "SECRET" not in text_of(reply),
                      "%s was answered %s" % (path, wire.describe(reply)))
        inside = conn.get("docs/inlink")
        ctx.check(wire.body_of(inside) == config.BUNDLE["docs/public/readme.txt"],
                  "a link inside the bundle: %s" % wire.describe(inside))
    # The race: docs/race.txt flips between a file inside and a link to the outside file.
    race = os.path.join(docs, "race.txt")
    with open(race, "w") as f:
        f.write("inside\n")
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            tmp_link = race + ".l"
            tmp_file = race + ".f"
            try:
                os.symlink(os.path.join(outside, "secret.txt"), tmp_link)
                os.replace(tmp_link, race)
                with open(tmp_file, "w") as f:
                    f.write("inside\n")
                os.replace(tmp_file, race)
            except OSError:
                pass

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    leaked = served = 0
    total = 400 if ctx.quick else 2000
    try:
        with ctx.connect() as conn:
            for start in range(0, total, 50):
                ids = [conn.request("docs/race.txt") for _ in range(50)]
                for reply in conn.answers(ids, 30).values():
                    if reply.get("type") == "response":
                        served += 1
                        leaked += b"TOP SECRET" in wire.body_of(reply)
    finally:
        stop.set()
        flipper.join(5)
    ctx.note("race: %d requests, %d served, %d leaked" % (total, served, leaked))
    ctx.check(leaked == 0, "%d of %d requests during the symlink race served the outside file" % (leaked, total))


@case("cache-db-perms", "17", "under umask 022, the folders the cache worker makes for its database are 0700 and "
      "cache.db, -wal and -shm are 0600 (no group or other bits)",
      config={"cache_store": "sqlite:FOLDER/cachedir/sub/cache.db"}, budget=60)
def cache_db_perms(ctx):
    with ctx.connect() as conn:
        reply = conn.get("api/json")
        ctx.check(reply.get("type") == "response", "api/json: %s" % wire.describe(reply))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not conn.status().get("writeBacks"):
            time.sleep(0.1)
    base = os.path.join(ctx.cluster.folder, "cachedir")
    paths = [base, os.path.join(base, "sub")] + [os.path.join(base, "sub", "cache.db" + suffix)
                                                 for suffix in ("", "-wal", "-shm")]
    for path in paths:
        if not os.path.exists(path):
            if not path.endswith(("-wal", "-shm")):
                ctx.check(False, "%s does not exist" % path)
            continue
        mode = stat.S_IMODE(os.stat(path).st_mode)
        ctx.check(mode & 0o077 == 0, "%s has mode %04o (expected %s)" % (
            os.path.relpath(path, ctx.cluster.folder), mode, "0700" if os.path.isdir(path) else "0600"))


@case("header-control", "18", "request header values with control bytes (0x01, ESC, DEL, VT, FF, CR/LF) never "
      "reach the upstream (the request fails or the header is dropped); a value with a tab does", budget=60)
def header_control(ctx):
    values = {"x-soh": "a\x01b", "x-esc": "\x1b[31mred", "x-del": "a\x7fb", "x-vt": "a\x0bb", "x-ff": "a\x0cb",
              "x-nul": "a\x00b", "x-crlf": "a\r\nx-injected: 1"}
    ctx.upstream.mark()
    with ctx.connect() as conn:
        for name, value in values.items():
            reply = conn.get("up/echo", query=q(n=next(UNIQUE), cc="no-store"), headers={name: value}, policy="noCache")
            if reply.get("type") == "response":
                ctx.check(value not in text_of(reply), "%s: the upstream echoed the value" % name)
        tab = conn.get("up/echo", query=q(n=next(UNIQUE), cc="no-store"), headers={"x-tab": "a\tb"}, policy="noCache")
    bad = []
    for entry in ctx.upstream.log():
        for name, value in entry["headers"]:
            if any(ord(ch) < 32 and ch != "\t" or ord(ch) == 127 for ch in value) or name.lower() == "x-injected":
                bad.append("%s: %r" % (name, value))
    ctx.check(not bad, "the upstream received %s" % bad)
    ctx.check(tab.get("type") == "response" and "x-tab" in text_of(tab).lower(),
              "a header with a tab did not reach the upstream: %s" % wire.describe(tab))
