"""C++ of the protocol: src/protocol/generated/messages.hpp and .cpp (namespace dapprof::protocol).
The parsers call the hand-written field readers of src/protocol/fields.hpp."""
from __future__ import annotations

import textwrap

from bindings import EMPTY_MEANS_ABSENT, EXTRA_MEMBERS, FIELD_NAMES, FIELD_TYPES, PATTERNS, UNITS, WHY
from protocol_model import (GenerationError, Protocol, Struct, Field, SUPPORTS_PROFILING,
                            SUPPORTS_PROFILING_STACKS, pascal, snake)

HEADER = "src/protocol/generated/messages.hpp"
SOURCE = "src/protocol/generated/messages.cpp"
WIDTH = 100

BANNER = [
    "// Generated from schemas/*.schema.json by tools/protocol/generate.py. Do not edit: change the",
    "// schemas (or the generator) and run `python3 tools/protocol/generate.py --output`; the test",
    "// protocol_generated fails when this file is stale.",
    "// clang-format off: the layout is the generator's, and reformatting would make it stale.",
]


def comment(text: str, indent: str = "") -> list[str]:
    if not text:
        return []
    return textwrap.wrap(text, WIDTH, initial_indent=f"{indent}// ",
                         subsequent_indent=f"{indent}// ", break_on_hyphens=False)


def literal(text: str) -> str:
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif " " <= c <= "~":
            out.append(c)
        else:
            raise GenerationError(f"non-printable or non-ASCII character in {text!r}")
    return '"' + "".join(out) + '"'


def call(indent: str, head: str, args: list[str], tail: str) -> list[str]:
    """`indent head(args)tail`, where indent is spaces and then any code: on one line if it fits,
    else the arguments packed onto lines aligned after the parenthesis (as clang-format does). A
    string literal too long for any line is split into adjacent literals."""
    current = f"{indent}{head}("
    cont = " " * len(current)
    lines: list[str] = []
    for i, a in enumerate(args):
        end = ", " if i + 1 < len(args) else f"){tail}"
        if len(current + a + end.rstrip()) <= WIDTH:
            current += a + end
            continue
        if current != cont:
            lines.append(current.rstrip())
            current = cont
        if len(cont + a + end.rstrip()) > WIDTH and a.startswith('"'):
            words = textwrap.wrap(a[1:-1], WIDTH - len(cont) - len(end) - 2, drop_whitespace=False)
            lines += [f'{cont}"{w}"' for w in words[:-1]]
            a = f'"{words[-1]}"'
        current += a + end
    return lines + [current.rstrip()]


class Cpp:
    def __init__(self, protocol: Protocol):
        self.p = protocol
        self.constants: dict[str, str] = {}  # (struct.field/min|max|default) -> constant name
        self.constant_lines: list[str] = []
        self._range_constants()

    # --- types and names ------------------------------------------------------------------------
    def member(self, s: Struct, f: Field) -> str:
        return FIELD_NAMES.get((s.name, f.name), snake(f.name))

    def enum_type(self, f: Field) -> str:
        if f.enum == "format":
            return "model::ProfileFormat"
        cpp = self.p.enums[f.enum].cpp
        if not cpp:
            raise GenerationError(f"{f.enum} has no C++ type, but a C++ struct has it")
        return cpp

    def enumerator(self, f: Field, value: str) -> str:
        if f.enum == "format":
            return f"model::ProfileFormat::{self.p.model_formats[value]}"
        return f"{self.enum_type(f)}::{pascal(value)}"

    def base_type(self, s: Struct, f: Field) -> str:
        t = f.schema.get("type")
        if f.enum:
            return self.enum_type(f)
        if f.ref and t == "array":
            return f"std::vector<{self.p.struct(f.ref).cpp}>"
        if f.ref:
            return self.p.struct(f.ref).cpp
        if t == "integer":
            if "minimum" not in f.schema:
                raise GenerationError(f"{s.name}.{f.name}: integers need a minimum")
            lo, hi = f.schema["minimum"], f.schema.get("maximum")
            if f.name in FIELD_TYPES:
                return FIELD_TYPES[f.name]
            if hi is not None and -2**31 <= lo and hi < 2**31:
                return "int"
            return "std::uint64_t" if lo >= 0 else "std::int64_t"
        scalar = {"boolean": "bool", "number": "double", "string": "std::string"}
        if t not in scalar:
            raise GenerationError(f"{s.name}.{f.name}: no C++ type for {f.schema}")
        return scalar[t]

    def kind(self, s: Struct, f: Field) -> str:
        """How absence is represented: value (always present), optional, empty (empty = absent)."""
        if f.required or "default" in f.schema:
            return "value"
        if f.schema.get("type") == "array" or (s.name, f.name) in EMPTY_MEANS_ABSENT:
            return "empty"
        return "optional"

    def initializer(self, s: Struct, f: Field) -> str:
        if self.kind(s, f) != "value":
            return ""
        t = self.base_type(s, f)
        if "default" in f.schema:
            d = f.schema["default"]
            if f.enum:
                return f" = {self.enumerator(f, d)}"
            if isinstance(d, bool):
                return f" = {'true' if d else 'false'}"
            if isinstance(d, str):
                return f" = {literal(d)}"
            return f" = {self.constants.get(f'{s.name}.{f.name}.default', repr(d))}"
        if f.enum:
            return f" = {self.enumerator(f, f.schema['enum'][0])}"
        if t == "bool":
            return " = false"
        return " = 0" if t in ("int", "pid_t", "std::uint64_t", "std::int64_t", "double") else ""

    def _range_constants(self) -> None:
        seen: dict[str, tuple[str, int]] = {}
        for s in self.p.structs:
            if s.kind != "arguments" or not s.cpp:
                continue
            for f in s.fields:
                if f.schema.get("type") != "integer":
                    continue
                suffix = UNITS.get(f.name, ("", ""))[0]
                for key, word in (("default", "Default"), ("minimum", "Min"), ("maximum", "Max")):
                    if key not in f.schema:
                        continue
                    name, value = f"k{word}{pascal(f.name)}{suffix}", f.schema[key]
                    if name in seen and seen[name][1] != value:
                        raise GenerationError(f"{name} is {seen[name][1]} in {seen[name][0]} but "
                                              f"{value} in {s.name}")
                    if name not in seen:
                        self.constant_lines.append(
                            f"inline constexpr {self.base_type(s, f)} {name} = {value};")
                    seen[name] = (s.name, value)
                    self.constants[f"{s.name}.{f.name}.{key}"] = name
        # Bounded lists (topFunctions): the writer of the list keeps to the bound.
        for s in self.p.structs:
            for f in s.fields:
                if f.schema.get("type") != "array" or "maxItems" not in f.schema:
                    continue
                name, value = f"kMax{pascal(f.name)}", f.schema["maxItems"]
                if name in seen and seen[name][1] != value:
                    raise GenerationError(f"{name} is {seen[name][1]} in {seen[name][0]} but "
                                          f"{value} in {s.name}")
                if name not in seen:
                    self.constant_lines.append(f"inline constexpr std::size_t {name} = {value};")
                seen[name] = (s.name, value)

    # --- header ---------------------------------------------------------------------------------
    def header(self) -> str:
        p = self.p
        out = list(BANNER) + [
            "#pragma once", "#include <sys/types.h>", "", "#include <array>", "#include <cstdint>",
            "#include <optional>", "#include <string>", "#include <string_view>", "#include <utility>",
            "#include <vector>", "", '#include "common/result.hpp"',
            '#include "model/profile_format.hpp"',
            '#include "protocol/json.hpp"', "", "namespace dapprof::protocol {", "",
            "// Requests of the profiling extension.",
        ]
        out += [f'inline constexpr std::string_view k{pascal(c)} = "{c}";' for c in p.commands]
        out += ["// Its events."]
        out += [f'inline constexpr std::string_view k{pascal(e)} = "{e}";' for e in p.events]
        out += ["// The capability in the initialize response that says the adapter has them.",
                f'inline constexpr std::string_view kSupportsProfiling = "{SUPPORTS_PROFILING}";',
                "// The capability that says startProfiling accepts `stacks`.",
                f'inline constexpr std::string_view kSupportsProfilingStacks = '
                f'"{SUPPORTS_PROFILING_STACKS}";', "",
                "// body.error.id of error responses, stable so that clients may react to them.",
                "enum class ProfilingErrorId : int {"]
        for e in p.errors:
            out += comment(e.description, "  ") + [f"  {e.name} = {e.value},"]
        out += ["};", "std::string_view to_string(ProfilingErrorId id);", ""]
        out += ["// The protocol's names of the file formats (its \"format\" fields), in the schemas'",
                "// order.",
                "inline constexpr std::array<std::pair<std::string_view, model::ProfileFormat>, "
                f"{len(p.formats)}>", "    kProfileFormatNames = {{"]
        out += [f'        {{"{n}", model::ProfileFormat::{p.model_formats[n]}}},' for n in p.formats]
        out += ["    }};", "inline constexpr model::ProfileFormat kDefaultProfileFormat ="
                f" model::ProfileFormat::{p.model_formats[p.default_format]};",
                "std::string_view to_string(model::ProfileFormat format);",
                "std::optional<model::ProfileFormat> parse_profile_format(std::string_view name);", ""]
        for key, e in p.declared_enums():
            out += comment(e.description)
            if e.cpp:
                out += [f"enum class {e.cpp} {{ {', '.join(pascal(v) for v in e.values)} }};",
                        f"inline constexpr std::array<std::pair<std::string_view, {e.cpp}>, "
                        f"{len(e.values)}> k{e.cpp}Names = {{{{"]
                out += [f'    {{"{v}", {e.cpp}::{pascal(v)}}},' for v in e.values]
                out += ["}};", f"std::string_view to_string({e.cpp} value);",
                        f"std::optional<{e.cpp}> parse_{snake(e.cpp)}(std::string_view name);", ""]
            else:
                owner = key.split(".")[0]
                out += [f'inline constexpr std::string_view k{pascal(owner)}{pascal(e.field)}'
                        f'{pascal(v)} = "{v}";' for v in e.values] + [""]
        out += ["// Ranges and defaults of the requests' integer arguments.", *self.constant_lines, ""]
        out += self.keys()
        for s in p.structs:
            if s.cpp:
                out += self.struct(s)
        out += ["}  // namespace dapprof::protocol", ""]
        return "\n".join(out)

    def keys(self) -> list[str]:
        hand = [s for s in self.p.structs if not s.cpp]
        out = comment("Field names of the messages encoded by hand (protocol/batch.cpp, for speed): "
                      + ", ".join(s.name for s in hand) + ".") + ["namespace keys {"]
        for s in hand:
            out.append(f"namespace {snake(s.name)} {{")
            # The task document keeps `dump --json`'s snake_case keys: kAwaitedBy, not kAwaited_by.
            out += [f'inline constexpr std::string_view '
                    f'k{"".join(pascal(w) for w in f.name.split("_"))} = "{f.name}";'
                    for f in s.fields]
            out.append(f"}}  // namespace {snake(s.name)}")
        return out + ["}  // namespace keys", ""]

    def struct(self, s: Struct) -> list[str]:
        out = comment(s.description) + [f"struct {s.cpp} {{"]
        for f in s.fields:
            out += comment(f.schema.get("description", ""), "  ")
            t = self.base_type(s, f)
            if self.kind(s, f) == "optional":
                t = f"std::optional<{t}>"
            out.append(f"  {t} {self.member(s, f)}{self.initializer(s, f)};")
        if s.embed:
            member, inner = s.embed
            out += [f"  // The fields of the {inner.subject} {inner.kind}, in the same object.",
                    f"  {inner.cpp} {member};"]
        out.append("")
        for line in EXTRA_MEMBERS.get(s.cpp, []):
            out.append(f"  {line}")
        if s.cpp in EXTRA_MEMBERS:
            out.append("")
        if s.kind == "arguments":
            doc = ("`json` is the request's \"arguments\" member: null or absent means all defaults, "
                   "and so does a null field.")
        else:
            doc = "Required fields must be present, and null counts as absent."
        out += comment(doc + " Unknown fields are ignored. Each invalid field gives an error naming "
                       "it, with code InvalidArgument.", "  ")
        out += [
                f"  static Result<{s.cpp}> parse(const Json& json);",
                f"  friend bool operator==(const {s.cpp}&, const {s.cpp}&) = default;", "};",
                f"Json to_json(const {s.cpp}& value);", ""]
        return out

    # --- source ---------------------------------------------------------------------------------
    def source(self) -> str:
        p = self.p
        out = list(BANNER) + [f'#include "protocol/generated/messages.hpp"', "",
                            '#include "protocol/fields.hpp"', "", "namespace dapprof::protocol {", ""]
        out += self.switch("ProfilingErrorId", "id", [(f"ProfilingErrorId::{e.name}", e.name)
                                                       for e in p.errors])
        out += self.switch("model::ProfileFormat", "format",
                           [(f"model::ProfileFormat::{p.model_formats[n]}", n) for n in p.formats])
        out += self.from_name("model::ProfileFormat", "parse_profile_format", "kProfileFormatNames")
        for _, e in p.declared_enums():
            if e.cpp:
                out += self.switch(e.cpp, "value", [(f"{e.cpp}::{pascal(v)}", v) for v in e.values])
                out += self.from_name(e.cpp, f"parse_{snake(e.cpp)}", f"k{e.cpp}Names")
        out += ["namespace {", ""]
        for s in p.structs:
            if s.cpp:
                out += self.reader(s)
        out += ["}  // namespace", ""]
        for s in p.structs:
            if s.cpp:
                out += self.parse(s) + self.to_json(s)
        out += ["}  // namespace dapprof::protocol", ""]
        return "\n".join(out)

    @staticmethod
    def switch(type_: str, arg: str, cases: list[tuple[str, str]]) -> list[str]:
        out = [f"std::string_view to_string({type_} {arg}) {{", f"  switch ({arg}) {{"]
        for enumerator, name in cases:
            out += [f"    case {enumerator}:", f'      return "{name}";']
        return out + ["  }", "  return {};  // not an enumerator", "}", ""]

    @staticmethod
    def from_name(type_: str, function: str, table: str) -> list[str]:
        return [f"std::optional<{type_}> {function}(std::string_view name) {{",
                f"  for (const auto& [known, value] : {table})",
                "    if (known == name) return value;", "  return std::nullopt;", "}", ""]

    def what(self, s: Struct) -> tuple[str, str]:
        """How errors name a field of s, and s itself."""
        return {"arguments": (f"{s.subject} argument", f"{s.subject} arguments"),
                "response": (f"{s.subject} response field", f"{s.subject} response body"),
                "event": (f"{s.subject} field", f"{s.subject} event body"),
                "def": (f"{s.subject} field", s.subject)}[s.kind]

    def check(self, head: str, args: list[str]) -> list[str]:
        lines = call("  if (auto error = ", head, args, ")")
        if len(lines) == 1 and len(lines[0]) + len(" return error;") <= WIDTH:
            return [lines[0] + " return error;"]
        return lines + ["    return error;"]

    def reader(self, s: Struct) -> list[str]:
        out = [f"fields::Check read(const fields::Reader& r, {s.cpp}& out) {{"]
        for f in s.fields:
            name, member = literal(f.name), f"out.{self.member(s, f)}"
            if f.required:
                out += self.check("r.required", [name])
            t, sch = f.schema.get("type"), f.schema
            if f.enum:
                table = "kProfileFormatNames" if f.enum == "format" else f"k{self.enum_type(f)}Names"
                out += self.check(f"r.choice<{self.enum_type(f)}>", [name, table, member])
            elif t == "array":
                most = str(sch.get("maxItems", "std::numeric_limits<std::size_t>::max()"))
                out += self.check("r.array", [name, most, member])
            elif f.ref:
                raise GenerationError(f"{s.name}.{f.name}: nested objects are not supported")
            elif t == "boolean":
                out += self.check("r.boolean", [name, member])
            elif t == "integer":
                lo = self.constants.get(f"{s.name}.{f.name}.minimum", str(sch["minimum"]))
                hi = self.constants.get(f"{s.name}.{f.name}.maximum",
                                        str(sch["maximum"]) if "maximum" in sch else "fields::kNoMaximum")
                out += self.check("r.integer", [name, lo, hi, literal(UNITS.get(f.name, ("", ""))[1]),
                                                member])
            elif t == "number":
                lo = repr(float(sch["minimum"])) if "minimum" in sch else "-fields::kUnbounded"
                hi = repr(float(sch["maximum"])) if "maximum" in sch else "fields::kUnbounded"
                out += self.check("r.number", [name, lo, hi, member])
            elif t == "string":
                pattern = sch.get("pattern", "")
                meaning = PATTERNS.get(pattern, f"a string matching {pattern}")
                out += self.check("r.string", [name, literal(pattern), literal(meaning if pattern else ""),
                                               member])
            else:
                raise GenerationError(f"{s.name}.{f.name}: no C++ reader for {sch}")
        if s.embed:
            out += self.check("read", ["r", f"out.{s.embed[0]}"])
        for field_name, needs in s.dependent.items():
            for n in needs:
                out += self.check("r.dependent", [literal(field_name), literal(n),
                                                  literal(WHY.get((s.name, field_name), ""))])
        if s.not_both:
            a, b = s.not_both
            fa, fb = (next(f for f in s.fields if f.name == x) for x in (a, b))
            out += self.check("r.not_both", [literal(a), f"out.{self.member(s, fa)}", literal(b),
                                             f"out.{self.member(s, fb)}",
                                             literal(WHY.get((s.name, "not"), ""))])
        return out + ["  return std::nullopt;", "}", ""]

    def parse(self, s: Struct) -> list[str]:
        field_what, object_what = self.what(s)
        null_is_empty = "true" if s.kind == "arguments" else "false"
        out = [f"Result<{s.cpp}> {s.cpp}::parse(const Json& json) {{"]
        out += call("  auto object = ", "fields::object", ["json", literal(object_what), null_is_empty], ";")
        out += ["  if (!object) return object.error();"]
        out += call("  const ", "fields::Reader reader", ["**object", literal(field_what)], ";")
        out += [f"  {s.cpp} out;", "  if (auto error = read(reader, out)) return *error;"]
        return out + ["  return out;", "}", ""]

    def present(self, s: Struct, f: Field, value: str) -> str | None:
        kind = self.kind(s, f)
        return {"value": None, "optional": value, "empty": f"!{value}.empty()"}[kind]

    def to_json(self, s: Struct) -> list[str]:
        out = [f"Json to_json(const {s.cpp}& value) {{", "  Json j = Json::object();"]
        conditions = {f.name: self.present(s, f, f"value.{self.member(s, f)}") for f in s.fields}
        for f in s.fields:
            v = f"value.{self.member(s, f)}"
            if self.kind(s, f) == "optional":
                v = f"*{v}"
            if f.enum:
                v = f"to_string({v})"
            elif f.ref and f.schema.get("type") != "array":
                v = f"to_json({v})"
            # A field that needs another is written only with it (stopProfiling's format).
            conds = [conditions[f.name]] + [conditions[n] for n in s.dependent.get(f.name, [])]
            cond = " && ".join(c for c in conds if c)
            if f.schema.get("type") == "array":
                body = ["Json items = Json::array();",
                        f"for (const auto& item : value.{self.member(s, f)})",
                        "  items.push_back(to_json(item));",
                        f'j["{f.name}"] = std::move(items);']
            else:
                body = [f'j["{f.name}"] = {v};']
            if cond and len(body) == 1 and len(f"  if ({cond}) {body[0]}") <= WIDTH:
                out.append(f"  if ({cond}) {body[0]}")
            elif cond:
                out += [f"  if ({cond}) {{"] + [f"    {b}" for b in body] + ["  }"]
            elif len(body) == 1:
                out.append(f"  {body[0]}")
            else:
                out += ["  {"] + [f"    {b}" for b in body] + ["  }"]
        if s.embed:
            member = s.embed[0]
            out += [f"  // Named: items() of a temporary would dangle.",
                    f"  Json {member} = to_json(value.{member});",
                    f"  for (auto& [key, item] : {member}.items()) j[key] = std::move(item);"]
        return out + ["  return j;", "}", ""]


def render(protocol: Protocol) -> dict[str, str]:
    cpp = Cpp(protocol)
    return {HEADER: cpp.header(), SOURCE: cpp.source()}
