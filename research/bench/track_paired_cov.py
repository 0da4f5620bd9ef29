"""The spread of paired nights against the spread of the raw metric over the same nights
(issue 33's A/A acceptance; research/bench/track_paired_acceptance.sh runs it):

    .venv/bin/python research/bench/track_paired_cov.py HISTORY [--campaign nightly]
        [--last N]

Per group and metric over the paired nights (the newest N): the CoV (standard deviation over
the mean) of the paired ratio (candidate / reference, one per night) beside the CoV of the
candidate's nightly median, and their quotient. The ratio subtracts what the testbed did
that night; what is left is each run's own noise about its night.

Then the same nights as the synthetic suite's testbed parameters (lsmbench.track.
synthetic_paired: a run measures level * (1 + shared[t] + own)), valid for A/A nights (both
builds one engine): a run's CoV (the spread of every run's log value over the nights), its
own part (a pair's log ratio spreads sqrt(2) times a run's own noise: pooled over the nights'
pairs about each night's mean), and the night's share of the variance, 1 - own^2 / run^2 --
the suite's --testbed-shared.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

from lsmbench.track.history import History, HistoryError
from lsmbench.track.paired import PooledSpread


def cov(values: list[float]) -> float | None:
    if len(values) < 2 or statistics.fmean(values) == 0:
        return None
    return statistics.stdev(values) / abs(statistics.fmean(values))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("history", type=Path)
    ap.add_argument("--campaign", default="nightly")
    ap.add_argument("--last", type=int, default=None)
    ap.add_argument("--nights", default=None, metavar="METRIC",
                    help="also each night of this metric as the detector judged it")
    args = ap.parse_args()
    try:
        h = History(args.history, create=False)
    except HistoryError as e:
        print(e, file=sys.stderr)
        return 2
    runs = {r.run_id: r for r in h.runs(args.campaign)}
    order = sorted(runs, key=lambda i: (runs[i].finished, i))
    paired = [v for v in h.paired_values(args.campaign) if v.candidate_median is not None]
    nights = sorted({v.run_id for v in paired}, key=order.index)
    if args.last:
        nights = nights[-args.last:]
    print(f"{len(nights)} paired nights of {args.campaign}")
    print("| group | metric | CoV of the ratio | CoV of the candidate's median | quotient |")
    print("|---|---|---:|---:|---:|")
    for key in sorted({(v.group, v.metric) for v in paired}):
        mine = [v for v in paired if (v.group, v.metric) == key and v.run_id in nights]
        ratio = cov([v.ratio for v in mine])
        raw = cov([float(v.candidate_median or 0.0) for v in mine])
        if ratio is None or raw is None:
            continue
        print(f"| {key[0]} | {key[1]} | {ratio:.2%} | {raw:.2%} | "
              f"{ratio / raw if raw else float('nan'):.2f} |")
    print()
    print("| group | metric | a run's CoV | its own (within the night) | the night's share |")
    print("|---|---|---:|---:|---:|")
    for key in sorted({(v.group, v.metric) for v in paired}):
        mine = [v for v in paired if (v.group, v.metric) == key and v.run_id in nights]
        runs_ = [x for v in mine for pair in (v.pairs or []) for x in pair]
        if len(runs_) < 4 or min(runs_) <= 0:  # a log of 0 (no stall) says nothing
            continue
        pool = PooledSpread()
        for v in mine:
            if v.pairs and len(v.pairs) >= 2:
                pool.add(v.pairs)
        if pool.dof == 0:
            continue
        run_sd = statistics.stdev(math.log(x) for x in runs_)
        own_sd = math.sqrt(pool.squares / pool.dof / 2)
        share = max(0.0, 1 - own_sd**2 / run_sd**2) if run_sd else float("nan")
        print(f"| {key[0]} | {key[1]} | {run_sd:.2%} | {own_sd:.2%} | {share:.0%} |")
    if args.nights:
        print_nights(h, args.campaign, args.nights, set(nights))
    return 0


def print_nights(h: History, campaign: str, metric: str, nights: set[int]) -> None:
    """Each night of the metric: its ratio, the interval of its own pairs (as recorded), the
    night's with the testbed's spread (the page's), the detector's pooled window's, and what
    the detector made of it."""
    from lsmbench.track.changes import paired_nights

    runs = {r.run_id: r for r in h.runs(campaign)}
    print()
    print(f"| night (run) | commit | reference | {metric} ratio | own pairs' interval | "
          "with the testbed's spread | the pooled nights' | alarm | accepted |")
    print("|---|---|---|---:|---|---|---|---|---|")
    for (_, _, m, _), states in sorted(paired_nights(h, campaign).items()):
        if m != metric:
            continue
        for n in states:
            v = n.value
            if v.run_id not in nights:
                continue
            print(f"| {v.run_id} | {(runs[v.run_id].commit or '?')[:7]} | "
                  f"{(v.reference_commit or '?')[:7]} | {v.ratio:.3f} | "
                  f"[{v.ci_low:.3f}, {v.ci_high:.3f}] | [{n.night_low:.3f}, "
                  f"{n.night_high:.3f}] | [{n.ci_low:.3f}, {n.ci_high:.3f}] | "
                  f"{'yes' if n.alarmed else 'no'} | {'yes' if n.accepted else 'no'} |")


if __name__ == "__main__":
    sys.exit(main())
