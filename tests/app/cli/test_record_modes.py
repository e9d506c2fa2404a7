"""`record --mode wall|cpu|gil|exception` on every interpreter, against tests/fixtures/modes.py,
whose threads' truth is known: `burner` spins in Python (on a CPU, holding the GIL), `hasher`
hashes without the GIL (on a CPU), `sleeper` and the main thread sleep, `handler` sleeps inside
`except ModeProbeError`. Each mode's samples hold exactly the threads it promises; and the flags'
conflicts are usage errors."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import pythons, read_line, run

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "modes.py"
EVERY = {"burner", "hasher", "sleeper", "handler", "MainThread"}
ROOT = re.compile(r'thread \(0x[0-9a-f]+\) "([^"]+)"')


def samples_by_thread(text: str) -> dict[str, list[list[str]]]:
    """Collapsed stacks (record --threads --format raw) by thread name: each stack's frames,
    outermost first, once per stack line."""
    threads: dict[str, list[list[str]]] = {}
    for line in text.splitlines():
        stack, _count = line.rsplit(" ", 1)
        frames = stack.split(";")
        m = ROOT.fullmatch(frames[0])
        assert m, line
        threads.setdefault(m.group(1), []).append(frames[1:])
    return threads


@pytest.fixture
def modes_program():
    procs = []

    def start(interp):
        proc = subprocess.Popen([interp.path, str(FIXTURE)], stdout=subprocess.PIPE, text=True,
                                encoding="utf-8")
        procs.append(proc)
        line = read_line(proc.stdout, 60)
        assert json.loads(line)["ready"], line
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def record(dapprof, pid, tmp_path, *flags) -> tuple[str, dict[str, list[list[str]]]]:
    out_file = tmp_path / ("-".join(f.strip("-") for f in flags) + ".txt")
    out = run([dapprof, "record", "--pid", str(pid), "--duration", "1.5", "--rate", "100",
               "--threads", "--format", "raw", "-o", str(out_file), *flags])
    assert out.returncode == 0, out.stderr
    return out.stdout, samples_by_thread(out_file.read_text(encoding="utf-8"))


@pytest.mark.parametrize("interp", pythons.each())
def test_each_mode_samples_the_threads_it_promises(dapprof, tmp_path, modes_program, interp):
    pid = modes_program(interp).pid

    stdout, wall = record(dapprof, pid, tmp_path, "--mode", "wall")
    assert "mode wall" in stdout, stdout
    assert set(wall) == EVERY, sorted(wall)

    _, cpu = record(dapprof, pid, tmp_path, "--mode", "cpu")
    # On a CPU: both burners, whether or not they hold the GIL; never a thread asleep for an hour.
    assert {"burner", "hasher"} <= set(cpu) <= {"burner", "hasher"}, sorted(cpu)

    _, gil = record(dapprof, pid, tmp_path, "--mode", "gil")
    # The GIL's holders: the Python burner (the hasher holds it between two hashes).
    assert "burner" in gil and set(gil) <= {"burner", "hasher"}, sorted(gil)

    _, exception = record(dapprof, pid, tmp_path, "--mode", "exception")
    assert set(exception) == {"handler"}, sorted(exception)
    for frames in exception["handler"]:
        # Innermost last: the exception's frame on top of the handler's stack.
        assert frames[-1] == "(exception) ModeProbeError", frames
        assert any(f.startswith("handle_forever") for f in frames[:-1]), frames

    # The older spellings are the same modes.
    _, idle = record(dapprof, pid, tmp_path, "--idle")
    assert set(idle) == EVERY, sorted(idle)
    _, gil_alias = record(dapprof, pid, tmp_path, "--gil")
    assert "burner" in gil_alias and set(gil_alias) <= {"burner", "hasher"}, sorted(gil_alias)


@pytest.mark.parametrize("flags, conflict", [
    (["--mode", "cpu", "--idle"], "--mode cpu conflicts with --idle"),
    (["--idle", "--mode", "exception"], "--mode exception conflicts with --idle"),
    (["--mode", "wall", "--gil"], "--mode wall conflicts with --gil"),
    (["--gil", "--idle", "--mode", "wall"], "--mode wall conflicts with --idle and --gil"),
])
def test_conflicting_mode_flags_are_a_usage_error(dapprof, flags, conflict):
    out = run([dapprof, "record", "--pid", "1", "--duration", "1", *flags])
    assert out.returncode != 0
    assert conflict in out.stderr, out.stderr
    assert "give only --mode" in out.stderr, out.stderr


@pytest.mark.parametrize("flags", [["--mode", "gil", "--gil"], ["--mode", "wall", "--idle"],
                                   ["--mode", "gil", "--gil", "--idle"]])
def test_agreeing_spellings_are_accepted(dapprof, flags):
    """A flag naming the same mode as --mode is no conflict: the run fails only later, on the
    target (PID 1 is not Python), not on its flags."""
    out = run([dapprof, "record", "--pid", "1", "--duration", "1", *flags])
    assert "conflicts" not in out.stderr, out.stderr


def test_unknown_mode_is_a_usage_error(dapprof):
    out = run([dapprof, "record", "--pid", "1", "--mode", "idle"])
    assert out.returncode != 0
    assert "--mode" in out.stderr and "wall" in out.stderr, out.stderr
