"""Busy threads plus a progress counter written to a file.

usage: threads.py COUNTER_FILE N_THREADS [churn]
Prints "ready" once every thread runs. With "churn", a thread keeps starting short-lived
threads, so threads appear and disappear all the time.
"""
import os
import sys
import threading
import time

path, n = sys.argv[1], int(sys.argv[2])
churn = len(sys.argv) > 3 and sys.argv[3] == "churn"
counter = 0
started = threading.Barrier(n + 1)


def spin():
    global counter
    started.wait()
    while True:
        counter += 1


def churner():
    while True:
        t = threading.Thread(target=lambda: sum(range(1000)))
        t.start()
        t.join()


for _ in range(n):
    threading.Thread(target=spin, daemon=True).start()
started.wait()
if churn:
    threading.Thread(target=churner, daemon=True).start()
print("ready", flush=True)
tmp = path + ".tmp"
while True:
    with open(tmp, "w") as f:
        f.write(str(counter))
    os.replace(tmp, path)
    time.sleep(0.005)
