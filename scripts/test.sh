#!/usr/bin/env bash
# The README's test command: installs what is missing (and makes the Debian unstable root once),
# builds, runs every test
# (the VS Code client's suite, the extension end to end in code-server, then every C++ unit and
# integration test through ctest, the release's packages, a short fuzzing run of every fuzz
# target, and the linux-arm64 release's packages and CLI under emulation).
#
# The suite runs on the `asan` build (AddressSanitizer + UndefinedBehaviorSanitizer, warnings as
# errors): the same tests as the `default` build's, each instrumented process failing the run on
# any report. Building both would not fit the run's budget on two cores (the default build adds
# some 13 minutes and its suite 6); the release build compiles the shipped program with the
# optimiser's warnings, and `ctest --preset default` runs the plain build's suite by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's end and the time since the start, so that what the run costs is in its log.
phase() { printf '[test.sh] %s done at %d min %02d s\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }
scripts/install-deps.sh
phase "dependencies"
# CPython 3.13-3.15 for the per-interpreter tests; before configuring, since the native tests'
# CMake builds an extension for every interpreter it finds.
scripts/debian-unstable-root.sh >/dev/null
phase "the Debian unstable root"
# A compiler cache kept outside the clone, beside the unstable root's: a run recompiles only what
# changed since the last one (three builds of everything would not fit the budget otherwise).
# Paths are hashed relative to the clone and its directory not at all, so that a new clone
# elsewhere still hits; the cost is debug info naming the first clone's directory (the native
# tests' extensions, whose source paths are checked, are compiled without it).
export CCACHE_DIR="${DAPPROF_CCACHE_DIR:-/var/cache/dapprof/ccache}" CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=6G
export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
mkdir -p "$CCACHE_DIR"
ccache --zero-stats >/dev/null
cmake --preset asan
cmake --build --preset asan -j"$(nproc)"
phase "the asan build"
# The release: dapprof linked statically but for glibc, its man page and the linux-x64 .vsix
# (the .deb is made by the first test of `ctest --preset release`). Only the executable is
# compiled; the end-to-end test runs the .vsix alone too.
cmake --preset release
cmake --build --preset release -j"$(nproc)"
phase "the release build"
# The demo's build (scripts/demo.sh: a unity build of the executable alone), kept compiling.
cmake --preset demo
cmake --build --preset demo -j"$(nproc)" --target dapprof
phase "the demo build"
version=$(sed -n 's/^project(dapprof VERSION \([^ ]*\).*/\1/p' CMakeLists.txt)
vscode-client/scripts/test.sh
phase "the extension's tests"
DAPPROF_BIN=build/asan/src/dapprof DAPPROF_PLATFORM_VSIX=build/release/dapprof-linux-x64-$version.vsix \
  vscode-client/scripts/e2e.sh
phase "the end-to-end test in code-server"
scripts/sanitize.sh asan
phase "ctest (asan)"
ctest --preset release --timeout 600
phase "ctest (release)"
# Keeps the fuzz targets alive: 15 s each from their corpus (tests/fuzz/run.sh for longer runs).
tests/fuzz/run.sh 15
phase "fuzzing"
# linux-arm64: the cross-compiled release (a unity build: minutes on a fresh machine, where the
# plain one took half an hour) and its tests under emulation (qemu-user) against the arm64 root's
# Python: the .deb installed in the root, dump and record there. The unit tests are not built for
# aarch64 here: that cross build would not fit the budget (docs/PACKAGING.md).
scripts/install-deps.sh arm64
scripts/arm64-root.sh >/dev/null
phase "the arm64 cross compiler and root"
cmake --preset release-arm64
cmake --build --preset release-arm64 -j"$(nproc)"
phase "the arm64 build"
ctest --preset release-arm64 --timeout 600
phase "ctest (release-arm64)"
ccache --show-stats | sed -n '/Hits\|Misses\|hit rate/p' || true
