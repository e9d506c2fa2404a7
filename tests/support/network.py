"""This machine's addresses, for the tests of what dapprof's ports can be reached from."""
from __future__ import annotations

import json
import socket
import subprocess


def non_loopback_address() -> str | None:
    """An IPv4 address of this machine that is not loopback, or None."""
    try:
        out = subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True,
                             timeout=10)
        for interface in json.loads(out.stdout or "[]"):
            for info in interface.get("addr_info", []):
                local = info.get("local", "")
                if local and not local.startswith("127."):
                    return local
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    # Without iproute2: the source address of a route out (a UDP connect sends nothing).
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            local = s.getsockname()[0]
            return None if local.startswith("127.") or local == "0.0.0.0" else local
    except OSError:
        return None
