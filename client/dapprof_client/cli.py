"""The command line: profile a program through dapprof, print the daemon's summary of the run and
write the profile files dapprof makes (exportProfile, or stopProfiling's outputPath)."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import List, Optional, TextIO, Tuple

from .errors import ClientError, ConnectionClosed, RequestFailed
from .protocol import (ASYNC_MODES, DEFAULT_FORMAT, FORMATS, START_DEFAULTS, START_RANGES,
                       SUPPORTS_PROFILING)
from .session import Session, document_bytes

EXIT_OK, EXIT_ERROR, EXIT_PROGRAM_FAILED = 0, 1, 3  # argparse exits 2 on a bad command line


def _host_port(text: str) -> Tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


def _key_value(text: str) -> Tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key, value


def _export(text: str) -> Tuple[str, str]:
    fmt, sep, path = text.partition("=")
    if not sep or not path or fmt not in FORMATS:
        raise argparse.ArgumentTypeError(f"expected FORMAT=FILE with FORMAT one of "
                                         f"{', '.join(FORMATS)}, not {text!r}")
    return fmt, path


class _ExportAs(argparse.Action):
    """--speedscope FILE and --collapsed FILE: --export speedscope=FILE, --export collapsed=FILE."""

    def __call__(self, parser, namespace, values, option_string=None):
        exports = list(getattr(namespace, "export", None) or [])
        exports.append((self.const, values))
        namespace.export = exports


def _range(key: str) -> str:
    low, high = START_RANGES[key]
    return f"{low} to {high}, default {START_DEFAULTS[key]}"


def _prog() -> str:
    name = os.path.basename(sys.argv[0] or "")
    return "python3 -m dapprof_client" if name in ("", "__main__.py", "-m") else name


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=_prog(), usage="%(prog)s [options] (PROGRAM | -m MODULE | "
        "--attach-connect HOST:PORT | --attach) [-- ARGS...]",
        description="Profile a Python program through dapprof: launch it under the debugger, "
        "sample it live, print the top functions and write the profile files dapprof makes.")
    g = p.add_argument_group("dapprof")
    g.add_argument("--connect", type=_host_port, metavar="HOST:PORT",
                   help="a running `dapprof serve` (default: spawn `dapprof stdio`)")
    g.add_argument("--dapprof", default="dapprof", metavar="PATH",
                   help="dapprof executable to spawn when --connect is not given")
    g.add_argument("--daemon-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for the spawned `dapprof stdio`, written as "
                   "--daemon-arg=--python=/usr/bin/python3 (repeatable)")
    g = p.add_argument_group("program")
    g.add_argument("program", nargs="?", help="Python script to launch")
    g.add_argument("-m", dest="module", metavar="MODULE", help="launch a module instead")
    g.add_argument("--attach-connect", type=_host_port, metavar="HOST:PORT",
                   help="attach to a program that called debugpy.listen((HOST, PORT)); the "
                   "spawned dapprof connects to it")
    g.add_argument("--attach", action="store_true",
                   help="attach instead of launching, with --connect to a `dapprof serve "
                   "--connect HOST:PORT` whose upstream is a program that called debugpy.listen")
    g.add_argument("--cwd", help="working directory of the program (default: this one)")
    g.add_argument("--python", metavar="PATH", help="interpreter that runs the program")
    g.add_argument("--env", type=_key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="environment variable for the program (repeatable)")
    g.add_argument("--no-debug-subprocesses", action="store_true",
                   help="do not debug child processes (debugpy's subProcess: false)")
    g.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="how long starting the debug session may take (default 60)")
    g = p.add_argument_group("profiling (startProfiling's arguments; dapprof checks them)")
    g.add_argument("--rate", type=int, metavar="HZ", help=f"samples per second ({_range('rate')})")
    g.add_argument("--native", action="store_true", help="include native (C) frames")
    g.add_argument("--nonblocking", action="store_true", help="never pause the program")
    g.add_argument("--mode", choices=["wall", "cpu", "gil", "exception"],
                   help="which threads to sample (startProfiling's mode): every thread, those on "
                        "a CPU, the GIL's holder, those handling an exception")
    g.add_argument("--idle", action="store_true", help="also sample idle threads (--mode wall)")
    g.add_argument("--gil", action="store_true", help="only the thread holding the GIL (--mode gil)")
    g.add_argument("--subprocesses", action="store_true", help="also sample child processes")
    g.add_argument("--async", dest="async_mode", choices=[m for m in ASYNC_MODES if m != "off"],
                   help="sample by asyncio task: the running task's ('running'), or every "
                   "task's each tick ('all')")
    g.add_argument("--batch-interval", type=int, metavar="MS", help="milliseconds between "
                   f"profilingData events ({_range('batchIntervalMs')})")
    g.add_argument("--stacks", action="store_true", default=None,
                   help="samples as stack IDs with counts, each stack sent once (the default "
                   "when the adapter supports it)")
    g.add_argument("--no-stacks", action="store_false", dest="stacks",
                   help="every sample's frame IDs, as clients written for debugpy's format read")
    g.add_argument("--duration", type=float, metavar="SECONDS",
                   help="profile this long (default: until the program exits or Ctrl-C)")
    g = p.add_argument_group("output (every file and table is made by dapprof)")
    g.add_argument("--export", type=_export, action="append", default=[], metavar="FORMAT=FILE",
                   help="after profiling, get the profile from dapprof (exportProfile) and "
                   f"write it to FILE; FORMAT is one of {', '.join(FORMATS)} (repeatable)")
    g.add_argument("--speedscope", action=_ExportAs, const="speedscope", dest="export",
                   metavar="FILE", help="--export speedscope=FILE")
    g.add_argument("--collapsed", action=_ExportAs, const="collapsed", dest="export",
                   metavar="FILE", help="--export collapsed=FILE")
    g.add_argument("--output", metavar="FILE", help="profile file that dapprof writes itself "
                   "(stopProfiling's outputPath; dapprof must see this path)")
    g.add_argument("--format", choices=FORMATS, default=DEFAULT_FORMAT,
                   help=f"format of --output (default {DEFAULT_FORMAT})")
    g.add_argument("--json-summary", metavar="FILE", help="write the summary as JSON")
    g.add_argument("--record-stream", metavar="FILE", help="write every profilingData event "
                   "body as received, one JSON document a line")
    g.add_argument("--top", type=int, default=15, metavar="N",
                   help="rows of the table of top functions (default 15; dapprof sends 20)")
    g.add_argument("--debugger-frames", action="store_true", help="keep debugpy's own frames "
                   "in the table and the files (hideDebugger: false)")
    g.add_argument("--wait-exit", action="store_true", help="after profiling, let the program "
                   "run to its end (default: terminate it)")
    return p


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    argv = list(sys.argv[1:] if argv is None else argv)
    program_args: List[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, program_args = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    opts = parser.parse_args(argv)
    opts.args = program_args
    targets = [x for x in (opts.program, opts.module, opts.attach_connect, opts.attach) if x]
    if len(targets) != 1:
        parser.error("give exactly one of PROGRAM, -m MODULE, --attach-connect HOST:PORT, "
                     "--attach")
    if opts.attach_connect and opts.connect:
        parser.error("--attach-connect makes the spawned `dapprof stdio` connect to the program; "
                     "with --connect, start the server as `dapprof serve --connect HOST:PORT` "
                     "and give --attach")
    if opts.duration is not None and opts.duration <= 0:
        parser.error("--duration must be positive")
    return opts


def _write(path: str, data: bytes) -> str:
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _say(message: str) -> None:
    sys.stderr.write(f"dapprof_client: {message}\n")
    sys.stderr.flush()


def _open_session(opts) -> Session:
    if opts.connect:
        return Session.connect(*opts.connect)
    daemon_args = list(opts.daemon_arg)
    if opts.attach_connect:
        daemon_args.append("--connect=%s:%d" % opts.attach_connect)
    return Session.spawn(opts.dapprof, tuple(daemon_args))


def _start_debuggee(session: Session, opts) -> None:
    try:
        session.initialize()
    except ConnectionClosed as e:
        raise ClientError(f"{e} before the session started. dapprof's messages say why; often "
                          "the interpreter that runs debugpy's adapter lacks debugpy (choose it "
                          "with dapprof's --python option)") from None
    if not session.capabilities.get(SUPPORTS_PROFILING):
        raise ClientError(f"{session.connection.description} does not support profiling: "
                          "connect to dapprof, not to debugpy itself")
    if opts.attach_connect or opts.attach:
        session.attach(timeout=opts.timeout)
        return
    extra = {"subProcess": False} if opts.no_debug_subprocesses else {}
    session.launch(program=opts.program, module=opts.module, args=opts.args, cwd=opts.cwd,
                   python=opts.python, env=dict(opts.env), timeout=opts.timeout, **extra)


def _finish_profiling(session: Session, opts, problems: List[str]) -> Optional[str]:
    """Stops the run, or collects the one that ended with the program, for the daemon's summary
    with hideDebugger as asked; dapprof writes --output then. Returns the file written."""
    output = os.path.abspath(opts.output) if opts.output else None
    try:
        body = session.stop_profiling(output, opts.format if output else None,
                                      hide_debugger=not opts.debugger_frames)
    except RequestFailed as e:
        problems.append(str(e))
        if session.profiling:
            session.stop_profiling()
        return None
    if output and not (body or {}).get("outputPath"):
        problems.append(f"dapprof wrote no {opts.format} file to {output}: the run ended with "
                        "the program before it was stopped (use a --duration shorter than the "
                        "program's run, or --export)")
    return (body or {}).get("outputPath")


def _export_files(session: Session, opts, problems: List[str]) -> List[dict]:
    """--export: each file's content as dapprof made it (exportProfile), written unchanged."""
    written = []
    for fmt, path in opts.export:
        try:
            body = session.export_profile(fmt, hide_debugger=not opts.debugger_frames)
            path = _write(path, document_bytes(body))
        except ClientError as e:
            problems.append(str(e))
            continue
        except OSError as e:
            problems.append(f"cannot write {path}: {e.strerror or e}")
            continue
        _say(f"wrote {path} ({fmt}, {body.get('sampleCount')} samples, from dapprof)")
        written.append({"format": fmt, "path": path, "sampleCount": body.get("sampleCount"),
                        "fileExtension": body.get("fileExtension")})
    return written


def _wait_quietly(session: Session, timeout: float) -> None:
    try:
        session.wait_terminated(timeout)
    except ClientError:
        pass


def run(opts) -> int:
    with contextlib.ExitStack() as files:
        record = None
        if opts.record_stream:
            path = os.path.abspath(opts.record_stream)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            record = files.enter_context(open(path, "w", encoding="utf-8"))
        return _run(opts, record)


def _run(opts, record: Optional[TextIO]) -> int:
    problems: List[str] = []
    session = _open_session(opts)
    session.record_stream = record
    with session:
        _start_debuggee(session, opts)
        name = os.path.basename(opts.program or opts.module or "attached program")
        try:
            info = session.start_profiling(
                rate=opts.rate, native=opts.native, nonblocking=opts.nonblocking, idle=opts.idle,
                gil=opts.gil, mode=opts.mode, subprocesses=opts.subprocesses,
                batch_interval_ms=opts.batch_interval, name=name, stacks=opts.stacks,
                async_mode=opts.async_mode)
        except ClientError:
            session.disconnect(terminate=True)
            raise
        _say(f"profiling process {info.get('pid')} (Python {info.get('pythonVersion')}) at "
             f"{info.get('rate')} Hz" + (f" for {opts.duration:g} s" if opts.duration else ""))
        if info.get("warning"):
            _say(f"warning: {info['warning']}")
        session.collect(opts.duration)
        written = _finish_profiling(session, opts, problems)
        exports = _export_files(session, opts, problems)
        profile = session.profile
        print(profile.format_summary(opts.top), end="", flush=True)
        if written:
            _say(f"dapprof wrote {written} ({opts.format})")
        if profile.stop_reason == "exited":
            _wait_quietly(session, 10.0)  # for debugpy's `exited` event and its exit code
        program_ended = session.terminated or session.exit_code is not None
        if opts.wait_exit and not program_ended:
            _say("waiting for the program to exit")
            session.wait_terminated()
            program_ended = True
        # A program we terminate has an exit code that says nothing about it.
        code = session.exit_code if program_ended else None
        if opts.json_summary:
            summary = dict(profile.summary_dict(), outputPath=written, exports=exports,
                           exitCode=code)
            text = json.dumps(summary, indent=2)
            _say(f"wrote {_write(opts.json_summary, text.encode('utf-8'))}")
        session.disconnect(terminate=not program_ended)
    for problem in problems:
        _say(f"error: {problem}")
    if problems:
        return EXIT_ERROR
    if code:
        _say(f"the program exited with code {code}")
        return EXIT_PROGRAM_FAILED
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    opts = parse_args(argv)
    try:
        return run(opts)
    except ClientError as e:
        _say(f"error: {e}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
