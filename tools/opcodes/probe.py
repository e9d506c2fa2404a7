"""Run by generate.py under each interpreter (as source text, so that an interpreter inside
another root needs none of this machine's files): prints the interpreter's opcode table as JSON,
from its own `opcode` and `dis` modules.

Each named opcode below 256 gets: its name (the specialised forms of 3.11+ included, which only
`dis` numbers), the base opcode it deoptimises to (itself for a base opcode; the family's for a
specialised one; X for INSTRUMENTED_X of 3.12+), and the inline cache entries (code units) that
follow the base opcode in the bytecode."""
import dis
import json
import opcode
import sys

names = list(getattr(dis, "_all_opname", opcode.opname))[:256]
opmap = dict(getattr(dis, "_all_opmap", opcode.opmap))
# 3.13+ number the specialised forms in opcode._specialized_opmap and dis merges them; 3.11-3.12
# only in dis._all_opname.
for name, number in getattr(opcode, "_specialized_opmap", {}).items():
    if number < 256:
        names[number] = name
        opmap[name] = number
base_of = {}
for base, family in getattr(opcode, "_specializations", {}).items():
    for specialised in family:
        base_of[specialised] = base
for name in names:
    if name.startswith("INSTRUMENTED_") and name[len("INSTRUMENTED_"):] in opmap:
        base_of[name] = name[len("INSTRUMENTED_"):]
caches = getattr(opcode, "_inline_cache_entries", None)


def cache_entries(name):
    if caches is None:
        return 0
    if hasattr(caches, "keys"):  # 3.13+: by name (a frozendict on 3.15)
        return caches.get(name, 0)
    return caches[opmap[name]] if opmap[name] < len(caches) else 0  # 3.11-3.12: by number


ops = []
for number, name in enumerate(names):
    if not name or name.startswith("<"):
        continue
    base = base_of.get(name, name)
    ops.append([number, name, opmap.get(base, number), cache_entries(base)])
print(json.dumps({
    "version": ".".join(map(str, sys.version_info[:3])),
    "extended_arg": opcode.opmap["EXTENDED_ARG"],
    "cache": opcode.opmap.get("CACHE", -1),
    "ops": ops,
}))
