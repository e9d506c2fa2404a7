"""Memory of real recordings: dapprof's RSS (VmRSS) every few seconds while it samples a Python
program 100 frames deep at 1 kHz, as `dapprof record --pid` and as a live run (`dapprof serve`,
debugpy launching the program, startProfiling, a client reading every profilingData event).

Usage: real_run.py DAPPROF [--python PY] [--seconds S] [--every S] [--rate HZ] [--depth D]
                           [--only record|live]

Target (from the issue): RSS after an hour at 1 kHz on a 100-frame stack at most 30 MB, memory
growing only with distinct stacks plus a few bytes per sample. The growth per sample printed here
is extrapolated to an hour.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "adapter"))
from dapclient import DapClient  # noqa: E402  (the tests' DAP client: framing, waits, timeouts)

DEEP = ROOT / "tests" / "sampler" / "process" / "targets" / "deep.py"
TARGET_MIB = 30
INITIALIZE = {"clientID": "dapprof-bench", "adapterID": "dapprof", "pathFormat": "path",
              "linesStartAt1": True, "columnsStartAt1": True}


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


class Curve:
    """Prints dapprof's RSS every `every` seconds; `tick()` returns False once time is up."""

    def __init__(self, pid: int, seconds: float, every: float):
        self.pid, self.seconds, self.every = pid, seconds, every
        self.start = time.monotonic()
        self.next_at = self.start
        self.points: list[tuple[float, int]] = []
        print(f"{'s':>6} {'RSS MiB':>9}")

    def tick(self) -> bool:
        now = time.monotonic()
        if now >= self.next_at:
            self.sample(now)
            self.next_at += self.every
        return now - self.start < self.seconds

    def sample(self, now=None):
        now = time.monotonic() if now is None else now
        kib = rss_kib(self.pid)
        if kib and kib >= 1024:  # not while the program is still being exec()ed
            self.points.append((now - self.start, kib))
            print(f"{now - self.start:6.0f} {kib / 1024:9.1f}", flush=True)

    def report(self, samples: int | None, rate: float):
        if len(self.points) < 2:
            return
        # Growth from the first point after start-up (attaching and warming caches) to the end.
        (t0, k0), (t1, k1) = self.points[1] if len(self.points) > 2 else self.points[0], self.points[-1]
        per_s = (k1 - k0) * 1024 / max(t1 - t0, 1e-9)
        per_sample = per_s / rate
        hour = k1 / 1024 + per_s * (3600 - t1) / (1 << 20)
        print(f"growth {per_s / 1024:.1f} KiB/s from {t0:.0f} s to {t1:.0f} s "
              f"({per_sample:.1f} bytes per sample at {rate:g} Hz)"
              + (f"; {samples} samples delivered" if samples is not None else ""))
        print(f"RSS at the end {k1 / 1024:.1f} MiB; extrapolated to an hour {hour:.1f} MiB  "
              f"[target: <= {TARGET_MIB} MB: {'MET' if hour <= TARGET_MIB else 'MISSED'}]")


def record_run(args, tmp: Path):
    print(f"\n== dapprof record --pid, {args.rate:g} Hz, {args.seconds:g} s, depth {args.depth}")
    target = subprocess.Popen([args.python, str(DEEP), str(args.depth)], stdout=subprocess.PIPE,
                              text=True)
    try:
        if target.stdout.readline().strip() != "ready":
            raise SystemExit("target did not start")
        rec = subprocess.Popen([args.dapprof, "record", "--pid", str(target.pid), "--rate",
                                str(args.rate), "--duration", str(args.seconds), "--format", "raw",
                                "--output", str(tmp / "record.txt")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        curve = Curve(rec.pid, args.seconds + 60, args.every)
        while rec.poll() is None and curve.tick():
            time.sleep(0.2)
        curve.sample()
        _, err = rec.communicate(timeout=120)
        line = next((l for l in err.splitlines() if "Samples:" in l), "")
        print(line.strip())
        samples = int(line.split("Samples:")[1].split()[0]) if line else None
        curve.report(samples, args.rate)
    finally:
        target.kill()
        target.wait()


def live_run(args, tmp: Path):
    print(f"\n== live run (dapprof serve + debugpy), {args.rate:g} Hz, {args.seconds:g} s, "
          f"depth {args.depth}")
    port_file = tmp / "port"
    serve = subprocess.Popen([args.dapprof, "serve", "--listen", "127.0.0.1:0", "--port-file",
                              str(port_file), "--python", args.python, "--log-level", "warn"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline:
                raise SystemExit("dapprof serve did not start")
            time.sleep(0.05)
        client = DapClient.over_socket("127.0.0.1", int(port_file.read_text()))
        try:
            client.call("initialize", INITIALIZE)
            seq = client.request("launch", {"program": str(DEEP), "args": [str(args.depth)],
                                            "console": "internalConsole", "python": [args.python],
                                            "justMyCode": True, "subProcess": False})
            client.wait_event("initialized")
            client.call("configurationDone")
            client.wait_response(seq, 60)
            client.wait_event("process", 60)
            client.wait_for(lambda m: m.get("event") == "output" and
                            "ready" in m["body"].get("output", ""), 60, "ready")
            started = client.call("startProfiling", {"rate": args.rate, "batchIntervalMs": 100})
            if not started["success"]:
                raise SystemExit(f"startProfiling failed: {started}")
            curve = Curve(serve.pid, args.seconds, args.every)
            delivered = 0
            while curve.tick():
                try:
                    message = client.next(0.2)
                except Exception:  # noqa: BLE001  (nothing within the wait: go on)
                    continue
                if message.get("event") == "profilingData":
                    delivered += message["body"]["sampleCount"]
                client.received.clear()  # the client keeps nothing: only dapprof is measured
                client.received_at.clear()
            stopped = client.call("stopProfiling", {}, 60)
            curve.sample()
            exported = client.call("exportProfile", {"format": "collapsed"}, 120)
            print(f"after stopProfiling and exportProfile (collapsed, "
                  f"{exported['body'].get('sampleCount')} samples): "
                  f"RSS {rss_kib(serve.pid) / 1024:.1f} MiB")
            curve.report(stopped["body"].get("sampleCount", delivered), args.rate)
            client.call("disconnect", {"terminateDebuggee": True}, 30)
        finally:
            client.close()
    finally:
        serve.terminate()
        serve.wait(30)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dapprof")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--every", type=float, default=10)
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--only", choices=["record", "live"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        if args.only != "live":
            record_run(args, Path(tmp_name))
        if args.only != "record":
            live_run(args, Path(tmp_name))


if __name__ == "__main__":
    main()
