"""The profiling protocol's names and numbers: commands, events, error ids, formats, and
the startProfiling arguments' defaults and ranges.

Generated from schemas/*.schema.json by tools/protocol/generate.py. Do not edit: change the
schemas (or the generator) and run `python3 tools/protocol/generate.py --output`; the test
protocol_generated fails when this file is stale. docs/PROFILING.md describes every field.
"""
from __future__ import annotations

import enum

# The requests of the profiling extension.
START_PROFILING = "startProfiling"
STOP_PROFILING = "stopProfiling"
EXPORT_PROFILE = "exportProfile"
ASYNC_TASKS = "asyncTasks"
# Its events.
PROFILING_DATA = "profilingData"
PROFILING_STOPPED = "profilingStopped"
# The capability in the initialize response that says the adapter has them.
SUPPORTS_PROFILING = "supportsProfiling"
# The capability that says startProfiling accepts `stacks`.
SUPPORTS_PROFILING_STACKS = "supportsProfilingStacks"


class ErrorId(enum.IntEnum):
    """body.error.id of an error response to a profiling request."""

    # A fault inside dapprof; the message says what failed.
    Internal = 2000
    # An argument is missing, of the wrong type or out of range; the message names it.
    InvalidArguments = 2001
    # The session has no debuggee process (yet): the debug adapter sent no process event.
    NoDebuggee = 2002
    # A run is already starting or running in this session.
    AlreadyProfiling = 2003
    # stopProfiling while no run is running or waiting to be collected.
    NotProfiling = 2004
    # The process is not running a CPython interpreter dapprof can find.
    NotPython = 2005
    # The interpreter's version or build cannot be read by this dapprof.
    UnsupportedVersion = 2006
    # The daemon may not read the process's memory; the message gives the remedy.
    PermissionDenied = 2007
    # The process does not exist, or is not part of this debug session.
    NoSuchProcess = 2008
    # The process exited before sampling could start.
    ProcessExited = 2009
    # The profile file could not be written.
    OutputFailed = 2010
    # exportProfile while the session has no run to export (none was started, or it did not start).
    NoProfile = 2011
    # asyncTasks on a process that has not imported asyncio: it has no tasks.
    NoAsyncio = 2012


# The file formats of the "format" fields (stopProfiling, exportProfile), in the
# schemas' order.
FORMATS: tuple[str, ...] = ("speedscope", "cpuprofile", "collapsed", "flamegraph", "chrometrace", "pprof", "gecko")
DEFAULT_FORMAT = "speedscope"
# The values of profilingStopped.reason.
STOP_REASONS: tuple[str, ...] = ("requested", "exited", "error", "disconnected")
# Whose code the frame runs, as the daemon classifies it once: "debugger" for debugpy's and pydevd's
# own frames (Python, or their compiled modules), which a view of the program may hide. Absent means
# "program". Independent of native: a compiled pydevd frame is both.
ORIGINS: tuple[str, ...] = ("program", "debugger")
# An asyncio task's frame (runs with async sampling): `function` is the task's name, `file` is empty
# and `line` 0, and the value is the task's state at that sample, part of the frame's identity:
# "running" (its thread's event loop was stepping it), "waiting" (suspended; a task awaiting another
# is waiting), "cancelling" (cancel() was asked and it has not finished), "unknown" (the version
# does not tell). Absent for other frames.
TASK_STATES: tuple[str, ...] = ("running", "waiting", "cancelling", "unknown")
# Sampling by asyncio task. "running": a thread that is running a task has that task's stack: its
# coroutine frames under a frame of the task (frames with `task`), under the tasks that await it,
# under one "(event loop)" frame standing for the loop's own frames. "all": that, and every other
# pending task once per tick as well, as a waiting task's stack that ends where it awaits (wall
# time, kept whatever `idle` says). Threads that run no task keep their own stacks. Default "off":
# threads' stacks as they are.
ASYNC_MODES: tuple[str, ...] = ("off", "running", "all")
# Which threads a sample holds, by name as CPython 3.15's own profiler (`python -m
# profiling.sampling --mode`) names them. "wall": every thread, idle ones included (as `idle`).
# "cpu": threads the kernel shows on a CPU or runnable (state R), whatever Python code they run or
# whether they hold the GIL. "gil": only the thread holding the GIL, running or not (as `gil`).
# "exception": only threads handling an exception (inside an `except` or `finally` block, or a
# `with` block's __exit__ seeing one), with a frame of kind `exception` naming its type on top of
# the stack. "active", the default: threads the kernel shows running and not waiting in a well-known
# waiting function (threading's waits, selectors, socket accept): "cpu" without the threads caught
# between two waits. `idle` and `gil` are older names for "wall" and "gil"; a `mode` other than
# "active" with a conflicting `idle` or `gil` is refused (invalidArguments).
SAMPLING_MODES: tuple[str, ...] = ("active", "wall", "cpu", "gil", "exception")
# How content holds the document: text, or base64 of the bytes of a binary format (pprof). A client
# writes the decoded bytes to the file.
CONTENT_ENCODINGS: tuple[str, ...] = ("text", "base64")

# What the daemon takes for each startProfiling argument that is absent.
START_DEFAULTS: dict[str, object] = {
    "rate": 100,
    "native": False,
    "nonblocking": False,
    "mode": 'active',
    "idle": False,
    "gil": False,
    "gc": True,
    "opcodes": False,
    "subprocesses": False,
    "async": 'off',
    "batchIntervalMs": 100,
    "stacks": False,
}
# The inclusive (minimum, maximum) of the startProfiling arguments that have a range.
START_RANGES: dict[str, tuple[int, int]] = {
    "rate": (1, 10000),
    "batchIntervalMs": (10, 5000),
    "pid": (1, 2147483647),
    "processId": (1, 2147483647),
}
