"""SIGKILL of `dapprof record --pid` at random moments, consistent mode and --native: the target
must keep running with no thread left in a ptrace stop and no tracer attached.

Usage: kill_sampler.py DAPPROF [--repeat 100] [--python PY] [--seed S]

The target keeps its stacks moving (four threads in quick recursive calls), so that the consistent
mode's reads keep finding a changed stack and pause the threads; --native pauses them for every
sample. A quarter of the kills land while dapprof attaches (before it says it is sampling), the
rest at a random moment up to 300 ms into sampling at 1 kHz, so every phase of a sample (seize,
interrupt, wait, read, detach) is hit many times over. After each kill: TracerPid 0, no thread in
state 't' or 'T', and the target's CPU time grows.
"""
from __future__ import annotations

import argparse
import os
import random
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stress_common import cpu_seconds, wait_until  # (also puts tests/support on the path)
from proc_info import task_states, tracer_of  # noqa: E402

TARGET = """
import threading, time

def down(n):
    return 0 if n == 0 else 1 + down(n - 1)

def churn():
    while True:
        for depth in (5, 40, 12, 80, 3):
            down(depth)

for _ in range(3):
    threading.Thread(target=churn, daemon=True).start()
print("ready", flush=True)
churn()
"""


def wait_for_line(stream, timeout: float) -> str:
    ready, _, _ = select.select([stream], [], [], timeout)
    return stream.readline() if ready else ""


def one_kill(dapprof: str, target: int, native: bool, rng: random.Random, out: Path) -> str:
    proc = subprocess.Popen([dapprof, "record", "--pid", str(target), "--rate", "1000",
                             "--format", "raw", "-o", str(out), *(["--native"] if native else [])],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    if rng.random() < 0.25:
        phase = "attaching"
        time.sleep(rng.uniform(0, 0.03))
    else:
        phase = "sampling"
        line = wait_for_line(proc.stdout, 30)
        if not line.startswith("dapprof> Sampling"):
            proc.kill()
            proc.wait()
            raise SystemExit(f"record did not start sampling: {line!r}")
        time.sleep(rng.uniform(0, 0.3))
    proc.kill()
    proc.wait()
    return phase


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dapprof")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp_name:
        target = subprocess.Popen([args.python, "-c", TARGET], stdout=subprocess.PIPE, text=True)
        try:
            assert wait_for_line(target.stdout, 30) == "ready\n"
            print(f"target {target.pid}, seed {seed}")
            print(f"{'mode':11} {'kills':>5} {'attaching':>9} {'sampling':>8} {'left traced':>11} "
                  f"{'left stopped':>12} {'kept running':>12}")
            for native in (False, True):
                phases = {"attaching": 0, "sampling": 0}
                traced = stopped = running = 0
                for index in range(args.repeat):
                    phases[one_kill(args.dapprof, target.pid, native, rng,
                                    Path(tmp_name) / "out.txt")] += 1
                    if tracer_of(target.pid) != 0:
                        traced += 1
                    states = task_states(target.pid)
                    if any(state in "tT" for state in states.values()):
                        stopped += 1
                        print(f"  kill {index + 1}: threads left stopped: {states}")
                    before = cpu_seconds(target.pid)
                    if wait_until(lambda: cpu_seconds(target.pid) > before + 0.02, 5, 0.01):
                        running += 1
                    if target.poll() is not None:
                        raise SystemExit(f"the target died (status {target.returncode})")
                mode = "--native" if native else "consistent"
                print(f"{mode:11} {args.repeat:5} {phases['attaching']:9} {phases['sampling']:8} "
                      f"{traced:11} {stopped:12} {running:12}", flush=True)
                failures += traced + stopped + (args.repeat - running)
        finally:
            target.kill()
            target.wait()
    if failures:
        print(f"FAILED: {failures} kills left the target traced, stopped or not running")
        sys.exit(1)
    print("every kill left the target running, untraced")


if __name__ == "__main__":
    main()
