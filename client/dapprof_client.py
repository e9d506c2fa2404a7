#!/usr/bin/env python3
"""Runs the dapprof_client package next to this file: `python3 client/dapprof_client.py ...`.

Only a launcher, never imported: with client/ on sys.path, `import dapprof_client` finds the
package directory client/dapprof_client/, since Python's path finder prefers a package to a
module of the same name in the same directory. For one file to copy elsewhere, build
dapprof-client.pyz (client/build_single_file.py)."""
import sys

try:
    from dapprof_client.cli import main
except ImportError as e:  # this file alone, without the package beside it
    sys.exit(f"{__file__}: cannot import the dapprof_client package ({e}): run this file from "
             "dapprof's client/ directory, or use the single-file dapprof-client.pyz "
             "(python3 client/build_single_file.py)")

if __name__ == "__main__":
    sys.exit(main())
