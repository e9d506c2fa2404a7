"""Validates real messages from the C++ encoder, and the examples of docs/PROFILING.md, against the
JSON Schemas in schemas/, and checks that the schemas reject what the protocol forbids."""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from pathlib import Path

import sys

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from dap_schemas import MAX_SAFE, SCHEMAS, VALIDATORS, payload, validate  # noqa: E402

DOC = ROOT / "docs" / "PROFILING.md"
@pytest.fixture(scope="module")
def emitted() -> list[tuple[str, dict]]:
    emitter = os.environ.get("DAPPROF_PROTOCOL_EMITTER")
    if not emitter:
        pytest.fail("DAPPROF_PROTOCOL_EMITTER is not set: run through ctest, or set it to the "
                    "protocol_emit_messages executable")
    out = subprocess.run([emitter], check=True, capture_output=True, timeout=60).stdout
    lines = [json.loads(line) for line in out.decode("utf-8").splitlines()]
    return [(line["schema"], line["message"]) for line in lines]


def test_every_schema_gets_real_messages(emitted):
    assert {schema for schema, _ in emitted} == set(VALIDATORS)


def test_emitted_messages_are_valid(emitted):
    for schema, message in emitted:
        validate(schema, message)


def test_emitted_data_covers_unicode_native_and_drops(emitted):
    data = [payload(s, m) for s, m in emitted if s == "profilingData"]
    frames = [f for body in data for f in body["newFrames"].values()]
    assert any(f.get("native") for f in frames)
    assert any(f.get("origin") == "debugger" for f in frames)
    assert all("debugpy/" in f["file"] for f in frames if f.get("origin") == "debugger")
    assert any(not f.isascii() for f in (f["function"] + f["file"] for f in frames))
    assert any(body["droppedSampleCount"] > 0 and body["samples"] == [] for body in data)
    compact = [body for body in data if "stackIds" in body]
    assert compact and any(c > 1 for body in compact for c in body["stackCounts"])
    assert all(body["samples"] == [] and sum(body["stackCounts"]) == body["sampleCount"]
               for body in compact)
    instructions = [i for body in data for i in body.get("newInstructions", {}).values()]
    assert any("baseOpcode" in i for i in instructions) and any("column" in i for i in instructions)
    assert any("column" not in i for i in instructions)
    counts = [body["instructionCounts"] for body in data if "instructionCounts" in body]
    assert counts and all(len(c) % 3 == 0 and all(c[i + 1] <= c[i + 2] for i in range(0, len(c), 3))
                          for c in counts)
    threads = [t for body in data for t in body["threads"].values()]
    assert threads and all(int(t["pythonThreadId"]) > MAX_SAFE for t in threads)
    exports = [payload(s, m) for s, m in emitted if s == "exportProfileResponse"]
    assert {e["format"] for e in exports} == {"speedscope", "flamegraph", "collapsed", "cpuprofile",
                                              "chrometrace", "gecko", "pprof"}
    assert all(e["content"] and e["sampleCount"] == 50 for e in exports)
    # Only pprof's bytes go base64-encoded; they are gzip.
    import base64
    import gzip
    for e in exports:
        assert e["contentEncoding"] == ("base64" if e["format"] == "pprof" else "text"), e["format"]
        if e["format"] == "pprof":
            assert gzip.decompress(base64.b64decode(e["content"], validate=True))
    reasons = {payload(s, m)["reason"] for s, m in emitted if s == "profilingStopped"}
    assert reasons == {"requested", "exited", "error", "disconnected"}


def _first(emitted, schema):
    return copy.deepcopy(next(m for s, m in emitted if s == schema and payload(s, m) != {}))


def _rejected(schema: str, body) -> bool:
    return not VALIDATORS[schema].is_valid(body)


def test_invalid_profiling_data_is_rejected(emitted):
    message = next(m for s, m in emitted if s == "profilingData" and m["body"]["samples"])
    body = message["body"]
    assert VALIDATORS["profilingData"].is_valid(body)

    def mutated(change):
        b = copy.deepcopy(body)
        change(b)
        return b

    frame_key = next(iter(body["newFrames"]))
    assert _rejected("profilingData", mutated(lambda b: b["samples"][0].__setitem__(0, -1)))
    assert _rejected("profilingData", mutated(lambda b: b["samples"][0].__setitem__(0, 2**53)))
    assert _rejected("profilingData", mutated(lambda b: b["samples"][0].__setitem__(0, "1")))
    assert _rejected("profilingData", mutated(lambda b: b.pop("samples")))
    assert _rejected("profilingData", mutated(lambda b: b.pop("newFrames")))
    assert _rejected("profilingData", mutated(lambda b: b.pop("duration")))
    assert _rejected("profilingData", mutated(lambda b: b["newFrames"].__setitem__("-1", b["newFrames"][frame_key])))
    assert _rejected("profilingData", mutated(lambda b: b["newFrames"].__setitem__("007", b["newFrames"][frame_key])))
    assert _rejected("profilingData", mutated(lambda b: b["newFrames"][frame_key].pop("function")))
    assert _rejected("profilingData", mutated(lambda b: b["newFrames"][frame_key].__setitem__("line", -1)))
    assert _rejected("profilingData", mutated(lambda b: b.__setitem__("sampleCount", -1)))
    tid = next(iter(body["threads"]))
    assert _rejected("profilingData", mutated(lambda b: b["threads"][tid].__setitem__("pythonThreadId", 1)))


def test_invalid_requests_and_bodies_are_rejected(emitted):
    assert _rejected("startProfilingArguments", {"rate": 0})
    assert _rejected("startProfilingArguments", {"rate": 10001})
    assert _rejected("startProfilingArguments", {"batchIntervalMs": 5})
    assert _rejected("startProfilingArguments", {"native": "yes"})
    assert _rejected("startProfilingArguments", {"native": True, "nonblocking": True})
    assert not _rejected("startProfilingArguments", {"native": True, "nonblocking": False})
    assert _rejected("stopProfilingArguments", {"format": "collapsed"})
    assert _rejected("stopProfilingArguments", {"outputPath": "/x", "format": "perf"})
    assert _rejected("stopProfilingArguments", {"outputPath": "relative.json"})
    stopped = payload("profilingStopped", _first(emitted, "profilingStopped"))
    assert _rejected("profilingStopped", {**stopped, "reason": "crashed"})
    response = payload("stopProfilingResponse", _first(emitted, "stopProfilingResponse"))
    assert _rejected("stopProfilingResponse", {k: v for k, v in response.items() if k != "sampleCount"})
    error = _first(emitted, "profilingErrorResponse")
    assert _rejected("profilingErrorResponse", {**error, "success": True})
    assert _rejected("profilingErrorResponse", {**error, "body": {}})


# Each ```json block of the reference document is preceded by <!-- schema: NAME --> naming the
# schema its payload must satisfy, or <!-- schema: none --> for messages outside the extension.
BLOCK = re.compile(r"(?:<!--\s*schema:\s*(\w+)\s*-->\s*\n)?```json\n(.*?)\n```", re.S)


def doc_blocks() -> list[tuple[str | None, str]]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_doc_examples_are_valid():
    blocks = doc_blocks()
    assert len(blocks) >= 8
    covered = set()
    for schema, text in blocks:
        assert schema, f"a json block of PROFILING.md has no schema marker:\n{text[:200]}"
        message = json.loads(text)
        if schema == "none":
            continue
        assert schema in VALIDATORS, schema
        validate(schema, message)
        covered.add(schema)
    assert covered == set(VALIDATORS)


def test_doc_profiling_data_examples_decode_to_known_frames():
    """The examples form one stream: every sampled ID is defined once, before or in its event."""
    defined: set[str] = set()
    stacks: set[str] = set()
    for schema, text in doc_blocks():
        if schema != "profilingData":
            continue
        body = json.loads(text)["body"]
        assert not defined & set(body["newFrames"]), "frame defined twice across examples"
        defined |= set(body["newFrames"])
        for stack in body["samples"] + list(body.get("newStacks", {}).values()):
            assert all(str(frame_id) in defined for frame_id in stack)
        stacks |= set(body.get("newStacks", {}))
        assert all(str(stack_id) in stacks for stack_id in body.get("stackIds", []))
