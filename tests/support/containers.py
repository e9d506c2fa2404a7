"""Programs run as in a container: an interpreter of the Debian unstable root in a PID and mount
namespace of its own (tests/support/in_root.c --pid), as Docker and Kubernetes run a program.
The program sees its own PIDs (1, or the one asked for) and the root's files; the host sees it
under a PID of its own, found here from NSpid in /proc."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pythons

REPO = Path(__file__).resolve().parents[2]


def namespace_pids(pid: int) -> list[int]:
    """NSpid of /proc/PID/status: the host's PID first, the program's own last; [] if gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return [int(v) for v in line.split()[1:]]
    except OSError:
        pass
    return []


def pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(entry))
    return out


def host_tids(pid: int) -> dict[int, int]:
    """The program's thread ids as it knows them -> the host's."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
                if line.startswith("NSpid:"):
                    out[int(line.split()[-1])] = int(tid)
        except OSError:
            pass
    return out


class Container:
    """`argv` run by the root's `interp` (a pythons.Interpreter with a root) as pid `ns_pid` of
    a new PID namespace. The program must print one JSON line when it is ready (see
    tests/fixtures); `report` holds it. Use as a context manager: leaving kills the namespace."""

    def __init__(self, interp: pythons.Interpreter, argv: list[str], ns_pid: int = 1,
                 timeout: float = 60):
        assert interp.root and interp.inner_path, f"{interp} is not an interpreter of a root"
        self.interp = interp
        command = [pythons.launcher(), "--bind", str(REPO), "--pid"]
        if ns_pid != 1:
            command += ["--ns-pid", str(ns_pid)]
        command += [interp.root, interp.inner_path, *argv]
        self.launcher = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
        try:
            ready, _, _ = select.select([self.launcher.stdout], [], [], timeout)
            line = self.launcher.stdout.readline() if ready else ""
            assert line, f"{argv} in a container printed nothing: {self._stderr()}"
            self.report = json.loads(line)
            assert self.report["pid"] == ns_pid, self.report
            self.pid = self._host_pid(ns_pid)
        except BaseException:
            self.stop()
            raise

    def _stderr(self) -> str:
        if self.launcher.poll() is None:
            return "(still running)"
        return self.launcher.stderr.read()

    def _host_pid(self, ns_pid: int) -> int:
        # pid 1 is in_root's child; a program with another PID is pid 1's.
        first = children(self.launcher.pid)
        assert len(first) == 1, first
        candidates = first if ns_pid == 1 else children(first[0])
        found = [p for p in candidates if namespace_pids(p)[-1:] == [ns_pid]]
        assert len(found) == 1, (candidates, ns_pid)
        assert pid_namespace(found[0]) != pid_namespace(os.getpid())
        return found[0]

    def host_tid(self, thread_name: str) -> int:
        """The host's TID of a thread the program reported, by its name."""
        return host_tids(self.pid)[self.report["threads"][thread_name]]

    def stop(self) -> None:
        if self.launcher.poll() is None:
            # in_root's child is pid 1 of the namespace and dies with in_root (PDEATHSIG), and the
            # whole namespace with it.
            self.launcher.send_signal(signal.SIGKILL)
        try:
            self.launcher.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 10
        while getattr(self, "pid", None) and os.path.exists(f"/proc/{self.pid}") and \
                time.monotonic() < deadline:
            time.sleep(0.02)

    def __enter__(self) -> "Container":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str]) -> int:
    """`containers.py LABEL PROGRAM [ARG]...`: PROGRAM run as pid 1 of a container by the root's
    interpreter LABEL (sid-3.14), for tests in other languages (the VS Code extension's
    end-to-end test). Prints one JSON line, {"pid": the host's pid, "report": the program's
    line} or {"missing": why it cannot run here}, then keeps the container until its standard
    input closes (or SIGTERM), and ends it."""
    if len(argv) < 2:
        print("usage: containers.py LABEL PROGRAM [ARG]...", file=sys.stderr)
        return 2
    interp = pythons.find(argv[0])
    if interp is None or not interp.root:
        print(json.dumps({"missing": pythons.missing_reason(argv[0])}), flush=True)
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with Container(interp, argv[1:]) as box:
        print(json.dumps({"pid": box.pid, "report": box.report}), flush=True)
        try:
            sys.stdin.read()
        except SystemExit:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
