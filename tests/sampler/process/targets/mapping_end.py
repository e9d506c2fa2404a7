"""Maps two pages of known contents with nothing mapped right after them: prints the address and
size of the mapping, then waits on stdin. For reads that run past the end of a mapping."""
import ctypes
import mmap

PAGE = mmap.PAGESIZE
HOLE = 64  # pages unmapped after the two: no later small mapping of this process fills them all
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
size = 2 * PAGE
addr = libc.mmap(None, size + HOLE * PAGE, mmap.PROT_READ | mmap.PROT_WRITE,
                 mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
assert addr not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
assert libc.munmap(addr + size, HOLE * PAGE) == 0, ctypes.get_errno()
ctypes.memmove(addr, bytes((i * 7 + 3) % 251 for i in range(size)), size)
print(addr, size, flush=True)
input()
