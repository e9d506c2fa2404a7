"""record --subprocesses on process pools: a pool of CPU-bound workers (multiprocessing.Pool and
concurrent.futures.ProcessPoolExecutor, tests/fixtures/pool_workers.py) on every interpreter; every
worker the program names is in the one profile, under a level of its own process, with samples at
the rate asked; workers that keep ending make no error; a worker that execs a fresh interpreter
(tests/fixtures/exec_workers.py) is sampled on, named by its new command line."""
from __future__ import annotations

import json
import re

import pytest

from conftest import HERE, pythons, run

PROGRAM = HERE.parents[1] / "fixtures" / "pool_workers.py"
EXEC_PROGRAM = HERE.parents[1] / "fixtures" / "exec_workers.py"
RATE = 50
WORKERS = 32
SECONDS = 4.0
# Of the samples a worker spinning for its whole time should get at RATE. 32 workers on two cores
# with the asan build: 0.25 to 0.96 of them measured with the machine's load average at 19 (other
# builds running), 0.5 and more when it was quiet; a worker is attached up to a scan period after
# it starts. Before the sampling thread raised its priority, workers of a pool this size got none.
BOUND = 0.2
PROCESS = re.compile(r'process (\d+):"([^"]*)"')


def record(dapprof, tmp_path, interp, *args):
    out_file = tmp_path / "pool.txt"
    out = run([dapprof, "record", "--subprocesses", "--rate", str(RATE), "--format", "raw", "-o",
               str(out_file), "--", interp.path, str(PROGRAM), *args], timeout=180)
    assert out.returncode == 0, out.stderr
    truth = json.loads(out.stdout.splitlines()[-1])
    samples: dict[int, int] = {}  # of `spin`, by pid
    commands: dict[int, str] = {}
    for line in out_file.read_text(encoding="utf-8").splitlines():
        stack, count = line.rsplit(" ", 1)
        root = stack.split(";")[0]
        m = PROCESS.fullmatch(root)
        assert m, f"no process level: {line}"
        pid = int(m.group(1))
        commands[pid] = m.group(2)
        if "spin (" in stack:
            samples[pid] = samples.get(pid, 0) + int(count)
    return truth, samples, commands, out.stderr


@pytest.mark.parametrize("kind", ["pool", "executor"])
@pytest.mark.parametrize("interp", pythons.each())
def test_every_worker_at_the_rate(dapprof, tmp_path, interp, kind):
    truth, samples, commands, _ = record(dapprof, tmp_path, interp, kind, str(WORKERS),
                                         str(SECONDS))
    workers = truth["workers"]
    assert len({w["pid"] for w in workers}) == WORKERS, workers
    shares = sorted(samples.get(w["pid"], 0) / (RATE * w["busy"]) for w in workers)
    print(f"{interp} {kind}: per worker {shares[0]:.2f}..{shares[-1]:.2f} of {RATE} Hz")
    assert shares[0] >= BOUND, (shares, samples)
    # Each worker is named by its own command line (a fork's is its parent's).
    for w in workers:
        assert commands[w["pid"]], commands
    assert set(samples) <= {w["pid"] for w in workers}, "spin sampled outside the workers"


@pytest.mark.parametrize("kind", ["pool", "executor"])
def test_workers_that_keep_ending_make_no_error(dapprof, tmp_path, kind):
    interp = pythons.find("debian-3.11") or pythons.interpreters()[0]
    truth, _, _, stderr = record(dapprof, tmp_path, interp, kind, "8", "0", "--exiting", "200")
    assert len({w["pid"] for w in truth["workers"]}) > 100, truth  # one worker per task, or near
    assert "error" not in stderr.lower().replace("errors: 0", ""), stderr
    assert re.search(r"Errors: 0\b", stderr), stderr


# Debian's python3.11 is not position-independent: after the exec, the new interpreter's runtime is
# where the old one's was, and reads of it fail until it is set up, then work. A pyenv build's
# libpython moves: every read fails after the exec. 3.15 starts from the unstable root.
@pytest.mark.parametrize("label", ["debian-3.11", "3.12", "sid-3.15"])
def test_a_worker_that_execs_is_sampled_as_its_new_program(dapprof, tmp_path, label):
    interp = pythons.find(label)
    if interp is None:
        pytest.skip(pythons.missing_reason(label))
    out_file = tmp_path / "exec.txt"
    out = run([dapprof, "record", "--subprocesses", "--rate", "100", "--format", "raw", "-o",
               str(out_file), "--", interp.path, str(EXEC_PROGRAM), "3", "0.4", "0.6"], timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.search(r"Errors: 0\b", out.stderr), out.stderr
    workers = json.loads(out.stdout.splitlines()[-1])["workers"]
    after: dict[int, int] = {}
    for line in out_file.read_text(encoding="utf-8").splitlines():
        stack, count = line.rsplit(" ", 1)
        m = PROCESS.fullmatch(stack.split(";")[0])
        assert m, f"no process level: {line}"
        if "after (" in stack:
            pid = int(m.group(1))
            assert pid in workers, line
            # Named by the command it exec'd, not its parent's that it had as a fork.
            assert m.group(2).endswith("after 0.6"), line
            after[pid] = after.get(pid, 0) + int(count)
    # 0.6 s at 100 Hz is 60 samples; attaching anew takes up to a scan period after the exec.
    assert all(after.get(pid, 0) >= 20 for pid in workers), (after, workers)


def test_one_process_keeps_its_level(dapprof, tmp_path):
    """--subprocesses on a program that starts none still names its process (the one level it
    would have had beside children); without --subprocesses there is no process level."""
    interp = pythons.find("debian-3.11") or pythons.interpreters()[0]
    out_file = tmp_path / "one.txt"
    for flags, level in ((["--subprocesses"], True), ([], False)):
        # --idle: the parent mostly waits, and is sampled all the same.
        out = run([dapprof, "record", "--idle", *flags, "--format", "raw", "-o", str(out_file), "--",
                   interp.path, str(PROGRAM), "pool", "1", "1", "--wait", "1"], timeout=120)
        assert out.returncode == 0, out.stderr
        roots = {line.split(";")[0] for line in out_file.read_text(encoding="utf-8").splitlines()}
        assert roots, "no samples"
        assert all(bool(PROCESS.fullmatch(r)) == level for r in roots), (flags, roots)
