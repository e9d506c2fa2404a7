"""The protocol as the renderers see it: the JSON Schemas of schemas/, checked and indexed, with the
names each language gives their types. Anything the schemas say that a renderer would not carry
over (an unknown keyword, a schema no type is named for, formats that disagree) stops generation,
so that the generated code cannot silently fall behind the schemas."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from bindings import EMBEDS, ENUMS, FORMAT_FIELD, TYPES

ID_PREFIX = "urn:dapprof:protocol:v1:"
ERROR_SCHEMA = "profilingErrorResponse"
# The initialize capabilities are DAP's, not messages of the extension: no schema describes them.
SUPPORTS_PROFILING = "supportsProfiling"
# startProfiling accepts `stacks` (profilingData with stack IDs and counts).
SUPPORTS_PROFILING_STACKS = "supportsProfilingStacks"

# What the C++ parsers check; any other keyword in a C++ struct's fields stops generation.
FIELD_KEYWORDS = {"type", "minimum", "maximum", "pattern", "enum", "default", "description",
                  "items", "maxItems", "$ref"}
OBJECT_KEYWORDS = {"$schema", "$id", "title", "description", "type", "properties", "required",
                   "$defs", "dependentRequired", "not"}


class GenerationError(Exception):
    pass


@dataclass
class Field:
    name: str  # as in JSON (camelCase)
    schema: dict  # the property's schema, a $ref to a scalar definition resolved
    required: bool
    ref: str | None = None  # the object definition it (or its items) refers to
    enum: str | None = None  # "format", or an ENUMS key joined "owner.field"


@dataclass
class Struct:
    name: str  # the schema's or definition's name
    kind: str  # arguments, response, event or def
    subject: str  # the command, event or definition
    description: str
    cpp: str | None
    ts: str
    fields: list[Field]
    dependent: dict[str, list[str]] = field(default_factory=dict)
    not_both: tuple[str, str] | None = None
    embed: tuple[str, Struct] | None = None  # (C++ member, struct whose fields are repeated)


@dataclass
class ErrorId:
    value: int
    name: str
    description: str


@dataclass
class Enum:
    values: list[str]
    cpp: str | None
    ts: str
    ts_list: str
    field: str
    description: str


@dataclass
class Protocol:
    commands: list[str]
    events: list[str]
    errors: list[ErrorId]
    formats: list[str]
    default_format: str
    model_formats: dict[str, str]  # protocol name -> model::ProfileFormat enumerator
    enums: dict[str, Enum]
    structs: list[Struct]  # definitions first, then in TYPES order
    defs: dict[str, dict]  # every schema's $defs, by name

    def struct(self, name: str) -> Struct:
        return next(s for s in self.structs if s.name == name)

    def declared_enums(self) -> list[tuple[str, Enum]]:
        """Each enum type once: fields that share one (ENUMS names the same types for both) are
        declared by the first."""
        seen, out = set(), []
        for key, e in self.enums.items():
            if e.ts not in seen:
                seen.add(e.ts)
                out.append((key, e))
        return out


def load_schemas(directory: Path) -> dict[str, dict]:
    schemas = {}
    for path in sorted(directory.glob("*.schema.json")):
        name = path.name[: -len(".schema.json")]
        schema = json.loads(path.read_text(encoding="utf-8"))
        if schema.get("$id") != ID_PREFIX + name:
            raise GenerationError(f"{path}: $id must be {ID_PREFIX}{name}")
        schemas[name] = schema
    if not schemas:
        raise GenerationError(f"no *.schema.json in {directory}")
    return schemas


def model_formats(header: Path) -> list[str]:
    """The enumerators of model::ProfileFormat, in declaration order."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", header.read_text(encoding="utf-8"), flags=re.S)
    m = re.search(r"enum\s+class\s+ProfileFormat\s*(?::\s*[\w:]+\s*)?\{(.*?)\}", text, re.S)
    if not m:
        raise GenerationError(f"{header}: no enum class ProfileFormat")
    return [e.split("=")[0].strip() for e in m[1].split(",") if e.strip()]


def _classify(name: str) -> tuple[str, str]:
    if name.endswith("Arguments"):
        return "arguments", name[: -len("Arguments")]
    if name.endswith("Response"):
        return "response", name[: -len("Response")]
    return "event", name


def _error_ids(schema: dict) -> list[ErrorId]:
    id_schema = schema["properties"]["body"]["properties"]["error"]["properties"]["id"]
    errors = [ErrorId(o["const"], o["title"], o.get("description", "")) for o in id_schema["oneOf"]]
    for kind, values in (("value", [e.value for e in errors]), ("name", [e.name for e in errors])):
        if len(set(values)) != len(values):
            raise GenerationError(f"{ERROR_SCHEMA}: an error id {kind} is listed twice")
    for e in errors:
        if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", e.name):
            raise GenerationError(f"{ERROR_SCHEMA}: error id title {e.name!r} is not a PascalCase name")
    return errors


def _field(owner: str, name: str, prop: dict, required: bool, defs: dict[str, dict]) -> Field:
    f = Field(name, prop, required)
    target = prop.get("items", prop)
    if "$ref" in target:
        ref = target["$ref"].removeprefix("#/$defs/")
        if ref not in defs:
            raise GenerationError(f"{owner}.{name}: unknown $ref {target['$ref']}")
        if defs[ref].get("type") == "object":
            f.ref = ref
        elif target is prop:  # a scalar definition (frameId): its constraints, inline
            f.schema = {**defs[ref], **{k: v for k, v in prop.items() if k != "$ref"}}
    if "enum" in prop:
        if name == FORMAT_FIELD:
            f.enum = FORMAT_FIELD
        elif (owner, name) in ENUMS:
            f.enum = f"{owner}.{name}"
        elif all(isinstance(v, str) for v in prop["enum"]):
            raise GenerationError(f"{owner}.{name}: a string enum without a type: add it to "
                                  "bindings.py ENUMS")
    return f


def _struct(name: str, kind: str, subject: str, schema: dict, defs: dict[str, dict]) -> Struct:
    cpp, ts = TYPES[name]
    unknown = set(schema) - OBJECT_KEYWORDS
    if cpp and unknown:
        raise GenerationError(f"{name}: keywords the generator does not carry over: {sorted(unknown)}")
    required = set(schema.get("required", []))
    fields = [_field(name, n, p, n in required, defs) for n, p in schema.get("properties", {}).items()]
    s = Struct(name, kind, subject, schema.get("description", schema.get("title", "")), cpp, ts,
               fields, dict(schema.get("dependentRequired", {})))
    if cpp:
        for f in fields:
            extra = set(f.schema) - FIELD_KEYWORDS - ({"$ref"} if f.ref else set())
            if extra:
                raise GenerationError(f"{name}.{f.name}: keywords the generator does not carry over: "
                                      f"{sorted(extra)}")
    if "not" in schema:
        s.not_both = _not_both(name, schema["not"], fields)
    return s


def _not_both(name: str, rule: dict, fields: list[Field]) -> tuple[str, str]:
    """Only the form `not: {properties: {a: {const: true}, b: {const: true}}, required: [a, b]}`."""
    props = rule.get("properties", {})
    names = list(props)
    booleans = {f.name for f in fields if f.schema.get("type") == "boolean"}
    if (set(rule) != {"properties", "required"} or len(names) != 2
            or set(rule["required"]) != set(names)
            or any(p != {"const": True} for p in props.values()) or not set(names) <= booleans):
        raise GenerationError(f"{name}: only a `not` of two booleans both true is supported")
    return names[0], names[1]


def _check_embed(outer: Struct, inner: Struct, schemas: dict[str, dict]) -> None:
    own = {f.name for f in outer.fields} - {f.name for f in inner.fields}
    repeated = [f for f in outer.fields if f.name not in own]
    if [(f.name, f.schema, f.required) for f in repeated] != \
            [(f.name, f.schema, f.required) for f in inner.fields]:
        raise GenerationError(f"{outer.name} must repeat the fields of {inner.name} exactly, in order")
    outer.fields = [f for f in outer.fields if f.name in own]


def build(schemas: dict[str, dict], model_enumerators: list[str]) -> Protocol:
    for name in schemas:
        if name != ERROR_SCHEMA and name not in TYPES:
            raise GenerationError(f"schema {name} has no type in tools/protocol/bindings.py TYPES")
    if ERROR_SCHEMA not in schemas:
        raise GenerationError(f"schemas/{ERROR_SCHEMA}.schema.json is missing")
    error_schema = schemas[ERROR_SCHEMA]
    commands = list(error_schema["properties"]["command"]["enum"])

    defs: dict[str, dict] = {}
    for name, schema in schemas.items():
        for d, s in schema.get("$defs", {}).items():
            if d in defs and defs[d] != s:
                raise GenerationError(f"$defs/{d} differs between schemas")
            defs[d] = s

    structs, events = [], []
    for name, (cpp, ts) in TYPES.items():
        if name in defs:
            structs.append(_struct(name, "def", name, defs[name], defs))
            continue
        if name not in schemas:
            raise GenerationError(f"TYPES names {name}, but there is no such schema or definition")
        kind, subject = _classify(name)
        if kind == "event":
            events.append(subject)
        elif subject not in commands:
            raise GenerationError(f"{name}: {subject} is not among {ERROR_SCHEMA}'s commands")
        structs.append(_struct(name, kind, subject, schemas[name], defs))
    for command in commands:
        if f"{command}Arguments" not in schemas:
            raise GenerationError(f"command {command} has no {command}Arguments schema")
    by_name = {s.name: s for s in structs}
    for outer, (member, inner) in EMBEDS.items():
        _check_embed(by_name[outer], by_name[inner], schemas)
        by_name[outer].embed = (member, by_name[inner])

    format_fields = [(s.name, f) for s in structs for f in s.fields if f.enum == FORMAT_FIELD]
    formats = format_fields[0][1].schema["enum"]
    for owner, f in format_fields:
        if f.schema["enum"] != formats:
            raise GenerationError(f"{owner}.format lists other formats than {format_fields[0][0]}")
    defaults = {f.schema["default"] for _, f in format_fields if "default" in f.schema}
    if len(defaults) != 1:
        raise GenerationError(f"the format fields must share one default, not {sorted(defaults)}")
    by_lower = {e.lower(): e for e in model_enumerators}
    for name in formats:
        if name not in by_lower:
            raise GenerationError(f"format {name!r} of the schemas has no model::ProfileFormat "
                                  f"enumerator (lowercased: one of {sorted(by_lower)})")
    for lower, e in by_lower.items():
        if lower not in formats:  # to_string must name every enumerator
            raise GenerationError(f"model::ProfileFormat::{e} has no protocol name: add {lower!r} "
                                  "to the schemas' format enums")

    enums = {}
    for (owner, name), (cpp, ts, ts_list) in ENUMS.items():
        f = next((f for f in by_name[owner].fields if f.name == name), None)
        if f is None:
            raise GenerationError(f"ENUMS names {owner}.{name}, which the schemas do not have")
        enums[f"{owner}.{name}"] = Enum(list(f.schema["enum"]), cpp, ts, ts_list, name,
                                        f.schema.get("description", ""))
    for key, e in enums.items():
        for other_key, other in enums.items():
            if other.ts == e.ts and (other.values, other.cpp) != (e.values, e.cpp):
                raise GenerationError(f"{key} and {other_key} share the type {e.ts} but not "
                                      "its values")

    return Protocol(commands, events, _error_ids(error_schema), list(formats), defaults.pop(),
                    {n: by_lower[n] for n in formats}, enums, structs, defs)


def pascal(name: str) -> str:
    return name[:1].upper() + name[1:]


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
