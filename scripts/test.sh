#!/usr/bin/env bash
# The README's test command: installs what is missing (and makes the Debian unstable root once),
# builds, runs every test
# (the VS Code client's suite, the extension end to end in code-server, then every C++ unit and
# integration test through ctest, and a short fuzzing run of every fuzz target).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# CPython 3.13-3.15 for the per-interpreter tests; before configuring, since the native tests'
# CMake builds an extension for every interpreter it finds.
scripts/debian-unstable-root.sh >/dev/null
cmake --preset default
cmake --build --preset default -j"$(nproc)"
vscode-client/scripts/test.sh
DAPPROF_BIN=build/default/src/dapprof vscode-client/scripts/e2e.sh
ctest --preset default -j2 --timeout 600
# Keeps the fuzz targets alive: 30 s each from their corpus (tests/fuzz/run.sh for longer runs).
tests/fuzz/run.sh 30
