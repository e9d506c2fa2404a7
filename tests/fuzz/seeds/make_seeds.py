"""Writes the seed inputs of the elf, dwarf_line and python_objects fuzz targets into
tests/fuzz/corpus/<target>/ (the inputs a fuzzing run found stay; seeds are overwritten).

    make_seeds.py

elf: tiny.c built as a shared object, a static PIE and a static executable (no C library, so a
few KB each), DWARF 4 and 5, one stripped; and the headers of the C library, cut short.
dwarf_line: the .debug_line (.debug_line_str, .debug_str) of those builds, DWARF 2 to 5.
python_objects: real line tables of every interpreter tests/support/pythons.py finds (and 3.7),
one thread state with a two-frame stack of every version layout, built from the generated
layouts, and the same stack made cyclic.
"""
import json
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CORPUS = HERE.parent / "corpus"
GCC_FLAGS = ["-O1", "-nostdlib", "-Wl,--eh-frame-hdr", "-Wl,-z,max-page-size=4096",
             "-Wl,-z,noseparate-code"]
BUILDS = {  # name: extra flags
    "so_dwarf4": ["-gdwarf-4", "-fPIC", "-shared"],
    "so_dwarf5": ["-gdwarf-5", "-fPIC", "-shared"],
    "pie_dwarf5": ["-gdwarf-5", "-static-pie"],
    "exe_dwarf3": ["-gdwarf-3", "-no-pie", "-static"],
    "exe_dwarf2": ["-gdwarf-2", "-no-pie", "-static"],
}


def build_elves(work: Path) -> dict:
    out = {}
    shutil.copy(HERE / "tiny.c", work / "tiny.c")
    for name, flags in BUILDS.items():
        path = work / name
        # Built where the seed names no directory of this machine.
        subprocess.run(["gcc", *GCC_FLAGS, *flags, "-gno-record-gcc-switches",
                        f"-fdebug-prefix-map={work}=/src", "-o", path, "tiny.c"],
                       check=True, cwd=work)
        out[name] = path
    stripped = work / "so_stripped"
    subprocess.run(["strip", "-o", stripped, out["so_dwarf5"]], check=True)
    out["so_stripped"] = stripped
    return out


def section(elf: Path, name: str, work: Path) -> bytes:
    dump = work / "section"
    dump.unlink(missing_ok=True)
    result = subprocess.run(["objcopy", "--dump-section", f"{name}={dump}", elf, work / "scratch"],
                            capture_output=True)
    return dump.read_bytes() if result.returncode == 0 and dump.exists() else b""


def symbols(elf: Path) -> list:
    out = subprocess.run(["nm", elf], capture_output=True, text=True, check=True).stdout
    return [int(line.split()[0], 16) for line in out.splitlines() if " T " in line]


def write(target: str, name: str, data: bytes):
    (CORPUS / target).mkdir(parents=True, exist_ok=True)
    (CORPUS / target / name).write_bytes(data)


def elf_seeds(elves: dict):
    for name, path in elves.items():
        write("elf", name, path.read_bytes())
    libc = Path("/lib/x86_64-linux-gnu/libc.so.6")
    if libc.exists():
        write("elf", "libc_headers", libc.read_bytes()[:2048])


def dwarf_line_seeds(elves: dict, work: Path):
    for name, path in elves.items():
        line = section(path, ".debug_line", work)
        if not line:
            continue
        line_str = section(path, ".debug_line_str", work)
        strs = section(path, ".debug_str", work)
        lookups = (symbols(path) + [0, 0, 0, 0])[:4]
        lookups = [a + 4 if a else 0 for a in lookups]  # inside the functions
        header = struct.pack("<II4Q", len(line), len(line_str), *lookups)
        write("dwarf_line", name, header + line + line_str + strs)


# --- python_objects ----------------------------------------------------------------------------
BASE, STRIDE = 0x100000, 0x100000
MODES = {"threads": 0, "frames": 1, "object": 2, "line_tables": 3, "debug_offsets": 4}


def layouts() -> list:
    """[(major, minor, {field: value})] in the order of the generated table."""
    text = (REPO / "src/sampler/python/layouts_generated.cpp").read_text()
    tables = {}
    for m in re.finditer(r"constexpr LayoutField k3_(\d+)\[\] = \{(.*?)\n\};", text, re.S):
        tables[int(m.group(1))] = {k: int(v) for k, v in
                                   re.findall(r'\{"([a-z_.0-9]+)", (\d+)\}', m.group(2))}
    order = [int(m) for m in re.findall(r"\{3, (\d+), \"3\.\d+\.\d+\", k3_\d+\}", text)]
    return [(3, minor, tables[minor]) for minor in order]


def header(version_index: int, mode: str, start: int, interp: int = 0, flags: int = 0) -> bytes:
    return struct.pack("<BBB5xQQ5Q", version_index, MODES[mode], flags, start, interp,
                       0, 0, 0, 0, 0)


def regions(parts: list) -> bytes:
    return b"".join(struct.pack("<I", len(p)) + bytes(p) for p in parts)


class Region(bytearray):
    def put(self, offset: int, fmt: str, *values):
        end = offset + struct.calcsize(fmt)
        if end > len(self):
            self.extend(b"\0" * (end - len(self)))
        struct.pack_into(fmt, self, offset, *values)


def put_str(r: Region, at: int, f: dict, text: str):
    """A compact ASCII str at offset `at` of region `r`."""
    r.put(at + f["object.type"], "<Q", 0)
    r.put(at + f["unicode.length"], "<q", len(text))
    r.put(at + f["unicode.state"], "<I", (1 << 2) | (1 << 5) | (1 << 6))  # kind 1, compact, ascii
    r.put(at + f["unicode.ascii_size"], f"<{len(text) + 1}s", text.encode())


def put_bytes(r: Region, at: int, f: dict, data: bytes):
    r.put(at + f["bytes.size"], "<q", len(data))
    r.put(at + f["bytes.sval"], f"<{len(data) + 1}s", data)


def stack_regions(minor: int, f: dict, cyclic: bool) -> bytes:
    """A thread state whose stack is two frames of one code object, with one local (an int);
    `cyclic`: the older frame's caller is the newer one, read nonblocking (an error, not a
    truncated walk)."""
    interp, tstate, frames, code, strs, objs = (BASE + k * STRIDE for k in range(6))
    r = [Region() for _ in range(6)]
    # r[0], the interpreter state, stays empty: only its address is compared.
    r[1].put(f["tstate.next"], "<Q", 0)
    r[1].put(f["tstate.interp"], "<Q", interp)
    r[1].put(f["tstate.thread_id"], "<Q", 0x7f0000001000)
    top, older = frames + 0x300, frames + 0x100
    if "tstate.frame" in f:
        r[1].put(f["tstate.frame"], "<Q", top)
    elif "tstate.current_frame" in f:
        r[1].put(f["tstate.current_frame"], "<Q", top)
    else:  # 3.11-3.12: through the _PyCFrame
        cframe = f["tstate.size"]  # right after the thread state
        r[1].put(f["tstate.cframe"], "<Q", tstate + cframe)
        r[1].put(cframe + f["cframe.current_frame"], "<Q", top)
    r[1].put(f["tstate.size"], "<Q", 0)
    for frame, previous in ((top, older), (older, top if cyclic else 0)):
        at = frame - frames
        r[2].put(at + f["frame.previous"], "<Q", previous)
        r[2].put(at + f["frame.code"], "<Q", code)
        if "frame.lasti" in f:
            r[2].put(at + f["frame.lasti"], "<i", 1)
        else:
            r[2].put(at + f["frame.instr"], "<Q", code + f["code.code_adaptive"] + 4)
            r[2].put(at + f["frame.owner"], "<B", 0)
        r[2].put(at + f["frame.localsplus"], "<Q", objs + 0x200)
        r[2].put(at + f.get("frame.size", 0x180) + 0x40, "<Q", 0)
    r[3].put(f["object.type"], "<Q", 0)
    r[3].put(f["code.name"], "<Q", strs)
    if "code.qualname" in f:
        r[3].put(f["code.qualname"], "<Q", strs)
    r[3].put(f["code.filename"], "<Q", strs + 0x100)
    r[3].put(f["code.linetable"], "<Q", strs + 0x200)
    r[3].put(f["code.firstlineno"], "<i", 10)
    r[3].put(f["code.argcount"], "<i", 1)
    if "code.varnames" in f:
        r[3].put(f["code.nlocals"], "<i", 1)
        r[3].put(f["code.varnames"], "<Q", objs)
        r[3].put(f["code.cellvars"], "<Q", objs + 0x180)
        r[3].put(f["code.freevars"], "<Q", objs + 0x180)
    else:
        r[3].put(f["code.localsplusnames"], "<Q", objs)
        r[3].put(f["code.localspluskinds"], "<Q", objs + 0x100)
    r[3].put(f["code.size"], "<Q", 0)
    put_str(r[4], 0, f, "work")
    put_str(r[4], 0x100, f, "/srv/app/work.py")
    table = (bytes([0x80 | (13 << 3) | 3, 2, 0x80 | 7, 0]) if minor >= 11  # locations
             else bytes([4, 1, 4, 1]))  # lnotab / 3.10 linetable pairs
    put_bytes(r[4], 0x200, f, table)
    r[5].put(f["tuple.size"], "<q", 1)  # the names of the locals: ("n",)
    r[5].put(f["tuple.items"], "<Q", objs + 0x300)
    put_bytes(r[5], 0x100, f, b"\x00")  # its kind: a plain local
    r[5].put(0x180 + f["tuple.size"], "<q", 0)
    r[5].put(0x200 + f["object.type"], "<Q", objs + 0x400)  # n = 42
    r[5].put(0x200 + f["long.size"], "<q", (1 << 3) if minor >= 12 else 1)
    r[5].put(0x200 + f["long.digit"], "<I", 42)
    put_str(r[5], 0x300, f, "n")
    r[5].put(0x400 + f["type.name"], "<Q", objs + 0x500)  # the int type, named by tp_name
    r[5].put(0x500, "<32s", b"int")
    return regions(r)


def interpreter_data() -> list:
    """What dump_line_tables.py says of every interpreter, and of 3.7 (not one of pythons.py's)."""
    data = json.loads(subprocess.run(
        [sys.executable, REPO / "tests/sampler/python/dump_line_tables.py"],
        capture_output=True, text=True, check=True).stdout)["interpreters"]
    for py37 in (Path.home() / ".pyenv/versions").glob("3.7.*/bin/python3"):
        single = subprocess.run([py37, REPO / "tests/sampler/python/dump_line_tables.py", "--single"],
                                capture_output=True, text=True, check=True).stdout
        data.append({"label": "pyenv-3.7", **json.loads(single)})
    return data


def line_table_seeds(data: list, version_index: dict):
    """Each interpreter's tables of a few sample functions and its largest (threading's module)."""
    for interp in data:
        minor = int(interp["version"].split(".")[1])
        functions = interp["functions"]
        wanted = ("sample_loops", "sample_try", "sample_big_jump", "sample_generator")
        chosen = [fn for fn in functions if fn["name"] in wanted]
        chosen.append(max(functions, key=lambda fn: len(fn["table"])))
        for fn in chosen:
            name = f"lines_{interp['label']}_{fn['name'].strip('<>')}"
            write("python_objects", name, header(version_index[minor], "line_tables", 0,
                                                 fn["first_line"]) +
                  regions([bytes.fromhex(fn["table"])]))


def python_seeds():
    all_layouts = layouts()
    version_index = {minor: i for i, (_, minor, _) in enumerate(all_layouts)}
    tstate, interp, strs, ints = BASE + STRIDE, BASE, BASE + 4 * STRIDE, BASE + 5 * STRIDE + 0x200
    data = interpreter_data()
    debug_offsets = {int(i["version"].split(".")[1]): bytes.fromhex(i["debug_offsets"])
                     for i in data if i["debug_offsets"]}
    for i, (_, minor, fields) in enumerate(all_layouts):
        stack = stack_regions(minor, fields, cyclic=False)
        if minor in debug_offsets:  # the same stack, walked with the layout the target publishes
            write("python_objects", f"debug_offsets_3.{minor}",
                  header(i, "debug_offsets", tstate, interp) + regions([debug_offsets[minor]]) +
                  stack[4:])
        write("python_objects", f"stack_3.{minor}", header(i, "threads", tstate, interp) + stack)
        write("python_objects", f"cyclic_stack_3.{minor}",
              header(i, "threads", tstate, interp, flags=1) +
              stack_regions(minor, fields, cyclic=True))
        write("python_objects", f"str_3.{minor}", header(i, "object", strs) + stack)
        write("python_objects", f"int_3.{minor}", header(i, "object", ints) + stack)
    line_table_seeds(data, version_index)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elves = build_elves(work)
        elf_seeds(elves)
        dwarf_line_seeds(elves, work)
    python_seeds()


if __name__ == "__main__":
    main()
