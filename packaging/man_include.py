#!/usr/bin/env python3
"""Writes help2man's include file for dapprof's man page: the NAME line, a COMMANDS section with
every subcommand's own --help (help2man reads only the top-level one), FILES and SEE ALSO. The
subcommands are those `dapprof --help` lists, so a new one is in the page without an edit here.

    man_include.py DAPPROF OUTPUT
"""
from __future__ import annotations

import re
import subprocess
import sys

# CLI11 writes an option's description on its own line, indented, when the option is wide.
OPTION = re.compile(r"^  (\S.*?)(?:\s{2,}(\S.*))?$")
CONTINUATION = re.compile(r"^\s{8,}(\S.*)$")


def roff(text: str) -> str:
    """Text as roff shows it literally: backslashes and hyphens escaped, no leading control."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def help_text(dapprof: str, *args: str) -> list[str]:
    out = subprocess.run([dapprof, *args, "--help"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def subcommands(dapprof: str) -> list[str]:
    lines = help_text(dapprof)
    start = lines.index("Subcommands:") + 1
    names = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        names.append(line.split()[0])
    return names


def command_section(dapprof: str, name: str) -> list[str]:
    """One subcommand's --help as roff: its summary, usage, and each option as a tagged paragraph."""
    lines = help_text(dapprof, name)
    out = [f'.SS "dapprof {name}"', roff(lines[0])]
    items: list[list[str]] = []  # [tag, description] of each option or positional
    for line in lines[1:]:
        if not line.strip():
            continue
        if line.startswith("Usage: "):
            out += [".PP", roff(line)]
        elif not line.startswith(" "):  # "Options:", "Positionals:"
            items.append([line, ""])
        elif (m := CONTINUATION.match(line)) and items and items[-1][0].startswith("  "):
            items[-1][1] = (items[-1][1] + " " + m.group(1)).strip()
        elif m := OPTION.match(line):
            items.append(["  " + m.group(1), m.group(2) or ""])
    for tag, description in items:
        if tag.strip().startswith("-h,--help"):
            continue
        if not tag.startswith("  "):
            out += [".PP", f"\\fI{roff(tag)}\\fR"]
        else:
            out += [".TP", f"\\fB{roff(tag.strip())}\\fR", roff(description)]
    return out


def main() -> int:
    dapprof, output = sys.argv[1:3]
    text = ["[NAME]", "dapprof \\- live profiler for Python programs debugged in VS Code", "",
            "[COMMANDS]"]
    for name in subcommands(dapprof):
        text += command_section(dapprof, name)
    text += ["", "[FILES]", ".TP", "\\fI/usr/share/dapprof/dapprof\\-linux\\-x64.vsix\\fR",
             "The VS Code extension, with this dapprof inside: install it with",
             "\\fBcode \\-\\-install\\-extension\\fR.", "",
             "[SEE ALSO]",
             "\\fI/usr/share/doc/dapprof/README.md\\fR, and the profiling protocol in",
             "\\fI/usr/share/doc/dapprof/PROFILING.md\\fR."]
    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
