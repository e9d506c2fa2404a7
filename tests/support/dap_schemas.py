"""The profiling protocol's JSON Schemas (schemas/) and the rules they cannot express, for tests
that check real messages: the encoder's, the docs' examples, and live sessions through dapprof."""
from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
MAX_SAFE = 2**53 - 1


def _load_validators() -> dict[str, Draft202012Validator]:
    validators = {}
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        name = path.name.removesuffix(".schema.json")
        assert schema["$id"].endswith(":" + name), path
        validators[name] = Draft202012Validator(schema)
    return validators


VALIDATORS = _load_validators()


def payload(schema: str, message: dict):
    """The part of a DAP message a schema describes."""
    if schema == "profilingErrorResponse":
        return message
    if message["type"] == "request":
        return message.get("arguments", {})
    return message["body"]


def check_envelope(schema: str, message: dict) -> None:
    assert isinstance(message.get("seq"), int)
    kind = message["type"]
    if schema.endswith("Arguments"):
        assert kind == "request" and message["command"] == schema.removesuffix("Arguments")
    elif schema.endswith("Response") and schema != "profilingErrorResponse":
        assert kind == "response" and message["success"] is True
        assert message["command"] == schema.removesuffix("Response")
    elif schema in ("profilingData", "profilingStopped"):
        assert kind == "event" and message["event"] == schema


def check_semantics(schema: str, body) -> None:
    """What JSON Schema cannot express."""
    if schema == "profilingData":
        if "stackIds" in body:  # stacks: runs of stack IDs with counts instead of samples
            assert body["samples"] == []
            assert len(body["stackCounts"]) == len(body["stackIds"])
            assert body["sampleCount"] == sum(body["stackCounts"])
            if "threadIds" in body:
                assert len(body["threadIds"]) == len(body["stackIds"])
            assert all(int(key) <= MAX_SAFE for key in body.get("newStacks", {}))
        else:
            assert "stackCounts" not in body and "newStacks" not in body
            assert body["sampleCount"] == len(body["samples"])
            if "threadIds" in body:
                assert len(body["threadIds"]) == len(body["samples"])
        for key, thread in body.get("threads", {}).items():
            assert thread["osThreadId"] == int(key)
        assert all(int(key) <= MAX_SAFE for key in body["newFrames"])
    if schema == "profilingErrorResponse":
        assert body["message"] == body["body"]["error"]["format"]


def validate(schema: str, message: dict) -> None:
    check_envelope(schema, message)
    body = payload(schema, message)
    errors = sorted(VALIDATORS[schema].iter_errors(body), key=str)
    assert not errors, f"{schema}: {errors[0].message} at {list(errors[0].absolute_path)}"
    check_semantics(schema, body)
