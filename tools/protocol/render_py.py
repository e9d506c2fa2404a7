"""Python of the protocol: client/dapprof_client/protocol.py, the names and numbers of the
protocol for the Python client (which builds its messages as dicts)."""
from __future__ import annotations

import textwrap

from protocol_model import Protocol, SUPPORTS_PROFILING, SUPPORTS_PROFILING_STACKS, snake

OUTPUT = "client/dapprof_client/protocol.py"
WIDTH = 100


def comment(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=f"{indent}# ",
                         subsequent_indent=f"{indent}# ", break_on_hyphens=False) if text else []


def render(protocol: Protocol) -> dict[str, str]:
    p = protocol
    out = [
        '"""The profiling protocol\'s names and numbers: commands, events, error ids, formats, and',
        "the startProfiling arguments' defaults and ranges.",
        "",
        "Generated from schemas/*.schema.json by tools/protocol/generate.py. Do not edit: change the",
        "schemas (or the generator) and run `python3 tools/protocol/generate.py --output`; the test",
        "protocol_generated fails when this file is stale. docs/PROFILING.md describes every field.",
        '"""',
        "from __future__ import annotations",
        "",
        "import enum",
        "",
        "# The requests of the profiling extension.",
    ]
    out += [f'{snake(c).upper()} = "{c}"' for c in p.commands]
    out += ["# Its events."] + [f'{snake(e).upper()} = "{e}"' for e in p.events]
    out += ["# The capability in the initialize response that says the adapter has them.",
            f'{snake(SUPPORTS_PROFILING).upper()} = "{SUPPORTS_PROFILING}"',
            "# The capability that says startProfiling accepts `stacks`.",
            f'{snake(SUPPORTS_PROFILING_STACKS).upper()} = "{SUPPORTS_PROFILING_STACKS}"', "", "",
            "class ErrorId(enum.IntEnum):",
            '    """body.error.id of an error response to a profiling request."""', ""]
    for e in p.errors:
        out += comment(e.description, "    ") + [f"    {e.name} = {e.value}"]
    out += ["", "",
            '# The file formats of the "format" fields (stopProfiling, exportProfile), in the',
            "# schemas' order.",
            f"FORMATS: tuple[str, ...] = ({', '.join(repr_str(n) for n in p.formats)})",
            f"DEFAULT_FORMAT = {repr_str(p.default_format)}"]
    names = {"reason": "STOP_REASONS", "origin": "ORIGINS", "state": "TASK_STATES"}
    for key, e in p.enums.items():
        out += comment(e.description or f"The values of {key}.")
        out.append(f"{names.get(e.field, snake(e.field).upper() + 'S')}: tuple[str, ...] = "
                   f"({', '.join(repr_str(v) for v in e.values)})")
    start = p.struct("startProfilingArguments")
    defaults = [(f.name, f.schema["default"]) for f in start.fields if "default" in f.schema]
    ranges = [(f.name, f.schema["minimum"], f.schema["maximum"]) for f in start.fields
              if f.schema.get("type") == "integer" and "minimum" in f.schema and "maximum" in f.schema]
    out += ["", "# What the daemon takes for each startProfiling argument that is absent.",
            "START_DEFAULTS: dict[str, object] = {"]
    out += [f"    {repr_str(n)}: {v!r}," for n, v in defaults] + ["}"]
    out += ["# The inclusive (minimum, maximum) of the startProfiling arguments that have a range.",
            "START_RANGES: dict[str, tuple[int, int]] = {"]
    out += [f"    {repr_str(n)}: ({lo}, {hi})," for n, lo, hi in ranges] + ["}", ""]
    return {OUTPUT: "\n".join(out)}


def repr_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
