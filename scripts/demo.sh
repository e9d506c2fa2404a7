#!/usr/bin/env bash
# The README's first Quick start command: builds dapprof, starts `dapprof serve`, and profiles
# examples/demo_app.py with the bundled client (client/dapprof_client.py) for about 4 seconds.
# Writes demo-output/demo.speedscope.json (exported from dapprof by the client) and
# demo-output/demo-flamegraph.svg (written by dapprof itself) and prints the functions that took
# the most samples.
#
#   scripts/demo.sh [--skip-install] [--build-dir DIR]
#
#   --skip-install   do not run `scripts/install-deps.sh demo` (the packages are already there)
#   --build-dir DIR  configure/build there instead of the demo preset's build/demo
#
# Only the build's and the demo's packages are installed (scripts/test.sh installs the rest), and
# the demo preset compiles dapprof alone: no tests, no benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."

skip_install=0
build_dir=build/demo
while (($#)); do
  case "$1" in
    --skip-install) skip_install=1 ;;
    --build-dir)
      [[ $# -ge 2 ]] || { echo "demo.sh: --build-dir needs a directory" >&2; exit 2; }
      build_dir=$2
      shift
      ;;
    -h | --help)
      sed -n '2,14s/^# \{0,1\}//p' "$0"
      exit 0
      ;;
    *)
      echo "demo.sh: unknown option '$1' (see --help)" >&2
      exit 2
      ;;
  esac
  shift
done

if ((!skip_install)); then
  scripts/install-deps.sh demo
fi

# Only the daemon is needed; an existing configuration is reused (the build re-runs CMake
# itself when a CMakeLists.txt changed).
if [[ ! -f $build_dir/CMakeCache.txt ]]; then
  cmake --preset demo -B "$build_dir"
fi
cmake --build "$build_dir" --target dapprof -j"$(nproc)"
dapprof=$build_dir/src/dapprof

# Debian's interpreter has debugpy (python3-debugpy); it runs both debugpy's adapter and the demo.
python=/usr/bin/python3
out=demo-output
mkdir -p "$out"
rm -f "$out/dapprof.port" "$out/demo.speedscope.json" "$out/demo-flamegraph.svg"

"$dapprof" serve --listen 127.0.0.1:0 --port-file "$out/dapprof.port" --python "$python" \
  2>"$out/dapprof.log" &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true' EXIT

for _ in $(seq 150); do
  [[ -s $out/dapprof.port ]] && break
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    echo "demo.sh: dapprof serve exited; its log:" >&2
    cat "$out/dapprof.log" >&2
    exit 1
  fi
  sleep 0.1
done
[[ -s $out/dapprof.port ]] || { echo "demo.sh: dapprof serve wrote no port file" >&2; exit 1; }
port=$(<"$out/dapprof.port")
echo "dapprof serve is listening on 127.0.0.1:$port (log: $out/dapprof.log)"
echo

# Profile for 4 s, then let the demo finish on its own (it runs about 6.5 s).
"$python" client/dapprof_client.py --connect "127.0.0.1:$port" --duration 4 --top 10 \
  --export speedscope="$out/demo.speedscope.json" \
  --output "$out/demo-flamegraph.svg" --format flamegraph \
  --wait-exit examples/demo_app.py

cat <<EOF

Profiles written:
  $out/demo.speedscope.json
      open it at https://www.speedscope.app (drop the file on the page),
      or locally: npx speedscope $out/demo.speedscope.json
  $out/demo-flamegraph.svg
      an interactive flame graph: open it in any web browser
      (click a frame to zoom, Ctrl-F to search)
EOF
