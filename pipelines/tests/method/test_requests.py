"""A mix without writes seen as requests (method/requests.py): the view puts the requests where
the method reads the writes, exactly where it can and never kinder where it cannot."""

from __future__ import annotations

import random

from lsmbench.method import requests as rq
from lsmbench.method.verdict import percentile_from_buckets


def test_an_interval_counts_its_requests_as_the_writes() -> None:
    iv = {"t_start_s": 1.0, "t_end_s": 2.0, "ops": {"read": 70, "scan": 30, "total": 100,
                                                    "writes": 0},
          "write_latency_us": {"count": 0},
          "latency_us": {"read": {"count": 70, "mean": 10.0, "p50": 8, "p99": 40, "max": 90},
                         "scan": {"count": 30, "mean": 50.0, "p50": 45, "p99": 200, "max": 300}}}
    v = rq.requests_interval(iv)
    assert v["ops"]["writes"] == 100
    lat = v["write_latency_us"]
    assert lat["count"] == 100
    assert lat["mean"] == (70 * 10 + 30 * 50) / 100
    # Each percentile is the highest of the types': the merged distribution's is never above.
    assert (lat["p50"], lat["p99"], lat["max"]) == (45, 200, 300)
    assert iv["ops"]["writes"] == 0  # the driver's record is left as it was


def test_one_request_type_is_its_own_latency() -> None:
    one = {"count": 5, "mean": 3.0, "p99": 7}
    assert rq.merged_latency({"read": one, "query_get": {"count": 9, "p99": 1}}) == one
    assert rq.merged_latency({}) == {"count": 0}


def test_the_histogram_is_the_exact_merge() -> None:
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rng = random.Random(seed)
    reads = [rng.randrange(1000, 5000) for _ in range(900)]
    scans = [rng.randrange(4000, 90000) for _ in range(100)]

    def hist(values: list[int]) -> dict:
        buckets: dict[int, int] = {}
        for v in values:
            buckets[v // 64 * 64] = buckets.get(v // 64 * 64, 0) + 1
        return {"count": len(values), "sum": sum(values), "min": min(values), "max": max(values),
                "buckets": [[b, b + 63, n] for b, n in sorted(buckets.items())]}

    h = {"histograms": {"read_latency": hist(reads), "scan_latency": hist(scans),
                        "query_get_latency": hist([1, 2, 3]),
                        "write_latency": {"count": 0, "buckets": []}}}
    merged = rq.requests_histograms(h)["histograms"]["write_latency"]
    both = hist(reads + scans)
    assert merged == {**both, "sum": float(both["sum"])}
    assert percentile_from_buckets(merged["buckets"], 0.99) == percentile_from_buckets(
        both["buckets"], 0.99)
    assert h["histograms"]["write_latency"]["count"] == 0  # a copy


def test_the_summary_takes_the_requests_and_their_censored() -> None:
    s = {"ops": {"read": 10, "total": 10, "writes": 0}, "max_write_throughput": 0.0,
         "throughput": {"mean": 123.0},
         "latency_us": {"read": {"count": 10, "p99": 5}},
         "open_loop": {"censored_ops": {"read": 2}}}
    v = rq.requests_summary(s)
    assert v["write_latency_us"] == {"count": 10, "p99": 5, "censored": 2}
    assert v["max_write_throughput"] == 123.0
