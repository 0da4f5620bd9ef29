"""Latency quantiles from what the driver records: a full histogram's buckets, or the
per-interval percentile summaries of the time series, whose merge can only be bounded.

Pure functions over the driver's outputs (schemas in engines/driver/README.md)."""

from __future__ import annotations

import math
from typing import Any


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


_TAIL_SHARES = (("p50", 0.5), ("p90", 0.1), ("p99", 0.01), ("p999", 0.001), ("max", 0.0))


def p99_from_timeseries(intervals: list[dict[str, Any]], from_s: float = 0.0) -> float | None:
    """A p99 (seconds) that bounds the window's from above when no histogram is at hand.

    Per-interval percentiles cannot be merged exactly, but each bounds the writes over a
    value: an interval whose p90 is at most t has at most 10 % of its writes over t. The
    bound is the least of the intervals' percentile values t at which those shares add up
    to at most 1 % of the window's writes: never above the worst interval's p99 (where the
    shares are 1 % each), so a verdict based on it is never too kind, and often well under
    it when one interval's tail is not the whole window's.
    """
    measured = []
    for iv in intervals:
        start = float(iv.get("t_start_s", 0.0))
        lat = iv.get("write_latency_us") or {}
        if start + 1e-6 < from_s or not lat.get("count") or lat.get("p99") is None:
            continue
        measured.append(lat)
    if not measured:
        return None
    total = sum(float(lat["count"]) for lat in measured)
    candidates = sorted({float(lat[q]) for lat in measured for q, _ in _TAIL_SHARES
                         if lat.get(q) is not None})
    # The count over t only falls as t grows: bisect (a long phase's live rule asks every
    # interval, over thousands of them).
    lo, hi = 0, len(candidates)
    while lo < hi:
        mid = (lo + hi) // 2
        if tail_over_upper_bound(measured, candidates[mid]) <= 0.01 * total + 1e-9:
            hi = mid
        else:
            lo = mid + 1
    if lo < len(candidates):
        return candidates[lo] / 1e6
    return max(float(lat["p99"]) for lat in measured) / 1e6


def tail_over_upper_bound(latencies: list[dict[str, Any]], limit_us: float) -> float:
    """At most how many of the writes of these per-interval latency summaries exceeded
    limit_us: each interval's share over its highest percentile at or under the limit
    (all of them when even its p50 is over)."""
    over = 0.0
    for lat in latencies:
        n = float(lat.get("count") or 0)
        share = 1.0
        for q, tail in _TAIL_SHARES:
            v = lat.get(q)
            if v is not None and float(v) <= limit_us:
                share = tail
        over += n * share
    return over
