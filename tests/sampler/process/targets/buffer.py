"""Exposes a buffer with known contents: prints its address and size, then waits on stdin."""
import ctypes
import sys

size = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
pattern = bytes((i * 7 + 3) % 251 for i in range(size))
buf = ctypes.create_string_buffer(pattern, size)
text = ctypes.create_string_buffer(b"dapprof says hello")
print(ctypes.addressof(buf), size, ctypes.addressof(text), flush=True)
sys.stdin.read()
