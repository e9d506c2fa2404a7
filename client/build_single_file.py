#!/usr/bin/env python3
"""Builds dapprof-client.pyz: the dapprof_client package as one file (a zip application), for
users who want a single file to copy. Standard library only.

    python3 client/build_single_file.py [-o dapprof-client.pyz]
    python3 dapprof-client.pyz --duration 10 --export speedscope=out.json app.py
    PYTHONPATH=dapprof-client.pyz python3 -c 'from dapprof_client import Session'
"""
import argparse
import os
import shutil
import sys
import tempfile
import zipapp

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "dapprof_client"
MAIN = f"""import sys

from {PACKAGE}.cli import main

sys.exit(main())
"""


def build(target: str, interpreter: str = "/usr/bin/env python3") -> str:
    """Writes the zip application to `target`; returns its absolute path."""
    target = os.path.abspath(target)
    with tempfile.TemporaryDirectory() as stage:
        # The archive holds the package itself (its modules import each other relatively) and a
        # __main__.py that runs its command line and exits with its status (zipapp's own
        # main= would drop the status).
        shutil.copytree(os.path.join(HERE, PACKAGE), os.path.join(stage, PACKAGE),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        with open(os.path.join(stage, "__main__.py"), "w", encoding="utf-8") as f:
            f.write(MAIN)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        zipapp.create_archive(stage, target, interpreter=interpreter)
    return target


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--output", default="dapprof-client.pyz", metavar="FILE",
                   help="the file to write (default dapprof-client.pyz)")
    p.add_argument("--python", default="/usr/bin/env python3", metavar="INTERPRETER",
                   help="the #! line's interpreter (default: /usr/bin/env python3)")
    opts = p.parse_args()
    print(build(opts.output, opts.python))
    return 0


if __name__ == "__main__":
    sys.exit(main())
