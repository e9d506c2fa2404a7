"""The garbage collector as a frame of its own: a program that makes reference cycles and times
its own collections with gc.callbacks (fixtures/gc_cycles.py) spends, by dapprof's samples, the
share of its time in (garbage collection) frames that it measured itself, on every interpreter;
and --no-gc leaves the frame out."""
from __future__ import annotations

import json

import pytest

from conftest import HERE, pythons, run

PROGRAM = HERE / "fixtures" / "gc_cycles.py"
GC_LABEL = "(garbage collection) (<GC>)"
# Points of the loop's time (absolute). Measured on 3.8-3.15 (asan build, 300 samples): dapprof
# within 1 to 8 points of the program's own figure, more often under than over.
SLACK = 10.0


def record(dapprof, tmp_path, interp, *flags):
    out_file = tmp_path / "gc.txt"
    out = run([dapprof, "record", "--format", "raw", "-o", str(out_file), *flags, "--",
               interp.path, str(PROGRAM), "3"], timeout=120)
    assert out.returncode == 0, out.stderr
    truth = json.loads(out.stdout.splitlines()[-1])
    stacks = {}
    for line in out_file.read_text(encoding="utf-8").splitlines():
        stack, count = line.rsplit(" ", 1)
        stacks[stack] = int(count)
    # The samples of the timed loop, and those of them in a collection.
    churn = {s: n for s, n in stacks.items() if "churn (" in s}
    in_gc = sum(n for s, n in churn.items() if s.split(";")[-1] == GC_LABEL)
    assert all(GC_LABEL not in s.split(";")[:-1] for s in stacks), "a GC frame not on top"
    return truth, sum(churn.values()), in_gc, stacks


@pytest.mark.parametrize("interp", pythons.each())
def test_gc_share_is_what_the_program_measured(dapprof, tmp_path, interp):
    # Nonblocking: each sample is of the one instant its bytes were fetched at, never read again.
    truth, total, in_gc, _ = record(dapprof, tmp_path, interp, "--idle", "--nonblocking")
    assert total >= 100, f"only {total} samples of the loop"
    share = 100.0 * in_gc / total
    print(f"{interp}: program {truth['gc_share']:.1f}%, dapprof {share:.1f}% of {total}")
    assert truth["gc_share"] > 10, truth  # the fixture keeps the collector busy
    assert in_gc > 0, "no (garbage collection) frame"
    assert abs(share - truth["gc_share"]) <= SLACK, (share, truth)


@pytest.mark.parametrize("interp", pythons.each())
def test_gc_share_in_consistent_mode(dapprof, tmp_path, interp):
    """The default mode reads a stack again when it moved while being read. From 3.12 the
    collector runs from a callee's first instruction (the eval breaker of its RESUME) and the
    callee returns right after it: a sample read during a short collection is often read again
    once it is over, so the share is under the program's there (docs/PROFILING.md says so). It is
    never over it, and before 3.12 it is the program's."""
    truth, total, in_gc, _ = record(dapprof, tmp_path, interp, "--idle")
    assert total >= 100, f"only {total} samples of the loop"
    share = 100.0 * in_gc / total
    print(f"{interp}: program {truth['gc_share']:.1f}%, dapprof {share:.1f}% of {total}")
    assert in_gc > 0, "no (garbage collection) frame"
    assert share <= truth["gc_share"] + SLACK, (share, truth)
    if interp.version[:2] < (3, 12):
        assert abs(share - truth["gc_share"]) <= SLACK, (share, truth)


def test_no_gc_gives_no_gc_frames(dapprof, tmp_path):
    interp = pythons.interpreters()[0]
    truth, total, in_gc, stacks = record(dapprof, tmp_path, interp, "--no-gc")
    assert truth["gc_share"] > 10 and total >= 100, (truth, total)
    assert not any(GC_LABEL in s for s in stacks)
