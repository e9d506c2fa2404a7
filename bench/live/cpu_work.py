"""The benchmark's debuggee: a fixed amount of CPU-bound, call-heavy Python work (recursion,
small functions, sorting with a key, string building), timed by itself. Prints
`WORK_SECONDS <s>` when done, so that the runner compares the same work under each setup."""
import json
import os
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def key_of(item):
    return (item % 97, -item)


def shuffle_sort(n):
    data = [(i * 7919) % 10007 for i in range(n)]
    return sorted(data, key=key_of)


def render(rows):
    return json.dumps([{"id": i, "name": f"row-{i}", "tags": [str(i % 3)]} for i in range(rows)])


def work(rounds):
    total = 0
    for _ in range(rounds):
        total += fib(18)
        total += len(shuffle_sort(3000))
        total += len(render(300))
    return total


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    go_file = sys.argv[2] if len(sys.argv) > 2 else None
    # The runner creates go_file once profiling has started, so only the work is timed.
    while go_file and not os.path.exists(go_file):
        time.sleep(0.005)
    start = time.perf_counter()
    work(rounds)
    print(f"WORK_SECONDS {time.perf_counter() - start:.6f}", flush=True)
