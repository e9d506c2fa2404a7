"""PythonProcess against real CPython processes: each fixture of tests/fixtures runs under each
installed interpreter, reports its own stacks (sys._current_frames()), and the sampler's reading
from outside (sampler_snapshot_tool) must match them exactly."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import EACH, INTERPRETERS, MISSING, ROOT, pythons

FIXTURES = ROOT / "tests" / "fixtures"
LAYOUTS = ROOT / "tools" / "layouts" / "generate.py"
GENERATED = ROOT / "src" / "sampler" / "python" / "layouts_generated.cpp"

by_interp = pytest.mark.parametrize("interp", EACH)


class Target:
    """A fixture process; reads its ready line (ground truth), kills it on exit."""

    def __init__(self, interp, script, *args):
        self.proc = subprocess.Popen([interp.path, str(FIXTURES / script), *map(str, args)],
                                     stdout=subprocess.PIPE, text=True, encoding="utf-8")
        self.truth = None

    def ready(self):
        line = self.proc.stdout.readline()  # the fixture gives up after 60 s itself
        assert line, f"fixture exited with {self.proc.wait()}"
        self.truth = json.loads(line)
        return self.truth

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def snapshot(tool, pid, *args, check=True):
    out = subprocess.run([tool, str(pid), *args], capture_output=True, text=True,
                         encoding="utf-8", timeout=120)
    result = json.loads(out.stdout)
    if check:
        assert out.returncode == 0 and "error" not in result, result
    return result


def compare_with_truth(snap, truth):
    """Every thread the fixture reported must be read with exactly its frames and name."""
    threads = {t["thread_id"]: t for t in snap["threads"]}
    for expected in truth["threads"]:
        if expected["name"] == "reporter":
            continue
        got = threads.get(expected["ident"])
        assert got is not None, f"thread {expected['name']} not in the snapshot"
        assert got["name"] == expected["name"]
        if expected["native_id"]:
            assert got["os_thread_id"] == expected["native_id"], expected["name"]
        frames = [[f["function"], f["file"], f["line"]] for f in got["frames"]]
        assert frames == expected["frames"], f"thread {expected['name']}"
    return {t["name"]: t for t in snap["threads"]}


def settled_snapshot(tool, pid):
    """A snapshot once the fixture's reporter thread has ended: while it exits after printing
    the truth it may hold the GIL, which the GIL assertions would then blame on the sampler."""
    for _ in range(100):
        snap = snapshot(tool, pid)
        if all(t["name"] != "reporter" for t in snap["threads"]):
            return snap
        time.sleep(0.02)
    raise AssertionError("the fixture's reporter thread did not end")


@by_interp
def test_threads_states_names_and_qualnames(tool, interp):
    with Target(interp, "threads.py") as target:
        truth = target.ready()
        snap = settled_snapshot(tool, truth["pid"])
        assert snap["python_version"] == truth["version"]
        named = compare_with_truth(snap, truth)
        assert named["spinner"]["status"] == "active+gil"
        assert named["spinner"]["owns_gil"]
        for idle in ("sleeper", "pipe-reader", "MainThread"):
            assert named[idle]["status"] == "idle", idle
            assert not named[idle]["owns_gil"], idle
        top = named["spinner"]["frames"][0]["function"]
        expected = "spin_forever"
        assert top == expected
        second = named["spinner"]["frames"][1]["function"]
        assert second == ("Worker.spin.<locals>.inner" if interp.version >= (3, 11) else "inner")
        assert named["sleeper"]["frames"][0]["function"] == (
            "Worker.nap" if interp.version >= (3, 11) else "nap")


@by_interp
def test_deep_recursion(tool, interp):
    with Target(interp, "deep.py", 1500) as target:
        truth = target.ready()
        snap = snapshot(tool, truth["pid"])
        named = compare_with_truth(snap, truth)
        frames = named["MainThread"]["frames"]
        assert sum(f["function"] == "recurse" for f in frames) == 1501
        assert frames[0]["function"] == "bottom"


@by_interp
def test_many_threads(tool, interp):
    with Target(interp, "many_threads.py", 60) as target:
        truth = target.ready()
        snap = snapshot(tool, truth["pid"])
        named = compare_with_truth(snap, truth)
        assert {f"worker-{i}" for i in range(60)} <= set(named)
        assert all(not t["active"] for t in snap["threads"] if t["name"].startswith("worker-"))


@by_interp
def test_sleeping_threads_are_left_unread(tool, interp):
    """With idle threads skipped (the live path's default), 60 sleeping threads beside a busy
    one are left out of the snapshots, and what a sample fetches is at most their thread states:
    not each sleeper's top frame, which 3.11 and 3.12 reach through a pointer into the thread's
    own C stack, nor (3.8-3.10) its TID in its pthread (each a region of its own per thread)."""
    with Target(interp, "many_threads.py", 60, 0) as target:
        target.ready()
        result = snapshot(tool, target.proc.pid, "--count", "10", "--skip-idle")
        assert result["ok"] == 10, result
        assert result["last_threads"] == 1, result  # the spinning main thread
        if interp.version >= (3, 11):
            # The thread list is kept between samples (ThreadListMemo): a sample reads the
            # runtime, the interpreter, the busy thread's state, frames and code, and no
            # sleeper's thread state (7 to 9 regions here; 61 more if each were read).
            assert result["plan_regions"] <= 12, result
        else:
            # 3.8-3.10 know a sleeper by the TID found through its pthread, so the list is read
            # whole: 61 thread states, one region each where the allocator scattered them, and
            # the rest as above (64 to 67 here); each sleeper's TID too would double it.
            assert result["plan_regions"] <= 61 + 12, result


@by_interp
def test_a_sleeping_program_is_seen_waking(tool, interp):
    """A program whose every thread sleeps is sampled by reading its GIL alone (see Quiet in
    python_process.cpp); its main thread waking to run Python must still be seen at once, and
    nothing before it."""
    with Target(interp, "many_threads.py", 20, 0.5) as target:
        target.ready()
        out = subprocess.run([tool, str(target.proc.pid), "--skip-idle", "--until-thread",
                              "MainThread"], capture_output=True, text=True, timeout=60)
        result = json.loads(out.stdout)
        assert result["found"], result
        # The fixture's reporter thread may still be ending when sampling starts.
        assert set(result["seen_before"]) <= {"reporter"}, result
        # Woken 0.5 s after its report (read before the tool started): seen within 0.1 s of
        # waking, whatever the machine's load, would be under 0.6 s.
        assert result["ms"] < 600 + 400, result


@by_interp
def test_generators_and_coroutines(tool, interp):
    with Target(interp, "async_gen.py") as target:
        truth = target.ready()
        snap = snapshot(tool, truth["pid"])
        named = compare_with_truth(snap, truth)
        assert [f["function"] for f in named["generator"]["frames"][:2]] == ["numbers", "consume"]
        main = [f["function"] for f in named["MainThread"]["frames"]]
        assert main[:2] == ["inner", "outer"]


@by_interp
def test_non_ascii_names_and_exec(tool, interp):
    directory = tempfile.mkdtemp(prefix="dapprof-names-")
    try:
        with Target(interp, "names.py", directory) as target:
            truth = target.ready()
            snap = snapshot(tool, truth["pid"])
            named = compare_with_truth(snap, truth)
            top = named["nonascii"]["frames"][0]
            assert top["function"] == "gr\u00f6\u00dfe_\u8a08\u7b97"
            assert top["file"].endswith("/m\u00f6dul_\u6a21\u5757.py")
            assert named["exec"]["frames"][0]["file"] == "<string>"
            main = named["MainThread"]["frames"][0]["function"]
            assert main == ("Outer.method.<locals>.nested" if interp.version >= (3, 11)
                            else "nested")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def busy(interp, *args):
    target = Target(interp, "busy.py", *args)
    target.ready()
    return target


@by_interp
def test_nonblocking_busy_target_never_crashes(tool, interp):
    with busy(interp) as target:
        result = snapshot(tool, target.truth["pid"], "--nonblocking", "--count", "200")
        errors = result["errors"]
        assert result["ok"] + sum(errors.values()) == 200
        assert set(errors) <= {"TornRead"}, errors
        print(f"{interp}: nonblocking 200 snapshots of a busy target: {result['ok']} ok, "
              f"{errors.get('TornRead', 0)} torn")


@by_interp
def test_blocking_busy_target_reads_consistently(tool, interp):
    # Paused, the target cannot change under the reader. A thread stopped half-way through
    # pushing a frame can still expose a half-initialised one (CPython does not order those
    # stores for outside readers), so a rare TornRead is tolerated; anything more is a bug.
    # Consistent reads are unpaused first: a stack that moved while read is read again, then
    # paused; every sample is accounted for by one of those.
    with busy(interp) as target:
        result = snapshot(tool, target.truth["pid"], "--count", "50")
        assert result["ok"] >= 48 and set(result["errors"]) <= {"TornRead"}, result
        reads = result["reads"]
        assert reads["first_reads"] + reads["paused"] == 50, reads
        # The time the pauses held the target stopped is counted, and only for them: none
        # without a pause, and a pause lasts microseconds to milliseconds, never a second.
        if reads["paused"]:
            assert 0 < reads["stopped_us"] < reads["paused"] * 1_000_000, reads
        else:
            assert reads["stopped_us"] == 0, reads
        print(f"{interp}: consistent reads of a busy target: {reads['first_reads']} unpaused, "
              f"{reads['retries']} retried, {reads['paused']} paused, "
              f"stopped {reads['stopped_us']} µs")


@by_interp
def test_consistent_reads_of_a_steady_stack_never_pause(tool, interp):
    # A thread busy in one frame (no calls) keeps its top frame: nothing to retry or pause.
    busy_loop = ROOT / "tests" / "sampler" / "process" / "targets" / "deep.py"
    proc = subprocess.Popen([interp.path, str(busy_loop), "20"], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        result = snapshot(tool, proc.pid, "--count", "100")
        assert result["ok"] == 100, result
        assert result["reads"] == {"first_reads": 100, "retries": 0, "paused": 0,
                                   "stopped_us": 0}, result
    finally:
        proc.kill()
        proc.wait()


@by_interp
@pytest.mark.parametrize("mode", [[], ["--nonblocking"]], ids=["blocking", "nonblocking"])
def test_target_exiting_while_sampled(tool, interp, mode):
    with busy(interp, 1.0) as target:
        result = snapshot(tool, target.truth["pid"], "--until-exit", *mode)
        assert result["last_error"] == "ProcessExited", result
        assert result["exited"]
        assert set(result["errors"]) <= {"ProcessExited", "TornRead"}, result
        assert result["ok"] > 0


@by_interp
def test_waits_for_a_starting_interpreter(tool, interp):
    proc = subprocess.Popen([interp.path, "-c", "import time; time.sleep(30)"])
    try:
        snap = snapshot(tool, proc.pid, "--wait-ms", "20000")
        assert snap["python_version"] == ".".join(map(str, interp.version))
        assert snap["threads"]
    finally:
        proc.kill()
        proc.wait()


def test_not_python(tool):
    proc = subprocess.Popen(["sleep", "100"])
    try:
        time.sleep(0.1)
        result = snapshot(tool, proc.pid, check=False)
        assert result["code"] == "NotPython"
        assert f"process {proc.pid} (sleep) is not a CPython process" in result["error"]
    finally:
        proc.kill()
        proc.wait()


def test_no_such_process(tool):
    proc = subprocess.Popen(["true"])
    proc.wait()  # reaped: this PID is free (and very unlikely to be reused this soon)
    result = snapshot(tool, proc.pid, check=False)
    assert result["code"] == "NoSuchProcess", result



def test_native_frames_in_nonblocking_mode_are_refused_clearly(tool):
    proc = subprocess.Popen([INTERPRETERS[0].path, "-c", "import time; time.sleep(30)"])
    try:
        result = snapshot(tool, proc.pid, "--native", "--nonblocking", check=False)
        assert result["code"] == "InvalidArgument"
        assert "blocking mode" in result["error"]
    finally:
        proc.kill()
        proc.wait()


def test_unsupported_version_is_named(tool):
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
    old = sorted(Path(root, "versions").glob("3.6.*/bin/python3")) if root else []
    if not old:
        pytest.skip("no CPython 3.6 installed to stand for an unsupported version")
    proc = subprocess.Popen([str(old[-1]), "-c", "import time; time.sleep(30)"])
    try:
        result = snapshot(tool, proc.pid, "--wait-ms", "20000", check=False)
        assert result["code"] == "UnsupportedVersion", result
        assert "Python 3.6, which dapprof cannot read" in result["error"], result
        assert "3.7 to 3.15" in result["error"], result
    finally:
        proc.kill()
        proc.wait()


def test_layout_tables_match_every_interpreters_headers():
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to regenerate the layout tables")
    # A rooted interpreter is asked for its headers inside its root and measured against them.
    args = [i.path for i in INTERPRETERS + pythons.sampler_only() if not i.root]
    for i in INTERPRETERS:
        if i.root:
            args += ["--in-root", i.root, i.inner_path]
    out = subprocess.run([sys.executable, str(LAYOUTS), "--check", str(GENERATED), *args],
                         capture_output=True, text=True)
    print(out.stdout)
    assert out.returncode == 0, out.stdout + out.stderr
    measured = {line.split(" (")[0] for line in out.stdout.splitlines() if "matches" in line}
    assert len(measured) == len(INTERPRETERS) + len(pythons.sampler_only()), out.stdout


def test_every_supported_version_is_installed():
    if MISSING:
        pytest.skip("not installed here: " + ", ".join(MISSING))


@pytest.mark.parametrize("interp", [i for i in INTERPRETERS if (3, 8) <= i.version[:2] < (3, 14)
                                    and not i.root][:1]
                         or [pytest.param(None, marks=pytest.mark.skip(reason="no 3.8-3.13"))])
def test_asyncio_probe_fails_on_a_wrong_offset(interp):
    """The check of layouts.c's asyncio mirrors is a real one: the committed offsets pass under
    the interpreter, and the same table with the task's coroutine one word off fails, naming it."""
    sys.path.insert(0, str(LAYOUTS.parent))
    import generate  # noqa: E402

    table = generate.parse(GENERATED.read_text())[interp.version[:2]]
    probe = (LAYOUTS.parent / "asyncio_probe.py").read_text()
    good = subprocess.run([interp.path, "-c", probe, json.dumps(table)], capture_output=True,
                          text=True)
    assert good.returncode == 0 and good.stdout.startswith("ok"), good.stdout + good.stderr
    wrong = subprocess.run([interp.path, "-c", probe, json.dumps({**table, "task.coro":
                                                                  table["task.coro"] + 8})],
                           capture_output=True, text=True)
    assert wrong.returncode == 1 and "task.coro: read" in wrong.stdout, wrong.stdout + wrong.stderr
