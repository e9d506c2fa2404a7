"""Names for stripped code (`record --native`): pyenv's 3.12 with its libpython stripped, then
with its debug file found by build id and by .gnu_debuglink (under a debug directory named by
DAPPROF_DEBUG_DIRS), with MiniDebugInfo added as Fedora's find-debuginfo does, and served by a
local debuginfod; then Debian's own stripped interpreters as they ship (the host's 3.11, the
unstable root's 3.13-3.15, which run in a mount namespace of their own and are symbolised from
their own files). Each prints the share of native frames that carry a name, and must name
list.sort and time.sleep, and keep the C frames between the key function and its caller."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import FIXTURE, INTERPRETERS, is_static_debian

UNNAMED = re.compile(r"(\S+\+0x[0-9a-f]+|0x[0-9a-f]+)")
LIST_SORT = {"list.sort", "list_sort", "list_sort_impl"}
TIME_SLEEP = {"time.sleep", "time_sleep"}


def pyenv_312():
    return next((i for i in INTERPRETERS
                 if i.label.startswith("pyenv-") and i.version[:2] == (3, 12)), None)


def run(*args: str) -> None:
    out = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"{args}: {out.stderr}"


def build_id(path: Path) -> str:
    out = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True, check=True)
    return re.search(r"Build ID: ([0-9a-f]+)", out.stdout).group(1)


def mini_debug_info(unstripped: Path, debug: Path, stripped: Path, work: Path) -> None:
    """find-debuginfo's recipe: the symbols of functions not in .dynsym, kept alone (no DWARF)
    from the debug file, xz-compressed into the stripped file's .gnu_debugdata."""
    out = subprocess.run(["nm", "-D", "--format=posix", "--defined-only", str(unstripped)],
                         capture_output=True, text=True, check=True)
    dynamic = {line.split()[0] for line in out.stdout.splitlines() if line.split()}
    functions = set()
    out = subprocess.run(["nm", "--format=posix", "--defined-only", str(unstripped)],
                         capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        fields = line.split()
        if len(fields) > 1 and fields[1] in ("T", "t", "D"):
            functions.add(fields[0])
    keep = work / "keep_symbols"
    keep.write_text("\n".join(sorted(functions - dynamic)) + "\n")
    mini = work / "mini_debuginfo"
    run("objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
        f"--keep-symbols={keep}", str(debug), str(mini))
    run("xz", "-f", str(mini))
    run("objcopy", "--add-section", f".gnu_debugdata={mini}.xz", str(stripped))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Variants:
    """The copies of pyenv 3.12's libpython, made once: `LD_LIBRARY_PATH=<dir>` makes its python
    load the copy (its RUNPATH comes after)."""

    def __init__(self, interp, work: Path):
        self.interp = interp
        lib = Path(interp.path).resolve().parents[1] / "lib" / "libpython3.12.so.1.0"
        self.work = work
        self.debug = work / "libpython3.12.so.1.0.debug"
        run("objcopy", "--only-keep-debug", str(lib), str(self.debug))
        self.id = build_id(lib)

        self.stripped = work / "stripped" / lib.name
        self.stripped.parent.mkdir()
        shutil.copy(lib, self.stripped)
        run("strip", "--strip-all", str(self.stripped))

        self.linked = work / "linked" / lib.name
        self.linked.parent.mkdir()
        shutil.copy(self.stripped, self.linked)
        run("objcopy", f"--add-gnu-debuglink={self.debug}", str(self.linked))
        # A debug tree as -dbgsym packages install: by build id only.
        self.by_id = work / "debug-by-id"
        d = self.by_id / ".build-id" / self.id[:2]
        d.mkdir(parents=True)
        shutil.copy(self.debug, d / f"{self.id[2:]}.debug")
        # By debuglink: the debug directory, then the module's own directory.
        self.by_link = work / "debug-by-link"
        d = self.by_link / str(self.linked.parent).lstrip("/")
        d.mkdir(parents=True)
        shutil.copy(self.debug, d / self.debug.name)
        # The same name, another file: its CRC does not match the debuglink's.
        self.wrong = work / "debug-wrong"
        d = self.wrong / str(self.linked.parent).lstrip("/")
        d.mkdir(parents=True)
        data = bytearray(self.debug.read_bytes())
        data[-1] ^= 0xff
        (d / self.debug.name).write_bytes(bytes(data))

        self.mini = work / "mini" / lib.name
        self.mini.parent.mkdir()
        shutil.copy(self.stripped, self.mini)
        mini_debug_info(lib, self.debug, self.mini, work)
        self.server = None

    def debuginfod(self) -> str:
        """A local debuginfod serving the debug file; its URL once it has indexed it."""
        if self.server is None:
            served = self.work / "served"
            served.mkdir()
            shutil.copy(self.debug, served / self.debug.name)
            port = free_port()
            self.server = subprocess.Popen(
                ["debuginfod", "-F", str(served), "-p", str(port), "-d",
                 str(self.work / "debuginfod.sqlite")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{self.url}/buildid/{self.id}/debuginfo",
                                                timeout=5) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                assert self.server.poll() is None, "debuginfod exited"
                assert time.monotonic() < deadline, "debuginfod never served the debug file"
                time.sleep(0.3)
        return self.url

    def close(self):
        if self.server:
            self.server.kill()
            self.server.wait()


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    interp = pyenv_312()
    if interp is None:
        pytest.skip("pyenv's CPython 3.12 is not installed here")
    v = Variants(interp, tmp_path_factory.mktemp("stripped"))
    yield v
    v.close()


def record(dapprof: str, python: str, env: dict, out: Path) -> tuple[dict, str]:
    """`record --native --idle` of fixtures/work.py names for 2 s: (speedscope document,
    stderr)."""
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("DEBUGINFOD_URLS", "DAPPROF_DEBUG_DIRS")}
    full_env.update(env)
    proc = subprocess.Popen([python, str(FIXTURE), "names"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=full_env)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(0.3)  # into the loops
        result = subprocess.run(
            ["dapprof", "record", "--pid", str(proc.pid), "--native", "--idle", "--rate", "200",
             "--duration", "2", "--format", "speedscope", "-o", str(out)],
            executable=dapprof_path(), capture_output=True, text=True, timeout=90, env=full_env)
    finally:
        proc.kill()
        proc.wait()
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text()), result.stderr


def dapprof_path() -> str:
    import binaries
    return binaries.dapprof_bin()


class Stacks:
    def __init__(self, doc: dict):
        frames = doc["shared"]["frames"]
        self.stacks = []  # (frames root first, weight)
        for profile in doc["profiles"]:
            for sample, weight in zip(profile["samples"], profile["weights"]):
                self.stacks.append(([frames[i] for i in sample], weight))

    @staticmethod
    def native(frame: dict) -> bool:
        return not frame.get("file", "").endswith(".py")

    def share(self) -> tuple[float, int]:
        named = total = 0
        for stack, weight in self.stacks:
            for f in stack:
                if self.native(f):
                    total += weight
                    named += weight if not UNNAMED.fullmatch(f["name"]) else 0
        return (named / total if total else 0.0), total

    def names(self) -> set[str]:
        return {f["name"] for stack, _ in self.stacks for f in stack if self.native(f)}

    def between_key_and_caller(self) -> list[list[dict]]:
        """For each stack through sort_key, the frames between it and list_sort_work."""
        out = []
        for stack, _ in self.stacks:
            names = [f["name"] for f in stack]
            if "sort_key" in names and "list_sort_work" in names:
                out.append(stack[names.index("list_sort_work") + 1:names.index("sort_key")])
        return out


def check(label: str, doc: dict, *, debug: bool = False, lines: bool = False) -> Stacks:
    s = Stacks(doc)
    share, total = s.share()
    print(f"\nnamed share {label}: {share:.1%} of {total} native frames")
    names = s.names()
    assert names & LIST_SORT, sorted(names)
    assert names & TIME_SLEEP, sorted(names)
    between = s.between_key_and_caller()
    assert between, "no sample in the key function"
    # No frame dropped: list.sort's C frames stay between the key function and its caller.
    assert all(b and all(Stacks.native(f) for f in b) for b in between), between[:3]
    assert any(f["name"] in LIST_SORT for b in between for f in b), between[:3]
    if debug:  # named by the debug file's symbol table, which has the static functions
        assert "list_sort_impl" in names, sorted(names)
    if lines:
        files = {f.get("file", "") for stack, _ in s.stacks for f in stack}
        assert any(f.endswith("listobject.c") for f in files), sorted(files)
    return s


def test_stripped_named_from_cpython_tables(variants, tmp_path):
    doc, _ = record(dapprof_path(), variants.interp.path,
                    {"LD_LIBRARY_PATH": str(variants.stripped.parent)}, tmp_path / "p.json")
    s = check("pyenv-3.12 strip --strip-all", doc)
    assert {"list.sort", "time.sleep"} <= s.names(), sorted(s.names())


@pytest.mark.parametrize("tree", ["by-id", "by-link"])
def test_separate_debug_file(variants, tmp_path, tree):
    root = variants.by_id if tree == "by-id" else variants.by_link
    doc, _ = record(dapprof_path(), variants.interp.path,
                    {"LD_LIBRARY_PATH": str(variants.linked.parent),
                     "DAPPROF_DEBUG_DIRS": str(root)}, tmp_path / "p.json")
    check(f"pyenv-3.12 debug file {tree}", doc, debug=True, lines=True)


def test_debug_file_with_another_crc_is_not_used(variants, tmp_path):
    doc, _ = record(dapprof_path(), variants.interp.path,
                    {"LD_LIBRARY_PATH": str(variants.linked.parent),
                     "DAPPROF_DEBUG_DIRS": str(variants.wrong)}, tmp_path / "p.json")
    assert "list_sort_impl" not in Stacks(doc).names()


def test_mini_debug_info(variants, tmp_path):
    doc, _ = record(dapprof_path(), variants.interp.path,
                    {"LD_LIBRARY_PATH": str(variants.mini.parent),
                     "DAPPROF_DEBUG_DIRS": str(tmp_path / "none")}, tmp_path / "p.json")
    check("pyenv-3.12 MiniDebugInfo", doc, debug=True)


def test_debuginfod(variants, tmp_path):
    url = variants.debuginfod()
    doc, err = record(dapprof_path(), variants.interp.path,
                      {"LD_LIBRARY_PATH": str(variants.stripped.parent),
                       "DAPPROF_DEBUG_DIRS": str(tmp_path / "none"), "DEBUGINFOD_URLS": url,
                       "DEBUGINFOD_CACHE_PATH": str(tmp_path / "cache")}, tmp_path / "p.json")
    check("pyenv-3.12 debuginfod", doc, debug=True, lines=True)
    assert "debuginfod sent the debug information" in err, err


def test_debuginfod_without_the_file_says_so(variants, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    doc, err = record(dapprof_path(), variants.interp.path,
                      {"LD_LIBRARY_PATH": str(variants.stripped.parent),
                       "DAPPROF_DEBUG_DIRS": str(tmp_path / "none"), "DEBUGINFOD_URLS": url,
                       "DEBUGINFOD_CACHE_PATH": str(tmp_path / "cache")}, tmp_path / "p.json")
    assert f"debuginfod ({url}) has no debug information for" in err, err
    assert "list.sort" in Stacks(doc).names()


DEBIAN = [pytest.param(i, id=i.label) for i in INTERPRETERS if is_static_debian(i)]


@pytest.mark.parametrize("interp", DEBIAN)
def test_debian_interpreter_as_shipped(interp, tmp_path):
    doc, _ = record(dapprof_path(), interp.path, {}, tmp_path / "p.json")
    s = check(interp.label, doc)
    assert {"list.sort", "time.sleep"} <= s.names(), sorted(s.names())
    if interp.root:
        # Its C library is the root's, read through /proc/PID/root: the host's has other
        # offsets, and would name the sleeping thread's system call wrongly or not at all.
        assert any(f["name"] == "clock_nanosleep" and f.get("file", "").startswith("/usr/lib")
                   for stack, _ in s.stacks for f in stack), sorted(s.names())
