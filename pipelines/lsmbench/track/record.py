"""`lsmbench track record`: a finished campaign directory read as one run of the history (its
groups' medians and intervals, verdicts, commit, spec hash and testbed key) and added to it.

The night is the campaign's complete groups (groups.campaign_completion: nothing more would
run for them; an adaptive campaign's decided groups stop short of their max repetitions and
are complete); the groups that are not are left out and named. A campaign whose last run did
not finish is refused, and a refused record creates nothing.

A campaign whose points ran on several nodes of a testbed is one run *per node*, each of that
node's points, its node named in its testbed identity (history.node_identity): each node is a
series of its own. The matrix dimension over the nodes (``testbed.node``, which a nightly on
such a testbed adds) is not part of the group: the node is in the run, so the groups of the
nodes' runs are the same groups."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..fingerprint import distinct_identities, testbed_identity, testbed_key
from ..method.groups import campaign_completion, point_group
from ..points import group_id
from ..report.load import (
    ReportError,
    Row,
    group_rows,
    point_row,
    read_campaign,
    resolve_campaign_dir,
    stored_repetition,
)
from ..results.reading import StoredPoint
from ..store import STATE_COMPLETE
from ..util.exits import EXIT_OK, EXIT_USAGE
from ..util.names import BUILD_CANDIDATE, BUILD_DIMENSION, BUILD_REFERENCE, NODE_DIMENSION
from ..util.wording import plural
from .history import (
    METRICS,
    History,
    HistoryError,
    history_path,
    iso_date,
    node_identity,
    open_history,
    spec_hash,
)
from .paired import paired_ratio


class CampaignRun(NamedTuple):
    """A finished campaign directory as one run of the history."""

    run: dict[str, Any]
    values: list[dict[str, Any]]  # per group and metric: the median and its interval
    verdicts: list[dict[str, Any]]  # per group
    paired: list[dict[str, Any]]  # spec pair: per group (without its build) and metric
    # the groups left out, not complete (each with why): a night is its complete groups
    incomplete: list[dict[str, Any]] = []  # noqa: RUF012 (a NamedTuple's default, never mutated)


def point_node(p: StoredPoint) -> str | None:
    """The node a point ran on: its record's ``host``, which only a testbed that spreads
    points over nodes writes (None on the local testbed)."""
    host = p.record.get("host")
    return host if isinstance(host, str) and host else None


def _without_node(p: StoredPoint) -> StoredPoint:
    """The point with the node dimension dropped from its matrix values (so from its group)."""
    params = p.record.get("params")
    if not isinstance(params, dict) or NODE_DIMENSION not in params:
        return p
    return replace(p, record={**p.record, "params": {k: v for k, v in params.items()
                                                     if k != NODE_DIMENSION}})


def campaign_run(campaign_dir: Path, commit: str | None = None) -> CampaignRun:
    """A finished campaign directory that ran on one node as a run of the history, or
    HistoryError (also for a campaign of several nodes: :func:`campaign_runs`)."""
    runs = campaign_runs(campaign_dir, commit)
    if len(runs) > 1:
        raise HistoryError(f"{campaign_dir}: the points ran on {len(runs)} nodes, one run each")
    return runs[0]


def campaign_runs(campaign_dir: Path, commit: str | None = None) -> list[CampaignRun]:
    """A finished campaign directory as runs of the history: one, or one per node when its
    points ran on several nodes (in the nodes' order); HistoryError when it cannot be one."""
    try:
        camp = read_campaign(campaign_dir)
    except (ReportError, OSError) as e:
        raise HistoryError(str(e)) from e
    where = str(campaign_dir)
    runs = camp.meta.get("runs") or []
    if runs and runs[-1].get("finished") is None:
        raise HistoryError(f"{where}: the campaign's last run has not finished (still running, "
                           "or killed: `lsmbench run --resume` finishes it)")
    if runs and runs[-1].get("stopped"):
        raise HistoryError(f"{where}: the campaign's last run stopped before its end "
                           f"({runs[-1]['stopped']}): `lsmbench run --resume` finishes it")
    # The night is the groups that are complete: a group a decided verdict stopped short of
    # its max repetitions is complete; one missing what its plan would still run is not.
    plan = camp.meta.get("plan")
    planned = plan.get("points") if isinstance(plan, dict) else None
    matrix = camp.spec.get("matrix") if isinstance(camp.spec, dict) else None
    completion = campaign_completion(planned if isinstance(planned, list) else [],
                                     [stored_repetition(p) for p in camp.points],
                                     matrix if isinstance(matrix, dict) else {})
    incomplete = [{"group": c.group, "why": c.why} for c in completion if not c.complete]
    left_out = {c["group"] for c in incomplete}
    points = [p for p in camp.points if point_group(p.id, p.record) not in left_out]
    complete = [p for p in points if p.record.get("state") == STATE_COMPLETE]
    if not complete:
        what = (f"no group is complete ({incomplete_text(incomplete)})" if incomplete
                else "no complete point to record")
        raise HistoryError(f"{where}: {what}")

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
    base = {
        "campaign": camp.name,
        "date": iso_date(finished),
        "finished": finished,
        "commit": commit,
        "dirty": dirty if commits or commit else None,
        "spec_hash": spec_hash(camp.spec),
        "results_dir": str(campaign_dir.resolve()),
    }
    pair = camp.spec.get("pair")
    # Several nodes: by where the points ran, or were pinned to run (a node whose every
    # point failed still makes this a campaign of several nodes: the others keep their keys).
    planned_nodes = {n for n in map(point_node, points) if n is not None} | {
        str(p.params[NODE_DIMENSION]) for p in points if NODE_DIMENSION in p.params}
    nodes = sorted({n for n in map(point_node, complete) if n is not None})
    if len(planned_nodes) <= 1:
        # One node (or the local testbed): the run as it always was, its key without a name.
        identities = [testbed_identity(p.fingerprint or {}, throttle) for p in complete]
        run = {**base, "testbed_key": testbed_key(identities),
               "testbed": distinct_identities(identities), "node": None}
        paired = (paired_values(complete, pair.get("commit"), where)
                  if isinstance(pair, dict) else [])
        return [CampaignRun(run, *_groups([_without_node(p) for p in points]), paired,
                            incomplete)]
    if isinstance(pair, dict):
        raise HistoryError(f"{where}: a paired campaign that ran on {len(nodes)} nodes: "
                           "pairs are recorded on a single node only")
    out = []
    for node in nodes:
        mine = [_without_node(p) for p in points if point_node(p) == node]
        # Every identity of the node's points (one, unless the node changed mid-campaign).
        identities = [node_identity(testbed_identity(p.fingerprint or {}, throttle), node)
                      for p in mine if p.ok]
        run = {**base, "testbed_key": testbed_key(identities),
               "testbed": distinct_identities(identities), "node": node}
        out.append(CampaignRun(run, *_groups(mine), [], incomplete))
    return out


def incomplete_text(incomplete: list[dict[str, Any]]) -> str:
    """'GROUP: why; GROUP: why' of the groups a night leaves out."""
    return "; ".join(f"{c['group']}: {c['why']}" for c in incomplete)


def _groups(points: list[StoredPoint]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per group and metric the median and its interval; per group the verdict."""
    values, verdicts = [], []
    for gr in group_rows(points):
        g = gr.group
        verdicts.append({"group": g.group, "verdict": g.verdict, "repetitions": g.repetitions,
                         "agree": g.agree})
        for m in METRICS:
            e = gr.estimates[m.name]
            if e.median is None:
                continue
            # Each complete repetition's value, in rep order: the night's own spread, which
            # the history report's noise is measured from (with the nights').
            reps = [float(v) for r in gr.rows if r.state == STATE_COMPLETE
                    and (v := getattr(r, m.name)) is not None]
            values.append({"group": g.group, "metric": m.name, "median": e.median,
                           "ci_low": e.ci_low, "ci_high": e.ci_high, "n": e.n, "reps": reps})
    return values, verdicts


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
                        "reference_commit": reference_commit,
                        "pairs": [[float(a), float(b)] for a, b in usable]})
    return out


def record_runs(history: History, campaign_dir: Path, commit: str | None = None,
                got: list[CampaignRun] | None = None) -> list[tuple[int, bool]]:
    """(run id, newly added) per run (one per node for a campaign of several nodes), all
    added in one transaction. Recording the same campaign run again adds nothing. ``got``:
    the campaign's runs when already read (:func:`campaign_runs`)."""
    got = campaign_runs(campaign_dir, commit) if got is None else got
    known = [history.find_run(g.run["campaign"], g.run["finished"], g.run["node"])
             for g in got]
    fresh = [g for g, k in zip(got, known, strict=True) if k is None]
    ids = iter(history.add_runs([(g.run, g.values, g.verdicts, g.paired) for g in fresh]))
    return [(k, False) if k is not None else (next(ids), True) for k in known]


def record(history: History, campaign_dir: Path, commit: str | None = None) -> tuple[int, bool]:
    """(run id, newly added) of a campaign that ran on one node (:func:`record_runs`)."""
    return record_runs(history, campaign_dir, commit)[0]


def _campaign_dir(target: str, results: str) -> Path:
    try:
        return resolve_campaign_dir(Path(target), Path(results))
    except ReportError as e:
        raise HistoryError(str(e)) from e


def cmd_record(args: argparse.Namespace) -> int:
    try:
        d = _campaign_dir(args.campaign, args.results)
        # Read and checked before the history is opened: a refused record creates nothing.
        read = campaign_runs(d, args.commit)
        with open_history(history_path(args)) as h:
            got = record_runs(h, d, args.commit, read)
            by_id = {r.run_id: r for r in h.runs()}
            runs = [(by_id[run_id], added) for run_id, added in got]
    except HistoryError as e:
        print(f"lsmbench track record: {e}", file=sys.stderr)
        return EXIT_USAGE
    incomplete = read[0].incomplete
    if args.json:
        # The first run at the top level (the only one of a single-node campaign), every run
        # (one per node) in `runs`; the groups left out, not complete, in `incomplete`.
        each = [{"run_id": r.run_id, "added": added, **r.model_dump()} for r, added in runs]
        print(json.dumps({**each[0], "runs": each, "incomplete": incomplete}, indent=2))
    else:
        if incomplete:
            print(f"lsmbench track record: {plural(len(incomplete), 'group')} not recorded, "
                  f"not complete: {incomplete_text(incomplete)}", file=sys.stderr)
        lines = []
        for run, added in runs:
            what = "recorded" if added else "already recorded"
            commit = (run.commit or "unknown commit")[:12]
            node = f"node {run.node}: " if run.node else ""
            lines.append(f"{run.campaign}: {node}{what} as run {run.run_id} ({run.date}, "
                         f"{commit}, spec {run.spec_hash}, testbed {run.testbed_key}) in "
                         f"{history_path(args)}")
        if len(runs) > 1:  # a run per node: a summary of them last
            new = sum(1 for _, added in runs if added)
            lines.append(f"{runs[0][0].campaign}: {new} of {len(runs)} runs (one per node) "
                         f"recorded, {len(runs) - new} already recorded, in "
                         f"{history_path(args)}")
        print("\n".join(lines[-1:] if args.quiet else lines))
    return EXIT_OK
