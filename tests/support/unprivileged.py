"""An ordinary user for the tests that check dapprof without privileges: made for the test run
(a system account with a unique name, removed at teardown), with a directory of its own, and a
way to run programs as it. Only root can make one: elsewhere the tests that need it skip."""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

# The interpreter a user account can run: Debian's, with python3-debugpy beside it. pyenv's
# interpreters live under root's home directory, which other users cannot enter.
SYSTEM_PYTHON = "/usr/bin/python3"

# The Python statement that makes the running process non-dumpable (PR_SET_DUMPABLE is 4).
MAKE_NON_DUMPABLE = "import ctypes; assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0"


class User:
    def __init__(self, name: str, home: Path):
        self.name = name
        entry = subprocess.run(["getent", "passwd", name], capture_output=True, text=True,
                               check=True).stdout.split(":")
        self.uid, self.gid = int(entry[2]), int(entry[3])
        self.home = home

    def argv(self, argv: list[str]) -> list[str]:
        """`argv` run as this user: its ids and groups only, no capability left."""
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups",
                "--inh-caps=-all", "--", *[str(a) for a in argv]]

    def env(self, **extra: str) -> dict[str, str]:
        """A login's environment rather than root's (whose PATH names pyenv's shims in /root)."""
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home), "USER": self.name,
                "LOGNAME": self.name, "LANG": "C.UTF-8", **extra}

    def own(self, path: Path) -> Path:
        os.chown(path, self.uid, self.gid)
        return path

    def copy_in(self, source: Path | str, name: str | None = None, mode: int = 0o644) -> Path:
        """A copy of `source` in the user's directory, owned by the user."""
        target = self.home / (name or Path(source).name)
        shutil.copyfile(source, target)
        os.chmod(target, mode)
        return self.own(target)

    def popen(self, argv: list[str], env: dict | None = None, **kwargs) -> subprocess.Popen:
        return subprocess.Popen(self.argv(argv), env=env or self.env(), cwd=self.home, **kwargs)

    def run(self, argv: list[str], timeout: float = 60, env: dict | None = None,
            **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(argv), env=env or self.env(), cwd=self.home,
                              capture_output=True, text=True, encoding="utf-8", errors="replace",
                              timeout=timeout, **kwargs)


def _useradd(name: str) -> subprocess.CompletedProcess:
    argv = [shutil.which("useradd"), "--system", "--no-create-home", "--user-group",
            "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name]
    return _retried_while_locked(argv)


def _userdel(name: str) -> None:
    _retried_while_locked(["userdel", name])


def _retried_while_locked(argv: list[str]) -> subprocess.CompletedProcess:
    # ("cannot lock /etc/passwd": another test run is making or removing its own user.)
    for _ in range(20):
        out = subprocess.run(argv, capture_output=True, text=True)
        if out.returncode == 0 or "lock" not in out.stderr:
            return out
        time.sleep(0.5)
    return out


def _kill_processes_of(uid: int) -> None:
    def pids():
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                status = dict(line.split(":", 1) for line in
                              (entry / "status").read_text().splitlines() if ":" in line)
            except OSError:
                continue
            # (Not the owner of /proc/PID: that is root for a non-dumpable process. Zombies are
            # past killing; their parents reap them.)
            if int(status["Uid"].split()[0]) == uid and not status["State"].strip().startswith("Z"):
                found.append(int(entry.name))
        return found
    deadline = time.monotonic() + 5
    while (left := pids()) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        time.sleep(0.05)


def make_user():
    """A generator for a pytest fixture: yields a User, removes it and its directory afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to make an ordinary user for the test")
    for tool in ("useradd", "userdel", "setpriv", "getent"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    # Unique, so that test runs side by side each have their own; useradd takes at most 32 bytes.
    name = f"dapprof-t{secrets.token_hex(6)}"
    made = _useradd(name)
    if made.returncode != 0:
        pytest.skip(f"useradd cannot make a user here: {made.stderr.strip()}")
    # Not pytest's tmp_path: its parent directories are root's alone.
    home = Path(tempfile.mkdtemp(prefix="dapprof-user-"))
    user = None
    try:
        user = User(name, home)
        user.own(home)
        yield user
    finally:
        if user is not None:
            # Whatever the test left running as the user (a debuggee its dapprof started, say)
            # would keep userdel from removing it.
            _kill_processes_of(user.uid)
        _userdel(name)
        shutil.rmtree(home, ignore_errors=True)


def dapprof_for(user: User, built: str) -> str:
    """The dapprof binary where `user` can run it: a copy in its directory, since the build tree
    may be where only root can go (a checkout under /root, whose mode is 0700)."""
    return str(user.copy_in(built, "dapprof", mode=0o755))


def yama_ptrace_scope() -> int:
    """kernel.yama.ptrace_scope, or 0 where the kernel has no Yama (no restriction beyond uids)."""
    try:
        return int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except OSError:
        return 0
