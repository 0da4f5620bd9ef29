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
  sealed in a span from one sealing to another, divided by its length, is the
  rate over whole cycles (:func:`flush_cycle_throughput` says how the span's
  edges are chosen without favouring short cycles).
* **Did the running window see the whole merge cycle?** A running phase that
  ended before a merge into the deepest level (of the tree, or of the testing
  phase's merges) cannot say that the rate is sustainable: the largest merge, the one that
  stalls writes longest, may still be ahead.
* **How long is that cycle?** The time between consecutive merges into the
  deepest level (:func:`merge_cycle`), and the same cycle at another write
  rate (:func:`scale_cycle`): merges follow flushes and flushes follow writes,
  so a cycle measured at one rate lasts rate/other-rate times as long at the
  other -- what lets ``lsmbench run`` warn before a running phase too short to
  see one (:mod:`lsmbench.cyclecheck`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from ..engine_options import WRITE_OPERATIONS


def events(intervals: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The events of one kind ("flush" or "merge") of every interval, in completion order."""
    out = [e for iv in intervals for e in (iv.get("events") or []) if e.get("kind") == kind]
    out.sort(key=lambda e: float(e.get("end_s", 0.0)))
    return out


def is_move(e: dict[str, Any]) -> bool:
    """A merge event that handed its one input to the level below as it was (``moved``:
    LevelDB's trivial move). It reads and writes nothing, so it is no part of a merge cycle:
    a partitioned tree moves files into its last level while that level does not yet cover
    their keys, many a second, none of them the work whose rate a phase measures."""
    return bool(e.get("moved"))


def rewriting_merges(intervals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The merge events that rewrote their inputs (every one but moves), in completion
    order."""
    return [e for e in events(intervals, "merge") if not is_move(e)]


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
    """Writes per second over whole memtable cycles: from the last sealing at or before
    ``from_s`` to the last sealing at or before ``to_s`` (the end of the series if None).

    Both edges are "the last sealing before t", so each includes the cycle in progress at
    one end and leaves out the one in progress at the other: a long cycle (one with a
    merge stall) is as likely to be counted whole at the start as to be cut at the end,
    and in a steady phase the counted span is as long, on average, as [from_s, to_s].
    Taking the *first* sealing after from_s instead would leave out the cycle in progress
    at both edges -- the longest cycles are the likeliest to straddle an edge -- and bias
    the rate upward.

    None when the events do not allow it (an engine that does not tell its flushes, events
    without ``sealed_s``, no sealing at or before ``from_s``, or fewer than ``min_cycles``
    whole cycles): the caller falls back to counting intervals.
    """
    sealed = []
    for e in events(intervals, "flush"):
        t = e.get("sealed_s")
        if t is None:
            return None
        sealed.append((float(t), int(e.get("entries", 0))))
    sealed.sort()
    before = [t for t, _ in sealed if t <= from_s]
    if not before:
        return None
    start = before[-1]
    counted = [(t, n) for t, n in sealed if t > start and (to_s is None or t <= to_s)]
    if len(counted) < min_cycles:
        return None
    end = counted[-1][0]
    writes = sum(n for _, n in counted)
    return CycleThroughput(
        writes_per_s=writes / (end - start),
        window_start_s=start,
        window_end_s=end,
        cycles=len(counted),
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


def tree_deepest_level(intervals: list[dict[str, Any]]) -> int | None:
    """The deepest level holding a component in the first interval that tells the levels
    (engine metrics ``disk_components.L<i>``), or None."""
    for iv in intervals:
        levels = [int(k.rsplit("L", 1)[1]) for k, v in (iv.get("engine") or {}).items()
                  if k.startswith("disk_components.L") and k.rsplit("L", 1)[1].isdigit()
                  and v and v > 0]
        if levels:
            return max(levels)
    return None


# A tree that keeps every component in one level (size-tiered) merges into its deepest level
# all the time, mostly a few small components. The merges that shape its rate, as the merges
# into the last level do a leveled or tiered tree's, are those that rewrite most of the tree:
# there, a merge into level 0 counts as one into the deepest level only when its inputs are at
# least this share of the tree's bytes.
MAJOR_MERGE_SHARE = 0.5


def merges_into(intervals: list[dict[str, Any]], level: int | None) -> list[dict[str, Any]]:
    """The merge events into ``level`` or deeper, in completion order (none for None), moves
    left out (is_move). Level 0 as the deepest is a one-level tree's: only its merges that
    read at least MAJOR_MERGE_SHARE of the tree (engine.disk_bytes of the interval that tells
    the merge or of the one before, the larger: the tree before the merge shrank it); every
    merge into it when the engine does not tell its bytes."""
    if level is None:
        return []
    out = []
    before = 0.0
    for iv in intervals:
        tree = float((iv.get("engine") or {}).get("disk_bytes") or 0.0)
        for e in iv.get("events") or []:
            if (e.get("kind") != "merge" or is_move(e)
                    or int(e.get("output_level", 0)) < level):
                continue
            bar = MAJOR_MERGE_SHARE * max(tree, before)
            if level == 0 and bar > 0 and float(e.get("input_bytes", 0)) < bar:
                continue
            out.append(e)
        before = tree
    out.sort(key=lambda e: float(e.get("end_s", 0.0)))
    return out


def deepest_text(level: int) -> str:
    """The deepest level in words, for the merges into it that a phase counts."""
    if level == 0:
        return (f"level 0 reading at least {MAJOR_MERGE_SHARE:.0%} of the tree (one level: "
                "its major merges)")
    return f"level {level}"


def phase_deepest_level(intervals: list[dict[str, Any]]) -> int | None:
    """The deepest level of a phase, whose merges shape its rate: the deepest level of the tree
    it starts from (engine metrics), or a deeper one its merges recur into -- two merges at
    least. A level the phase creates is a deepening, not a cycle, until a second merge lands in
    it: a tree deepens while its data grows (a tiered tree under inserts: a merge into level
    L + 1 every T^(L+1) flushes, each T times rarer), and a window cannot hold twice what came
    once.
    Without level metrics: the deepest level of its merges. None without either. Moves do
    not count (is_move): a file moved down is no merge cycle of the level it lands in."""
    levels = Counter(int(e.get("output_level", 0)) for e in rewriting_merges(intervals))
    return deepest_of(tree_deepest_level(intervals), levels)


def deepest_of(tree: int | None, merged: Counter[int]) -> int | None:
    """phase_deepest_level's rule: the tree's deepest level, or a deeper one ``merged``
    (merges per output level) has two merges in; without the tree's, the deepest merged."""
    if tree is None:
        return max(merged) if merged else None
    return max([tree, *(level for level, n in merged.items() if n >= 2)])


def window_coverage(reference: list[dict[str, Any]], running: list[dict[str, Any]],
                    window_start_s: float, window_end_s: float) -> Coverage | None:
    """Did a merge into the deepest level run within the window?

    The deepest level is the deepest of the tree the running phase starts from
    (engine metrics) and of ``reference``, the testing phase's time series
    (phase_deepest_level: a level it created counts once two merges landed in
    it): a testing window too short to see a merge into the tree's last level
    must not lower the bar to the level above it. A merge counts
    when its start or end falls in the window (one that spans the whole window
    counts too). None when there are no merge events to judge by (an engine
    that does not tell them, or no merge at all in the reference), or when the
    reference's merges were all moves and no level metrics name the last level.
    """
    told = events(reference, "merge")
    if not told:
        return None
    ref = [e for e in told if not is_move(e)]
    levels = [lv for lv in (phase_deepest_level(reference), tree_deepest_level(running))
              if lv is not None]
    if not levels:
        return None  # moves alone and no level metrics: nothing to say which level is last
    deepest = max(levels)
    largest = max((int(e.get("input_bytes", 0)) for e in ref), default=0)
    inside = 0
    for e in merges_into(running, deepest):
        start, end = float(e.get("start_s", 0.0)), float(e.get("end_s", 0.0))
        if end >= window_start_s and start <= window_end_s:
            inside += 1
    span = window_end_s - window_start_s
    if inside:
        return Coverage(True, deepest, inside, largest,
                        f"{inside} merge(s) into {deepest_text(deepest)}, the deepest, in "
                        f"the {span:.0f} s window")
    return Coverage(False, deepest, 0, largest,
                    f"no merge into {deepest_text(deepest)} (the deepest; the testing phase's "
                    f"largest merge read {largest / 2**20:.1f} MiB) in the {span:.0f} s window: "
                    "the window did not see the whole merge cycle")


# ---------------------------------------------------------------- the deepest merge's cycle


def interval_writes(interval: dict[str, Any]) -> float:
    """The writes an interval completed (ops.writes, else inserts + updates + deletes)."""
    ops = interval.get("ops") or {}
    if "writes" in ops:
        return float(ops["writes"])
    return float(sum(ops.get(k, 0) for k in WRITE_OPERATIONS))


def _regular(intervals: list[dict[str, Any]]) -> list[tuple[float, float, float]]:
    """(start, end, writes) of the intervals that have a span, drain intervals left out."""
    out = []
    for iv in intervals:
        if iv.get("drain") or "t_start_s" not in iv or "t_end_s" not in iv:
            continue
        start, end = float(iv["t_start_s"]), float(iv["t_end_s"])
        if end > start:
            out.append((start, end, interval_writes(iv)))
    return out


def writes_between(intervals: list[dict[str, Any]], t0: float, t1: float) -> float:
    """The writes completed between t0 and t1, an interval cut by either end counted for the
    share of it inside (writes taken as even within an interval)."""
    total = 0.0
    for start, end, writes in _regular(intervals):
        overlap = min(end, t1) - max(start, t0)
        if overlap > 0:
            total += writes * overlap / (end - start)
    return total


@dataclass(frozen=True)
class MergeCycle:
    """The merges of one phase into the deepest level they reached, and how often they came."""

    level: int  # the deepest output level of the phase's merges
    merges: int  # merges into it in the phase
    phase_s: float  # the phase's length
    # Mean time between consecutive starts of those merges; None with fewer than 2.
    mean_s: float | None
    # The write rate the cycle was measured at: over the span from the first to the last of
    # those starts when mean_s is known, else over the whole phase.
    writes_per_s: float | None
    writes_per_flush: float | None  # mean entries of the phase's flushes (None: no flush events)
    # When the phase opened with a merge into that level already due (the load left it
    # pending: it started in the phase's first second), the time it ended; else None.
    pending_end_s: float | None = None

    @property
    def writes(self) -> float | None:
        """Writes per cycle (rate-free): what the memtables took between two such merges."""
        if self.mean_s is None or self.writes_per_s is None:
            return None
        return self.mean_s * self.writes_per_s

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> MergeCycle | None:
        """The cycle as to_json wrote it (point.json); None for anything else."""
        if not isinstance(data, dict):
            return None
        optional = {"pending_end_s"}  # added later: older records lack it
        try:
            return cls(**{f: data[f] for f in cls.__dataclass_fields__
                          if f in data or f not in optional})
        except (KeyError, TypeError):
            return None


# A merge that starts this soon after a phase opens was due before it: the tree the phase
# started from (the load's) had it pending.
PENDING_WITHIN_S = 1.0


def merge_cycle(intervals: list[dict[str, Any]]) -> MergeCycle | None:
    """The deepest level (phase_deepest_level, as window_coverage) and the mean time
    between consecutive starts of the merges into it (moves left out). None when the phase
    tells no merge (an engine that does not tell its events, or a phase too short to merge),
    or only moves and no level metrics."""
    merges = events(intervals, "merge")
    spans = _regular(intervals)
    if not merges or not spans:
        return None
    deepest = phase_deepest_level(intervals)
    if deepest is None:
        return None  # moves alone and no level metrics
    into = [e for e in merges_into(intervals, deepest)
            if int(e.get("output_level", 0)) == deepest]
    starts = sorted(float(e.get("start_s", 0.0)) for e in into)
    phase_start, phase_end = spans[0][0], spans[-1][1]
    pending = [float(e.get("end_s", 0.0)) for e in into
               if float(e.get("start_s", 0.0)) <= phase_start + PENDING_WITHIN_S]
    flushes = [int(e.get("entries", 0)) for e in events(intervals, "flush")]
    mean_s = rate = None
    if len(starts) >= 2 and starts[-1] > starts[0]:
        mean_s = (starts[-1] - starts[0]) / (len(starts) - 1)
        rate = writes_between(intervals, starts[0], starts[-1]) / (starts[-1] - starts[0])
    elif phase_end > phase_start:
        rate = sum(w for _, _, w in spans) / (phase_end - phase_start)
    return MergeCycle(
        level=deepest,
        merges=len(starts),
        phase_s=phase_end - phase_start,
        mean_s=mean_s,
        writes_per_s=rate,
        writes_per_flush=sum(flushes) / len(flushes) if flushes else None,
        pending_end_s=min(pending) - phase_start if pending else None,
    )


def scale_cycle(cycle_s: float, at_rate: float, to_rate: float) -> float:
    """A cycle of cycle_s seconds measured at at_rate writes/s, at to_rate writes/s instead.

    Merges follow flushes and flushes follow writes, so a cycle is a number of writes: it
    lasts at_rate / to_rate times as long at the other rate."""
    if at_rate <= 0 or to_rate <= 0:
        raise ValueError(f"rates must be > 0 writes/s, got {at_rate:g} and {to_rate:g}")
    return cycle_s * at_rate / to_rate
