"""Process control for the attack suite: the HTTP servers, `monarch up` in a temporary folder
with a configuration of its own, the sentinel, and RSS sampling from /proc.

Every process started here is registered in STARTED and stopped by stop_everything(), which
attack.py calls on every way out (normal end, failure, Ctrl-C, SIGTERM).
"""
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import wire

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ORIGIN_SCRIPT = os.path.join(REPO, "Tests", "TestOrigins", "Origin", "origin.py")
UPSTREAM_SCRIPT = os.path.join(HERE, "upstream.py")
SENTINEL_SCRIPT = os.path.join(HERE, "sentinel.py")

STARTED = []  # processes to stop, in start order
STARTED_LOCK = threading.Lock()


def register(process):
    with STARTED_LOCK:
        STARTED.append(process)
    return process


def unregister(process):
    with STARTED_LOCK:
        if process in STARTED:
            STARTED.remove(process)


def stop_everything():
    """Stops every process this suite started that is still running (last started first)."""
    with STARTED_LOCK:
        processes = list(reversed(STARTED))
        STARTED.clear()
    for process in processes:
        try:
            process.stop()
        except Exception as error:  # noqa: BLE001 - best effort on the way out
            print("attack: stopping %r: %s" % (process, error), file=sys.stderr)


class ConfigRejected(Exception):
    """`monarch up` refused the configuration (for example a limit key it does not know yet)."""


class StartFailed(Exception):
    pass


def rss_kb(pid):
    """VmRSS of `pid` in KiB, or None when it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def fd_count(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def process_state(pid):
    """The state letter of /proc/PID/stat (R, S, T, Z, ...), or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
        return stat[stat.rindex(")") + 2]
    except (OSError, ValueError, IndexError):
        return None


def children_of(pid):
    """Pids whose parent is `pid` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[1]) == pid:
                found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")[0].decode("utf-8", "replace")
    except OSError:
        return ""


class ScriptServer:
    """A Python HTTP server script that prints its port and exits when its stdin closes."""

    def __init__(self, script, name):
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, script, "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True)
        register(self)
        line = self.process.stdout.readline().decode().strip()
        if not line.isdigit():
            self.stop()
            raise StartFailed("%s did not print its port (got %r)" % (name, line))
        self.port = int(line)

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def fetch(self, path, timeout=10):
        with urllib.request.urlopen(self.url(path), timeout=timeout) as reply:
            return reply.read()

    def stop(self):
        unregister(self)
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(3)

    def __repr__(self):
        return "<%s pid %d>" % (self.name, self.process.pid)


class Upstream(ScriptServer):
    def __init__(self):
        super().__init__(UPSTREAM_SCRIPT, "upstream")
        self.log_index = 0

    def log(self, since=None):
        """The requests received since `since` (default: since the last mark())."""
        data = json.loads(self.fetch("/_log?since=%d" % (self.log_index if since is None else since)))
        return data["entries"]

    def mark(self):
        self.log_index = json.loads(self.fetch("/_log?since=999999999"))["next"]


class RSSSampler(threading.Thread):
    """Samples a process's RSS every `interval` seconds; peak() over a window."""

    def __init__(self, pid, interval=0.05):
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.samples = []  # (monotonic, kib)
        self.lock = threading.Lock()
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            value = rss_kb(self.pid)
            if value is None:
                return
            with self.lock:
                self.samples.append((time.monotonic(), value))
            self.halt.wait(self.interval)

    def peak(self, since=0.0, until=float("inf")):
        with self.lock:
            values = [kib for t, kib in self.samples if since <= t <= until]
        return max(values) if values else None

    def current(self):
        return rss_kb(self.pid)

    def stop(self):
        self.halt.set()


class Cluster:
    """`monarch up` with a configuration of its own in a temporary folder."""

    def __init__(self, bin_dir, folder, config_text, nofile=None, env=None):
        self.bin_dir = bin_dir
        self.folder = folder
        self.config_path = os.path.join(folder, "monarch.yml")
        with open(self.config_path, "w") as f:
            f.write(config_text)
        self.stdout_path = os.path.join(folder, "up.out")
        self.stderr_path = os.path.join(folder, "up.err")
        self.client_address = "unix:%s/c.sock" % folder
        self.worker_address = "unix:%s/w.sock" % folder
        self.tcp_address = None
        self.http_addresses = []  # the front door's listeners as bound (listen.http)
        self.worker_pids = set()
        self.process = None
        self.nofile = nofile
        self.env = env
        self.sampler = None

    def start(self, timeout=60):
        nofile = self.nofile

        def limits():
            # Soft and hard: the coordinator raises its soft limit to the hard one at start.
            if nofile:
                soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(nofile, hard), min(nofile, hard)))

        environment = dict(os.environ)
        environment.pop("MONARCH_TOKEN", None)
        environment.update(self.env or {})
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(
                [os.path.join(self.bin_dir, "monarch"), "up", "--config", self.config_path],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True,
                preexec_fn=limits if nofile else None, env=environment)
        register(self)
        deadline = time.monotonic() + timeout
        while True:
            text = self.stdout()
            match = re.search(r"ready — clients on ([^;\n]*)", text)
            if match:
                for address in match.group(1).split(", "):
                    if address.startswith("tcp:"):
                        self.tcp_address = address.strip()
                http = re.search(r"; http on ([^;\n]*)", text)
                if http:
                    self.http_addresses = [address.strip() for address in http.group(1).split(", ")]
                break
            if self.process.poll() is not None:
                problem = self.stderr().strip()
                self.stop()
                if "configuration" in problem.lower() or self.config_path in problem or "monarch.yml" in problem:
                    raise ConfigRejected(problem[-600:])
                raise StartFailed("monarch up exited (%s) before ready: %s" % (self.process.returncode, problem[-600:]))
            if time.monotonic() > deadline:
                problem = self.stderr()
                self.stop()
                raise StartFailed("monarch up printed no ready line within %d s: %s" % (timeout, problem[-600:]))
            time.sleep(0.05)
        self.sampler = RSSSampler(self.process.pid)
        self.sampler.start()
        self.refresh_workers()

    @property
    def http_address(self):
        """The front door's first listener (`listen.http`), as bound."""
        return self.http_addresses[0] if self.http_addresses else None

    @property
    def pid(self):
        return self.process.pid

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def stdout(self):
        with open(self.stdout_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stderr(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stderr_size(self):
        return os.path.getsize(self.stderr_path)

    def stderr_since(self, offset):
        with open(self.stderr_path, "rb") as f:
            f.seek(offset)
            return f.read()

    def connect(self, token=None, address=None, timeout=10):
        conn = wire.Conn(address or self.client_address, timeout=timeout)
        try:
            conn.hello(token=token, timeout=timeout)
        except BaseException:
            conn.close()
            raise
        return conn

    def status(self, token=None):
        with self.connect(token) as conn:
            data = conn.status()
        for worker in data.get("workers") or []:
            if worker.get("pid"):
                self.worker_pids.add(int(worker["pid"]))
        return data

    def refresh_workers(self):
        """Worker processes: the coordinator's children that are Monarch workers."""
        pids = [pid for pid in children_of(self.process.pid) if self.is_worker(pid)]
        self.worker_pids.update(pids)
        return pids

    def is_worker(self, pid):
        # The coordinator starts workers from the folder its own executable resolves to.
        program = cmdline(pid)
        folders = {self.bin_dir, os.path.realpath(self.bin_dir)}
        return any(program.startswith(folder + "/monarch-") for folder in folders) and program.endswith("-worker") \
            and process_state(pid) not in (None, "Z", "X")

    def workers_by_kind(self):
        """{kind: [pid]} of the running workers, from their command lines."""
        kinds = {}
        for pid in self.refresh_workers():
            program = os.path.basename(cmdline(pid))
            kind = program[len("monarch-"):-len("-worker")]
            kinds.setdefault(kind, []).append(pid)
        return kinds

    def stop(self):
        unregister(self)
        if self.sampler:
            self.sampler.stop()
        if self.process is not None and self.process.poll() is None:
            self.refresh_workers()
            # SIGTERM drains (quick when nothing is in flight); a second one stops at once.
            for signal_number, wait in ((signal.SIGTERM, 2), (signal.SIGTERM, 3)):
                try:
                    self.process.send_signal(signal_number)
                    self.process.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
                except ProcessLookupError:
                    break
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(5)
        # Workers exit when their connection closes; stopped or stuck ones do not.
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and any(self.is_worker(pid) for pid in self.worker_pids):
            time.sleep(0.05)
        for pid in self.worker_pids:
            if self.is_worker(pid):
                for signal_number in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.kill(pid, signal_number)
                    except ProcessLookupError:
                        pass

    def __repr__(self):
        return "<monarch up pid %s in %s>" % (self.process.pid if self.process else "-", self.folder)


class Sentinel:
    """sentinel.py as a child process; its probe records collected by a thread."""

    def __init__(self, address, probes, token=None, interval_ms=50):
        arguments = [sys.executable, SENTINEL_SCRIPT, address, json.dumps(probes), "--interval-ms", str(interval_ms)]
        if token is not None:
            arguments += ["--token", token]
        self.process = subprocess.Popen(arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        register(self)
        self.records = []
        self.broken = []
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.fatal = None
        threading.Thread(target=self._collect, daemon=True).start()
        if not self.ready.wait(20):
            self.stop()
            raise StartFailed("the sentinel did not connect within 20 s")
        if self.fatal:
            self.stop()
            raise StartFailed("the sentinel could not start: %s" % self.fatal)

    def _collect(self):
        for line in self.process.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if "ready" in record:
                self.ready.set()
            elif "fatal" in record:
                self.fatal = record["fatal"]
                self.ready.set()
            elif "broken" in record:
                with self.lock:
                    self.broken.append(record)
            else:
                with self.lock:
                    self.records.append(record)
        self.ready.set()

    def window(self, since, until=float("inf")):
        with self.lock:
            return [r for r in self.records if since <= r["t"] <= until]

    def count_since(self, since):
        return len(self.window(since))

    def stop(self):
        unregister(self)
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(3)

    def __repr__(self):
        return "<sentinel pid %d>" % self.process.pid


def raise_nofile(wanted):
    """Raises this process's RLIMIT_NOFILE soft limit towards `wanted` (up to the hard limit);
    returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
