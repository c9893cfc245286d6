#!/usr/bin/env python3
"""Writes the protocol test vectors, Protocols/vectors/frames.json, from the readable list below.

    python3 Protocols/vectors/generate.py           # (re)write frames.json
    python3 Protocols/vectors/generate.py --check   # exit 1 if frames.json is not what this script writes

Standard library only. The output is deterministic: vectors sorted by name, object keys sorted,
two-space indentation, a trailing newline. Edit the vectors here, never frames.json by hand.
The file format is described in Protocols/README.md, "Test vectors".

A vector is a byte stream built from parts:
  msg(obj)            a whole frame whose payload is obj as compact UTF-8 JSON; a decoder must yield obj
  raw(payload, obj)   a whole frame with a hand-written payload; a decoder must yield obj
  rawbody(obj, body)  a whole raw-body frame (section 2.1): 0x01, the JSON's length, obj as compact
                      JSON, then body; a decoder must yield obj with "body" holding body in base64
  bad(payload)        a whole frame with a payload that is a protocol error (the vector's error)
  data(bytes)         bytes put into the stream as they are: a bare header, a cut-off frame, ...
A valid vector holds msg and raw parts only. An invalid vector names its error; its expected
messages are those of the msg/raw parts before the first bad or data part (a receiver stops
at the first protocol error and ignores what follows).
"""

import base64
import json
import os
import re
import sys

FILE_VERSION = 1
DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024
ID_MAX = 2**53 - 1
HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = os.path.join(HERE, "frames.json")


# ---------------------------------------------------------------------------------------------
# Building blocks


def compact(obj):
    """The payload a sender writes for obj: compact JSON, UTF-8, non-ASCII characters unescaped."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def header(length):
    """The 4-byte big-endian length prefix."""
    return length.to_bytes(4, "big")


def framed(payload):
    return header(len(payload)) + payload


def b64(data):
    return base64.b64encode(data).decode("ascii")


def msg(obj):
    return ("msg", framed(compact(obj)), obj)


def raw(payload, obj):
    return ("msg", framed(payload), obj)


def rawbody_payload(obj, body):
    """A raw-body payload: 0x01, the 4-byte length of obj's JSON, the JSON, then the body."""
    json_part = compact(obj)
    return b"\x01" + header(len(json_part)) + json_part + body


def rawbody(obj, body):
    return ("msg", framed(rawbody_payload(obj, body)), dict(obj, body=b64(body)))


def bad(payload):
    return ("bad", framed(payload), None)


def data(stream_bytes):
    return ("data", stream_bytes, None)


VECTORS = []


def valid(name, description, *parts, max_frame_bytes=None, raw_bodies=False):
    assert all(kind == "msg" for kind, _, _ in parts), name
    VECTORS.append((name, description, parts, None, max_frame_bytes, raw_bodies))


def invalid(name, description, error, *parts, max_frame_bytes=None, raw_bodies=False):
    assert any(kind != "msg" for kind, _, _ in parts), name
    VECTORS.append((name, description, parts, error, max_frame_bytes, raw_bodies))


def request_payload_of_size(size, id=1):
    """A compact request payload of exactly `size` bytes (the path is padded with 'a')."""
    base = compact({"type": "request", "id": id, "path": ""})
    obj = {"type": "request", "id": id, "path": "a" * (size - len(base))}
    assert len(compact(obj)) == size
    return obj


# ---------------------------------------------------------------------------------------------
# Valid vectors: one or more frames, each decoding to one message.

valid("hello-client", "A client's hello with every optional field a client uses.",
      msg({"type": "hello", "role": "client", "version": 1, "token": "s3cr3t-t0ken", "pid": 4242,
           "name": "monarch-cli"}))
valid("hello-client-minimal", "The smallest hello: a client speaking version 1, no token.",
      msg({"type": "hello", "role": "client", "version": 1}))
valid("hello-worker", "A cache worker registering: kind, capacity, pid, name.",
      msg({"type": "hello", "role": "worker", "version": 1, "kind": "cache", "capacity": 64, "pid": 31337,
           "name": "cache-1"}))
valid("welcome", "The listener accepts a hello: version, frame limit, worker id, heartbeat.",
      msg({"type": "welcome", "version": 1, "maxFrameBytes": 16777216, "workerId": "cache-1",
           "heartbeatMs": 5000}))
valid("request-minimal", "The smallest request: type, id and path only.",
      msg({"type": "request", "id": 7, "path": "users/1"}))
valid("request-full", "A client request with domain, query (order kept, duplicate names, items without value), "
      "method, headers, a base64 JSON body, policy and deadline.",
      msg({"type": "request", "id": 8, "path": "users/1/notes", "domain": "api",
           "query": [{"name": "tag", "value": "work"}, {"name": "tag", "value": "home"},
                     {"name": "draft", "value": None}, {"name": "pinned"}, {"name": "q", "value": ""}],
           "method": "POST",
           "headers": {"content-type": "application/json", "accept": "application/json"},
           "body": b64(b'{"text":"buy milk"}'),
           "policy": "networkFirst", "deadlineMs": 2500}))
valid("request-forwarded-to-worker", "A request as the coordinator forwards it to a worker: route parameters, "
      "upstream URL, TTL and cache key added, deadline reduced to what is left.",
      msg({"type": "request", "id": 12, "path": "users/1", "domain": "api", "policy": "cacheFirst",
           "deadlineMs": 4800, "params": {"id": "1"}, "upstream": "http://127.0.0.1:8080/users/1",
           "ttlMs": 60000, "key": "users/1"}))
valid("request-relayed", "A request relayed for an HTTP client: HTTP's caching rules, the upstream's answer as it is.",
      msg({"type": "request", "id": 18, "path": "users/1", "method": "HEAD",
           "headers": {"cache-control": "max-age=60", "if-none-match": "\"v1\""}, "relay": True}))
PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\xff\xfe\xc0\xaf"
try:
    PNG_BYTES.decode("utf-8")
    raise AssertionError("the binary body must not be valid UTF-8")
except UnicodeDecodeError:
    pass
valid("response-binary-body", "A network response whose body is binary and not valid UTF-8 (it travels as base64), "
      "with headers and cache metadata.",
      msg({"type": "response", "id": 7, "status": 200, "source": "network",
           "headers": {"content-type": "image/png", "etag": "\"a1b2c3\""},
           "body": b64(PNG_BYTES), "stale": False, "ageMs": 0, "ttlMs": 60000, "cacheable": True}))
valid("response-stale-from-cache", "A cache answering with an entry past its TTL (cacheThenRefresh).",
      msg({"type": "response", "id": 9, "status": 200, "source": "cache",
           "headers": {"content-type": "application/json"}, "body": b64(b'{"id":1,"name":"Ada"}'),
           "stale": True, "ageMs": 93000, "ttlMs": 60000}))
valid("miss", "A worker has no answer: ask the next provider.",
      msg({"type": "miss", "id": 12, "source": "cache", "reason": "no entry for users/1"}))
valid("failure-exhausted", "Every provider missed or failed; attempts list each outcome in chain order.",
      msg({"type": "failure", "id": 7, "error": {
          "code": "exhausted", "message": "no provider could answer users/1",
          "attempts": [{"provider": "cache", "outcome": "miss"},
                       {"provider": "network", "outcome": "failure", "code": "connectionFailed",
                        "message": "connection refused by 127.0.0.1:8080"}]}}))
valid("failure-deadline-exceeded", "The deadline passed while the network worker was still fetching.",
      msg({"type": "failure", "id": 8, "error": {
          "code": "deadlineExceeded", "message": "no answer within 2500 ms",
          "attempts": [{"provider": "cache", "outcome": "miss"}, {"provider": "network", "outcome": "timeout"}]}}))
valid("cancel", "Abandon request 7.",
      msg({"type": "cancel", "id": 7}))
valid("ping", "A ping with an id.",
      msg({"type": "ping", "id": 99}))
valid("pong", "The pong echoing ping 99.",
      msg({"type": "pong", "id": 99}))
valid("ping-pong-without-id", "The id of ping and pong is optional.",
      msg({"type": "ping"}), msg({"type": "pong"}))
valid("store", "Write-back: the coordinator hands a cache worker a response to keep.",
      msg({"type": "store", "id": 13, "key": "users/1", "status": 200,
           "headers": {"content-type": "application/json"}, "body": b64(b'{"id":1,"name":"Ada"}'),
           "ttlMs": 60000}))
valid("store-tags", "Write-back of an entry its upstream tagged user-1 and users.",
      msg({"type": "store", "id": 14, "key": "GET api users/1", "status": 200, "body": b64(b'{"id":1}'),
           "tags": ["user-1", "users"]}))
valid("store-variant", "Write-back of a variant: the response varies on Accept-Language and Cookie; the request sent Accept-Language fr and no cookie.",
      msg({"type": "store", "id": 15, "key": "GET api news", "status": 200,
           "headers": {"vary": "Accept-Language, Cookie"}, "body": b64(b'bonjour'),
           "variant": "accept-language:fr\ncookie"}))
invalid("store-variant-number", "A store whose variant is not a string.", "invalidField",
        bad(compact({"type": "store", "id": 16, "key": "GET api news", "status": 200, "variant": 7})))
valid("invalidate-key", "Drop one cache entry.",
      msg({"type": "invalidate", "id": 3, "key": "users/1"}))
valid("invalidate-prefix", "Drop every cache entry whose key starts with users/.",
      msg({"type": "invalidate", "id": 4, "prefix": "users/"}))
valid("invalidate-tag", "Drop every cache entry an upstream tagged user-1.",
      msg({"type": "invalidate", "id": 5, "tag": "user-1"}))
valid("invalidate-path", "Drop the entries of the resource path users/1 (resolved through the routes), in its route's domain.",
      msg({"type": "invalidate", "id": 6, "path": "users/1"}))
valid("invalidate-path-prefix", "Drop the entries of every path starting with users/ in the domain api.",
      msg({"type": "invalidate", "id": 7, "pathPrefix": "users/", "domain": "api"}))
valid("invalidate-soft-tag", "Soft purge: mark every entry tagged user-1 stale instead of dropping it.",
      msg({"type": "invalidate", "id": 8, "tag": "user-1", "soft": True}))
valid("watch-path", "Follow the entries of the resource path users/1 (resolved through the routes).",
      msg({"type": "watch", "id": 20, "path": "users/1"}))
valid("watch-tag-and-prefix", "Two watches on one connection: every entry tagged users, every key starting with GET api users/.",
      msg({"type": "watch", "id": 21, "tag": "users"}),
      msg({"type": "watch", "id": 22, "prefix": "GET api users/"}))
valid("unwatch", "Stop watch 20.",
      msg({"type": "unwatch", "id": 23, "watch": 20}))
valid("changed-events", "Pushed changes: an entry stored with its tags, refreshed, an invalidation by tag, and an overflow.",
      msg({"type": "changed", "watch": 20, "event": "stored", "key": "GET api users/1", "tags": ["user-1", "users"]}),
      msg({"type": "changed", "watch": 20, "event": "refreshed", "key": "GET api users/1"}),
      msg({"type": "changed", "watch": 21, "event": "invalidated", "tag": "users"}),
      msg({"type": "changed", "watch": 22, "event": "overflow", "dropped": 312}))
valid("shared-changes", "A cache worker forwards changes another coordinator made to the shared store: an entry stored with its tags, invalidations by key and prefix.",
      msg({"type": "sharedChange", "change": "9f2c41d07ab3e5.17", "event": "stored", "key": "GET api users/1", "tags": ["user-1", "users"]}),
      msg({"type": "sharedChange", "change": "9f2c41d07ab3e5.18", "event": "invalidated", "key": "GET api users/1"}),
      msg({"type": "sharedChange", "change": "41aa0c9e3d.3", "event": "invalidated", "prefix": "GET api users/"}))
valid("status", "Ask the coordinator for its status report.",
      msg({"type": "status", "id": 5}))
valid("scale", "Ask the coordinator to run four network workers.",
      msg({"type": "scale", "id": 6, "kind": "network", "count": 4}))
valid("result", "Success replies: one with free-form data (a scale), one without data (a store).",
      msg({"type": "result", "id": 6, "data": {"kind": "network", "count": 4, "previous": 2,
                                               "workers": [{"workerId": "network-3", "pid": 5120}]}}),
      msg({"type": "result", "id": 13}))
valid("error", "A protocol error report, naming the id of the message concerned.",
      msg({"type": "error", "code": "unknownType", "message": "unknown message type \"subscribe\"", "id": 21}))
valid("unknown-extra-fields", "Fields this version does not define are ignored, whatever their JSON type.",
      msg({"type": "request", "id": 14, "path": "users/2", "priority": "high",
           "trace": {"span": "4bf92f3577b34da6", "sampled": True}, "x-experimental": [1, 2.5, None]}))
valid("null-optional-fields", "An optional field given as null means the same as an absent one.",
      msg({"type": "response", "id": 15, "status": 404, "source": None, "headers": None, "body": None,
           "stale": None, "ageMs": None, "ttlMs": None, "cacheable": None}))
valid("unicode-path", "Non-ASCII text as raw UTF-8: 2-, 3- and 4-byte sequences in the path and a header.",
      msg({"type": "request", "id": 16, "path": "docs/café/日本語/🦋.txt",
           "headers": {"accept-language": "fr-CH, français"}}))
valid("json-escapes", "JSON string escapes, including a surrogate pair, decode to the characters they stand for.",
      raw(rb'{"type":"request","id":17,"path":"docs\/caf\u00e9 \"q\" \\ \ud83e\udd8b",'
          rb'"headers":{"x-note":"line1\nline2\ttab"}}',
          {"type": "request", "id": 17, "path": "docs/café \"q\" \\ 🦋",
           "headers": {"x-note": "line1\nline2\ttab"}}))
valid("whitespace-around-object", "JSON whitespace before, inside and after the object is allowed.",
      raw(b' \r\n\t{ "type" : "ping" ,\n  "id" : 1 }\n ', {"type": "ping", "id": 1}))
valid("pipelined-requests", "Three requests in one stream, written back to back without waiting for replies.",
      msg({"type": "request", "id": 1, "path": "users/1"}),
      msg({"type": "request", "id": 2, "path": "users/2", "policy": "cacheFirst"}),
      msg({"type": "request", "id": 3, "path": "assets/logo.png", "domain": "assets"}))
valid("out-of-order-replies", "Replies come in any order: 2 before 3 before 1 (a 204 with an empty body, "
      "a failure, then a 200).",
      msg({"type": "response", "id": 2, "status": 204, "source": "network", "body": ""}),
      msg({"type": "failure", "id": 3, "error": {"code": "noRoute", "message": "no route matches nope/3"}}),
      msg({"type": "response", "id": 1, "status": 200, "source": "cache", "body": b64(b"hello")}))
LARGE_BODY = bytes((i * 7 + i // 251) % 256 for i in range(51000))
valid("large-frame", "A frame of more than 64 KiB (a length needing three bytes): a 51,000-byte body.",
      msg({"type": "response", "id": 18, "status": 200, "source": "bundle",
           "headers": {"content-type": "application/octet-stream"}, "body": b64(LARGE_BODY)}))
valid("frame-at-max-override", "A 64-byte payload where the receiver's maximum is 64: accepted.",
      msg(request_payload_of_size(64)), max_frame_bytes=64)
valid("empty-stream", "A connection closed before any byte: no message, no error.")
valid("id-limits", "The smallest and largest valid ids: 0 and 2^53 - 1.",
      msg({"type": "ping", "id": 0}),
      msg({"type": "request", "id": ID_MAX, "path": "users/1"}))

# Raw-body payloads (section 2.1), on connections that agreed to rawBodies.
valid("raw-body-response", "A response whose binary body (not valid UTF-8) follows its JSON as raw bytes.",
      rawbody({"type": "response", "id": 7, "status": 200, "source": "cache",
               "headers": {"content-type": "image/png"}, "ttlMs": 60000}, PNG_BYTES),
      raw_bodies=True)
valid("raw-body-request-and-store", "A PUT request and a store, each with a raw body.",
      rawbody({"type": "request", "id": 3, "path": "notes/1", "method": "PUT",
               "headers": {"content-type": "application/json"}}, b'{"text":"buy milk"}'),
      rawbody({"type": "store", "id": 4, "key": "notes/1", "status": 200, "ttlMs": 1000, "tags": ["notes"]},
              bytes(range(256))),
      raw_bodies=True)
valid("raw-body-empty", "A raw body of no bytes: the payload ends with the JSON; the body is empty, not absent.",
      rawbody({"type": "response", "id": 5, "status": 204}, b""),
      raw_bodies=True)
valid("raw-body-mixed-with-json", "With rawBodies agreed, plain payloads still decode: a base64 body, a raw one, "
      "a message without a body.",
      msg({"type": "response", "id": 1, "status": 200, "body": b64(b"plain")}),
      rawbody({"type": "response", "id": 2, "status": 200, "body": None}, b"raw \x00\xff"),
      msg({"type": "ping", "id": 3}),
      raw_bodies=True)

# ---------------------------------------------------------------------------------------------
# Invalid vectors: each has exactly one defect, named by its error.

# Framing
invalid("oversized-announced-length", "A header announcing 0x7fffffff bytes, then a few bytes: rejected from "
        "the header alone, nothing allocated.", "oversizedFrame",
        data(header(0x7FFFFFFF) + b'{"ty'))
invalid("oversized-over-override", "A whole 65-byte payload where the receiver's maximum is 64.", "oversizedFrame",
        data(framed(compact(request_payload_of_size(65)))), max_frame_bytes=64)
invalid("oversized-after-valid-frame", "A ping, then a header announcing 16 MiB + 1 bytes (default maximum).",
        "oversizedFrame",
        msg({"type": "ping", "id": 1}), data(header(DEFAULT_MAX_FRAME_BYTES + 1) + b'{"type":"request"'))
invalid("truncated-header", "The stream ends after 2 bytes of a header.", "truncatedFrame",
        data(b"\x00\x00"))
_CUT = framed(compact({"type": "request", "id": 1, "path": "users/1"}))
invalid("truncated-payload", f"A header announcing {len(_CUT) - 4} bytes, then only 12 before the stream ends.",
        "truncatedFrame",
        data(_CUT[:16]))
invalid("truncated-header-only", "A complete header announcing 16 bytes and no payload at all.", "truncatedFrame",
        data(header(16)))
invalid("truncated-after-valid-frame", "A whole request, then half of a second one.", "truncatedFrame",
        msg({"type": "request", "id": 1, "path": "users/1"}),
        data(framed(compact({"type": "request", "id": 2, "path": "users/2"}))[:20]))

# UTF-8
invalid("invalid-utf8-bytes", "Bytes ff fe inside a string.", "invalidUTF8",
        bad(b'{"type":"request","id":1,"path":"a\xff\xfeb"}'))
invalid("invalid-utf8-overlong", "An overlong encoding of '/' (c0 af).", "invalidUTF8",
        bad(b'{"type":"request","id":1,"path":"docs\xc0\xafa"}'))
invalid("invalid-utf8-surrogate", "A UTF-16 surrogate (U+D800) encoded in UTF-8 (ed a0 80).", "invalidUTF8",
        bad(b'{"type":"request","id":1,"path":"a\xed\xa0\x80"}'))
invalid("invalid-utf8-cut-sequence", "A 3-byte sequence cut after 2 bytes (e2 82) before the closing quote.",
        "invalidUTF8",
        bad(b'{"type":"request","id":1,"path":"price \xe2\x82"}'))

# JSON
invalid("invalid-json-incomplete", "The payload stops inside the object.", "invalidJSON",
        bad(b'{"type":'))
invalid("invalid-json-trailing-garbage", "A complete object followed by more than whitespace.", "invalidJSON",
        bad(b'{"type":"ping"} x'))
invalid("invalid-json-empty-payload", "A zero-length frame: it cannot hold an object.", "invalidJSON",
        bad(b""))
invalid("invalid-json-byte-order-mark", "A payload starting with the UTF-8 byte order mark (ef bb bf).", "invalidJSON",
        bad(b'\xef\xbb\xbf{"type":"cancel","id":7}'))
invalid("invalid-json-utf16", "The object in UTF-16LE: valid UTF-8 bytes (NULs), but not UTF-8 JSON text.", "invalidJSON",
        bad('{"type":"cancel","id":7}'.encode("utf-16-le")))
invalid("invalid-json-nul-after-object", "A NUL byte after the object: not JSON whitespace.", "invalidJSON",
        bad(b'{"type":"cancel","id":7}\x00'))
invalid("invalid-json-duplicate-name", "A member name twice at the top level (parsers keep the first or the last).",
        "invalidJSON",
        bad(b'{"type":"request","id":1,"path":"a","path":"b"}'))
invalid("invalid-json-duplicate-escaped-name", "The same name twice in headers, once escaped (\\u0061 is a).",
        "invalidJSON",
        bad(b'{"type":"request","id":1,"path":"p","headers":{"a":"1","\\u0061":"2"}}'))
invalid("invalid-json-duplicate-type", "The type given twice.", "invalidJSON",
        bad(b'{"type":"ping","id":1,"type":"cancel"}'))
invalid("invalid-json-nan", "NaN is not JSON (some parsers accept it unless told not to).", "invalidJSON",
        bad(b'{"type":"ping","id":NaN}'))
invalid("not-an-object-array", "A JSON array holding a message is not a message.", "notAnObject",
        bad(b'[{"type":"ping"}]'))
invalid("not-an-object-string", "A JSON string.", "notAnObject",
        bad(b'"ping"'))
invalid("not-an-object-number", "A JSON number.", "notAnObject",
        bad(b"42"))
invalid("not-an-object-null", "JSON null.", "notAnObject",
        bad(b"null"))

# type
invalid("missing-type", "An object without type.", "missingType",
        bad(compact({"id": 1, "path": "users/1"})))
invalid("type-not-a-string", "type is a number.", "missingType",
        bad(b'{"type":5}'))
invalid("unknown-type", "type names no message of version 1.", "unknownType",
        bad(compact({"type": "subscribe", "id": 1, "key": "users/1"})))
invalid("unknown-type-wrong-case", "Type names are case-sensitive.", "unknownType",
        bad(compact({"type": "Ping", "id": 1})))
invalid("stops-at-first-error", "A ping, a frame of unknown type, another ping: the receiver stops at the error "
        "and never decodes the last frame.", "unknownType",
        msg({"type": "ping", "id": 1}), bad(compact({"type": "subscribe", "id": 2})), msg({"type": "ping", "id": 3}))

# Fields: missing
invalid("request-missing-id", "A request without id.", "missingField",
        bad(compact({"type": "request", "path": "users/1"})))
invalid("request-missing-path", "A request without path.", "missingField",
        bad(compact({"type": "request", "id": 1})))
invalid("hello-missing-role", "A hello without role.", "missingField",
        bad(compact({"type": "hello", "version": 1})))
invalid("hello-worker-missing-kind", "A worker's hello must name its kind.", "missingField",
        bad(compact({"type": "hello", "role": "worker", "version": 1, "capacity": 8})))
invalid("invalidate-missing-target", "An invalidate with neither key nor prefix.", "missingField",
        bad(compact({"type": "invalidate", "id": 1})))
invalid("failure-missing-error-code", "A failure whose error has no code.", "missingField",
        bad(compact({"type": "failure", "id": 1, "error": {"message": "boom"}})))
invalid("query-item-missing-name", "A query item without name.", "missingField",
        bad(compact({"type": "request", "id": 1, "path": "search", "query": [{"value": "x"}]})))

# Fields: wrong type or out of range
invalid("id-string", "An id given as a string.", "invalidField",
        bad(compact({"type": "request", "id": "1", "path": "users/1"})))
invalid("id-negative", "A negative id.", "invalidField",
        bad(compact({"type": "request", "id": -1, "path": "users/1"})))
invalid("id-fraction", "An id with a fraction.", "invalidField",
        bad(b'{"type":"request","id":1.5,"path":"users/1"}'))
invalid("id-fraction-too-small-for-a-double", "An id whose fraction a 64-bit float rounds away (1.0000000000000001).",
        "invalidField",
        bad(b'{"type":"cancel","id":1.0000000000000001}'))
invalid("status-fraction-too-small-for-a-double", "A status whose fraction a 64-bit float rounds away.", "invalidField",
        bad(b'{"type":"response","id":1,"status":200.00000000000001}'))
invalid("id-underflow", "An id too small for a 64-bit float (1e-400), which rounds it to 0.", "invalidField",
        bad(b'{"type":"cancel","id":1e-400}'))
invalid("id-too-large", "An id of 2^53, one above the largest valid id.", "invalidField",
        bad(compact({"type": "request", "id": ID_MAX + 1, "path": "users/1"})))
invalid("request-path-null", "null for a required field is a wrong type, not an absent field.", "invalidField",
        bad(compact({"type": "request", "id": 1, "path": None})))
invalid("response-status-out-of-range", "Status 42 is outside 100...599.", "invalidField",
        bad(compact({"type": "response", "id": 1, "status": 42})))
invalid("policy-unknown", "A policy that does not exist.", "invalidField",
        bad(compact({"type": "request", "id": 1, "path": "users/1", "policy": "sometimes"})))
invalid("method-leading-digit", "Methods start with an uppercase letter.", "invalidField",
        bad(compact({"type": "request", "id": 1, "path": "users/1", "method": "9GET"})))
invalid("method-lowercase", "Methods are uppercase tokens.", "invalidField",
        bad(compact({"type": "request", "id": 1, "path": "users/1", "method": "get"})))
invalid("body-not-base64", "A body with a character outside the base64 alphabet.", "invalidField",
        bad(compact({"type": "request", "id": 1, "path": "users/1", "method": "POST", "body": "aGVsbG8*"})))
invalid("body-base64-unpadded", "Base64 without its padding (\"hi\" is aGk=, not aGk).", "invalidField",
        bad(compact({"type": "response", "id": 1, "status": 200, "body": "aGk"})))
invalid("header-value-not-string", "Header values are strings.", "invalidField",
        bad(compact({"type": "response", "id": 1, "status": 200, "headers": {"content-length": 5}})))
invalid("invalidate-key-and-prefix", "An invalidate with both key and prefix.", "invalidField",
        bad(compact({"type": "invalidate", "id": 1, "key": "users/1", "prefix": "users/"})))
invalid("invalidate-soft-not-boolean", "An invalidate whose soft is a string, not true or false.", "invalidField",
        bad(compact({"type": "invalidate", "id": 1, "tag": "users", "soft": "yes"})))
invalid("watch-missing-target", "A watch naming nothing to follow.", "missingField",
        bad(compact({"type": "watch", "id": 1})))
invalid("watch-key-and-tag", "A watch with both key and tag.", "invalidField",
        bad(compact({"type": "watch", "id": 1, "key": "GET api users/1", "tag": "users"})))
invalid("unwatch-missing-watch", "An unwatch without the watch it stops.", "missingField",
        bad(compact({"type": "unwatch", "id": 2})))
invalid("changed-unknown-event", "A changed message with an event this version does not define.", "invalidField",
        bad(compact({"type": "changed", "watch": 3, "event": "deleted", "key": "GET api users/1"})))
invalid("changed-missing-event", "A changed message without its event.", "missingField",
        bad(compact({"type": "changed", "watch": 3})))
invalid("shared-change-two-targets", "A sharedChange naming both a key and a tag.", "invalidField",
        bad(compact({"type": "sharedChange", "change": "a.1", "event": "invalidated", "key": "GET api users/1", "tag": "users"})))
invalid("shared-change-stored-prefix", "A stored sharedChange naming a prefix instead of its key.", "missingField",
        bad(compact({"type": "sharedChange", "change": "a.2", "event": "stored", "prefix": "GET api users/"})))
invalid("shared-change-empty-id", "A sharedChange whose change id is empty.", "invalidField",
        bad(compact({"type": "sharedChange", "change": "", "event": "invalidated", "tag": "users"})))
invalid("shared-change-missing-id", "A sharedChange without its change id.", "missingField",
        bad(compact({"type": "sharedChange", "event": "invalidated", "tag": "users"})))
invalid("shared-change-refreshed", "A sharedChange with an event other than stored or invalidated.", "invalidField",
        bad(compact({"type": "sharedChange", "change": "a.3", "event": "refreshed", "key": "GET api users/1"})))
invalid("invalidate-path-and-tag", "An invalidate with both path and tag.", "invalidField",
        bad(compact({"type": "invalidate", "id": 1, "path": "users/1", "tag": "user-1"})))
invalid("scale-count-negative", "A negative worker count.", "invalidField",
        bad(compact({"type": "scale", "id": 1, "kind": "network", "count": -1})))
invalid("hello-role-admin", "A role that does not exist.", "invalidField",
        bad(compact({"type": "hello", "role": "admin", "version": 1})))
invalid("hello-version-zero", "Versions start at 1.", "invalidField",
        bad(compact({"type": "hello", "role": "client", "version": 0})))
invalid("attempt-outcome-unknown", "An attempt outcome that does not exist.", "invalidField",
        bad(compact({"type": "failure", "id": 1, "error": {
            "code": "exhausted", "message": "no provider could answer",
            "attempts": [{"provider": "network", "outcome": "exploded"}]}})))

RAW_OK = {"type": "response", "id": 9, "status": 200}
invalid("raw-body-not-agreed", "A raw-body payload on a connection that did not agree to rawBodies.", "invalidJSON",
        bad(rawbody_payload(RAW_OK, b"hi")))
invalid("raw-body-short-header", "A raw-body payload cut inside its 5-byte header.", "invalidJSON",
        bad(b"\x01\x00\x00"), raw_bodies=True)
invalid("raw-body-json-length-zero", "A raw-body payload announcing 0 bytes of JSON.", "invalidJSON",
        bad(b"\x01\x00\x00\x00\x00" + compact(RAW_OK)), raw_bodies=True)
invalid("raw-body-json-length-past-end", "A raw-body payload announcing more JSON than it holds.", "invalidJSON",
        bad(b"\x01" + header(len(compact(RAW_OK)) + 1) + compact(RAW_OK)), raw_bodies=True)
invalid("raw-body-json-invalid-utf8", "The JSON of a raw-body payload is checked as any payload: bytes c0 af in it.",
        "invalidUTF8",
        bad(b"\x01" + header(len(b'{"type":"response","id":9,"status":200,"source":"\xc0\xaf"}'))
            + b'{"type":"response","id":9,"status":200,"source":"\xc0\xaf"}' + b"body"), raw_bodies=True)
invalid("raw-body-after-ping", "A raw body after a message that carries none.", "invalidField",
        bad(rawbody_payload({"type": "ping", "id": 1}, b"x")), raw_bodies=True)
invalid("raw-body-given-twice", "A body in the JSON and as raw bytes.", "invalidField",
        bad(rawbody_payload(dict(RAW_OK, body=b64(b"one")), b"two")), raw_bodies=True)


# ---------------------------------------------------------------------------------------------
# Output

NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def payload_message(payload):
    """The message a payload's bytes say: its JSON, or for a raw-body payload its JSON with the body in base64."""
    if payload[:1] != b"\x01":
        return json.loads(payload.decode("utf-8"))
    json_count = int.from_bytes(payload[1:5], "big")
    return dict(json.loads(payload[5:5 + json_count].decode("utf-8")), body=b64(payload[5 + json_count:]))


def build_vector(name, description, parts, error, max_frame_bytes, raw_bodies):
    assert NAME.match(name), f"{name}: names are kebab-case"
    limit = max_frame_bytes or DEFAULT_MAX_FRAME_BYTES
    stream = b"".join(part for _, part, _ in parts)
    messages = []
    for kind, part, obj in parts:
        if kind != "msg":
            break
        payload = part[4:]
        # A readable expectation must say what the bytes say.
        assert payload_message(payload) == obj, f"{name}: payload and expectation differ"
        assert 0 < len(payload) <= limit, f"{name}: a message frame exceeds the limit"
        messages.append(obj)
    expect = {"messages": messages}
    if error is not None:
        expect["error"] = error
    vector = {"name": name, "description": description, "hex": stream.hex(), "expect": expect}
    if max_frame_bytes is not None:
        vector["maxFrameBytes"] = max_frame_bytes
    if raw_bodies:
        vector["rawBodies"] = True
    return vector


def render():
    """The text of frames.json."""
    vectors = [build_vector(*v) for v in VECTORS]
    names = [v["name"] for v in vectors]
    assert len(set(names)) == len(names), "vector names are unique"
    document = {
        "version": FILE_VERSION,
        "defaultMaxFrameBytes": DEFAULT_MAX_FRAME_BYTES,
        "vectors": sorted(vectors, key=lambda v: v["name"]),
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def main(argv):
    text = render()
    if argv[1:] == ["--check"]:
        with open(OUTPUT, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{OUTPUT} is out of date: run {argv[0]}", file=sys.stderr)
                return 1
        print(f"{OUTPUT} is up to date ({len(VECTORS)} vectors)")
        return 0
    if argv[1:]:
        print(f"usage: {argv[0]} [--check]", file=sys.stderr)
        return 2
    with open(OUTPUT, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"wrote {len(VECTORS)} vectors to {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
