#!/usr/bin/env bash
# Regenerates test/fixtures/encoder-stream.jsonl: the profilingData event bodies written by
# dapprof's own protocol encoder (the C++ test program protocol_emit_messages, built with the
# project: build/<preset>/tests/protocol/protocol_emit_messages). Its stacks are random but the
# JSON is the encoder's: deep stacks, native frames, non-ASCII names, merged and dropped batches.
# A stream recorded from a live profiling session replaces it once live profiling has landed.
# Usage: scripts/record-encoder-stream.sh [path/to/protocol_emit_messages]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
emitter="${1:-$here/../build/default/tests/protocol/protocol_emit_messages}"
[[ -x "$emitter" ]] || { echo "no emitter at $emitter (build the project, or pass its path)" >&2; exit 1; }
"$emitter" | node -e '
  const lines = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean);
  const out = [];
  for (const l of lines) { const m = JSON.parse(l); if (m.schema === "profilingData") out.push(JSON.stringify(m.message.body)); }
  if (out.length === 0) { console.error("the emitter wrote no profilingData event"); process.exit(1); }
  process.stdout.write(out.join("\n") + "\n");
' > "$here/test/fixtures/encoder-stream.jsonl"
echo "wrote $(wc -l < "$here/test/fixtures/encoder-stream.jsonl") events to test/fixtures/encoder-stream.jsonl"
