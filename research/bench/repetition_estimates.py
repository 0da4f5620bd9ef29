"""How good is "~N repetitions each would decide it"? A backtest on a stored suite run: each
claim of an experiment judged on only the first `--first` repetitions of every group (as the
page was when the estimate was made), its estimate, and the claim judged on all stored
repetitions -- its status and estimate then. research/luo-carey-adaptive-rerun.md
quotes it for the claims plans were run for.

    .venv/bin/python research/bench/repetition_estimates.py RESULTS/reproduce \
        secondary-indexes [repro-lc-queries ...] [--first 3] [--claims LC30,LC32]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lsmbench.reproduce.claims import all_claims
from lsmbench.reproduce.evidence import (
    CampaignEvidence,
    Finding,
    campaign_evidence,
    read_evidence,
)


def first_repetitions(full: CampaignEvidence, first: int) -> CampaignEvidence:
    """The evidence as it was with only repetitions 0 .. first-1 of each group."""
    return campaign_evidence(full.name, full.campaign,
                             [p for p in full.campaign.points
                              if int(p.record.get("rep") or 0) < first])


def estimate(f: Finding) -> str:
    return f"{f.status}" + (f", ~{f.repetitions} each" if f.repetitions is not None else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path, help="RESULTS/reproduce")
    ap.add_argument("experiments", nargs="+")
    ap.add_argument("--first", type=int, default=3,
                    help="judge on this many repetitions of each group first (default 3)")
    ap.add_argument("--claims", default="", help="only these claims (comma-separated)")
    args = ap.parse_args(argv)
    if args.first < 3:
        print(f"--first {args.first}: at least 3 (fewer have no interval)", file=sys.stderr)
        return 2
    only = {c.strip() for c in args.claims.split(",") if c.strip()}
    known = {c.id: c.experiment for c in all_claims()}
    unknown = sorted(only - set(known))
    if unknown:
        print(f"--claims: no claim {', '.join(unknown)} (claims are LC1, ..., M1, ..., PV1, ...)",
              file=sys.stderr)
        return 2
    untested = [n for n in args.experiments if n not in known.values()]
    if untested:
        print(f"{', '.join(untested)}: no claim is judged on it (experiments with claims: "
              f"{', '.join(sorted(set(known.values())))})", file=sys.stderr)
        return 2
    for name in args.experiments:
        full = read_evidence(args.store, name)
        if full is None:
            print(f"{args.store / name}: no stored campaign with points", file=sys.stderr)
            return 2
        early = first_repetitions(full, args.first)
        for claim in all_claims():
            if claim.experiment != name or (only and claim.id not in only):
                continue
            then, now = claim.check(early), claim.check(full)
            most = max((g.complete for g in full.groups), default=0)
            print(f"{claim.id} ({name}): with {args.first} each: {estimate(then)}; "
                  f"with all (up to {most}): {estimate(now)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
