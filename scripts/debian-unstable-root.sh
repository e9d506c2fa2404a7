#!/usr/bin/env bash
# Makes (once) a Debian unstable root holding CPython 3.13, 3.14, 3.15, debugpy 1.8 and Mercurial, outside
# the clone, for the tests that run per interpreter. Reuses it when it is complete; rebuilds it
# when it is missing or a previous build stopped half-way. Prints the root's path last.
#   scripts/debian-unstable-root.sh [--print-path] [DIR]   (default DIR: /var/cache/dapprof/sid-root)
set -euo pipefail

print_only=0
if [[ "${1:-}" == "--print-path" ]]; then print_only=1; shift; fi
root="${1:-${DAPPROF_SID_ROOT:-/var/cache/dapprof/sid-root}}"
# What the tests use: the interpreters, their headers (the native tests build a C extension for
# each), debugpy, and Mercurial (a real program that runs dapprof as its py-spy profiler). Bump the stamp when this list changes so old roots are refreshed.
packages=(python3.13 python3.14 python3.15 python3.13-dev python3.14-dev python3.15-dev
  python3-debugpy mercurial)
stamp="$root/.dapprof-root"
want="packages=${packages[*]}"

complete() {
  [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want" ]] || return 1
  local v
  for v in 3.13 3.14 3.15; do
    [[ -x "$root/usr/bin/python$v" ]] || return 1
    [[ -f "$root/usr/include/python$v/Python.h" ]] || return 1
  done
}

if complete; then
  echo "$root"
  exit 0
fi
if (( print_only )); then
  echo "no complete Debian unstable root at $root (make it with $0)" >&2
  exit 1
fi
if [[ $EUID -ne 0 ]]; then
  echo "making the Debian unstable root needs root (debootstrap); run as root once" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap >&2
fi

# shellcheck source=scripts/debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"
mirror=$(debian_mirror)

echo "making a Debian unstable root in $root from $mirror (a few minutes, ~400 MB)" >&2
rm -rf "$root.tmp"
mkdir -p "$(dirname "$root")"
include=$(IFS=,; echo "${packages[*]}")
debootstrap --variant=minbase --include="$include" sid "$root.tmp" "$mirror" >&2
echo "$want" >"$root.tmp/.dapprof-root"
rm -rf "$root"
mv "$root.tmp" "$root"
complete || { echo "the Debian unstable root at $root is incomplete" >&2; exit 1; }
echo "$root"
