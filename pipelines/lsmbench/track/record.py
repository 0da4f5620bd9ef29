"""`lsmbench track record`: a finished campaign directory read as one run of the history (its
groups' medians and intervals, verdicts, commit, spec hash and testbed key) and added to it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..digest import canonical_hash, testbed_identity
from ..exits import EXIT_OK, EXIT_USAGE
from ..names import BUILD_CANDIDATE, BUILD_DIMENSION, BUILD_REFERENCE
from ..points import group_id
from ..report.load import (
    ReportError,
    Row,
    group_rows,
    point_row,
    read_campaign,
    resolve_campaign_dir,
)
from ..results.reading import StoredPoint
from ..store import STATE_COMPLETE
from .history import (
    METRICS,
    History,
    HistoryError,
    history_path,
    iso_date,
    open_history,
    spec_hash,
)
from .paired import paired_ratio


def _distinct(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for it in items:
        seen.setdefault(canonical_hash(it), it)
    return [seen[k] for k in sorted(seen)]


class CampaignRun(NamedTuple):
    """A finished campaign directory as one run of the history."""

    run: dict[str, Any]
    values: list[dict[str, Any]]  # per group and metric: the median and its interval
    verdicts: list[dict[str, Any]]  # per group
    paired: list[dict[str, Any]]  # spec pair: per group (without its build) and metric


def campaign_run(campaign_dir: Path, commit: str | None = None) -> CampaignRun:
    """A finished campaign directory as a run of the history, or HistoryError."""
    try:
        camp = read_campaign(campaign_dir)
    except (ReportError, OSError) as e:
        raise HistoryError(str(e)) from e
    where = str(campaign_dir)
    runs = camp.meta.get("runs") or []
    if runs and runs[-1].get("finished") is None:
        raise HistoryError(f"{where}: the campaign's last run has not finished (still running, "
                           "or killed: `lsmbench run --resume` finishes it)")
    planned = len((camp.meta.get("plan") or {}).get("points") or [])
    if planned and len(camp.points) < planned:
        raise HistoryError(f"{where}: {len(camp.points)} of {planned} planned points are "
                           "stored; a partial campaign is not a night")
    complete = [p for p in camp.points if p.record.get("state") == STATE_COMPLETE]
    if not complete:
        raise HistoryError(f"{where}: no complete point to record")

    commits = {((p.fingerprint or {}).get("project") or {}).get("commit") for p in complete}
    commits.discard(None)
    if commit is None:
        if len(commits) > 1:
            raise HistoryError(f"{where}: the points ran at different commits "
                               f"({', '.join(sorted(c[:10] for c in commits))}); say which "
                               "one the run measures with --commit")
        commit = next(iter(commits), None)
    dirty = any(((p.fingerprint or {}).get("project") or {}).get("dirty") for p in complete)

    finished = max(float(p.record.get("finished") or 0.0) for p in complete)
    if runs and runs[-1].get("finished"):
        finished = float(runs[-1]["finished"])
    throttle = camp.spec.get("throttle")
    testbed = _distinct([testbed_identity(p.fingerprint or {}, throttle) for p in complete])
    run = {
        "campaign": camp.name,
        "date": iso_date(finished),
        "finished": finished,
        "commit": commit,
        "dirty": dirty if commits or commit else None,
        "spec_hash": spec_hash(camp.spec),
        "testbed_key": canonical_hash(testbed),
        "testbed": testbed,
        "results_dir": str(campaign_dir.resolve()),
    }
    values, verdicts = [], []
    for gr in group_rows(camp.points):
        g = gr.group
        verdicts.append({"group": g.group, "verdict": g.verdict, "repetitions": g.repetitions,
                         "agree": g.agree})
        for m in METRICS:
            e = gr.estimates[m.name]
            if e.median is None:
                continue
            values.append({"group": g.group, "metric": m.name, "median": e.median,
                           "ci_low": e.ci_low, "ci_high": e.ci_high, "n": e.n})
    pair = camp.spec.get("pair")
    paired = (paired_values(complete, pair.get("commit"), where)
              if isinstance(pair, dict) else [])
    return CampaignRun(run, values, verdicts, paired)


def paired_values(points: list[StoredPoint], reference_commit: str | None,
                  where: str) -> list[dict[str, Any]]:
    """Per group (its id without the build) and metric, the paired ratio of the build under
    test to the reference (``estimate``; ``ratio``, ``ci_low``, ``ci_high`` for the history)
    over the repetitions both builds completed, in the order they ran
    (lsmbench.track.paired). A metric that is zero or missing in a pair (no stall in either
    night) has no ratio there; with fewer than two pairs left it has none at all."""
    by_pair: dict[tuple[str, int], dict[str, StoredPoint]] = {}
    for p in points:
        params = dict(p.record.get("params") or {})
        build = params.pop(BUILD_DIMENSION, None)
        if build not in (BUILD_REFERENCE, BUILD_CANDIDATE):
            raise HistoryError(f"{where}: point {p.id} of a paired campaign has no build "
                               f"({BUILD_REFERENCE} or {BUILD_CANDIDATE})")
        by_pair.setdefault((group_id(params), int(p.record.get("rep") or 0)), {})[build] = p
    groups: dict[str, list[tuple[int, Row, Row]]] = {}
    for (group, _), builds in by_pair.items():
        if len(builds) != 2:
            continue  # one build of the repetition failed: no pair
        ref, cand = builds[BUILD_REFERENCE], builds[BUILD_CANDIDATE]
        first = min(int(ref.record.get("index") or 0), int(cand.record.get("index") or 0))
        groups.setdefault(group, []).append((first, point_row(ref), point_row(cand)))
    out = []
    for group, pairs in sorted(groups.items()):
        pairs.sort(key=lambda t: t[0])
        for m in METRICS:
            values = [(getattr(r, m.name), getattr(c, m.name)) for _, r, c in pairs]
            usable = [(float(a), float(b)) for a, b in values
                      if a is not None and b is not None and a > 0 and b > 0]
            if len(usable) < 2:
                continue
            ratio = paired_ratio(usable)
            out.append({"group": group, "metric": m.name, "estimate": ratio,
                        "ratio": ratio.ratio, "ci_low": ratio.low, "ci_high": ratio.high,
                        "n": ratio.n,
                        "reference_median": float(np.median([a for a, _ in usable])),
                        "candidate_median": float(np.median([b for _, b in usable])),
                        "reference_commit": reference_commit})
    return out


def record(history: History, campaign_dir: Path, commit: str | None = None) -> tuple[int, bool]:
    """(run id, newly added). Recording the same campaign run again adds nothing."""
    got = campaign_run(campaign_dir, commit)
    known = history.find_run(got.run["campaign"], got.run["finished"])
    if known is not None:
        return known, False
    return history.add_run(got.run, got.values, got.verdicts, got.paired), True


def _campaign_dir(target: str, results: str) -> Path:
    try:
        return resolve_campaign_dir(Path(target), Path(results))
    except ReportError as e:
        raise HistoryError(str(e)) from e


def cmd_record(args: argparse.Namespace) -> int:
    try:
        d = _campaign_dir(args.campaign, args.results)
        with open_history(history_path(args)) as h:
            run_id, added = record(h, d, args.commit)
            run = next(r for r in h.runs() if r.run_id == run_id)
    except HistoryError as e:
        print(f"lsmbench track record: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps({"run_id": run_id, "added": added, **run.model_dump()}, indent=2))
    elif not args.quiet:
        what = "recorded" if added else "already recorded"
        commit = (run.commit or "unknown commit")[:12]
        print(f"{run.campaign}: {what} as run {run_id} ({run.date}, {commit}, spec "
              f"{run.spec_hash}, testbed {run.testbed_key}) in {history_path(args)}")
    return EXIT_OK
