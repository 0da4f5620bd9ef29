"""The numbers of research/secondary-indexes.md, from the stored campaigns
secondary-indexes and secondary-indexes-queries (pipelines/campaigns/), as Markdown tables.

    .venv/bin/python research/bench/secondary_indexes_findings.py \
        --results /var/tmp/lsmbench-results

Medians over the repetitions with their order-statistic interval (lsmbench.method.stats.median_ci:
with 3 repetitions [min, max], which covers the median with 75 %).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from lsmbench.method.stats import median_ci
from lsmbench.results import load

TREES = ("primary", "secondary0", "secondary1")


def est(values, scale: float = 1.0, fmt: str = "{:,.0f}") -> str:
    e = median_ci([v * scale for v in values if v is not None and not pd.isna(v)])
    if e.median is None:
        return "-"
    text = fmt.format(e.median)
    if e.has_interval:
        text += f" [{fmt.format(e.ci_low)}-{fmt.format(e.ci_high)}]"
    return f"{text} (n={e.n})"


def throughput_cov(ts: pd.DataFrame, point: str, phase: str) -> float | None:
    """CoV of the per-interval write throughput over the phase's measured window."""
    rows = ts[(ts.point == point) & (ts.phase == phase) & ts.measured.fillna(False)
              & ~ts.drain.fillna(False)]
    xs = rows.throughput_writes.dropna().to_numpy()
    return float(np.std(xs) / np.mean(xs)) if len(xs) > 2 and np.mean(xs) > 0 else None


def main_campaign(root: Path) -> None:
    r = load(root / "secondary-indexes")
    pts, ts = r.points, r.timeseries
    print("### Testing phase (fair scheduler, shared by both schedulers)\n")
    print("| strategy | testing maximum (records/s) |")
    print("|---|---|")
    testing = pts[pts.phase == "testing"]
    for m in ("eager", "lazy"):
        rows = testing[testing.secondary_maintenance == m]
        print(f"| {m} | {est(rows.testing_max_writes_per_s)} |")
    print("\n### Running phase at each utilization\n")
    print("| strategy | scheduler | utilization | p99 write latency (ms) | sustainable | "
          "write-throughput CoV | components (primary / sec0 / sec1, mean) |")
    print("|---|---|---|---|---|---|---|")
    running = pts[pts.phase.str.startswith("running")]
    for m in ("eager", "lazy"):
        for s in ("fair", "greedy"):
            for u in sorted(running.utilization.dropna().unique()):
                rows = running[(running.secondary_maintenance == m) & (running.scheduler == s)
                               & (running.utilization == u)]
                if rows.empty:
                    continue
                sust = f"{int(rows.verdict.eq('sustainable').sum())}/{len(rows)}"
                covs = [throughput_cov(ts, p, ph) for p, ph in zip(rows.point, rows.phase,
                                                                   strict=True)]
                comps = []
                for tree in TREES:
                    col = f"engine_{tree}_disk_components"
                    sel = ts[ts.point.isin(rows.point) & ts.phase.isin(rows.phase)
                             & ts.measured.fillna(False)]
                    comps.append(f"{sel[col].mean():.1f}" if col in sel else "-")
                p99 = est(rows.verdict_p99_write_latency_s, 1000, "{:,.1f}")
                print(f"| {m} | {s} | {u:g} | {p99} | {sust} | {est(covs, 1, '{:.3f}')} | "
                      f"{' / '.join(comps)} |")


def queries_campaign(root: Path) -> None:
    path = root / "secondary-indexes-queries"
    if not path.exists():
        return
    r = load(path)
    pts, ts = r.points, r.timeseries
    col = "queries_secondary_ops"
    print("\n### Secondary queries under writes (running phase at 95 %)\n")
    print("| strategy | selectivity | fair (queries/s) | greedy (queries/s) | greedy / fair | "
          "records per query | stale share of candidates |")
    print("|---|---|---|---|---|---|---|")
    running = pts[pts.phase.str.startswith("running")]
    sel_col = next(c for c in running.columns if c.endswith("selectivity"))
    for m in ("eager", "lazy"):
        for sel in sorted(running[sel_col].dropna().unique()):
            rates, per_query, stale = {}, [], []
            for s in ("fair", "greedy"):
                rows = running[(running.secondary_maintenance == m) & (running.scheduler == s)
                               & (running[sel_col] == sel)]
                for p, ph in zip(rows.point, rows.phase, strict=True):
                    iv = ts[(ts.point == p) & (ts.phase == ph) & ts.measured.fillna(False)
                            & ~ts.drain.fillna(False)]
                    secs = (iv.t - iv.t_start_s).sum()
                    rates[s] = float(iv[col].sum() / secs) if col in iv and secs else None
                    end = rows[rows.point == p].iloc[0]
                    q = end.get("engine_metrics_end_queries")
                    if q:
                        per_query.append(end["engine_metrics_end_query_results"] / q)
                        stale.append(end["engine_metrics_end_stale_entries_skipped"]
                                     / max(end["engine_metrics_end_query_candidates"], 1))
            f, g = rates.get("fair"), rates.get("greedy")
            ratio = f"{g / f:.2f}" if f and g else "-"
            print(f"| {m} | {sel:g} | {f or 0:,.1f} | {g or 0:,.1f} | {ratio} | "
                  f"{np.mean(per_query):.1f} | {np.mean(stale):.3f} |")


def cli() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=Path("results"))
    args = ap.parse_args()
    main_campaign(args.results)
    queries_campaign(args.results)


if __name__ == "__main__":
    cli()
