"""`dapprof dump --async` against the asyncio fixture (tests/fixtures/asyncio_tasks.py) under every
interpreter: on CPython 3.14 and 3.15 (the Debian unstable root) the tree must be the one
CPython's own `python -m asyncio pstree` prints for the same live process, and the ids the ones
`python -m asyncio ps` prints. CPython 3.8-3.13 have no pstree: there every task's name, id,
state, coroutine frames and awaiters must be what the program itself reports (its truth line:
asyncio.all_tasks() and each coroutine's cr_await chain), and the tree drawn from them the one
the scenario builds; `missing` must say what the version does not keep, and nothing else."""
from __future__ import annotations

import json
import time

import pytest

from conftest import pythons, read_line, run

import subprocess

SCENARIOS = ["taskgroup", "gather", "shield", "direct", "shared", "eager", "cancel", "threads",
             "spin", "many"]
# Tasks that run in turns: between two reads they may have moved, so only the outermost frame
# of their chain is compared.
BUSY = {"cpu"}
# Who awaits whom, by name (the child's awaiters), by the scenarios' construction.
PARENTS = {
    "taskgroup": {**{f"handler-{h}": {"Task-1"} for h in range(3)}, "cpu": {"Task-1"},
                  **{f"fetch-{h}-{i}": {f"handler-{h}"} for h in range(3) for i in range(2)}},
    "gather": {"gathered-0": {"gatherer"}, "gathered-1": {"gatherer"}},
    "shield": {"shielded": {"shielding"}},
    "direct": {"awaited": {"awaiting"}},
    "shared": {"shared": {"sharing-0", "sharing-1", "sharing-2"},
               **{f"sharing-{i}": {"Task-1"} for i in range(3)}},
    "eager": {},
    "cancel": {},
    "threads": {},  # checked by thread below
    "spin": {},
    "many": {},
}


def has_pstree(interp) -> bool:
    return interp.version[:2] >= (3, 14)


def expected_missing(interp) -> list:
    """What `missing` says on each version, for every scenario of the fixture."""
    if interp.version[:2] >= (3, 11):
        return []
    v = "%d.%d" % interp.version[:2]
    return [f"Python {v} keeps no count of cancel() requests (Task.cancelling() is 3.11's): a "
            "task cancelled while it awaited and still cleaning up shows as waiting"]


def dump_async(dapprof, pid, *flags):
    return run([dapprof, "dump", "--pid", str(pid), "--async", *flags], timeout=120)


def parse_tree(text: str) -> list:
    """pstree's drawing as nested [label, children] lists (each level is indented 4 columns)."""
    roots, stack = [], []
    for line in text.splitlines():
        for marker in ("└── ", "├── "):
            at = line.find(marker)
            if at >= 0:
                break
        assert at >= 0 and at % 4 == 0, line
        depth = at // 4
        node = [line[at + 4:], []]
        del stack[depth:]
        (stack[-1][1] if stack else roots).append(node)
        stack.append(node)
    return roots


def canonical(nodes: list, busy: bool = False) -> tuple:
    """Order-free form of a tree; under a busy task only its chain's outermost function is kept."""
    out = []
    for label, kids in nodes:
        if busy:
            out.append((label.split()[0], ()))  # the frame's function, without file and line
            continue
        is_busy = label.startswith("(T) ") and label[4:] in BUSY
        out.append((label, canonical(kids, is_busy)))
    return tuple(sorted(out))


def ps_ids(interp, pid) -> dict:
    """Task name -> id, from CPython's own `python -m asyncio ps`."""
    out = run([interp.path, "-m", "asyncio", "ps", str(pid)], timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    ids = {}
    for row in out.stdout.splitlines()[2:]:
        fields = row.split()
        if len(fields) >= 3 and fields[1].startswith("0x"):
            ids[fields[2]] = fields[1]
    return ids


def check_against_truth(doc, truth, scenario, interp):
    by_name = {t["name"]: t for t in doc["tasks"]}
    want = {t["name"]: t["id"] for t in truth["tasks"]}
    assert {n: by_name[n]["id"] for n in by_name} == want
    for t in doc["tasks"]:
        assert set(t) == {"id", "name", "state", "thread", "awaited_by", "frames"}
        assert t["state"] in ("running", "waiting", "cancelling")
        for f in t["frames"]:
            assert set(f) == {"name", "file", "line"} and f["line"] > 0
    coro = {t["name"]: t["coro"] for t in truth["tasks"]}
    for name, t in by_name.items():
        # Outermost frame: the task's own coroutine.
        assert t["frames"] and t["frames"][-1]["name"].split(".")[-1] == coro[name].split(".")[-1], t
    id_to_name = {t["id"]: t["name"] for t in doc["tasks"]}
    for child, parents in PARENTS[scenario].items():
        assert {id_to_name.get(i, i) for i in by_name[child]["awaited_by"]} == parents, child
    assert doc["torn"] == 0 and not doc["truncated"]
    assert doc["missing"] == expected_missing(interp)


def check_chains(doc, truth):
    """Each waiting task's frames are its coroutine chain as the program sees it (function, file
    and line of every coroutine, innermost first); a busy task's, its outermost coroutine."""
    by_name = {t["name"]: t for t in doc["tasks"]}
    for expected in truth["tasks"]:
        chain = expected["chain"]
        got = by_name[expected["name"]]
        if chain is None or got["state"] == "running":
            continue  # the task that computed the truth has moved on since; see the running test
        frames = [[f["name"].split(".")[-1], f["file"], f["line"]] for f in got["frames"]]
        if expected["name"] in BUSY:
            assert frames[-1][0] == chain[-1][0], (expected["name"], frames, chain)
            continue
        assert frames == chain, expected["name"]


def tree_by_construction(doc) -> tuple:
    """The tree dapprof must draw from its own JSON, as pstree draws one: roots are the tasks no
    task awaits, under each its frames outermost first and the tasks awaiting... awaited there."""
    by_id = {t["id"]: t for t in doc["tasks"]}
    children = {}
    for t in doc["tasks"]:
        for parent in t["awaited_by"]:
            children.setdefault(parent, []).append(t)

    def node(t):
        return (f"(T) {t['name']}", tuple(sorted(node(c) for c in children.get(t["id"], []))))

    return tuple(sorted(node(t) for t in doc["tasks"]
                        if not any(p in by_id for p in t["awaited_by"])))


def task_labels(tree) -> tuple:
    """Only the tasks of a parsed tree (its frame lines left out), order-free."""
    out = []
    for label, kids in tree:
        if label.startswith("(T) "):
            out.append((label, task_labels(kids)))
        else:
            out.extend(task_labels(kids))
    return tuple(sorted(out))


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("interp", pythons.each())
def test_dump_async_equals_cpythons_pstree(dapprof, program, interp, scenario):
    p = program(interp, scenario)
    pid = p.truth["pid"]
    out = dump_async(dapprof, pid, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    check_against_truth(doc, p.truth, scenario, interp)
    ours = dump_async(dapprof, pid)
    assert ours.returncode == 0, ours.stderr
    if not has_pstree(interp):
        # No pstree to compare with: the program's own view, and the tree its links make.
        check_chains(doc, p.truth)
        assert task_labels(parse_tree(ours.stdout)) == tree_by_construction(doc), ours.stdout
        for note in expected_missing(interp):
            assert f"dapprof: note: {note}" in ours.stderr, ours.stderr
        return
    theirs = run([interp.path, "-m", "asyncio", "pstree", str(pid)], timeout=120)
    assert theirs.returncode == 0, theirs.stdout + theirs.stderr
    mine, cpythons = canonical(parse_tree(ours.stdout)), canonical(parse_tree(theirs.stdout))
    ids = {t["name"]: t["id"] for t in doc["tasks"]}
    if scenario == "threads" and interp.version[:2] == (3, 14):
        # Seen on 3.14.10: CPython's own reader lists the tasks of the main thread's loop only
        # (3.15 lists both). dapprof must list those the same way, and the other loop's too.
        assert set(cpythons) < set(mine) and len(mine) == 2, (ours.stdout, theirs.stdout)
        assert ps_ids(interp, pid).items() < ids.items()
        return
    assert mine == cpythons, "dapprof:\n" + ours.stdout + "\npstree:\n" + theirs.stdout
    assert ps_ids(interp, pid) == ids


@pytest.mark.parametrize("interp", pythons.each())
def test_task_states(dapprof, program, interp):
    p = program(interp, "cancel")
    doc = json.loads(dump_async(dapprof, p.truth["pid"], "--json").stdout)
    states = {t["name"]: t["state"] for t in doc["tasks"]}
    # Before 3.11 nothing is left of a cancel() once delivered: `missing` says so.
    cancelling = "cancelling" if interp.version[:2] >= (3, 11) else "waiting"
    assert states == {"Task-1": "waiting", "victim": cancelling}
    assert doc["missing"] == expected_missing(interp)
    victim = [t for t in doc["tasks"] if t["name"] == "victim"][0]
    # Mid-cancellation: in its cleanup, awaiting again.
    assert [f["name"].split(".")[-1] for f in victim["frames"]][:2] == ["wait", "leaf_wait"]


@pytest.mark.parametrize("interp", pythons.each())
def test_running_task_has_its_threads_frames(dapprof, program, interp):
    p = program(interp, "taskgroup" if interp.version[:2] >= (3, 11) else "spin")
    for _ in range(50):  # the cpu task spins 50 ms at a time, then sleeps 1 ms
        doc = json.loads(dump_async(dapprof, p.truth["pid"], "--json").stdout)
        cpu = [t for t in doc["tasks"] if t["name"] == "cpu"][0]
        if cpu["state"] == "running":
            break
    assert cpu["state"] == "running"
    assert [f["name"] for f in cpu["frames"]] == ["spin", "crunch"]
    assert cpu["thread"] == p.truth["pid"]
    others = {t["state"] for t in doc["tasks"] if t["name"] != "cpu"}
    assert others == {"waiting"}


@pytest.mark.parametrize("interp", pythons.each())
def test_two_loops_in_two_threads(dapprof, program, interp):
    p = program(interp, "threads")
    doc = json.loads(dump_async(dapprof, p.truth["pid"], "--json").stdout)
    threads = {}
    for t in doc["tasks"]:
        threads.setdefault(t["thread"], set()).add(t["name"].split("-")[0])
    assert len(threads) == 2
    assert sorted(map(sorted, threads.values())) == [["Task", "main"], ["Task", "thread"]]
    assert p.truth["pid"] in threads  # the main thread's TID is the PID


@pytest.mark.parametrize("interp", pythons.each())
def test_thousand_tasks_bounded_in_time(dapprof, program, interp):
    p = program(interp, "many", "1000")
    start = time.monotonic()
    out = dump_async(dapprof, p.truth["pid"], "--json")
    elapsed = time.monotonic() - start
    doc = json.loads(out.stdout)
    assert len(doc["tasks"]) == 1001 and doc["torn"] == 0
    print(f"{interp}: dump --async of 1001 tasks took {elapsed * 1000:.0f} ms (whole command)")
    assert elapsed < 10


@pytest.mark.parametrize("interp", pythons.sampler_only()
                         or [pytest.param(None, marks=pytest.mark.skip(reason="no 3.7 here"))])
def test_dump_async_says_what_it_cannot_read(dapprof, interp):
    # 3.7's tasks have no names, and its asyncio is not laid out as 3.8's.
    proc = subprocess.Popen([interp.path, "-c", "import asyncio, sys\nasync def main():\n"
                             "    print(1, flush=True)\n    await asyncio.sleep(60)\n"
                             "asyncio.run(main())"], stdout=subprocess.PIPE, text=True)
    try:
        assert read_line(proc.stdout, 30).strip() == "1"
        out = dump_async(dapprof, proc.pid)
        assert out.returncode == 1
        assert "asyncio tasks of CPython 3.8 and newer" in out.stderr, out.stderr
        assert f"runs Python {'.'.join(map(str, interp.version))}" in out.stderr, out.stderr
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("interp", pythons.each())
def test_await_cycle_is_an_error_as_in_pstree(dapprof, program, interp):
    p = program(interp, "cycle")
    out = dump_async(dapprof, p.truth["pid"])
    assert out.returncode == 1 and out.stdout == ""
    assert "cycle" in out.stderr and "first" in out.stderr and "second" in out.stderr, out.stderr
    if has_pstree(interp):
        theirs = run([interp.path, "-m", "asyncio", "pstree", str(p.truth["pid"])], timeout=120)
        assert theirs.returncode == 1 and "cycle" in theirs.stderr, theirs.stdout + theirs.stderr
    doc = json.loads(dump_async(dapprof, p.truth["pid"], "--json").stdout)  # JSON has no tree
    by_name = {t["name"]: t for t in doc["tasks"]}
    assert by_name["first"]["awaited_by"] == [by_name["second"]["id"]]
    assert by_name["second"]["awaited_by"] == [by_name["first"]["id"]]


@pytest.mark.parametrize("interp", pythons.each())
def test_tasks_finishing_between_reads(dapprof, program, interp):
    """A program whose tasks come and go all the time: paused, every read is whole; unpaused
    (--nonblocking), a task that moved is counted as torn and left out, never a crash."""
    p = program(interp, "churn")
    pid = p.truth["pid"]
    for _ in range(5):
        out = dump_async(dapprof, pid, "--json")
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        assert doc["torn"] == 0
        names = {t["name"] for t in doc["tasks"]}
        assert {f"churn-{i}" for i in range(4)} <= names
    for _ in range(20):
        out = dump_async(dapprof, pid, "--json", "--nonblocking")
        # Ten torn reads in a row end in a clear error; anything else is a whole document.
        if out.returncode != 0:
            assert "asyncio tasks" in out.stderr and "Sanitizer" not in out.stderr, out.stderr
            continue
        doc = json.loads(out.stdout)
        assert doc["torn"] >= 0 and len(doc["tasks"]) >= 1
    assert p.proc.poll() is None  # the program runs on


@pytest.mark.parametrize("flag", ["--native", "--locals"])
def test_async_with_flags_it_ignores_is_an_error(dapprof, flag):
    out = run([dapprof, "dump", "--pid", "1", "--async", flag])
    assert out.returncode == 2 and "drop --native/--native-all/--locals, or --async" in out.stderr


@pytest.mark.parametrize("interp", ([i for i in pythons.interpreters() if i.version[:2] < (3, 14)][:1]
                                    + [i for i in pythons.interpreters()
                                       if i.version[:2] >= (3, 14)][:1])
                         or [pytest.param(None, marks=pytest.mark.skip(reason="none here"))])
def test_no_asyncio_imported(dapprof, interp):
    proc = subprocess.Popen([interp.path, "-c", "import sys, time; print(1, flush=True); "
                             "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert read_line(proc.stdout, 30).strip() == "1"
        out = dump_async(dapprof, proc.pid)
        if interp.version[:2] < (3, 14):  # no registry to read
            assert out.returncode == 1 and "has not imported asyncio" in out.stderr, out.stderr
        elif interp.version[:2] == (3, 14):  # _asyncio is an extension module, not loaded yet
            assert out.returncode == 1 and "has not imported asyncio" in out.stderr, out.stderr
        else:  # built into the interpreter: its task lists are there, and empty
            assert out.returncode == 0 and out.stdout == "", out.stdout + out.stderr
    finally:
        proc.kill()
        proc.wait()
