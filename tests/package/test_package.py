"""The release's packages, as a user gets them: the static dapprof, the .deb and the platform .vsix
made by the release preset (ctest --preset release runs CPack first).

- the binary links only glibc dynamically, and no newer glibc than the build machine's (Debian
  12's 2.36), in the build tree, the .deb and the .vsix alike (they are one stripped binary);
- --version names the version of CMakeLists.txt and the commit;
- the .vsix is a linux-x64 package holding that binary, executable, and its notices; unpacked, the
  binary runs in the Debian unstable root (which has none of dapprof's build dependencies) as in
  a container, and records that root's CPython;
- the .deb installs with dpkg -i, in a throwaway overlay, into this Debian 12 machine and into the
  Debian unstable root: dapprof --version, its man page, a recording, then dpkg -r;
- lintian reports nothing but the tags packaging/lintian-overrides overrides, each of which
  docs/PACKAGING.md explains.

Environment (ctest sets it): DAPPROF_BIN (the release build's dapprof), DAPPROF_DEB_DIR (CPack's
output directory), DAPPROF_PLATFORM_VSIX.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))
import binaries  # noqa: E402
import pythons  # noqa: E402

IN_OVERLAY = HERE / "in_overlay.sh"
BUSY = REPO / "tests" / "app" / "cli" / "fixtures" / "busy.py"
# What a binary that links everything else statically may still need: glibc's own libraries.
GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2", "libpthread.so.0",
                   "libdl.so.2", "librt.so.1"}
DEBIAN_12_GLIBC = (2, 36)
VSIX_BINARY = "extension/bin/linux-x64/dapprof"
VERSION_LINE = re.compile(r"dapprof (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12}(?:-dirty)?|unknown)\)")


def project_version() -> str:
    m = re.search(r"project\(dapprof VERSION (\S+)", (REPO / "CMakeLists.txt").read_text())
    assert m, "CMakeLists.txt names the version in project()"
    return m.group(1)


def run(*argv, check=True, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kw)
    if check and out.returncode != 0:
        pytest.fail(f"{' '.join(map(str, argv))} exited with {out.returncode}:\n"
                    f"{out.stdout}\n{out.stderr}")
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def release_bin() -> Path:
    return Path(binaries.dapprof_bin())


@pytest.fixture(scope="session")
def deb() -> Path:
    found = sorted(Path(os.environ["DAPPROF_DEB_DIR"]).glob("dapprof_*_amd64.deb"))
    assert len(found) == 1, f"one .deb in {os.environ['DAPPROF_DEB_DIR']}: {found}"
    return found[0]


@pytest.fixture(scope="session")
def vsix() -> Path:
    path = Path(os.environ.get("DAPPROF_PLATFORM_VSIX", ""))
    assert path.is_file(), f"DAPPROF_PLATFORM_VSIX names no file: {path}"
    return path


@pytest.fixture(scope="session")
def deb_tree(deb, tmp_path_factory) -> Path:
    """The .deb's files, unpacked."""
    tree = tmp_path_factory.mktemp("deb")
    run("dpkg-deb", "-x", deb, tree)
    return tree


def unpack_vsix(vsix: Path, dest: Path) -> Path:
    """Unpacks the .vsix as VS Code does, with the modes its entries carry; returns the binary."""
    with zipfile.ZipFile(vsix) as z:
        for info in z.infolist():
            target = dest / info.filename
            z.extract(info, dest)
            mode = info.external_attr >> 16
            if mode and not info.is_dir():
                target.chmod(stat.S_IMODE(mode))
    return dest / VSIX_BINARY


@pytest.fixture(scope="session")
def vsix_tree(vsix, tmp_path_factory) -> Path:
    tree = tmp_path_factory.mktemp("vsix")
    unpack_vsix(vsix, tree)
    return tree


def needed(binary: Path) -> list[str]:
    out = run("readelf", "--dynamic", "--wide", binary).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def version_needs(binary: Path) -> set[str]:
    """The symbol versions the binary requires of its libraries (GLIBC_2.34, GLIBCXX_3.4.30...)."""
    out = run("readelf", "--version-info", "--wide", binary).stdout
    needs = out.split("Version needs section", 1)
    return set(re.findall(r"Name: (\S+)\s+Flags", needs[1])) if len(needs) == 2 else set()


def test_the_packaged_binaries_are_one_stripped_binary(release_bin, deb_tree, vsix_tree):
    in_deb = deb_tree / "usr" / "bin" / "dapprof"
    in_vsix = vsix_tree / VSIX_BINARY
    assert sha256(in_deb) == sha256(in_vsix), "the .deb and the .vsix hold the same dapprof"
    assert "not stripped" not in run("file", "-b", in_deb).stdout
    # As dh_strip leaves a program: no symbol table, debug information or .comment.
    sections = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", run("readelf", "--sections", "--wide", in_deb).stdout, re.M)
    assert not {".symtab", ".debug_info", ".comment"} & set(sections), sections


@pytest.mark.parametrize("where", ["build", "deb", "vsix"])
def test_only_glibc_is_linked_dynamically(where, release_bin, deb_tree, vsix_tree):
    binary = {"build": release_bin, "deb": deb_tree / "usr/bin/dapprof",
              "vsix": vsix_tree / VSIX_BINARY}[where]
    libs = needed(binary)
    assert "libc.so.6" in libs, f"dynamically linked against glibc: {libs}"
    assert set(libs) <= GLIBC_LIBRARIES, f"NEEDED beyond glibc: {sorted(set(libs) - GLIBC_LIBRARIES)}"
    versions = version_needs(binary)
    glibc = [tuple(int(x) for x in v[len("GLIBC_"):].split(".")) for v in versions
             if v.startswith("GLIBC_") and v[len("GLIBC_")].isdigit()]
    assert glibc and max(glibc) <= DEBIAN_12_GLIBC, f"needs glibc {max(glibc)}: {sorted(versions)}"
    # libstdc++'s and libgcc's symbol versions would mean they are linked dynamically after all.
    assert not [v for v in versions if v.startswith(("GLIBCXX_", "CXXABI_", "GCC_"))], versions


def test_version_names_the_release_and_the_commit(release_bin):
    line = run(release_bin, "--version").stdout.strip()
    m = VERSION_LINE.fullmatch(line)
    assert m, line
    assert m.group(1) == project_version()
    head = run("git", "-C", REPO, "rev-parse", "--short=12", "HEAD", check=False)
    if head.returncode == 0:
        assert m.group(2).removesuffix("-dirty") == head.stdout.strip(), line


def test_every_version_agrees():
    version = project_version()
    package = json.loads((REPO / "vscode-client" / "package.json").read_text())
    assert package["version"] == version, "vscode-client/package.json"
    changelog = (REPO / "packaging" / "changelog").read_text().splitlines()[0]
    assert changelog.startswith(f"dapprof ({version}) "), f"packaging/changelog: {changelog}"


def test_vsix_is_for_linux_x64_and_holds_the_executable_and_its_notices(vsix, vsix_tree):
    with zipfile.ZipFile(vsix) as z:
        info = z.getinfo(VSIX_BINARY)
        assert stat.S_IMODE(info.external_attr >> 16) == 0o755
        manifest = z.read("extension.vsixmanifest").decode()
        names = set(z.namelist())
    assert re.search(r'<Identity [^>]*TargetPlatform="linux-x64"', manifest), manifest
    assert f'Version="{project_version()}"' in manifest
    assert "extension/ThirdPartyNotices.txt" in names
    notices = (vsix_tree / "extension" / "ThirdPartyNotices.txt").read_text()
    assert notices == (REPO / "packaging" / "copyright").read_text()
    for name in ("extension/package.json", "extension/dist/extension.js", "extension/dist/webview.js"):
        assert name in names
    assert not [n for n in names if re.search(r"node_modules|\.ts$|\.map$|/src/", n)]


def sid_root() -> str:
    root, reason = pythons._sid_root()
    if not root:
        pytest.skip(reason)
    return root


def test_vsix_binary_runs_and_records_in_the_debian_unstable_root(vsix, tmp_path):
    """The binary from the unpacked .vsix, run inside the Debian unstable root as in a container
    (in_root: its own mount namespace after pivot_root), where none of the libraries dapprof is
    built with are installed: --version, then a recording of that root's CPython 3.13."""
    root = sid_root()
    for lib in ("libfmt.so", "libspdlog.so", "libunwind.so.8", "libunwind-ptrace.so.0"):
        assert not list(Path(root).glob(f"usr/lib/x86_64-linux-gnu/{lib}*")), f"{root} has {lib}"
    work = tmp_path / "vsix"  # under the system's /tmp, which in_root shows inside
    binary = unpack_vsix(vsix, work)
    launcher = pythons.launcher()
    version = run(launcher, root, binary, "--version").stdout.strip()
    assert VERSION_LINE.fullmatch(version), version
    shutil.copy(BUSY, tmp_path / "busy.py")
    out = tmp_path / "busy.txt"
    run(launcher, root, binary, "record", "--duration", "2", "--format", "raw", "--output", out,
        "--", "/usr/bin/python3.13", tmp_path / "busy.py", "--seconds", "10", timeout=60)
    text = out.read_text()
    assert "leaf_spin" in text and "mittel_schicht_ü" in text, text[:2000]


def deb_fields(deb: Path) -> dict:
    out = run("dpkg-deb", "--field", deb).stdout
    return dict(re.findall(r"^(\S+): (.*)$", out, re.M))


def test_deb_fields_and_files(deb):
    fields = deb_fields(deb)
    assert fields["Package"] == "dapprof"
    assert fields["Version"] == project_version()
    assert fields["Architecture"] == "amd64"
    assert re.fullmatch(r"libc6 \(>= 2\.\d+\)", fields["Depends"]), fields["Depends"]
    assert "python3-debugpy" in fields["Recommends"]
    assert fields["Suggests"] == "libdebuginfod1"  # names stripped frames from debuginfod servers
    assert fields["Section"] == "devel"
    listing = run("dpkg-deb", "--contents", deb).stdout.splitlines()
    files = {}
    for line in listing:
        perms, owner, _size, _date, _time, name = line.split(None, 5)
        files[name.removeprefix(".")] = (perms, owner)
    expected = {
        "/usr/bin/dapprof": "-rwxr-xr-x",
        "/usr/share/man/man1/dapprof.1.gz": "-rw-r--r--",
        "/usr/share/doc/dapprof/copyright": "-rw-r--r--",
        "/usr/share/doc/dapprof/changelog.gz": "-rw-r--r--",
        "/usr/share/doc/dapprof/README.md": "-rw-r--r--",
        "/usr/share/doc/dapprof/PROFILING.md": "-rw-r--r--",
        "/usr/share/doc/dapprof/SECURITY.md": "-rw-r--r--",
        "/usr/share/dapprof/dapprof-linux-x64.vsix": "-rw-r--r--",
        "/usr/share/lintian/overrides/dapprof": "-rw-r--r--",
    }
    for name, perms in expected.items():
        assert name in files, f"{name} not in the .deb"
        assert files[name] == (perms, "root/root"), (name, files[name])
    regular = sorted(n for n, (p, _) in files.items() if not p.startswith("d"))
    assert regular == sorted(expected), "nothing else"


def test_deb_holds_the_platform_vsix(deb_tree, vsix):
    assert sha256(deb_tree / "usr/share/dapprof/dapprof-linux-x64.vsix") == sha256(vsix)


def test_man_page_has_every_subcommand(deb_tree, release_bin):
    page = subprocess.run(["zcat", deb_tree / "usr/share/man/man1/dapprof.1.gz"],
                          capture_output=True, text=True, check=True).stdout
    assert page.startswith(".\\\" DO NOT MODIFY THIS FILE!  It was generated by help2man")
    assert re.search(r"^\.SH NAME\ndapprof \\- live profiler", page, re.M)
    top = run(release_bin, "--help").stdout
    commands = re.findall(r"^  (\S+)", top.split("Subcommands:", 1)[1], re.M)
    assert {"stdio", "serve", "record", "dump"} <= set(commands)
    for name in commands:
        assert f'.SS "dapprof {name}"' in page, name
    assert "\\fB\\-p\\fR,\\-\\-pid" in page or "\\-\\-pid" in page


def overlay(lower: str, deb: Path, *commands: list) -> list[tuple[str, str]]:
    """Runs `commands` one after the other in a throwaway overlay of `lower` holding the .deb and
    busy.py in /tmp; returns each one's (command line, output)."""
    argv = [IN_OVERLAY, lower, "--copy", deb, "--copy", BUSY, "--"]
    for i, c in enumerate(commands):
        argv += ([";;"] if i else []) + list(c)
    out = run(*argv, timeout=300)
    parts = re.split(r"^### (.*)\n", out.stdout, flags=re.M)[1:]
    return list(zip(parts[0::2], parts[1::2]))


@pytest.mark.parametrize("machine", ["debian-12", "debian-unstable"])
def test_deb_installs_runs_and_removes(machine, deb):
    """dpkg -i of the .deb on this machine (Debian 12) and on the Debian unstable root, each seen
    through a throwaway overlay: the binary on PATH, its man page (man finds it where man-db is
    installed), a recording of the machine's own python3, then dpkg -r, which leaves no file."""
    if os.geteuid() != 0:
        pytest.skip("installing in an overlay needs root (mount namespaces)")
    lower = "/" if machine == "debian-12" else sid_root()
    has_man = Path(lower, "usr/bin/man").exists()
    commands = [
        ["dpkg", "-i", f"/tmp/{deb.name}"],
        ["dpkg", "-s", "dapprof"],
        ["dapprof", "--version"],
        ["test", "-s", "/usr/share/man/man1/dapprof.1.gz"],
        *([["man", "-w", "dapprof"]] if has_man else []),
        ["test", "-s", "/usr/share/dapprof/dapprof-linux-x64.vsix"],
        ["dapprof", "record", "--duration", "2", "--format", "raw", "--output", "/tmp/busy.txt",
         "--", "/usr/bin/python3", "/tmp/busy.py", "--seconds", "10"],
        ["grep", "-c", "leaf_spin", "/tmp/busy.txt"],
        ["dpkg", "-r", "dapprof"],
        ["test", "!", "-e", "/usr/bin/dapprof"],
        ["test", "!", "-e", "/usr/share/dapprof"],
    ]
    steps = overlay(lower, deb, *commands)
    assert len(steps) == len(commands), steps
    out = dict(steps)
    status = dict(re.findall(r"^(\S+): (.*)$", out["dpkg -s dapprof"], re.M))
    assert (status["Status"], status["Version"]) == ("install ok installed", project_version())
    assert VERSION_LINE.fullmatch(out["dapprof --version"].strip())
    if has_man:
        assert out["man -w dapprof"].strip() == "/usr/share/man/man1/dapprof.1.gz"
    assert int(out["grep -c leaf_spin /tmp/busy.txt"]) > 0


def overrides() -> list[str]:
    """The tags packaging/lintian-overrides overrides (its lines are `[dapprof [ARCH]: ]TAG
    [CONTEXT]`, ARCH for an override of one architecture's package only)."""
    lines = (REPO / "packaging" / "lintian-overrides").read_text().splitlines()
    return [re.sub(r"^[\w.+-]*\s*(\[[^\]]*\])?\s*:\s*", "", line).split()[0]
            for line in lines if line.strip() and not line.startswith("#")]


def test_lintian_reports_nothing_but_the_explained_overrides(deb):
    if not shutil.which("lintian"):
        pytest.fail("lintian is not installed (scripts/install-deps.sh installs it)")
    out = run("lintian", "--display-info", "--pedantic", "--fail-on", "none", deb).stdout
    tags = [line for line in out.splitlines() if re.match(r"^[EWIPXC]: ", line)]
    assert tags == [], "lintian:\n" + out
    explained = (REPO / "docs" / "PACKAGING.md").read_text()
    for tag in overrides():
        assert f"`{tag}`" in explained, f"docs/PACKAGING.md does not explain the override {tag}"
    # Every override still applies: lintian would otherwise say "unused-override", caught above.
