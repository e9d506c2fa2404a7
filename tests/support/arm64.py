"""The arm64 side of the tests: the aarch64 dapprof (the release-arm64 preset) and the arm64
Debian root whose emulated programs it is tested against (scripts/arm64-root.sh)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
QEMU = shutil.which("qemu-aarch64-static")


def made_root() -> tuple[str | None, str]:
    """(the arm64 root that scripts/arm64-root.sh made, "") or (None, what the script said)."""
    out = subprocess.run([str(REPO / "scripts" / "arm64-root.sh"), "--print-path"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return out.stdout.strip().splitlines()[-1], ""


def root() -> tuple[str | None, str]:
    """(the arm64 root, "") or (None, why its programs cannot run here)."""
    if not QEMU:
        return None, "qemu-aarch64-static is not installed (scripts/install-deps.sh arm64)"
    where, why = made_root()
    if where is None:
        return None, why
    if os.geteuid() != 0:
        return None, "running the arm64 root's python needs root (chroot)"
    return where, ""


def binary_and_root() -> tuple[str | None, str | None, str]:
    """(the aarch64 dapprof that DAPPROF_ARM64_BIN names, the arm64 root, "") or Nones and why
    they cannot run."""
    binary = os.environ.get("DAPPROF_ARM64_BIN")
    if not binary or not os.access(binary, os.X_OK):
        return None, None, "DAPPROF_ARM64_BIN does not name an aarch64 dapprof (release-arm64)"
    where, why = root()
    return (binary if where else None), where, why


def command(binary: str, where: str, *args: str) -> list[str]:
    """The aarch64 dapprof with `args`, under qemu-user with the root's C library (Debian's
    libc6:arm64), as on an arm64 machine. Not the cross toolchain's (libc6-arm64-cross
    2.36-8cross1 in /usr/aarch64-linux-gnu): under qemu-user 7.2 a program's first
    pthread_create with that one never returns (see docs/PACKAGING.md)."""
    return [QEMU, "-L", where, binary, *args]
