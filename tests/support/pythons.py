"""Which CPython interpreters the tests run against, and how to run debugpy under each.

Every pyenv-installed CPython 3.8-3.13 (shared libpython) plus Debian's /usr/bin/python3.11
(libpython linked statically into the executable). Missing ones are reported, never faked.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SUPPORTED = [(3, 8), (3, 9), (3, 10), (3, 11), (3, 12), (3, 13)]


@dataclass(frozen=True)
class Interpreter:
    label: str  # e.g. "pyenv-3.12.1", "debian-3.11"
    path: str
    version: tuple  # (major, minor, micro)

    def __str__(self) -> str:
        return self.label


def _pyenv_root() -> Path | None:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    exe = shutil.which("pyenv")
    if exe:
        out = subprocess.run([exe, "root"], capture_output=True, text=True)
        if out.returncode == 0:
            return Path(out.stdout.strip())
    default = Path.home() / ".pyenv"
    return default if default.is_dir() else None


def _version_of(path: str) -> tuple | None:
    out = subprocess.run([path, "-c", "import sys; print(*sys.version_info[:3])"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return tuple(int(x) for x in out.stdout.split())


def interpreters() -> list[Interpreter]:
    """All supported interpreters on this machine, newest pyenv build per minor version."""
    found: dict[tuple, Interpreter] = {}
    root = _pyenv_root()
    if root and (root / "versions").is_dir():
        for d in sorted((root / "versions").iterdir()):
            m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", d.name)
            exe = d / "bin" / "python3"
            if not m or not exe.exists():
                continue
            v = tuple(int(x) for x in m.groups())
            if v[:2] in SUPPORTED:
                found[v[:2]] = Interpreter(f"pyenv-{d.name}", str(exe), v)
    result = [found[k] for k in sorted(found)]
    debian = "/usr/bin/python3.11"
    if os.path.exists(debian):
        v = _version_of(debian)
        if v:
            result.append(Interpreter("debian-3.11", debian, v))
    return result


def missing_versions() -> list[str]:
    have = {i.version[:2] for i in interpreters() if i.label.startswith("pyenv")}
    return [f"{a}.{b}" for a, b in SUPPORTED if (a, b) not in have]


def report_header() -> list[str]:
    """pytest's report header lines: the interpreters tested, and the versions missing."""
    lines = ["interpreters: " + ", ".join(i.label for i in interpreters())]
    missing = missing_versions()
    if missing:
        lines.append("missing (their cases are skipped): " + ", ".join(missing))
    return lines


_DEBUGPY_ENV: str | None = None


def debugpy_pythonpath() -> str:
    """A directory holding a self-contained copy of Debian's debugpy (symlinks resolved) with the
    `bytecode` and `typing_extensions` modules it needs, for use on PYTHONPATH under any pyenv
    interpreter. Debian's own /usr/bin/python3 needs nothing."""
    global _DEBUGPY_ENV
    if _DEBUGPY_ENV:
        return _DEBUGPY_ENV
    dist = Path("/usr/lib/python3/dist-packages")
    dest = Path(tempfile.gettempdir()) / f"dapprof-debugpy-{os.getuid()}"
    marker = dest / ".complete"
    if not marker.exists():
        tmp = Path(tempfile.mkdtemp(prefix="dapprof-debugpy-"))
        for name in ["debugpy", "bytecode", "typing_extensions.py"]:
            src = dist / name
            if src.is_dir():
                shutil.copytree(src, tmp / name, symlinks=False,
                                ignore=shutil.ignore_patterns("__pycache__", "*.so"))
            elif src.exists():
                shutil.copy2(src, tmp / name)
        (tmp / ".complete").write_text("ok")
        if dest.exists():
            shutil.rmtree(dest, ignore_errors=True)
        try:
            os.replace(tmp, dest)
        except OSError:  # another test process won the race
            shutil.rmtree(tmp, ignore_errors=True)
    _DEBUGPY_ENV = str(dest)
    return _DEBUGPY_ENV


def debugpy_env(interp: Interpreter, base: dict | None = None) -> dict:
    """Environment in which `interp -m debugpy.adapter` works."""
    env = dict(os.environ if base is None else base)
    if interp.path.startswith("/usr/bin/"):
        return env
    extra = debugpy_pythonpath()
    env["PYTHONPATH"] = extra + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


if __name__ == "__main__":
    for i in interpreters():
        print(i.label, i.path, ".".join(map(str, i.version)))
    print("missing:", missing_versions() or "none", file=sys.stderr)
