#!/usr/bin/env python3
"""Monarch's attack suite (issue 11): drives a real cluster through abuse and fault cases.

    scripts/attack [--quick] [--case NAME]... [--list] [--bin DIR] [--json FILE] [--keep] [--build]

Each case gets a cluster of its own (`monarch up` in a temporary folder, its own
monarch.yml), a sentinel client connected before the case starts, and RSS sampling of the
coordinator. After the case: the coordinator must still run, its RSS must come back under
RSS_CEILING_MB within RSS_SETTLE_S, and the sentinel must get correct answers within the
latency bounds below (Tests/Attack/README.md documents them). Prints a table; exits 1 when
any case fails, 2 on a usage or set-up problem.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster as clusters  # noqa: E402
import config  # noqa: E402
import harness  # noqa: E402
import wire  # noqa: E402
import cases_protocol  # noqa: E402,F401 - registers cases
import cases_limits  # noqa: E402,F401
import cases_http  # noqa: E402,F401
import cases_faults  # noqa: E402,F401
import cases_scale  # noqa: E402,F401
import cases_variants  # noqa: E402,F401
import cases_roles  # noqa: E402,F401
import cases_fanout  # noqa: E402,F401
import cases_httpdoor  # noqa: E402,F401

# The documented bounds (Tests/Attack/README.md).
RSS_CEILING_MB = 150          # coordinator RSS after every case, within RSS_SETTLE_S
RSS_SETTLE_S = 10
SENTINEL_AFTER_P99_MS = 500   # sentinel after the case: every answer correct, p99 within this
SENTINEL_AFTER_PROBES = 20
SENTINEL_DURING_P95_MS = 1000  # sentinel during an abuse case: every answer correct, p95 and max
SENTINEL_DURING_MAX_MS = 5000
TOKEN = "attack-token-7f3a9c"


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


class Suite:
    def __init__(self, args):
        self.quick = args.quick
        self.keep = args.keep
        self.bin_dir = args.bin
        self.idle_connections = 2000 if args.quick else 10000
        self.kill_seconds = 10 if args.quick else 60
        self.nofile = None
        self.without_limits = args.without_limits


def sentinel_probes(origin_json, http_address=None):
    """The sentinel's probes: on the wire, and on the HTTP front door when the cluster has one
    (`http-bundle`, and `http-network` through a noCache route to upstream.py: each one a trip)."""
    probes = [
        {"name": "bundle", "path": config.SENTINEL_BUNDLE_PATH,
         "body": wire.b64(config.BUNDLE[config.SENTINEL_BUNDLE_PATH])},
        {"name": "network", "path": "api/json", "fields": {"policy": "noCache"}, "body": wire.b64(origin_json)},
    ]
    if http_address:
        probes += [
            {"name": "http-bundle", "http": http_address, "path": "/" + config.SENTINEL_BUNDLE_PATH,
             "body": wire.b64(config.BUNDLE[config.SENTINEL_BUNDLE_PATH])},
            {"name": "http-network", "http": http_address, "path": "/" + config.SENTINEL_HTTP_NETWORK_PATH,
             "body": wire.b64(config.SENTINEL_HTTP_NETWORK_BODY)},
        ]
    return probes


def summarize(records):
    latencies = [r["ms"] for r in records]
    return {
        "probes": len(records),
        "wrong": sum(1 for r in records if not r["ok"]),
        "p50": percentile(latencies, 0.5),
        "p95": percentile(latencies, 0.95),
        "p99": percentile(latencies, 0.99),
        "max": max(latencies) if latencies else None,
    }


def on_alarm(signum, frame):
    raise harness.CaseTimeout()


def run_case(suite, case, origin, upstream, origin_json):
    result = {"case": case.name, "issue": case.issue, "asserts": case.asserts, "result": "fail", "reasons": [],
              "notes": [], "peakRssMB": None, "finalRssMB": None, "sentinel": {}, "sent": None, "answered": None}
    options = case.config(suite) if callable(case.config) else dict(case.config)
    if suite.without_limits and options.get("limits"):
        kept = {k: v for k, v in options["limits"].items() if k in ("timeout", "maxFrame")}
        dropped = sorted(set(options["limits"]) - set(kept))
        options["limits"] = kept
        if dropped:
            result["notes"].append("run without its limits keys %s (--without-limits)" % ", ".join(dropped))
    token = TOKEN if options.get("token") else None
    if options.get("token") is True:
        options["token"] = TOKEN
    folder = tempfile.mkdtemp(prefix="mat.", dir="/tmp")
    config.write_bundle(folder + "/Bundle")
    text = config.build(folder, origin.port, upstream.port, options)
    cluster = clusters.Cluster(suite.bin_dir, folder, text, nofile=options.get("nofile"))
    sentinel = None
    started = time.monotonic()
    failed = False
    try:
        try:
            cluster.start()
        except clusters.ConfigRejected as error:
            lines = [line for line in str(error).splitlines() if line.startswith("Error:")] or [str(error)]
            result["reasons"].append("monarch up refused the case's configuration (limits %s): %s" % (
                ", ".join("%s: %s" % kv for kv in (options.get("limits") or {}).items()) or "none",
                " ".join(lines[0].replace(folder, "…").split())[:300]))
            failed = True
            return result
        except clusters.StartFailed as error:
            result["reasons"].append("the cluster did not start: %s" % " ".join(str(error).split())[:400])
            failed = True
            return result
        probes = [p for p in sentinel_probes(origin_json, cluster.http_address)
                  if p["name"] in options.get("sentinel", ("bundle", "network", "http-bundle", "http-network"))]
        sentinel = clusters.Sentinel(cluster.client_address, probes, token=token)
        # Half a second of normal traffic: the sentinel's normal latency.
        time.sleep(0.5)
        before = time.monotonic()
        baseline = summarize(sentinel.window(started, before))
        result["sentinel"]["baseline"] = baseline
        result["rssBeforeMB"] = round((cluster.sampler.current() or 0) / 1024, 1)

        ctx = harness.Context(cluster, origin, upstream, suite, token=token)
        budget = case.quick_budget if suite.quick else case.budget
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(budget)
        t0 = time.monotonic()
        try:
            case.function(ctx)
        except harness.CaseFailure as error:
            ctx.problems.append(str(error))
        except harness.CaseTimeout:
            ctx.problems.append("the case ran past its %d s budget" % budget)
        except wire.WireError as error:
            ctx.problems.append("wire: %s: %s" % (type(error).__name__, error))
        except Exception as error:  # noqa: BLE001 - a broken case is a failed case, with its trace
            ctx.problems.append("%s: %s (%s)" % (type(error).__name__, error,
                                                  traceback.format_exc(limit=3).strip().splitlines()[-3].strip()))
        finally:
            signal.alarm(0)
        t1 = time.monotonic()
        result["seconds"] = round(t1 - t0, 1)
        result["sent"], result["answered"] = ctx.sent, ctx.answered
        result["notes"] += ctx.notes
        result["extra"] = ctx.extra
        reasons = list(ctx.problems)

        if not cluster.alive():
            reasons.append("the coordinator exited (status %s); stderr ends: %s" % (
                cluster.process.returncode, " ".join(cluster.stderr()[-300:].split())))
        else:
            # RSS must come back under the ceiling.
            settle_end = time.monotonic() + RSS_SETTLE_S
            current = cluster.sampler.current()
            while current is not None and current > RSS_CEILING_MB * 1024 and time.monotonic() < settle_end:
                time.sleep(0.2)
                current = cluster.sampler.current()
            result["finalRssMB"] = round((current or 0) / 1024, 1)
            if current is not None and current > RSS_CEILING_MB * 1024:
                reasons.append("coordinator RSS %.0f MB is still above the %d MB ceiling %d s after the case" % (
                    current / 1024, RSS_CEILING_MB, RSS_SETTLE_S))
            # The sentinel afterwards.
            t2 = time.monotonic()
            wait_end = t2 + 15
            while sentinel.count_since(t2) < SENTINEL_AFTER_PROBES and time.monotonic() < wait_end:
                time.sleep(0.1)
            after = summarize(sentinel.window(t2)[:SENTINEL_AFTER_PROBES])
            result["sentinel"]["after"] = after
            if after["probes"] < SENTINEL_AFTER_PROBES:
                reasons.append("the sentinel got only %d answers in 15 s after the case" % after["probes"])
            if after["wrong"]:
                bad = [r for r in sentinel.window(t2) if not r["ok"]][:2]
                reasons.append("the sentinel got %d wrong answers after the case: %s" % (
                    after["wrong"], "; ".join(r.get("what", "?") for r in bad)))
            if after["p99"] is not None and after["p99"] > SENTINEL_AFTER_P99_MS:
                reasons.append("sentinel p99 %.0f ms after the case (bound %d ms)" % (after["p99"], SENTINEL_AFTER_P99_MS))
        peak = cluster.sampler.peak(t0, time.monotonic())
        result["peakRssMB"] = round(peak / 1024, 1) if peak else None

        during_records = sentinel.window(t0, t1)
        during = summarize(during_records)
        result["sentinel"]["during"] = during
        wrong_content = [r for r in during_records if not r["ok"] and r.get("what", "").startswith("response")]
        if wrong_content:
            reasons.append("the sentinel got %d responses with wrong content during the case: %s" % (
                len(wrong_content), wrong_content[0].get("what")))
        # The front door may close the sentinel's idle keep-alive connection (httpKeepAlive,
        # httpConnectionAge) as a request leaves; the sentinel then sends it again once. Rare, or
        # the door is closing connections it should keep.
        retried = [r for r in during_records if r.get("retried")]
        if retried:
            http_probes = sum(1 for r in during_records if r["probe"].startswith("http-"))
            result["notes"].append("sentinel: %d of %d HTTP probes sent again on a new connection (the front door "
                                   "closed the idle one as the request left)" % (len(retried), http_probes))
            if len(retried) > max(2, http_probes // 20):
                reasons.append("the front door closed the sentinel's kept-alive connection under %d of its %d HTTP "
                               "probes" % (len(retried), http_probes))
        broken = [b for b in sentinel.broken if t0 <= b["t"]]
        if broken:
            reasons.append("the sentinel's connection broke %d time(s) during the case: %s" % (
                len(broken), broken[0]["broken"]))
        if not case.fault:
            failures = [r for r in during_records if not r["ok"] and not r.get("what", "").startswith("response")]
            tolerated = [r for r in failures if any(code in r.get("what", "") for code in case.tolerate)]
            if tolerated:
                result["notes"].append("sentinel: %d probes answered %s during the case (tolerated)" % (
                    len(tolerated), "/".join(case.tolerate)))
            failures = [r for r in failures if r not in tolerated]
            if failures:
                reasons.append("the sentinel got %d failures during the case: %s" % (
                    len(failures), failures[0].get("what")))
            p95_bound, max_bound = case.during or (SENTINEL_DURING_P95_MS, SENTINEL_DURING_MAX_MS)
            if during["probes"] and (during["p95"] > p95_bound or during["max"] > max_bound):
                reasons.append("sentinel latency during the case p95 %.0f ms, max %.0f ms (bounds %d / %d ms)" % (
                    during["p95"], during["max"], p95_bound, max_bound))
        else:
            failures = [r for r in during_records if not r["ok"]]
            if failures:
                result["notes"].append("sentinel: %d of %d probes failed during the faults (tolerated): %s" % (
                    len(failures), len(during_records), failures[0].get("what")))
        result["reasons"] = reasons
        result["result"] = "fail" if reasons else "pass"
        failed = bool(reasons)
        return result
    finally:
        if sentinel:
            sentinel.stop()
        cluster.stop()
        if suite.keep and failed:
            result["folder"] = folder
        else:
            shutil.rmtree(folder, ignore_errors=True)


def fmt_ms(value):
    return "-" if value is None else "%.0f" % value


def print_table(results, out=sys.stdout):
    header = ("case", "issue", "result", "peak RSS", "sentinel p50/p99 ms (during | after)", "sent/answered")
    rows = []
    for r in results:
        s = r.get("sentinel") or {}
        during, after = s.get("during") or {}, s.get("after") or {}
        rows.append((
            r["case"], r["issue"], r["result"].upper(),
            "-" if r.get("peakRssMB") is None else "%.0f MB" % r["peakRssMB"],
            "%s/%s | %s/%s" % (fmt_ms(during.get("p50")), fmt_ms(during.get("p99")),
                               fmt_ms(after.get("p50")), fmt_ms(after.get("p99"))),
            "-" if r.get("sent") is None else "%s/%s" % (r["sent"], r["answered"]),
        ))
    widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(len(header))]
    line = "  ".join("%-*s" % (w, h) for w, h in zip(widths, header))
    print(line, file=out)
    print("-" * len(line), file=out)
    for row, r in zip(rows, results):
        print("  ".join("%-*s" % (w, c) for w, c in zip(widths, row)), file=out)
        for reason in r["reasons"]:
            print("      ✗ " + reason, file=out)
        for note in r["notes"]:
            print("      · " + note, file=out)


def default_bin_dir():
    try:
        return subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=clusters.REPO,
                              capture_output=True, text=True, timeout=300, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        sys.exit("attack: cannot find the release bin path (swift build -c release --show-bin-path): %s" % error)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the CI version: shorter fault phases, 2,000 idle connections")
    parser.add_argument("--case", action="append", default=[], metavar="NAME", help="run only this case (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the cases and what each asserts")
    parser.add_argument("--bin", help="where monarch and the workers are (default: swift build -c release --show-bin-path)")
    parser.add_argument("--build", action="store_true", help="build the release products first")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders of failed cases")
    parser.add_argument("--without-limits", action="store_true",
                        help="leave the cases' new limits keys (all but timeout and maxFrame) out of their configurations: "
                             "shows what a coordinator that does not know them yet does under each case")
    args = parser.parse_args()

    if args.list:
        for case in harness.CASES:
            print("%-22s %-6s %s%s" % (case.name, case.issue, "[fault] " if case.fault else "", case.asserts))
        return 0
    selected = harness.CASES
    if args.case:
        known = {case.name: case for case in harness.CASES}
        unknown = [name for name in args.case if name not in known]
        if unknown:
            print("attack: unknown case(s): %s (see --list)" % ", ".join(unknown), file=sys.stderr)
            return 2
        selected = [known[name] for name in args.case]

    if args.build:
        for product in ("monarch", "monarch-bundle-worker", "monarch-cache-worker", "monarch-network-worker"):
            subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=clusters.REPO, check=True)
    args.bin = os.path.abspath(args.bin or default_bin_dir())
    missing = [p for p in ("monarch", "monarch-bundle-worker", "monarch-cache-worker", "monarch-network-worker")
               if not os.access(os.path.join(args.bin, p), os.X_OK)]
    if missing:
        print("attack: %s missing in %s: build the release products first (or pass --build)" % (
            ", ".join(missing), args.bin), file=sys.stderr)
        return 2

    suite = Suite(args)
    # Files and sockets the cluster makes must not depend on the caller's umask to be private.
    os.umask(0o022)
    wanted = suite.idle_connections + 2048
    suite.nofile = clusters.raise_nofile(wanted)
    print("attack: %s mode, %d case(s); binaries %s; RLIMIT_NOFILE %d (asked for %d; the coordinator inherits it)" % (
        "quick" if args.quick else "full", len(selected), args.bin, suite.nofile, wanted), flush=True)

    def on_term(signum, frame):
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, on_term)
    # Also when started from a shell that ignores SIGINT for background jobs: Ctrl-C / kill -INT stop the suite.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    results = []
    began = time.monotonic()
    try:
        origin = clusters.ScriptServer(clusters.ORIGIN_SCRIPT, "origin")
        upstream = clusters.Upstream()
        origin_json = origin.fetch("/json")
        for case in selected:
            print("attack: %s ..." % case.name, end="", flush=True)
            case_began = time.monotonic()
            result = run_case(suite, case, origin, upstream, origin_json)
            result["wallSeconds"] = round(time.monotonic() - case_began, 1)
            results.append(result)
            print(" %s (%.0f s)%s" % (result["result"], result["wallSeconds"],
                                      "" if result["result"] == "pass" else ": " + "; ".join(result["reasons"])[:300]),
                  flush=True)
    except KeyboardInterrupt:
        print("\nattack: interrupted; stopping everything", file=sys.stderr)
        clusters.stop_everything()
        return 130
    finally:
        clusters.stop_everything()
    total = time.monotonic() - began
    print()
    print_table(results)
    failed = [r["case"] for r in results if r["result"] != "pass"]
    print("\n%d passed, %d failed in %.0f s%s" % (len(results) - len(failed), len(failed), total,
                                                  (": " + ", ".join(failed)) if failed else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mode": "quick" if args.quick else "full", "seconds": round(total, 1), "nofile": suite.nofile,
                       "bounds": {"rssCeilingMB": RSS_CEILING_MB, "rssSettleSeconds": RSS_SETTLE_S,
                                  "sentinelAfterP99Ms": SENTINEL_AFTER_P99_MS,
                                  "sentinelDuringP95Ms": SENTINEL_DURING_P95_MS,
                                  "sentinelDuringMaxMs": SENTINEL_DURING_MAX_MS},
                       "results": results}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
