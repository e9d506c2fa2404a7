#!/usr/bin/env bash
# Prints live profiling's cost figures (slowdown, wire bytes, latency).
# Usage: bench/live/run.sh [BUILD_DIR] [--python PY] [--rounds N] [--work-rounds R]
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build/default}"
shift || true
exec /usr/bin/python3 bench/live/live_bench.py "$build/src/dapprof" "$@"
