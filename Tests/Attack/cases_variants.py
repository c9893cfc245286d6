"""Cases on what a cached answer depends on (issue 26, finding 5): variants by Vary, requests
with credentials, tracing ids."""
import itertools
import json

import wire
from harness import case

UNIQUE = itertools.count(1)


def q(**items):
    return [{"name": name, "value": str(value)} for name, value in items.items()]


def echoed_headers(reply):
    """The request headers the upstream saw, from an /echo answer: {lowercase name: value}."""
    if reply.get("type") != "response":
        return None
    return {name.lower(): value for name, value in json.loads(wire.body_of(reply))["headers"]}


def upstream_requests(ctx, path):
    return [entry for entry in ctx.upstream.log() if entry["target"].startswith(path)]


@case("vary-and-credentials", "26.5", "Vary: Accept-Language keeps fr and en answers apart (fr never served to en, "
      "both then hits); Vary: Accept never serves XML to a JSON client; a request with X-Api-Key, Authorization "
      "or Cookie reaches the origin past an anonymous entry and its answer is never served to anonymous callers; "
      "a tracing id never comes back in another caller's cached answer", budget=60)
def vary_and_credentials(ctx):
    with ctx.connect() as conn:
        # Accept-Language: each language its own variant, both kept.
        query = q(u=next(UNIQUE), vary="Accept-Language")
        answers = {}
        for language in ("fr", "en", "fr", "en"):
            reply = conn.get("up/echo", query=query, headers={"accept-language": language})
            seen = echoed_headers(reply)
            ctx.check(seen is not None and seen.get("accept-language") == language,
                      "Accept-Language %s was answered with the answer for %s" % (
                          language, seen.get("accept-language") if seen else wire.describe(reply)))
            answers.setdefault(language, []).append(reply.get("source"))
        ctx.check(answers["fr"][1] == "cache" and answers["en"][1] == "cache",
                  "the second fr and en requests were not both cache hits (sources %s): variants do not coexist" % answers)

        # Accept: XML stored first, then a JSON client.
        query = q(u=next(UNIQUE), by="accept", vary="Accept")
        for accept, start in (("application/xml", b"<you>"), ("application/json", b"{"),
                              ("application/json", b"{"), ("application/xml", b"<you>")):
            reply = conn.get("up/personal", query=query, headers={"accept": accept})
            body = wire.body_of(reply) if reply.get("type") == "response" else b""
            ctx.check(body.startswith(start), "Accept %s got %r" % (accept, body[:60]))

        # Credentials: an anonymous entry first, then credentialed requests, then anonymous again.
        query = q(u=next(UNIQUE), cc="max-age=60")
        anonymous = conn.get("up/personal", query=query)
        ctx.check(wire.body_of(anonymous) == b"you are anonymous", "anonymous: %s" % wire.describe(anonymous))
        ctx.upstream.mark()
        keyed = conn.get("up/personal", query=query, headers={"x-api-key": "alice-secret"})
        ctx.check(wire.body_of(keyed) == b"you are alice-secret",
                  "a request with X-Api-Key was answered %r (source %s): an anonymous entry decided what it saw" % (
                      wire.body_of(keyed)[:60], keyed.get("source")))
        reached = [entry for entry in upstream_requests(ctx, "/personal")
                   if any(name.lower() == "x-api-key" and value == "alice-secret" for name, value in entry["headers"])]
        ctx.check(len(reached) == 1, "the X-Api-Key reached the origin %d time(s), expected once" % len(reached))
        query = q(u=next(UNIQUE))
        conn.get("up/echo", query=query)
        for header, value in (("authorization", "Bearer alice"), ("cookie", "sid=alice")):
            reply = conn.get("up/echo", query=query, headers={header: value})
            seen = echoed_headers(reply) or {}
            ctx.check(seen.get(header) == value and reply.get("source") == "network",
                      "a request with %s was answered from %s without reaching the origin with it" % (
                          header, reply.get("source")))
        again = conn.get("up/echo", query=query)
        seen = echoed_headers(again) or {}
        ctx.check("authorization" not in seen and "cookie" not in seen,
                  "an anonymous request got a credentialed request's answer: %s" % sorted(seen))
        after_keyed = conn.get("up/personal", query=q(u=next(UNIQUE)), headers={"x-api-key": "bob-secret"})
        ctx.check(wire.body_of(after_keyed) == b"you are bob-secret", "bob: %s" % wire.describe(after_keyed))

        # Tracing ids: never another caller's in a cached answer.
        query = q(u=next(UNIQUE))
        conn.get("up/echo", query=query, headers={"x-request-id": "trace-one"})
        second = conn.get("up/echo", query=query, headers={"x-request-id": "trace-two"})
        ctx.check(b"trace-one" not in wire.body_of(second) and "trace-one" not in json.dumps(second.get("headers") or {}),
                  "a cached answer carried another caller's X-Request-Id")
