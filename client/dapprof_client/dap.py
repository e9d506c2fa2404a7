"""DAP transport: Content-Length framed JSON messages over a TCP socket or a child process's
pipes (`dapprof stdio`)."""
from __future__ import annotations

import json
import queue
import socket
import subprocess
import threading
from typing import Callable, List, Optional

from .errors import ClientError, ConnectionClosed


class Connection:
    """Content-Length framed DAP messages over a socket or a child process's pipes. A reader
    thread queues incoming messages so that every wait can have a timeout."""

    def __init__(self, read: Callable[[int], bytes], write: Callable[[bytes], None],
                 close: Callable[[], None], description: str):
        self._read, self._write, self._close = read, write, close
        self.description = description
        self._inbox: "queue.Queue" = queue.Queue()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    @classmethod
    def tcp(cls, host: str, port: int, timeout: float = 10.0) -> "Connection":
        where = f"{host}:{port}"
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise ClientError(f"cannot connect to dapprof at {where}: {e.strerror or e}. "
                              "Is `dapprof serve` running there?") from None
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def close():
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the reader thread
            except OSError:
                pass
            sock.close()

        return cls(sock.recv, sock.sendall, close, where)

    @classmethod
    def spawn(cls, argv: List[str], env: Optional[dict] = None) -> "Connection":
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except OSError as e:
            raise ClientError(f"cannot start {argv[0]}: {e.strerror or e}. Give the dapprof "
                              "executable with --dapprof PATH, or use --connect HOST:PORT"
                              ) from None

        def write(data: bytes):
            proc.stdin.write(data)
            proc.stdin.flush()

        def close():
            try:
                proc.stdin.close()  # dapprof stdio ends its session at EOF
            except OSError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

        connection = cls(proc.stdout.read1, write, close, " ".join(argv[:2]))
        connection.process = proc
        return connection

    def _read_loop(self):
        buffer = bytearray()
        try:
            while True:
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    chunk = self._read(65536)
                    if not chunk:
                        return
                    buffer += chunk
                    continue
                length = None
                for line in bytes(buffer[:end]).split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    raise ValueError(f"DAP header without Content-Length: {buffer[:200]!r}")
                while len(buffer) < end + 4 + length:
                    chunk = self._read(65536)
                    if not chunk:
                        return
                    buffer += chunk
                self._inbox.put(json.loads(bytes(buffer[end + 4:end + 4 + length])))
                del buffer[:end + 4 + length]
        except (OSError, ValueError) as e:
            self._inbox.put(e)
        finally:
            self._inbox.put(None)

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        try:
            with self._write_lock:
                self._write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except OSError as e:
            raise ConnectionClosed(f"lost the connection to {self.description}: {e}") from None

    def receive(self, timeout: Optional[float]) -> Optional[dict]:
        """The next message; None after `timeout` seconds; ConnectionClosed at the end."""
        try:
            message = self._inbox.get(timeout=timeout)
        except queue.Empty:
            return None
        if message is None or isinstance(message, Exception):
            self._inbox.put(None)  # stays closed for later calls
            detail = f": {message}" if message is not None else ""
            raise ConnectionClosed(f"{self.description} closed the connection{detail}")
        return message

    def close(self) -> None:
        self._close()
