#!/usr/bin/env bash
# Makes (once) a Debian 12 arm64 root holding CPython 3.11 and debugpy, outside the clone, for the
# tests of the aarch64 dapprof under emulation (qemu-user through binfmt_misc). Reuses it when it is
# complete; rebuilds it when it is missing or a previous build stopped half-way. Prints the root's
# path last.
#   scripts/arm64-root.sh [--print-path] [DIR]   (default DIR: /var/cache/dapprof/arm64-root)
set -euo pipefail

print_only=0
if [[ "${1:-}" == "--print-path" ]]; then print_only=1; shift; fi
root="${1:-${DAPPROF_ARM64_ROOT:-/var/cache/dapprof/arm64-root}}"
# What the tests use: the interpreter and debugpy. debugpy needs gdb, whose highlighter needs
# libboost-regex1.74.0-icu72, a name only libboost-regex1.74.0 provides: debootstrap does not
# resolve such names, so the provider is named too. Bump the stamp when this list changes so old
# roots are refreshed.
packages=(python3 python3-debugpy libboost-regex1.74.0)
stamp="$root/.dapprof-root"
want="packages=${packages[*]}"
# Added to a root made before they were needed, with the root's own apt-get, without remaking it
# (nor changing the stamp, which checkouts of before would take for an incomplete root): the
# headers tools/layouts/generate.py measures the aarch64 layouts of 3.11 with.
extras=(libpython3.11-dev)
have_extras() { [[ -f "$root/usr/include/python3.11/Python.h" ]]; }

add_extras() {
  have_extras && return 0
  echo "adding ${extras[*]} to the arm64 root at $root" >&2
  chroot "$root" apt-get update >&2
  DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y --no-install-recommends \
    "${extras[@]}" >&2
  chroot "$root" apt-get clean
}

complete() {
  [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want" ]] || return 1
  [[ -x "$root/usr/bin/python3.11" ]] || return 1
  [[ -d "$root/usr/lib/python3/dist-packages/debugpy" ]] || return 1
}

# Whether the kernel runs aarch64 programs through qemu-user (binfmt_misc), making that so when
# asked to: the second stage of debootstrap and the tests run the root's programs directly.
binfmt() {
  [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] && return 0
  (( $1 )) || return 1
  if [[ ! -e /proc/sys/fs/binfmt_misc/status ]]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  fi
  update-binfmts --enable qemu-aarch64 >&2
  [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]]
}

if complete; then
  if ! binfmt 0; then
    echo "the arm64 root at $root is there, but aarch64 programs do not run here: as root, run $0 once" >&2
    exit 1
  fi
  if (( ! print_only )) && [[ $EUID -eq 0 ]]; then
    add_extras
  fi
  echo "$root"
  exit 0
fi
if (( print_only )); then
  echo "no complete arm64 root at $root (make it with $0)" >&2
  exit 1
fi
if [[ $EUID -ne 0 ]]; then
  echo "making the arm64 root needs root (debootstrap, binfmt_misc); run as root once" >&2
  exit 1
fi
for tool in debootstrap qemu-aarch64-static update-binfmts; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool is missing: run scripts/install-deps.sh arm64" >&2
    exit 1
  fi
done
binfmt 1 || { echo "cannot register qemu-aarch64 with binfmt_misc" >&2; exit 1; }

# shellcheck source=scripts/debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"
mirror=$(debian_mirror)

echo "making a Debian 12 arm64 root in $root from $mirror (a few minutes under emulation, ~250 MB)" >&2
rm -rf "$root.tmp"
mkdir -p "$(dirname "$root")"
include=$(IFS=,; echo "${packages[*]} ${extras[*]}" | tr ' ' ,)
# The first stage only unpacks; the second runs the root's own (aarch64) maintainer scripts, in a
# chroot, through qemu-user.
debootstrap --arch=arm64 --foreign --variant=minbase --include="$include" bookworm "$root.tmp" \
  "$mirror" >&2
chroot "$root.tmp" /debootstrap/debootstrap --second-stage >&2
echo "$want" >"$root.tmp/.dapprof-root"
rm -rf "$root"
mv "$root.tmp" "$root"
complete || { echo "the arm64 root at $root is incomplete" >&2; exit 1; }
echo "$root"
