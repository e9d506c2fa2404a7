"""Faults survived: rounds of real debugpy sessions through one `dapprof serve`, each profiling at
1 kHz, in which one party is hurt at a random moment. After every round the daemon must answer a
new session, have reaped every child, and be back to its baseline of open files and threads, its
RSS within a few MiB of it (8 by default; more when DAPPROF_SANITIZE says the daemon is
instrumented).

Usage: chaos.py DAPPROF [--rounds 200] [--seed S] [--python PY] [--rss-slack-mib MIB]

Faults, drawn in turn from a shuffled cycle so that each occurs equally often:
  kill-debuggee   SIGKILL of the program: profilingStopped must arrive
  kill-adapter    SIGKILL of debugpy's adapter: terminated must arrive
  kill-client     the client's connection reset: the daemon ends the session by itself
  client-closes   the client's connection closed without disconnect (a window reload, a
                  crashed client): the daemon ends the session as debugpy's adapter would
  stdio-client-closes
                  the same through `dapprof stdio` (its standard input closed): it must exit
  stop-debuggee   SIGSTOP of the program for a second, then SIGCONT, then a normal stop
  stall-client    the client stops reading for 1-4 s, then a normal stop
  none            a normal stop
After every round, every process the session started (the adapter, debugpy's launcher, the
launched program) must have ended: by `disconnect`, or, for a client gone without it, because
the daemon ended the session (the program is told to stop by itself only after that check).
A normal stop writes the profile, and its samples must add up: delivered + dropped = taken (the
file holds every sample taken). Prints one line per round and a table per fault; exits non-zero at
the first round that breaks a rule, with the seed to replay it.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

from stress_common import (TARGET, Daemon, DapError, Session, StdioDaemon, gone,
                           kill_quietly, read_collapsed, wait_until)
from sanitizer import rss_bound_mib  # noqa: E402 (tests/support, on the path through stress_common)

FAULTS = ["kill-debuggee", "kill-adapter", "kill-client", "client-closes", "stdio-client-closes",
          "stop-debuggee", "stall-client", "none"]
# The client goes without disconnect: the daemon alone must end the session.
VANISHING = {"kill-client", "client-closes", "stdio-client-closes"}


class RoundFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise RoundFailed(message)


def normal_stop(session: Session, out: Path) -> str:
    result = session.client.call("stopProfiling", {"outputPath": str(out), "format": "collapsed"},
                                 60)
    check(result["success"], f"stopProfiling failed: {result}")
    summary = result["body"]
    stream = session.stream()
    empty = sum(1 for _, stack in stream.stacks if not stack)  # collapsed files skip these
    taken = sum(read_collapsed(out).values()) + empty
    check(stream.delivered == summary["sampleCount"],
          f"delivered {stream.delivered} != summary's {summary['sampleCount']}")
    check(stream.dropped == summary["droppedSampleCount"],
          f"dropped {stream.dropped} != summary's {summary['droppedSampleCount']}")
    check(stream.delivered + stream.dropped == taken,
          f"delivered {stream.delivered} + dropped {stream.dropped} != taken {taken}")
    return f"{stream.delivered} delivered + {stream.dropped} dropped = {taken} taken"


def one_round(daemon: Daemon, fault: str, rng: random.Random, python: str, work: Path,
              index: int) -> str:
    stop_file = work / f"stop-{index}"
    host = StdioDaemon(daemon.dapprof, python, work) if fault.startswith("stdio-") else daemon
    session = Session(host, TARGET, [stop_file, "120"], python, gated=True)
    try:
        started = session.client.call("startProfiling", {"rate": 1000, "batchIntervalMs": 50})
        check(started["success"], f"startProfiling failed: {started}")
        time.sleep(rng.uniform(0.05, 1.0))
        out = work / f"round-{index}.txt"
        if fault == "kill-debuggee":
            kill_quietly(session.debuggee)
            check(session.saw_event("profilingStopped", 20), "no profilingStopped")
            outcome = "profilingStopped"
        elif fault == "kill-adapter":
            check(session.adapter is not None, "the session's adapter was not found")
            kill_quietly(session.adapter)
            check(session.saw_event("terminated", 20), "no terminated")
            outcome = "terminated"
        elif fault == "kill-client":
            session.client.vanish(reset=True)
            outcome = "reset"
        elif fault in ("client-closes", "stdio-client-closes"):
            session.client.vanish()
            outcome = "closed without disconnect"
        elif fault == "stop-debuggee":
            kill_quietly(session.debuggee, signal.SIGSTOP)
            time.sleep(1.0)
            kill_quietly(session.debuggee, signal.SIGCONT)
            time.sleep(rng.uniform(0.05, 0.5))
            outcome = normal_stop(session, out)
        elif fault == "stall-client":
            session.client.gate.clear()
            time.sleep(rng.uniform(1.0, 4.0))
            session.client.gate.set()
            outcome = normal_stop(session, out)
        else:
            outcome = normal_stop(session, out)
        if fault not in VANISHING:
            session.end()
        left = lambda: [pid for pid in session.processes if not gone(pid)]  # noqa: E731
        began = time.monotonic()
        check(wait_until(lambda: not left(), 20), f"processes of the session left: {left()}")
        if fault in VANISHING:
            outcome += f", its processes ended in {time.monotonic() - began:.1f} s"
        if host is not daemon:
            check(host.proc.wait(timeout=20) == 0, "dapprof stdio did not exit with 0")
    finally:
        session.client.close()
        stop_file.write_text("stop")
        if host is not daemon:
            host.stop()
    check(wait_until(lambda: gone(session.debuggee), 20), "the debuggee was left running")
    return outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dapprof")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--rss-slack-mib", type=float, default=rss_bound_mib(8))
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    print(f"chaos: {args.rounds} rounds, seed {seed}", flush=True)
    outcomes = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp_name:
        work = Path(tmp_name)
        daemon = Daemon(args.dapprof, args.python, work)
        try:
            # The first session sets up what lives as long as the daemon (thread pools, caches):
            # the baseline is taken after it.
            one_round(daemon, "none", rng, args.python, work, -1)
            check(daemon.settled(), "the warm-up session left a child")
            baseline = daemon.resources()
            print(f"baseline after one session: {baseline}", flush=True)
            cycle: list[str] = []
            worst_rss = baseline.rss_kib
            began = time.monotonic()
            for index in range(args.rounds):
                if not cycle:
                    cycle = FAULTS[:]
                    rng.shuffle(cycle)
                fault = cycle.pop()
                started = time.monotonic()
                try:
                    outcome = one_round(daemon, fault, rng, args.python, work, index)
                    check(daemon.alive(), "dapprof exited")
                    check(daemon.settled(), f"children left: {daemon.resources().children}")
                    check(daemon.answers_a_new_session(), "a new session got no answer")
                    check(daemon.settled(), "the probing session left a child")
                    # The daemon closes its side of a session asynchronously; give it a moment.
                    wait_until(lambda: daemon.resources().fds <= baseline.fds, 5)
                    now = daemon.resources()
                    check(now.fds == baseline.fds, f"open files {now.fds} != {baseline.fds}")
                    check(now.threads == baseline.threads,
                          f"threads {now.threads} != {baseline.threads}")
                    check(now.rss_kib <= baseline.rss_kib + args.rss_slack_mib * 1024,
                          f"RSS {now.rss_kib} KiB grew over {args.rss_slack_mib} MiB")
                except (RoundFailed, DapError, AssertionError) as error:
                    print(f"round {index + 1} ({fault}) FAILED: {error}\n"
                          f"replay: chaos.py {args.dapprof} --seed {seed} --rounds {index + 1}\n"
                          f"daemon log: {daemon.log.read_text(errors='replace')[-3000:]}",
                          flush=True)
                    sys.exit(1)
                worst_rss = max(worst_rss, now.rss_kib)
                outcomes[fault].append(time.monotonic() - started)
                print(f"round {index + 1:3} {fault:19} {time.monotonic() - started:5.1f} s  "
                      f"{outcome}; daemon: {now}", flush=True)
            final = daemon.resources()
        finally:
            daemon.stop()
    print(f"\n{args.rounds} rounds in {time.monotonic() - began:.0f} s, seed {seed}: all survived")
    print(f"{'fault':19} {'rounds':>6} {'mean s':>7}")
    for fault in FAULTS:
        times = outcomes[fault]
        if times:
            print(f"{fault:19} {len(times):6} {sum(times) / len(times):7.1f}")
    print(f"daemon: baseline {baseline}; final {final}; highest RSS {worst_rss / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
