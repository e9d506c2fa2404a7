"""A busy thread whose Python stack is DEPTH frames deep (plus the module frame).

usage: deep.py DEPTH [SECONDS]  -- prints "ready" at depth; exits after SECONDS if given
"""
import sys
import time

depth = int(sys.argv[1])
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else None
sys.setrecursionlimit(depth + 1000)


def recurse(n):
    if n > 1:
        return recurse(n - 1)
    print("ready", flush=True)
    end = None if seconds is None else time.monotonic() + seconds
    x = 0
    while end is None or time.monotonic() < end:
        for _ in range(1000):
            x += 1
    return x


recurse(depth)
