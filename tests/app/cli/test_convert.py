"""`dapprof convert`: profiles recorded by `dapprof record` (of a real program), and py-spy's raw
format, read back; the same stacks and counts in every format written, and in the stream of
profilingData events that VS Code shows."""
from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from conftest import CHECKS, DEBIAN_PYTHON, FIXTURE, HERE, check_raw, check_speedscope, run

SCHEMAS = HERE.parents[2] / "schemas"


@pytest.fixture(scope="module")
def recorded(dapprof, tmp_path_factory) -> dict[str, Path]:
    """busy.py recorded once per readable format (raw with thread roots)."""
    out = tmp_path_factory.mktemp("recorded")
    files = {}
    for fmt, name, extra in [("raw", "busy.txt", ["--threads"]),
                             ("speedscope", "busy.speedscope.json", []),
                             ("cpuprofile", "busy.cpuprofile", [])]:
        files[fmt] = out / name
        r = run([dapprof, "record", "--idle", "--format", fmt, "--output", str(files[fmt]),
                 "--hideprogress", *extra, "--", DEBIAN_PYTHON, str(FIXTURE), "--seconds", "1.5"])
        assert r.returncode == 0, r.stderr
    return files


def convert(dapprof, path: Path, *args: str) -> str:
    r = run([dapprof, "convert", str(path), *args])
    assert r.returncode == 0, r.stderr
    return r.stdout


def raw_counts(text: str) -> dict[str, int]:
    counts = {}
    for line in text.splitlines():
        stack, n = line.rsplit(" ", 1)
        counts[stack] = int(n)
    return counts


def label(frame: dict) -> str:
    """py-spy's frame label, as dapprof writes it (the collector's placed in <GC>)."""
    if frame.get("gc"):
        return f"{frame['name']} (<GC>)"
    if not frame.get("file"):
        return frame["name"]
    return f"{frame['name']} ({frame['file']}:{frame['line']})" if frame.get("line") else \
        f"{frame['name']} ({frame['file']})"


def test_raw_is_read_back_to_the_same_lines(dapprof, recorded):
    text = recorded["raw"].read_text(encoding="utf-8")
    assert convert(dapprof, recorded["raw"], "--format", "raw", "--threads") == text
    # Without --threads, the threads' lines merge, counts summed.
    merged = collections.Counter()
    for stack, n in raw_counts(text).items():
        merged[stack.split(";", 1)[1]] += n
    assert raw_counts(convert(dapprof, recorded["raw"], "--format", "raw")) == dict(merged)


def test_speedscope_is_read_back_to_its_stacks_and_weights(dapprof, recorded):
    doc = json.loads(recorded["speedscope"].read_text(encoding="utf-8"))
    frames = doc["shared"]["frames"]
    expected = collections.Counter()
    for prof in doc["profiles"]:
        for sample, weight in zip(prof["samples"], prof["weights"]):
            if sample:
                expected[";".join(label(frames[i]) for i in sample)] += weight
    out = convert(dapprof, recorded["speedscope"], "--format", "raw")
    assert raw_counts(check_raw(out) and out) == dict(expected)
    # Both threads (the sleeper is sampled with --idle) keep their names and ids.
    again = check_speedscope(convert(dapprof, recorded["speedscope"], "--format", "speedscope"))
    assert sorted(p["name"] for p in again["profiles"]) == sorted(p["name"] for p in doc["profiles"])


def test_cpuprofile_is_read_back_to_every_sample(dapprof, recorded):
    doc = json.loads(recorded["cpuprofile"].read_text(encoding="utf-8"))
    nodes = {n["id"]: n for n in doc["nodes"]}
    parent = {c: n["id"] for n in doc["nodes"] for c in n.get("children", [])}
    expected = collections.Counter()
    for leaf in doc["samples"]:
        chain, node = [], leaf
        while node in parent:
            cf = nodes[node]["callFrame"]
            chain.append({"name": cf["functionName"], "file": cf["url"],
                          "line": cf["lineNumber"] + 1 if cf["lineNumber"] >= 0 else 0})
            node = parent[node]
        if chain:
            expected[";".join(label(f) for f in reversed(chain))] += 1
    assert raw_counts(convert(dapprof, recorded["cpuprofile"], "--format", "raw")) == \
        dict(expected)
    # Written again as a cpuprofile: the same samples.
    CHECKS["cpuprofile"](convert(dapprof, recorded["cpuprofile"], "--format", "cpuprofile"))


@pytest.mark.parametrize("fmt", ["flamegraph", "chrometrace"])
def test_every_read_format_writes_every_format(dapprof, recorded, fmt, tmp_path):
    # The checks look for busy.py's short name, which cpuprofile does not use.
    for source in (recorded["raw"], recorded["speedscope"]):
        out = tmp_path / f"{source.name}.{fmt}"
        r = run([dapprof, "convert", str(source), "--format", fmt, "--output", str(out)])
        assert r.returncode == 0, r.stderr
        assert f"Wrote {fmt} data to '{out}'" in r.stderr
        CHECKS[fmt](out.read_text(encoding="utf-8"))


def test_pprof_and_gecko_from_a_file(dapprof, recorded, tmp_path):
    out = tmp_path / "busy.pb.gz"
    r = run([dapprof, "convert", str(recorded["raw"]), "--format", "pprof", "--output", str(out)])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    gecko = json.loads(convert(dapprof, recorded["speedscope"], "--format", "gecko"))
    assert {t["name"] for t in gecko["threads"]} >= {"MainThread", "sleepy-worker"}


@pytest.mark.parametrize("encoding", [[], ["--frames"]])
def test_stream_is_the_events_of_a_live_run(dapprof, recorded, encoding):
    import jsonschema
    data_schema = json.loads((SCHEMAS / "profilingData.schema.json").read_text())
    stopped_schema = json.loads((SCHEMAS / "profilingStopped.schema.json").read_text())
    text = recorded["raw"].read_text(encoding="utf-8")
    events = [json.loads(line) for line in convert(dapprof, recorded["raw"], *encoding).splitlines()]
    assert [e["event"] for e in events[:-1]] == ["profilingData"] * (len(events) - 1)
    assert events[-1]["event"] == "profilingStopped"
    assert all(e["type"] == "event" for e in events)
    frames, stacks, threads = {}, {}, {}
    counts = collections.Counter()
    for e in events[:-1]:
        body = e["body"]
        jsonschema.validate(body, data_schema)
        frames.update(body["newFrames"])
        stacks.update(body.get("newStacks", {}))
        threads.update(body.get("threads", {}))
        if "stackIds" in body:
            assert not encoding
            runs = zip(body["threadIds"], body["stackIds"], body["stackCounts"])
            samples = [(t, stacks[str(s)]) for t, s, n in runs for _ in range(n)]
        else:
            samples = list(zip(body["threadIds"], body["samples"]))
        for t, ids in samples:
            name = threads[str(t)]["name"]
            thread = next(line.split(";", 1)[0] for line in text.splitlines() if f'"{name}"' in line)
            counts[";".join([thread] + [label({"name": frames[str(i)]["function"],
                                                "file": frames[str(i)]["file"],
                                                "line": frames[str(i)]["line"],
                                                "gc": frames[str(i)].get("gc")}) for i in ids])] += 1
    assert dict(counts) == raw_counts(text)
    stopped = events[-1]["body"]
    jsonschema.validate(stopped, stopped_schema)
    assert stopped["sampleCount"] == sum(raw_counts(text).values())
    assert stopped["topFunctions"][0]["function"] in ("leaf_spin", "sleeper")
    assert sum(e["body"]["duration"] for e in events[:-1]) == pytest.approx(stopped["duration"])


@pytest.mark.parametrize("encoding", [[], ["--frames"]])
def test_the_stream_is_read_back_to_the_same_stacks_threads_and_times(dapprof, recorded, encoding,
                                                                      tmp_path):
    """A run's events, as a client keeps them (VS Code, to export a run after its session ended),
    convert to every format like the profile they came from."""
    stream = tmp_path / "run.jsonl"
    stream.write_text(convert(dapprof, recorded["speedscope"], *encoding), encoding="utf-8")
    assert convert(dapprof, stream, "--format", "raw", "--threads") == \
        convert(dapprof, recorded["speedscope"], "--format", "raw", "--threads")
    CHECKS["speedscope"](convert(dapprof, stream, "--format", "speedscope"))
    # And the stream again: the same samples. (Not the raw file's line counts: a sample that caught
    # two threads active is one sample and two lines.)
    first = [json.loads(line) for line in stream.read_text(encoding="utf-8").splitlines()]
    again = [json.loads(line) for line in convert(dapprof, stream).splitlines()]
    assert again[-1]["body"]["sampleCount"] == first[-1]["body"]["sampleCount"] > 0


def test_a_live_streams_samples_keep_their_times(dapprof, tmp_path):
    """A live run's batches carry startTime and endTime: their samples are spread between them."""
    frames = {"1": {"file": "a.py", "line": 1, "function": "a"}}
    stream = tmp_path / "live.jsonl"
    stream.write_text("\n".join(json.dumps({"type": "event", "event": "profilingData", "body": body})
                                 for body in [
        {"newFrames": frames, "samples": [[1], [1]], "threadIds": [7, 7], "sampleCount": 2,
         "duration": 100, "threads": {"7": {"name": "MainThread", "osThreadId": 7}},
         "startTime": 1_700_000_000_000, "endTime": 1_700_000_000_100},
        {"newFrames": {}, "samples": [[1]], "threadIds": [7], "sampleCount": 1, "duration": 100,
         "startTime": 1_700_000_002_000, "endTime": 1_700_000_002_000}]) + "\n", encoding="utf-8")
    trace = json.loads(convert(dapprof, stream, "--format", "chrometrace"))
    begins = sorted(e["ts"] for e in trace["traceEvents"] if e.get("ph") == "B")
    assert begins[0] == 0 and begins[-1] >= 2_000_000, begins
    assert convert(dapprof, stream, "--format", "raw").strip() == "a (a.py:1) 3"


def test_py_spys_raw_format(dapprof, tmp_path):
    f = tmp_path / "py-spy.txt"
    f.write_text('process 4242:"python3 app.py";thread (0x7F3A2C1B8740);<module> (app.py:30);'
                 'main (app.py:25) 4\n'
                 'process 4242:"python3 app.py";thread (0x7F3A2C1B8741);<module> (app.py:30);'
                 'work (lib/w.py:3) 2\n', encoding="utf-8")
    assert convert(dapprof, f, "--format", "raw", "--threads").splitlines() == [
        # One process: dapprof names it only when there are several.
        "thread (0x7f3a2c1b8740);<module> (app.py:30);main (app.py:25) 4",
        "thread (0x7f3a2c1b8741);<module> (app.py:30);work (lib/w.py:3) 2"]


@pytest.mark.parametrize("content,message", [
    ("", "the file is empty"),
    ("main;work\n", "line 1 is not a collapsed stack"),
    ('{"type": "event", "event": "output", "body": {}}\n', "no profilingData"),
    ('{"type": "event", "event": "profilingData", "body": {"newFrames": {}, "samples": [[7]], '
     '"sampleCount": 1, "duration": 1}}\n', "line 1: profilingData: "),
    ('{"type": "event", "event": "output", "body": {}}\nnot json\n', "line 2 is not a DAP event"),
    ('{"traceEvents": []}', "Chrome trace"),
    ('{"shared": {"frames": []}, "profiles": [{"type": "sampled", "samples": [[3]], '
     '"weights": [1]}]}', "sample 0 names frame 3, of 0"),
])
def test_malformed_files_are_refused_with_their_reason(dapprof, tmp_path, content, message):
    f = tmp_path / "input.prof"
    f.write_text(content, encoding="utf-8")
    r = run([dapprof, "convert", str(f)])
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith(f"dapprof: error: {f}: ") and message in r.stderr, r.stderr


def test_missing_file_and_bad_arguments(dapprof, tmp_path):
    r = run([dapprof, "convert", str(tmp_path / "none.json")])
    assert r.returncode == 1 and "No such file or directory" in r.stderr
    f = tmp_path / "ok.txt"
    f.write_text("a (a.py:1) 1\n", encoding="utf-8")
    r = run([dapprof, "convert", str(f), "--output", str(tmp_path / "x")])
    assert r.returncode == 2 and "stdout only" in r.stderr
    r = run([dapprof, "convert", str(f), "--format", "nope"])
    assert r.returncode != 0 and "nope" in r.stderr
