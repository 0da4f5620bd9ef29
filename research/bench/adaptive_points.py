"""Each point of a stored campaign with adaptive phases, one row: how its testing phase ended
(steady or not, after how many rounds, at which rate) and how its running phase ended (after
how long, on which criterion). The evidence research/luo-carey-adaptive-rerun.md
explains the claims' changes with.

    .venv/bin/python research/bench/adaptive_points.py RESULTS/reproduce/CAMPAIGN [...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _testing(mt: dict[str, Any]) -> str:
    steady = mt.get("steady")
    rate = f"{mt.get('writes_per_s', 0):,.0f}/s"
    if not steady:
        return f"{rate} ({mt.get('method', '?')}, {mt.get('window_end_s', 0):.0f} s)"
    state = "steady" if steady.get("attained") else "NOT steady"
    return f"{rate} ({state}, {len(steady.get('rounds') or [])} rounds, " \
           f"{mt.get('window_end_s', 0):.0f} s)"


def _decision(verdict: dict[str, Any]) -> str:
    decision = verdict.get("decision")
    if not decision:
        return "fixed duration"
    log = decision.get("log") or []
    if not decision.get("ended_early"):
        last = f" (last: {log[-1]['reason']})" if log else ""
        return f"ran to its {decision.get('cap_s', 0):.0f} s cap{last}"
    return f"{log[-1]['state']} at {log[-1]['at_s']:.0f} s: {log[-1]['reason']}" if log else "-"


def _stalled(verdict: dict[str, Any]) -> str:
    crit = next((c for c in verdict.get("criteria") or [] if c.get("name") == "stalls"), None)
    if crit is None or crit.get("value") is None:
        return "-"
    return f"{crit['value'] * (verdict.get('window_end_s') or 0):.1f} s"


def rows(campaign: Path) -> list[list[str]]:
    out = []
    for point in sorted(p for p in campaign.iterdir() if (p / "point.json").is_file()):
        d = json.loads((point / "point.json").read_text())
        v = d.get("verdict") or {}
        outcome = v.get("verdict") or ("sustainable" if v.get("sustainable") else
                                       "not-sustainable" if v else "-")
        out.append([point.name, _testing(d.get("max_throughput") or {}),
                    f"{v.get('arrival_rate', 0):,.0f}/s" if v else "-",
                    f"{v.get('window_end_s', 0):.0f} s" if v else "-",
                    _stalled(v), outcome, ", ".join(v.get("failed") or []) or "-",
                    _decision(v) if v else "-"])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("campaigns", nargs="+", type=Path)
    args = ap.parse_args()
    head = ["point", "testing max (how it ended)", "offered", "running window", "stalled",
            "verdict", "failed", "how the running phase ended"]
    for campaign in args.campaigns:
        if not (campaign / "campaign.json").is_file():
            print(f"adaptive_points: {campaign}: not a stored campaign (no campaign.json)",
                  file=sys.stderr)
            return 2
        print(f"\n{campaign.name}\n")
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows(campaign):
            print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
