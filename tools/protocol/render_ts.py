"""TypeScript of the protocol: vscode-client/src/model/protocol.ts, interfaces of every message
body and arguments, and the protocol's names, defaults and ranges as constants."""
from __future__ import annotations

import json
import re
import textwrap

from protocol_model import (GenerationError, Protocol, Struct, Field, SUPPORTS_PROFILING,
                            SUPPORTS_PROFILING_STACKS)

OUTPUT = "vscode-client/src/model/protocol.ts"
WIDTH = 100

BANNER = """\
// Generated from schemas/*.schema.json by tools/protocol/generate.py. Do not edit: change the
// schemas (or the generator) and run `python3 tools/protocol/generate.py --output`; the test
// protocol_generated (and test/unit/schemas.test.ts) fails when this file is stale.
//
// Types of dapprof's profiling extension of the Debug Adapter Protocol. docs/PROFILING.md is the
// reference for every field; schemas/ holds the JSON Schemas they are generated from.
"""


def doc(text: str, indent: str = "") -> list[str]:
    if not text:
        return []
    text = text.replace("*/", "*\\/")
    lines = textwrap.wrap(text, WIDTH - len(indent) - 3, break_on_hyphens=False)
    if len(lines) == 1 and len(indent) + len(lines[0]) + 7 <= WIDTH:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**"] + [f"{indent} * {line}" for line in lines] + [f"{indent} */"]


def quote(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return json.dumps(value)


class Ts:
    def __init__(self, protocol: Protocol):
        self.p = protocol

    def type_of(self, owner: str, name: str, schema: dict) -> str:
        if name == "format" and "enum" in schema:
            return "ProfileFormat"
        if "enum" in schema:
            enum = self.p.enums.get(f"{owner}.{name}")
            return enum.ts if enum else " | ".join(quote(v) for v in schema["enum"])
        if "const" in schema:
            return quote(schema["const"])
        if "$ref" in schema:
            ref = schema["$ref"].removeprefix("#/$defs/")
            target = self.p.defs[ref]
            if target.get("type") == "object":
                return self.p.struct(ref).ts
            return self.type_of(owner, name, target)
        t = schema.get("type")
        if t == "array":
            return f"{self.type_of(owner, name, schema['items'])}[]"
        if t == "object" and "additionalProperties" in schema:
            return f"Record<string, {self.type_of(owner, name, schema['additionalProperties'])}>"
        scalar = {"integer": "number", "number": "number", "boolean": "boolean", "string": "string"}
        if t not in scalar:
            raise GenerationError(f"{owner}.{name}: no TypeScript type for {schema}")
        return scalar[t]

    def field(self, s: Struct, f: Field) -> list[str]:
        return doc(f.schema.get("description", ""), "  ") + [
            f"  {f.name}{'' if f.required else '?'}: {self.type_of(s.name, f.name, f.schema)};"]

    def interface(self, s: Struct) -> list[str]:
        extends = f" extends {s.embed[1].ts}" if s.embed else ""
        out = doc(s.description) + [f"export interface {s.ts}{extends} {{"]
        for f in s.fields:
            out += self.field(s, f)
        return out + ["}", ""]

    def defaults_and_ranges(self, s: Struct) -> list[str]:
        prefix = re.match(r"[a-z]+", s.subject)[0].upper()  # startProfiling: START
        defaults = [(f.name, f.schema["default"]) for f in s.fields if "default" in f.schema]
        ranges = [(f.name, f.schema["minimum"], f.schema["maximum"]) for f in s.fields
                  if f.schema.get("type") == "integer" and "minimum" in f.schema
                  and "maximum" in f.schema]
        out = []
        if defaults:
            out += [f"/** What the daemon takes for each absent {s.subject} argument. */",
                    f"export const {prefix}_DEFAULTS = {{"]
            out += [f"  {n}: {quote(v)}," for n, v in defaults]
            out += [f"}} as const satisfies {s.ts};", ""]
        if ranges:
            out += [f"/** The ranges of the {s.subject} arguments that have one (inclusive). */",
                    f"export const {prefix}_RANGES = {{"]
            out += [f"  {n}: {{ minimum: {lo}, maximum: {hi} }}," for n, lo, hi in ranges]
            out += ["} as const;", ""]
        return out

    def render(self) -> str:
        p = self.p
        out = [BANNER.rstrip(), ""]
        out += ["/** The requests of the profiling extension. */", "export const COMMANDS = {"]
        out += [f"  {c}: {quote(c)}," for c in p.commands] + ["} as const;"]
        out += ["export type ProfilingCommand = (typeof COMMANDS)[keyof typeof COMMANDS];", ""]
        out += ["/** Its events. */", "export const EVENTS = {"]
        out += [f"  {e}: {quote(e)}," for e in p.events] + ["} as const;", ""]
        out += ["/** The capability in the initialize response that says the adapter has them. */",
                f"export const SUPPORTS_PROFILING = {quote(SUPPORTS_PROFILING)};",
                "/** The capability that says startProfiling accepts `stacks`. */",
                f"export const SUPPORTS_PROFILING_STACKS = {quote(SUPPORTS_PROFILING_STACKS)};", ""]
        out += ["/** The file formats of the protocol's \"format\" fields. */",
                "export const PROFILE_FORMATS = ["]
        out += [f"  {quote(n)}," for n in p.formats] + ["] as const;"]
        out += ["export type ProfileFormat = (typeof PROFILE_FORMATS)[number];",
                f"export const DEFAULT_FORMAT: ProfileFormat = {quote(p.default_format)};", ""]
        for key, e in p.declared_enums():
            out += doc(e.description or f"The values of {key}.")
            out += [f"export const {e.ts_list} = [{', '.join(quote(v) for v in e.values)}] as const;",
                    f"export type {e.ts} = (typeof {e.ts_list})[number];", ""]
        out += ["/** Error ids of the profiling requests (body.error.id of an error response). */",
                "export const ProfilingErrorId = {"]
        for e in p.errors:
            out += doc(e.description, "  ") + [f"  {e.name}: {e.value},"]
        out += ["} as const;",
                "export type ProfilingErrorIdValue =",
                "  (typeof ProfilingErrorId)[keyof typeof ProfilingErrorId];",
                ""]
        for s in p.structs:
            out += self.interface(s)
        for s in p.structs:
            if s.kind == "arguments":
                out += self.defaults_and_ranges(s)
        return "\n".join(out).rstrip() + "\n"


def render(protocol: Protocol) -> dict[str, str]:
    return {OUTPUT: Ts(protocol).render()}
