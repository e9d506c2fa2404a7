#!/usr/bin/env bash
# The README's test command: installs what is missing (and makes the Debian unstable root once),
# builds, runs every test
# (the VS Code client's suite, the extension end to end in code-server, then every C++ unit and
# integration test through ctest, the release's packages, and a short fuzzing run of every fuzz
# target).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# CPython 3.13-3.15 for the per-interpreter tests; before configuring, since the native tests'
# CMake builds an extension for every interpreter it finds.
scripts/debian-unstable-root.sh >/dev/null
cmake --preset default
cmake --build --preset default -j"$(nproc)"
# The release: dapprof linked statically but for glibc, its man page and the linux-x64 .vsix
# (the .deb is made by the first test of `ctest --preset release`). Only the executable is
# compiled; the end-to-end test runs the .vsix alone too.
cmake --preset release
cmake --build --preset release -j"$(nproc)"
version=$(sed -n 's/^project(dapprof VERSION \([^ ]*\).*/\1/p' CMakeLists.txt)
vscode-client/scripts/test.sh
DAPPROF_BIN=build/default/src/dapprof DAPPROF_PLATFORM_VSIX=build/release/dapprof-linux-x64-$version.vsix \
  vscode-client/scripts/e2e.sh
ctest --preset default -j2 --timeout 600
ctest --preset release --timeout 600
# Keeps the fuzz targets alive: 30 s each from their corpus (tests/fuzz/run.sh for longer runs).
tests/fuzz/run.sh 30
