"""`dapprof record` end to end: every output format, both ways of choosing the target, a target
that exits, and what the user sees (summary, progress)."""
from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from conftest import (CHECKS, DEBIAN_PYTHON, FIXTURE, check_raw, pythons, read_line, run,
                      stderr_on_a_terminal, wait_until)

FORMATS = ["flamegraph", "speedscope", "raw", "chrometrace", "cpuprofile"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_record_pid_every_format(dapprof, target, tmp_path, fmt):
    out_file = tmp_path / f"profile.{fmt}"
    out = run([dapprof, "record", "--pid", str(target.pid), "--duration", "2", "--format", fmt,
               "--output", str(out_file)])
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"dapprof> Sampling process {target.pid} at 100 ")
    m = re.search(r"Wrote \S+ data to '(.+)'\. Samples: (\d+) Errors: (\d+)", out.stderr)
    assert m and m.group(1) == str(out_file), out.stderr
    assert 0 < int(m.group(2)) <= 2 * 100 + 5
    assert "Top functions by own samples" in out.stderr and "leaf_spin" in out.stderr
    assert "elapsed," not in out.stderr  # no progress line on a pipe
    CHECKS[fmt](out_file.read_text(encoding="utf-8"))
    assert target.proc.poll() is None


def test_record_threads_idle_and_default_name(dapprof, target, tmp_path):
    out = run([dapprof, "record", "--pid", str(target.pid), "--duration", "1", "--format", "raw",
               "--threads", "--idle", "--rate", "50"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    files = list(tmp_path.iterdir())
    assert len(files) == 1
    assert re.fullmatch(rf"{target.pid}-\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\.txt", files[0].name)
    counts = check_raw(files[0].read_text(encoding="utf-8"))
    roots = {stack.split(";")[0] for stack in counts}
    assert any(re.fullmatch(r'thread \(0x[0-9a-f]+\) "MainThread"', r) for r in roots), roots
    # --idle keeps the sleeping thread.
    assert any(re.fullmatch(r'thread \(0x[0-9a-f]+\) "sleepy-worker"', r) for r in roots), roots


def test_record_gil_only_keeps_the_spinning_thread(dapprof, target, tmp_path):
    out_file = tmp_path / "gil.txt"
    out = run([dapprof, "record", "--pid", str(target.pid), "--duration", "1", "--format", "raw",
               "--gil", "--idle", "--threads", "-o", str(out_file)])
    assert out.returncode == 0, out.stderr
    counts = check_raw(out_file.read_text(encoding="utf-8"))
    assert not any("sleepy-worker" in stack for stack in counts)


def _context_switches(pid: int, tid: int) -> int:
    fields = dict(line.split(":", 1) for line in
                  open(f"/proc/{pid}/task/{tid}/status", encoding="utf-8").read().splitlines())
    return int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])


def test_consistent_record_never_stops_threads_sampled_or_not(dapprof, target):
    """The default (consistent) mode reads without stopping the program unless a stack keeps
    moving, so a sleeping thread is not woken, whether it is sampled (--idle) or skipped: a
    ptrace stop would show as a context switch per sample (a debugged program has several such
    threads)."""
    sleeper = next(int(t) for t in os.listdir(f"/proc/{target.pid}/task") if int(t) != target.pid)
    # It wakes by itself 20 times a second: how many switches that makes, unsampled.
    before, start = _context_switches(target.pid, sleeper), time.monotonic()
    time.sleep(2)
    natural_rate = (_context_switches(target.pid, sleeper) - before) / (time.monotonic() - start)
    runs = {}
    for flags in ([], ["--idle"]):
        before, start = _context_switches(target.pid, sleeper), time.monotonic()
        out = run([dapprof, "record", "--pid", str(target.pid), "--duration", "2", "--rate", "500",
                   "--format", "raw", "-o", os.devnull, *flags])
        assert out.returncode == 0, out.stderr
        switches = _context_switches(target.pid, sleeper) - before
        natural = natural_rate * (time.monotonic() - start)
        samples = int(re.search(r"Samples: (\d+)", out.stderr).group(1))
        runs[" ".join(flags) or "default"] = (switches, round(natural), samples)
    for switches, natural, samples in runs.values():
        assert samples > 100 and switches < 1.5 * natural + 30 + samples / 10, runs


@pytest.mark.parametrize("interp", pythons.each(sampler_only_too=True))
def test_record_spawned_program(dapprof, tmp_path, interp):
    """`record -- python script args`: sampled from its start, until it exits; its exit code is
    passed on."""
    out_file = tmp_path / "spawned.txt"
    out = run([dapprof, "record", "--format", "raw", "-o", str(out_file), "--",
               interp.path, str(FIXTURE), "--seconds", "1", "--exit-code", "3"])
    assert out.returncode == 3, out.stderr
    assert "ready" in out.stdout  # the program's own output still reaches the terminal
    assert re.search(r"Stopped sampling: process \d+ exited", out.stderr), out.stderr
    check_raw(out_file.read_text(encoding="utf-8"))


@pytest.mark.parametrize("interp", pythons.each())
def test_record_subprocesses_samples_the_child_in_its_own_process(dapprof, tmp_path, interp):
    """--subprocesses: a child Python process started by the program is sampled too, its stacks
    under its own PID (`process PID:"command line"`, py-spy's label)."""
    out_file = tmp_path / "family.txt"
    out = run([dapprof, "record", "--subprocesses", "--rate", "200", "--format", "raw", "-o",
               str(out_file), "--", interp.path, str(FIXTURE.parent / "parent_child.py"), "3"])
    assert out.returncode == 0, out.stderr
    child = int(re.search(r"child (\d+)", out.stdout).group(1))
    roots = {}
    for line in out_file.read_text(encoding="utf-8").splitlines():
        stack, count = line.rsplit(" ", 1)
        root, _, rest = stack.partition(";")
        level = re.fullmatch(r'process (\d+):"(.+)"', root)
        assert level, root
        roots.setdefault(int(level.group(1)), []).append((rest, int(count)))
    child_stacks = roots.get(child, [])
    assert any("child_spin" in s and n > 0 for s, n in child_stacks), roots.keys()
    parent = [r for r in roots if r != child]
    assert len(parent) == 1 and any("parent_spin" in s for s, _ in roots[parent[0]]), roots.keys()


def test_record_spawned_default_name_and_exit_zero(dapprof, tmp_path):
    out = run([dapprof, "record", "--format", "speedscope", "--", DEBIAN_PYTHON, str(FIXTURE),
               "--seconds", "0.5"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and re.fullmatch(r"busy-.*\.json", files[0].name), files
    CHECKS["speedscope"](files[0].read_text(encoding="utf-8"))


def test_record_target_exits_mid_recording(dapprof, start_target, tmp_path):
    target = start_target("--seconds", "1.5")
    out_file = tmp_path / "exits.json"
    started = time.monotonic()
    out = run([dapprof, "record", "--pid", str(target.pid), "--duration", "30", "--format",
               "cpuprofile", "-o", str(out_file)])
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 25, "record did not notice that the target exited"
    assert f"Stopped sampling: process {target.pid} exited" in out.stderr
    CHECKS["cpuprofile"](out_file.read_text(encoding="utf-8"))


def test_progress_on_a_terminal_only(dapprof, target, tmp_path):
    text = stderr_on_a_terminal([dapprof, "record", "--pid", str(target.pid), "--duration", "1.5",
                                 "--format", "raw", "-o", str(tmp_path / "p.txt")])
    assert re.search(r"\r\x1b\[Kdapprof> \d+\.\ds elapsed, \d+ samples, \d+ errors", text), text
    assert re.search(r"\r\x1b\[Kdapprof> Stopped sampling", text), "progress line not cleared"
    assert "Wrote raw data" in text


def test_record_hide_debugger_leaves_out_debugpys_frames(dapprof, tmp_path):
    # A real program whose hot loop runs under a module in a debugpy/ directory, as when a program
    # is recorded while debugpy runs it: its frames are the debugger's.
    (tmp_path / "debugpy").mkdir()
    (tmp_path / "debugpy" / "__init__.py").write_text("")  # before an installed debugpy
    (tmp_path / "debugpy" / "runner.py").write_text(
        "import time\n"
        "def run(work):\n"
        "    end = time.time() + 1.5\n"
        "    while time.time() < end:\n"
        "        work()\n")
    (tmp_path / "app.py").write_text(
        "import sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from debugpy import runner\n"
        "def program_work():\n"
        "    sum(range(2000))\n"
        "runner.run(program_work)\n")
    files = {}
    for flags in ([], ["--hide-debugger"]):
        out_file = tmp_path / f"p{len(flags)}.txt"
        out = run([dapprof, "record", "--format", "raw", "-o", str(out_file), "--full-filenames",
                   *flags, "--", DEBIAN_PYTHON, str(tmp_path / "app.py"), str(tmp_path)])
        assert out.returncode == 0, out.stderr
        files[bool(flags)] = (out_file.read_text(encoding="utf-8"), out.stderr)
    shown, summary = files[False]
    assert "/debugpy/runner.py" in shown and "/debugpy/runner.py" in summary
    hidden, summary = files[True]
    assert "/debugpy/" not in hidden and "/debugpy/" not in summary, hidden
    # What the debugger's frame called stays, as its own root.
    assert any(line.startswith("program_work (") for line in hidden.splitlines()), hidden
    assert "program_work" in summary
