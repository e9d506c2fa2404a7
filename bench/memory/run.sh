#!/usr/bin/env bash
# Prints the memory of long recordings: the synthetic hour (record's Profile, then the daemon's
# Recording), then real `dapprof record --pid` and live runs (RSS every 10 s).
# Usage: bench/memory/run.sh [BUILD_DIR] [real_run.py options: --seconds S --python PY ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build/default}"
shift || true
"$build/bench/memory/memory_bench"
"$build/bench/memory/memory_bench" --live
exec /usr/bin/python3 bench/memory/real_run.py "$build/src/dapprof" "$@"
