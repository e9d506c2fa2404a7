#!/usr/bin/env python3
"""Generates the profiling protocol's types and constants from the JSON Schemas in schemas/, the
one source of the protocol:

    src/protocol/generated/messages.hpp, .cpp   C++ structs with parse/to_json, ProfilingErrorId,
                                                command names, format names, ranges
    vscode-client/src/model/protocol.ts         TypeScript interfaces and constants
    client/dapprof_client/protocol.py           Python constants (ErrorId, FORMATS, ...)

    generate.py --output [ROOT]    writes them under ROOT (default: this repository)
    generate.py --check [ROOT]     exit status 1, naming each file under ROOT that differs from
                                   what the schemas give (and how), or that is missing

The inputs are always read from --schemas and --model-header, so --check DIR can judge a copy.
The build never runs this script; the committed files are what gets compiled, and the
protocol_generated test runs --check. Standard library only; the output is deterministic.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # the check runs from the source tree: leave no __pycache__ there

import protocol_model  # noqa: E402
import render_cpp  # noqa: E402
import render_py  # noqa: E402
import render_ts  # noqa: E402


def generate(schemas: Path, model_header: Path) -> dict[str, str]:
    """Relative path -> content of every generated file."""
    protocol = protocol_model.build(protocol_model.load_schemas(schemas),
                                    protocol_model.model_formats(model_header))
    files = {}
    for renderer in (render_cpp, render_ts, render_py):
        files.update(renderer.render(protocol))
    return dict(sorted(files.items()))


def check(root: Path, files: dict[str, str]) -> int:
    stale = 0
    for rel, content in files.items():
        path = root / rel
        if not path.exists():
            print(f"{rel}: missing (regenerate: python3 tools/protocol/generate.py --output)")
            stale += 1
            continue
        committed = path.read_text(encoding="utf-8")
        if committed == content:
            print(f"{rel}: up to date")
            continue
        stale += 1
        print(f"{rel}: stale, it differs from what the schemas give (regenerate: "
              "python3 tools/protocol/generate.py --output):")
        diff = list(difflib.unified_diff(committed.splitlines(), content.splitlines(),
                                         f"{rel} (committed)", f"{rel} (generated)", lineterm=""))
        print("\n".join(diff[:60] + (["..."] if len(diff) > 60 else [])))
    return 1 if stale else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--output", type=Path, nargs="?", const=REPO, metavar="ROOT")
    group.add_argument("--check", type=Path, nargs="?", const=REPO, metavar="ROOT")
    ap.add_argument("--schemas", type=Path, default=REPO / "schemas", metavar="DIR")
    ap.add_argument("--model-header", type=Path, default=REPO / "src/model/profile_format.hpp",
                    metavar="FILE", help="declares model::ProfileFormat")
    args = ap.parse_args()
    try:
        files = generate(args.schemas, args.model_header)
    except protocol_model.GenerationError as e:
        print(f"generate.py: {e}", file=sys.stderr)
        return 2
    if args.check:
        return check(args.check, files)
    for rel, content in files.items():
        path = args.output / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
            print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
