#!/usr/bin/env bash
# Regenerates test/fixtures/encoder-stream.jsonl and encoder-stacks-stream.jsonl: the
# profilingData event bodies written by dapprof's own protocol encoder (the C++ test program
# protocol_emit_messages, built with the project: build/<preset>/tests/protocol/
# protocol_emit_messages), one run with every sample's frame IDs and one with stacks. Its stacks
# are random but the JSON is the encoder's: deep stacks, native frames, non-ASCII names, merged
# and dropped batches.
# A stream recorded from a live profiling session replaces it once live profiling has landed.
# Usage: scripts/record-encoder-stream.sh [path/to/protocol_emit_messages]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
emitter="${1:-$here/../build/default/tests/protocol/protocol_emit_messages}"
[[ -x "$emitter" ]] || { echo "no emitter at $emitter (build the project, or pass its path)" >&2; exit 1; }
out="$here/test/fixtures"
"$emitter" | OUT="$out" node -e '
  const fs = require("fs");
  const lines = fs.readFileSync(0, "utf8").split("\n").filter(Boolean);
  const runs = { "encoder-stream.jsonl": [], "encoder-stacks-stream.jsonl": [] };
  for (const l of lines) {
    const m = JSON.parse(l);
    if (m.schema !== "profilingData") continue;
    const body = m.message.body;
    runs["stackIds" in body ? "encoder-stacks-stream.jsonl" : "encoder-stream.jsonl"].push(JSON.stringify(body));
  }
  for (const [name, bodies] of Object.entries(runs)) {
    if (bodies.length === 0) { console.error(`the emitter wrote no profilingData event for ${name}`); process.exit(1); }
    fs.writeFileSync(`${process.env.OUT}/${name}`, bodies.join("\n") + "\n");
    console.log(`wrote ${bodies.length} events to test/fixtures/${name}`);
  }
'
