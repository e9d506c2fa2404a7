#!/usr/bin/env bash
# Regenerates test/fixtures/live-stream.jsonl: the profilingData event bodies that dapprof sent
# while live-profiling test/fixtures/live-app.py under debugpy, exactly as a client received
# them (the bundled client's --record-stream). The program runs from a fresh temporary
# directory with Debian's python3, so the recorded paths name nothing of the recording machine.
# With --stacks, test/fixtures/live-stacks-stream.jsonl: the same with samples as stack IDs.
# Usage: scripts/record-live-stream.sh [path/to/dapprof] [--stacks]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
dapprof="$repo/build/default/src/dapprof"
mode=--no-stacks name=live-stream.jsonl
for arg in "$@"; do
  if [[ "$arg" == --stacks ]]; then mode=--stacks name=live-stacks-stream.jsonl; else dapprof="$arg"; fi
done
[[ -x "$dapprof" ]] || { echo "no dapprof at $dapprof (build the project, or pass its path)" >&2; exit 1; }
python=/usr/bin/python3
"$python" -c 'import debugpy' 2>/dev/null || { echo "$python lacks debugpy (apt-get install python3-debugpy)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/test/fixtures/live-app.py" "$work/live-app.py"
# 2 s at 100 Hz in batches of 100 ms: about 20 events, each thread's stacks, a few new frames
# in the later events as the program moves between functions.
"$python" "$repo/client/dapprof_client.py" --dapprof "$dapprof" --daemon-arg=--python="$python" \
  --daemon-arg=--log-level=warn --rate 100 --batch-interval 100 --duration 2 \
  "$mode" --record-stream "$work/stream.jsonl" --top 5 --cwd "$work" "$work/live-app.py" -- 30 >&2
mv "$work/stream.jsonl" "$here/test/fixtures/$name"
echo "wrote $(wc -l < "$here/test/fixtures/$name") events to test/fixtures/$name"
