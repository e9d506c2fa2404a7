"""record --opcodes: each frame's bytecode instruction, checked against what CPython's own dis
says of the code in the target interpreter (fixtures/opcode_hot.py prints it). The program's time
goes to `total * 31 + i` on an integer that grows without bound: the multiplication (BINARY_MULTIPLY
before 3.11, BINARY_OP or its specialised BINARY_OP_MULTIPLY_INT after) must be the hot line's
most sampled instruction, every sampled instruction must start where dis says one starts and
stand for the instruction dis names there, on 3.11+ with dis's column, and the caller must be at
its call."""
from __future__ import annotations

import json
import re

import pytest

from conftest import HERE, pythons, run

PROGRAM = HERE / "fixtures" / "opcode_hot.py"
NAMED = re.compile(r"(?P<function>.+) \[(?P<name>\S+) @(?P<offset>\d+)\]")
# Of the hot line's samples, the share at its multiplication: both it and the addition walk every
# digit, the multiplication more slowly (measured 51-65% on 3.8-3.15, asan build, 300 samples;
# the rest at the addition and the stores).
MULTIPLY_SHARE = 0.4


def record(dapprof, tmp_path, interp, fmt="speedscope", *flags):
    out_file = tmp_path / f"opcodes.{fmt}"
    out = run([dapprof, "record", "--format", fmt, "-o", str(out_file), *flags, "--",
               interp.path, str(PROGRAM), "3"], timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1]), out_file.read_text(encoding="utf-8")


def leaf_frames(doc):
    """(leaf frame, caller frame) of every sample of the speedscope document."""
    frames = doc["shared"]["frames"]
    for profile in doc["profiles"]:
        for sample, weight in zip(profile["samples"], profile["weights"]):
            if not sample:  # a thread caught outside any Python frame
                continue
            for _ in range(int(weight)):
                yield frames[sample[-1]], frames[sample[-2]] if len(sample) > 1 else None


def instruction(frame):
    m = NAMED.fullmatch(frame["name"])
    assert m, f"a Python frame without an instruction: {frame}"
    return m["function"], m["name"], int(m["offset"])


def base_of(name, truth_name):
    """Whether the sampled opcode `name` stands for dis's `truth_name`: it, a specialised form of
    it (BINARY_OP_MULTIPLY_INT for BINARY_OP) or its adaptive/instrumented form."""
    return (name == truth_name or name.startswith(truth_name + "_")
            or name == "INSTRUMENTED_" + truth_name)


@pytest.mark.parametrize("interp", pythons.each())
def test_hot_samples_are_at_the_multiplication(dapprof, tmp_path, interp):
    truth, text = record(dapprof, tmp_path, interp, "speedscope", "--opcodes")
    doc = json.loads(text)
    by_offset = {code: {i["offset"]: i for i in truth[code]} for code in ("hot", "main")}
    hot_line, multiply = truth["hot_line"], set(truth["multiply"])
    assert len(multiply) == 1, truth["multiply"]
    at_hot_line = at_multiply = checked = 0
    opcodes = {}
    for leaf, caller in leaf_frames(doc):
        if not leaf["name"].startswith("hot ["):
            continue
        function, name, offset = instruction(leaf)
        truth_ins = by_offset["hot"].get(offset)
        assert truth_ins is not None, f"offset {offset} is not an instruction of hot: {leaf}"
        assert base_of(name, truth_ins["name"]), (name, truth_ins)
        if "positions" in truth_ins:
            line, _, column, _ = truth_ins["positions"]
            assert leaf["line"] == line, (leaf, truth_ins)
            if column is not None:
                assert leaf["col"] == column + 1, (leaf, truth_ins)
        checked += 1
        # The caller's instruction is the call to hot(), also where its pointer on 3.11-3.12
        # rests on the call's last inline cache entry.
        _, caller_name, caller_offset = instruction(caller)
        call = by_offset["main"].get(caller_offset)
        assert call is not None and base_of(caller_name, call["name"]), (caller, call)
        assert call["name"].startswith("CALL"), call
        if leaf["line"] == hot_line:
            at_hot_line += 1
            at_multiply += offset in multiply
            opcodes[name] = opcodes.get(name, 0) + 1
    print(f"{interp}: {at_multiply}/{at_hot_line} of the hot line at the multiplication, "
          f"{checked} checked; {opcodes}")
    assert at_hot_line >= 100, f"only {at_hot_line} samples of the hot line"
    assert at_multiply >= MULTIPLY_SHARE * at_hot_line, opcodes
    top = max(opcodes, key=opcodes.get)
    assert base_of(top, "BINARY_MULTIPLY" if interp.version[:2] < (3, 11) else "BINARY_OP"), opcodes


def test_gecko_keeps_the_instruction(dapprof, tmp_path):
    interp = pythons.interpreters()[-1]
    truth, text = record(dapprof, tmp_path, interp, "gecko", "--opcodes")
    implementations = set()
    for thread in json.loads(text)["threads"]:
        schema = thread["frameTable"]["schema"]
        strings = thread["stringTable"]
        implementations |= {strings[row[schema["implementation"]]]
                            for row in thread["frameTable"]["data"]
                            if row[schema["implementation"]] is not None
                            and strings[row[schema["location"]]].startswith("hot (")}
    names = {re.fullmatch(r"(\S+) @(\d+)", i)[1] for i in implementations}
    multiply = next(i for i in truth["hot"] if i["offset"] in truth["multiply"])
    assert any(base_of(n, multiply["name"]) for n in names), implementations


def test_without_opcodes_nothing_changes(dapprof, tmp_path):
    """No instruction in any frame name, and a format without a place for them (collapsed) gives
    the same stacks with --opcodes as without: one line per stack, not per instruction."""
    interp = pythons.interpreters()[-1]
    _, text = record(dapprof, tmp_path, interp)
    assert not any(NAMED.fullmatch(f["name"]) for f in json.loads(text)["shared"]["frames"])
    _, raw = record(dapprof, tmp_path, interp, "raw", "--opcodes")
    stacks = [line.rsplit(" ", 1)[0] for line in raw.splitlines()]
    assert len(stacks) == len(set(stacks)) and not any("@" in s for s in stacks), stacks


# sys.monitoring is 3.12's.
MONITORED = [p for p in pythons.each()
             if p.values[0] is not None and p.values[0].version[:2] >= (3, 12)]


@pytest.mark.parametrize("events", ["line", "instruction"])
@pytest.mark.parametrize("interp", MONITORED)
def test_monitored_code_shows_the_instructions_it_runs(dapprof, tmp_path, interp, events):
    """Under a sys.monitoring tool CPython rewrites hot() in place: each line's first instruction
    becomes INSTRUMENTED_LINE and, with INSTRUCTION events, every other one
    INSTRUMENTED_INSTRUCTION, keeping the real opcode aside. Every sampled instruction of hot()
    (the caller of the tool's callback much of the time) must be the one dis names at its
    offset, or a specialised form of it: none of the stand-ins."""
    out_file = tmp_path / "monitored.speedscope"
    out = run([dapprof, "record", "--format", "speedscope", "-o", str(out_file), "--opcodes", "--",
               interp.path, str(PROGRAM), "2", events], timeout=120)
    assert out.returncode == 0, out.stderr
    truth = json.loads(out.stdout.splitlines()[-1])
    by_offset = {i["offset"]: i for i in truth["hot"]}
    doc = json.loads(out_file.read_text(encoding="utf-8"))
    frames = doc["shared"]["frames"]
    seen = {}
    for profile in doc["profiles"]:
        for sample, weight in zip(profile["samples"], profile["weights"]):
            for index in sample:
                if not frames[index]["name"].startswith("hot ["):
                    continue
                _, name, offset = instruction(frames[index])
                truth_ins = by_offset.get(offset)
                assert truth_ins is not None, f"offset {offset} is not an instruction of hot"
                assert not name.startswith("INSTRUMENTED_"), (name, truth_ins)
                assert name == truth_ins["name"] or name.startswith(truth_ins["name"] + "_"), (
                    name, truth_ins)
                seen[(offset, name)] = seen.get((offset, name), 0) + int(weight)
    print(f"{interp} {events}: {sorted(seen.items())}")
    at_hot_line = sum(n for (offset, _), n in seen.items()
                      if by_offset[offset]["line"] in (truth["hot_line"], None))
    # Each line's first instruction is instrumented, and hot() waits there for the tool's
    # callback: the hot line's takes samples.
    first = min(i["offset"] for i in truth["hot"] if i["line"] == truth["hot_line"])
    assert sum(n for (offset, _), n in seen.items() if offset == first) >= 5, seen
    assert at_hot_line >= 20, seen
