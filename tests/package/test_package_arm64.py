"""The linux-arm64 release's packages (the release-arm64 preset, cross-compiled), tested on this
x86-64 machine under emulation (qemu-user through binfmt_misc; `ctest --preset release-arm64` runs
CPack first, then this):

- the binary is an aarch64 ELF that links only glibc dynamically, and no newer glibc than Debian
  12's; the .deb and the .vsix hold the same stripped copy of it;
- the .vsix is a linux-arm64 package: its manifest's TargetPlatform, the binary as
  extension/bin/linux-arm64/dapprof (where the extension looks on arm64), mode 755, its notices;
- the .deb says Architecture: arm64, holds the files the x86-64 one holds (its .vsix named for
  linux-arm64), and installs with the arm64 root's own dpkg, in a throwaway overlay of the Debian 12
  arm64 root (scripts/arm64-root.sh): dapprof --version and `dump --nonblocking` of the root's
  python3 run from PATH, then dpkg -r leaves nothing;
- lintian reports nothing but the overrides the x86-64 package needs as well.

What emulation does not give: ptrace of another process and process_vm_readv (qemu-user implements
neither), so `record`'s default, blocking mode and --native are not run here (test_arm64.py says
more), nor is the .vsix installed in an arm64 VS Code.

Environment (ctest sets it): DAPPROF_ARM64_BIN (the build's aarch64 dapprof), DAPPROF_DEB_DIR
(CPack's output directory), DAPPROF_PLATFORM_VSIX. Skipped without DAPPROF_ARM64_BIN, so that the
x86-64 release's run of this directory passes over it.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from test_package import (DEBIAN_12_GLIBC, REPO, VERSION_LINE, deb_fields, needed, overlay,
                          overrides, project_version, run, sha256, version_needs)

import arm64  # noqa: E402 (tests/support, put on the path by test_package)

PLATFORM = "linux-arm64"
VSIX_BINARY = f"extension/bin/{PLATFORM}/dapprof"
GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "ld-linux-aarch64.so.1", "libpthread.so.0",
                   "libdl.so.2", "librt.so.1"}
QEMU = arm64.QEMU
SYSROOT = "/usr/aarch64-linux-gnu"  # the cross toolchain's arm64 C library

pytestmark = pytest.mark.skipif(not os.environ.get("DAPPROF_ARM64_BIN"),
                                reason="not the arm64 release (DAPPROF_ARM64_BIN is not set)")


@pytest.fixture(scope="session")
def release_bin() -> Path:
    return Path(os.environ["DAPPROF_ARM64_BIN"])


@pytest.fixture(scope="session")
def deb() -> Path:
    found = sorted(Path(os.environ["DAPPROF_DEB_DIR"]).glob("dapprof_*_arm64.deb"))
    assert len(found) == 1, f"one arm64 .deb in {os.environ['DAPPROF_DEB_DIR']}: {found}"
    return found[0]


@pytest.fixture(scope="session")
def vsix() -> Path:
    path = Path(os.environ.get("DAPPROF_PLATFORM_VSIX", ""))
    assert path.is_file(), f"DAPPROF_PLATFORM_VSIX names no file: {path}"
    assert path.name == f"dapprof-{PLATFORM}-{project_version()}.vsix", path.name
    return path


@pytest.fixture(scope="session")
def deb_tree(deb, tmp_path_factory) -> Path:
    tree = tmp_path_factory.mktemp("deb")
    run("dpkg-deb", "-x", deb, tree)
    return tree


@pytest.fixture(scope="session")
def vsix_binary(vsix, tmp_path_factory) -> Path:
    tree = tmp_path_factory.mktemp("vsix")
    with zipfile.ZipFile(vsix) as z:
        z.extract(VSIX_BINARY, tree)
    return tree / VSIX_BINARY


def arm64_root() -> str:
    where, why = arm64.made_root()
    if where is None:
        pytest.skip(why)
    return where


@pytest.mark.parametrize("where", ["build", "deb", "vsix"])
def test_an_aarch64_binary_linking_only_glibc(where, release_bin, deb_tree, vsix_binary):
    binary = {"build": release_bin, "deb": deb_tree / "usr/bin/dapprof", "vsix": vsix_binary}[where]
    header = run("readelf", "--file-header", binary).stdout
    assert re.search(r"Machine:\s+AArch64", header), header
    assert "ARM aarch64" in run("file", "-b", binary).stdout
    libs = needed(binary)
    assert "libc.so.6" in libs and set(libs) <= GLIBC_LIBRARIES, libs
    versions = version_needs(binary)
    glibc = [tuple(int(x) for x in v[len("GLIBC_"):].split(".")) for v in versions
             if v.startswith("GLIBC_") and v[len("GLIBC_")].isdigit()]
    assert glibc and max(glibc) <= DEBIAN_12_GLIBC, f"needs glibc {max(glibc)}: {sorted(versions)}"
    assert not [v for v in versions if v.startswith(("GLIBCXX_", "CXXABI_", "GCC_"))], versions


def test_the_packaged_binaries_are_one_stripped_binary(deb_tree, vsix_binary):
    in_deb = deb_tree / "usr" / "bin" / "dapprof"
    assert sha256(in_deb) == sha256(vsix_binary), "the .deb and the .vsix hold the same dapprof"
    sections = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)",
                          run("readelf", "--sections", "--wide", in_deb).stdout, re.M)
    assert not {".symtab", ".debug_info", ".comment"} & set(sections), sections


def test_version_under_emulation(release_bin):
    if not QEMU:
        pytest.skip("qemu-aarch64-static is not installed (scripts/install-deps.sh arm64)")
    line = run(QEMU, "-L", SYSROOT, release_bin, "--version").stdout.strip()
    m = VERSION_LINE.fullmatch(line)
    assert m and m.group(1) == project_version(), line


def test_vsix_is_for_linux_arm64(vsix):
    with zipfile.ZipFile(vsix) as z:
        info = z.getinfo(VSIX_BINARY)
        manifest = z.read("extension.vsixmanifest").decode()
        names = set(z.namelist())
    assert stat.S_IMODE(info.external_attr >> 16) == 0o755
    assert re.search(r'<Identity [^>]*TargetPlatform="linux-arm64"', manifest), manifest
    assert f'Version="{project_version()}"' in manifest
    assert "extension/ThirdPartyNotices.txt" in names
    assert not [n for n in names if n.startswith("extension/bin/") and n != VSIX_BINARY], names


def test_deb_fields_and_files(deb, deb_tree, vsix):
    fields = deb_fields(deb)
    assert fields["Package"] == "dapprof"
    assert fields["Version"] == project_version()
    assert fields["Architecture"] == "arm64"
    # From dpkg-shlibdeps, which read the symbols of libc6:arm64.
    assert re.fullmatch(r"libc6 \(>= 2\.\d+\)", fields["Depends"]), fields["Depends"]
    assert "python3-debugpy" in fields["Recommends"]
    files = {}
    for line in run("dpkg-deb", "--contents", deb).stdout.splitlines():
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
        f"/usr/share/dapprof/dapprof-{PLATFORM}.vsix": "-rw-r--r--",
        "/usr/share/lintian/overrides/dapprof": "-rw-r--r--",
    }
    for name, perms in expected.items():
        assert files.get(name) == (perms, "root/root"), (name, files.get(name))
    regular = sorted(n for n, (p, _) in files.items() if not p.startswith("d"))
    assert regular == sorted(expected), "nothing else"
    assert sha256(deb_tree / f"usr/share/dapprof/dapprof-{PLATFORM}.vsix") == sha256(vsix)
    # The man page was made by running the aarch64 binary (emulated): every subcommand is in it.
    page = subprocess.run(["zcat", deb_tree / "usr/share/man/man1/dapprof.1.gz"],
                          capture_output=True, text=True, check=True).stdout
    for name in ("stdio", "serve", "record", "dump"):
        assert f'.SS "dapprof {name}"' in page, name


def test_deb_installs_runs_and_removes_in_the_arm64_root(deb):
    """dpkg -i with the arm64 root's own (emulated) dpkg, in a throwaway overlay of the root:
    dapprof from PATH, a dump of the root's python3 spinning in busy.py, then dpkg -r."""
    if os.geteuid() != 0:
        pytest.skip("installing in an overlay needs root (mount namespaces)")
    root = arm64_root()
    # busy.py under QEMU_GUEST_BASE=0, so that its pointers are the addresses /proc/PID/maps shows
    # (see test_arm64.py); the dump retried until the main thread is caught in its leaf.
    dump = ("env QEMU_GUEST_BASE=0 python3 /tmp/busy.py --seconds 120 >/tmp/busy.out & pid=$!; "
            "for i in $(seq 100); do grep -q ready /tmp/busy.out && break; sleep 0.5; done; "
            "for i in $(seq 10); do dapprof dump --pid $pid --nonblocking >/tmp/dump.txt 2>&1; "
            "grep -q leaf_spin /tmp/dump.txt && break; done; kill $pid; cat /tmp/dump.txt")
    commands = [
        ["dpkg", "-i", f"/tmp/{deb.name}"],
        ["dpkg", "-s", "dapprof"],
        ["dapprof", "--version"],
        ["test", "-s", "/usr/share/man/man1/dapprof.1.gz"],
        ["test", "-s", f"/usr/share/dapprof/dapprof-{PLATFORM}.vsix"],
        ["sh", "-c", dump],
        ["dpkg", "-r", "dapprof"],
        ["test", "!", "-e", "/usr/bin/dapprof"],
        ["test", "!", "-e", "/usr/share/dapprof"],
    ]
    steps = overlay(root, deb, *commands)
    assert len(steps) == len(commands), steps
    out = dict(steps)
    status = dict(re.findall(r"^(\S+): (.*)$", out["dpkg -s dapprof"], re.M))
    assert (status["Status"], status["Version"], status["Architecture"]) == (
        "install ok installed", project_version(), "arm64"), status
    assert VERSION_LINE.fullmatch(out["dapprof --version"].strip()), out["dapprof --version"]
    dumped = out[f"sh -c {dump}"]
    assert "leaf_spin" in dumped and "mittel_schicht_ü" in dumped, dumped


def test_lintian_reports_nothing_but_the_explained_overrides(deb):
    if not shutil.which("lintian"):
        pytest.fail("lintian is not installed (scripts/install-deps.sh installs it)")
    out = run("lintian", "--display-info", "--pedantic", "--fail-on", "none", deb).stdout
    tags = [line for line in out.splitlines() if re.match(r"^[EWIPXC]: ", line)]
    assert tags == [], "lintian:\n" + out
    explained = (REPO / "docs" / "PACKAGING.md").read_text()
    for tag in overrides():
        assert f"`{tag}`" in explained, f"docs/PACKAGING.md does not explain the override {tag}"
