#!/usr/bin/env bash
# Prints dapprof's proxy overhead figures. Usage: bench/adapter/run.sh [BUILD_DIR] [threads-count]
# BUILD_DIR (default build/default) must have the dapprof, dap_responder and adapter_bench targets.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build/default}"
count="${2:-1000}"
"$build/bench/adapter/adapter_bench" "$build/src/dapprof" "$build/bench/adapter/dap_responder"
/usr/bin/python3 bench/adapter/debugpy_threads.py "$build/src/dapprof" "$count"
