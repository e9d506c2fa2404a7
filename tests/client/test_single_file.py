"""The client as one file: dapprof-client.pyz (client/build_single_file.py; the build makes it as
${build}/dapprof-client.pyz, ctest passes it in DAPPROF_CLIENT_PYZ) run end to end from a
directory of its own, and the client/dapprof_client.py launcher beside the package."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pythons
from conftest import CLIENT, DEBIAN_PYTHON, FIXTURES, ROOT, dapprof_bin

APP = FIXTURES / "client_app.py"
APP_PATH = os.path.realpath(APP)


@pytest.fixture
def pyz(tmp_path):
    """The zip application alone in a directory, nothing of client/ beside it."""
    alone = tmp_path / "elsewhere"
    alone.mkdir()
    built = os.environ.get("DAPPROF_CLIENT_PYZ")
    if built:
        return Path(shutil.copy(built, alone / "dapprof-client.pyz"))
    subprocess.run([sys.executable, str(ROOT / "client" / "build_single_file.py"),
                    "-o", str(alone / "dapprof-client.pyz")], check=True, capture_output=True)
    return alone / "dapprof-client.pyz"


def oldest_pyenv():
    found = [i for i in pythons.interpreters() if i.label.startswith("pyenv-")]
    return found[:1]


@pytest.mark.parametrize("python", [DEBIAN_PYTHON, *(i.path for i in oldest_pyenv())])
def test_the_single_file_profiles_a_program(python, pyz, run_client, tmp_path):
    run = run_client("--dapprof", dapprof_bin(), "--daemon-arg=--python=" + DEBIAN_PYTHON,
                     "--daemon-arg=--log-level=warn", "--duration", "2",
                     "--export", f"speedscope={tmp_path}/one.speedscope.json",
                     "--output", str(tmp_path / "one.svg"), "--format", "flamegraph",
                     str(APP), "--", "60", python=python, client=pyz)
    assert run.returncode == 0, run
    summary = run.summary()
    assert ("crunch_numbers", APP_PATH) in {(r["function"], r["file"])
                                            for r in summary["topFunctions"]}, run
    assert f"crunch_numbers ({APP_PATH})" in run.stdout
    doc = json.loads((tmp_path / "one.speedscope.json").read_text())
    assert sum(len(p["samples"]) for p in doc["profiles"]) == summary["samples"] > 0
    assert "<svg" in (tmp_path / "one.svg").read_text()[:2000]


def test_the_single_file_exits_with_the_clients_status(pyz, run_client):
    run = run_client("--dapprof", "/nonexistent/dapprof", str(APP), client=pyz)
    assert run.returncode == 1 and "cannot start /nonexistent/dapprof" in run.stderr, run
    run = run_client("--duration", "-1", str(APP), client=pyz)
    assert run.returncode == 2, run


def test_the_single_file_is_also_a_library(pyz):
    code = ("import dapprof_client, sys; from dapprof_client import Session, StreamDecoder; "
            "assert dapprof_client.__file__.startswith(sys.argv[1]), dapprof_client.__file__; "
            "print(dapprof_client.FORMATS)")
    out = subprocess.run([DEBIAN_PYTHON, "-c", code, str(pyz)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(pyz)), check=True, timeout=30)
    assert "speedscope" in out.stdout


def test_the_launcher_runs_the_package_beside_it():
    """client/dapprof_client.py and client/dapprof_client/ share a name: `import dapprof_client`
    must find the package (a package directory wins over a module in the same directory)."""
    out = subprocess.run([DEBIAN_PYTHON, str(CLIENT), "--help"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0 and "--export FORMAT=FILE" in out.stdout, out.stderr
    code = "import dapprof_client; print(dapprof_client.__path__[0])"
    out = subprocess.run([DEBIAN_PYTHON, "-c", code], capture_output=True, text=True,
                         cwd=CLIENT.parent, check=True, timeout=30)
    assert out.stdout.strip() == str(CLIENT.parent / "dapprof_client")
    # the module form works too
    out = subprocess.run([DEBIAN_PYTHON, "-m", "dapprof_client", "--help"], capture_output=True,
                         text=True, cwd=CLIENT.parent, timeout=30)
    assert out.returncode == 0 and "--speedscope FILE" in out.stdout


def test_the_launcher_alone_says_what_it_needs(tmp_path):
    lone = tmp_path / "dapprof_client.py"
    shutil.copy(CLIENT, lone)
    out = subprocess.run([DEBIAN_PYTHON, str(lone), "--help"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 1 and "dapprof-client.pyz" in out.stderr, out
