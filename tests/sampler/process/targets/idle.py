"""One busy thread (the main one) and two threads idle on an Event. Prints "ready"."""
import threading

stop = threading.Event()
for _ in range(2):
    threading.Thread(target=stop.wait, daemon=True).start()
print("ready", flush=True)


def busy():
    x = 0
    while True:
        x += 1


busy()
