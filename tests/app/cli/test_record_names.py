"""py-spy's naming flags of `record`, on every interpreter: --function (one entry per function,
at the line it starts), --nolineno, short file names by default (from the top-level package)
and --full-filenames; then --hideprogress and --capture."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import DEBIAN_PYTHON, FIXTURE, pythons, run, stderr_on_a_terminal

WORK = """import time


def spin(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1
    return x
"""
RUN = """import sys
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pkg.sub import work
work.spin(float(sys.argv[1]))
"""
DEF_LINE = 4  # `def spin` in WORK
BODY_LINES = {5, 6, 7, 8, 9}  # the lines of spin() a sample can show
LOOP_LINES = {7, 8}  # where nearly all of the second goes


def make_app(root: Path) -> Path:
    """root/run.py calling spin() of root/pkg/sub/work.py (two packages deep)."""
    sub = root / "pkg" / "sub"
    sub.mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (sub / "__init__.py").write_text("")
    (sub / "work.py").write_text(WORK)
    (root / "run.py").write_text(RUN)
    return root / "run.py"


def record_raw(dapprof: str, tmp_path: Path, python: str, *flags: str) -> dict[str, int]:
    """{stack: count} of the program's own stacks (those through run.py)."""
    out_file = tmp_path / f"out{len(list(tmp_path.iterdir()))}.txt"
    out = run([dapprof, "record", "--format", "raw", "--rate", "200", "-o", str(out_file), *flags,
               "--", python, str(tmp_path / "app" / "run.py"), "1.0"])
    assert out.returncode == 0, out.stderr
    stacks = {}
    for line in out_file.read_text(encoding="utf-8").splitlines():
        stack, count = line.rsplit(" ", 1)
        if "spin (" in stack:
            stacks[stack] = int(count)
    assert stacks, out_file.read_text(encoding="utf-8")
    return stacks


def leaves(stacks: dict[str, int]) -> set[str]:
    return {s.split(";")[-1] for s in stacks}


@pytest.fixture
def app(tmp_path):
    return make_app(tmp_path / "app")


@pytest.mark.parametrize("interp", pythons.each(sampler_only_too=True))
def test_naming_flags(dapprof, tmp_path, app, interp):
    # Default: paths from the top-level package, the line being run.
    default = record_raw(dapprof, tmp_path, interp.path)
    by_line: dict[int, int] = {}
    for stack, count in default.items():
        if m := re.fullmatch(r"spin \(pkg/sub/work\.py:(\d+)\)", stack.split(";")[-1]):
            by_line[int(m[1])] = by_line.get(int(m[1]), 0) + count
    # A sample may land on the line before the loop (line 5 runs once, for a few µs); the rest
    # must be the loop's.
    assert by_line and set(by_line) <= BODY_LINES, leaves(default)
    in_loop = sum(by_line.get(line, 0) for line in LOOP_LINES)
    assert in_loop >= 0.9 * sum(by_line.values()), by_line
    assert all(s.split(";")[0].startswith("<module> (run.py:") for s in default), default

    # --function: one entry, at the line the function starts.
    by_function = record_raw(dapprof, tmp_path, interp.path, "--function")
    assert leaves(by_function) == {f"spin (pkg/sub/work.py:{DEF_LINE})"}

    # --nolineno: no line at all.
    no_lines = record_raw(dapprof, tmp_path, interp.path, "--nolineno")
    assert leaves(no_lines) == {"spin (pkg/sub/work.py)"}
    assert all(":" not in frame for s in no_lines for frame in s.split(";")
               if "<frozen" not in frame), no_lines

    # --full-filenames: the path as the program has it.
    full = record_raw(dapprof, tmp_path, interp.path, "--full-filenames", "--function")
    assert leaves(full) == {f"spin ({app.parent / 'pkg' / 'sub' / 'work.py'}:{DEF_LINE})"}


def test_function_and_nolineno_exclude_each_other(dapprof):
    out = run([dapprof, "record", "--function", "--nolineno", "--", DEBIAN_PYTHON, str(FIXTURE)])
    assert out.returncode != 0 and "excludes" in out.stderr


def test_formats_for_tools_keep_full_paths(dapprof, tmp_path, app):
    """cpuprofile's url is what VS Code and DevTools open: full; speedscope's file: short."""
    for fmt, name in (("cpuprofile", "p.cpuprofile"), ("speedscope", "p.json")):
        out = run([dapprof, "record", "--format", fmt, "-o", str(tmp_path / name), "--",
                   DEBIAN_PYTHON, str(app), "0.5"])
        assert out.returncode == 0, out.stderr
    profile = json.loads((tmp_path / "p.cpuprofile").read_text())
    urls = {n["callFrame"]["url"] for n in profile["nodes"]}
    assert str(app.parent / "pkg" / "sub" / "work.py") in urls
    speedscope = json.loads((tmp_path / "p.json").read_text())
    files = {f.get("file") for f in speedscope["shared"]["frames"]}
    assert "pkg/sub/work.py" in files and "run.py" in files


def test_hideprogress(dapprof, tmp_path):
    cmd = [dapprof, "record", "--format", "raw", "-o", str(tmp_path / "p.txt"), "--",
           DEBIAN_PYTHON, str(FIXTURE), "--seconds", "1"]
    assert "s elapsed," in stderr_on_a_terminal(cmd)
    hidden = stderr_on_a_terminal(cmd[:2] + ["--hideprogress"] + cmd[2:])
    assert "s elapsed," not in hidden and "Wrote raw data" in hidden


def test_capture(dapprof, tmp_path, target):
    profile = tmp_path / "p.txt"
    cmd = [dapprof, "record", "--format", "raw", "-o", str(profile)]
    program = ["--", DEBIAN_PYTHON, str(FIXTURE), "--seconds", "0.5"]
    # Bare: beside the profile, named like it.
    out = run(cmd + ["--capture"] + program)
    assert out.returncode == 0, out.stderr
    assert "ready" not in out.stdout and "dapprof> Sampling process" in out.stdout
    assert (tmp_path / "p.log").read_text() == "ready\n"
    assert f"The program's output is in '{tmp_path / 'p.log'}'" in out.stderr
    # To a named file, stderr too.
    named = tmp_path / "program-output.txt"
    out = run(cmd + [f"--capture={named}", "--", DEBIAN_PYTHON, "-c",
                     "import sys; print('out'); print('err', file=sys.stderr)"])
    assert out.returncode == 0, out.stderr
    assert sorted(named.read_text().split()) == ["err", "out"]
    # Not for a running process; a file that cannot be written is refused before anything runs.
    out = run(cmd + ["--capture", "--pid", str(target.pid)])
    assert out.returncode == 2 and "--capture takes the output of a program dapprof starts" in out.stderr
    out = run(cmd + [f"--capture={tmp_path / 'missing' / 'x.log'}"] + program)
    assert out.returncode == 1 and "cannot write" in out.stderr
