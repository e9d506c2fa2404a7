"""`dapprof --version`: the version of CMakeLists.txt's project() and the commit built, which is
this checkout's HEAD (with "-dirty" when tracked files were changed) or "unknown" outside one."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_version_names_the_release_and_the_commit(dapprof):
    out = subprocess.run([dapprof, "--version"], capture_output=True, text=True, check=True)
    m = re.fullmatch(r"dapprof (\S+) \(commit (\S+)\)\n", out.stdout)
    assert m, out.stdout
    project = re.search(r"project\(dapprof VERSION (\S+)", (REPO / "CMakeLists.txt").read_text())
    assert m.group(1) == project.group(1)
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True)
    if head.returncode != 0:
        assert m.group(2) == "unknown"
        return
    assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?", m.group(2)), m.group(2)
    assert m.group(2).removesuffix("-dirty") == head.stdout.strip()


def stamp(tmp_path: Path, source: Path, *defines: str) -> str:
    """The commit cmake/Version.cmake writes for a tree at `source`."""
    out = tmp_path / "version.cpp"
    subprocess.run(["cmake", f"-DSOURCE_DIR={source}", f"-DINPUT={REPO / 'src/app/version.cpp.in'}",
                    f"-DOUTPUT={out}", "-DVERSION=9.8.7", *defines, "-P",
                    str(REPO / "cmake" / "Version.cmake")], check=True, capture_output=True)
    text = out.read_text()
    assert 'return "9.8.7";' in text
    return re.search(r'commit\(\) \{ return "([^"]*)"; \}', text).group(1)


def test_the_commit_comes_from_the_source_tree_s_own_git_checkout_only(tmp_path):
    tree = tmp_path / "src"
    (tree / "inner").mkdir(parents=True)
    assert stamp(tmp_path, tree) == "unknown", "not a git checkout (a source tarball)"
    assert stamp(tmp_path, tree, "-DCOMMIT=0123456789ab") == "0123456789ab", "told by the builder"
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tree / "f").write_text("1")
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert stamp(tmp_path, tree) == head
    (tree / "untracked").write_text("")
    assert stamp(tmp_path, tree) == head, "untracked files do not make it dirty"
    (tree / "f").write_text("2")
    assert stamp(tmp_path, tree) == head + "-dirty"
    # A tarball unpacked inside some other repository is not at that repository's commit.
    assert stamp(tmp_path, tree / "inner") == "unknown"
