"""Scale cases (issue 26, finding 6): many `scale` calls at once on one connection, and one
scale larger than admission takes in one go, while requests flow. No request may fail for want
of a worker, no scale may be answered `unavailable`, and the pool must end at the last size
asked for with every worker alive."""
import collections
import time

import wire
from cases_faults import Load
from harness import case

STORM_TARGETS = [1, 5, 2, 4, 1, 3, 5, 1, 2, 5, 4, 1, 3, 2, 5, 1, 4, 2, 5, 3]
SPREAD_TARGETS = [4, 1, 5, 2, 3, 1, 5, 4, 2, 1, 3, 5, 2, 4, 1, 5, 3, 2, 4, 2]
START_COUNT = 2
# The large scale: within limits.workers (256 by default, the bundle and cache workers count too).
LARGE_QUICK = 32
LARGE_FULL = 192


def admin_token(ctx):
    """The token scale and status present: the case's configured token (one place, should the
    admin secret come to differ from the clients')."""
    return ctx.token


def network_pool(ctx):
    """(pool entry, network workers) of a status report."""
    status = ctx.cluster.status(admin_token(ctx))
    pool = next((p for p in status.get("pools") or [] if p.get("kind") == "network"), {})
    workers = [w for w in status.get("workers") or [] if w.get("kind") == "network"]
    return pool, workers


def scale_all(ctx, targets, spacing=0.0, timeout=180):
    """Sends one `scale network=N` per target on one connection (`spacing` s apart) and
    returns the answers in order."""
    with ctx.cluster.connect(admin_token(ctx)) as conn:
        ids = []
        for target in targets:
            id = conn.new_id()
            conn.send({"type": "scale", "id": id, "kind": "network", "count": target})
            ids.append(id)
            if spacing:
                time.sleep(spacing)
        answers = conn.answers(ids, timeout=timeout)
    return [answers[id] for id in ids]


def check_answers(ctx, what, targets, answers):
    codes = collections.Counter(
        (a.get("error") or {}).get("code") for a in answers if a.get("type") != "result")
    ctx.check(not codes, "%s: %d of %d scales were not answered with a report: %s" % (
        what, sum(codes.values()), len(answers), dict(codes)))
    superseded = sum(1 for a in answers if (a.get("data") or {}).get("superseded"))
    last = answers[-1].get("data") or {}
    ctx.check(last.get("count") == targets[-1], "%s: the last scale (to %d) reported %s" % (
        what, targets[-1], wire.describe(answers[-1]) if answers[-1].get("type") != "result" else last))
    ctx.note("%s: %d scales, %d answered superseded" % (what, len(answers), superseded))


def check_pool(ctx, what, size):
    pool, workers = network_pool(ctx)
    states = collections.Counter(w.get("state") for w in workers)
    ctx.check(pool.get("desired") == size and pool.get("live") == size and pool.get("state") == "ok",
              "%s: the network pool is %s (want desired = live = %d, ok)" % (what, pool, size))
    ctx.check(states == collections.Counter({"ready": size}), "%s: network workers %s (want %d ready)" % (
        what, dict(states), size))


@case("scale-storm", "26.6", "20 `scale network=N` (N in 1-5) sent at once on one connection, then 20 more 50 ms "
      "apart, under load from 4 clients (2 network workers to start): every scale answered with a report (never "
      "`unavailable`), the pool ends at the last N with every worker ready, and no request fails (none for want "
      "of a worker); then `scale network=192` (quick: 32), within limits.workers: answered with a report, all "
      "ready, the pool not failed, no worker turned away at the handshake limit; then back to 2",
      config={"network": START_COUNT}, budget=420, quick_budget=200)
def scale_storm(ctx):
    load = Load(ctx)
    load.start()
    try:
        answers = scale_all(ctx, STORM_TARGETS)
        check_answers(ctx, "at once", STORM_TARGETS, answers)
        check_pool(ctx, "after the scales at once", STORM_TARGETS[-1])
        answers = scale_all(ctx, SPREAD_TARGETS, spacing=0.05)
        check_answers(ctx, "50 ms apart", SPREAD_TARGETS, answers)
        check_pool(ctx, "after the scales 50 ms apart", SPREAD_TARGETS[-1])

        large = LARGE_QUICK if ctx.quick else LARGE_FULL
        log_offset = ctx.cluster.stderr_size()
        started = time.monotonic()
        [up] = scale_all(ctx, [large], timeout=300)
        took = time.monotonic() - started
        ctx.check(up.get("type") == "result", "scale network=%d: %s %s" % (
            large, wire.describe(up), (up.get("error") or {}).get("message", "")))
        check_pool(ctx, "after scale network=%d" % large, large)
        ctx.note("scale network=%d answered in %.1f s" % (large, took))
        log = ctx.cluster.stderr_since(log_offset).decode("utf-8", "replace").splitlines()
        refused = [line for line in log if any(text in line for text in (
            "refused a worker", "closed a worker connection", "starting it again"))]
        ctx.check(not refused, "%d workers turned away or restarted during the scale: %s" % (len(refused), refused[:2]))

        [down] = scale_all(ctx, [START_COUNT], timeout=300)
        ctx.check(down.get("type") == "result", "scale network=%d: %s" % (START_COUNT, wire.describe(down)))
        check_pool(ctx, "back at %d" % START_COUNT, START_COUNT)
    finally:
        load.stop(drain_seconds=20)
    load.report(ctx, "requests during the scales")
    ctx.check(not load.codes, "%d requests failed during the scales: %s" % (
        sum(load.codes.values()), dict(load.codes.most_common(5))))
