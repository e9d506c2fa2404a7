#!/usr/bin/env python3
"""Generates src/sampler/python/layouts_generated.cpp: the offsets of the CPython internals the
sampler reads, one table per architecture (x86_64, aarch64) and minor version, measured by
compiling layouts.c against each interpreter's own headers (with Py_BUILD_CORE) for that
architecture and running it.

    generate.py --output src/sampler/python/layouts_generated.cpp --all
    generate.py --output FILE PYTHON... [--in-root DIR PYTHON]... [--aarch64 PYTHON]...
                [--aarch64-in-root DIR PYTHON]...
    generate.py --check FILE (the same interpreter arguments)

--all is the one command that regenerates the file: every interpreter tests/support/pythons.py
finds (and its 3.7), for x86_64 and again for aarch64, and the emulated arm64 root's
(scripts/arm64-root.sh) own CPython 3.11 for aarch64.

--in-root DIR PYTHON names an interpreter inside another root file system (a Debian unstable root,
a container image): it is asked for its headers with chroot, and layouts.c is compiled on this
machine against DIR's copy of them.

--aarch64 PYTHON and --aarch64-in-root DIR PYTHON measure the aarch64 table of that interpreter's
version: layouts.c is compiled with aarch64-linux-gnu-gcc (crossbuild-essential-arm64), linked
statically, and run under qemu-user (binfmt_misc, scripts/arm64-root.sh). The interpreter may be
an aarch64 one (the arm64 root's), or an x86_64 one, whose headers serve for aarch64 too: their
pyconfig.h differs from an aarch64 build's only in what no struct depends on (x87 and x64 inline
assembly, HAVE_USABLE_WCHAR_T, PY_SUPPORT_TIER: Debian 3.11's two builds compared), so a struct's
offsets there are the aarch64 compiler's. The sizes that differ are the C library's
(pthread_mutex_t is 40 bytes on x86_64, 48 on aarch64). An aarch64 interpreter's own measure
is preferred for a version that has one. An architecture without a table for some version takes
x86_64's, which the generated file marks and the sampler logs.

--check regenerates the table of every given interpreter and compares it with the committed
file's table for the same minor version (exit status 1 and the differences if they disagree).
The build never runs this script; the committed file is what gets compiled.

For 3.8-3.13 the asyncio Task and Future offsets come from layouts.c's mirrors of structs that
_asynciomodule.c keeps private: both modes also run asyncio_probe.py under each interpreter,
which reads those fields of live objects at the measured offsets and compares them with what
Python says (exit status 1, and no file written, if they disagree).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "layouts.c"
PROBE = HERE / "asyncio_probe.py"
REPO = HERE.parents[1]


HOST = "x86_64"
ARCHITECTURES = ["x86_64", "aarch64"]
# What compiles for each architecture on this (x86_64) machine, and the C macro a build of the
# sampler tests to select its tables.
CROSS_CC = {"aarch64": "aarch64-linux-gnu-gcc"}
EMULATOR = {"aarch64": "qemu-aarch64-static"}
MACRO = {"aarch64": "__aarch64__"}


def interpreter_info(python: str, root: str | None) -> tuple[str, str, str, str]:
    """(version 'X.Y.Z', include directory as the interpreter sees it, machine, Debian multiarch
    triplet or '') of an interpreter."""
    out = subprocess.run(
        (["chroot", root] if root else []) + [python, "-c",
         "import platform, sys, sysconfig; print('.'.join(map(str, sys.version_info[:3])));"
         "print(sysconfig.get_paths()['include']); print(platform.machine());"
         "print(sysconfig.get_config_var('MULTIARCH') or '')"],
        capture_output=True, text=True, check=True)
    version, include, machine, multiarch = out.stdout.split("\n")[:4]
    return version, include, machine, multiarch


def measure(python: str, root: str | None = None,
            arch: str = HOST) -> tuple[str, str, list[tuple[str, int]]]:
    """Compiles layouts.c against python's headers for arch and runs it: (version, the machine
    of the interpreter whose headers these are, [(field, value)])."""
    version, include, machine, multiarch = interpreter_info(python, root)
    flags = [f"-I{include}"]
    if root:
        # The root's pyconfig.h includes its multiarch copy from the root's /usr/include; after
        # this machine's own system headers, so that the C library's are this machine's.
        flags = [f"-I{root}{include}", f"-idirafter{root}/usr/include"]
    cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
    run_prefix: list[str] = []
    if arch != HOST:
        cc = CROSS_CC[arch]
        for tool in (cc, EMULATOR[arch]):
            if not shutil.which(tool):
                raise SystemExit(f"{tool} is missing: run scripts/install-deps.sh arm64")
        run_prefix = [EMULATOR[arch]]
        # Static, so that it runs under qemu-user without an arm64 C library at hand.
        flags.append("-static")
    with tempfile.TemporaryDirectory(prefix="dapprof-layouts-") as tmp:
        if arch != machine and multiarch:
            # Debian's pyconfig.h includes <TRIPLET/pythonX.Y/pyconfig.h> of the compiler's
            # architecture; the interpreter's own is the one there is.
            minor = ".".join(version.split(".")[:2])
            shim = Path(tmp) / f"{arch}-linux-gnu" / f"python{minor}" / "pyconfig.h"
            shim.parent.mkdir(parents=True)
            own = Path(f"{root or ''}/usr/include/{multiarch}/python{minor}/pyconfig.h")
            shim.write_text(f'#include "{own}"\n')
            flags.append(f"-idirafter{tmp}")
        exe = Path(tmp) / "layouts"
        subprocess.run([cc, "-std=c11", "-w", *flags, "-o", str(exe), str(SOURCE)], check=True)
        out = subprocess.run(run_prefix + [str(exe)], capture_output=True, text=True,
                             check=True).stdout
    fields = []
    for line in out.splitlines():
        name, value = line.split()
        if name != "version_hex":
            fields.append((name, int(value)))
    return version, machine, fields


def probe_asyncio(python: str, root: str | None, version: str,
                  fields: list[tuple[str, int]]) -> str | None:
    """The asyncio offsets of 3.8-3.13 come from layouts.c's mirrors of structs private to
    _asynciomodule.c, not from the headers: they are checked against live objects of the
    interpreter (asyncio_probe.py). None if they agree, else what disagreed."""
    minor = tuple(int(x) for x in version.split(".")[:2])
    if not (3, 8) <= minor < (3, 14):
        return None
    # As source text: an interpreter inside a root does not see this machine's files.
    out = subprocess.run((["chroot", root] if root else []) +
                         [python, "-c", PROBE.read_text(), json.dumps(dict(fields))],
                         capture_output=True, text=True)
    if out.returncode == 0:
        return None
    return (out.stdout + out.stderr).strip() or f"the probe died with status {out.returncode}"


@dataclass
class Measure:
    label: str  # the interpreter as given, ROOT:PYTHON for one inside a root
    version: str
    arch: str  # the architecture layouts.c was compiled for
    machine: str  # the architecture of the interpreter whose headers it was compiled against
    fields: list[tuple[str, int]]

    @property
    def key(self) -> tuple[int, int]:
        major, minor = (int(x) for x in self.version.split(".")[:2])
        return major, minor

    def describe(self) -> str:
        if self.arch == HOST:
            return f"{self.label} ({self.version})"
        how = "" if self.machine == self.arch else f" from {self.machine} headers"
        return f"{self.label} ({self.version}, for {self.arch}{how})"


def table_name(arch: str, key: tuple[int, int]) -> str:
    # The x86_64 tables keep their names of before there were others.
    prefix = "k" if arch == HOST else f"k{arch.capitalize()}_"
    return f"{prefix}{key[0]}_{key[1]}"


def render(tables: dict[str, dict[tuple[int, int], Measure]]) -> str:
    lines = [
        "// Generated by tools/layouts/generate.py from each interpreter's headers. Do not edit:",
        "// regenerate, and let the layout test compare it with the installed interpreters.",
        '#include "sampler/python/layouts_generated.hpp"',
        "",
        "namespace dapprof::sampler::python {",
        "namespace {",
        "// clang-format off",
    ]
    others = [a for a in ARCHITECTURES if a != HOST]
    for arch in ARCHITECTURES:
        for key, m in sorted(tables[arch].items()):
            if arch == HOST:
                # Compiled where some other architecture takes it for want of its own.
                own = [f"!defined({MACRO[a]})" for a in others if key in tables[a]]
                guard = " && ".join(own)
                lines.append(f"// Measured on CPython {m.version}.")
            else:
                guard = f"defined({MACRO[arch]})"
                how = ("" if m.machine == arch else
                       f" against the headers of its {m.machine} build")
                lines.append(f"// Measured for {arch} on CPython {m.version}{how}.")
            if guard:
                lines.append(f"#if {guard}")
            lines.append(f"constexpr LayoutField {table_name(arch, key)}[] = {{")
            for name, value in m.fields:
                lines.append(f'    {{"{name}", {value}}},')
            lines.append("};")
            if guard:
                lines.append("#endif")
    lines.append("constexpr GeneratedLayout kLayouts[] = {")
    for i, arch in enumerate(others + [HOST]):
        if arch != HOST:
            lines.append(f"#{'el' if i else ''}if defined({MACRO[arch]})")
        else:
            lines.append("#else")
        for key in sorted(set(tables[arch]) | set(tables[HOST])):
            m = tables[arch].get(key) or tables[HOST][key]
            note = "  // not measured for " + arch if m.arch != arch else ""
            lines.append(f'    {{{key[0]}, {key[1]}, "{m.version}", "{m.arch}", '
                         f'{table_name(m.arch, key)}}},{note}')
    lines += [
        "#endif",
        "};",
        "// clang-format on",
        "}  // namespace",
        "",
        "std::span<const GeneratedLayout> generated_layouts() { return kLayouts; }",
        "",
        "}  // namespace dapprof::sampler::python",
        "",
    ]
    return "\n".join(lines)


def parse(text: str, arch: str = HOST) -> dict[tuple[int, int], dict[str, int]]:
    """The committed tables of one architecture, by (major, minor)."""
    tables: dict[tuple[int, int], dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"constexpr LayoutField k(?:([A-Za-z]\w*?)_)?(\d+)_(\d+)\[\] = \{", line)
        if m:
            current = None
            if (m[1] or HOST).lower() == arch.lower():
                current = tables.setdefault((int(m[2]), int(m[3])), {})
            continue
        m = re.match(r'\s+\{"([\w.]+)", (\d+)\},', line)
        if m and current is not None:
            current[m[1]] = int(m[2])
        elif line.startswith("};"):
            current = None
    return tables


def every_interpreter() -> list[tuple[str, str | None, str]]:
    """--all: (python, root, architecture) of every interpreter the tests know, for each
    architecture, and the arm64 root's own."""
    sys.path.insert(0, str(REPO / "tests" / "support"))
    import pythons  # noqa: E402  (the tests' list of interpreters)

    found = [(i.inner_path, i.root or None) for i in pythons.sampler_only() + pythons.interpreters()]
    runs = [(p, r, arch) for arch in ARCHITECTURES for p, r in found]
    out = subprocess.run([str(REPO / "scripts" / "arm64-root.sh"), "--print-path"],
                         capture_output=True, text=True)
    if out.returncode == 0:
        runs.append(("/usr/bin/python3.11", out.stdout.strip().splitlines()[-1], "aarch64"))
    else:
        print(f"not measuring an aarch64 interpreter of its own: {out.stderr.strip()}")
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--output", type=Path)
    group.add_argument("--check", type=Path)
    ap.add_argument("pythons", nargs="*", help="interpreters to measure")
    ap.add_argument("--in-root", nargs=2, action="append", default=[], metavar=("DIR", "PYTHON"),
                    help="an interpreter inside the root file system DIR")
    ap.add_argument("--aarch64", action="append", default=[], metavar="PYTHON",
                    help="measure the aarch64 table of PYTHON's version")
    ap.add_argument("--aarch64-in-root", nargs=2, action="append", default=[],
                    metavar=("DIR", "PYTHON"), help="the same, of an interpreter inside DIR")
    ap.add_argument("--all", action="store_true",
                    help="every interpreter the tests know, for every architecture")
    args = ap.parse_args()
    runs = ([(p, None, HOST) for p in args.pythons] + [(p, r, HOST) for r, p in args.in_root] +
            [(p, None, "aarch64") for p in args.aarch64] +
            [(p, r, "aarch64") for r, p in args.aarch64_in_root])
    if args.all:
        runs += every_interpreter()
    if not runs:
        ap.error("no interpreter given")

    measures: list[Measure] = []
    probe_failures = 0
    for python, root, arch in runs:
        version, machine, fields = measure(python, root, arch)
        m = Measure(f"{root}:{python}" if root else python, version, arch, machine, fields)
        # The probe reads live objects: only an interpreter of the measured architecture can.
        wrong = probe_asyncio(python, root, version, fields) if machine == arch else None
        if wrong:
            print(f"{m.describe()}: the asyncio mirrors of layouts.c disagree with its "
                  f"objects:\n  " + wrong.replace("\n", "\n  "))
            probe_failures += 1
        measures.append(m)

    if args.output:
        if probe_failures:
            return 1
        missing = [a for a in ARCHITECTURES if not any(m.arch == a for m in measures)]
        if missing:
            print(f"nothing measured for {', '.join(missing)}: --output writes every "
                  "architecture's tables (--all, or --aarch64 PYTHON...)")
            return 1
        tables: dict[str, dict[tuple[int, int], Measure]] = {a: {} for a in ARCHITECTURES}
        for m in measures:
            chosen = tables[m.arch].get(m.key)
            # The first given per version, but an interpreter of the architecture itself first.
            if chosen is None or (chosen.machine != m.arch and m.machine == m.arch):
                tables[m.arch][m.key] = m
        args.output.write_text(render(tables))
        for arch in ARCHITECTURES:
            print(f"wrote {args.output} for {arch}: "
                  f"{', '.join(m.version for _, m in sorted(tables[arch].items()))}")
        return 0

    text = args.check.read_text()
    committed = {a: parse(text, a) for a in ARCHITECTURES}
    failures = 0
    for m in sorted(measures, key=lambda m: (ARCHITECTURES.index(m.arch), m.key)):
        key, fields = m.key, m.fields
        which = f"{key[0]}.{key[1]}" if m.arch == HOST else f"{m.arch} {key[0]}.{key[1]}"
        table = committed[m.arch].get(key)
        if table is None:
            print(f"{m.describe()}: no committed table for {which}")
            failures += 1
            continue
        # From 3.13 on the sampler reads struct sizes from the target's _Py_DebugOffsets,
        # and a patch release may grow a struct at its end (3.13.18's PyThreadState is 8
        # bytes longer than 3.13.0's): such a size is shown, not failed.
        grown = [n for n, v in fields if table.get(n) != v and key >= (3, 13)
                 and n.endswith(".size") and not n.startswith("debug.")]
        for n in grown:
            print(f"{m.describe()}: {n} is {dict(fields)[n]}, the committed "
                  f"{which} table has {table[n]} (read from the target at attach)")
        diffs = [f"  {n}: committed {table.get(n)}, measured {v}"
                 for n, v in fields if table.get(n) != v and n not in grown]
        diffs += [f"  {n}: committed but not measured" for n in table
                  if n not in dict(fields)]
        if diffs:
            print(f"{m.describe()} differs from the committed {which} table:")
            print("\n".join(diffs))
            failures += 1
        else:
            print(f"{m.describe()}: matches the committed {which} table")
    return 1 if failures or probe_failures else 0


if __name__ == "__main__":
    sys.exit(main())
