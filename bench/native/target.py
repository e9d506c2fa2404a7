"""Benchmark target: Python code 20 frames deep that also calls into C (zlib), in a loop.
Prints "ready", then every 100 ms the number of loops done so far, so that the benchmark can
measure how much sampling slows it down."""
import sys
import time
import zlib

DATA = bytes(range(256)) * 64


def leaf():
    total = 0
    for i in range(300):
        total += i
    zlib.compress(DATA, 1)
    return total


def nest(depth):
    return leaf() if depth == 0 else nest(depth - 1)


def main():
    print("ready", flush=True)
    done = 0
    last = time.monotonic()
    while True:
        nest(20)
        done += 1
        now = time.monotonic()
        if now - last >= 0.1:
            print(done, flush=True)
            last = now


if __name__ == "__main__":
    sys.exit(main())
