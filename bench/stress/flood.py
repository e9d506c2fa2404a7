"""Hostile clients of one `dapprof serve`: a frame over the size limit, floods of tiny requests
(read and unread), and requests sent back to back for ten seconds. Each session must be answered
or closed cleanly, the daemon must keep serving others, and its memory must stay bounded. Prints,
per case: messages sent and answered, how it ended, the daemon's peak RSS over its baseline.

Usage: flood.py DAPPROF [--python PY] [--seconds 10]

The requests are ones dapprof answers itself (stopProfiling when nothing profiles: an error
response) and ones it forwards to debugpy (`threads`), so both the daemon's own handlers and its
forwarding queues are flooded.
"""
from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from stress_common import HERE, Daemon, DapClient, Session, rss_kib

TARGET = HERE / "target.py"


class PeakRss(threading.Thread):
    """The daemon's highest RSS while a case runs (sampled every 20 ms)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self._done = pid, rss_kib(pid), threading.Event()

    def run(self):
        while not self._done.wait(0.02):
            try:
                self.peak = max(self.peak, rss_kib(self.pid))
            except (OSError, ValueError):
                return

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self.join()


def frame(message: dict) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def requests(command: str, first_seq: int, count: int) -> bytes:
    return b"".join(frame({"seq": seq, "type": "request", "command": command})
                    for seq in range(first_seq, first_seq + count))


class Responses:
    """Counts the responses to `command` the client has read, scanning only what is new."""

    def __init__(self, client: DapClient, command: str):
        self.client, self.command, self.seen, self.count = client, command, 0, 0

    def __call__(self) -> int:
        received = self.client.received
        end = len(received)
        self.count += sum(1 for m in received[self.seen:end]
                          if m.get("type") == "response" and m.get("command") == self.command)
        self.seen = end
        return self.count


def wait_answered(client: DapClient, responses: Responses, count: int, timeout=300.0) -> int:
    deadline = time.monotonic() + timeout
    while responses() < count and time.monotonic() < deadline and not client.eof.is_set():
        time.sleep(0.1)
    return responses()


def oversize(daemon: Daemon) -> str:
    """A header announcing 1 GiB, then bytes: the session is closed without reading them all."""
    sock = socket.create_connection(("127.0.0.1", daemon.port))
    began = time.monotonic()
    sock.sendall(b"Content-Length: 1073741824\r\n\r\n")
    sent = 0
    chunk = b"x" * 65536
    try:
        while sent < 64 << 20:
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # closed by dapprof: the point
    sock.settimeout(10)
    try:
        while sock.recv(65536):
            pass
        ended = "closed"
    except ConnectionResetError:
        ended = "reset"
    except socket.timeout:
        ended = "STILL OPEN"
    sock.close()
    return f"{ended} after {time.monotonic() - began:.2f} s, {sent >> 20} MiB of the body sent"


def flood(session: Session, command: str, count: int, read: bool) -> str:
    """`count` requests in one burst; with read=False the client reads nothing for 5 s."""
    client = session.client
    responses = Responses(client, command)
    before = responses()
    if not read:
        client.gate.clear()
    began = time.monotonic()
    blob = requests(command, 1_000_000, 1000)

    def send():
        try:
            for _ in range(count // 1000):
                client.sock.sendall(blob)
        except OSError:
            pass  # closed by dapprof: reported below

    # From a thread: once the client stops reading, dapprof stops reading its requests too
    # (flow control), and the sending blocks until the client reads again.
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    if not read:
        time.sleep(5)
        client.gate.set()
    sender.join(300)
    answered = wait_answered(client, responses, before + count) - before
    return (f"{count} sent, {answered} answered in {time.monotonic() - began:.1f} s"
            f"{' (connection closed)' if client.eof.is_set() else ''}")


def back_to_back(session: Session, command: str, seconds: float, wait=300.0) -> str:
    """Requests sent as fast as the socket takes them for `seconds`, read meanwhile; then up to
    `wait` seconds for the answers."""
    client = session.client
    responses = Responses(client, command)
    before = responses()
    blob = requests(command, 2_000_000, 100)
    sent = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        client.sock.sendall(blob)
        sent += 100
    waited = time.monotonic()
    answered = wait_answered(client, responses, before + sent, wait) - before
    waited = time.monotonic() - waited
    return (f"{sent} sent in {seconds:.0f} s ({sent / seconds:,.0f}/s), {answered} answered"
            f"{f' within {waited:.0f} s more' if answered < sent else ''}"
            f"{' (connection closed)' if client.eof.is_set() else ''}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dapprof")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    rows = []
    failed = False
    with tempfile.TemporaryDirectory() as tmp_name:
        work = Path(tmp_name)
        stop_file = work / "stop"
        daemon = Daemon(args.dapprof, args.python, work)
        try:
            session = Session(daemon, TARGET, [stop_file, 3, 0.3, 30], args.python, gated=True)
            baseline = rss_kib(daemon.pid)
            cases = [
                ("frame over the size limit", lambda: oversize(daemon)),
                ("200k tiny requests, answered by dapprof",
                 lambda: flood(session, "stopProfiling", 200_000, True)),
                ("200k tiny requests, unread for 5 s",
                 lambda: flood(session, "stopProfiling", 200_000, False)),
                # debugpy answers `threads` about 20 times a second, directly or through dapprof
                # alike: these show that what waits for it stays bounded.
                ("1000 tiny requests forwarded to debugpy",
                 lambda: flood(session, "threads", 1000, True)),
                (f"back to back for {args.seconds:.0f} s, answered by dapprof",
                 lambda: back_to_back(session, "stopProfiling", args.seconds)),
                (f"back to back for {args.seconds:.0f} s, forwarded to debugpy",
                 lambda: back_to_back(session, "threads", args.seconds, 30)),
            ]
            for name, case in cases:
                with PeakRss(daemon.pid) as peak:
                    before = peak.peak
                    outcome = case()
                serves = daemon.answers_a_new_session()
                failed |= not serves or "STILL OPEN" in outcome
                rows.append((name, outcome, (peak.peak - before) / 1024, serves))
                # (The allocator keeps what it freed: a case's growth shows against the highest
                # RSS of the cases before it.)
                print(f"{name}: {outcome}; peak RSS {peak.peak / 1024:.1f} MiB "
                      f"(+{rows[-1][2]:.1f} in this case); "
                      f"{'serves others' if serves else 'DOES NOT SERVE OTHERS'}", flush=True)
            session.end()
            after = rss_kib(daemon.pid)
        finally:
            stop_file.write_text("stop")
            daemon.stop()
    print(f"\ndaemon RSS: baseline {baseline / 1024:.1f} MiB, after every case "
          f"{after / 1024:.1f} MiB")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
