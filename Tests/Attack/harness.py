"""The case registry and what a case gets to work with (its Context)."""
import random
import time

import wire

CASES = []  # in declaration order


class CaseFailure(Exception):
    """A case's expectation did not hold."""


class CaseTimeout(Exception):
    """A case ran past its time budget."""


class Case:
    def __init__(self, function, name, issue, asserts, config, budget, fault, quick_budget, tolerate, during):
        self.function = function
        self.name = name
        self.issue = issue
        self.asserts = asserts
        self.config = config
        self.budget = budget
        self.quick_budget = quick_budget or budget
        self.fault = fault
        self.tolerate = tolerate
        self.during = during


def case(name, issue, asserts, config=None, budget=120, quick_budget=None, fault=False, tolerate=(), during=None):
    """Registers a case: `issue` is the defect number(s) of issue 11 it covers ("1", "P" for the
    protocol, "F" for faults), `asserts` one line on what it checks, `config` its cluster
    options (config.build), `budget` its time limit in seconds (the case fails past it).
    `fault`: the sentinel's failures during the case are tolerated (noted), wrong content never;
    `tolerate`: failure codes the sentinel may get during the case (a global cap's `overloaded`);
    `during`: (p95, max) in ms for the sentinel during the case, instead of the suite's bounds."""
    def register(function):
        CASES.append(Case(function, name, issue, asserts, config or {}, budget, fault, quick_budget, tolerate, during))
        return function
    return register


class Context:
    """What a case runs with: the cluster, the servers, the options, and its findings."""

    def __init__(self, cluster, origin, upstream, suite, token=None):
        self.cluster = cluster
        self.origin = origin
        self.upstream = upstream
        self.suite = suite  # quick, idle_connections, kill_seconds, nofile, ...
        self.quick = suite.quick
        self.token = token
        self.rng = random.Random(11)
        self.problems = []
        self.notes = []
        self.sent = None
        self.answered = None
        self.extra = {}

    @property
    def bundle(self):
        return self.cluster.folder + "/Bundle"

    def connect(self, token="default", address=None, timeout=10):
        """A connection that said hello (with the case's token unless told otherwise)."""
        return self.cluster.connect(self.token if token == "default" else token, address, timeout)

    def check(self, condition, problem):
        """Records `problem` when `condition` is false; the case fails at its end then."""
        if not condition:
            self.problems.append(problem)
        return condition

    def fail(self, problem):
        raise CaseFailure(problem)

    def note(self, text):
        self.notes.append(text)

    def elapsed_since(self, start):
        return time.monotonic() - start


def expect_failure(reply, codes, where):
    """A problem text when `reply` is not a failure whose top-level code (or any attempt's
    code) is one of `codes`; None when it is."""
    if reply is None:
        return "%s: no answer" % where
    if reply.get("type") != "failure":
        return "%s: expected a failure %s, got %s" % (where, "/".join(codes), wire.describe(reply))
    found = wire.failure_codes(reply)
    if not any(code in found for code in codes):
        return "%s: expected %s, got %s" % (where, "/".join(codes), wire.describe(reply))
    return None
