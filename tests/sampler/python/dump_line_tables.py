"""Dumps the line tables of real code objects, with the line CPython itself gives every
instruction, the memory of sample str objects and (3.13+) _Py_DebugOffsets, as JSON for the
sampler's unit tests.

    dump_line_tables.py            runs itself under every interpreter of tests/support/pythons.py
                                   and prints {"interpreters": [...]}
    dump_line_tables.py --single   prints this interpreter's functions only

Ground truth comes from CPython's own APIs, not from a decoder of ours: dis.findlinestarts
(3.8-3.9), co_lines() (3.10), co_positions() (3.11+), whose columns are checked too.
"""
import json
import subprocess
import sys
from pathlib import Path


# --- sample code: constructs that exercise every encoding ----------------------------------
def sample_loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        elif i % 5 == 0:
            total -= 1
        else:
            continue
    while total > 100:
        total //= 2
    return total


def sample_try(x):
    try:
        y = 1 / x
    except ZeroDivisionError:
        y = None
    finally:
        x = 0
    with open(__file__) as f:
        f.read(1)
    return y


def sample_multiline(a, b):
    return (a +
            b *
            (a -
             b)) if a else [
        x for x in range(b)
        if x
    ]


def sample_long_line(values):
    return [value_with_a_very_long_name_for_columns for value_with_a_very_long_name_for_columns in values if value_with_a_very_long_name_for_columns is not None and value_with_a_very_long_name_for_columns != 0 and value_with_a_very_long_name_for_columns]  # noqa: E501


def sample_big_jump(x):
    y = x
    # A gap of more than 127 lines forces multi-entry deltas in every format.
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    #
    y += 1
    return y


def sample_generator(n):
    for i in range(n):
        yield i * 2
    yield from range(3)


async def sample_coroutine(other):
    await other
    return 1


def all_code(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield from all_code(const)


def lines_of(code):
    """The line of every code unit (2-byte step), 0 where CPython has none."""
    if sys.version_info >= (3, 11):
        return [p[0] or 0 for p in code.co_positions()]
    n = len(code.co_code) // 2
    lines = [0] * n
    if sys.version_info >= (3, 10):
        for start, end, line in code.co_lines():
            for off in range(start, end, 2):
                if off // 2 < n:
                    lines[off // 2] = line or 0
        return lines
    import dis
    starts = list(dis.findlinestarts(code))
    for i in range(n):
        line = code.co_firstlineno
        for off, ln in starts:
            if off <= 2 * i:
                line = ln
        lines[i] = line
    return lines


def positions_of(code):
    """3.11+: co_positions() of every code unit as [line, end line, column, end column], 0 for a
    line and -1 for a column CPython has none of (None)."""
    if sys.version_info < (3, 11):
        return []
    return [[p[0] or 0, p[1] or 0, -1 if p[2] is None else p[2], -1 if p[3] is None else p[3]]
            for p in code.co_positions()]


def single():
    import threading
    roots = [f.__code__ for f in (sample_loops, sample_try, sample_multiline, sample_long_line,
                                  sample_big_jump, sample_generator, sample_coroutine)]
    roots.append(compile(Path(threading.__file__).read_text(), threading.__file__, "exec"))
    if sys.version_info >= (3, 11):
        fmt, table = "locations", "co_linetable"
    elif sys.version_info >= (3, 10):
        fmt, table = "linetable310", "co_linetable"
    else:
        fmt, table = "lnotab", "co_lnotab"
    functions = []
    for root in roots:
        for code in all_code(root):
            functions.append({
                "name": code.co_name,
                "first_line": code.co_firstlineno,
                "format": fmt,
                "table": getattr(code, table).hex(),
                "lines": lines_of(code),
                "positions": positions_of(code),
            })
    return {"version": ".".join(map(str, sys.version_info[:3])), "functions": functions,
            "strings": strings(), "debug_offsets": debug_offsets()}


SAMPLE_STRINGS = ["", "abc", "threading", "caf\u00e9", "\u00fc" * 40, "\u041f\u0440\u0438\u0432\u0435\u0442",
                  "\u65e5\u672c\u8a9e_\u95a2\u6570", "\U0001d518\U0001f600x", "mixed_\u00e9_\u4e2d_\U0001f40d"]


def strings():
    """Each sample str object's own memory (header and characters), read with ctypes."""
    import ctypes
    out = []
    for text in SAMPLE_STRINGS:
        obj = "".join([text[:1], text[1:]])  # a fresh object, not an interned constant
        out.append({"text": text, "object": ctypes.string_at(id(obj), sys.getsizeof(obj)).hex()})
    return out


def debug_offsets():
    """3.13+: the _Py_DebugOffsets at the start of this process's _PyRuntime."""
    if sys.version_info < (3, 13):
        return ""
    import ctypes
    runtime = ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime")
    # As many bytes as the sampler reads (kDebugOffsetsReadSize): the struct grows with each minor.
    return ctypes.string_at(ctypes.addressof(runtime), 2048).hex()


def main():
    if "--single" in sys.argv:
        json.dump(single(), sys.stdout)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
    import pythons
    out = {"interpreters": [], "missing": pythons.missing_versions()}
    interps = pythons.interpreters()
    procs = [subprocess.Popen([i.path, __file__, "--single"], stdout=subprocess.PIPE, text=True)
             for i in interps]
    for interp, proc in zip(interps, procs):
        stdout, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"{interp.label} failed with status {proc.returncode}")
        data = json.loads(stdout)
        data["label"] = interp.label
        out["interpreters"].append(data)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
