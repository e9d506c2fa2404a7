#!/usr/bin/env bash
# Runs COMMAND inside a throwaway writable view of the directory tree LOWER, as root: an overlay
# whose writes go to a tmpfs, in a mount namespace of its own, so they vanish when COMMAND ends.
# The package tests install the .deb this way into "a machine" (the host's own root, a Debian 12,
# or the Debian unstable root) without changing it. /proc, /dev and /sys are the host's; each
# --copy FILE is copied into the view's /tmp first. Several commands, separated by an argument
# ';;', run one after the other in the same view until one fails (its status is the script's),
# in a clean environment; each one's output (stdout and stderr) follows a line "### COMMAND"
# (after an empty line, in case the output before did not end its last line).
#
#   tests/package/in_overlay.sh LOWER [--copy FILE]... -- COMMAND [ARG]... [';;' COMMAND...]...
set -euo pipefail

if [[ "${1:-}" != --inside ]]; then
  [[ $EUID -eq 0 ]] || { echo "$0: needs root (mount namespaces)" >&2; exit 1; }
  scratch=$(mktemp -d)
  rc=0
  unshare --mount --propagation private "$0" --inside "$scratch" "$@" || rc=$?
  # The mounts ended with the namespace; what is left is the empty mount point.
  rmdir "$scratch"
  exit "$rc"
fi

scratch=$2 lower=$3
shift 3
copies=()
while (($#)) && [[ "$1" != -- ]]; do
  [[ "$1" == --copy ]] || { echo "$0: expected --copy or --, not $1" >&2; exit 2; }
  copies+=("$2")
  shift 2
done
shift  # --
mount -t tmpfs tmpfs "$scratch"
mkdir "$scratch/upper" "$scratch/work" "$scratch/root"
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$scratch/upper,workdir=$scratch/work" "$scratch/root"
for d in proc dev sys; do
  mount --rbind "/$d" "$scratch/root/$d"
done
# A tmpfs /tmp: the lower's own /tmp (the host's, for LOWER=/) is not the view's business.
mount -t tmpfs tmpfs "$scratch/root/tmp"
for f in "${copies[@]}"; do
  cp -- "$f" "$scratch/root/tmp/"
done
run() {
  printf '\n### %s\n' "$*"
  chroot "$scratch/root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 "$@" 2>&1
}
command=()
for arg in "$@" ';;'; do
  if [[ "$arg" == ';;' ]]; then
    ((${#command[@]})) && run "${command[@]}"
    command=()
  else
    command+=("$arg")
  fi
done
