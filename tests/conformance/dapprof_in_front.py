"""pytest plugin for debugpy's own test suite: every debug adapter its tests spawn runs behind
`dapprof stdio`, so that the suite's DAP conversations go through dapprof.

Loaded with `-p dapprof_in_front` (this folder on PYTHONPATH) from debugpy's checkout, and active
only when DAPPROF_IN_FRONT names the dapprof binary. debugpy's tests build the adapter's command
line in Session.spawn_adapter; the adapter they would have run is kept as it is (same interpreter,
same arguments, same environment) and becomes dapprof's `--` adapter command, so the only change
is one process in the middle of the pipes. Nothing of debugpy's is edited on disk.

Optional:
  DAPPROF_IN_FRONT_LOG_DIR   one dapprof log (and DAP trace, below) per adapter spawned, named
                             after the test, for finding out why a test behaves differently
  DAPPROF_IN_FRONT_TRACE=1   also --trace-dap into that folder
"""
from __future__ import annotations

import itertools
import os
import re

_counter = itertools.count(1)


def _log_stem() -> str:
    # PYTEST_CURRENT_TEST is "path::name[params] (call)"; one file per spawn, in test order.
    test = os.environ.get("PYTEST_CURRENT_TEST", "unknown").rsplit(" ", 1)[0]
    stem = re.sub(r"[^A-Za-z0-9_.\[\]-]+", "_", test.split("::", 1)[-1])[:150]
    return f"{stem}.{os.getpid()}.{next(_counter)}"


def dapprof_argv(dapprof: str, adapter_argv: list[str]) -> list[str]:
    argv = [dapprof, "stdio", "--python", adapter_argv[0]]
    log_dir = os.environ.get("DAPPROF_IN_FRONT_LOG_DIR")
    if log_dir:
        os.makedirs(log_dir, exist_ok=True)
        stem = os.path.join(log_dir, _log_stem())
        argv += ["--log-file", stem + ".log", "--log-level", "debug"]
        if os.environ.get("DAPPROF_IN_FRONT_TRACE") == "1":
            argv += ["--trace-dap", stem + ".dap.jsonl"]
    # Everything after `--` is the adapter's own command line, options included.
    return argv + ["--", *adapter_argv]


def _install(dapprof: str) -> None:
    # Imported here, not at plugin load: debugpy's tests package must be imported after pytest
    # has set up assertion rewriting for it (tests/__init__.py registers it).
    from tests.debug import session as session_module

    Session = session_module.Session
    if getattr(Session.spawn_adapter, "_dapprof_in_front", False):
        return
    original = Session.spawn_adapter

    def spawn_adapter(self, args=()):
        # spawn_adapter builds its argv with _make_python_cmdline and nothing else does while it
        # runs, so wrapping that one call on this instance changes only the adapter's argv.
        build = self._make_python_cmdline

        def cmdline(exe, *rest):
            return dapprof_argv(dapprof, build(exe, *rest))

        self._make_python_cmdline = cmdline
        try:
            return original(self, args)
        finally:
            del self._make_python_cmdline

    spawn_adapter._dapprof_in_front = True
    # Session.__init__ binds self.spawn_adapter when a session is made, so patching the class
    # before any test runs reaches every session.
    Session.spawn_adapter = spawn_adapter


def pytest_configure(config):
    dapprof = os.environ.get("DAPPROF_IN_FRONT")
    if not dapprof:
        return
    if not os.access(dapprof, os.X_OK):
        raise RuntimeError(f"DAPPROF_IN_FRONT={dapprof!r} is not an executable")
    _install(os.path.abspath(dapprof))


def pytest_report_header(config):
    dapprof = os.environ.get("DAPPROF_IN_FRONT")
    return f"debug adapters run behind: {dapprof}" if dapprof else "debug adapters run directly"
