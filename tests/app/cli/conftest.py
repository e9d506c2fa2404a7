"""Shared helpers for the `dapprof record` / `dapprof dump` tests: the dapprof binary, the fixture
program (tests/app/cli/fixtures/busy.py) run under real interpreters, and output checks."""
from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "support"))
import binaries  # noqa: E402
import pythons  # noqa: E402

FIXTURE = HERE / "fixtures" / "busy.py"
# How record names it by default, as py-spy does: from its top-level package (it has none).
SHORT = FIXTURE.name
DEBIAN_PYTHON = "/usr/bin/python3.11"
SVG = "{http://www.w3.org/2000/svg}"


def fixture_lines(marker: str) -> list[int]:
    """Line numbers of busy.py carrying `# MARKER`."""
    text = FIXTURE.read_text(encoding="utf-8").splitlines()
    return [i + 1 for i, line in enumerate(text) if line.rstrip().endswith("# " + marker)]


@pytest.fixture(scope="session")
def dapprof() -> str:
    return binaries.dapprof_bin()


def read_line(stream, timeout: float) -> str:
    """One line from a pipe, or AssertionError after `timeout` seconds."""
    ready, _, _ = select.select([stream], [], [], timeout)
    assert ready, f"no line within {timeout}s"
    return stream.readline()


class Target:
    """busy.py running under `python`; ready once both of its threads run."""

    def __init__(self, python: str, *args: str):
        self.proc = subprocess.Popen([python, str(FIXTURE), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8")
        line = read_line(self.proc.stdout, 30)
        assert line.strip() == "ready", (line, self.proc.stderr.read() if self.proc.poll() else "")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=30)


@pytest.fixture
def start_target():
    targets: list[Target] = []

    def start(*args: str, python: str = DEBIAN_PYTHON) -> Target:
        t = Target(python, *args)
        targets.append(t)
        return t

    yield start
    for t in targets:
        t.stop()


@pytest.fixture
def target(start_target) -> Target:
    return start_target()


ASYNCIO_FIXTURE = HERE.parents[1] / "fixtures" / "asyncio_tasks.py"


class AsyncioProgram:
    """tests/fixtures/asyncio_tasks.py running a scenario; `truth` is what it says of itself."""

    def __init__(self, interp, scenario: str, *args: str):
        self.proc = subprocess.Popen([interp.path, str(ASYNCIO_FIXTURE), scenario, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = read_line(self.proc.stdout, 60)
        assert line, self.proc.stderr.read()
        self.truth = json.loads(line)

    def stop(self):
        self.proc.kill()
        self.proc.communicate(timeout=30)


@pytest.fixture
def program():
    """program(interp, scenario, *args): an AsyncioProgram, skipped where the scenario says so
    (a version without what it needs), stopped after the test."""
    started = []

    def start(interp, scenario, *args):
        p = AsyncioProgram(interp, scenario, *args)
        started.append(p)
        if "skip" in p.truth:
            pytest.skip(p.truth["skip"])
        return p

    yield start
    for p in started:
        p.stop()


def run(cmd: list[str], timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8",
                          errors="replace", timeout=timeout, **kwargs)


def stderr_on_a_terminal(cmd: list[str]) -> str:
    """What `cmd` writes to its stderr when that is a terminal (a pty); it must exit 0."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        slave = -1
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO once the last writer is gone
                break
            if not chunk:
                break
            seen += chunk
        assert proc.wait(timeout=30) == 0
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    return seen.decode("utf-8", "replace")


# ---- checks of each output format, shared by the record tests ----

def fixture_stack_labels() -> list[str]:
    """The main thread's stack below <module> in raw/flamegraph labels, root first."""
    return [f"main ({SHORT}:{fixture_lines('LOOP')[0]})",
            f"mittel_schicht_ü ({SHORT}:{fixture_lines('MIDDLE')[0]})"]


def leaf_labels() -> set[str]:
    return {f"leaf_spin ({SHORT}:{n})" for n in fixture_lines("SPIN")}


def check_raw(text: str) -> dict[str, int]:
    lines = text.splitlines()
    assert lines, "empty collapsed output"
    assert lines == sorted(lines)
    counts = {}
    for line in lines:
        m = re.fullmatch(r"(.+) (\d+)", line)
        assert m, line
        assert m.group(1) not in counts, "duplicate stack line"
        counts[m.group(1)] = int(m.group(2))
    main_stack = ";".join(fixture_stack_labels())
    spinning = sum(n for stack, n in counts.items()
                   if main_stack in stack and stack.split(";")[-1] in leaf_labels())
    assert spinning > 0, f"no sample of leaf_spin under main: {list(counts)[:5]}"
    return counts


def check_speedscope(text: str) -> dict:
    import jsonschema
    doc = json.loads(text)
    schema = json.loads((HERE / "speedscope-schema.json").read_text())
    jsonschema.validate(doc, schema)
    frames = doc["shared"]["frames"]
    leaves = 0
    for prof in doc["profiles"]:
        assert len(prof["samples"]) == len(prof["weights"])
        assert prof["endValue"] == pytest.approx(sum(prof["weights"]))
        for sample in prof["samples"]:
            names = [frames[i]["name"] for i in sample]
            if names[-3:] == ["main", "mittel_schicht_ü", "leaf_spin"]:
                leaf = frames[sample[-1]]
                assert leaf["file"] == SHORT and leaf["line"] in fixture_lines("SPIN")
                leaves += 1
    assert leaves > 0, "no sample of leaf_spin reconstructed"
    return doc


def check_flamegraph(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == SVG + "svg"
    groups = [g for g in root.iter(SVG + "g") if g.get("class") == "f"]
    assert groups and groups[0].get("data-n") == "all"
    full = float(groups[0].find(SVG + "rect").get("width"))
    names = set()
    for g in groups:
        rects = g.findall(SVG + "rect")
        assert len(rects) == 1
        assert 0 < float(rects[0].get("width")) <= full + 1e-6
        assert g.find(SVG + "title").text.startswith(g.get("data-n"))
        names.add(g.get("data-n"))
    assert names & leaf_labels(), "leaf_spin missing from the flame graph"
    assert fixture_stack_labels()[1] in names
    return root


def check_chrometrace(text: str) -> dict:
    doc = json.loads(text)
    per_thread: dict[tuple, list] = {}
    thread_names = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                thread_names[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        assert e["ph"] in ("B", "E")
        per_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    assert per_thread
    for key, events in per_thread.items():
        assert key in thread_names
        stack, last = [], 0
        for e in events:
            assert e["ts"] >= last
            last = e["ts"]
            if e["ph"] == "B":
                stack.append(e["name"])
            else:
                assert stack.pop() == e["name"]
        assert not stack
    assert "MainThread" in thread_names.values()
    assert any(e["name"] == "leaf_spin" for evs in per_thread.values() for e in evs)
    return doc


def check_cpuprofile(text: str) -> dict:
    doc = json.loads(text)
    nodes = {n["id"]: n for n in doc["nodes"]}
    parent = {c: n["id"] for n in doc["nodes"] for c in n.get("children", [])}
    assert len(doc["samples"]) == len(doc["timeDeltas"]) > 0
    assert sum(n["hitCount"] for n in doc["nodes"]) == len(doc["samples"])
    assert doc["startTime"] + sum(doc["timeDeltas"]) <= doc["endTime"]
    assert all(d >= 0 for d in doc["timeDeltas"])
    found = 0
    for leaf in doc["samples"]:
        chain = []
        node = leaf
        while node in parent:
            chain.append(nodes[node]["callFrame"])
            node = parent[node]
        if [c["functionName"] for c in chain[:2]] == ["leaf_spin", "mittel_schicht_ü"]:
            assert chain[0]["lineNumber"] + 1 in fixture_lines("SPIN")  # 0-based
            assert chain[0]["url"] == str(FIXTURE)
            found += 1
    assert found > 0
    return doc


CHECKS = {"raw": check_raw, "speedscope": check_speedscope, "flamegraph": check_flamegraph,
          "chrometrace": check_chrometrace, "cpuprofile": check_cpuprofile}


def proc_state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


def wait_until(predicate, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")

