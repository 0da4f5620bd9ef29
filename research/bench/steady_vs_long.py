"""The steady-state testing maximum against a long fixed window of the same configuration.

Reads two stored campaigns of the same spec: one whose testing phases ended at steady state
(phases.testing.steady, after the load settled), one whose testing phases ran a fixed long
window (e.g. 120 s with a 20 s warm-up, no settle: the reference). Prints, per policy, each
campaign's maximum per repetition, their medians and ranges, and the ratio of the medians,
with how long the steady phases ran and whether they attained steady state.

    python research/bench/steady_vs_long.py RESULTS/STEADY RESULTS/REFERENCE

The commands that make both campaigns: research/quickstart-verdicts.md
("Steady-state testing against a 100 s window"). A measurement script, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def maxima(campaign: Path) -> dict[str, list[dict]]:
    """Per policy, each complete point's testing figures (shared maxima counted once)."""
    out: dict[str, list[dict]] = {}
    for point in sorted(campaign.glob("*/point.json")):
        rec = json.loads(point.read_text())
        mt = rec.get("max_throughput") or {}
        if rec.get("state") != "complete" or not mt or mt.get("shared_from"):
            continue
        testing = (rec.get("phases") or {}).get("testing") or {}
        load = (rec.get("phases") or {}).get("load") or {}
        steady = mt.get("steady") or {}
        out.setdefault(str(rec["params"].get("policy")), []).append({
            "rep": rec.get("rep"), "writes_per_s": float(mt["writes_per_s"]),
            "method": mt.get("method"), "attained": steady.get("attained"),
            "testing_s": testing.get("driver_elapsed_s"),
            "settle_s": (load.get("settle") or {}).get("waited_s")})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("steady", type=Path)
    ap.add_argument("reference", type=Path)
    args = ap.parse_args()
    steady, ref = maxima(args.steady), maxima(args.reference)
    print("| policy | steady: writes/s per rep | median | testing s | attained | settle s "
          "| reference: writes/s per rep | median | steady / reference |")
    print("|---|---|---:|---|---|---|---|---:|---:|")
    for policy in sorted(steady.keys() | ref.keys()):
        s, r = steady.get(policy, []), ref.get(policy, [])
        sm = statistics.median(x["writes_per_s"] for x in s) if s else None
        rm = statistics.median(x["writes_per_s"] for x in r) if r else None

        def cells(rows: list[dict], key: str, fmt: str) -> str:
            return ", ".join(fmt.format(x[key]) if x[key] is not None else "-" for x in rows)

        ratio = f"{sm / rm:.3f}" if sm and rm else "-"
        print(f"| {policy} | {cells(s, 'writes_per_s', '{:,.0f}')} | "
              f"{sm or 0:,.0f} | {cells(s, 'testing_s', '{:.0f}')} | "
              f"{cells(s, 'attained', '{}')} | {cells(s, 'settle_s', '{:.1f}')} | "
              f"{cells(r, 'writes_per_s', '{:,.0f}')} | {rm or 0:,.0f} | {ratio} |")


if __name__ == "__main__":
    main()
