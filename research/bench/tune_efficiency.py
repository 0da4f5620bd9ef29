"""How many trials `lsmbench tune`'s sampler needs on a small space (research/tuning.md,
"Efficiency"): a tabular benchmark over a measured grid.

Every configuration of the space was measured once by a campaign
(pipelines/campaigns/tune-efficiency-grid.yaml). Here Optuna's TPE, configured as
`lsmbench tune` configures it (multivariate, seeded, the constraint `sustainable` through
constraints_func), searches that space with each trial looking its configuration up in the
grid instead of running it; for each seed, the number of trials until a trial is feasible and
within 5 % of the grid's best feasible value. The same for Optuna's RandomSampler, and the
expectation for uniform sampling without replacement, as baselines. A configuration asked for
again costs a trial (a real study would run it again).

    /work/main/.venv/bin/python research/bench/tune_efficiency.py --results results \
        --campaign tune-efficiency-grid --seeds 10 --out docs/results/tune-efficiency.json

A benchmark, not a test; it takes seconds once the grid is measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings
from pathlib import Path
from typing import Any

import optuna
from lsmbench.method.groups import repetition_from_store
from lsmbench.points import group_id
from lsmbench.store import STATE_COMPLETE, Store

optuna.logging.set_verbosity(optuna.logging.WARNING)
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

TOLERANCE = 0.05


def read_grid(store: Store, campaign: str) -> tuple[dict[str, list[Any]], dict[str, dict]]:
    """The space (dimension -> values, from the plan) and per configuration its objective
    (the testing maximum) and whether its verdict was sustainable."""
    doc = store.read_campaign(campaign)
    if not doc:
        sys.exit(f"no campaign {campaign!r} in {store.root}")
    dims = doc["plan"]["dimensions"]
    table: dict[str, dict] = {}
    for rec in store.points(campaign):
        rep = repetition_from_store(rec)
        if rep.state != STATE_COMPLETE:
            continue
        table[group_id(rec.data["params"])] = {
            "params": rec.data["params"], "value": rep.max_write_throughput,
            "feasible": rep.verdict == "sustainable", "verdict": rep.verdict}
    return dims, table


def trials_to_target(sampler: Any, dims: dict[str, list[Any]], table: dict[str, dict],
                     target: float, budget: int) -> int | None:
    """Trials until one is feasible with a value >= target (None: not within the budget)."""
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for n in range(1, budget + 1):
        trial = study.ask()
        params = {k: trial.suggest_categorical(k, vs) for k, vs in dims.items()}
        cell = table.get(group_id(params))
        if cell is None or cell["value"] is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            continue
        trial.set_user_attr("constraints", [0.0 if cell["feasible"] else 1.0])
        study.tell(trial, cell["value"])
        if cell["feasible"] and cell["value"] >= target:
            return n
    return None


def expected_without_replacement(n: int, k: int) -> float:
    """Expected draws until the first of k good cells among n, uniform without replacement."""
    return (n + 1) / (k + 1)


def summary(counts: list[int | None], budget: int, goal: float) -> dict[str, Any]:
    found = [c for c in counts if c is not None]
    # A miss counts as budget + 1 in the median (it needed more than the budget).
    xs = sorted(c if c is not None else budget + 1 for c in counts)
    return {"per_seed": counts, "median": statistics.median(xs), "min": xs[0], "max": xs[-1],
            "missed": len(counts) - len(found),
            "within_goal": sum(1 for c in found if c <= goal) / len(counts)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default="results")
    ap.add_argument("--campaign", default="tune-efficiency-grid")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--startup", type=int, nargs="+", default=[3, 4, 10],
                    help="TPE's random startup trials (lsmbench tune: trials/3, 3..10)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    dims, table = read_grid(Store(args.results), args.campaign)
    size = 1
    for vs in dims.values():
        size *= len(vs)
    feasible = [c for c in table.values() if c["feasible"] and c["value"] is not None]
    if not feasible:
        sys.exit("no configuration of the grid is sustainable: nothing to find")
    best = max(c["value"] for c in feasible)
    target = (1 - TOLERANCE) * best
    good = [c for c in feasible if c["value"] >= target]
    budget = 2 * size
    out: dict[str, Any] = {
        "campaign": args.campaign, "space": dims, "size": size, "measured": len(table),
        "feasible": len(feasible), "best": best, "target": target,
        "best_params": max(feasible, key=lambda c: c["value"])["params"],
        "within_target": [c["params"] for c in good],
        "uniform_without_replacement": expected_without_replacement(size, len(good)),
        "seeds": args.seeds, "budget": budget, "tpe": {}, "random": {},
    }
    seeds = range(1, args.seeds + 1)
    for startup in args.startup:
        counts = [trials_to_target(
            optuna.samplers.TPESampler(
                seed=s, multivariate=True, n_startup_trials=startup,
                constraints_func=lambda t: t.user_attrs.get("constraints", [0.0])),
            dims, table, target, budget) for s in seeds]
        out["tpe"][str(startup)] = summary(counts, budget, size / 4)
    out["random"] = summary([trials_to_target(optuna.samplers.RandomSampler(seed=s), dims,
                                              table, target, budget) for s in seeds], budget,
                            size / 4)
    print(f"grid {args.campaign}: {size} configurations, {len(table)} measured, "
          f"{len(feasible)} sustainable; best {best:,.0f} writes/s; within 5 %: {len(good)}")
    print(f"trials to come within 5 % of the best sustainable (median [min-max] over "
          f"{args.seeds} seeds; a miss counts as {budget + 1}):")
    for startup, s in out["tpe"].items():
        print(f"  TPE, {startup} random startup trials: {s['median']:g} [{s['min']}-{s['max']}]"
              f", missed {s['missed']}; within the goal (<= {size / 4:g}) in "
              f"{100 * s['within_goal']:.0f} % of seeds")
    r = out["random"]
    print(f"  random sampling: {r['median']:g} [{r['min']}-{r['max']}], missed {r['missed']}; "
          f"within the goal in {100 * r['within_goal']:.0f} % of seeds; uniform without "
          f"replacement expects {out['uniform_without_replacement']:.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
