"""The aarch64 dapprof (the release-arm64 preset), emulated by qemu-user, against the arm64 root's
emulated CPython 3.11 (scripts/arm64-root.sh): `--version`, `dump --nonblocking` and
`record --nonblocking`; and the aarch64 tables of CPython's layouts (tools/layouts/generate.py),
measured again for the root's interpreter. What emulation allows: qemu-user implements neither process_vm_readv
(dapprof reads through /proc/PID/mem) nor ptrace of another process (no pauses, no registers:
no blocking or consistent mode, no --native).

The target runs with QEMU_GUEST_BASE=0: qemu-user places a guest's memory at the guest's
addresses plus guest_base (0x1000 by default), so the pointers in the target's memory would be
off by that much from the addresses in /proc/PID/maps and /proc/PID/mem. On a real arm64 machine
there is no such offset; with guest_base 0 the emulated process's addresses are what they would be
there.

Skipped, with the reason, unless DAPPROF_ARM64_BIN names the aarch64 dapprof and the root is made
(the layout tests need the root and the cross compiler only).
"""
from __future__ import annotations

import json
import os
import sys
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import FIXTURE, read_line, run

import arm64  # tests/support, put on the path by conftest

REPO = Path(__file__).resolve().parents[3]
LAYOUTS = REPO / "tools" / "layouts" / "generate.py"
GENERATED = REPO / "src" / "sampler" / "python" / "layouts_generated.cpp"


BINARY, ROOT, WHY = arm64.binary_and_root()
needs_binary = pytest.mark.skipif(BINARY is None, reason=WHY)
LAYOUT_ROOT, LAYOUT_WHY = arm64.root()
if LAYOUT_ROOT and not shutil.which("aarch64-linux-gnu-gcc"):
    LAYOUT_ROOT, LAYOUT_WHY = None, "aarch64-linux-gnu-gcc is missing (scripts/install-deps.sh arm64)"
if LAYOUT_ROOT and not os.path.exists(os.path.join(LAYOUT_ROOT, "usr/include/python3.11/Python.h")):
    LAYOUT_ROOT, LAYOUT_WHY = None, "the arm64 root has no libpython3.11-dev: run scripts/arm64-root.sh"
needs_layout_root = pytest.mark.skipif(LAYOUT_ROOT is None, reason=LAYOUT_WHY)


def dapprof(*args: str) -> list[str]:
    return arm64.command(BINARY, ROOT, *args)


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


@needs_binary
def test_version():
    out = run(dapprof("--version"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("dapprof "), out.stdout


@needs_binary
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


@needs_binary
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


@needs_binary
def test_record_gil_samples_the_thread_holding_the_gil(target, tmp_path):
    """--mode gil keeps the thread holding the GIL, which 3.11 names in the runtime's
    tstate_current: at its aarch64 offset (16 bytes after x86-64's), the spinning main thread,
    and hardly ever the sleeper, which takes the GIL only for the moment between two sleeps."""
    proc, _ = target
    out_file = tmp_path / "gil.txt"
    out = run(dapprof("record", "--pid", str(proc.pid), "--duration", "3", "--nonblocking",
                      "--mode", "gil", "--format", "raw", "-o", str(out_file)), timeout=120)
    assert out.returncode == 0, out.stderr
    assert "no layout table measured for aarch64" not in out.stderr, out.stderr
    stacks = {}
    for line in out_file.read_text(encoding="utf-8").splitlines():
        stack, n = line.rsplit(" ", 1)
        stacks[stack] = stacks.get(stack, 0) + int(n)
    total = sum(stacks.values())
    spin = sum(n for s, n in stacks.items() if "leaf_spin (busy.py" in s)
    sleep = sum(n for s, n in stacks.items() if "sleeper (busy.py" in s)
    assert total > 50 and spin > total * 0.8 and sleep < total * 0.05, stacks


def _generator():
    sys.path.insert(0, str(LAYOUTS.parent))
    import generate  # noqa: E402

    return generate


@needs_layout_root
def test_aarch64_layouts_are_the_roots():
    """The committed aarch64 table of 3.11 is what layouts.c gives compiled for aarch64 against the
    root's own headers, checked with the root's emulated interpreter (its asyncio objects too), and
    it is not x86_64's: the runtime's GIL holder lies after a pthread_mutex_t, 8 bytes longer."""
    out = subprocess.run([sys.executable, str(LAYOUTS), "--check", str(GENERATED),
                          "--aarch64-in-root", LAYOUT_ROOT, "/usr/bin/python3.11"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(3.11.2, for aarch64): matches the committed aarch64 3.11 table" in out.stdout, out.stdout
    generate = _generator()
    text = GENERATED.read_text()
    arm, x86 = generate.parse(text, "aarch64")[(3, 11)], generate.parse(text, "x86_64")[(3, 11)]
    assert arm["runtime.tstate_current"] == x86["runtime.tstate_current"] + 16


@needs_layout_root
def test_aarch64_check_fails_on_a_wrong_offset(tmp_path):
    """With the x86_64 offset in the aarch64 table, the check fails and names the field."""
    text = GENERATED.read_text()
    x86 = _generator().parse(text, "x86_64")[(3, 11)]["runtime.tstate_current"]
    start = text.index("constexpr LayoutField kAarch64_3_11[]")
    field = re.compile(r'\{"runtime\.tstate_current", \d+\}')
    wrong = text[:start] + field.sub(f'{{"runtime.tstate_current", {x86}}}', text[start:], 1)
    assert wrong != text
    (tmp_path / "layouts.cpp").write_text(wrong)
    out = subprocess.run([sys.executable, str(LAYOUTS), "--check", str(tmp_path / "layouts.cpp"),
                          "--aarch64-in-root", LAYOUT_ROOT, "/usr/bin/python3.11"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"runtime.tstate_current: committed {x86}, measured {x86 + 16}" in out.stdout, out.stdout


def test_a_version_not_measured_for_aarch64_takes_x86_64s(tmp_path):
    """The generated file compiles for both architectures, and a version without an aarch64 table
    takes x86_64's, marked so (the sampler logs it: warn_if_foreign)."""
    generate = _generator()
    fields = [("runtime.tstate_current", 576), ("tstate.next", 8)]
    tables = {
        "x86_64": {(3, 11): generate.Measure("py311", "3.11.7", "x86_64", "x86_64", fields),
                   (3, 12): generate.Measure("py312", "3.12.1", "x86_64", "x86_64", fields)},
        "aarch64": {(3, 11): generate.Measure("arm311", "3.11.2", "aarch64", "aarch64",
                                              [("runtime.tstate_current", 592), ("tstate.next", 8)])},
    }
    text = generate.render(tables)
    assert '{3, 12, "3.12.1", "x86_64", k3_12},  // not measured for aarch64' in text, text
    assert '{3, 11, "3.11.2", "aarch64", kAarch64_3_11},' in text, text
    assert generate.parse(text, "aarch64") == {(3, 11): {"runtime.tstate_current": 592,
                                                         "tstate.next": 8}}
    assert set(generate.parse(text, "x86_64")) == {(3, 11), (3, 12)}
    source = tmp_path / "layouts.cpp"
    source.write_text(text + "\nint main() { return 0; }\n")
    for cxx in ["g++", "aarch64-linux-gnu-g++"]:
        if not shutil.which(cxx):
            continue
        out = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Werror",
                              f"-I{REPO / 'src'}", str(source)], capture_output=True, text=True)
        assert out.returncode == 0, cxx + ": " + out.stderr
