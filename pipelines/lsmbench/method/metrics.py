"""The figures every view shows of a phase, each defined once (docs/reports.md, "Metrics").

The verdict, the report's tables, ``ls``, the exported tables and the history all take these
figures from here, so one number of one phase means one thing in every view. Each reads the
phase's summary.json (engines/driver/README.md) and says which window it covers and where it
came from:

* :func:`stall_time` -- the time writes were stalled in the measured window: the engine's
  own stall accounting when the engine keeps one (``stalls.engine_stall_micros``, microsecond
  resolution, a stall in progress counted up to the window's end), else whole driver
  intervals in which no write completed although writes waited (the interval's resolution).
* :func:`write_amplification` -- bytes the engine wrote (flushes + merges) per byte the
  clients wrote, over the measured window; the engine's cumulative figure (since it opened
  the store for this phase) only where the window's snapshots lack the byte counters.

Pure functions over parsed JSON: nothing here reads files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..util.values import number

# Where a stall time came from (StallTime.source).
STALL_ENGINE = "engine"
STALL_INTERVALS = "intervals"

# Which window a write amplification covers (WriteAmplification.window).
WA_WINDOW = "window"  # the phase's measured window (warm-up and drain excluded)
WA_WINDOW_AND_DRAIN = "window+drain"  # a store from before the window's end snapshot
WA_CUMULATIVE = "cumulative"  # since the engine opened the store for the phase


def _get(d: Mapping[str, Any] | None, *path: str) -> Any:
    for k in path:
        if not isinstance(d, Mapping):
            return None
        d = d.get(k)
    return d


@dataclass(frozen=True)
class StallTime:
    """Seconds of the measured window in which writes were stalled."""

    seconds: float
    window_s: float | None  # the measured window's length
    source: str  # STALL_ENGINE or STALL_INTERVALS
    count: float | None = None  # the engine's stalls that ended or ran in the window
    resolution_s: float | None = None  # STALL_INTERVALS: the interval's length

    @property
    def fraction(self) -> float | None:
        return self.seconds / self.window_s if self.window_s else None

    def describe(self) -> str:
        """How it was measured, for a verdict's reason or a table's note."""
        if self.source == STALL_ENGINE:
            return "the engine's stall time"
        res = f"{self.resolution_s:g} s " if self.resolution_s else ""
        return (f"whole {res}intervals with no completed write while writes waited (the "
                "engine tells no stall time)")


def stall_time(summary: Mapping[str, Any] | None) -> StallTime | None:
    """The phase's stall time over its measured window, or None when the summary has neither
    the engine's figure nor the driver's interval count."""
    stalls = _get(summary, "stalls")
    if not isinstance(stalls, Mapping):
        return None
    window_s = number(_get(summary, "window", "duration_s"))
    engine_us = number(stalls.get("engine_stall_micros"))
    if engine_us is not None:
        seconds = max(engine_us, 0.0) / 1e6
        if window_s:
            # A dataset's trees stall each on their own: their sum can pass the window.
            seconds = min(seconds, window_s)
        return StallTime(seconds, window_s, STALL_ENGINE,
                         count=number(stalls.get("engine_stall_count")))
    zero = number(stalls.get("zero_write_intervals"))
    interval_s = number(_get(summary, "interval_s"))
    if zero is None or not interval_s:
        return None
    return StallTime(zero * interval_s, window_s, STALL_INTERVALS, resolution_s=interval_s)


def stall_time_of_intervals(intervals: list[dict[str, Any]], warmup_s: float = 0.0
                            ) -> StallTime | None:
    """The engine's stall time over the measured intervals so far, from the intervals'
    engine snapshots: the figure :func:`stall_time` reads from summary.json once the phase
    has ended (the same two snapshots), for the live rules that judge a phase while it runs.
    None when the intervals carry no ``engine.stall_micros``."""
    before: dict[str, Any] | None = None
    measured = []
    for iv in intervals:
        start = number(iv.get("t_start_s"))
        if iv.get("drain") or start is None or number(iv.get("t_end_s")) is None:
            continue
        in_window = iv.get("measured") if isinstance(iv.get("measured"), bool) else (
            start + 1e-6 >= warmup_s)
        if in_window:
            measured.append(iv)
        elif not measured:
            before = iv
    if not measured:
        return None
    end_us = number(_get(measured[-1], "engine", "stall_micros"))
    if end_us is None:
        return None
    start_us = (number(_get(before, "engine", "stall_micros")) or 0.0) if before else 0.0
    window_s = float(measured[-1]["t_end_s"]) - float(measured[0]["t_start_s"])
    end_count = number(_get(measured[-1], "engine", "stall_count"))
    start_count = (number(_get(before, "engine", "stall_count")) or 0.0) if before else 0.0
    seconds = min(max(end_us - start_us, 0.0) / 1e6, window_s) if window_s > 0 else 0.0
    return StallTime(seconds, window_s, STALL_ENGINE,
                     count=end_count - start_count if end_count is not None else None)


@dataclass(frozen=True)
class WriteAmplification:
    """(bytes flushed + bytes merged) / bytes the clients wrote, over ``window``."""

    value: float
    window: str  # WA_WINDOW, WA_WINDOW_AND_DRAIN or WA_CUMULATIVE

    def label(self) -> str:
        return {WA_WINDOW: "over the measured window",
                WA_WINDOW_AND_DRAIN: "over the measured window and the drain",
                WA_CUMULATIVE: "cumulative over the phase"}[self.window]


_WRITTEN = ("bytes_flushed", "bytes_merged")


def _window_bytes(start: Any, end: Any) -> tuple[float, float] | None:
    """(user bytes, bytes written) over the window, when the engine counts both."""
    if not isinstance(end, Mapping):
        return None
    start = start if isinstance(start, Mapping) else {}
    user_end = number(end.get("user_bytes"))
    written_end = [number(end.get(k)) for k in _WRITTEN]
    if user_end is None or any(w is None for w in written_end):
        return None
    user = user_end - (number(start.get("user_bytes")) or 0.0)
    written = sum(float(w) for w in written_end if w is not None) - sum(
        number(start.get(k)) or 0.0 for k in _WRITTEN)
    return user, written


def write_amplification(summary: Mapping[str, Any] | None) -> WriteAmplification | None:
    """The phase's write amplification over its measured window; None when the engine tells
    neither its byte counters nor a write amplification, or when the window wrote no user
    byte (a mix without writes has none)."""
    metrics = _get(summary, "engine_metrics")
    if not isinstance(metrics, Mapping):
        return None
    start = metrics.get("window_start")
    window = "window_end" in metrics
    counted = _window_bytes(start, metrics.get("window_end" if window else "end"))
    if counted is not None:
        user, written = counted
        if user <= 0:
            return None
        return WriteAmplification(written / user, WA_WINDOW if window else WA_WINDOW_AND_DRAIN)
    cumulative = number(_get(metrics, "end", "write_amplification"))
    return WriteAmplification(cumulative, WA_CUMULATIVE) if cumulative is not None else None
