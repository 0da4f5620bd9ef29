"""The table of docs/results/engines.md from a stored run of pipelines/campaigns/engines.yaml
(and of docs/results/ycsb.md from one of ycsb.yaml): per group, the testing maximum, the
group's verdict at 95 %, the running phase's p99,
stall time and write amplification (medians over the repetitions, with their range), and the
verdict's reasons.

    .venv/bin/python research/bench/engines_table.py RESULTS [CAMPAIGN]

Every figure is the one `lsmbench ls` and the report show: the group verdicts from
lsmbench.listing, the stall time and write amplification from lsmbench.method.metrics.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from lsmbench.method.metrics import stall_time, write_amplification


def _range(values: list[float], fmt: str) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print("usage: engines_table.py RESULTS [CAMPAIGN]", file=sys.stderr)
        return 2
    results = Path(sys.argv[1])
    campaign = sys.argv[2] if len(sys.argv) > 2 else "engines"
    r = subprocess.run(
        [sys.executable, "-m", "lsmbench", "ls", campaign, "--json", "--results", str(results)],
        capture_output=True, text=True, check=False)
    if r.returncode != 0:
        print(f"engines_table: lsmbench ls {campaign} --results {results}: "
              f"{r.stderr.strip() or f'exit {r.returncode}'}", file=sys.stderr)
        return 2
    listing = json.loads(r.stdout)
    print("| group | testing max, writes/s | sustainable at 95 %? | p99 write latency | "
          "stall time / running window | write amplification (running) | why |")
    print("|---|---:|---|---:|---:|---:|---|")
    for g in listing["groups"]:
        stalls: list[float] = []
        shares: list[float] = []
        was: list[float] = []
        for pid in g["points"]:
            running = results / campaign / pid / "running" / "summary.json"
            if not running.is_file():
                continue
            summary = json.loads(running.read_text())
            st = stall_time(summary)
            if st is not None:
                stalls.append(st.seconds)
                if st.fraction is not None:
                    shares.append(100 * st.fraction)
            wa = write_amplification(summary)
            if wa is not None:
                was.append(wa.value)
        mx = g["max_write_throughput"]
        p99 = g["p99_write_latency_s"]
        why = "; ".join(r for r in g["reasons"] if not r.startswith("the repetitions are"))
        unit = "" if g.get("unit", "writes") == "writes" else f" {g['unit']}/s"
        name = g["params"].get("engine") or g["group"]
        print(f"| {name} | {mx['median']:,.0f}{unit} "
              f"[{(mx['ci_low'] or mx['median']):,.0f}-{(mx['ci_high'] or mx['median']):,.0f}] "
              f"| {g['verdict']} ({g['agree'].get('sustainable', 0)} of {g['complete']} "
              f"sustainable) | {1000 * p99['median']:.0f} ms | {_range(stalls, '{:.2f}')} s "
              f"({_range(shares, '{:.0f}')} %) | {_range(was, '{:.2f}')} | {why} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
