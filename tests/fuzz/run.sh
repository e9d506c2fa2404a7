#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang, ASan + UBSan) and fuzzes each for
# SECONDS (default 60), starting from its corpus in tests/fuzz/corpus/<target>/. Prints, per
# target, the executions, the coverage (edges) reached and the findings. An input that crashes,
# leaks or times out is copied into the target's corpus, where ctest replays it from then on
# (fix the bug, keep the input), and the script fails.
# Usage: tests/fuzz/run.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(framing arguments stream_decoder elf dwarf_line python_objects)

cmake --preset fuzz >/dev/null || { echo "error: cannot configure the fuzz preset (clang needed)" >&2; exit 1; }
cmake --build --preset fuzz -j"$(nproc)" --target "${targets[@]/%/_fuzzer}" >build/fuzz-build.log 2>&1 ||
  { tail -30 build/fuzz-build.log; echo "error: building the fuzz targets failed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
printf '%-16s %10s %10s %8s %s\n' target seconds executions edges findings
for target in "${targets[@]}"; do
  seeds="tests/fuzz/corpus/$target"
  corpus="$work/$target"
  mkdir -p "$corpus" "$work/artifacts-$target"
  cp "$seeds"/* "$corpus"/
  log="$work/$target.log"
  # New inputs go to the scratch corpus; the tree keeps the seeds and the findings only.
  "build/fuzz/tests/fuzz/${target}_fuzzer" "$corpus" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$work/artifacts-$target/" \
    >"$log" 2>&1
  rc=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  edges=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  findings=0
  for artifact in "$work/artifacts-$target"/*; do
    [[ -f "$artifact" ]] || continue
    findings=$((findings + 1))
    cp "$artifact" "$seeds/"
  done
  printf '%-16s %10s %10s %8s %s\n' "$target" "$seconds" "${runs:-?}" "${edges:-?}" "$findings"
  if ((rc != 0 || findings != 0)); then
    status=1
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -10
  fi
done
exit $status
