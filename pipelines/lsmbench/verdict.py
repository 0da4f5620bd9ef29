"""The arithmetic of the two-phase method, as pure functions over driver outputs.

* :func:`max_throughput` — the testing phase's maximum write throughput: the
  writes completed in the measured window divided by the window's length,
  the window being the phase without its warm-up (by default the first 1/6,
  as the paper excluded 20 of 120 minutes).
* :func:`judge` — the running phase's verdict: sustainable when the p99 write
  latency (from each write's *intended* arrival) is under a bound and the
  backlog at the end is under ``max_backlog`` seconds of arrivals.

Nothing here reads files or clocks: the inputs are the parsed
``timeseries.jsonl`` lines, ``summary.json`` and ``histograms.json``
(schemas in engines/driver/README.md), so the tests feed recorded outputs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


class VerdictError(ValueError):
    """Driver outputs that cannot support a figure (empty window, missing fields)."""


# ---------------------------------------------------------------- helpers


def _writes(interval: dict[str, Any]) -> float:
    ops = interval.get("ops") or {}
    if "writes" in ops:
        return float(ops["writes"])
    return float(sum(ops.get(k, 0) for k in ("insert", "update", "delete")))


def _span(interval: dict[str, Any]) -> tuple[float, float]:
    try:
        return float(interval["t_start_s"]), float(interval["t_end_s"])
    except (KeyError, TypeError, ValueError) as e:
        raise VerdictError(f"interval without t_start_s/t_end_s: {interval!r:.120}") from e


def percentile_from_buckets(buckets: list[list[float]], q: float,
                            lo: float | None = None, hi: float | None = None) -> float | None:
    """The value at quantile q of a histogram given as [[low, high, count], ...].

    The same rule as the driver: the smallest bucket that covers rank
    ceil(q * count), reported at its midpoint, clamped to [lo, hi].
    """
    total = sum(b[2] for b in buckets)
    if total <= 0:
        return None
    rank = min(max(math.ceil(q * total), 1), total)
    seen = 0.0
    for low, high, count in sorted(buckets, key=lambda b: b[0]):
        seen += count
        if seen >= rank:
            v = low + (high - low) // 2
            if lo is not None:
                v = max(v, lo)
            if hi is not None:
                v = min(v, hi)
            return float(v)
    return float(hi) if hi is not None else None


# ---------------------------------------------------------------- max throughput


@dataclass
class MaxThroughput:
    """The testing phase's figure and the window it covers."""

    writes_per_s: float
    window_start_s: float
    window_end_s: float
    intervals: int
    writes: float
    warmup_s: float
    per_interval_min: float
    per_interval_max: float
    cv: float  # coefficient of variation of the per-interval write rates

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def warmup_seconds(duration_s: float, warmup_s: float | None = None,
                   warmup_fraction: float = 1 / 6) -> float:
    """The warm-up excluded from the measured window: explicit, else a fraction of the phase."""
    w = warmup_s if warmup_s is not None else duration_s * warmup_fraction
    if not 0 <= w < duration_s:
        raise VerdictError(f"warm-up {w:g}s must be in [0, {duration_s:g}s)")
    return w


def max_throughput(intervals: list[dict[str, Any]], warmup_s: float,
                   end_s: float | None = None) -> MaxThroughput:
    """Mean write throughput over the intervals that start at or after the warm-up.

    An interval that straddles the warm-up boundary is left out whole (its
    writes cannot be split); so is one that ends after ``end_s`` when given.
    The mean is total writes / total covered time, which weights intervals
    by their length (the last interval of a run may be short).
    """
    eps = 1e-6
    chosen = []
    for iv in intervals:
        start, end = _span(iv)
        if start + eps < warmup_s:
            continue
        if end_s is not None and end > end_s + eps:
            continue
        if end <= start:
            continue
        chosen.append((start, end, _writes(iv)))
    if not chosen:
        raise VerdictError(
            f"no complete interval after the {warmup_s:g}s warm-up "
            f"({len(intervals)} intervals in all): the phase is too short for its warm-up"
        )
    span = sum(e - s for s, e, _ in chosen)
    writes = sum(w for _, _, w in chosen)
    rates = [w / (e - s) for s, e, w in chosen]
    mean_rate = sum(rates) / len(rates)
    var = sum((r - mean_rate) ** 2 for r in rates) / len(rates)
    return MaxThroughput(
        writes_per_s=writes / span,
        window_start_s=chosen[0][0],
        window_end_s=chosen[-1][1],
        intervals=len(chosen),
        writes=writes,
        warmup_s=warmup_s,
        per_interval_min=min(rates),
        per_interval_max=max(rates),
        cv=math.sqrt(var) / mean_rate if mean_rate > 0 else 0.0,
    )


# ---------------------------------------------------------------- verdict


@dataclass
class RunningFigures:
    """What the verdict is computed from, extracted from one running phase's outputs."""

    utilization: float
    arrival_rate: float  # intended writes/s (utilization x max throughput)
    p99_write_latency_s: float | None  # from intended arrival: queueing + processing
    final_queue_length: float  # writes arrived but not yet started at the end
    achieved_rate: float | None = None
    window_start_s: float | None = None
    window_end_s: float | None = None
    max_queue_length: float | None = None
    queue_slope_per_s: float | None = None  # least-squares trend of the queue (informative)
    source: str = ""


@dataclass
class Verdict:
    sustainable: bool
    utilization: float
    arrival_rate: float
    p99_write_latency_s: float | None
    p99_limit_s: float
    final_queue_length: float
    queue_limit: float  # max_backlog_s x arrival_rate
    max_backlog_s: float
    achieved_rate: float | None
    window_start_s: float | None
    window_end_s: float | None
    queue_slope_per_s: float | None
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        word = "sustainable" if self.sustainable else "NOT sustainable"
        return f"{word} at {self.utilization:g} x max: " + "; ".join(self.reasons)


def _fmt_s(v: float) -> str:
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.3g} s"


def judge(fig: RunningFigures, p99_limit_s: float = 1.0, max_backlog_s: float = 1.0) -> Verdict:
    """Sustainable iff p99 write latency <= limit and final queue < max_backlog_s of arrivals."""
    reasons = []
    ok = True
    if fig.p99_write_latency_s is None:
        ok = False
        reasons.append("no write completed in the measured window (p99 unknown)")
    elif fig.p99_write_latency_s <= p99_limit_s:
        reasons.append(f"p99 write latency {_fmt_s(fig.p99_write_latency_s)} <= "
                       f"{_fmt_s(p99_limit_s)}")
    else:
        ok = False
        reasons.append(f"p99 write latency {_fmt_s(fig.p99_write_latency_s)} > "
                       f"{_fmt_s(p99_limit_s)}")
    limit = max_backlog_s * fig.arrival_rate
    if fig.final_queue_length < limit or (limit == 0 and fig.final_queue_length == 0):
        reasons.append(f"final queue {fig.final_queue_length:.0f} writes < {max_backlog_s:g} s "
                       f"of arrivals ({limit:.0f})")
    else:
        ok = False
        reasons.append(f"final queue {fig.final_queue_length:.0f} writes >= {max_backlog_s:g} s "
                       f"of arrivals ({limit:.0f}): the backlog grows")
    return Verdict(
        sustainable=ok,
        utilization=fig.utilization,
        arrival_rate=fig.arrival_rate,
        p99_write_latency_s=fig.p99_write_latency_s,
        p99_limit_s=p99_limit_s,
        final_queue_length=fig.final_queue_length,
        queue_limit=limit,
        max_backlog_s=max_backlog_s,
        achieved_rate=fig.achieved_rate,
        window_start_s=fig.window_start_s,
        window_end_s=fig.window_end_s,
        queue_slope_per_s=fig.queue_slope_per_s,
        reasons=reasons,
    )


def queue_slope(intervals: list[dict[str, Any]], from_s: float = 0.0) -> float | None:
    """Least-squares slope (writes/s) of the queue length over time; None if < 2 points."""
    pts = []
    for iv in intervals:
        q = (iv.get("queue") or {}).get("length")
        if q is None:
            continue
        _, end = _span(iv)
        if end >= from_s:
            pts.append((end, float(q)))
    if len(pts) < 2:
        return None
    n = len(pts)
    mx = sum(t for t, _ in pts) / n
    my = sum(q for _, q in pts) / n
    sxx = sum((t - mx) ** 2 for t, _ in pts)
    if sxx == 0:
        return None
    return sum((t - mx) * (q - my) for t, q in pts) / sxx


def p99_from_timeseries(intervals: list[dict[str, Any]], from_s: float = 0.0) -> float | None:
    """A conservative p99 (seconds) when no histogram is at hand: the largest per-interval p99.

    Per-interval percentiles cannot be merged exactly; the maximum bounds the
    whole window's p99 from above, so a verdict based on it is never too kind.
    """
    worst = None
    for iv in intervals:
        start, _ = _span(iv)
        if start + 1e-6 < from_s:
            continue
        lat = iv.get("write_latency_us") or {}
        if lat.get("count") and lat.get("p99") is not None:
            v = float(lat["p99"]) / 1e6
            worst = v if worst is None else max(worst, v)
    return worst


def running_figures(
    utilization: float,
    arrival_rate: float,
    intervals: list[dict[str, Any]],
    summary: dict[str, Any] | None = None,
    histograms: dict[str, Any] | None = None,
    warmup_s: float = 0.0,
) -> RunningFigures:
    """Extracts the verdict's inputs, preferring the exact sources.

    p99: the write histogram of histograms.json, else summary.json's
    write_latency_us.p99, else the worst per-interval p99 of the time series.
    Final queue: summary.json's open_loop.final_queue_length, else the last
    interval's queue length.
    """
    summary = summary or {}
    p99 = None
    source = []
    hist = _write_histogram(histograms) if histograms else None
    if hist is not None:
        buckets = hist.get("buckets") or []
        p99_ns = percentile_from_buckets(buckets, 0.99, hist.get("min"), hist.get("max"))
        if p99_ns is not None:
            p99 = p99_ns / 1e9
            source.append("p99 from histograms.json")
    if p99 is None and (summary.get("write_latency_us") or {}).get("p99") is not None:
        p99 = float(summary["write_latency_us"]["p99"]) / 1e6
        source.append("p99 from summary.json")
    if p99 is None:
        p99 = p99_from_timeseries(intervals, warmup_s)
        if p99 is not None:
            source.append("p99 = worst interval p99 (timeseries)")
    open_loop = summary.get("open_loop") or {}
    final_q = open_loop.get("final_queue_length")
    regular = [iv for iv in intervals if not iv.get("drain")]
    if len(regular) < len(intervals) and regular and (regular[-1].get("queue") or {}).get(
            "length") is not None:
        # A drain ran after the arrivals ended: the backlog that counts is the one at the
        # end of the arrivals, not what is left after draining it.
        final_q = regular[-1]["queue"]["length"]
        source.append("final queue = last interval before the drain")
    elif final_q is None:
        qs = [(iv.get("queue") or {}).get("length") for iv in intervals]
        qs = [q for q in qs if q is not None]
        if not qs:
            raise VerdictError("no queue length in summary.json or the time series: "
                               "was this an open-loop (running) phase?")
        final_q = qs[-1]
        source.append("final queue from timeseries")
    else:
        source.append("final queue from summary.json")
    window = summary.get("window") or {}
    max_q = open_loop.get("max_queue_length")
    if max_q is None:
        qs = [(iv.get("queue") or {}).get("max") for iv in intervals]
        qs = [q for q in qs if q is not None]
        max_q = max(qs) if qs else None
    achieved = open_loop.get("achieved_rate")
    if achieved is None and intervals:
        try:
            achieved = max_throughput(intervals, warmup_s).writes_per_s
        except VerdictError:
            achieved = None
    return RunningFigures(
        utilization=utilization,
        arrival_rate=arrival_rate,
        p99_write_latency_s=p99,
        final_queue_length=float(final_q),
        achieved_rate=achieved,
        window_start_s=window.get("start_s", warmup_s),
        window_end_s=window.get("end_s"),
        max_queue_length=max_q,
        queue_slope_per_s=queue_slope(regular, warmup_s),
        source="; ".join(source),
    )


def _write_histogram(histograms: dict[str, Any]) -> dict[str, Any] | None:
    """The all-writes latency histogram (from intended arrival, ns) in histograms.json."""
    hs = histograms.get("histograms", histograms)
    h = hs.get("write_latency") if isinstance(hs, dict) else None
    if isinstance(h, dict) and "buckets" in h:
        return h
    return None
