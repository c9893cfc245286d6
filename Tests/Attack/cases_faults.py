"""Fault cases: workers SIGKILLed under load, upstreams that hang, reset or send garbage, and a
worker SIGSTOPped under load. Every request sent must get exactly one answer, and every
success must carry the content the bundle or the origin serves."""
import collections
import os
import random
import signal
import threading
import time

import config
import wire
from harness import case


def q(**items):
    return [{"name": name, "value": str(value)} for name, value in items.items()]


def load_kinds(origin_json):
    """(name, path, fields, expected body) of the requests the load mixes."""
    return [
        ("bundle-hello", "docs/hello.txt", {}, config.BUNDLE["docs/hello.txt"]),
        ("bundle-data", "docs/data.json", {}, config.BUNDLE["docs/data.json"]),
        ("network-json", "api/json", {"policy": "noCache"}, origin_json),
        ("cache-json", "api/json", {}, origin_json),
        ("network-big", "api/big", {"query": q(bytes=20000), "policy": "noCache"}, b"x" * 20000),
    ]


class Load:
    """`clients` connections, each keeping `window` requests in flight until stopped; checks
    every answer against the expected content and counts sent, answered and failure codes."""

    def __init__(self, ctx, clients=4, window=8, deadline_ms=10000):
        self.ctx = ctx
        self.kinds = load_kinds(ctx.origin.fetch("/json"))
        self.window = window
        self.deadline_ms = deadline_ms
        self.lock = threading.Lock()
        self.sent = 0
        self.answered = 0
        self.ok = 0
        self.wrong = []
        self.duplicates = 0
        self.broken = []
        self.codes = collections.Counter()
        self.unanswered = 0
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(index,), daemon=True) for index in range(clients)]

    def start(self):
        for thread in self.threads:
            thread.start()

    def run(self, index):
        rng = random.Random(index)
        try:
            conn = self.ctx.connect()
        except wire.WireError as error:
            with self.lock:
                self.broken.append("connect: %s" % error)
            return
        outstanding = {}
        done = set()
        try:
            while True:
                if not self.stopping.is_set():
                    while len(outstanding) < self.window:
                        kind = rng.choice(self.kinds)
                        id = conn.request(kind[1], deadlineMs=self.deadline_ms, **kind[2])
                        outstanding[id] = kind
                        with self.lock:
                            self.sent += 1
                elif not outstanding:
                    break
                elif time.monotonic() > self.drain_deadline:
                    with self.lock:
                        self.unanswered += len(outstanding)
                    break
                try:
                    message = conn.recv(0.2)
                except wire.TimedOut:
                    continue
                id = message.get("id")
                if message.get("type") not in ("response", "failure"):
                    continue
                if id in done:
                    with self.lock:
                        self.duplicates += 1
                    continue
                kind = outstanding.pop(id, None)
                if kind is None:
                    continue
                done.add(id)
                with self.lock:
                    self.answered += 1
                    if message["type"] == "response":
                        if message.get("status") == 200 and wire.body_of(message) == kind[3]:
                            self.ok += 1
                        else:
                            self.wrong.append("%s: %s" % (kind[0], wire.describe(message)))
                    else:
                        error = message.get("error") or {}
                        attempts = ",".join(sorted({a.get("code") or a.get("outcome") for a in error.get("attempts") or []}))
                        self.codes["%s[%s]" % (error.get("code"), attempts)] += 1
        except wire.WireError as error:
            with self.lock:
                self.broken.append("%s: %s" % (type(error).__name__, error))
                self.unanswered += len(outstanding)
        finally:
            conn.close()

    def stop(self, drain_seconds):
        self.drain_deadline = time.monotonic() + drain_seconds
        self.stopping.set()
        for thread in self.threads:
            thread.join(drain_seconds + 5)

    def report(self, ctx, what):
        ctx.sent, ctx.answered = self.sent, self.answered
        ctx.extra["ok"] = self.ok
        ctx.extra["failures"] = dict(self.codes)
        ctx.note("%s: sent %d, answered %d (%d correct responses, %d failures: %s)" % (
            what, self.sent, self.answered, self.ok, sum(self.codes.values()),
            ", ".join("%s x%d" % kv for kv in self.codes.most_common(6)) or "none"))
        ctx.check(self.sent == self.answered, "%d requests sent, %d answered (%d left unanswered)" % (
            self.sent, self.answered, self.sent - self.answered))
        ctx.check(not self.wrong, "%d responses with wrong content: %s" % (len(self.wrong), self.wrong[:3]))
        ctx.check(not self.duplicates, "%d requests were answered twice" % self.duplicates)
        ctx.check(not self.broken, "client connections broke: %s" % self.broken[:2])


def wait_for_workers(ctx, counts, seconds):
    """Waits until the status report shows `counts` ({kind: n}) registered workers; returns the last counts."""
    deadline = time.monotonic() + seconds
    seen = {}
    while time.monotonic() < deadline:
        try:
            workers = wire.serving_workers(ctx.cluster.status(ctx.token))
        except wire.WireError:
            workers = []
        seen = collections.Counter(w.get("kind") for w in workers)
        if all(seen.get(kind, 0) >= n for kind, n in counts.items()):
            return dict(seen)
        time.sleep(0.5)
    return dict(seen)


def final_round(ctx):
    """Every kind of request answered correctly once everything is back."""
    with ctx.connect() as conn:
        for name, path, fields, body in load_kinds(ctx.origin.fetch("/json")):
            for _ in range(4):
                reply = conn.get(path, timeout=15, **fields)
                ok = reply.get("type") == "response" and wire.body_of(reply) == body
                ctx.check(ok, "after the faults, %s: %s" % (name, wire.describe(reply)))
                if not ok:
                    return


POOLS = {"bundle": 2, "cache": 2, "network": 2}
# A kill a second is a crash loop by design: past limits.restarts (default 10 a minute per pool)
# the supervisor fails a pool until an operator scales it again. This case is about answers
# under kills and the recovery after them, so it allows many restarts.
KILL_CONFIG = dict(POOLS, limits={"restarts": 1000, "restartWindow": "60s"})


@case("kill-workers", "F", "SIGKILL of a random worker every second for 60 s (quick: 10 s) under load from 4 "
      "clients (2 workers per pool): sent = answered, no answer twice, every response has the right content "
      "(failures such as `unavailable` are answers too); every worker is registered again afterwards and answers "
      "correctly (limits restarts 1000 in 60s: the default fails a pool restarted 10 times a minute)",
      config=KILL_CONFIG, fault=True,
      budget=240, quick_budget=120)
def kill_workers(ctx):
    load = Load(ctx)
    rng = random.Random(7)
    load.start()
    kills = collections.Counter()
    started = time.monotonic()
    while time.monotonic() - started < ctx.suite.kill_seconds:
        time.sleep(1)
        kinds = ctx.cluster.workers_by_kind()
        pids = [(kind, pid) for kind, list_ in kinds.items() for pid in list_]
        if pids:
            kind, pid = rng.choice(pids)
            try:
                os.kill(pid, signal.SIGKILL)
                kills[kind] += 1
            except ProcessLookupError:
                pass
    load.stop(drain_seconds=20)
    ctx.note("killed %s" % dict(kills))
    ctx.check(sum(kills.values()) >= ctx.suite.kill_seconds // 2, "only %d workers killed in %d s" % (
        sum(kills.values()), ctx.suite.kill_seconds))
    load.report(ctx, "%d s of kills" % ctx.suite.kill_seconds)
    # With a kill every second the supervisor's back-off (1 s doubling to 30 s) leaves pools
    # empty much of the time: failures (`unavailable`) are answers too; only none at all is wrong.
    ctx.check(load.ok > 0, "not one correct response in %d answers" % load.answered)
    ctx.extra["okRatio"] = round(load.ok / max(1, load.answered), 3)
    seen = wait_for_workers(ctx, POOLS, 45)
    ctx.check(all(seen.get(k, 0) >= n for k, n in POOLS.items()), "workers registered after the kills: %s (want %s)" % (
        seen, POOLS))
    final_round(ctx)


@case("upstream-faults", "F", "upstreams that hang, reset, send garbage, stop mid-body or drip slower than the "
      "deadline: every request gets a failure within its 3 s deadline + 2 s, none a response; 200 hanging "
      "requests do not slow the origin's requests (< 1 s each)", budget=120)
def upstream_faults(ctx):
    per = 20 if ctx.quick else 100
    sent = answered = 0
    codes = collections.Counter()
    with ctx.connect(timeout=30) as conn:
        for what, path, query in (("hang", "up/hang", q()), ("reset", "up/reset", q()), ("garbage", "up/garbage", q()),
                                  ("half", "up/half", q()), ("drip", "up/drip", q(ms=100))):
            started = time.monotonic()
            ids = [conn.request(path, query=query + q(n=i), deadlineMs=3000, policy="noCache") for i in range(per)]
            sent += len(ids)
            try:
                replies = conn.answers(ids, timeout=8)
            except wire.TimedOut as error:
                ctx.check(False, "%s: %s" % (what, error))
                replies = {id: conn.pending.pop(id) for id in ids if id in conn.pending}
            answered += len(replies)
            took = time.monotonic() - started
            responses = [wire.describe(r) for r in replies.values() if r.get("type") == "response"]
            ctx.check(not responses, "%s: %d answered as responses (%s)" % (what, len(responses), responses[:1]))
            for reply in replies.values():
                if reply.get("type") == "failure":
                    codes["%s:%s" % (what, "/".join(c for c in wire.failure_codes(reply)[1:] or wire.failure_codes(reply)))] += 1
            ctx.check(took < 5 + 0.5, "%s: the answers took %.1f s (deadline 3 s)" % (what, took))
    # Many hanging requests and the origin at once.
    with ctx.connect(timeout=30) as hanging, ctx.connect() as fast:
        flood_deadline = 4000 if ctx.quick else 8000
        ids = [hanging.request("up/hang", query=q(n="flood-%d" % i), deadlineMs=flood_deadline, policy="noCache")
               for i in range(200)]
        sent += len(ids)
        time.sleep(0.5)
        origin_json = ctx.origin.fetch("/json")
        slowest = 0.0
        for _ in range(20):
            t = time.monotonic()
            reply = fast.get("api/json", policy="noCache", timeout=15)
            slowest = max(slowest, time.monotonic() - t)
            ctx.check(reply.get("type") == "response" and wire.body_of(reply) == origin_json,
                      "the origin during 200 hanging requests: %s" % wire.describe(reply))
        ctx.check(slowest < 1.0, "the origin's requests took up to %.1f s during 200 hanging requests" % slowest)
        try:
            answered += len(hanging.answers(ids, timeout=flood_deadline / 1000 + 7))
        except wire.TimedOut as error:
            ctx.check(False, "hanging flood: %s" % error)
    ctx.sent, ctx.answered = sent, answered
    ctx.check(sent == answered, "%d sent, %d answered" % (sent, answered))
    ctx.note("failure codes: %s" % ", ".join("%s x%d" % kv for kv in sorted(codes.items())))


@case("sigstop-worker", "F", "SIGSTOP of one of two network workers for 20 s (quick: 6 s) under load with 4 s "
      "deadlines, then SIGCONT: sent = answered (nothing lost or hung), every response right; both network "
      "workers serve again afterwards", config=dict(POOLS), fault=True, budget=150, quick_budget=90)
def sigstop_worker(ctx):
    load = Load(ctx, deadline_ms=4000)
    load.start()
    time.sleep(2)
    network = ctx.cluster.workers_by_kind().get("network") or []
    if not network:
        load.stop(10)
        ctx.fail("no network worker process found")
    victim = network[0]
    stop_for = 6 if ctx.quick else 20
    os.kill(victim, signal.SIGSTOP)
    try:
        time.sleep(stop_for)
    finally:
        try:
            os.kill(victim, signal.SIGCONT)
        except ProcessLookupError:
            # The coordinator may have replaced a worker that stopped answering its heartbeats.
            ctx.note("the stopped worker (pid %d) was gone by SIGCONT: replaced" % victim)
    time.sleep(3)
    load.stop(drain_seconds=15)
    load.report(ctx, "network worker stopped %d s" % stop_for)
    seen = wait_for_workers(ctx, POOLS, 30)
    ctx.check(all(seen.get(k, 0) >= n for k, n in POOLS.items()), "workers registered after SIGCONT: %s" % seen)
    final_round(ctx)
