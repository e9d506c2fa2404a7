"""Starts a busy Python child and a non-Python child (sleep); prints "PYCHILD OTHERCHILD"."""
import subprocess
import sys

busy = "x = 0\nwhile True:\n    x += 1\n"
py = subprocess.Popen([sys.executable, "-c", busy])
other = subprocess.Popen(["sleep", "120"])
print(py.pid, other.pid, flush=True)
x = 0
while True:
    x += 1
