"""Is a group's query-rate spread the tree or the machine? For each point of the groups that
run queries: the rate over the running phase's first seconds (`--head`, default 2 s: the
loaded tree, before the configurations' merges part it) and over the rest of the claim's
window (`--seconds`), and how the two correlate over the group's repetitions (Spearman, scipy).

Every repetition of a group starts from the same kind of loaded tree, so a spread of the head
rates is the machine's speed at the time (a shared VM's neighbours, its CPU share), not the
configuration; a correlation between head and rest says that speed carries through the
window. research/luo-carey-adaptive-rerun.md ("LC19's repetitions") quotes this for
repro-lc-queries. Reads the store only; measures nothing.

    .venv/bin/python research/bench/query_rate_noise.py RESULTS/reproduce/repro-lc-queries \
        [--kind get] [--seconds 32] [--head 2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lsmbench.reproduce.evidence import query_rate, read_evidence
from scipy import stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("campaign", type=Path, help="RESULTS/reproduce/NAME")
    ap.add_argument("--kind", default="get", help="get, scan or secondary (default get)")
    ap.add_argument("--seconds", type=float, default=32.0,
                    help="the window the claim compares (default 32 s)")
    ap.add_argument("--head", type=float, default=2.0, help="the first seconds (default 2)")
    args = ap.parse_args(argv)
    if not 0 < args.head < args.seconds:
        print(f"--head {args.head:g}: must be above 0 and under --seconds ({args.seconds:g})",
              file=sys.stderr)
        return 2
    ev = read_evidence(args.campaign.parent, args.campaign.name)
    if ev is None:
        print(f"{args.campaign}: no stored campaign with points", file=sys.stderr)
        return 2
    head_of = query_rate(args.kind, args.head)
    rest_of = query_rate(args.kind, args.seconds, after_s=args.head)
    shown = 0
    for group in ev.groups:
        rows = []
        for pid in group.points:
            pt = ev.points.get(pid)
            if pt is None or not pt.ok:
                continue
            head, rest = head_of(pt), rest_of(pt)
            if head and rest:
                rows.append((pid, head, rest))
        if len(rows) < 3:
            continue
        shown += 1
        heads, rests = [r[1] for r in rows], [r[2] for r in rows]
        rho, p = stats.spearmanr(heads, rests)
        print(f"{group.group} (n={len(rows)}): head {min(heads):,.0f}-{max(heads):,.0f}/s, "
              f"rest {min(rests):,.0f}-{max(rests):,.0f}/s; Spearman rho {rho:.2f} (p {p:.3f})")
        for pid, head, rest in rows:
            print(f"  {pid}: first {args.head:g} s {head:,.0f}/s, "
                  f"{args.head:g}-{args.seconds:g} s {rest:,.0f}/s")
    if not shown:
        print(f"{args.campaign}: no group with 3 points that ran {args.kind} queries",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
