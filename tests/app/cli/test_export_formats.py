"""`dapprof record --format pprof` and `--format gecko` of the fixture program, read back by the
tools that define the formats: protoc decoding pprof's own profile.proto, Go's pprof built from
Debian's source of it, and the Firefox Profiler's Gecko tables resolved as its importer does."""
from __future__ import annotations

import codecs
import gzip
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import DEBIAN_PYTHON, FIXTURE, fixture_lines, pythons, run

PPROF_SOURCE = Path("/usr/share/gocode/src/github.com/google/pprof")
PROFILE_PROTO = PPROF_SOURCE / "proto" / "profile.proto"
FUNCTIONS = {"leaf_spin", "mittel_schicht_ü", "main"}


def def_line(function: str) -> int:
    """The line of `def function` in the fixture: the function's first line."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    return next(i + 1 for i, line in enumerate(lines) if line.startswith(f"def {function}("))


def body_lines(function: str) -> set[int]:
    # main may still be in the print that said "ready" when sampling starts (on a loaded machine
    # the target can lose the CPU right after that write), and may be caught on any line of its
    # loop, the `while`'s call of time.monotonic() included.
    if function == "main":
        return set(range(min(fixture_lines("READY")), max(fixture_lines("LOOP_END")) + 1))
    markers = {"leaf_spin": ["SPIN"], "mittel_schicht_ü": ["MIDDLE"]}
    return {line for marker in markers[function] for line in fixture_lines(marker)}


def interpreters() -> list:
    """Debian's python3.11 and one pyenv CPython (the newest found): the two builds that the
    other record tests cover, without running every interpreter again for each format."""
    pyenv = [i for i in pythons.interpreters() if i.label.startswith("pyenv-")]
    chosen = [pytest.param(DEBIAN_PYTHON, id="debian-3.11")]
    if pyenv:
        chosen.append(pytest.param(pyenv[-1].path, id=pyenv[-1].label))
    return chosen


def record(dapprof: str, start_target, tmp_path: Path, python: str, fmt: str, name: str):
    """Records the fixture for a second; returns (the file, the target's pid, Samples: N)."""
    target = start_target(python=python)
    out_file = tmp_path / name
    out = run([dapprof, "record", "--pid", str(target.pid), "--duration", "1.5", "--format", fmt,
               "--idle", "-o", str(out_file)])
    assert out.returncode == 0, out.stderr
    samples = int(re.search(r"Samples: (\d+)", out.stderr).group(1))
    assert samples > 0
    return out_file, target.pid, samples


# ---- pprof through protoc ----

def parse_text_format(text: str) -> dict:
    """protoc --decode's text format as nested dicts of lists: {"sample": [{...}], ...}."""
    root: dict = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            child: dict = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, _, value = line.partition(": ")
            if value.startswith('"'):
                # C escapes of the UTF-8 bytes, as protoc writes non-ASCII strings.
                value = codecs.escape_decode(value[1:-1].encode("ascii"))[0].decode("utf-8")
            else:
                value = int(value)
            stack[-1].setdefault(key, []).append(value)
    assert len(stack) == 1, "unbalanced braces in protoc's output"
    return root


def decode_pprof(path: Path) -> dict:
    raw = gzip.decompress(path.read_bytes())
    out = subprocess.run(["protoc", f"--proto_path={PROFILE_PROTO.parent}", "--decode",
                          "perftools.profiles.Profile", PROFILE_PROTO.name],
                         input=raw, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    return parse_text_format(out.stdout.decode("ascii"))


def one(message: dict, key: str, default=0):
    return message.get(key, [default])[0]


@pytest.mark.skipif(shutil.which("protoc") is None or not PROFILE_PROTO.exists(),
                    reason="needs protoc and pprof's profile.proto (scripts/install-deps.sh)")
@pytest.mark.parametrize("python", interpreters())
def test_pprof_decodes_to_the_fixture(dapprof, start_target, tmp_path, python):
    path, pid, samples = record(dapprof, start_target, tmp_path, python, "pprof", "p.pb.gz")
    p = decode_pprof(path)
    strings = p["string_table"]
    assert strings[0] == ""

    def s(message: dict, key: str) -> str:
        return strings[one(message, key)]

    assert [(s(t, "type"), s(t, "unit")) for t in p["sample_type"]] == [
        ("samples", "count"), ("cpu", "nanoseconds")]
    period_type = p["period_type"][0]
    assert (s(period_type, "type"), s(period_type, "unit")) == ("cpu", "nanoseconds")
    period = one(p, "period")
    assert period == 10_000_000  # 100 Hz
    assert one(p, "duration_nanos") >= 1_000_000_000 and one(p, "time_nanos") > 0

    functions = {one(f, "id"): f for f in p["function"]}
    assert 0 not in functions and len(functions) == len(p["function"])
    by_name = {s(f, "name"): f for f in functions.values()}
    for name in FUNCTIONS:
        assert name in by_name, sorted(by_name)
        assert s(by_name[name], "filename") == str(FIXTURE)
        assert one(by_name[name], "start_line") == def_line(name)
    locations = {one(loc, "id"): loc for loc in p["location"]}
    assert 0 not in locations and len(locations) == len(p["location"])
    for loc in locations.values():
        line = loc["line"][0]
        function = functions[one(line, "function_id")]
        if s(function, "name") in FUNCTIONS:
            assert one(line, "line") in body_lines(s(function, "name")), (loc, function)

    total = 0
    leaf_spin = 0
    threads = Counter()
    for sample in p["sample"]:
        count, cpu = sample["value"]
        assert cpu == count * period
        total += count
        labels = {s(label, "key"): label for label in sample["label"]}
        assert one(labels["pid"], "num") == pid
        threads[s(labels["thread"], "str")] += count
        leaf = functions[one(locations[sample["location_id"][0]]["line"][0], "function_id")]
        if s(leaf, "name") == "leaf_spin":
            leaf_spin += count
            names = [s(functions[one(locations[i]["line"][0], "function_id")], "name")
                     for i in sample["location_id"]]
            assert names[:3] == ["leaf_spin", "mittel_schicht_ü", "main"], names
            assert s(labels["thread"], "str") == "MainThread"
    # With --idle each of the fixture's two threads is in every sample that record counts.
    assert threads == {"MainThread": samples, "sleepy-worker": samples}
    assert total == 2 * samples and leaf_spin > 0


# ---- pprof through Go's pprof ----

@pytest.fixture(scope="session")
def go_pprof(tmp_path_factory) -> str:
    """pprof built offline from Debian's Go source of it, once, into the build tree's test cache
    (DAPPROF_TEST_CACHE) or a temporary folder."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("Go is not installed (golang-go, scripts/install-deps.sh)")
    if not PPROF_SOURCE.exists():
        pytest.fail(f"{PPROF_SOURCE} is missing: install golang-github-google-pprof-dev")
    cache = Path(os.environ.get("DAPPROF_TEST_CACHE") or tmp_path_factory.mktemp("go")).resolve()
    binary = cache / "go-pprof" / "pprof"
    if not binary.exists():
        (cache / "go-pprof").mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, GO111MODULE="off", GOFLAGS="",
                   GOPATH=f"{cache / 'go-pprof' / 'gopath'}:/usr/share/gocode",
                   GOCACHE=str(cache / "go-pprof" / "cache"))
        out = subprocess.run([go, "build", "-o", str(binary), "github.com/google/pprof"],
                             env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
    return str(binary)


def test_go_pprof_reads_the_functions_and_counts(dapprof, start_target, tmp_path, go_pprof):
    path, _, samples = record(dapprof, start_target, tmp_path, DEBIAN_PYTHON, "pprof", "p.pb.gz")
    decoded = decode_pprof(path) if shutil.which("protoc") else None
    env = dict(os.environ, HOME=str(tmp_path))  # pprof keeps no state outside the test
    top = run([go_pprof, "-top", "-sample_index=samples", "-nodecount=1000", str(path)], env=env)
    assert top.returncode == 0, top.stderr
    # "      flat  flat%   sum%        cum   cum%" then rows "  12 3.4% 3.4%  40 11% name".
    flat, cum = {}, {}
    for line in top.stdout.splitlines():
        m = re.fullmatch(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)", line)
        if m:
            flat[m.group(3)], cum[m.group(3)] = int(m.group(1)), int(m.group(2))
    assert FUNCTIONS <= set(flat), top.stdout
    assert sum(flat.values()) == 2 * samples, top.stdout  # two threads (--idle), every sample
    assert cum["main"] >= cum["mittel_schicht_ü"] >= cum["leaf_spin"] == flat["leaf_spin"] > 0
    # Python's names reach pprof's report as they are, "<module>" included.
    assert cum["<module>"] >= cum["main"] and "<unknown>" not in cum, top.stdout
    if decoded is not None:  # the same count protoc's decoding gives
        strings = decoded["string_table"]
        functions = {one(f, "id"): strings[one(f, "name")] for f in decoded["function"]}
        locations = {one(loc, "id"): functions[one(loc["line"][0], "function_id")]
                     for loc in decoded["location"]}
        leaf = sum(s["value"][0] for s in decoded["sample"]
                   if locations[s["location_id"][0]] == "leaf_spin")
        assert flat["leaf_spin"] == leaf
    raw = run([go_pprof, "-raw", str(path)], env=env)
    assert raw.returncode == 0, raw.stderr
    assert "PeriodType: cpu nanoseconds" in raw.stdout
    assert re.search(r"thread:\[MainThread\]", raw.stdout), raw.stdout[:2000]
    assert f"leaf_spin {FIXTURE}:" in raw.stdout


# ---- the Firefox Profiler's Gecko profile ----

def column(table: dict, name: str) -> int:
    return table["schema"][name]


@pytest.mark.parametrize("python", interpreters())
def test_gecko_tables_resolve_to_the_fixture(dapprof, start_target, tmp_path, python):
    path, pid, samples = record(dapprof, start_target, tmp_path, python, "gecko", "p.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    meta = doc["meta"]
    # What the importer reads before any thread: the version it upgrades from, the interval,
    # the start time and the categories that frames point into.
    assert isinstance(meta["version"], int) and 27 <= meta["version"]
    assert meta["interval"] == 10.0 and meta["startTime"] > 0 and meta["product"] == "dapprof"
    categories = [c["name"] for c in meta["categories"]]
    assert "Python" in categories and all(c["color"] for c in meta["categories"])
    for key in ("libs", "pausedRanges", "processes", "threads"):
        assert isinstance(doc[key], list), key

    total = 0
    names = set()
    main_leaves = 0
    spans: dict[tuple[str, str], list[float]] = {}  # (thread, marker) -> durations in ms
    for thread in doc["threads"]:
        assert thread["pid"] == pid and thread["processType"] == "default"
        assert isinstance(thread["tid"], int) and thread["tid"] > 0
        names.add(thread["name"])
        for table in ("samples", "frameTable", "stackTable", "markers"):
            assert isinstance(thread[table]["schema"], dict) and isinstance(
                thread[table]["data"], list), table
        strings = thread["stringTable"]
        frames, stacks, rows = thread["frameTable"], thread["stackTable"], thread["samples"]
        for key in ("location", "relevantForJS", "implementation", "line", "column", "category",
                    "subcategory", "innerWindowID"):
            assert key in frames["schema"], key
        assert set(stacks["schema"]) == {"prefix", "frame"}
        assert {"stack", "time"} <= set(rows["schema"])
        previous = 0.0
        for row in rows["data"]:
            time = row[column(rows, "time")]
            assert time >= previous
            previous = time
            chain = []  # (function, file, function line, line), leaf first
            stack = row[column(rows, "stack")]
            while stack is not None:
                entry = stacks["data"][stack]
                frame = frames["data"][entry[column(stacks, "frame")]]
                location = strings[frame[column(frames, "location")]]
                # The form the importer takes apart into a function, its file and line.
                m = re.fullmatch(r"(.*) \((.+?):([0-9]+)\)", location)
                assert m, location
                chain.append((m.group(1), m.group(2), int(m.group(3)), frame[column(frames, "line")]))
                assert categories[frame[column(frames, "category")]] == "Python"
                prefix = entry[column(stacks, "prefix")]
                assert prefix is None or prefix < stack
                stack = prefix
            for function, file, first, line in chain:
                if file == str(FIXTURE) and function in FUNCTIONS:
                    assert first == def_line(function) and line in body_lines(function), chain
            if chain and chain[0][0] == "leaf_spin":
                assert [c[0] for c in chain[:3]] == ["leaf_spin", "mittel_schicht_ü", "main"]
                assert thread["name"] == "MainThread"
                main_leaves += 1
        # With --idle each of the fixture's two threads is in every sample that record counts.
        assert len(rows["data"]) == samples, thread["name"]
        total += len(rows["data"])
        markers = thread["markers"]
        for m in markers["data"]:
            name = strings[m[column(markers, "name")]]
            start, end = m[column(markers, "startTime")], m[column(markers, "endTime")]
            assert m[column(markers, "phase")] == 1 and 0 <= start < end <= meta["profilingEndTime"]
            spans.setdefault((thread["name"], name), []).append(end - start)
    assert total == 2 * samples
    assert main_leaves > 0 and names == {"MainThread", "sleepy-worker"}, names
    # The worker sleeps (idle, without the GIL) and the main thread spins holding it: the markers
    # of what each was doing cover much of the 1.5 s recorded (the main thread waits for the GIL
    # while the worker wakes, which a sample may see).
    def covered(thread: str, marker: str) -> float:
        return sum(spans.get((thread, marker), []))
    assert covered("sleepy-worker", "Idle") > 750 and covered("MainThread", "GIL") > 750, spans
    assert covered("sleepy-worker", "GIL") < covered("sleepy-worker", "Idle") / 10, spans
    assert covered("MainThread", "Idle") < covered("MainThread", "GIL") / 10, spans
