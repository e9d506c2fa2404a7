"""Names and constants of dapprof's profiling protocol (schemas/, docs/PROFILING.md)."""
# placeholder until tools/protocol/generate.py writes this file
from __future__ import annotations

import enum


class ErrorId(enum.IntEnum):
    """body.error.id of a profiling request's error response."""
    Internal = 2000
    InvalidArguments = 2001
    NoDebuggee = 2002
    AlreadyProfiling = 2003
    NotProfiling = 2004
    NotPython = 2005
    UnsupportedVersion = 2006
    PermissionDenied = 2007
    NoSuchProcess = 2008
    ProcessExited = 2009
    OutputFailed = 2010
    NoProfile = 2011


FORMATS = ("speedscope", "cpuprofile", "collapsed", "flamegraph", "chrometrace")
DEFAULT_FORMAT = "speedscope"

START_PROFILING = "startProfiling"
STOP_PROFILING = "stopProfiling"
EXPORT_PROFILE = "exportProfile"
PROFILING_DATA = "profilingData"
PROFILING_STOPPED = "profilingStopped"
SUPPORTS_PROFILING = "supportsProfiling"

STOP_REASONS = ("requested", "exited", "error", "disconnected")
ORIGINS = ("program", "debugger")

START_DEFAULTS = {
    "rate": 100,
    "native": False,
    "nonblocking": False,
    "idle": False,
    "gil": False,
    "subprocesses": False,
    "batchIntervalMs": 100,
}
START_RANGES = {
    "rate": (1, 10000),
    "batchIntervalMs": (10, 5000),
}
