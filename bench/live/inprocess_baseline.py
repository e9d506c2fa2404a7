"""The in-process approach first proposed for debugpy, as a baseline: a sys.setprofile hook (and
threading.setprofile for new threads) that, at most every 10 ms, captures the current stack as
(file, line, function) tuples into a list. Runs the program given as argv[1] under the hook."""
import runpy
import sys
import threading
import time

INTERVAL = 0.010
samples = []
_last = [0.0]


def _hook(frame, event, arg):
    now = time.perf_counter()
    if now - _last[0] < INTERVAL:
        return
    _last[0] = now
    stack = []
    while frame is not None:
        code = frame.f_code
        stack.append((code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    samples.append(stack)


if __name__ == "__main__":
    program = sys.argv[1]
    sys.argv = sys.argv[1:]
    threading.setprofile(_hook)
    sys.setprofile(_hook)
    try:
        runpy.run_path(program, run_name="__main__")
    finally:
        sys.setprofile(None)
        print(f"INPROCESS_SAMPLES {len(samples)}", file=sys.stderr, flush=True)
