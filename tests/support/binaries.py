"""The built programs the Python tests run, named in the environment by ctest."""
from __future__ import annotations

import os

import pytest


def dapprof_bin() -> str:
    """The dapprof executable that DAPPROF_BIN names; fails the test when there is none."""
    path = os.environ.get("DAPPROF_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("set DAPPROF_BIN to the built dapprof executable (ctest does this)")
    return path
