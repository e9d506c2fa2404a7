"""Debuggee of the load and soak scripts: every cycle, `busy_ms` of work at the bottom of a stack
`depth` frames deep, then `idle_ms` asleep, until the stop file appears.
Usage: target.py STOP_FILE DEPTH BUSY_MS IDLE_MS"""
import os
import sys
import time


def work(seconds):
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def descend(depth, seconds):
    if depth <= 1:
        return work(seconds)
    return descend(depth - 1, seconds)


def main():
    stop_file, depth, busy_ms, idle_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
        float(sys.argv[4])
    while not os.path.exists(stop_file):
        descend(depth, busy_ms / 1000)
        if idle_ms:
            time.sleep(idle_ms / 1000)


if __name__ == "__main__":
    main()
