"""Mercurial, unmodified, profiling itself with the release's dapprof as its py-spy executable.

Mercurial's py-spy backend (`--config profiling.type=py-spy`) runs
`EXE record --pid <hg> --native --rate N --output /dev/fd/K --format F`, waits for one line of
its standard output, runs the command, then stops it with SIGINT. Here Debian unstable's
Mercurial runs in that root as in a container (in_root), on the root's stripped CPython, and the
binary it runs is the release's (the one build that runs in a root without dapprof's libraries).

Environment (ctest sets it): DAPPROF_BIN, the release build's dapprof.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from test_package import pythons, run, sid_root

FILES = 400


@pytest.fixture
def release_bin() -> Path:
    path = os.environ.get("DAPPROF_BIN")
    if not path:
        pytest.skip("DAPPROF_BIN names the release build's dapprof (ctest --preset release)")
    return Path(path)


def test_mercurial_profiles_a_real_command_with_dapprof(release_bin, tmp_path):
    root = sid_root()
    hg = Path(root) / "usr/bin/hg"
    assert hg.exists(), f"{root} has no Mercurial: rerun scripts/debian-unstable-root.sh"
    launcher = pythons.launcher()
    # Under the system's /tmp, which in_root shows inside at the same path.
    exe = tmp_path / "dapprof"
    shutil.copy(release_bin, exe)
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(FILES):
        folder = repo / f"d{i % 20}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i}.txt").write_text("".join(f"{n}\n" for n in range(i + 1)))
    hg_in_root = [launcher, root, "/usr/bin/hg", "--cwd", repo]
    run(*hg_in_root, "init")
    run(*hg_in_root, "--config", "ui.username=test", "commit", "-qAm", "files")

    profile = tmp_path / "profile.txt"
    out = run(*hg_in_root,
              "--config", "profiling.type=py-spy", "--config", f"profiling.py-spy.exe={exe}",
              "--config", "profiling.py-spy.format=raw", "--config", f"profiling.output={profile}",
              "--profile", "diff", "-r", "null", "--stat", timeout=120)
    # The command itself ran as without a profiler.
    assert f"{FILES} files changed" in out.stdout, out.stdout[-2000:]

    # Collapsed stacks, outermost first, each line ending in its count.
    stacks = []
    for line in profile.read_text().splitlines():
        m = re.fullmatch(r"(.+) (\d+)", line)
        assert m, f"not a collapsed stack: {line!r}"
        stacks.append((m.group(1).split(";"), int(m.group(2))))
    total = sum(count for _, count in stacks)
    assert total >= 5, f"only {total} samples of a command that runs for a good part of a second"
    # Mercurial starts profiling inside dispatch(), so every sample is under it.
    dispatch = re.compile(r"dispatch \(mercurial/dispatch\.py:\d+\)")
    under = sum(count for frames, count in stacks if any(dispatch.fullmatch(f) for f in frames))
    assert under == total, profile.read_text()[:3000]
    # --native, which Mercurial asks for, gives C frames below the Python ones.
    natives = [f for frames, _ in stacks for f in frames if not re.search(r"\(.+:\d+\)$", f)]
    assert natives, profile.read_text()[:3000]
