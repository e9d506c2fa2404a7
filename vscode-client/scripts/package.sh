#!/usr/bin/env bash
# Packages the extension as a .vsix, staged in a directory of its own so that the source tree is
# not touched. With --binary, a platform .vsix (vsce --target PLATFORM: linux-x64, the default, or
# linux-arm64) with that dapprof inside as bin/PLATFORM/dapprof, which the extension runs unless
# dapprof.path names another, and the
# notices of the code linked into it (--notices) as ThirdPartyNotices.txt. Without, the universal
# .vsix, which runs the dapprof of dapprof.path or PATH. The release build runs this
# (cmake/Packaging.cmake); `npm run package` makes the universal one in build/dapprof.vsix.
#
#   vscode-client/scripts/package.sh [--binary DAPPROF [--target PLATFORM] --notices FILE]
#                                    --output OUT.vsix
#
# Needs node 20 or newer; runs `npm ci` when node_modules is missing or older than the lock file.
set -euo pipefail
client=$(cd "$(dirname "$0")/.." && pwd)

binary="" notices="" output="" platform=linux-x64
while (($#)); do
  case "$1" in
    --binary) binary=$(realpath -e -- "$2"); shift 2 ;;
    --notices) notices=$(realpath -e -- "$2"); shift 2 ;;
    --target) platform="$2"; shift 2 ;;
    --output) output=$(realpath -m -- "$2"); shift 2 ;;
    *) echo "usage: $0 [--binary DAPPROF [--target PLATFORM] --notices FILE] --output OUT.vsix" >&2
       exit 2 ;;
  esac
done
[[ -n "$output" ]] || { echo "$0: --output is required" >&2; exit 2; }
[[ -z "$binary" || -n "$notices" ]] || { echo "$0: --binary needs --notices" >&2; exit 2; }
# The platforms the extension looks for a binary of (bin/<platform>-<arch>/, Node's names).
case "$platform" in
  linux-x64 | linux-arm64) ;;
  *) echo "$0: --target $platform: not a platform dapprof is built for (linux-x64, linux-arm64)" >&2
     exit 2 ;;
esac

cd "$client"
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

stage="$output.stage"
rm -rf "$stage"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"
node scripts/build.mjs --production --dist "$stage/dist"
cp package.json README.md .vscodeignore "$stage/"
cp -r media "$stage/media"
target=()
if [[ -n "$binary" ]]; then
  install -D -m 755 "$binary" "$stage/bin/$platform/dapprof"
  install -m 644 "$notices" "$stage/ThirdPartyNotices.txt"
  target=(--target "$platform")
fi
rm -f "$output"
# The stage has no node_modules: the extension has no runtime dependencies for vsce to list.
(cd "$stage" && "$client/node_modules/.bin/vsce" package --no-dependencies --skip-license \
  --allow-missing-repository --no-rewrite-relative-links "${target[@]}" --out "$output")
