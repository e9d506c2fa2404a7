"""A sampled program that execs another under its pid (tests/fixtures/exec_workers.py `before`):
record follows it into the new program, whatever its interpreter, with no error and its samples on
both sides of the exec; one that becomes a program that is not Python stops sampling with an error
naming it, and the profile keeps what was sampled before."""
from __future__ import annotations

import re
import subprocess
import time

import pytest

from conftest import HERE, pythons, read_line, run

PROGRAM = HERE.parents[1] / "fixtures" / "exec_workers.py"


def spin_samples(text: str) -> dict[str, int]:
    """Samples under the program's `before` and `after`."""
    counts = {"before": 0, "after": 0}
    for line in text.splitlines():
        stack, count = line.rsplit(" ", 1)
        for name in re.findall(r"\b(before|after) \(exec_workers\.py:", stack)[:1]:
            counts[name] += int(count)
    return counts


# Debian's python3.11 is not position-independent: exec'd again, its new runtime is where the old
# one was, and the old program's cached code objects would be taken for the new one's. pyenv's
# 3.12 is another version in another library. 3.15 runs in the unstable root, as in a container.
@pytest.mark.parametrize("first,then", [("debian-3.11", "self"), ("debian-3.11", "3.12"),
                                        ("sid-3.15", "self")])
def test_a_program_that_execs_is_sampled_on_as_its_new_program(dapprof, tmp_path, first, then):
    interp = pythons.find(first)
    if interp is None:
        pytest.skip(pythons.missing_reason(first))
    program = "self"
    if then != "self":
        other = pythons.find(then)
        if other is None:
            pytest.skip(pythons.missing_reason(then))
        program = other.path
    out_file = tmp_path / "exec.txt"
    out = run([dapprof, "record", "--rate", "100", "--format", "raw", "-o", str(out_file), "--",
               interp.path, str(PROGRAM), "before", "1", program, str(PROGRAM), "after", "1"],
              timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.search(r"Errors: 0\b", out.stderr), out.stderr
    assert "exited." in out.stderr, out.stderr
    counts = spin_samples(out_file.read_text(encoding="utf-8"))
    # 1 s each at 100 Hz: 100 samples; the new program is attached once its runtime is set up.
    assert counts["before"] >= 60 and counts["after"] >= 60, (counts, out.stderr)


def test_a_program_that_execs_one_not_python_stops_sampling_with_its_name(dapprof, tmp_path):
    interp = pythons.find("debian-3.11") or pythons.interpreters()[0]
    proc = subprocess.Popen([interp.path, str(PROGRAM), "before", "1", "/bin/sleep", "8"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert read_line(proc.stdout, 30).strip() == "ready"
        out_file = tmp_path / "exec.txt"
        started = time.monotonic()
        out = run([dapprof, "record", "--pid", str(proc.pid), "--rate", "100", "--duration", "6",
                   "--format", "raw", "-o", str(out_file)], timeout=60)
        took = time.monotonic() - started
        assert out.returncode == 1, out.stderr
        assert re.search(rf"process {proc.pid} replaced its program \(exec\) with `/bin/sleep 8`, "
                         r"which cannot be sampled", out.stderr), out.stderr
        # About 1 s before the exec, then the 2 s a new program has to look like Python.
        assert took < 5.5, (took, out.stderr)
        assert re.search(r"Errors: 0\b", out.stderr), out.stderr
        assert spin_samples(out_file.read_text(encoding="utf-8"))["before"] >= 50, out.stderr
    finally:
        proc.kill()
        proc.communicate(timeout=30)
