"""The run's summary as the daemon sends it (stopProfiling's response, or profilingStopped):
totals and topFunctions, rendered as text with the columns of `dapprof record`'s summary, and
as JSON. The numbers are the daemon's; nothing here counts samples."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional

from .errors import ProtocolError


@dataclass(frozen=True)
class FunctionStats:
    """One row of topFunctions. `own` is the protocol's `self`."""
    function: str
    file: str  # source file, or the shared object of a native function
    own: float  # samples in which it was the innermost frame
    total: float  # samples in which it was on the stack

    def to_json(self) -> dict:
        return {"function": self.function, "file": self.file, "self": self.own,
                "total": self.total}


def _number(raw, what: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw < 0:
        raise ProtocolError(f"topFunctions: {what} must be a non-negative number, not {raw!r}")
    return raw


def top_functions(body: Optional[dict]) -> Optional[List[FunctionStats]]:
    """topFunctions of a stopProfiling response or profilingStopped body; None if absent."""
    rows = (body or {}).get("topFunctions")
    if rows is None:
        return None
    if not isinstance(rows, list):
        raise ProtocolError("topFunctions must be an array")
    out = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("function"), str) or \
                not isinstance(row.get("file"), str):
            raise ProtocolError(f"topFunctions: {row!r} needs string 'function' and 'file'")
        out.append(FunctionStats(row["function"], row["file"], _number(row.get("self"), "self"),
                                 _number(row.get("total"), "total")))
    return out


def _round(n: float) -> int:
    return int(math.floor(n + 0.5))  # as C's llround, for the non-negative counts here


def format_table(rows: List[FunctionStats], samples: float, top: int) -> str:
    """The table of `dapprof record`'s summary (src/formats/summary.cpp), of the daemon's rows."""
    if samples <= 0:
        return "No samples.\n"
    def pct(n: float) -> float:
        return 100.0 * n / samples
    out = [f"Top functions by own samples (of {_round(samples)} thread samples):\n",
           f"  {'%Own':>7} {'%Total':>7} {'OwnSmpl':>8} {'TotSmpl':>8}  Function (file)\n"]
    for f in rows[:max(0, top)]:
        where = f" ({f.file})" if f.file else ""
        out.append(f"  {pct(f.own):6.2f}% {pct(f.total):6.2f}% {_round(f.own):>8} "
                   f"{_round(f.total):>8}  {f.function}{where}\n")
    return "".join(out)


def format_summary(profile, top: int = 15) -> str:
    """A head line (process, totals, threads) and the table of the daemon's topFunctions."""
    info = profile.info
    rate = info.get("rate")
    head = (f"{profile.total_samples} samples over {profile.duration_ms / 1000:.2f} s"
            f"{f' at {rate} Hz' if rate else ''}, {profile.dropped_count} dropped, "
            f"{profile.error_count} errors, {len(profile.thread_samples)} threads")
    if info.get("pid"):
        head = f"process {info['pid']} (Python {info.get('pythonVersion', '?')}): {head}"
    if profile.hide_debugger:
        head += ("\ndebugpy's own frames are left out (samples taken wholly in it count as "
                 "\"(debugger)\"); --debugger-frames shows them")
    rows = profile.top_functions
    if rows is None and profile.total_samples > 0:  # dapprof leaves it out of a run without samples
        return (f"{head}\n\ndapprof sent no topFunctions with the run's summary: a dapprof older "
                "than this client; update it for the table of top functions\n")
    return f"{head}\n\n{format_table(rows or [], profile.total_samples, top)}"


def summary_dict(profile) -> dict:
    """The summary for scripts: the daemon's totals and topFunctions, the stream's threads."""
    threads = profile.decoder.threads
    rows = profile.top_functions
    out = {"samples": profile.total_samples, "durationMs": round(profile.duration_ms, 3),
           "droppedSamples": profile.dropped_count, "errors": profile.error_count,
           "streamSamples": profile.sample_count, "events": profile.decoder.events,
           "frames": len(profile.decoder.frames), "stopReason": profile.stop_reason,
           "hideDebugger": profile.hide_debugger,
           "pid": profile.info.get("pid"), "pythonVersion": profile.info.get("pythonVersion"),
           "rate": profile.info.get("rate"),
           "threads": [{"osThreadId": tid, "samples": len(indices),
                        "name": threads[tid].name if tid in threads else "",
                        "pid": threads[tid].pid if tid in threads else None}
                       for tid, indices in profile.thread_samples.items()],
           "topFunctions": None if rows is None else [r.to_json() for r in rows],
           "daemonSummary": profile.summary}
    if profile.start_time is not None:
        out["startTime"], out["endTime"] = profile.start_time, profile.end_time
    return out
