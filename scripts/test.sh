#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test
# (the VS Code client's suite, the extension end to end in code-server, then every C++ unit and
# integration test through ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default
cmake --build --preset default -j"$(nproc)"
vscode-client/scripts/test.sh
DAPPROF_BIN=build/default/src/dapprof vscode-client/scripts/e2e.sh
ctest --preset default -j2 --timeout 600
