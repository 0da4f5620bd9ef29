"""What the engine's flush and merge events say about a phase (pure functions).

The driver puts the flushes and merges the engine completed into each interval
of timeseries.jsonl (``events``: engines/driver/README.md). Two questions are
answered from them:

* **The testing maximum over whole flush cycles.** Counting the writes of a
  fixed window counts whatever fraction of a memory component's cycle the
  window happens to cut, so with few flushes per window the figure is
  quantized (a 20 s window of 4 MiB memtables moves in steps of ~3.5 %).
  Every write lands in a memtable, and a memtable's writes are exactly those
  between its predecessor's sealing and its own: the entries of the flushes
  sealed after the first one in the window, divided by the time from the
  first sealing to the last, is the rate over whole cycles.
* **Did the running window see the whole merge cycle?** A running phase that
  ended before a merge into the deepest level the testing phase reached
  cannot say that the rate is sustainable: the largest merge, the one that
  stalls writes longest, may still be ahead.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


def events(intervals: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The events of one kind ("flush" or "merge") of every interval, in completion order."""
    out = [e for iv in intervals for e in (iv.get("events") or []) if e.get("kind") == kind]
    out.sort(key=lambda e: float(e.get("end_s", 0.0)))
    return out


@dataclass(frozen=True)
class CycleThroughput:
    """The write rate over whole memtable cycles of a window."""

    writes_per_s: float
    window_start_s: float  # the first counted cycle starts at this sealing
    window_end_s: float  # the last counted cycle ends at this sealing
    cycles: int  # memtables whose writes are counted
    writes: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def flush_cycle_throughput(intervals: list[dict[str, Any]], from_s: float,
                           to_s: float | None = None,
                           min_cycles: int = 2) -> CycleThroughput | None:
    """Writes per second over the whole memtable cycles sealed in [from_s, to_s].

    None when the events do not allow it (an engine that does not tell its
    flushes, events without ``sealed_s``, or fewer than ``min_cycles`` whole
    cycles in the window): the caller falls back to counting intervals.
    """
    sealed = []
    for e in events(intervals, "flush"):
        t = e.get("sealed_s")
        if t is None:
            return None
        t = float(t)
        if t >= from_s and (to_s is None or t <= to_s):
            sealed.append((t, int(e.get("entries", 0))))
    sealed.sort()
    if len(sealed) < min_cycles + 1:
        return None
    span = sealed[-1][0] - sealed[0][0]
    if span <= 0:
        return None
    writes = sum(n for _, n in sealed[1:])
    return CycleThroughput(
        writes_per_s=writes / span,
        window_start_s=sealed[0][0],
        window_end_s=sealed[-1][0],
        cycles=len(sealed) - 1,
        writes=writes,
    )


@dataclass(frozen=True)
class Coverage:
    """Whether a running window saw a merge into the deepest level."""

    complete: bool
    deepest_level: int | None  # the deepest output level of the reference phase's merges
    merges_into_deepest: int  # in the window
    largest_merge_bytes: int | None  # the reference phase's largest merge input
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def window_coverage(reference: list[dict[str, Any]], running: list[dict[str, Any]],
                    window_start_s: float, window_end_s: float) -> Coverage | None:
    """Did a merge into the deepest level seen in ``reference`` run within the window?

    ``reference`` is the testing phase's time series (what the tree does at
    this scale), ``running`` the running phase's. A merge counts when its
    start or end falls in the window (one that spans the whole window counts
    too). None when there are no merge events to judge by (an engine that does
    not tell them, or no merge at all in the reference).
    """
    ref = events(reference, "merge")
    if not ref:
        return None
    deepest = max(int(e.get("output_level", 0)) for e in ref)
    largest = max(int(e.get("input_bytes", 0)) for e in ref)
    inside = 0
    for e in events(running, "merge"):
        if int(e.get("output_level", 0)) < deepest:
            continue
        start, end = float(e.get("start_s", 0.0)), float(e.get("end_s", 0.0))
        if end >= window_start_s and start <= window_end_s:
            inside += 1
    span = window_end_s - window_start_s
    if inside:
        return Coverage(True, deepest, inside, largest,
                        f"{inside} merge(s) into level {deepest}, the deepest, in the "
                        f"{span:.0f} s window")
    return Coverage(False, deepest, 0, largest,
                    f"no merge into level {deepest} (the deepest; the testing phase's largest "
                    f"merge read {largest / 2**20:.1f} MiB) in the {span:.0f} s window: the "
                    f"window did not see the whole merge cycle")
