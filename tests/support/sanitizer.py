"""What an instrumented dapprof changes for the tests that measure it. CMake passes the build's
DAPPROF_SANITIZE to the tests that start dapprof; this is the one place that reads it."""
from __future__ import annotations

import os

# ASan keeps up to 256 MiB of freed blocks in quarantine, plus shadow memory, so the RSS of an
# instrumented dapprof says little of its own memory; LeakSanitizer checks for leaks at its exit.
_SANITIZER_RSS_ALLOWANCE_MIB = 1024


def sanitized() -> bool:
    """Whether the dapprof under test is built with a sanitizer."""
    return bool(os.environ.get("DAPPROF_SANITIZE"))


def rss_bound_mib(plain_mib: float) -> float:
    """An RSS bound for dapprof: `plain_mib` for a plain build, raised under a sanitizer."""
    return plain_mib + _SANITIZER_RSS_ALLOWANCE_MIB if sanitized() else plain_mib
