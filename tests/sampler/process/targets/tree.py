"""A process tree: this process, a child and a grandchild. Prints "CHILD GRANDCHILD" pids."""
import os
import sys
import time

r, w = os.pipe()
child = os.fork()
if child == 0:
    os.close(r)
    grandchild = os.fork()
    if grandchild == 0:
        time.sleep(120)
        os._exit(0)
    os.write(w, f"{os.getpid()} {grandchild}\n".encode())
    os.waitpid(grandchild, 0)
    os._exit(0)
os.close(w)
line = os.read(r, 100).decode()
print(line.strip(), flush=True)
sys.stdin.read()
