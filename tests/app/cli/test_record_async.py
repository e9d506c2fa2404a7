"""`dapprof record --async-aware` against the asyncio fixture (tests/fixtures/asyncio_tasks.py):
samples by task, root first `(event loop)`, then each task's frame and its coroutines down to the
running task's frames. The task chains of mode "all" are compared with those CPython 3.15's own
sampler (`python -m profiling.sampling attach --async-aware --async-mode all`) finds in the same
process. 3.8-3.13 sample by task too (from asyncio's own registries); 3.7 is refused."""
from __future__ import annotations

from collections import Counter

import pytest

from conftest import ASYNCIO_FIXTURE, pythons, run

LOOP = "(event loop)"


def by_task(interp) -> bool:
    return interp.version[:2] >= (3, 8)


def collapsed(dapprof, pid, tmp_path, *flags, seconds="2", rate="200") -> Counter:
    """Stacks (tuples of frame labels, root first) -> samples, from record's collapsed output."""
    out_file = tmp_path / "profile.txt"
    out = run([dapprof, "record", "--pid", str(pid), "--duration", seconds, "--rate", rate,
               "--format", "raw", "--output", str(out_file), *flags], timeout=120)
    assert out.returncode == 0, out.stderr
    stacks = Counter()
    for line in out_file.read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        stacks[tuple(stack.split(";"))] += int(count)
    return stacks


def task_chain(stack: tuple) -> tuple:
    """The task names of a stack, root first: "Task-1 (<task waiting>)" -> "Task-1"."""
    return tuple(f.split(" (<task")[0] for f in stack if " (<task" in f)


def function(label: str) -> str:
    return label.split(" (")[0]


@pytest.mark.parametrize("interp", pythons.each())
def test_running_task_under_its_awaiters(dapprof, program, interp, tmp_path):
    p = program(interp, "taskgroup")  # 3.11+
    stacks = collapsed(dapprof, p.truth["pid"], tmp_path, "--async-aware")
    cpu = {s: n for s, n in stacks.items() if task_chain(s)[-1:] == ("cpu",)}
    assert sum(cpu.values()) > 0.5 * sum(stacks.values()), stacks.most_common(5)
    for s in cpu:
        assert s[0] == LOOP, s
        assert s[1] == "Task-1 (<task waiting>)", s
        assert task_chain(s) == ("Task-1", "cpu"), s
        # The task's own frames: its coroutine, then what it calls (spin, on its thread's stack).
        at = s.index("cpu (<task>)")
        assert function(s[at + 1]) == "crunch", s
        # Task-1's coroutine chain: the scenario, in its TaskGroup's __aexit__.
        between = [function(f) for f in s[2:at]]
        assert between[0] == "taskgroup" and "TaskGroup.__aexit__" in between, s
        # No event-loop machinery above the first task.
        assert not {"run_forever", "_run_once", "Handle._run"} & set(map(function, s)), s
    spinning = sum(n for s, n in cpu.items() if function(s[-1]) == "spin")
    assert spinning > 0.5 * sum(cpu.values())
    # Only the running task is sampled: no waiting fetch task appears.
    assert not any(c and c[-1].startswith("fetch") for c in map(task_chain, stacks))


@pytest.mark.parametrize("interp", pythons.each())
def test_all_samples_every_waiting_task(dapprof, program, interp, tmp_path):
    p = program(interp, "taskgroup")
    stacks = collapsed(dapprof, p.truth["pid"], tmp_path, "--async-aware", "--async-mode", "all",
                       seconds="1", rate="50")
    chains = Counter()
    for s, n in stacks.items():
        chains[task_chain(s)] += n
    for h in range(3):
        for i in range(2):
            chain = ("Task-1", f"handler-{h}", f"fetch-{h}-{i}")
            assert chains[chain] > 0, chains
            # Each ends where the task waits: leaf_wait in Event.wait.
            ends = {function(s[-1]) for s in stacks if task_chain(s) == chain}
            assert ends == {"Event.wait"}, ends
    # Every waiting task is in every tick, whatever its thread does; a task that waits for
    # others (Task-1, the handlers, in their TaskGroups) is in theirs, not on its own.
    ticks = {chains[("Task-1", f"handler-{h}", f"fetch-{h}-{i}")] for h in range(3)
             for i in range(2)}
    assert len(ticks) == 1, chains
    assert not chains[("Task-1",)] and not chains[("Task-1", "handler-0")], chains


@pytest.mark.parametrize("interp", pythons.each())
def test_all_mode_task_chains_equal_cpythons_sampler(dapprof, program, interp, tmp_path):
    if interp.version[:2] < (3, 15):
        pytest.skip("CPython's own sampler is 3.15's")
    p = program(interp, "taskgroup")
    pid = p.truth["pid"]
    ours = {task_chain(s) for s in collapsed(dapprof, pid, tmp_path, "--async-aware",
                                             "--async-mode", "all", seconds="1", rate="50")}
    theirs = run([interp.path, "-m", "profiling.sampling", "attach", "--async-aware",
                  "--async-mode", "all", "-d", "1", "-r", "50", "--collapsed", "-o", "/dev/stdout",
                  str(pid)], timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    cpythons = set()
    for line in theirs.stdout.splitlines():
        frames = line.rpartition(" ")[0].split(";")
        chain = tuple(f.split(":")[1] for f in frames if f.startswith("<task>:"))
        if chain:
            cpythons.add(chain)
    # The cpu task's chain is in either only when it ran at one of that side's ticks; a sample
    # of the loop between two tasks has no task (dapprof keeps it, CPython's sampler drops it).
    assert ours - {("Task-1", "cpu"), ()} == cpythons - {("Task-1", "cpu")}, (ours, cpythons)


@pytest.mark.parametrize("interp", pythons.each())
def test_running_task_on_every_version(dapprof, program, interp, tmp_path):
    p = program(interp, "spin")  # a cpu task nobody awaits, beside the main one
    stacks = collapsed(dapprof, p.truth["pid"], tmp_path, "--async-aware")
    cpu = {s: n for s, n in stacks.items() if task_chain(s) == ("cpu",)}
    assert sum(cpu.values()) > 0.5 * sum(stacks.values()), stacks.most_common(5)
    for s in cpu:
        assert s[:2] == (LOOP, "cpu (<task>)") and function(s[2]) == "crunch", s


@pytest.mark.parametrize("interp", pythons.each())
def test_all_mode_on_every_version(dapprof, program, interp, tmp_path):
    p = program(interp, "direct")  # Task-1 awaits "awaiting", which awaits the task "awaited"
    stacks = collapsed(dapprof, p.truth["pid"], tmp_path, "--async-aware", "--async-mode", "all",
                       seconds="1", rate="50")
    chains = Counter()
    for s, n in stacks.items():
        chains[task_chain(s)] += n
    leaf = ("Task-1", "awaiting", "awaited")
    assert chains[leaf] >= 40, chains
    # Only the leaf is sampled on its own: the tasks awaiting it are in its stacks.
    assert set(chains) - {()} == {leaf}, chains
    for s in stacks:
        if task_chain(s) == leaf:
            assert s[1] == "Task-1 (<task waiting>)" and s[-1].split(" (")[0].endswith("wait"), s


@pytest.mark.parametrize("interp", pythons.each())
def test_awaiter_frames_follow_their_task(dapprof, program, interp, tmp_path):
    # Task-1 awaits phase-a from one line, then phase-b from the next, 50 times a second; a
    # task's address (what it waits for) is often reused by the next. Each sample of a phase
    # must show Task-1 at the line awaiting that phase: an awaiter's chain kept from an earlier
    # sample (running mode keeps them while they cannot have moved) must not be shown stale.
    p = program(interp, "moves")
    source = ASYNCIO_FIXTURE.read_text(encoding="utf-8").splitlines()
    lines = {phase: next(i + 1 for i, text in enumerate(source)
                         if text.rstrip().endswith("# " + phase))
             for phase in ("phase-a", "phase-b")}
    stacks = collapsed(dapprof, p.truth["pid"], tmp_path, "--async-aware", seconds="2",
                       rate="500")
    seen = Counter()
    for s, n in stacks.items():
        chain = task_chain(s)
        if chain not in {("Task-1", "phase-a"), ("Task-1", "phase-b")}:
            continue
        at = s.index(f"{chain[1]} (<task>)")
        main = [f for f in s[:at] if function(f) == "moves"]
        assert main == [f"moves ({ASYNCIO_FIXTURE.name}:{lines[chain[1]]})"], s
        seen[chain[1]] += n
    assert seen["phase-a"] >= 20 and seen["phase-b"] >= 20, (seen, stacks.most_common(5))


@pytest.mark.parametrize("interp", pythons.sampler_only())
def test_record_async_says_why_not(dapprof, interp, tmp_path):
    out = run([dapprof, "record", "--duration", "1", "--async-aware",
               "--output", str(tmp_path / "x.txt"), "--", interp.path, "-c",
               "import time; time.sleep(3)"], timeout=60)
    assert out.returncode != 0
    assert "sampling by asyncio task needs CPython 3.8" in out.stderr, out.stderr


def test_async_mode_needs_async_aware(dapprof):
    out = run([dapprof, "record", "--async-mode", "all", "--", "python3", "-c", "pass"])
    assert out.returncode != 0 and "--async-aware" in out.stderr, out.stderr
