"""A small DAP client for tests: Content-Length framing over a pipe pair or a socket (stdlib)."""
from __future__ import annotations

import json
import queue
import socket
import struct
import threading
import time


class DapError(Exception):
    pass


def _close_socket(sock):
    # shutdown first: a plain close() while the reader thread sits in recv() sends no FIN.
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class DapClient:
    """Reads messages on a thread into a queue; every wait has a timeout so that no test hangs."""

    def __init__(self, reader, writer, closer=None):
        self._reader = reader  # callable(n) -> bytes ('' at EOF)
        self._writer = writer  # callable(bytes)
        self._closer = closer
        self._seq = 0
        self._lock = threading.Lock()
        self.received: list[dict] = []  # everything, in arrival order
        self.received_at: list[float] = []  # time.time() each was read, parallel to received
        self._queue: queue.Queue = queue.Queue()
        self.eof = threading.Event()
        self._thread = threading.Thread(target=self._read_loop, daemon=True)
        self._thread.start()

    @classmethod
    def over_process(cls, proc):
        out = proc.stdout
        return cls(lambda n: out.read1(n), lambda b: (proc.stdin.write(b), proc.stdin.flush()),
                   lambda: proc.stdin.close())

    @classmethod
    def over_socket(cls, host, port, timeout=10.0):
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = cls(lambda n: sock.recv(n), sock.sendall, lambda: _close_socket(sock))
        client.sock = sock
        return client

    @classmethod
    def over_gated_socket(cls, host, port, receive_buffer=64 * 1024):
        """A client whose reading can be stopped (`client.gate.clear()`), so that the kernel's
        buffers and then dapprof's queue fill up, as with a client that is slow or stuck."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.connect((host, port))
        gate = threading.Event()
        gate.set()

        def read(n):
            gate.wait()
            return sock.recv(n)

        client = cls(read, sock.sendall, lambda: _close_socket(sock))
        client.sock = sock
        client.gate = gate
        return client

    def _read_loop(self):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = self._reader(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = None
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    raise DapError(f"bad header {head!r}")
                while len(buf) < length:
                    chunk = self._reader(65536)
                    if not chunk:
                        return
                    buf += chunk
                body, buf = buf[:length], buf[length:]
                message = json.loads(body)
                self.received_at.append(time.time())
                self.received.append(message)
                self._queue.put(message)
        except (OSError, ValueError):
            return
        finally:
            self.eof.set()
            self._queue.put(None)

    # -- sending --------------------------------------------------------------------------
    def send_raw(self, data: bytes):
        self._writer(data)

    def send(self, message: dict):
        body = json.dumps(message).encode()
        self._writer(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, command, arguments=None) -> int:
        with self._lock:
            self._seq += 1
            seq = self._seq
        message = {"seq": seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        self.send(message)
        return seq

    def respond(self, request: dict, body=None, success=True):
        with self._lock:
            self._seq += 1
            seq = self._seq
        self.send({"seq": seq, "type": "response", "request_seq": request["seq"],
                   "success": success, "command": request["command"], "body": body or {}})

    # -- receiving ------------------------------------------------------------------------
    def next(self, timeout=30.0) -> dict:
        try:
            message = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise DapError(f"no message within {timeout} s") from None
        if message is None:
            self._queue.put(None)
            raise DapError("connection closed")
        return message

    def wait_for(self, predicate, timeout=30.0, what="message") -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DapError(f"timed out waiting for {what}")
            message = self.next(left)
            if predicate(message):
                return message

    def find(self, predicate, timeout=30.0) -> dict | None:
        """The first message received so far, or within `timeout`, that matches; None if none
        came before the timeout or the end of the connection. Unlike wait_for, which drops what
        it skips, this finds messages that race each other in whichever order they came."""
        deadline = time.monotonic() + timeout
        while True:
            ended = self.eof.is_set()  # before looking: what came before the end is all there
            for message in list(self.received):
                if predicate(message):
                    return message
            if ended or time.monotonic() >= deadline:
                return None
            time.sleep(0.02)

    def wait_event(self, event, timeout=30.0) -> dict:
        return self.wait_for(lambda m: m.get("type") == "event" and m.get("event") == event,
                             timeout, f"event {event!r}")

    def wait_response(self, seq, timeout=30.0) -> dict:
        return self.wait_for(lambda m: m.get("type") == "response" and m.get("request_seq") == seq,
                             timeout, f"response to {seq}")

    def call(self, command, arguments=None, timeout=30.0) -> dict:
        return self.wait_response(self.request(command, arguments), timeout)

    def wait_eof(self, timeout=15.0) -> bool:
        return self.eof.wait(timeout)

    def vanish(self, reset=False):
        """Go away without `disconnect`, as a client whose process died: the socket is released
        as the kernel releases a dead process's (FIN, or RST if it had unread data), or with a
        reset when `reset`. The reader thread is woken first (SHUT_RD sends nothing): while it
        sits in recv(), close() alone would keep the connection open and send nothing at all.
        A pipe client closes its end of the server's input, which is what a dead client's pipes
        give the server first (EOF)."""
        sock = getattr(self, "sock", None)
        if sock is None:
            self.close()
            return
        try:
            sock.shutdown(socket.SHUT_RD)
        except OSError:
            pass
        if getattr(self, "gate", None):
            self.gate.set()  # a stalled reader must get to its recv() to see the end
        self._thread.join(5)
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()

    def close(self):
        if self._closer:
            try:
                self._closer()
            except OSError:
                pass
