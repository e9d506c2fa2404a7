#!/usr/bin/env bash
# Builds a sanitizer preset and runs ctest under it: `asan` (ASan + UBSan) or `tsan`. Every
# instrumented process, the gtests and each dapprof the integration tests start, writes its
# reports to one directory (ASAN_OPTIONS/UBSAN_OPTIONS/TSAN_OPTIONS log_path), so a report from a
# process whose exit status no test looks at still fails the run. Prints what the run cost.
# Usage: scripts/sanitize.sh asan|tsan [CTEST_ARGS...]   (e.g. `tsan -R 'adapter|profiling'`)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:?usage: scripts/sanitize.sh asan|tsan [CTEST_ARGS...]}"
shift
case "$preset" in asan | tsan) ;; *) echo "error: unknown preset $preset (asan or tsan)" >&2; exit 2 ;; esac

began=$SECONDS
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j"$(nproc)"
built=$SECONDS

reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
common="log_path=$reports/report:print_stacktrace=1"
export ASAN_OPTIONS="$common:detect_leaks=1:abort_on_error=0:strict_string_checks=1"
export UBSAN_OPTIONS="$common:halt_on_error=1"
# A suppressed leak (see __lsan_default_suppressions) would otherwise still write a report file.
export LSAN_OPTIONS="$common:print_suppressions=0"
export TSAN_OPTIONS="$common:halt_on_error=0:second_deadlock_stack=1"
status=0
ctest --preset "$preset" -j2 --timeout 900 "$@" || status=$?
tested=$SECONDS

# Reports of processes that are not ours (an uninstrumented python has none) cannot appear here:
# only instrumented binaries read these variables.
found=0
for report in "$reports"/report*; do
  [[ -f "$report" ]] || continue
  found=$((found + 1))
  echo "=== $(basename "$report")"
  head -60 "$report"
done
echo "$preset: build $((built - began)) s, tests $((tested - built)) s, $found sanitizer report(s)"
((found == 0)) || status=1
exit $status
