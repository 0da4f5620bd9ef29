"""run_campaign: every point of the plan, in waves of repetitions (matrix.repetitions
{min, max} adds repetitions to the groups the first wave leaves undecided), here or over a
remote testbed's nodes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..method.adaptive import group_undecided, repetitions_help
from ..method.groups import group_repetitions, repetition_from_store
from ..plan import Plan, single_run_warning
from ..point_pipeline import shared_testing_mismatches
from ..points import group_id
from ..progress import Reporter
from ..spec.checks import repetition_groups, repetition_range
from ..store import STATE_COMPLETE, Store
from .base import CampaignError, RunOptions
from .nodes import run_distributed
from .session import CampaignSession, campaign_errors, existing_points


def run_campaign(plan: Plan, store: Store, reporter: Reporter,
                 options: RunOptions | None = None) -> dict[str, Any]:
    options = options or RunOptions()
    t_start = time.monotonic()
    with campaign_errors(store, plan.spec.name), store.lock(plan.spec.name):
        return _run_locked(plan, store, reporter, options, t_start)


def _run_locked(plan: Plan, store: Store, reporter: Reporter, options: RunOptions,
                t_start: float) -> dict[str, Any]:
    spec = plan.spec
    existing = existing_points(plan, store, reporter, options)

    # What to run.
    session = CampaignSession(plan, store, reporter, options, t_start)
    todo = []
    skipped = []
    for point in plan.points:
        h = session.hashes.setdefault(point.id, plan.point(point).config_hash)
        rec = existing.get(point.id)
        if rec is not None and rec.state == STATE_COMPLETE and rec.data.get("config_hash") == h:
            skipped.append(point)
        else:
            todo.append(point)

    shared_errors = shared_testing_mismatches(plan)
    if shared_errors:
        raise CampaignError("\n".join(shared_errors[:5]))

    session.open(len(todo), len(skipped))
    assert session.sink is not None
    # Per point on average: points that share a testing phase skip theirs.
    per_point_s = plan.estimate_s / len(plan.points) if plan.points else 0.0
    rep_min, rep_max = repetition_range(spec.matrix)
    first = [p for p in todo if p.rep < rep_min]
    if plan.expected is not None:
        planned_first = sum(1 for p in plan.points if p.rep < rep_min)
        per_point_s = plan.expected.total_s / planned_first if planned_first else per_point_s
    reporter.campaign_start(spec.name, len(first), len(skipped), per_point_s,
                            str(store.campaign_dir(spec.name)))
    single = single_run_warning(spec)
    if single is not None:
        reporter.message(single, "warning")
    for point in skipped:
        reporter.point_skipped(point, "complete")
        rec = existing[point.id]
        if options.publish and rec.data.get("published") is False:
            session.sink.publish(point.id, rec)

    extra: dict[str, Any] = {}
    # phases.testing.shared_across: a group's maximum, once one of its points measured it
    # (in this run, or in an earlier one whose point is still current).
    group_max: dict[tuple[Any, ...], dict[str, Any]] = {}

    def remember_max(point: Any, record: dict[str, Any]) -> None:
        mt = record.get("max_throughput")
        if plan.spec.phases.testing.shared_across and mt and "shared_from" not in mt:
            group_max.setdefault(plan.testing_group(point), {**mt, "shared_from": point.id})

    def shared_dir(point: Any) -> Path | None:
        mt = group_max.get(plan.testing_group(point))
        return store.campaign_dir(spec.name) / mt["shared_from"] / "testing" if mt else None

    for point in skipped:
        remember_max(point, existing[point.id].data)
    counter = {"n": 0}
    ran: set[str] = set()

    def run_wave(wave: list[Any], total: int) -> None:
        ran.update(p.id for p in wave)
        if session.remote:
            dist = run_distributed(plan, store, session.testbed, session.nodes,
                                    session.node_limits, wave, session.hashes, reporter,
                                    options, session.sink,
                                    shared=lambda p: (group_max.get(plan.testing_group(p)),
                                                      shared_dir(p)),
                                    remember=remember_max)
            session.complete += dist["complete"]
            session.failed += dist["failed"]
            session.driver_s += dist["driver_s"]
            extra.setdefault("node_failures", []).extend(dist["node_failures"])
            return
        for point in wave:
            counter["n"] += 1
            record = session.run_point(point, counter["n"], total,
                                       shared_testing=group_max.get(plan.testing_group(point)),
                                       shared_testing_dir=shared_dir(point))
            remember_max(point, record)

    if rep_max > rep_min and len(todo) > len(first):
        reporter.message(f"repetitions {rep_min} to {rep_max}: up to {len(todo) - len(first)} "
                         "more point(s) for the groups the first ones leave undecided", "info")
    total = len(first)
    run_wave(first, total)
    added: dict[str, int] = {}
    listed = repetition_groups(spec.matrix)
    for r in range(rep_min, rep_max):
        if listed is not None:  # matrix.repetitions.groups: these, decided or not
            undecided = {g: "listed in matrix.repetitions.groups" for g in listed}
        else:
            undecided = {g: why for g, (why, helps) in
                         _undecided_groups(store, spec.name).items() if helps}
        wave = [p for p in todo if p.rep == r and group_id(p.params) in undecided]
        if not wave:
            # Resumed, these groups may have repetition r and lack a later one (a plan of
            # repetitions interrupted between two waves, or one going past an earlier plan).
            if any(p.rep > r and group_id(p.params) in undecided for p in todo):
                continue
            break
        for p in wave:
            added[group_id(p.params)] = added.get(group_id(p.params), 0) + 1
            reporter.message(f"{group_id(p.params)}: repetition {r + 1} of at most {rep_max}: "
                             f"{undecided[group_id(p.params)]}", "info")
        total += len(wave)
        run_wave(wave, total)
    if session.remote:
        extra["nodes"] = [n.name for n in session.nodes]
        extra.setdefault("node_failures", [])
    if rep_max > rep_min:
        left = _undecided_groups(store, spec.name)
        extra["repetitions"] = {
            "min": rep_min, "max": rep_max, "added": added,
            "not_needed": sum(1 for p in todo if p.id not in ran),
            "undecided": sorted(left),
            # undecided, and no repetition at the same caps would decide them: every one of
            # their repetitions ran out of window (each says how long it needed)
            "window_bound": sorted(g for g, (_, helps) in left.items() if not helps),
        }
    return session.close(len(skipped), extra)


def _undecided_groups(store: Store, campaign: str) -> dict[str, tuple[str, bool]]:
    """The campaign's stored groups left undecided: why (adaptive.group_undecided), and whether
    another repetition may decide them (adaptive.repetitions_help)."""
    reps = [repetition_from_store(r) for r in store.points(campaign)]
    out = {}
    for g in group_repetitions(reps):
        why = group_undecided(g)
        if why is not None:
            out[g.group] = (why, repetitions_help(g))
    return out
