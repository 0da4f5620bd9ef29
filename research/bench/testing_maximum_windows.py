"""How far a short testing window's maximum lands from the long-run rate, per estimator.

Takes stored testing phases much longer than the window a campaign uses (e.g. the quickstart's
testing phase run for 120 s: research/quickstart-verdicts.md), treats the rate over the
whole phase after its warm-up as the truth, and slides a short window (default 13.3 s, the
quickstart's 16 s less its warm-up) over the phase one interval at a time. For every
placement it computes both figures `phases.testing.maximum` can choose -- the interval count
(verdict.max_throughput) and the whole-cycle rate (cycles.flush_cycle_throughput) -- and
prints, per policy, their error against the truth: median (bias), the 5-95 % range and the
root mean square.

    python research/bench/testing_maximum_windows.py RESULTS/CAMPAIGN [--window 13.3]

A measurement script, not a test.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from lsmbench.driverio import read_timeseries
from lsmbench.method.cycles import flush_cycle_throughput
from lsmbench.method.verdict import MIN_TESTING_CYCLES, VerdictError, max_throughput


def errors(intervals: list[dict], warmup: float, window: float) -> dict[str, list[float]]:
    end = max(float(iv["t_end_s"]) for iv in intervals if "t_end_s" in iv)
    truth = max_throughput(intervals, warmup).writes_per_s
    whole = flush_cycle_throughput(intervals, warmup, min_cycles=MIN_TESTING_CYCLES)
    out: dict[str, list[float]] = {"intervals": [], "cycles": [], "truth": [truth],
                                   "truth_cycles": [whole.writes_per_s if whole else math.nan]}
    start = warmup
    while start + window <= end + 1e-6:
        try:
            count = max_throughput(intervals, start, start + window).writes_per_s
        except VerdictError:
            count = math.nan
        cyc = flush_cycle_throughput(intervals, start, start + window,
                                     min_cycles=MIN_TESTING_CYCLES)
        out["intervals"].append(count / truth - 1)
        out["cycles"].append((cyc.writes_per_s if cyc else count) / truth - 1)
        start += 1.0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaign", type=Path)
    ap.add_argument("--window", type=float, default=16.0 * 5 / 6)
    args = ap.parse_args()
    by_policy: dict[str, dict[str, list[float]]] = {}
    for point in sorted(args.campaign.glob("*/point.json")):
        rec = json.loads(point.read_text())
        ivs = read_timeseries(point.parent / "testing" / "timeseries.jsonl")
        if rec.get("state") != "complete" or not ivs:
            continue
        warmup = float(rec["max_throughput"]["warmup_s"])
        e = errors(ivs, warmup, args.window)
        policy = rec["params"].get("policy", "?")
        print(f"{rec['point']}: long-run {e['truth'][0]:,.0f} writes/s by count, "
              f"{e['truth_cycles'][0]:,.0f} by whole cycles; {len(e['intervals'])} windows")
        agg = by_policy.setdefault(policy, {"intervals": [], "cycles": []})
        agg["intervals"] += e["intervals"]
        agg["cycles"] += e["cycles"]
    print(f"\nerror of a {args.window:g} s window's maximum against the long-run rate")
    print("| policy | estimator | windows | median (bias) | 5-95 % range | RMS |")
    print("|---|---|---|---|---|---|")
    for policy, agg in by_policy.items():
        for name, errs in agg.items():
            x = np.array([v for v in errs if math.isfinite(v)])
            lo, hi = np.percentile(x, [5, 95])
            print(f"| {policy} | {name} | {len(x)} | {np.median(x):+.1%} | "
                  f"{lo:+.1%} .. {hi:+.1%} | {math.sqrt(np.mean(x ** 2)):.1%} |")


if __name__ == "__main__":
    main()
