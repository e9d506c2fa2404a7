"""Live profiling of a process pool: a debug session (real debugpy) of
tests/fixtures/pool_workers.py, profiled with `subprocesses: true`. subProcess is off: with it,
debugpy holds every child until a client attaches a session to it, as VS Code does (the child
sessions are test_child_sessions.py's subject); the sampler reads the workers either way. Every worker of the pool is in
the parent's one stream, announced in `processes` with its command line, at the rate asked; each
worker's end is announced; the profile the daemon writes has the process level the stream
describes."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import DEBIAN_PYTHON, start_stdio, wait_until
from live_session import finish, launch, start_profiling, stream_of
from profiling_stream import read_collapsed

PROGRAM = Path(__file__).resolve().parents[1] / "fixtures" / "pool_workers.py"
RATE = 50
WORKERS = 32
SECONDS = 5
BOUND = 0.2  # of RATE per worker: see tests/app/cli/test_record_pools.py


def program_output(client) -> str:
    return "".join(m["body"].get("output", "") for m in client.received
                   if m.get("event") == "output" and m["body"].get("category") == "stdout")


def truth_of(client) -> dict | None:
    """The program's last line, once it has written all of it."""
    for line in program_output(client).splitlines(keepends=True):
        if '"workers"' in line and line.endswith("\n"):
            return json.loads(line)
    return None


@pytest.mark.parametrize("kind", ["pool", "executor"])
def test_pool_workers_in_the_parents_stream(procs, tmp_path, kind):
    proc, client = start_stdio(procs, "--python", DEBIAN_PYTHON)
    # The parent waits 2 s before starting its pool: profiling is on by then.
    pid = launch(client, [kind, WORKERS, SECONDS, "--wait", 2], program=PROGRAM)
    procs.pids.append(pid)
    start_profiling(client, rate=RATE, subprocesses=True)
    assert wait_until(lambda: truth_of(client) is not None, 90), program_output(client)
    time.sleep(0.5)  # the workers' ends, seen by the sampler's next scan
    out = tmp_path / "pool.txt"
    stopped = client.call("stopProfiling", {"outputPath": str(out), "format": "collapsed"})
    assert stopped["success"], stopped
    stream = stream_of(client)
    truth = truth_of(client)
    workers = {w["pid"]: w["busy"] for w in truth["workers"]}
    assert len(workers) == WORKERS

    # Every worker announced with its command line, and its end.
    assert pid in stream.processes and not stream.processes[pid].get("exited")
    for w in workers:
        assert w in stream.processes, f"worker {w} not announced"
        assert stream.processes[w]["commandLine"], stream.processes[w]
    assert set(workers) <= stream.exited, set(workers) - stream.exited

    spin = {fid for fid, f in stream.frames.items() if f["function"] == "spin"}
    samples: dict[int, int] = {}
    for tid, stack in stream.stacks:
        if spin & set(stack):
            owner = stream.threads[tid]["pid"]
            samples[owner] = samples.get(owner, 0) + 1
    shares = sorted(samples.get(w, 0) / (RATE * busy) for w, busy in workers.items())
    print(f"{kind}: per worker {shares[0]:.2f}..{shares[-1]:.2f} of {RATE} Hz")
    assert shares[0] >= BOUND, (shares, samples)
    # The file has a level per process, as the stream says.
    assert stream.delivered == stopped["body"]["sampleCount"]
    assert read_collapsed(out) == stream.collapsed(processes=True)
    finish(client, proc)
