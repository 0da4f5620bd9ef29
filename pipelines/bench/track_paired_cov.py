"""The spread of paired nights against the spread of the raw metric over the same nights
(issue 33's A/A acceptance; pipelines/bench/track_paired_acceptance.sh runs it):

    .venv/bin/python pipelines/bench/track_paired_cov.py HISTORY [--campaign nightly]
        [--last N]

Per group and metric over the paired nights (the newest N): the CoV (standard deviation over
the mean) of the paired ratio (candidate / reference, one per night) beside the CoV of the
candidate's nightly median, and their quotient. The ratio subtracts what the testbed did
that night; what is left is each run's own noise about its night.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from lsmbench.track.history import History, HistoryError


def cov(values: list[float]) -> float | None:
    if len(values) < 2 or statistics.fmean(values) == 0:
        return None
    return statistics.stdev(values) / abs(statistics.fmean(values))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("history", type=Path)
    ap.add_argument("--campaign", default="nightly")
    ap.add_argument("--last", type=int, default=None)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
