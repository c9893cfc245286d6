#!/usr/bin/env python3
"""The sentinel: a well-behaved client on a connection of its own, in a process of its own
(so the attacker's load in the suite's process does not skew its timings).

    sentinel.py ADDRESS PROBES_JSON [--token T] [--interval-ms 100]

PROBES_JSON is a list of {"name", "path", "fields": {...request fields}, "body": base64 of the
expected body}. The sentinel connects and says hello, prints {"ready": true} (or {"fatal":
...}), then sends the probes in turn, one at a time, every interval, and prints one JSON line
per probe: {"t": monotonic start, "ms": latency, "ok": bool, "probe": name, "what": ...}. A
connection that breaks is reported ({"broken": reason}) and made again. It stops when its
standard input closes.
"""
import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire  # noqa: E402


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("address")
    parser.add_argument("probes")
    parser.add_argument("--token")
    parser.add_argument("--interval-ms", type=int, default=100)
    args = parser.parse_args()
    probes = json.loads(args.probes)
    for probe in probes:
        probe["expected"] = wire.base64.b64decode(probe["body"])

    stop = threading.Event()

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(1):
                pass
        finally:
            stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()

    def connect():
        conn = wire.Conn(args.address, timeout=10)
        conn.hello(token=args.token)
        return conn

    try:
        conn = connect()
    except Exception as error:  # noqa: BLE001 - reported, not raised
        emit({"fatal": "cannot connect: %s" % error})
        return
    emit({"ready": True})
    turn = 0
    while not stop.is_set():
        probe = probes[turn % len(probes)]
        turn += 1
        started = time.monotonic()
        record = {"t": started, "probe": probe["name"]}
        try:
            fields = dict(probe.get("fields") or {})
            fields.setdefault("deadlineMs", 10000)
            reply = conn.get(probe["path"], timeout=15, **fields)
            record["ms"] = (time.monotonic() - started) * 1000
            ok = reply.get("type") == "response" and reply.get("status") == 200 and wire.body_of(reply) == probe["expected"]
            record["ok"] = ok
            if not ok:
                record["what"] = wire.describe(reply)
        except Exception as error:  # noqa: BLE001
            record["ms"] = (time.monotonic() - started) * 1000
            record["ok"] = False
            record["what"] = "%s: %s" % (type(error).__name__, error)
            emit(record)
            emit({"broken": record["what"], "t": time.monotonic()})
            conn.close()
            while not stop.is_set():
                try:
                    conn = connect()
                    break
                except Exception:  # noqa: BLE001
                    time.sleep(0.2)
            continue
        emit(record)
        left = args.interval_ms / 1000 - (time.monotonic() - started)
        if left > 0:
            stop.wait(left)
    conn.close()


if __name__ == "__main__":
    main()
