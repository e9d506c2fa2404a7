"""Live profiling benchmark: what profiling through dapprof costs the debugged program, what the
profilingData stream costs on the wire, and how fresh its data is.

Usage: live_bench.py DAPPROF [--python PY] [--rounds N] [--work-rounds R]

All setups run side by side in one run (interleaved, N rounds each; median and fastest run
reported), through one `dapprof serve` and real debugpy launching bench/live/cpu_work.py:
  - debugged, not profiled (the reference);
  - profiled through dapprof at 100 Hz and 1000 Hz, consistent (the default) and nonblocking;
  - the same consistent, with `stacks` (samples as stack IDs with counts, each stack sent once);
  - the in-process approach first proposed for debugpy (inprocess_baseline.py: a sys.setprofile
    hook capturing the stack every 10 ms).
Targets: slowdown under 1% at 100 Hz and 1000 Hz consistent; far below the in-process
baseline. Wire: bytes per sample vs frames written out in full in every sample (target at least
90% smaller in steady state; 95% with stacks). Latency: the age of each event's oldest sample when the client reads
it (an upper bound for every sample of the event); target p99 under batchIntervalMs + 20 ms.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "adapter"))
from dapclient import DapClient  # noqa: E402  (the tests' DAP client: framing, waits, timeouts)

WORK = HERE / "cpu_work.py"
BASELINE = HERE / "inprocess_baseline.py"
BATCH_MS = 100
INITIALIZE = {"clientID": "dapprof-bench", "adapterID": "dapprof", "pathFormat": "path",
              "linesStartAt1": True, "columnsStartAt1": True}

SETUPS = [
    ("debugged, not profiled", None),
    ("dapprof 100 Hz consistent", {"rate": 100}),
    ("dapprof 100 Hz nonblocking", {"rate": 100, "nonblocking": True}),
    ("dapprof 1000 Hz consistent", {"rate": 1000}),
    ("dapprof 1000 Hz nonblocking", {"rate": 1000, "nonblocking": True}),
    ("dapprof 100 Hz consistent, stacks", {"rate": 100, "stacks": True}),
    ("dapprof 1000 Hz consistent, stacks", {"rate": 1000, "stacks": True}),
    ("in-process setprofile, 10 ms", "baseline"),
]

# The slowdowns the sampler issue was filed with (median), beside this run's: the default mode
# was then blocking, which the consistent mode replaced.
FILED = {
    "dapprof 100 Hz consistent": "+7.5% (blocking)",
    "dapprof 100 Hz nonblocking": "+1%",
    "dapprof 1000 Hz consistent": "+22% (blocking)",
    "dapprof 1000 Hz nonblocking": "+3%",
}


def start_serve(dapprof: str, python: str, tmp: Path):
    port_file = tmp / "port"
    proc = subprocess.Popen([dapprof, "serve", "--listen", "127.0.0.1:0", "--port-file",
                             str(port_file), "--python", python, "--log-level", "warn"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip():
            return proc, int(port_file.read_text())
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("dapprof serve did not start")


def one_run(port: int, python: str, setup, work_rounds: int, tmp: Path) -> dict:
    go = tmp / f"go-{time.monotonic_ns()}"
    client = DapClient.over_socket("127.0.0.1", port)
    try:
        client.call("initialize", INITIALIZE)
        program, args = WORK, [str(work_rounds), str(go)]
        if setup == "baseline":
            program, args = BASELINE, [str(WORK), *args]
        seq = client.request("launch", {"program": str(program), "args": args,
                                        "console": "internalConsole", "python": [python],
                                        "justMyCode": True, "subProcess": False})
        client.wait_event("initialized")
        client.call("configurationDone")
        client.wait_response(seq, 60)
        client.wait_event("process", 60)
        if isinstance(setup, dict):
            started = client.call("startProfiling", {**setup, "batchIntervalMs": BATCH_MS})
            assert started["success"], started
        go.write_text("go")
        out = client.wait_for(lambda m: m.get("event") == "output" and
                              "WORK_SECONDS" in m["body"].get("output", ""), 300, "WORK_SECONDS")
        seconds = float(re.search(r"WORK_SECONDS ([0-9.]+)", out["body"]["output"]).group(1))
        client.wait_event("terminated", 60)
        client.call("disconnect", {})
        return {"seconds": seconds, "events": [(m, t) for m, t in
                                                zip(client.received, client.received_at)
                                                if m.get("event") == "profilingData"]}
    finally:
        client.close()


def compact(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def spelled_out(body: dict, frames: dict, stacks: dict) -> dict:
    """The same samples with every frame written out in full, in an otherwise equal event of the
    default encoding (one stack per sample, threadIds parallel to it)."""
    rest = {k: v for k, v in body.items() if k not in ("newStacks", "stackIds", "stackCounts")}
    if "stackIds" not in body:
        return dict(rest, newFrames={},
                    samples=[[frames[f] for f in stack] for stack in body["samples"]])
    samples, thread_ids = [], []
    for sid, count, tid in zip(body["stackIds"], body["stackCounts"], body["threadIds"]):
        samples += [[frames[f] for f in stacks[sid]]] * count
        thread_ids += [tid] * count
    return dict(rest, newFrames={}, samples=samples, threadIds=thread_ids)


def wire_and_latency(events) -> dict:
    frames, stacks, sent, full, samples = {}, {}, 0, 0, 0
    steady_sent = steady_full = steady_samples = 0
    ages_oldest, ages_newest = [], []
    half = len(events) // 2
    for index, (message, received_at) in enumerate(events):
        body = message["body"]
        frames.update({int(k): v for k, v in body["newFrames"].items()})
        # Stack IDs start again from 0 in each run; a run defines each before its first use.
        stacks.update({int(k): v for k, v in body.get("newStacks", {}).items()})
        size = compact(message)
        full_size = compact(dict(message, body=spelled_out(body, frames, stacks)))
        sent += size
        full += full_size
        samples += body["sampleCount"]
        if index >= half:
            steady_sent += size
            steady_full += full_size
            steady_samples += body["sampleCount"]
        if body["sampleCount"]:
            ages_oldest.append(received_at * 1000 - body["startTime"])
            ages_newest.append(received_at * 1000 - body["endTime"])
    return {"sent": sent, "full": full, "samples": samples, "steady_sent": steady_sent,
            "steady_full": steady_full, "steady_samples": steady_samples,
            "oldest": ages_oldest, "newest": ages_newest}


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dapprof")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work-rounds", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        serve, port = start_serve(args.dapprof, args.python, tmp)
        try:
            results = {name: [] for name, _ in SETUPS}
            events = {name: [] for name, _ in SETUPS}
            for round_index in range(args.rounds):
                for name, setup in SETUPS:
                    run = one_run(port, args.python, setup, args.work_rounds, tmp)
                    results[name].append(run["seconds"])
                    events[name] += run["events"]
                    print(f"  round {round_index + 1}: {name}: {run['seconds']:.3f} s",
                          file=sys.stderr, flush=True)
        finally:
            serve.terminate()
            serve.wait(timeout=20)

    # Noise on a shared machine only ever adds time: the fastest run of each setup is the
    # steadiest figure; the median is printed beside it.
    reference = statistics.median(results[SETUPS[0][0]])
    best_reference = min(results[SETUPS[0][0]])
    print(f"\nTarget slowdown ({args.python}, debugged by debugpy through dapprof serve; "
          f"{args.rounds} interleaved runs of the same work: median, and fastest run)")
    print(f"{'setup':34} {'median s':>8} {'slowdown':>9} {'best s':>7} {'slowdown':>9} "
          f"{'as filed':>16}   runs")
    for name, _ in SETUPS:
        median = statistics.median(results[name])
        best = min(results[name])
        slowdown = (median / reference - 1) * 100
        best_slowdown = (best / best_reference - 1) * 100
        runs = " ".join(f"{s:.3f}" for s in results[name])
        print(f"{name:34} {median:8.3f} {slowdown:+8.2f}% {best:7.3f} {best_slowdown:+8.2f}% "
              f"{FILED.get(name, ''):>16}   {runs}")

    print(f"\nWire cost and latency (batchIntervalMs {BATCH_MS}; latency = age of an event's "
          f"oldest / newest sample when the client has read it)")
    print(f"{'setup':34} {'B/sample':>9} {'full B/s.':>9} {'saved':>7} {'steady':>7} "
          f"{'oldest p50':>10} {'p99':>7} {'newest p50':>10} {'p99':>7}")
    for name, setup in SETUPS:
        if not isinstance(setup, dict) or not events[name]:
            continue
        w = wire_and_latency(events[name])
        per = w["sent"] / max(1, w["samples"])
        per_full = w["full"] / max(1, w["samples"])
        saved = (1 - w["sent"] / max(1, w["full"])) * 100
        steady = (1 - w["steady_sent"] / max(1, w["steady_full"])) * 100
        print(f"{name:34} {per:9.1f} {per_full:9.1f} {saved:6.1f}% {steady:6.1f}% "
              f"{percentile(w['oldest'], .5):8.1f}ms {percentile(w['oldest'], .99):5.1f}ms "
              f"{percentile(w['newest'], .5):8.1f}ms {percentile(w['newest'], .99):5.1f}ms")
    print(f"(targets: slowdown < 1% at 100 Hz and 1000 Hz consistent; steady wire saving >= 90%, "
          f">= 95% with stacks; p99 oldest-sample age < {BATCH_MS + 20} ms)")


if __name__ == "__main__":
    main()
