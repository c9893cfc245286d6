"""Issue 26, findings 1, 2, 3, 7 and 11: saturation must not kill healthy workers, strangers
that never say hello must not keep anyone out, each role has its own secret, one client cannot
keep the cache cold or hoard the client slots, and started workers hold no secret they do not
need."""
import json
import os
import select
import socket
import subprocess
import threading
import time

import wire
from harness import case

ADMIN_TOKEN = "attack-admin-4b81e0"
WORKER_TOKEN = "attack-worker-c29d57"


def roles_config(suite):
    return {"token": True, "admin_token": ADMIN_TOKEN, "worker_token": WORKER_TOKEN, "tcp": True}


def status(ctx, token=None):
    """The status report over the Unix socket, as an admin."""
    return ctx.cluster.status(token or getattr(ctx, "admin_token", None) or ctx.token)


def worker_pids(report):
    return sorted(w.get("pid") for w in wire.serving_workers(report))


def bench(ctx, address, seconds, connections, keys, template, each_once=False, token=None):
    """`monarch bench` against `address`: its JSON report."""
    monarch = os.path.join(ctx.cluster.bin_dir, "monarch")
    arguments = [monarch, "bench", "--address", address, "--connections", str(connections), "--keys", str(keys),
                 "--path-template", template, "--zipf", "0", "--duration", "%ds" % seconds, "--warmup", "0s", "--json"]
    if each_once:
        arguments.append("--each-once")
    environment = dict(os.environ)
    environment.pop("MONARCH_TOKEN", None)
    if token:
        environment["MONARCH_TOKEN"] = token
    out = subprocess.run(arguments, capture_output=True, text=True, timeout=seconds + 60, env=environment)
    try:
        return json.loads(out.stdout)
    except ValueError:
        ctx.fail("monarch bench printed no report (exit %d): %s %s" % (out.returncode, out.stdout[-300:], out.stderr[-300:]))


@case("saturation", "26.1", "64 connections of closed-loop cache hits over TCP (1,000 keys) on the default limits: "
      "0 failed answers, 0 workers declared unresponsive, the same worker processes before and after",
      config={"tcp": True}, budget=150, quick_budget=60)
def saturation(ctx):
    template = "up/echo?k={n}"
    seconds = 15 if ctx.quick else 60
    warm = bench(ctx, ctx.cluster.tcp_address, 30, 4, 1000, template, each_once=True)
    ctx.check(warm.get("errorCount") == 0, "warming the keys: errors %s" % warm.get("errors"))
    before = status(ctx)
    report = bench(ctx, ctx.cluster.tcp_address, seconds, 64, 1000, template)
    after = status(ctx)
    ctx.note("%.0f hits/s over %d s, p99 %.1f ms; sources %s" % (
        report.get("rps", 0), seconds, report.get("latencyUs", {}).get("p99", 0) / 1000, report.get("sources")))
    ctx.check(report.get("errorCount") == 0, "failed answers under saturation: %s" % report.get("errors"))
    ctx.check(report.get("answered", 0) > 0, "nothing was answered")
    ctx.check(after.get("unresponsiveWorkers") == before.get("unresponsiveWorkers"),
              "workers declared unresponsive: %s -> %s" % (before.get("unresponsiveWorkers"), after.get("unresponsiveWorkers")))
    ctx.check(worker_pids(before) == worker_pids(after), "workers were replaced: %s -> %s" % (
        worker_pids(before), worker_pids(after)))
    ctx.note("late heartbeats (judged nobody): %s" % after.get("lateHeartbeats"))


@case("handshake-flood", "26.2", "128 TCP connections that never say hello, reopened as they are closed: new TCP "
      "clients, Unix-socket clients (`monarch status`) and a SIGKILLed network worker's restart all get in",
      config={"tcp": True}, budget=90, quick_budget=60, fault=True)
def handshake_flood(ctx):
    stop = threading.Event()
    opened = [0]

    def closed(sock):
        try:
            return not sock.recv(65536)
        except OSError:
            return True

    def flood():
        held = []
        while not stop.is_set():
            readable = set(select.select(held, [], [], 0)[0]) if held else set()
            gone = [s for s in readable if closed(s)]
            for s in gone:
                s.close()
            held = [s for s in held if s not in gone]
            while len(held) < 128 and not stop.is_set():
                try:
                    held.append(wire.connect_raw(ctx.cluster.tcp_address))
                    opened[0] += 1
                except OSError:
                    time.sleep(0.01)
                    break
            time.sleep(0.05)
        for s in held:
            s.close()

    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    try:
        time.sleep(1.0)
        welcomed = {"tcp": 0, "unix": 0}
        for _ in range(20):
            for kind, address in (("tcp", ctx.cluster.tcp_address), ("unix", ctx.cluster.client_address)):
                try:
                    with ctx.connect(address=address, timeout=5):
                        welcomed[kind] += 1
                except wire.WireError:
                    pass
        ctx.check(welcomed == {"tcp": 20, "unix": 20}, "clients welcomed during the flood: %s of 20 each" % welcomed)
        monarch = os.path.join(ctx.cluster.bin_dir, "monarch")
        out = subprocess.run([monarch, "status", "--address", ctx.cluster.client_address], capture_output=True,
                             text=True, timeout=30, env={k: v for k, v in os.environ.items() if k != "MONARCH_TOKEN"})
        ctx.check(out.returncode == 0, "monarch status during the flood exited %d: %s" % (out.returncode, out.stderr[-200:]))
        networks = ctx.cluster.workers_by_kind().get("network") or []
        if not networks:
            ctx.fail("no network worker process")
        os.kill(networks[0], 9)
        killed = time.monotonic()
        back = None
        while time.monotonic() - killed < 20:
            report = status(ctx)
            if any(w.get("kind") == "network" and w.get("pid") != networks[0] for w in wire.serving_workers(report)):
                back = time.monotonic() - killed
                break
            time.sleep(0.2)
        ctx.check(back is not None, "the killed network worker's restart did not register within 20 s of the flood")
        ctx.note("%d stranger connections opened; network worker back in %s s" % (
            opened[0], "%.1f" % back if back is not None else "never"))
    finally:
        stop.set()
        thread.join(10)


@case("roles", "26.3", "a secret per role: the clients' token cannot scale, see status, invalidate or watch by prefix "
      "(forbidden) nor register a worker; the admin and worker secrets can; refusals are counted",
      config=roles_config, budget=60)
def roles(ctx):
    with ctx.connect(address=ctx.cluster.tcp_address) as conn:
        refused = []
        for message in ({"type": "status"}, {"type": "scale", "kind": "network", "count": 0},
                        {"type": "invalidate", "prefix": ""}, {"type": "watch", "prefix": ""}):
            id = conn.new_id()
            conn.send(dict(message, id=id))
            reply = conn.answer(id)
            code = (reply.get("error") or {}).get("code")
            ctx.check(code == "forbidden", "the clients' token ran %s: %s" % (message["type"], wire.describe(reply)))
            refused.append(code)
        reply = conn.get("docs/hello.txt")
        ctx.check(reply.get("type") == "response", "the clients' token cannot read: %s" % wire.describe(reply))
    rogue = wire.Conn(ctx.cluster.worker_address)
    try:
        rogue.hello(token=ctx.token, role="worker", kind="network", name="rogue-network", capacity=64, pid=1)
        ctx.check(False, "a worker with the clients' token was welcomed")
    except wire.Refused as error:
        ctx.check(error.code == "unauthorized", "a worker with the clients' token: %s" % error)
    except wire.WireError:
        pass
    finally:
        rogue.close()
    try:
        conn = wire.Conn(ctx.cluster.worker_address)
        conn.hello(token=WORKER_TOKEN, role="worker", kind="bundle", name="remote-bundle", capacity=1, pid=1)
        conn.close()
    except wire.WireError as error:
        ctx.check(False, "a worker with the workers' secret was refused: %s" % error)
    with ctx.connect(token=ADMIN_TOKEN, address=ctx.cluster.tcp_address) as admin:
        report = admin.status()
    ctx.check(report.get("forbidden", 0) >= 4, "forbidden refusals counted: %s" % report.get("forbidden"))
    ctx.check(report.get("unauthorized", 0) >= 1, "unauthorized hellos counted: %s" % report.get("unauthorized"))


@case("invalidation-flood", "26.3", "one client connection invalidating as fast as it can for 5 s is held to "
      "limits.invalidationsPerSecond (answered overloaded past it); a cached key keeps being a hit",
      config={"tcp": True, "limits": {"invalidationsPerSecond": 50}}, budget=60)
def invalidation_flood(ctx):
    with ctx.connect() as reader:
        reader.get("api/json")
        started = time.monotonic()
        done = {"ok": 0, "overloaded": 0, "other": 0}
        # Over TCP, a client (without an admin secret, only a Unix-socket peer is an admin).
        with ctx.connect(address=ctx.cluster.tcp_address) as conn:
            while time.monotonic() - started < 5:
                ids = []
                for index in range(64):
                    id = conn.new_id()
                    conn.send({"type": "invalidate", "id": id, "key": "GET api k%d" % index})
                    ids.append(id)
                for reply in conn.answers(ids).values():
                    code = (reply.get("error") or {}).get("code") if reply.get("type") == "failure" else None
                    done["ok" if code is None else "overloaded" if code == "overloaded" else "other"] += 1
        elapsed = time.monotonic() - started
        ran = done["ok"] + done["other"]
        ctx.note("%s in %.1f s" % (done, elapsed))
        ctx.check(ran <= 50 * (elapsed + 1) + 10, "%d invalidations ran in %.1f s, above 50/s" % (ran, elapsed))
        ctx.check(done["overloaded"] > 0, "no invalidation was held back")
        reply = reader.get("api/json")
        ctx.check(reply.get("type") == "response" and reply.get("source") == "cache",
                  "the cached key after the flood: %s" % wire.describe(reply))


@case("slot-hoarding", "26.7", "one peer holding watches on as many connections as it can gets limits.clientsPerPeer; "
      "another peer and `monarch status` still get in", config={"tcp": True, "limits": {"clients": 96, "clientsPerPeer": 48}},
      budget=60)
def slot_hoarding(ctx):
    host, port = ctx.cluster.tcp_address[len("tcp:"):].rsplit(":", 1)
    hoard = []
    for index in range(120):
        try:
            conn = ctx.connect(address=ctx.cluster.tcp_address, timeout=3)
        except wire.WireError:
            continue
        id = conn.new_id()
        conn.send({"type": "watch", "id": id, "key": "GET api hoard%d" % index})
        hoard.append(conn)
    ctx.check(len(hoard) == 48, "the hoarding peer holds %d connections (limits.clientsPerPeer is 48)" % len(hoard))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.2", 0))
    sock.settimeout(5)
    sock.connect((host, int(port)))
    other = wire.Conn(ctx.cluster.tcp_address, sock=sock)
    try:
        other.hello(token=ctx.token)
        reply = other.get("docs/hello.txt")
        ctx.check(reply.get("type") == "response", "another peer: %s" % wire.describe(reply))
    except wire.WireError as error:
        ctx.check(False, "another peer was kept out: %s" % error)
    finally:
        other.close()
    monarch = os.path.join(ctx.cluster.bin_dir, "monarch")
    out = subprocess.run([monarch, "status", "--address", ctx.cluster.client_address], capture_output=True, text=True,
                         timeout=30, env={k: v for k, v in os.environ.items() if k != "MONARCH_TOKEN"})
    ctx.check(out.returncode == 0, "monarch status exited %d: %s" % (out.returncode, out.stderr[-200:]))
    for conn in hoard:
        conn.close()


@case("worker-secrets", "26.11", "started workers hold no role's secret in their environment; only the cache worker "
      "of a Redis store would get its password", config=roles_config, budget=30)
def worker_secrets(ctx):
    secrets = [ctx.token, ADMIN_TOKEN, WORKER_TOKEN]
    for kind, pids in ctx.cluster.workers_by_kind().items():
        for pid in pids:
            try:
                with open("/proc/%d/environ" % pid, "rb") as f:
                    environment = f.read().split(b"\0")
            except OSError as error:
                ctx.check(False, "cannot read the environment of %s worker %d: %s" % (kind, pid, error))
                continue
            names = {entry.split(b"=", 1)[0].decode(errors="replace") for entry in environment if b"=" in entry}
            ctx.check("MONARCH_TOKEN" not in names, "the %s worker has MONARCH_TOKEN" % kind)
            for secret in secrets:
                ctx.check(not any(secret.encode() in entry for entry in environment),
                          "the %s worker's environment holds a role's secret" % kind)
