"""`lsmbench plan --predict` against the engine on the shipped campaign shapes (issue 57, item 2;
engines/sim/README.md, "The shipped setups").

`run` runs each shape's campaign (the shipped spec, narrowed by --set as listed in SHAPES) into
RESULTS, one after another. `compare` then reads every stored campaign of RESULTS, predicts
its points with today's lsm-sim (the stored spec, so the prediction is of exactly what ran)
and prints, per group: the measured testing maximum (median [min-max] over the repetitions),
the predicted one, their ratio, and, where the campaign ran its running phases, the measured
and the predicted verdict.

    .venv/bin/python research/bench/predictor_validation.py run RESULTS [--shape NAME ...]
    .venv/bin/python research/bench/predictor_validation.py compare RESULTS [--campaign NAME ...]
        [--json OUT]

A benchmark, not a test: `run` measures the engine (an otherwise idle machine; ~25 min for
every shape). `compare` runs only lsm-sim.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pipelines"))

from lsmbench.listing import campaign_listing  # noqa: E402
from lsmbench.plan import build_plan  # noqa: E402
from lsmbench.predict import predict_plan  # noqa: E402
from lsmbench.spec import SpecError, validate_raw  # noqa: E402
from lsmbench.spec.load import read_yaml  # noqa: E402
from lsmbench.spec.overrides import prune_excludes  # noqa: E402
from lsmbench.store import Store  # noqa: E402

BUILD = Path(os.environ.get("LSMBENCH_BUILD_DIR", ROOT / "build"))
CAMPAIGNS = ROOT / "pipelines" / "campaigns"

# name -> (spec, --set overrides): the testing phases of each shipped shape, 3 repetitions.
SHAPES: dict[str, tuple[str, list[str]]] = {
    # cgroup write limit, uniform updates of a loaded store, the log async
    "quickstart": ("quickstart.yaml", ["matrix.scheduler=[single]",
                                       "phases.running.enabled=false",
                                       "matrix.repetitions=3"]),
    # the engine's I/O budget, updates of a loaded store, the log off (block A)
    "schedulers": ("schedulers.yaml", ["matrix.policy=[tiering,leveling]",
                                       "matrix.scheduler=[fair]",
                                       "phases.running.enabled=false",
                                       "matrix.repetitions=3"]),
}


def run(results: Path, shapes: list[str]) -> int:
    lsmbench = Path(sys.executable).with_name("lsmbench")
    env = {**os.environ, "LSMBENCH_BUILD_DIR": str(BUILD)}
    for name in shapes:
        spec, sets = SHAPES[name]
        cmd = [str(lsmbench), "run", str(CAMPAIGNS / spec), "--results", str(results),
               "--no-publish", "--quiet", *(a for s in sets for a in ("--set", s))]
        print(" ".join(cmd), flush=True)
        code = subprocess.run(cmd, env=env, check=False).returncode
        if code:
            return code
    return 0


def _group_of(point: str) -> str:
    return point.rsplit(",rep=", 1)[0] if ",rep=" in point else point.split("~", 1)[0]


def compare(results: Path, only: list[str] | None = None,
            sim: Path | None = None) -> list[dict[str, Any]]:
    store = Store(results)
    sim = sim or BUILD / "bin" / "lsm-sim"
    out = []
    for campaign in store.campaigns():
        if only and campaign not in only:
            continue
        meta = store.read_campaign(campaign) or {}
        spec_file = ROOT / str(meta.get("spec_file") or "")
        spec = meta["spec"]
        # A campaign stored before its exclude rules were pruned of what its --set narrowed.
        prune_excludes(spec.get("matrix"), (read_yaml(spec_file) or {}).get("matrix"))
        loaded = validate_raw(spec, source=spec_file)
        preds = {p.point: p for p in predict_plan(build_plan(loaded), sim)}
        listing = campaign_listing(store, campaign)
        maxima: dict[str, list[float]] = {}
        for rec in store.points(campaign):
            mt = rec.data.get("max_throughput") or {}
            if isinstance(mt.get("writes_per_s"), (int, float)):
                maxima.setdefault(rec.point_id, []).append(float(mt["writes_per_s"]))
        for g in listing["groups"]:
            measured = [v for p in g["points"] for v in maxima.get(p, [])]
            pred = preds.get(g["points"][0])
            if not measured or pred is None or pred.max_writes_per_s is None:
                continue
            median = statistics.median(measured)
            ran = loaded.spec.phases.running.enabled
            out.append({
                "campaign": campaign, "group": g["group"],
                "measured": median, "measured_min": min(measured),
                "measured_max": max(measured), "n": len(measured),
                "predicted": pred.max_writes_per_s,
                "ratio": median / pred.max_writes_per_s,
                "measured_verdict": g["verdict"] if ran else None,
                "predicted_sustainable": pred.sustainable if ran else None,
                "predicted_running_stall": pred.running_stalled_share if ran else None,
                "outside": pred.outside, "verdict_outside": pred.verdict_outside,
                "modelled": pred.modelled,
            })
    return out


def _print(rows: list[dict[str, Any]]) -> None:
    print("| campaign | group | measured max (writes/s) | predicted | measured / predicted | "
          "measured verdict | predicted |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        verdict = "-" if r["measured_verdict"] is None else str(r["measured_verdict"])
        predicted = ("-" if r["predicted_sustainable"] is None else
                     ("sustainable" if r["predicted_sustainable"] else "not-sustainable")
                     + f" (stall {r['predicted_running_stall']:.1%})")
        if r["verdict_outside"] and r["predicted_sustainable"] is not None:
            predicted += " [outside]"
        print(f"| {r['campaign']} | {r['group']} | {r['measured']:,.0f} "
              f"[{r['measured_min']:,.0f}-{r['measured_max']:,.0f}] (n={r['n']}) | "
              f"{r['predicted']:,.0f}{' [outside]' if r['outside'] else ''} | "
              f"**{r['ratio']:.3f}** | {verdict} | {predicted} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run")
    r.add_argument("results", type=Path)
    r.add_argument("--shape", action="append", choices=sorted(SHAPES))
    c = sub.add_parser("compare")
    c.add_argument("results", type=Path)
    c.add_argument("--json", type=Path)
    c.add_argument("--campaign", action="append", help="only this stored campaign (repeatable)")
    args = ap.parse_args()
    if args.verb == "run":
        return run(args.results, args.shape or list(SHAPES))
    if not (args.results.is_dir() and Store(args.results).campaigns()):
        print(f"predictor_validation: {args.results}: no stored campaign there", file=sys.stderr)
        return 2
    try:
        rows = compare(args.results, args.campaign)
    except (KeyError, ValueError, SpecError) as e:
        print(f"predictor_validation: a stored campaign's spec cannot be predicted: {e}",
              file=sys.stderr)
        return 2
    _print(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
