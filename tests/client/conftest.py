"""Fixtures for the bundled client's tests: the dapprof binary (DAPPROF_BIN), a `dapprof serve`
on a free loopback port, and a runner for the client's command line (client/dapprof_client.py,
or another entry point such as dapprof-client.pyz) that bounds every wait and kills whatever the
run left behind. The package itself is imported from client/."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CLIENT = ROOT / "client" / "dapprof_client.py"
FIXTURES = ROOT / "tests" / "fixtures"
DEBIAN_PYTHON = "/usr/bin/python3"

sys.path.insert(0, str(ROOT / "client"))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from binaries import dapprof_bin  # noqa: E402,F401 (used by the tests)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


class Serve:
    """`dapprof serve --listen 127.0.0.1:0 --port-file F`, its adapters under `python`, stopped
    with SIGTERM at teardown."""

    def __init__(self, tmp_path: Path, *extra: str, python: str = DEBIAN_PYTHON):
        self.log = tmp_path / "serve.log"
        port_file = tmp_path / "serve.port"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [dapprof_bin(), "serve", "--listen", "127.0.0.1:0", "--port-file", str(port_file),
                 "--python", python, *extra],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 15
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"dapprof serve did not start: {self.log.read_text()}")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.address = f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def serve(tmp_path):
    server = Serve(tmp_path)
    yield server
    server.stop()


class Run:
    def __init__(self, completed: subprocess.CompletedProcess, elapsed: float, tmp_path: Path):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.elapsed = elapsed
        self.tmp_path = tmp_path

    def summary(self) -> dict:
        return json.loads((self.tmp_path / "summary.json").read_text())

    def __repr__(self) -> str:
        return (f"exit code {self.returncode} after {self.elapsed:.1f} s\n--- stdout\n{self.stdout}"
                f"\n--- stderr\n{self.stderr}")


@pytest.fixture
def run_client(tmp_path):
    """Runs the client CLI (with Debian's python3 unless `python` says otherwise); returns a
    Run. Debuggees it reported (the fixtures print their pid) are killed afterwards in case the
    run failed half-way."""
    debuggees: list[int] = []

    def run(*args: str, python: str = DEBIAN_PYTHON, timeout: float = 90.0,
            client: Path = CLIENT) -> Run:
        argv = [python, str(client), "--json-summary", str(tmp_path / "summary.json"),
                "--top", "40", *args]
        start = time.monotonic()
        try:
            completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                       text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"the client did not finish within {timeout} s: {e.stderr}")
        result = Run(completed, time.monotonic() - start, tmp_path)
        debuggees.extend(int(m) for m in re.findall(r'"pid": (\d+)', completed.stderr))
        return result

    yield run
    for pid in debuggees:
        _kill(pid)
