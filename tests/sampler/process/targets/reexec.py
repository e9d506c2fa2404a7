"""Execs itself N times (argv[1]), then prints "done" and waits on stdin: a process whose
address space is replaced again and again while its PID stays the same."""
import os
import sys

left = int(sys.argv[1])
if left > 0:
    os.execv(sys.executable, [sys.executable, "-S", __file__, str(left - 1)])
print("done", flush=True)
sys.stdin.read()
