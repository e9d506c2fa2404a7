"""Live profiling with `opcodes`: a real debugpy session of a program whose hot line's time goes
to one instruction. The stream's frames stay one per line (as without opcodes), and the
instructions counted beside them are the ones CPython's own `dis` gives at their offsets, with
the positions of `co_positions()`; the multiplication leads its line."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

import pythons
from conftest import DEBIAN_PYTHON, start_stdio
from live_session import finish, launch, start_profiling, stream_of

PROGRAM = Path(__file__).resolve().parents[1] / "app" / "cli" / "fixtures" / "opcode_hot.py"
BASE = {"BINARY_OP", "BINARY_MULTIPLY", "BINARY_ADD", "LOAD_FAST", "LOAD_CONST", "STORE_FAST"}


def truth(python: str) -> dict:
    """What the interpreter's own dis says of the program (a run of no seconds prints it)."""
    out = subprocess.run([python, str(PROGRAM), "0"], check=True, capture_output=True, text=True,
                         timeout=60).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("opcodes", [True, False])
def test_instructions_are_counted_beside_one_frame_per_line(procs, opcodes):
    want = truth(DEBIAN_PYTHON)
    by_offset = {i["offset"]: i for i in want["hot"]}
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    launch(client, [60], python=DEBIAN_PYTHON, program=PROGRAM)
    mark = len(client.received)
    body = start_profiling(client, rate=500, batchIntervalMs=50, opcodes=opcodes)
    assert body["rate"] == 500
    time.sleep(2.0)
    stopped = client.call("stopProfiling", {})
    assert stopped["success"], stopped
    stream = stream_of(client, mark)
    finish(client)
    hot = [fid for fid, f in stream.frames.items()
           if f["function"] == "hot" and f["line"] == want["hot_line"]]
    assert len(hot) == 1, "the hot line is one frame, whatever its instructions"
    keys = [(f["file"], f["line"], f["function"], f.get("native", False))
            for f in stream.frames.values()]
    assert len(keys) == len(set(keys)), "no frame announced twice under another ID"
    if not opcodes:
        assert not stream.instructions and not stream.instruction_counts
        return

    on_hot = {iid: ins for iid, ins in stream.instructions.items() if ins["frame"] == hot[0]}
    assert on_hot, "instructions of the hot line"
    line_total = sum(stream.instruction_counts.get(iid, [0, 0])[1] for iid in on_hot)
    hot_samples = sum(1 for _, stack in stream.stacks if hot[0] in stack)
    assert line_total == hot_samples, "each sample at the line counted at one of its instructions"
    # The daemon says which are specialised: members of a family, but not 3.11's adaptive forms,
    # which stand for their family's instruction until they specialise (`i % 64`'s BINARY_OP has
    # no specialised form on 3.11 and stays BINARY_OP_ADAPTIVE).
    members = {m for family in want["families"].values() for m in family}
    kinds = {}
    for ins in stream.instructions.values():
        specialised = ins["opcode"] in members and not ins["opcode"].endswith("_ADAPTIVE")
        assert ins["specialized"] is specialised, ins
        kinds[ins["opcode"]] = ins["specialized"]
    print(f"opcodes and whether specialised: {kinds}")
    for iid, ins in on_hot.items():
        dis_says = by_offset.get(ins["offset"])
        assert dis_says, f"offset {ins['offset']} is an instruction start by dis"
        assert ins.get("baseOpcode", ins["opcode"]) == dis_says["name"], (ins, dis_says)
        assert [ins["line"], ins["endLine"], ins["column"], ins["endColumn"]] \
            == dis_says["positions"], (ins, dis_says)
    top = max(on_hot, key=lambda iid: stream.instruction_counts.get(iid, [0, 0])[1])
    assert on_hot[top]["offset"] in want["multiply"], on_hot[top]
    assert stream.instruction_counts[top][1] >= 0.4 * line_total
    # The caller is at its call: main's frame, at the CALL of hot.
    main = [fid for fid, f in stream.frames.items()
            if f["function"] == "main" and f["line"] == want["call_line"]]
    assert main
    calls = {ins["opcode"] for ins in stream.instructions.values() if ins["frame"] == main[0]}
    assert calls and all(c.startswith(("CALL", "PRECALL")) for c in calls), calls


# debugpy on 3.12+ debugs through sys.monitoring, which instruments the code it watches in place.
MONITORED = [p for p in pythons.each()
             if p.values[0] is not None and p.values[0].version[:2] >= (3, 12)]


@pytest.mark.parametrize("interp", MONITORED)
def test_instrumented_code_shows_its_instructions_under_debugpy(procs, interp):
    """Under debugpy the hot function's lines are instrumented (INSTRUMENTED_LINE keeping the real
    opcode aside): every instruction counted in hot() is still the one dis gives at its offset,
    or a specialised form of it, never the INSTRUMENTED_LINE or INSTRUMENTED_INSTRUCTION stand-in.
    A jump or call the debugger's monitoring instruments in place (INSTRUMENTED_POP_JUMP_IF_FALSE
    for its branch events) is what the interpreter runs there: it is shown as that, unspecialised."""
    want = truth(interp.path)
    by_offset = {i["offset"]: i for i in want["hot"]}
    proc, client = start_stdio(procs, "--python", interp.path, env=pythons.debugpy_env(interp))
    launch(client, [60], python=interp.inner_path, program=PROGRAM)
    mark = len(client.received)
    start_profiling(client, rate=500, batchIntervalMs=50, opcodes=True)
    time.sleep(2.0)
    assert client.call("stopProfiling", {})["success"]
    stream = stream_of(client, mark)
    finish(client)
    hot_frames = {fid for fid, f in stream.frames.items() if f["function"] == "hot"}
    counted = {ins["offset"]: ins["opcode"] for iid, ins in stream.instructions.items()
               if ins["frame"] in hot_frames and stream.instruction_counts.get(iid)}
    specialized = {ins["offset"]: ins["specialized"] for iid, ins in stream.instructions.items()
                   if ins["frame"] in hot_frames and stream.instruction_counts.get(iid)}
    print(f"{interp}: {sorted(counted.items())}")
    assert counted, "instructions of hot() counted"
    for offset, opcode in counted.items():
        dis_says = by_offset.get(offset)
        assert dis_says, f"offset {offset} is an instruction start by dis"
        assert opcode not in ("INSTRUMENTED_LINE", "INSTRUMENTED_INSTRUCTION"), (opcode, dis_says)
        if opcode.startswith("INSTRUMENTED_"):
            assert opcode == "INSTRUMENTED_" + dis_says["name"], (opcode, dis_says)
            assert not specialized[offset], (opcode, "an instrumented form is not specialised")
        else:
            assert opcode == dis_says["name"] or opcode.startswith(dis_says["name"] + "_"), (
                opcode, dis_says)
