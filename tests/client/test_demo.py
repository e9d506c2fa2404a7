"""scripts/demo.sh, the README's first Quick start command, run as a user would (without the
package installation step, which needs root and the network): it must build nothing new, profile
the bundled demo program through `dapprof serve` and leave both profile files behind."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, dapprof_bin


def test_demo_script(tmp_path):
    # The build directory holding the dapprof under test: the script only re-checks it.
    build_dir = Path(dapprof_bin()).resolve().parent.parent
    assert (build_dir / "CMakeCache.txt").exists(), build_dir
    out = ROOT / "demo-output"
    start = time.monotonic()
    # its own process group, so that a hung demo is stopped with everything it started
    proc = subprocess.Popen(
        ["scripts/demo.sh", "--skip-install", "--build-dir", str(build_dir)], cwd=ROOT,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
        pytest.fail(f"scripts/demo.sh did not finish within 120 s\n{stdout}\n{stderr}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    completed = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    elapsed = time.monotonic() - start
    report = f"exit {completed.returncode}\n{completed.stdout}\n{completed.stderr}"
    assert completed.returncode == 0, report
    assert elapsed < 60, f"the demo took {elapsed:.0f} s\n{report}"

    speedscope = json.loads((out / "demo.speedscope.json").read_text())
    samples = sum(len(p["samples"]) for p in speedscope["profiles"])
    assert samples > 100, report
    names = {f["name"] for f in speedscope["shared"]["frames"]}
    assert {"sieve_primes", "fib", "sort_key", "json_round_trip"} <= names, names
    svg = (out / "demo-flamegraph.svg").read_text()
    assert svg.lstrip().startswith(("<?xml", "<svg")) and "sieve_primes" in svg
    # what the user sees: the summary's tables and where the files are
    assert "Top functions by own samples" in completed.stdout
    assert "OwnSmpl  TotSmpl  Function (file)" in completed.stdout
    assert "sieve_primes (" in completed.stdout and "demo_app.py" in completed.stdout
    assert "demo-output/demo-flamegraph.svg" in completed.stdout
    assert "npx speedscope" in completed.stdout
    # the demo program ran to its own end (it prints one line when done)
    assert "demo_app:" in completed.stderr and "rounds" in completed.stderr, report
    # and the daemon the script started is gone
    port = (out / "dapprof.port").read_text().strip()
    assert not any(f":{int(port):04X} " in line and " 0A " in line
                   for line in Path("/proc/net/tcp").read_text().splitlines()), "still listening"


def test_demo_installs_only_what_the_build_and_demo_need():
    """The demo's package list holds none of what only the tests use (those took most of a fresh
    machine's demo time), and everything the build and the demo do need."""
    def listed(part):
        out = subprocess.run(["scripts/install-deps.sh", part, "--list"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        return set(out.split())
    demo, everything = listed("demo"), listed("all")
    assert demo < everything
    only_tests = {"chromium", "golang-go", "clang", "lintian", "help2man", "libgtest-dev",
                  "libbenchmark-dev", "debootstrap", "nodejs", "ripgrep", "ccache"}
    assert only_tests <= everything - demo, only_tests & demo
    assert {"cmake", "libunwind-dev", "protobuf-compiler", "golang-github-google-pprof-dev",
            "python3-debugpy", "liblzma-dev", "libdebuginfod-dev"} <= demo
    # and the demo's preset configures no tests or benchmarks, whose packages it does not install
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    cache = next(p for p in presets["configurePresets"] if p["name"] == "demo")["cacheVariables"]
    assert cache["DAPPROF_BUILD_TESTS"] == "OFF" and cache["DAPPROF_BUILD_BENCH"] == "OFF"
    # a unity build, by Ninja (which compiles every library's files at once, where Make waits for
    # each library's dependencies): a fresh machine's demo in about 3 minutes, not 17
    demo_preset = next(p for p in presets["configurePresets"] if p["name"] == "demo")
    assert cache["CMAKE_UNITY_BUILD"] == "ON" and demo_preset["generator"] == "Ninja"
    assert "ninja-build" in demo
    assert 'cmake --preset demo' in (ROOT / "scripts/demo.sh").read_text()
