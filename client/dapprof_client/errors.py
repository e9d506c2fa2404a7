"""The client's exceptions. Every failure meant for the user is a ClientError: the CLI prints
its message and exits non-zero."""
from __future__ import annotations

from typing import Optional

from .protocol import ErrorId


class ClientError(Exception):
    """A failure to report to the user; the CLI prints it and exits non-zero."""


class ProtocolError(ClientError):
    """The adapter broke the profiling protocol (e.g. referenced a frame it never announced)."""


class ConnectionClosed(ClientError):
    """The adapter closed the connection, or it broke."""


class RequestFailed(ClientError):
    """An error response. `error_id` is body.error.id as an ErrorId when dapprof knows it (a
    plain int for an id this client does not know), None when the response has none (debugpy's
    own errors, or a dapprof too old to know the request)."""

    def __init__(self, command: str, response: dict):
        self.command = command
        self.response = response
        error = (response.get("body") or {}).get("error") or {}
        self.error_id = _error_id(error.get("id"))
        self.adapter_message = response.get("message") or error.get("format") or "no message"
        code = f" (error {int(self.error_id)})" if self.error_id is not None else ""
        super().__init__(f"{command} failed{code}: {self.adapter_message}")


def _error_id(raw) -> Optional[int]:
    if isinstance(raw, bool) or not isinstance(raw, int):
        return None
    try:
        return ErrorId(raw)
    except ValueError:
        return raw
