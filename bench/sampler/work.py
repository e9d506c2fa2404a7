"""A busy thread whose Python stack is DEPTH frames deep, reporting its progress.

usage: work.py DEPTH [IDLE_THREADS]  -- prints "ready" at depth, then every 0.1 s
"<iterations> <seconds>" (cumulative; time.monotonic) so that a benchmark can tell how much a
profiler slows it down. IDLE_THREADS more threads wait on an event meanwhile.
"""
import sys
import threading
import time

depth = int(sys.argv[1])
idle = int(sys.argv[2]) if len(sys.argv) > 2 else 0
sys.setrecursionlimit(depth + 1000)
never = threading.Event()
for i in range(idle):
    threading.Thread(target=never.wait, name=f"idle-{i}", daemon=True).start()


def recurse(n):
    if n > 1:
        return recurse(n - 1)
    print("ready", flush=True)
    done = 0
    next_report = time.monotonic() + 0.1
    while True:
        x = 0
        for _ in range(1000):
            x += 1
        done += 1
        if done % 64 == 0 and time.monotonic() >= next_report:
            now = time.monotonic()
            print(done, now, flush=True)
            next_report = now + 0.1


recurse(depth)
