"""Soak: one debug session through `dapprof serve` profiling a 100-frame stack at 1 kHz for many
minutes. Prints the daemon's RSS over time (target: flat and under 50 MiB) and, per minute, the
p99 of `threads` round trips on the same session and of the age of each profilingData event's
oldest sample when the client reads it (target: the last minute's as the first's).

Usage: soak.py DAPPROF [--minutes 10] [--python PY]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from stress_common import HERE, Daemon, Pinger, Session, percentile

TARGET = HERE / "target.py"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dapprof")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--python", default="/usr/bin/python3")
    args = parser.parse_args()
    rss: list[tuple[float, int]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        work = Path(tmp_name)
        stop_file = work / "stop"
        daemon = Daemon(args.dapprof, args.python, work)
        session = Session(daemon, TARGET, [stop_file, 100, 1000, 0], args.python)
        pinger = Pinger(session, 0.1)
        try:
            started = session.client.call("startProfiling", {"rate": 1000})
            assert started["success"], started
            began = time.monotonic()
            began_wall = time.time()  # the clock of received_at and of the events' startTime
            pinger.start()
            end = began + args.minutes * 60
            print(f"{'time':>6} {'daemon RSS':>11}", flush=True)
            while time.monotonic() < end:
                now = time.monotonic() - began
                rss.append((now, daemon.resources().rss_kib))
                print(f"{now:5.0f}s {rss[-1][1] / 1024:9.1f} MiB", flush=True)
                time.sleep(min(30, max(0, end - time.monotonic())))
            rss.append((time.monotonic() - began, daemon.resources().rss_kib))
            pinger.stop()
            summary = session.client.call("stopProfiling", {}, 60)["body"]
            # Counted, not decoded: checking ten minutes of 100-frame stacks against the schema
            # would take the client longer than the run (the live tests check the stream).
            events = [(m["body"], at) for m, at in zip(list(session.client.received),
                                                       list(session.client.received_at))
                      if m.get("event") == "profilingData"]
            delivered = sum(body["sampleCount"] for body, _ in events)
            assert delivered == summary["sampleCount"], (delivered, summary)
            ages = [(at - began_wall, at * 1000 - body["startTime"]) for body, at in events
                    if body["sampleCount"]]
        finally:
            pinger.stop()
            session.end()
            stop_file.write_text("stop")
            daemon.stop()
    print(f"{rss[-1][0]:5.0f}s {rss[-1][1] / 1024:9.1f} MiB (end)")
    minutes = int(args.minutes)
    print(f"\n{'minute':>6} {'threads p99':>12} {'data age p99':>13}")
    for minute in range(minutes):
        start, stop = began + minute * 60, began + (minute + 1) * 60
        rtts = pinger.between(start, stop)
        minute_ages = [age for t, age in ages if minute * 60 <= t < (minute + 1) * 60]
        print(f"{minute + 1:6} {percentile(rtts, 0.99) * 1000:9.2f} ms "
              f"{percentile(minute_ages, 0.99):10.1f} ms")
    settled = [kib for t, kib in rss if t >= 60] or [rss[-1][1]]
    growth = (settled[-1] - settled[0]) / 1024
    peak = max(kib for _, kib in rss) / 1024
    print(f"\nsamples: {summary['sampleCount']} delivered, {summary['droppedSampleCount']} "
          f"dropped; daemon RSS after the first minute {settled[0] / 1024:.1f} MiB, at the end "
          f"{settled[-1] / 1024:.1f} MiB ({growth:+.1f} MiB), peak {peak:.1f} MiB "
          f"(target: flat, under 50 MiB)")
    sys.exit(0 if peak < 50 else 1)


if __name__ == "__main__":
    main()
