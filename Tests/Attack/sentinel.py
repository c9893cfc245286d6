#!/usr/bin/env python3
"""The sentinel: a well-behaved client on a connection of its own, in a process of its own
(so the attacker's load in the suite's process does not skew its timings).

    sentinel.py ADDRESS PROBES_JSON [--token T] [--interval-ms 100]

PROBES_JSON is a list of {"name", "path", "fields": {...request fields}, "body": base64 of the
expected body}; a probe with "http": ADDRESS is a GET of its path (an HTTP target) on a
keep-alive connection of its own to the coordinator's HTTP front door, expecting 200 and the
body. The sentinel connects and says hello, prints {"ready": true} (or {"fatal":
...}), then sends the probes in turn, one at a time, every interval, and prints one JSON line
per probe: {"t": monotonic start, "ms": latency, "ok": bool, "probe": name, "what": ...}. A
connection that breaks is reported ({"broken": reason}) and made again (an HTTP connection
that an answer with `Connection: close` ends is made again quietly). It stops when its
standard input closes.
"""
import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http1  # noqa: E402
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

    http_conns = {}  # HTTP address -> [http1.Conn, answers it has given]

    def http_probe(probe, record):
        """One GET on the front door: (ok, what); raises when the connection fails. A kept-alive
        connection that the front door closed while idle (past httpKeepAlive or
        httpConnectionAge), before any byte of the answer, is made again and the GET sent again
        once, as HTTP clients do (RFC 9112, 9.3.1); the record says so ("retried")."""
        address = probe["http"]
        for attempt in (1, 2):
            held = http_conns.get(address)
            if held is None:
                held = http_conns[address] = [http1.Conn(address, timeout=10), 0]
            conn, used = held
            sent = conn.send(http1.request_bytes(probe["path"]))
            answer = conn.response(timeout=15) if sent else None
            if answer is None and used and attempt == 1 and (conn.eof or not sent) and not conn.leftover():
                conn.close()
                del http_conns[address]
                record["retried"] = True
                continue
            break
        if answer is None:
            raise wire.Closed("no answer from the front door (%s)" % ("closed" if conn.eof or not sent else "timed out"))
        held[1] += 1
        if answer.closing:
            conn.close()
            http_conns.pop(address, None)
        if answer.status != 200:
            return False, "http status %d %s: %r" % (answer.status, answer.header("monarch-error") or "", answer.body[:200])
        return answer.body == probe["expected"], "response %r" % answer

    try:
        conn = connect()
        for probe in probes:
            if probe.get("http") and probe["http"] not in http_conns:
                http_conns[probe["http"]] = [http1.Conn(probe["http"], timeout=10), 0]
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
        if probe.get("http"):
            try:
                ok, what = http_probe(probe, record)
                record["ms"] = (time.monotonic() - started) * 1000
                record["ok"] = ok
                if not ok:
                    record["what"] = what
            except Exception as error:  # noqa: BLE001
                record["ms"] = (time.monotonic() - started) * 1000
                record["ok"] = False
                record["what"] = "%s: %s" % (type(error).__name__, error)
                emit(record)
                emit({"broken": "http: " + record["what"], "t": time.monotonic()})
                stale = http_conns.pop(probe["http"], None)
                if stale:
                    stale[0].close()
                continue
            emit(record)
            left = args.interval_ms / 1000 - (time.monotonic() - started)
            if left > 0:
                stop.wait(left)
            continue
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
    for http_conn, _ in http_conns.values():
        http_conn.close()


if __name__ == "__main__":
    main()
