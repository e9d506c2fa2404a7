"""`dapprof dump` against the fixture program under every supported interpreter."""
from __future__ import annotations

import json
import re

import pytest

from conftest import FIXTURE, fixture_lines, pythons, run

def dump_json(dapprof: str, pid: int) -> dict:
    out = run([dapprof, "dump", "--pid", str(pid), "--json"])
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def main_thread_spinning(doc: dict) -> bool:
    main = [t for t in doc["threads"] if t["name"] == "MainThread"]
    return bool(main) and bool(main[0]["frames"]) and main[0]["frames"][0]["function"] == "leaf_spin"


@pytest.mark.parametrize("interp", pythons.each(sampler_only_too=True))
def test_dump_json_shape_and_fixture_frames(dapprof, start_target, interp):
    target = start_target(python=interp.path)
    # The main thread leaves leaf_spin for a few microseconds every 50 ms; read again if a dump
    # happens to land there.
    for _ in range(5):
        doc = dump_json(dapprof, target.pid)
        if main_thread_spinning(doc):
            break
    assert set(doc) == {"pid", "python_version", "threads"}
    assert doc["pid"] == target.pid
    assert doc["python_version"] == ".".join(map(str, interp.version))
    by_name = {t["name"]: t for t in doc["threads"]}
    assert set(by_name) == {"MainThread", "sleepy-worker"}  # idle threads are shown too
    for t in doc["threads"]:
        assert set(t) == {"thread_id", "os_thread_id", "name", "status", "owns_gil", "active",
                          "frames"}
        expected_status = "idle" if not t["active"] else "active+gil" if t["owns_gil"] else "active"
        assert t["status"] == expected_status
        assert t["thread_id"] > 0 and t["os_thread_id"] > 0
        for f in t["frames"]:
            assert set(f) == {"function", "file", "line"}
    assert by_name["MainThread"]["os_thread_id"] == target.pid

    main = by_name["MainThread"]["frames"]  # innermost first
    assert [f["function"] for f in main] == ["leaf_spin", "mittel_schicht_ü", "main", "<module>"]
    assert all(f["file"] == str(FIXTURE) for f in main)
    assert main[0]["line"] in fixture_lines("SPIN")
    assert main[1]["line"] == fixture_lines("MIDDLE")[0]
    assert main[2]["line"] == fixture_lines("LOOP")[0]

    worker = by_name["sleepy-worker"]["frames"]
    assert worker[0]["function"] == "sleeper" and worker[0]["file"] == str(FIXTURE)
    # Between two sleeps it may be on its `while` line for an instant.
    assert worker[0]["line"] in (fixture_lines("SLEEP")[0] - 1, fixture_lines("SLEEP")[0])
    assert worker[-1]["function"].endswith("_bootstrap")


def test_dump_text_like_py_spy(dapprof, target):
    out = run([dapprof, "dump", "--pid", str(target.pid)])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert re.fullmatch(rf"Process {target.pid}: .*python3\.11 {re.escape(str(FIXTURE))}", lines[0])
    assert re.fullmatch(r"Python v3\.11\.\d+ \(/usr/bin/python3\.11\)", lines[1])
    headers = [line for line in lines if line.startswith("Thread ")]
    assert len(headers) == 2
    for h in headers:
        assert re.fullmatch(r'Thread 0x[0-9A-F]+ \((idle|active|active\+gil)\): "[\w-]+"', h), h
    sleeper = f"    sleeper ({FIXTURE}:{fixture_lines('SLEEP')[0]})"
    worker_at = lines.index(next(h for h in headers if "sleepy-worker" in h))
    assert lines[worker_at + 1] in (sleeper, sleeper.replace(
        f":{fixture_lines('SLEEP')[0]})", f":{fixture_lines('SLEEP')[0] - 1})"))
    assert f"    mittel_schicht_ü ({FIXTURE}:{fixture_lines('MIDDLE')[0]})" in lines


def test_dump_nonblocking(dapprof, target):
    out = run([dapprof, "dump", "--pid", str(target.pid), "--json", "--nonblocking"])
    assert out.returncode == 0, out.stderr
    names = {t["name"] for t in json.loads(out.stdout)["threads"]}
    assert names == {"MainThread", "sleepy-worker"}
