"""The program the Quick start demo profiles: a few seconds of ordinary Python work whose
functions are easy to recognise in a profile.

The main thread cycles through three jobs (finding primes, a JSON round trip, sorting with a
key function written in Python); a worker thread meanwhile computes Fibonacci numbers with a
small recursive function, so the profile has two threads with different stacks.

    python3 examples/demo_app.py [SECONDS]     # default 6.5; standard library only
"""
import json
import random
import sys
import threading
import time


def sieve_primes(limit):
    """Sieve of Eratosthenes: the primes below `limit`. Pure-Python loops, so it shows up as
    the hottest function of the profile."""
    is_prime = [True] * limit
    is_prime[0] = is_prime[1] = False
    for n in range(2, int(limit ** 0.5) + 1):
        if is_prime[n]:
            for multiple in range(n * n, limit, n):
                is_prime[multiple] = False
    return [n for n, prime in enumerate(is_prime) if prime]


def make_records(count, rng):
    """Synthetic user records for the JSON and sorting jobs."""
    return [{"id": i, "name": "user%05d" % i, "score": rng.random(),
             "tags": ["a", "b", "c"][:i % 4]}
            for i in range(count)]


def json_round_trip(records):
    """Serialises and parses the records again; most of the time is spent in the json module's
    C code, under this function."""
    text = json.dumps(records)
    return json.loads(text)


def sort_key(record):
    # Called once per record by sorted(): a Python key function costs a call per element.
    return (-round(record["score"], 2), record["name"])


def sort_records(records):
    return sorted(records, key=sort_key)


def fib(n):
    """Deliberately slow recursive Fibonacci: a deep, self-similar stack in the profile."""
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def fibonacci_worker(stop):
    """Runs on its own thread until `stop` is set."""
    while not stop.is_set():
        fib(20)


def main(seconds):
    stop = threading.Event()
    worker = threading.Thread(target=fibonacci_worker, args=(stop,), name="fibonacci-worker")
    worker.start()
    rng = random.Random(42)  # same data on every run
    records = make_records(20000, rng)
    deadline = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < deadline:
        primes = sieve_primes(300000)
        parsed = json_round_trip(records)
        ranked = sort_records(parsed)
        rounds += 1
    stop.set()
    worker.join()
    print("demo_app: %d rounds; %d primes below 300000; best record %s"
          % (rounds, len(primes), ranked[0]["name"]))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 6.5)
