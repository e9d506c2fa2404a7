"""Load: many concurrent debug sessions through one `dapprof serve`, some of them profiling at
1 kHz. Prints the round trip of `threads` requests in the sessions that do not profile, first with
nothing profiling and then with the profiling sessions running (side by side in one run), the
daemon's CPU per profiled session, and the samples dropped for clients that read (target: none).

Usage: load.py DAPPROF [--sessions 64] [--profiled 16] [--seconds 20] [--python PY]

Each session has its own debugpy adapter and a small target (0.3 ms of work on a 30-frame stack
every 30 ms). Target: p99 with profiling no more than 1.5x the quiet p99.

The profiling sessions' clients run in a process of their own: decoding 16,000 samples a second in
Python would otherwise hold the GIL that the pingers' threads need, and the round trips measured
would be the harness's own.
"""
from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from stress_common import HERE, Daemon, Pinger, Session, describe_ms, percentile

TARGET = HERE / "target.py"


def phase(daemon: Daemon, pingers: list[Pinger], seconds: float) -> tuple[list[float], float]:
    """Round trips of every pinger over `seconds`, and the daemon's CPU seconds meanwhile."""
    cpu, start = daemon.cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    end = time.monotonic()
    return [rtt for p in pingers for rtt in p.between(start, end)], daemon.cpu_seconds() - cpu


def profiling_clients(port: int, pid: int, count: int, stop_file: Path, python: str, conn):
    """The profiled sessions, in their own process: opened at once, then "start" starts
    profiling at 1 kHz in all, "stop" stops it and answers (delivered, dropped), "end" ends them.
    Anything that fails is sent back as the error's text."""
    daemon = SimpleNamespace(port=port, pid=pid)
    sessions: list[Session] = []
    marks: list[int] = []
    try:
        for _ in range(count):
            sessions.append(Session(daemon, TARGET, [stop_file, 30, 0.3, 30], python, timeout=120))
        conn.send("ready")
        while (command := conn.recv()) != "end":
            if command == "start":
                marks = [len(s.client.received) for s in sessions]
                for s in sessions:
                    started = s.client.call("startProfiling", {"rate": 1000}, 30)
                    assert started["success"], started
                conn.send("started")
            elif command == "stop":
                delivered = dropped = 0
                for s, mark in zip(sessions, marks):
                    summary = s.client.call("stopProfiling", {}, 60)["body"]
                    stream = s.stream(mark)
                    assert stream.delivered == summary["sampleCount"], (stream.delivered, summary)
                    delivered += stream.delivered
                    dropped += summary["droppedSampleCount"]
                conn.send((delivered, dropped))
    except BaseException as e:  # noqa: BLE001 (reported to the parent, which fails the run)
        conn.send(f"error: {e!r}")
    finally:
        for s in sessions:
            s.end()


def expect(conn, what: str, timeout: float):
    if not conn.poll(timeout):
        raise SystemExit(f"the profiling clients did not answer {what!r} in {timeout:.0f} s")
    answer = conn.recv()
    if isinstance(answer, str) and answer.startswith("error"):
        raise SystemExit(f"the profiling clients failed: {answer}")
    return answer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dapprof")
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--profiled", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--python", default="/usr/bin/python3")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        work = Path(tmp_name)
        stop_file = work / "stop"
        daemon = Daemon(args.dapprof, args.python, work)
        sessions: list[Session] = []
        pingers: list[Pinger] = []
        conn, child_end = multiprocessing.get_context("spawn").Pipe()
        profilers = multiprocessing.get_context("spawn").Process(
            target=profiling_clients, daemon=True,
            args=(daemon.port, daemon.pid, args.profiled, stop_file, args.python, child_end))
        try:
            began = time.monotonic()
            profilers.start()
            for _ in range(args.sessions - args.profiled):
                sessions.append(Session(daemon, TARGET, [stop_file, 30, 0.3, 30], args.python,
                                        timeout=120))
            expect(conn, "ready", 600)
            print(f"{args.sessions} sessions launched in {time.monotonic() - began:.0f} s; "
                  f"daemon: {daemon.resources()}", flush=True)
            quiet = sessions
            pingers = [Pinger(s) for s in quiet]
            for p in pingers:
                p.start()
            time.sleep(2)  # every pinger under way
            quiet_rtts, quiet_cpu = phase(daemon, pingers, args.seconds)
            conn.send("start")
            expect(conn, "started", 120)
            time.sleep(2)
            loaded_rtts, loaded_cpu = phase(daemon, pingers, args.seconds)
            rss = daemon.resources().rss_kib
            conn.send("stop")
            delivered, dropped = expect(conn, "stop", 600)
            failures = sum(p.failures for p in pingers)
        finally:
            for p in pingers:
                p.stop()
            if profilers.is_alive():
                conn.send("end")
                profilers.join(120)
            # Ended while their programs run: a program that ends first makes each disconnect
            # wait for the session's own end, seconds apiece over 64 sessions.
            for s in sessions:
                s.end()
            stop_file.write_text("stop")
            daemon.stop()
    print(f"\n`threads` round trips in the {len(quiet)} sessions that do not profile:")
    print(f"  nothing profiling:        {describe_ms(quiet_rtts)}")
    print(f"  {args.profiled} profiling at 1 kHz:  {describe_ms(loaded_rtts)}")
    ratio = percentile(loaded_rtts, 0.99) / percentile(quiet_rtts, 0.99)
    median_ratio = statistics.median(loaded_rtts) / statistics.median(quiet_rtts)
    print(f"  ratio profiling / quiet:  median {median_ratio:.2f}x, p99 {ratio:.2f}x "
          f"(target p99 <= 1.5x)")
    per_session = (loaded_cpu - quiet_cpu) / args.seconds / args.profiled * 100
    print(f"daemon CPU: quiet {quiet_cpu / args.seconds * 100:.1f}% of a core, profiling "
          f"{loaded_cpu / args.seconds * 100:.1f}%: {per_session:.2f}% of a core per profiled "
          f"session; RSS {rss / 1024:.1f} MiB")
    print(f"samples: {delivered} delivered, {dropped} dropped (target 0); "
          f"failed requests: {failures}")
    sys.exit(0 if dropped == 0 and failures == 0 else 1)


if __name__ == "__main__":
    main()
