"""Live profiling on linux-arm64, under emulation: the aarch64 dapprof (release-arm64) as the
adapter between this client and the arm64 root's own debugpy, which launches the root's python3.11;
both are aarch64 programs that qemu-user runs (scripts/arm64-root.sh). startProfiling in
nonblocking mode (emulation cannot pause: qemu-user implements no ptrace of another process),
samples streamed in profilingData, stopProfiling writing the profile.

The adapter, and so the debuggee it starts, runs with QEMU_GUEST_BASE=0 (see
tests/app/cli/test_arm64.py): its pointers are then the addresses its /proc/PID/maps shows, as on
an arm64 machine.

Skipped, with the reason, unless DAPPROF_ARM64_BIN names the aarch64 dapprof and the root is made.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, start_stdio
from live_session import launch, start_profiling, stream_of
from profiling_stream import line_of, read_collapsed

import arm64

BINARY, ROOT, WHY = arm64.binary_and_root()
pytestmark = pytest.mark.skipif(BINARY is None, reason=WHY)
TARGET = FIXTURES / "profile_target.py"


@pytest.fixture
def inside(tmp_path):
    """A directory of the root for this test: (its path on the host, its path inside the root)."""
    work = Path(tempfile.mkdtemp(prefix="dapprof-arm64-live-", dir=Path(ROOT) / "tmp"))
    yield work, f"/tmp/{work.name}"
    shutil.rmtree(work, ignore_errors=True)


def test_a_live_run_through_the_arm64_debugpy(procs, tmp_path, inside):
    work, seen = inside
    shutil.copy(TARGET, work / TARGET.name)
    program, stop_file = f"{seen}/{TARGET.name}", f"{seen}/stop"
    qemu = arm64.command(BINARY, ROOT)
    _, client = start_stdio(procs, "--env", "QEMU_GUEST_BASE=0", "--", "chroot", ROOT,
                            "/usr/bin/python3.11", "-m", "debugpy.adapter",
                            binary=qemu[-1], wrap=qemu[:-1])
    pid = launch(client, [stop_file, 300], python="/usr/bin/python3.11", program=Path(program))
    assert pid > 0

    mark = len(client.received)
    started = start_profiling(client, rate=200, nonblocking=True)
    assert started["nonblocking"] is True, started
    time.sleep(6)  # emulated, the debuggee runs some 20 times slower than natively
    out = tmp_path / "arm64.txt"
    stopped = client.call("stopProfiling", {"outputPath": str(out), "format": "collapsed"}, 120)
    assert stopped["success"], stopped
    stream = stream_of(client, mark)
    summary = stopped["body"]
    print(f"arm64 live run: {stream.delivered} samples in {stream.events} events, "
          f"{summary['errorCount']} errors")
    assert stream.delivered > 50 and stream.delivered == summary["sampleCount"], summary
    assert read_collapsed(out) == stream.collapsed()

    # crunch, at its lines in the program as the root sees it, under outer_main on the main
    # thread and under worker_spin on the spinner.
    first, last = line_of(TARGET, "def crunch"), line_of(TARGET, "return total")
    crunch = stream.frames_named("crunch")
    assert crunch, sorted(stream.functions())
    for frame in crunch:
        assert frame["file"] == program and first <= frame["line"] <= last, frame
    callers = {(stream.threads[tid]["name"], stream.frames[stack[i - 1]]["function"])
               for tid, stack in stream.stacks for i, fid in enumerate(stack)
               if i > 0 and stream.frames[fid]["function"] == "crunch"}
    assert {("MainThread", "outer_main"), ("spinner", "worker_spin")} <= callers, callers

    (work / "stop").write_text("stop")
    client.call("disconnect", {"terminateDebuggee": True}, 120)
    client.close()
