"""Which CPython interpreters the tests run against, and how to run debugpy under each.

Every pyenv-installed CPython 3.8-3.13 (shared libpython), Debian's /usr/bin/python3.11
(libpython linked statically into the executable), and CPython 3.13, 3.14 and 3.15 of a Debian
unstable root (scripts/debian-unstable-root.sh) run the way a container runs them: in a mount
namespace of their own after pivot_root (tests/support/in_root.c), so the host sees their files
only through /proc/PID/root. Missing ones are reported, never faked.

    pythons.py          prints `label path version root` for each (root `-` for the host's own)
    pythons.py --json   every field of each, and the missing ones with the reason
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SUPPORTED = [(3, 8), (3, 9), (3, 10), (3, 11), (3, 12), (3, 13)]  # from pyenv
# Read by dump and record, but not part of every suite: the native tests' extension and the
# fixtures of the live tests use 3.8+ APIs and syntax. See sampler_only().
SAMPLER_ONLY = [(3, 7)]
SID_VERSIONS = [(3, 13), (3, 14), (3, 15)]  # from the Debian unstable root
# Every interpreter the tests expect, by the name missing_versions() reports it under.
EXPECTED = ([f"{a}.{b}" for a, b in SUPPORTED] + ["debian-3.11"] +
            [f"sid-{a}.{b}" for a, b in SID_VERSIONS])

REPO = Path(__file__).resolve().parents[2]
LAUNCHER_SOURCE = Path(__file__).resolve().parent / "in_root.c"


@dataclass(frozen=True)
class Interpreter:
    label: str  # e.g. "pyenv-3.12.1", "debian-3.11", "sid-3.14"
    path: str  # what the host runs: the interpreter, or a wrapper entering its root
    version: tuple  # (major, minor, micro)
    include_dir: str = ""  # its Python.h, as the host reaches it
    inner_path: str = ""  # the interpreter as it sees itself (debugpy's `python`); default path
    root: str | None = None  # the file system it runs in, None for the host's
    host_debugpy: bool = False  # whether debugpy needs debugpy_pythonpath() under it

    def __post_init__(self):
        if not self.inner_path:
            object.__setattr__(self, "inner_path", self.path)

    def __str__(self) -> str:
        return self.label

    def include_flags(self) -> list[str]:
        """Compiler flags for its headers. A root's pyconfig.h includes
        <x86_64-linux-gnu/python3.X/pyconfig.h> from the root's /usr/include, searched after the
        host's own directories so the host's C library headers still win."""
        flags = ["-I", self.include_dir]
        if self.root:
            flags += ["-idirafter", os.path.join(self.root, "usr", "include")]
        return flags


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
    return _host_interpreters() + _sid_interpreters()[0]


def _pyenv(minors: list) -> list[Interpreter]:
    """pyenv's newest build of each of `minors` that is installed, by version."""
    found: dict[tuple, Interpreter] = {}
    root = _pyenv_root()
    if root and (root / "versions").is_dir():
        for d in sorted((root / "versions").iterdir()):
            m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", d.name)
            exe = d / "bin" / "python3"
            if not m or not exe.exists():
                continue
            v = tuple(int(x) for x in m.groups())
            if v[:2] in minors:
                abi = "m" if v[:2] < (3, 8) else ""  # 3.7's headers are in include/python3.7m
                include = d / "include" / f"python{v[0]}.{v[1]}{abi}"
                found[v[:2]] = Interpreter(f"pyenv-{d.name}", str(exe), v, str(include),
                                           host_debugpy=True)
    return [found[k] for k in sorted(found)]


def _host_interpreters() -> list[Interpreter]:
    result = _pyenv(SUPPORTED)
    debian = "/usr/bin/python3.11"
    if os.path.exists(debian):
        v = _version_of(debian)
        if v:
            result.append(Interpreter("debian-3.11", debian, v, "/usr/include/python3.11"))
    return result


def find(name: str) -> Interpreter | None:
    """The interpreter EXPECTED names `name` ("3.12" is pyenv's), if this machine has it."""
    for i in interpreters():
        if i.label == name or (i.label.startswith("pyenv-") and "%d.%d" % i.version[:2] == name):
            return i
    return None


def missing_versions() -> list[str]:
    return [name for name in EXPECTED if find(name) is None]


def missing_reason(name: str) -> str:
    if name.startswith("sid-"):
        return f"{name} is missing: {_sid_interpreters()[1]}"
    if name.startswith("debian-"):
        return f"Debian's /usr/bin/python{name[7:]} is not installed here"
    return f"CPython {name} is not installed here"


def report_header() -> list[str]:
    """pytest's report header lines: the interpreters tested, and the versions missing."""
    lines = ["interpreters: " + ", ".join(i.label for i in interpreters())]
    missing = missing_versions()
    if missing:
        lines.append("missing (their cases are skipped): " + ", ".join(missing))
        if any(name.startswith("sid-") for name in missing):
            lines.append("sid: " + _sid_interpreters()[1])
    return lines


def sampler_only() -> list[Interpreter]:
    """pyenv's CPython 3.7 (and any other SAMPLER_ONLY version) where installed: for the tests of
    `dapprof dump` and `record` only."""
    return _pyenv(SAMPLER_ONLY)


def each(sampler_only_too: bool = False) -> list:
    """pytest parameters: every interpreter found (with sampler_only_too, also those of
    sampler_only()), then a case skipped with its reason for each expected one that is missing."""
    import pytest
    extra = sampler_only() if sampler_only_too else []
    return ([pytest.param(i, id=i.label) for i in interpreters() + extra] +
            [pytest.param(None, id=name, marks=pytest.mark.skip(reason=missing_reason(name)))
             for name in missing_versions()])


# ---- the Debian unstable root ----

_SID: tuple[list[Interpreter], str] | None = None


def _sid_root() -> tuple[str | None, str]:
    """(the complete root's path, "") or (None, why there is none usable)."""
    script = REPO / "scripts" / "debian-unstable-root.sh"
    out = subprocess.run([str(script), "--print-path"], capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip() or f"{script} --print-path failed"
    root = out.stdout.strip().splitlines()[-1]
    if os.geteuid() != 0:
        return None, f"running the interpreters of {root} needs root (mount namespaces)"
    return root, ""


def launcher() -> str:
    """tests/support/in_root.c compiled once per source into the system's temporary directory
    (usable before anything is built, e.g. at CMake configure time)."""
    source = LAUNCHER_SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    exe = Path(tempfile.gettempdir()) / f"dapprof-in-root-{os.getuid()}" / digest / "in_root"
    if exe.exists():
        return str(exe)
    exe.parent.mkdir(parents=True, exist_ok=True)
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise OSError("no C compiler (cc) to build tests/support/in_root.c")
    tmp = exe.with_name(f"in_root.{os.getpid()}")
    out = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(tmp),
                          str(LAUNCHER_SOURCE)], capture_output=True, text=True)
    if out.returncode != 0:
        raise OSError(f"cannot build {LAUNCHER_SOURCE}: {out.stderr.strip()}")
    os.replace(tmp, exe)  # atomic: concurrent test processes may build it too
    return str(exe)


def _wrapper(root: str, inner: str) -> str:
    """An executable for the host that runs `inner` inside `root`, passing its arguments: a
    shell only until the exec of the launcher, which execs the interpreter in turn."""
    text = ("#!/bin/sh\n"
            f"exec {shlex.join([launcher(), '--bind', str(REPO), root, inner])} \"$@\"\n")
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = Path(launcher()).parent / "wrappers" / digest / Path(inner).name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(text)
        tmp.chmod(0o755)
        os.replace(tmp, path)
    return str(path)


def _sid_interpreters() -> tuple[list[Interpreter], str]:
    """The root's interpreters and, when some are missing, why."""
    global _SID
    if _SID is not None:
        return _SID
    root, reason = _sid_root()
    found = []
    if root:
        try:
            for a, b in SID_VERSIONS:
                inner = f"/usr/bin/python{a}.{b}"
                wrapper = _wrapper(root, inner)
                v = _version_of(wrapper)
                if v is None or v[:2] != (a, b):
                    reason = f"{inner} in {root} does not run (try {wrapper} -V)"
                    continue
                found.append(Interpreter(f"sid-{a}.{b}", wrapper, v,
                                         os.path.join(root, f"usr/include/python{a}.{b}"),
                                         inner_path=inner, root=root))
        except OSError as e:
            found, reason = [], str(e)
    _SID = (found, reason)
    return _SID


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
    if not interp.host_debugpy:  # Debian's own and the root's have a debugpy of their own
        return env
    extra = debugpy_pythonpath()
    env["PYTHONPATH"] = extra + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


if __name__ == "__main__":
    if sys.argv[1:] == ["--json"]:
        import dataclasses
        import json
        json.dump({"interpreters": [dataclasses.asdict(i) for i in interpreters()],
                   "missing": {name: missing_reason(name) for name in missing_versions()}},
                  sys.stdout, indent=1)
        sys.exit(0)
    for i in interpreters():
        print(i.label, i.path, ".".join(map(str, i.version)), i.root or "-")
    print("missing:", ", ".join(missing_reason(n) for n in missing_versions()) or "none",
          file=sys.stderr)
