"""A stack that never keeps still: recursion up and down, threads starting and ending.
Prints "ready"."""
import threading


def up_and_down(n):
    if n:
        up_and_down(n - 1)


def worker():
    while True:
        for depth in range(1, 60):
            up_and_down(depth)


def starter():
    while True:
        t = threading.Thread(target=up_and_down, args=(30,))
        t.start()
        t.join()


threading.Thread(target=starter, daemon=True).start()
threading.Thread(target=worker, daemon=True).start()
print("ready", flush=True)
worker()
