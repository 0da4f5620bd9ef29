"""A mix without writes (YCSB's workload C) under the two-phase method: its requests are what
the method counts.

The method's figures are about writes: the testing phase's maximum write throughput, the
running phase's write latency from intended arrival, the intervals in which no write completed.
A mix that writes nothing has none of them, and the question the method asks still has an
answer for it: the highest request rate the engine sustains. So its phases are judged on every
request the writers send. The driver's outputs are read through this view, which puts the
requests where the method reads the writes (``ops.writes``, ``write_latency_us``, the
``write_latency`` histogram); every figure the method takes from it is then a request figure,
and the records say so (``unit: requests``). The files on disk stay the driver's.

Per-interval latencies of several request types cannot be merged exactly from their
percentiles: each percentile of the view is the highest of the types' (a mixture's quantile
never exceeds its components' highest), so a verdict on it is never too kind. The window's
histogram is the exact merge of the types' histograms.
"""

from __future__ import annotations

import copy
from typing import Any

REQUESTS = "requests"
# The driver's request types (engines/driver/workload.h); query threads' are not the mix's.
REQUEST_TYPES = ("insert", "update", "delete", "read", "scan", "rmw")
_PERCENTILES = ("p50", "p90", "p99", "p999", "max")


def merged_latency(by_type: dict[str, Any] | None) -> dict[str, Any]:
    """One latency summary for the request types of a ``latency_us`` mapping: counts added,
    the mean weighted, each percentile the highest of the types' (an upper bound)."""
    parts = [v for k, v in (by_type or {}).items()
             if k in REQUEST_TYPES and isinstance(v, dict) and v.get("count")]
    if not parts:
        return {"count": 0}
    if len(parts) == 1:
        return dict(parts[0])
    count = sum(float(p["count"]) for p in parts)
    out: dict[str, Any] = {"count": int(count)}
    if all(p.get("mean") is not None for p in parts):
        out["mean"] = sum(float(p["mean"]) * float(p["count"]) for p in parts) / count
    for q in _PERCENTILES:
        values = [float(p[q]) for p in parts if p.get(q) is not None]
        if values:
            out[q] = max(values)
    return out


def requests_interval(interval: dict[str, Any]) -> dict[str, Any]:
    """An interval of the time series with its requests in the place of its writes."""
    iv = dict(interval)
    ops = dict(iv.get("ops") or {})
    ops["writes"] = ops.get("total", sum(int(ops.get(t, 0)) for t in REQUEST_TYPES))
    iv["ops"] = ops
    iv["write_latency_us"] = merged_latency(iv.get("latency_us"))
    return iv


def requests_histograms(histograms: dict[str, Any] | None) -> dict[str, Any] | None:
    """histograms.json with ``write_latency`` the exact merge of the request types' histograms."""
    if not histograms:
        return histograms
    out = copy.deepcopy(histograms)
    hs = out.get("histograms")
    if not isinstance(hs, dict):
        return out
    buckets: dict[tuple[float, float], float] = {}
    count = total = 0.0
    lo = hi = None
    for t in REQUEST_TYPES:
        h = hs.get(f"{t}_latency")
        if not isinstance(h, dict) or not h.get("count"):
            continue
        for low, high, n in h.get("buckets") or []:
            buckets[(low, high)] = buckets.get((low, high), 0) + n
        count += float(h["count"])
        total += float(h.get("sum") or 0)
        lo = h.get("min") if lo is None else min(lo, h.get("min", lo))
        hi = h.get("max") if hi is None else max(hi, h.get("max", hi))
    hs["write_latency"] = {"count": int(count), "sum": total, "min": lo, "max": hi,
                           "buckets": [[a, b, n] for (a, b), n in sorted(buckets.items())]}
    return out


def requests_summary(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """summary.json with its request latency in ``write_latency_us`` and
    ``write_processing_latency_us`` (the censored requests counted as the censored writes
    are)."""
    if not summary:
        return summary
    out = dict(summary)
    latency = merged_latency(summary.get("latency_us"))
    censored = (summary.get("open_loop") or {}).get("censored_ops")
    if isinstance(censored, dict):
        latency["censored"] = sum(int(v) for k, v in censored.items() if k in REQUEST_TYPES)
    out["write_latency_us"] = latency
    out["write_processing_latency_us"] = merged_latency(summary.get("processing_latency_us"))
    if "max_write_throughput" in summary:  # a testing phase's figure of the window
        out["max_write_throughput"] = (summary.get("throughput") or {}).get("mean")
    return out
