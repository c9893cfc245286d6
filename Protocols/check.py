#!/usr/bin/env python3
"""Checks the protocol folder against itself: schemas, test vectors and specification.

    python3 Protocols/check.py [-v]

Needs the `jsonschema` package (it brings `referencing`); works offline. What it checks:

  * every file in schemas/ is a valid JSON Schema (draft 2020-12) with the expected $id, there is
    one per message type, and message.schema.json dispatches on exactly those types;
  * vectors/frames.json is well formed and is exactly what vectors/generate.py writes;
  * every vector, decoded by the reference decoder below (fed whole, then byte by byte — both
    must agree), gives the vector's messages and error: lengths are re-derived from the bytes;
  * every message of every vector validates against message.schema.json (and still does with an
    unknown field added), and every body in it is strict base64;
  * the offending payload of every vector whose error is notAnObject, missingType, unknownType,
    missingField or invalidField FAILS message.schema.json; for missingField/invalidField the
    schema reports exactly one violation, and of the kind the code names (a "required"
    violation for missingField, anything else for invalidField), so each such vector holds
    exactly the one defect it is about;
  * every report in vectors/reports.json (the data of `status` and `scale` results) validates
    against its schema (status-report, scale-report) exactly when it says it is valid;
  * README.md has a section for every message type and names every error code.

Prints failures, then a closing line "N passed, M failed"; exits 1 when anything failed.
"""

import base64
import binascii
import decimal
import importlib.util
import json
import os
import re
import sys

try:
    import jsonschema
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
except ImportError:  # pragma: no cover
    sys.exit("check.py needs the jsonschema package: pip install jsonschema")

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(HERE, "schemas")
VECTORS = os.path.join(HERE, "vectors", "frames.json")
REPORTS = os.path.join(HERE, "vectors", "reports.json")
# Schemas of the data of `result` messages (not message types themselves).
REPORT_SCHEMAS = ["scale-report.schema.json", "status-report.schema.json"]
GENERATOR = os.path.join(HERE, "vectors", "generate.py")
README = os.path.join(HERE, "README.md")

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://monarch.invalid/protocol/1/"
DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024

MESSAGE_TYPES = [
    "hello", "welcome", "request", "response", "miss", "failure", "cancel", "ping", "pong",
    "store", "invalidate", "status", "scale", "result", "error", "watch", "unwatch", "changed",
    "sharedChange",
]
PROTOCOL_ERROR_CODES = [
    "oversizedFrame", "truncatedFrame", "invalidUTF8", "invalidJSON", "notAnObject", "missingType",
    "unknownType", "missingField", "invalidField", "unsupportedVersion", "unauthorized", "unexpectedMessage",
]
# The codes a stateless decoder can produce from bytes alone: the vectors must cover each one.
# (unsupportedVersion, unauthorized and unexpectedMessage depend on the connection's state.)
STREAM_ERROR_CODES = PROTOCOL_ERROR_CODES[:9]
# Errors the schema must catch: the payload is JSON, so message.schema.json must reject it.
SCHEMA_ERROR_CODES = {"notAnObject", "missingType", "unknownType", "missingField", "invalidField"}
# Every failure code of section 8's table, in its order (the Swift FailureCode.known holds the same).
CHAIN_FAILURE_CODES = [
    "noRoute", "exhausted", "deadlineExceeded", "cancelled", "overloaded", "workerLost", "connectionFailed",
    "upstreamStatus", "timeout", "upstreamNotAllowed", "redirectNotAllowed", "tooManyRedirects", "invalidUpstream",
    "fetchFailed", "forbidden", "invalidRequest", "invalidPath", "unknownDomain", "noProviders", "shuttingDown",
    "unavailable", "readFailed", "requestTooLarge", "responseTooLarge", "storeFailed", "invalidateFailed",
    "storeUnavailable", "sweepFailed", "invalidateIncomplete",
]
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
HEX = re.compile(r"^(?:[0-9a-f]{2})*$")


# ---------------------------------------------------------------------------------------------
# Test bookkeeping


class Checks:
    def __init__(self, verbose):
        self.verbose = verbose
        self.passed = 0
        self.failed = 0

    def run(self, name, function, *args):
        """Runs one named check; it fails by raising (AssertionError or anything else)."""
        try:
            function(*args)
        except Exception as error:  # noqa: BLE001 - every exception is a failed check
            self.failed += 1
            reason = str(error) if isinstance(error, AssertionError) else f"{type(error).__name__}: {error}"
            print(f"FAIL {name}: {reason}")
        else:
            self.passed += 1
            if self.verbose:
                print(f"ok   {name}")


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def same(a, b):
    """Deep equality that tells true from 1 and 1 from 1.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


# ---------------------------------------------------------------------------------------------
# Schemas


def load_schemas():
    schemas = {}
    for file in sorted(os.listdir(SCHEMAS)):
        if file.endswith(".schema.json"):
            with open(os.path.join(SCHEMAS, file), encoding="utf-8") as f:
                schemas[file] = json.load(f)
    return schemas


def build_registry(schemas):
    """Every schema under its $id, so relative $refs between the files resolve without a network."""
    return Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema, default_specification=DRAFT202012))
        for schema in schemas.values()
    )


def check_schema_file(file, schema):
    expect(schema.get("$schema") == DRAFT, f"$schema is not {DRAFT}")
    expect(schema.get("$id") == BASE_ID + file, f"$id is not {BASE_ID + file}")
    jsonschema.Draft202012Validator.check_schema(schema)


def check_schema_set(schemas):
    per_type = sorted(
        f[: -len(".schema.json")] for f in schemas if f != "message.schema.json" and f not in REPORT_SCHEMAS)
    expect(per_type == sorted(MESSAGE_TYPES), f"per-type schemas {per_type} differ from the message types")
    for type_ in MESSAGE_TYPES:
        schema = schemas[f"{type_}.schema.json"]
        expect(schema["properties"]["type"].get("const") == type_, f"{type_}.schema.json: type is not const")
        expect("type" in schema["required"], f"{type_}.schema.json: type is not required")
        expect(schema.get("additionalProperties", True) is True, f"{type_}.schema.json: closes its properties")
    root = schemas["message.schema.json"]
    expect(root["properties"]["type"]["enum"] == MESSAGE_TYPES, "message.schema.json: type enum differs")
    refs = [(branch["if"]["properties"]["type"]["const"], branch["then"]["$ref"]) for branch in root["allOf"]]
    expect(refs == [(t, f"{t}.schema.json") for t in MESSAGE_TYPES], "message.schema.json: dispatch differs")
    expect(schemas["error.schema.json"]["properties"]["code"]["enum"] == PROTOCOL_ERROR_CODES,
           "error.schema.json: code enum differs from the protocol error codes")


# ---------------------------------------------------------------------------------------------
# Reference decoder: bytes -> messages, or the first protocol error


class ProtocolError(Exception):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")
        self.code = code


class FrameDecoder:
    """Splits a stream into payloads. Holds only bytes that arrived; checks a length from its header."""

    def __init__(self, max_frame_bytes):
        self.max_frame_bytes = max_frame_bytes
        self.buffer = bytearray()

    def feed(self, chunk):
        self.buffer += chunk

    def frames(self):
        while len(self.buffer) >= 4:
            length = int.from_bytes(self.buffer[:4], "big")
            if length > self.max_frame_bytes:
                raise ProtocolError("oversizedFrame", f"length {length} above {self.max_frame_bytes}")
            if len(self.buffer) < 4 + length:
                return
            payload = bytes(self.buffer[4:4 + length])
            del self.buffer[:4 + length]
            yield payload

    def finish(self):
        if self.buffer:
            raise ProtocolError("truncatedFrame", f"{len(self.buffer)} bytes of an unfinished frame")


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def reject_duplicate_names(pairs):
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError("a member name twice in one object")
    return dict(pairs)


def parse_payload(payload):
    """Payload -> JSON value, checking in the order the specification gives."""
    if not payload:
        raise ProtocolError("invalidJSON", "empty payload")
    try:
        text = payload.decode("utf-8")  # strict: rejects overlong forms, surrogates, cut sequences
    except UnicodeDecodeError as error:
        raise ProtocolError("invalidUTF8", str(error)) from None
    try:
        # Numbers with a fraction or an exponent are read exactly, so that a fraction too small
        # for a float (1.0000000000000001) still makes the number no integer.
        return json.loads(text, parse_constant=reject_constant, parse_float=decimal.Decimal,
                          object_pairs_hook=reject_duplicate_names)
    except ValueError as error:
        raise ProtocolError("invalidJSON", str(error)) from None


def schema_violations(validator, value):
    return list(validator.iter_errors(value))


def field_code(violation):
    """The protocol error code a schema violation of a known message type amounts to."""
    if violation.validator == "required":
        return "missingField"
    # invalidate with neither key nor prefix: every branch of the oneOf lacks its field.
    if violation.validator == "oneOf" and violation.context and all(
            v.validator == "required" for v in violation.context):
        return "missingField"
    return "invalidField"


BODY_TYPES = ("request", "response", "store")


def decode_message(payload, validator, raw_bodies=False):
    if payload[:1] == b"\x01":
        return decode_raw_body(payload, validator, raw_bodies)
    value = parse_payload(payload)
    if not isinstance(value, dict):
        raise ProtocolError("notAnObject", f"a JSON {type(value).__name__}")
    if not isinstance(value.get("type"), str):
        raise ProtocolError("missingType", "no string type")
    if value["type"] not in MESSAGE_TYPES:
        raise ProtocolError("unknownType", value["type"])
    violations = schema_violations(validator, value)
    if violations:
        codes = sorted({field_code(v) for v in violations})
        raise ProtocolError(codes[0], "; ".join(v.message for v in violations))
    return value


def decode_raw_body(payload, validator, raw_bodies):
    """A raw-body payload (section 2.1): 0x01, J, J bytes of JSON, then the body."""
    if not raw_bodies:
        raise ProtocolError("invalidJSON", "a raw-body payload without the rawBodies extension")
    if len(payload) < 5:
        raise ProtocolError("invalidJSON", "a raw-body payload shorter than its header")
    json_count = int.from_bytes(payload[1:5], "big")
    if json_count == 0 or json_count > len(payload) - 5:
        raise ProtocolError("invalidJSON", f"{json_count} bytes of JSON announced, {len(payload) - 5} follow")
    value = decode_message(payload[5:5 + json_count], validator)
    if value["type"] not in BODY_TYPES:
        raise ProtocolError("invalidField", f"a raw body after a {value['type']}")
    if value.get("body") is not None:
        raise ProtocolError("invalidField", "a body in the JSON and a raw body")
    return dict(value, body=base64.b64encode(payload[5 + json_count:]).decode("ascii"))


def decode_stream(data, chunk_size, max_frame_bytes, validator, raw_bodies=False):
    """Returns (messages, error code or None, offending payload or None)."""
    decoder = FrameDecoder(max_frame_bytes)
    messages = []
    payload = None
    try:
        for offset in range(0, max(len(data), 1), chunk_size):
            decoder.feed(data[offset:offset + chunk_size])
            for payload in decoder.frames():
                messages.append(decode_message(payload, validator, raw_bodies))
                payload = None
        decoder.finish()
    except ProtocolError as error:
        return messages, error.code, payload
    return messages, None, None


# ---------------------------------------------------------------------------------------------
# Vectors


def check_file_shape(document):
    expect(set(document) == {"version", "defaultMaxFrameBytes", "vectors"}, "top-level keys differ")
    expect(document["version"] == 1, "file version is not 1")
    expect(document["defaultMaxFrameBytes"] == DEFAULT_MAX_FRAME_BYTES, "defaultMaxFrameBytes is not 16 MiB")
    names = [v["name"] for v in document["vectors"]]
    expect(len(set(names)) == len(names), "vector names are not unique")
    expect(names == sorted(names), "vectors are not sorted by name")


def check_generated(text):
    spec = importlib.util.spec_from_file_location("monarch_vector_generator", GENERATOR)
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    expect(generator.render() == text, "frames.json is not what generate.py writes: run vectors/generate.py")


def check_coverage(vectors):
    types = {m["type"] for v in vectors for m in v["expect"]["messages"]}
    expect(types == set(MESSAGE_TYPES), f"message types without a vector: {sorted(set(MESSAGE_TYPES) - types)}")
    errors = {v["expect"].get("error") for v in vectors}
    missing = [code for code in STREAM_ERROR_CODES if code not in errors]
    expect(not missing, f"error codes without a vector: {missing}")


def check_bodies(message):
    """Every body is strict base64 (the schema's pattern checks the same; this is the second opinion)."""
    for field in ("body",):
        if isinstance(message.get(field), str):
            base64.b64decode(message[field], validate=True)


def check_vector(vector, validator):
    expect(set(vector) <= {"name", "description", "hex", "maxFrameBytes", "rawBodies", "expect"}, "unknown vector keys")
    expect(NAME.match(vector["name"]), "name is not kebab-case")
    expect(isinstance(vector["description"], str) and vector["description"], "no description")
    expect(HEX.match(vector["hex"]), "hex is not lowercase hex of whole bytes")
    limit = vector.get("maxFrameBytes", DEFAULT_MAX_FRAME_BYTES)
    expect(isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0, "bad maxFrameBytes")
    expected = vector["expect"]
    expect(set(expected) <= {"messages", "error"}, "unknown expect keys")
    declared_error = expected.get("error")
    expect(declared_error is None or declared_error in PROTOCOL_ERROR_CODES, f"unknown error {declared_error}")

    raw_bodies = vector.get("rawBodies", False)
    expect(raw_bodies in (False, True), "rawBodies is not a boolean")

    data = bytes.fromhex(vector["hex"])
    whole = decode_stream(data, max(len(data), 1), limit, validator, raw_bodies)
    byte_by_byte = decode_stream(data, 1, limit, validator, raw_bodies)
    expect(same(list(whole[:2]), list(byte_by_byte[:2])), "feeding byte by byte changes the outcome")
    messages, error, offending = whole
    expect(error == declared_error, f"decodes to error {error}, the vector says {declared_error}")
    expect(len(messages) == len(expected["messages"]),
           f"decodes to {len(messages)} messages, the vector lists {len(expected['messages'])}")
    for index, (ours, theirs) in enumerate(zip(messages, expected["messages"])):
        expect(same(ours, theirs), f"message {index} differs from the vector")

    for index, message in enumerate(expected["messages"]):
        violations = schema_violations(validator, message)
        expect(not violations, f"message {index} fails the schema: {[v.message for v in violations]}")
        future = dict(message, zzAddedInAFutureVersion={"any": ["json", 1, None]})
        expect(not schema_violations(validator, future), f"message {index} fails with an unknown field added")
        check_bodies(message)

    # A raw-body payload's own rules (section 2.1) are beyond what a schema sees: its JSON alone.
    if declared_error in SCHEMA_ERROR_CODES and offending[:1] != b"\x01":
        # The offending payload is JSON, so the schema must reject it. (JSON Schema cannot check
        # everything a decoder does — base64's pad bits, for one — but the schema's base64 pattern
        # covers alphabet, padding and length, and oneOf covers "exactly one of key or prefix",
        # so no vector here needs to skip this assertion.)
        value = parse_payload(offending)
        violations = schema_violations(validator, value)
        expect(violations, "the offending payload passes message.schema.json")
        if declared_error in ("missingField", "invalidField"):
            expect(len(violations) == 1,
                   f"the payload has {len(violations)} defects: {[v.message for v in violations]}")
            expect(field_code(violations[0]) == declared_error,
                   f"the schema sees {field_code(violations[0])}: {violations[0].message}")


def check_base64_pattern(schemas):
    """The schemas' base64 pattern accepts exactly what a strict base64 decoder accepts."""
    pattern = re.compile(schemas["request.schema.json"]["properties"]["body"]["pattern"])
    for file in ("request.schema.json", "response.schema.json", "store.schema.json"):
        expect(schemas[file]["properties"]["body"]["pattern"] == pattern.pattern, f"{file}: another body pattern")
        expect(schemas[file]["properties"]["body"].get("contentEncoding") == "base64", f"{file}: no contentEncoding")
    samples = ["", "aGk=", "aGVsbG8=", "aGVsbG8h", "+/+/", "aGk", "aGk==", "a===", "====", "aG k=", "aGVsbG8*",
               "aGk=aGk=", "aGVsbG8=\n", "\u00e9Gk="]
    for sample in samples:
        try:
            base64.b64decode(sample, validate=True)
            decodes = True
        except (binascii.Error, ValueError):
            decodes = False
        # The pattern is ECMA-262, whose $ is the end of the string; Python's $ also matches
        # before a final newline, so a newline is ruled out here by hand.
        matches = pattern.search(sample) is not None and "\n" not in sample
        expect(matches == decodes, f"pattern and decoder disagree on {sample!r}")


def check_report(report, schemas, registry):
    """A report vector validates against its schema exactly when it says it is valid."""
    expect(set(report) >= {"name", "schema", "valid", "description", "value"}, "a report vector lacks a key")
    schema = schemas.get(report["schema"] + ".schema.json")
    expect(schema is not None, f"no schema {report['schema']}")
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    violations = list(validator.iter_errors(report["value"]))
    if report["valid"]:
        expect(not violations, f"valid report fails: {[v.message for v in violations]}")
    else:
        expect(violations, "an invalid report passes its schema")


# ---------------------------------------------------------------------------------------------
# Specification text


def read_readme():
    with open(README, encoding="utf-8") as f:
        return f.read()


def check_readme_examples(validator):
    """Every ```json block of README.md is a valid message whose body, if any, is strict base64."""
    blocks = re.findall(r"```json\n(.*?)```", read_readme(), re.S)
    expect(len(blocks) >= len(MESSAGE_TYPES), f"only {len(blocks)} JSON examples")
    for block in blocks:
        message = json.loads(block)
        violations = schema_violations(validator, message)
        expect(not violations, f"example {block[:40]!r} fails the schema: {[v.message for v in violations]}")
        check_bodies(message)


def check_readme():
    text = read_readme()
    for type_ in MESSAGE_TYPES:
        expect(f"### `{type_}`" in text, f"README.md has no section for {type_}")
    for code in PROTOCOL_ERROR_CODES + CHAIN_FAILURE_CODES:
        expect(f"`{code}`" in text, f"README.md does not name {code}")
    table = failure_code_table(text)
    expect(table == CHAIN_FAILURE_CODES,
           f"section 8's table of failure codes differs from CHAIN_FAILURE_CODES: {table}")


def failure_code_table(text):
    """The codes in the first column of section 8's table of failure codes, in order."""
    section = text.split("**Failure codes**", 1)[1].split("**Attempt outcomes**", 1)[0]
    codes = []
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) > 2 and line.startswith("| `"):
            codes += re.findall(r"`([A-Za-z]+)`", cells[1])
    return codes


# ---------------------------------------------------------------------------------------------


def main(argv):
    checks = Checks(verbose="-v" in argv[1:])

    schemas = load_schemas()
    for file, schema in schemas.items():
        checks.run(f"schema {file}", check_schema_file, file, schema)
    checks.run("schema set", check_schema_set, schemas)
    checks.run("schema base64 pattern", check_base64_pattern, schemas)
    registry = build_registry(schemas)
    validator = jsonschema.Draft202012Validator(schemas["message.schema.json"], registry=registry)

    with open(VECTORS, encoding="utf-8") as f:
        text = f.read()
    # Read as payloads are: exactly (a float in a vector compares with what a payload gives).
    document = json.loads(text, parse_float=decimal.Decimal)
    vectors = document["vectors"]
    checks.run("vectors file shape", check_file_shape, document)
    checks.run("vectors file is generated", check_generated, text)
    checks.run("vectors cover every message type and stream error", check_coverage, vectors)
    for vector in vectors:
        checks.run(f"vector {vector.get('name')}", check_vector, vector, validator)

    with open(REPORTS, encoding="utf-8") as f:
        reports = json.load(f)["reports"]
    for report in reports:
        checks.run(f"report {report.get('name')}", check_report, report, schemas, registry)

    checks.run("README covers every type and code", check_readme)
    checks.run("README examples are valid messages", check_readme_examples, validator)

    print(f"{len(schemas)} schemas, {len(vectors)} vectors, {len(reports)} reports")
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
