"""Helpers for the native-frame tests: the dapprof binary, the test extension built for each
interpreter, fixture processes (fixtures/work.py) and `dapprof dump --native --json`."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "support"))
import binaries  # noqa: E402
import pythons  # noqa: E402

FIXTURE = HERE / "fixtures" / "work.py"
INTERPRETERS = pythons.interpreters()
EACH = pythons.each()  # INTERPRETERS, and a skipped case for each missing one


def pytest_report_header(config):
    return pythons.report_header()


def is_static_debian(interp) -> bool:
    """Debian's /usr/bin/python3.X (the host's 3.11, the unstable root's): libpython linked in
    and stripped, so the interpreter's static functions (builtin_sorted, _sre) have no symbol."""
    return interp.label.startswith(("debian-", "sid-"))


@pytest.fixture(scope="session")
def dapprof() -> str:
    return binaries.dapprof_bin()


def ext_dir(interp) -> Path:
    root = os.environ.get("NATIVE_TEST_EXT_DIR")
    if not root:
        pytest.fail("NATIVE_TEST_EXT_DIR must name where the test extension was built")
    d = Path(root) / interp.label
    if not any(d.glob("dapprof_native_test*.so")):
        pytest.fail(f"the test extension was not built for {interp.label} in {d}; reconfigure "
                    "with cmake (it builds one per interpreter found)")
    return d


class Target:
    """fixtures/work.py MODE under `interp`; ready once the workload started; killed on exit."""

    def __init__(self, interp, mode: str):
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ext_dir(interp))
        self.proc = subprocess.Popen([interp.path, str(FIXTURE), mode], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline() if ready else ""
        if line.strip() != "ready":
            self.proc.kill()
            raise AssertionError(f"{mode} fixture did not start: {self.proc.stderr.read()}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def dump(dapprof: str, pid: int, *flags: str) -> dict:
    out = subprocess.run([dapprof, "dump", "--pid", str(pid), "--json", *flags],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def main_frames(snap: dict, pid: int) -> list[dict]:
    for t in snap["threads"]:
        if t["os_thread_id"] == pid or t["name"] == "MainThread":
            return t["frames"]
    raise AssertionError(f"no main thread in {snap}")


def describe(frames: list[dict]) -> str:
    return "\n".join(("  C " if f.get("native") else "  P ") + f["function"] +
                     (f" [{Path(f['module']).name}]" if f.get("native") else "") for f in frames)


def sample_until(dapprof: str, pid: int, check, *flags: str, tries: int = 25):
    """Dumps the main thread until check(frames) returns something true (returned), else fails
    showing the last stack: a sample may land a moment before or after the expected code."""
    frames = []
    for _ in range(tries):
        frames = main_frames(dump(dapprof, pid, "--native", *flags), pid)
        result = check(frames)
        if result:
            return result
    raise AssertionError("expected stack never seen; last one, innermost first:\n" +
                         describe(frames))


def natives_inside(frames: list[dict], function: str) -> list[dict] | None:
    """The native frames inside the innermost Python frame, if that frame is `function`."""
    for i, f in enumerate(frames):
        if not f.get("native"):
            return frames[:i] if f["function"] == function and i > 0 else None
    return None


def index_of(frames: list[dict], function: str, native: bool, start: int = 0) -> int:
    for i in range(start, len(frames)):
        if frames[i]["function"] == function and bool(frames[i].get("native")) == native:
            return i
    return -1
