"""The aarch64 dapprof (the release-arm64 preset), emulated by qemu-user, against the arm64 root's
emulated CPython 3.11 (scripts/arm64-root.sh): `--version`, `dump --nonblocking` and
`record --nonblocking`. What emulation allows: qemu-user implements neither process_vm_readv
(dapprof reads through /proc/PID/mem) nor ptrace of another process (no pauses, no registers:
no blocking or consistent mode, no --native).

The target runs with QEMU_GUEST_BASE=0: qemu-user places a guest's memory at the guest's
addresses plus guest_base (0x1000 by default), so the pointers in the target's memory would be
off by that much from the addresses in /proc/PID/maps and /proc/PID/mem. On a real arm64 machine
there is no such offset; with guest_base 0 the emulated process's addresses are what they would be
there.

Skipped, with the reason, unless DAPPROF_ARM64_BIN names the aarch64 dapprof and the root is made.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import FIXTURE, read_line, run

REPO = Path(__file__).resolve().parents[3]
QEMU = shutil.which("qemu-aarch64-static")
SYSROOT = "/usr/aarch64-linux-gnu"  # the cross toolchain's arm64 C library, for dapprof


def _arm64() -> tuple[str | None, str | None, str]:
    """(the aarch64 dapprof, the arm64 root, "") or Nones and why they cannot run."""
    binary = os.environ.get("DAPPROF_ARM64_BIN")
    if not binary or not os.access(binary, os.X_OK):
        return None, None, "DAPPROF_ARM64_BIN does not name an aarch64 dapprof (release-arm64)"
    if not QEMU:
        return None, None, "qemu-aarch64-static is not installed (scripts/install-deps.sh arm64)"
    out = subprocess.run([str(REPO / "scripts" / "arm64-root.sh"), "--print-path"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, None, out.stderr.strip()
    if os.geteuid() != 0:
        return None, None, "running the arm64 root's python needs root (chroot)"
    return binary, out.stdout.strip().splitlines()[-1], ""


BINARY, ROOT, WHY = _arm64()
pytestmark = pytest.mark.skipif(BINARY is None, reason=WHY)


def dapprof(*args: str) -> list[str]:
    return [QEMU, "-L", SYSROOT, BINARY, *args]


@pytest.fixture
def target():
    """busy.py under the root's emulated python3.11, seen inside the root at /tmp/<dir>/busy.py."""
    work = Path(tempfile.mkdtemp(prefix="dapprof-arm64-", dir=os.path.join(ROOT, "tmp")))
    shutil.copy(FIXTURE, work / FIXTURE.name)
    inner = f"/tmp/{work.name}/{FIXTURE.name}"
    env = dict(os.environ, QEMU_GUEST_BASE="0")
    proc = subprocess.Popen(["chroot", ROOT, "/usr/bin/python3.11", inner], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = read_line(proc.stdout, 120)
        assert line.strip() == "ready", (line, proc.stderr.read() if proc.poll() else "")
        yield proc, inner
    finally:
        proc.kill()
        proc.communicate(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def test_version():
    out = run(dapprof("--version"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("dapprof "), out.stdout


def test_dump_nonblocking(target):
    proc, inner = target
    for _ in range(10):
        out = run(dapprof("dump", "--pid", str(proc.pid), "--nonblocking", "--json"), timeout=120)
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        threads = {t["name"]: [(f["function"], f["file"]) for f in t["frames"]]
                   for t in doc["threads"]}
        if threads.get("MainThread", [("",)])[0][0] == "leaf_spin":
            break
    assert re.fullmatch(r"3\.11\.\d+", doc["python_version"]), doc
    assert threads["MainThread"] == [(f, inner) for f in
                                     ["leaf_spin", "mittel_schicht_ü", "main", "<module>"]]
    assert threads["sleepy-worker"][0] == ("sleeper", inner)
    # dapprof said, once, why it reads through /proc/PID/mem.
    assert out.stderr.count("process_vm_readv fails with") == 1, out.stderr


# Known failure, left open: the emulated record never ends (and ignores SIGINT) under qemu-user,
# where the emulated dump of the same target works; not understood yet.
@pytest.mark.xfail(reason="record --nonblocking of the aarch64 build hangs under qemu-user", strict=True)
def test_record_nonblocking(target, tmp_path):
    proc, _ = target
    out_file = tmp_path / "arm64.txt"
    out = run(dapprof("record", "--pid", str(proc.pid), "--duration", "3", "--nonblocking",
                      "--idle", "--format", "raw", "-o", str(out_file)), timeout=120)
    assert out.returncode == 0, out.stderr
    m = re.search(r"Samples: (\d+) Errors: (\d+)", out.stderr)
    assert m and int(m.group(1)) > 50, out.stderr
    counts = {}
    for line in out_file.read_text(encoding="utf-8").splitlines():
        stack, n = line.rsplit(" ", 1)
        counts[re.sub(r":\d+\)", ")", stack)] = counts.get(re.sub(r":\d+\)", ")", stack), 0) + int(n)
    total = sum(counts.values())
    spin = sum(n for s, n in counts.items()
               if s.endswith("main (busy.py);mittel_schicht_ü (busy.py);leaf_spin (busy.py)"))
    sleep = sum(n for s, n in counts.items() if s.endswith("sleeper (busy.py)"))
    # Two threads sampled at each tick: the spinning one and the sleeping one, each most of it.
    assert spin > total * 0.3 and sleep > total * 0.3, counts
