#!/usr/bin/env python3
"""debugpy's own test suite as dapprof's conformance test.

Runs a selection of debugpy's pytest suite twice from a checkout of debugpy: once as it is, once
with every debug adapter it spawns running behind `dapprof stdio` (the dapprof_in_front plugin
beside this file), and compares the two runs test by test. Every test that passes directly should
pass through dapprof; the ones that do not are listed with the first lines of their failure.

    debugpy_suite.py --debugpy CHECKOUT --dapprof DAPPROF [--python PY] [--jobs N]
                     [--rerun-differences] [PYTEST_SELECTION...]

PYTEST_SELECTION is what pytest is given after the options (files, node ids, `-k EXPR`, ...);
put `--` before it when it starts with a dash. Without one, DEFAULT_SELECTION runs.

The checkout is used as it is: its debugpy comes from its src/ (not an installed debugpy), and
nothing in it is changed. Its pytest.ini asks for `-n8`, which the command line overrides with
--jobs; its other settings (a 120 s timeout per test) stand. Logs, junit files and the dapprof
logs go to --work (a temporary folder by default).

The interpreter needs pytest, pytest-xdist, pytest-timeout, psutil and untangle; debugpy's
requirements also name pytest-cov and pytest-retry, which the suite does not need to run.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Launch and attach-listen tests over most of the suite's DAP surface: breakpoints, stepping,
# threads, evaluation, exceptions, output, input, arguments, environment, run targets and
# consoles (runInTerminal), path mappings, child processes (debugpyAttach, which dapprof
# redirects through itself), the adapter's log options, disconnect.
#
# Left out:
# - attach_pid: it injects code with the checkout's attach binaries, which a plain checkout does
#   not have built, so those fail directly too.
# - attach_connect: the debuggee's debugpy.listen() starts the adapter and the test connects to
#   it; the suite spawns no adapter, so dapprof has no place in them and both runs would be the
#   same.
# - Variations that repeat one DAP conversation with a different debuggee-side detail, so that a
#   run stays near twenty minutes on two busy cores: how pydevd traces (test_frame_eval), how
#   the launcher starts the interpreter (test_custom_python_args), test_systemexit's and the
#   exit-code tests' 380 combinations, test_shell_expansion beyond the program target, the log
#   environment variable's 15, and stdin patching's 10.
# - the web-framework, gevent and numpy tests: packages of their own.
DEFAULT_SELECTION = [
    "tests/debugpy/test_args.py",
    "tests/debugpy/test_breakpoints.py",
    "tests/debugpy/test_completions.py",
    "tests/debugpy/test_disconnect.py",
    "tests/debugpy/test_env.py",
    "tests/debugpy/test_evaluate.py",
    "tests/debugpy/test_exception.py",
    "tests/debugpy/test_exclude_rules.py",
    "tests/debugpy/test_input.py",
    "tests/debugpy/test_justmycode.py",
    "tests/debugpy/test_log.py",
    "tests/debugpy/test_multiproc.py",
    "tests/debugpy/test_output.py",
    "tests/debugpy/test_path_mapping.py",
    "tests/debugpy/test_run.py",
    "tests/debugpy/test_source_mapping.py",
    "tests/debugpy/test_step.py",
    "tests/debugpy/test_stop_on_entry.py",
    "tests/debugpy/test_system_info.py",
    "tests/debugpy/test_threads.py",
    "tests/debugpy/test_vs_specific.py",
    "-k",
    " and ".join(
        f"not ({e})"
        for e in (
            "attach_pid",
            "attach_connect",
            "test_frame_eval",
            "test_custom_python_args",
            "test_systemexit",
            "test_success_exitcodes",
            "test_break_on_system_exit",
            "test_shell_expansion and not program",
            "test_log_dir_env",
            "test_stdin_not_patched",
        )
    ),
]

MODES = ("direct", "dapprof")


@dataclass
class Outcome:
    status: str  # passed, failed, skipped
    message: str = ""


@dataclass
class Run:
    mode: str
    returncode: int
    seconds: float
    outcomes: dict[str, Outcome] = field(default_factory=dict)


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--debugpy", required=True, type=Path, help="checkout of debugpy")
    parser.add_argument("--dapprof", required=True, type=Path, help="the dapprof binary")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter that runs pytest, the adapters and the debuggees (default: this one)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers (default 2)")
    parser.add_argument("--work", type=Path, help="keep logs and junit files here")
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="which runs to make, comma-separated (default: direct,dapprof)",
    )
    parser.add_argument(
        "--direct-junit",
        type=Path,
        help="compare with this junit file of an earlier direct run instead of running directly "
        "again (while iterating on dapprof)",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="also write each dapprof session's DAP trace into the work folder",
    )
    parser.add_argument(
        "--rerun-differences",
        action="store_true",
        help="run the tests whose outcomes differ once more in both modes, to tell a flaky test "
        "from one that differs every time",
    )
    args, selection = parser.parse_known_args(argv)
    if selection and selection[0] == "--":
        selection = selection[1:]
    return args, selection


def pytest_command(args: argparse.Namespace, junit: Path, log_dir: Path, selection: list[str]):
    return [
        args.python,
        # As debugpy's own tox.ini runs it: pydevd warns about frozen modules otherwise.
        "-Xfrozen_modules=off",
        "-m",
        "pytest",
        # The ini file's -n8 is meant for CI machines; a later -n wins.
        "-n",
        str(args.jobs),
        "-p",
        "dapprof_in_front",
        # Nothing written into the checkout but byte code.
        "-p",
        "no:cacheprovider",
        f"--debugpy-log-dir={log_dir}",
        f"--junitxml={junit}",
        # xunit1 records each test's file, which gives back pytest's node ids.
        "-o",
        "junit_family=xunit1",
        "-q",
        "-rN",
        *selection,
    ]


def node_id(case: ET.Element) -> str:
    file = case.get("file", "")
    classname = case.get("classname", "")
    name = case.get("name", "")
    module = file[:-3].replace("/", ".") if file.endswith(".py") else ""
    parts = [file] if file else [classname]
    if module and classname.startswith(module + "."):
        parts += classname[len(module) + 1 :].split(".")
    return "::".join(parts + [name])


def first_lines(text: str, count: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[:count])


def read_junit(path: Path) -> dict[str, Outcome]:
    outcomes: dict[str, Outcome] = {}
    if not path.exists():
        return outcomes
    for case in ET.parse(path).getroot().iter("testcase"):
        test = node_id(case)
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed"
                message = (child.get("message") or "") + "\n" + (child.text or "")
                break
            if child.tag == "skipped":
                status = "skipped"
                message = child.get("message") or ""
        # A test can appear twice (an error in teardown after its call passed): failure wins.
        previous = outcomes.get(test)
        if previous is None or previous.status != "failed":
            outcomes[test] = Outcome(status, message)
    return outcomes


def run_mode(
    args: argparse.Namespace, mode: str, work: Path, selection: list[str], tag: str = ""
) -> Run:
    name = mode + tag
    junit = work / f"{name}.xml"
    log_dir = work / f"{name}-debugpy-logs"
    output = work / f"{name}.out"
    env = dict(os.environ)
    env["DEBUGPY_TEST"] = "1"  # as debugpy's tox.ini sets it
    # The checkout's own debugpy, whatever else the interpreter has installed.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE), str(args.debugpy / "src"), env.get("PYTHONPATH")) if p
    )
    env.pop("DAPPROF_IN_FRONT", None)
    if mode == "dapprof":
        env["DAPPROF_IN_FRONT"] = str(args.dapprof)
        env["DAPPROF_IN_FRONT_LOG_DIR"] = str(work / f"{name}-dapprof-logs")
        if args.trace:
            env["DAPPROF_IN_FRONT_TRACE"] = "1"
    command = pytest_command(args, junit, log_dir, selection)
    print(f"== {name}: {' '.join(command[3:])}", flush=True)
    start = time.monotonic()
    with open(output, "wb") as out:
        proc = subprocess.run(
            command, cwd=args.debugpy, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    seconds = time.monotonic() - start
    run = Run(mode, proc.returncode, seconds, read_junit(junit))
    print(f"   {name}: exit {proc.returncode}, {len(run.outcomes)} tests, {seconds:.0f} s "
          f"(output: {output})", flush=True)
    if not run.outcomes:
        tail = output.read_text(errors="replace").splitlines()[-20:]
        print("   no test results; the run's last lines:\n      " + "\n      ".join(tail))
    return run


def counts(run: Run) -> dict[str, int]:
    result = {"passed": 0, "failed": 0, "skipped": 0}
    for outcome in run.outcomes.values():
        result[outcome.status] += 1
    return result


def print_table(runs: dict[str, Run]) -> None:
    print()
    print(f"{'mode':<10} {'tests':>6} {'passed':>7} {'failed':>7} {'skipped':>8} {'time':>7}")
    for mode, run in runs.items():
        c = counts(run)
        print(f"{mode:<10} {len(run.outcomes):>6} {c['passed']:>7} {c['failed']:>7} "
              f"{c['skipped']:>8} {run.seconds:>6.0f}s")


def differences(direct: Run, proxied: Run) -> list[str]:
    tests = sorted(set(direct.outcomes) | set(proxied.outcomes))
    return [
        t for t in tests
        if getattr(direct.outcomes.get(t), "status", "missing")
        != getattr(proxied.outcomes.get(t), "status", "missing")
    ]


def describe(run: Run, test: str) -> str:
    outcome = run.outcomes.get(test)
    return outcome.status if outcome else "missing"


def main(argv: list[str]) -> int:
    args, selection = parse_args(argv)
    args.debugpy = args.debugpy.resolve()
    args.dapprof = args.dapprof.resolve()
    if not (args.debugpy / "tests" / "debug" / "session.py").exists():
        sys.exit(f"{args.debugpy} is not a checkout of debugpy (no tests/debug/session.py)")
    if not os.access(args.dapprof, os.X_OK):
        sys.exit(f"{args.dapprof} is not an executable")
    modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in modes):
        sys.exit(f"--modes: each one of {', '.join(MODES)}")
    selection = selection or DEFAULT_SELECTION
    if args.work:
        work = args.work.resolve()
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="dapprof-conformance-"))
    print(f"work folder: {work}")
    version = subprocess.run([str(args.dapprof), "--version"], capture_output=True, text=True)
    print(f"dapprof: {((version.stdout or version.stderr).strip().splitlines() or ['?'])[0]}")

    started = time.monotonic()
    runs: dict[str, Run] = {}
    if args.direct_junit:
        runs["direct"] = Run("direct", 0, 0.0, read_junit(args.direct_junit))
        modes = [m for m in modes if m != "direct"]
    runs.update({mode: run_mode(args, mode, work, selection) for mode in modes})
    print_table(runs)
    if len(runs) < 2:
        return 0 if all(r.outcomes for r in runs.values()) else 1
    direct, proxied = runs["direct"], runs["dapprof"]
    if not direct.outcomes or not proxied.outcomes:
        return 1

    differing = differences(direct, proxied)
    reruns: dict[str, Run] = {}
    if differing and args.rerun_differences:
        print(f"\nrunning the {len(differing)} differing tests once more in each mode")
        reruns = {mode: run_mode(args, mode, work, differing, tag="-rerun") for mode in MODES}

    print(f"\n{len(differing)} tests whose outcome differs (direct -> through dapprof):")
    regressions = 0
    for test in differing:
        line = f"  {test}: {describe(direct, test)} -> {describe(proxied, test)}"
        if reruns:
            line += (f"  (again: {describe(reruns['direct'], test)} -> "
                     f"{describe(reruns['dapprof'], test)})")
        print(line)
        outcome = proxied.outcomes.get(test)
        if outcome and outcome.status == "failed":
            print("      " + first_lines(outcome.message).replace("\n", "\n      "))
        if describe(direct, test) == "passed":
            again_passes = reruns and describe(reruns["dapprof"], test) == "passed"
            regressions += 0 if again_passes else 1
    print(f"\npassed directly but not through dapprof: {regressions}"
          f"{' (counting a pass on the rerun as a pass)' if reruns else ''}")
    print(f"total time: {time.monotonic() - started:.0f} s")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
