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
# Points of the loop's time (absolute). Measured on 3.8-3.11 (asan build, 300 samples): dapprof
# 3 to 8 points under the program's own figure, never over by more than 5.
SLACK = 10.0
# From 3.12 on (the collection runs from the eval breaker) the collector's flag is seen set in
# far fewer samples than gc.callbacks times (measured 16-31% against 43-60%): not understood
# yet, so marked as a known failure that must keep failing until it is.
KNOWN_SHORT = pytest.mark.xfail(strict=True, reason="3.12+: GC share under the program's")


def each_interpreter():
    params = pythons.each()
    return [pytest.param(*p.values, id=p.id, marks=[*p.marks, KNOWN_SHORT])
            if p.values[0] is not None and p.values[0].version[:2] >= (3, 12) else p
            for p in params]


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


@pytest.mark.parametrize("interp", each_interpreter())
def test_gc_share_is_what_the_program_measured(dapprof, tmp_path, interp):
    truth, total, in_gc, _ = record(dapprof, tmp_path, interp, "--idle")
    assert total >= 100, f"only {total} samples of the loop"
    share = 100.0 * in_gc / total
    print(f"{interp}: program {truth['gc_share']:.1f}%, dapprof {share:.1f}% of {total}")
    assert truth["gc_share"] > 10, truth  # the fixture keeps the collector busy
    assert in_gc > 0, "no (garbage collection) frame"
    assert abs(share - truth["gc_share"]) <= SLACK, (share, truth)


def test_no_gc_gives_no_gc_frames(dapprof, tmp_path):
    interp = pythons.interpreters()[0]
    truth, total, in_gc, stacks = record(dapprof, tmp_path, interp, "--no-gc")
    assert truth["gc_share"] > 10 and total >= 100, (truth, total)
    assert not any(GC_LABEL in s for s in stacks)
