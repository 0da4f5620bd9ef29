"""Running a campaign: every point of the plan through the pipeline, into the store.

* One campaign directory per campaign name, locked while a run uses it.
* ``resume``: a point whose directory holds a *complete* point.json with the
  same configuration hash is skipped; every other point (missing, failed,
  stale, or half-written in .tmp/) is run again.
* A point that fails is recorded as failed (stage, message, driver exit
  code) and the campaign goes on; the result says whether any failed.
* After each point, when a sink is configured, the point is published; a
  sink failure marks it unpublished and never fails the campaign, which waits on the sink
  at most its budget (sinks.influx.budget) in all.
* A full results store stops the campaign (CampaignError: exit 3) with the unfinished
  point discarded; a full data disk fails the point only (faults.py, docs/faults.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .adaptive import group_undecided, repetitions_help
from .calibrate import DiskProfile
from .faults import NODE_RETIRING, ResultsStoreFull, is_no_space, is_under, results_full_text
from .groups import group_repetitions, repetition_from_store
from .plan import Plan
from .points import group_id
from .progress import Reporter
from .publish import SinkBudget
from .spec.checks import repetition_range
from .stages import PointContext, PointFailed, PointPipeline, shared_testing_mismatches
from .store import (
    STATE_COMPLETE,
    STATE_FAILED,
    PointWriter,
    Store,
    StoreError,
    write_json_atomic,
)
from .testbeds import Testbed, TestbedError, open_testbed
from .testbeds.distribute import Attempt, Job, distribute
from .testbeds.remote import RemoteTestbed
from .testbeds.sshconn import NodeUnreachable
from .testbeds.state import NodeFault
from .throttle import ThrottleError, ThrottleLimits, check_throttle_available
from .throttle.rates import is_relative, resolve_relative
from .wording import plural

log = logging.getLogger("lsmbench")

POINT_SCHEMA = "lsmbench.point/1"


class CampaignError(RuntimeError):
    """The campaign cannot start (or cannot go on at all); nothing was lost."""


@dataclass
class RunOptions:
    resume: bool = False
    force: bool = False
    publish: bool = True


# ---------------------------------------------------------------- throttle


def calibration_path(store: Store, host: str) -> Path:
    return store.root / ".calibration" / f"{host}.json"


def resolve_limits(plan: Plan, store: Store, testbed: Testbed, profile: Any = None,
                   device: str | None = None) -> Any:
    """The ThrottleLimits of the campaign (None when throttling is off); `profile` and
    `device` are a remote node's (else this machine's calibration and the spec's device).

    Percentages are of the fio-calibrated disk (lsmbench calibrate); absolute
    values are bytes (or I/Os) per second: 100MB/s (10^6), 100MiB/s (2^20), 52428800.
    """
    th = plan.spec.throttle
    if not th.enabled:
        return None
    values = {k: getattr(th, k) for k in ("write_bps", "read_bps", "write_iops", "read_iops")}
    relative = any(is_relative(v) for v in values.values())
    if relative and profile is None:
        profile = load_profile(plan, store)
    out = {k: resolve_relative(v, profile, kind=k) for k, v in values.items() if v is not None}
    device = th.device if th.device != "auto" else (None if device in (None, "auto") else device)
    return ThrottleLimits(**out, device=device, cpus=th.cpus, cpu_quota=th.cpu_quota)


def load_profile(plan: Plan, store: Store) -> Any:
    tb = plan.spec.testbed
    path = Path(getattr(tb, "calibration", None) or calibration_path(store, socket.gethostname()))
    if not path.is_file():
        raise CampaignError(
            f"the throttle is given relative to the calibrated disk, but there is no calibration "
            f"at {path}: run `lsmbench calibrate` first (or give absolute rates such as 100MB/s)"
        )
    return DiskProfile.load(path)


def check_throttle(limits: Any, data_root: str, required: bool, reporter: Reporter) -> Any:
    """Fails early (or drops the throttle with a warning when not required)."""
    if limits is None:
        return None
    try:
        check_throttle_available(limits, data_dir=data_root)
    except ThrottleError as e:
        if required:
            raise CampaignError(f"throttle: {e}") from e
        reporter.message(f"throttle unavailable, running unthrottled: {e}", "warning")
        return None
    return limits


# ---------------------------------------------------------------- the run


class _PointLogHandler(logging.FileHandler):
    """pipeline.log. A write that fails (the results disk ran out) is remembered for the
    campaign to act on, not printed with a traceback as logging does by default."""

    error: BaseException | None = None

    def handleError(self, record: logging.LogRecord) -> None:
        self.error = self.error or sys.exc_info()[1]

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as e:
            self.error = self.error or e

    def close(self) -> None:
        try:
            super().close()
        except OSError as e:
            self.error = self.error or e


def _point_logger(path: Path) -> tuple[logging.Logger, _PointLogHandler]:
    logger = logging.getLogger(f"lsmbench.point.{os.getpid()}.{path.name}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = _PointLogHandler(path / "pipeline.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger, handler


class _Sink:
    """Publishing to the spec's sink (if any) within the campaign's budget for it; says once
    when the budget is used up."""

    def __init__(self, plan: Plan, store: Store, reporter: Reporter) -> None:
        self.spec = plan.spec.sinks.influx
        self.store = store
        self.reporter = reporter
        self.budget = SinkBudget(self.spec.budget) if self.spec else None
        self._warned = False

    def publish(self, point_id: str, rec: Any, tags: dict[str, Any] | None = None,
                reporter: Reporter | None = None) -> None:
        if self.spec is None or self.budget is None:
            return
        reporter = reporter or self.reporter
        sink = self.spec if not tags else self.spec.model_copy(
            update={"tags": {**self.spec.tags, **tags}})
        out = self.budget.publish(self.store, rec, sink)
        reporter.published(point_id, out.ok, out.error)
        if self.budget.exhausted and not self._warned:
            self._warned = True
            reporter.message(
                f"InfluxDB at {self.spec.url}: the campaign's time for the sink "
                f"(sinks.influx.budget, {self.spec.budget:g}s) is used up; the points from "
                f"here on stay unpublished (`lsmbench ls` lists them; `lsmbench publish "
                f"RESULTS --to {self.spec.url}` sends them)", "warning")

    def summary(self) -> dict[str, Any]:
        if self.budget is None:
            return {}
        return {"sink_wait_s": round(self.budget.used_s, 2),
                "sink_budget_exhausted": self.budget.exhausted}


def run_campaign(plan: Plan, store: Store, reporter: Reporter,
                 options: RunOptions | None = None) -> dict[str, Any]:
    options = options or RunOptions()
    t_start = time.monotonic()
    with campaign_errors(store, plan.spec.name), store.lock(plan.spec.name):
        return _run_locked(plan, store, reporter, options, t_start)


@contextlib.contextmanager
def campaign_errors(store: Store, campaign: str) -> Iterator[None]:
    """A run's failures that stop the campaign, as CampaignError (exit 3): the store's lock
    held by another process, or no room left in the results store (said in campaign.json)."""
    try:
        yield
    except StoreError as e:
        raise CampaignError(str(e)) from e
    except ResultsStoreFull as e:
        _record_stop(store, campaign, str(e))
        raise CampaignError(str(e)) from e
    except OSError as e:
        # A write of the store's own files (campaign.json, a point's directory) found no
        # space.
        if is_no_space(e) and is_under(os.path.abspath(e.filename or ""),
                                       os.path.abspath(store.root)):
            _record_stop(store, campaign, results_full_text(store.root))
            raise CampaignError(results_full_text(store.root)) from e
        raise


def _record_stop(store: Store, campaign: str, why: str) -> None:
    """Says in campaign.json why the run stopped, if the store has room for it by now."""
    doc = store.read_campaign(campaign)
    if not doc or not doc.get("runs") or doc["runs"][-1].get("finished") is not None:
        return
    doc["runs"][-1].update({"finished": time.time(), "stopped": why})
    with contextlib.suppress(OSError):
        store.write_campaign(campaign, doc)


def existing_points(plan: Plan, store: Store, reporter: Reporter,
                     options: RunOptions) -> dict[str, Any]:
    """The campaign's stored points (after removing an interrupted run's leftovers), or
    CampaignError when there are some and neither --resume nor --force says what to do."""
    spec = plan.spec
    leftovers = store.clean_tmp(spec.name)
    if leftovers:
        reporter.message(f"removed {plural(len(leftovers), 'unfinished point')} of an "
                         "interrupted run")
    existing = {r.point_id: r for r in store.points(spec.name)}
    if existing and not options.resume and not options.force:
        raise CampaignError(
            f"{store.campaign_dir(spec.name)} already holds {plural(len(existing), 'point')}: pass "
            "--resume to skip the complete ones and run the rest, or --force to discard them "
            "and start over"
        )
    if options.force:
        for rec in existing.values():
            shutil.rmtree(rec.path, ignore_errors=True)
        existing = {}
    return existing


class CampaignSession:
    """A campaign run in progress, with the store's lock held: the testbed up and deployed,
    the throttle resolved, campaign.json's run entry open, the sink's budget counting.
    :func:`run_campaign` runs its plan's points through one; ``lsmbench tune`` runs the points
    its study asks for, one at a time, growing the plan as it goes (:meth:`add_point`)."""

    def __init__(self, plan: Plan, store: Store, reporter: Reporter, options: RunOptions,
                 t_start: float) -> None:
        self.plan = plan
        self.store = store
        self.reporter = reporter
        self.options = options
        self.t_start = t_start
        self.complete = 0
        self.failed = 0
        self.driver_s = 0.0
        self.hashes: dict[str, str] = {}
        self.node: Any = None
        self.nodes: list[Any] = []
        self.limits: Any = None
        self.node_limits: dict[str, Any] = {}
        self.campaign_doc: dict[str, Any] = {}
        self.run_entry: dict[str, Any] = {}
        self.sink: _Sink | None = None

    @property
    def remote(self) -> bool:
        return self.testbed.distributed

    def open(self, todo: int, skipped: int) -> None:
        """Brings the testbed up, resolves the throttle and opens campaign.json's run entry."""
        plan, store, reporter, spec = self.plan, self.store, self.reporter, self.plan.spec
        self.testbed: Testbed = open_testbed(spec.testbed, campaign=spec.name, log=log)
        # A redeploy shows its per-host progress (testbeds that deploy per host call it).
        self.testbed.on_event = lambda host, status, task: (
            reporter.message(f"[{host}] {status} {task}", "info")
            if status in ("changed", "fatal", "unreachable") else None)
        try:
            self.nodes = self.testbed.up()
            self.testbed.deploy(self.nodes)
        except TestbedError as e:
            raise CampaignError(f"testbed {spec.testbed.type}: {e}") from e
        self.node = self.nodes[0]
        if self.remote:
            self.node_limits = remote_limits(plan, store, self.testbed, self.nodes, reporter)
        else:
            self.limits = check_throttle(resolve_limits(plan, store, self.testbed),
                                         self.node.data_root, spec.throttle.required, reporter)
        self.campaign_doc = store.read_campaign(spec.name) or {"runs": []}
        self.campaign_doc.update({
            "schema": "lsmbench.campaign/1",
            "campaign": spec.name,
            "spec_file": str(plan.loaded.source) if plan.loaded.source else None,
            "spec": plan.loaded.raw,
            "plan": plan.to_json(),
            "lsmbench": __version__,
        })
        self.run_entry = {"started": time.time(), "pid": os.getpid(),
                          "resume": self.options.resume, "todo": todo, "skipped": skipped,
                          "finished": None}
        self.campaign_doc["runs"].append(self.run_entry)
        store.write_campaign(spec.name, self.campaign_doc)
        self.sink = _Sink(plan, store, reporter)

    def add_point(self, point: Any) -> None:
        """A point the plan did not list when the run began (lsmbench tune's trials): planned
        from now on, in campaign.json too."""
        self.plan.points.append(point)
        self.campaign_doc["plan"] = self.plan.to_json()
        self.store.write_campaign(self.plan.spec.name, self.campaign_doc)

    def drop_point(self, point: Any) -> None:
        """A point added by add_point that will not be stored (its node failed it): no longer
        planned."""
        self.plan.points.remove(point)
        self.campaign_doc["plan"] = self.plan.to_json()
        self.store.write_campaign(self.plan.spec.name, self.campaign_doc)

    def run_point(self, point: Any, n: int, total: int, *,
                  shared_testing: dict[str, Any] | None = None,
                  shared_testing_dir: Path | None = None,
                  after_testing: Any = None,
                  extra: dict[str, Any] | None = None,
                  node: Any = None,
                  attempts: list[Attempt] | None = None,
                  may_retry: bool = False) -> dict[str, Any]:
        """Runs one point, commits it and publishes it (`extra`: more fields for its
        point.json, e.g. lsmbench tune's trial). On the first node; with `node`, on that one
        of a remote testbed, the record naming it and its earlier `attempts`: with
        `may_retry`, a failure the node caused comes back uncommitted and uncounted, with
        state "retry" (the caller runs the point elsewhere)."""
        chash = self.hashes.setdefault(point.id, self.plan.point(point).config_hash)
        on = node or self.node
        limits = self.node_limits.get(on.name) if self.remote else self.limits
        self.reporter.point_start(point, n, total)
        if attempts:
            self.reporter.message(retrying_text(point.id, on.name, attempts), "warning")
        record = _run_point(self.plan, self.store, self.testbed, on, limits, point,
                            chash, self.reporter, shared_testing=shared_testing,
                            shared_testing_dir=shared_testing_dir, after_testing=after_testing,
                            extra=extra,
                            attempts=None if node is None else [a.to_json()
                                                                for a in attempts or []],
                            may_retry=may_retry)
        if record["state"] == "retry":
            return record
        self.count(record)
        if node is not None and record["state"] == STATE_COMPLETE:
            self.testbed.state.clear_fault(node.name)
        self.reporter.point_end(point, record)
        self.publish(point.id, {"host": node.name} if node is not None else None)
        return record

    def count(self, record: dict[str, Any]) -> None:
        self.driver_s += record.get("driver_s", 0.0)
        if record["state"] == STATE_COMPLETE:
            self.complete += 1
        else:
            self.failed += 1

    def publish(self, point_id: str, tags: dict[str, Any] | None = None) -> None:
        if self.options.publish and self.sink is not None:
            rec = self.store.point(self.plan.spec.name, point_id)
            if rec is not None:
                self.sink.publish(point_id, rec, tags, self.reporter)

    def close(self, skipped: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Tears the testbed down (as the spec says) and closes the run entry: the summary."""
        spec = self.plan.spec
        try:
            self.testbed.down(success=self.failed == 0)
        except TestbedError as e:
            self.reporter.message(f"testbed teardown: {e}", "warning")
        wall = time.monotonic() - self.t_start
        overhead = max(0.0, wall - self.driver_s)
        summary = {
            "campaign": spec.name,
            "results_dir": str(self.store.campaign_dir(spec.name)),
            "points": len(self.plan.points),
            "complete": self.complete,
            "failed": self.failed,
            "skipped": skipped,
            "wall_s": round(wall, 2),
            "driver_s": round(self.driver_s, 2),
            "overhead_s": round(overhead, 2),
            # None when no driver ran (a --resume with nothing left): not 100 % of nothing.
            "overhead_pct": round(100.0 * overhead / wall, 2) if wall > 0 and self.driver_s > 0
            else None,
            "unpublished": sum(1 for r in self.store.points(spec.name) if r.published is False),
            **(self.sink.summary() if self.sink is not None else {}),
            **(extra or {}),
        }
        self.run_entry.update({"finished": time.time(), **summary})
        self.store.write_campaign(spec.name, self.campaign_doc)
        self.reporter.campaign_end(summary)
        return summary


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
    for r in range(rep_min, rep_max):
        undecided = {g: why for g, (why, helps) in _undecided_groups(store, spec.name).items()
                     if helps}
        wave = [p for p in todo if p.rep == r and group_id(p.params) in undecided]
        if not wave:
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


def _node_failure(e: BaseException | None, exit_code: int | None) -> tuple[bool, bool]:
    """(the node failed, the node is unreachable) for a point's failure."""
    cause = e
    while cause is not None:
        if isinstance(cause, NodeUnreachable):
            return True, True
        cause = cause.__cause__ or cause.__context__
    if isinstance(e, PointFailed) and e.fault is not None and e.fault.node_local:
        return True, False
    # Killed by a signal (negative status, or a shell's 128+N): a crash, not the point's input.
    return exit_code is not None and (exit_code < 0 or exit_code >= 128), False


def _run_point(plan: Plan, store: Store, testbed: Testbed, node: Any, limits: Any,
               point: Any, chash: str, reporter: Reporter, *,
               attempts: list[dict[str, Any]] | None = None,
               may_retry: bool = False,
               shared_testing: dict[str, Any] | None = None,
               shared_testing_dir: Path | None = None,
               after_testing: Any = None,
               extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Runs and commits one point (`after_testing`: stages.PointContext.after_testing). With
    `attempts` (a distributed run) the record names its
    node (`host`) and earlier attempts; with `may_retry` a failure caused by the node is not
    committed but returned with state "retry" (the caller runs it on another node).

    Raises ResultsStoreFull, with the unfinished point discarded, when the store has no room
    for it."""
    writer = store.begin_point(plan.spec.name, point.id)
    logger, handler = _point_logger(writer.path)
    try:
        return _run_and_commit(plan, store, writer, logger, handler, testbed, node, limits,
                               point, chash, reporter, attempts=attempts, may_retry=may_retry,
                               shared_testing=shared_testing,
                               shared_testing_dir=shared_testing_dir,
                               after_testing=after_testing, extra=extra)
    except BaseException as e:
        handler.close()
        logger.removeHandler(handler)
        no_room = isinstance(e, ResultsStoreFull) or is_no_space(e)
        # Interrupted, or no room for the point: nothing of it stays (its space is freed).
        if no_room or isinstance(e, KeyboardInterrupt | SystemExit):
            writer.discard()
        if no_room and not isinstance(e, ResultsStoreFull):
            raise ResultsStoreFull(results_full_text(store.root)) from e
        raise


def _run_and_commit(plan: Plan, store: Store, writer: PointWriter, logger: logging.Logger,
                    handler: _PointLogHandler, testbed: Testbed, node: Any, limits: Any,
                    point: Any, chash: str, reporter: Reporter, *,
                    attempts: list[dict[str, Any]] | None, may_retry: bool,
                    shared_testing: dict[str, Any] | None,
                    shared_testing_dir: Path | None,
                    after_testing: Any = None,
                    extra: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = plan.spec
    started = time.time()
    t0 = time.monotonic()
    write_json_atomic(writer.path / "spec.json", plan.point(point).config)
    record: dict[str, Any] = {
        "schema": POINT_SCHEMA,
        "campaign": spec.name,
        "point": point.id,
        "index": point.index,
        "params": point.params,
        "rep": point.rep,
        "seed": point.seed,
        "engine": spec.engine.name,
        "config_hash": chash,
        "state": None,
        "error": None,
        "started": started,
        **(extra or {}),
    }
    pipeline = PointPipeline(PointContext(plan=plan, point=point, testbed=testbed, node=node,
                                          out_dir=writer.path, limits=limits, reporter=reporter,
                                          log=logger, shared_testing=shared_testing,
                                          shared_testing_dir=shared_testing_dir,
                                          after_testing=after_testing,
                                          store_root=Path(os.path.abspath(store.root)),
                                          driver=plan.driver_for(point)))
    if attempts is not None:
        record["host"] = node.name
        record["disk"] = node.facts.get("disk")
    failure: BaseException | None = None
    try:
        pipeline.run()
        record["state"] = STATE_COMPLETE
    except PointFailed as e:
        failure = e
        record["state"] = STATE_FAILED
        record["error"] = {"stage": e.stage, "message": e.message, "exit_code": e.exit_code,
                           "fault": e.fault.kind if e.fault else None}
        logger.error("failed in %s: %s", e.stage, e.message)
    except (KeyboardInterrupt, SystemExit, ResultsStoreFull):
        raise
    except Exception as e:
        if is_no_space(e):
            raise
        failure = e
        record["state"] = STATE_FAILED
        record["error"] = {"stage": "internal", "message": f"{type(e).__name__}: {e}",
                           "exit_code": None, "fault": None}
        logger.error("internal error:\n%s", traceback.format_exc())
    if attempts is not None and record["error"] is not None:
        node_failed, unreachable = _node_failure(failure, record["error"]["exit_code"])
        record["error"].update({"node": node.name, "node_failed": node_failed,
                                "unreachable": unreachable})
        if node_failed and may_retry:
            handler.close()
            logger.removeHandler(handler)
            writer.discard()
            record["state"] = "retry"
            return record
    if attempts is not None:
        record["attempts"] = attempts
    result = pipeline.result
    if result.fingerprint is not None:
        write_json_atomic(writer.path / "fingerprint.json", result.fingerprint)
    wall = time.monotonic() - t0
    record.update({
        "finished": time.time(),
        "wall_s": round(wall, 3),
        "driver_s": round(result.driver_s, 3),
        "overhead_s": round(max(0.0, wall - result.driver_s), 3),
        "max_throughput": result.max_throughput,
        "verdict": result.headline,
        "sustainable": result.headline["sustainable"] if result.headline else None,
        "verdicts": result.verdicts,
        "search": result.search,
        "skipped_running": result.skipped_running,
        "warnings": result.warnings,
        "phases": result.phases,
        "throttled": limits is not None and limits.has_io_limits,
        "published": False if spec.sinks.influx else None,
        "publish_error": None,
    })
    handler.close()
    logger.removeHandler(handler)
    if handler.error is not None:
        # pipeline.log could not be written (a full results disk): a point is not kept
        # without its log.
        raise handler.error
    writer.commit(record)
    return record


# ---------------------------------------------------------------- distributed runs


class LockedReporter:
    """The reporter, one call at a time (points run in parallel on the nodes)."""

    def __init__(self, inner: Reporter) -> None:
        self._inner = inner
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._inner, name)
        if not callable(fn):
            return fn

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return fn(*args, **kwargs)

        return locked


def remote_limits(plan: Plan, store: Store, testbed: RemoteTestbed, nodes: list[Any],
                  reporter: Reporter) -> dict[str, Any]:
    """Each node's ThrottleLimits (its own calibration for percentages), checked on the node."""
    th = plan.spec.throttle
    out: dict[str, Any] = {n.name: None for n in nodes}
    if not th.enabled:
        return out
    relative = any(is_relative(getattr(th, k))
                   for k in ("write_bps", "read_bps", "write_iops", "read_iops"))
    for n in nodes:
        profile = None
        if relative:
            path = testbed.state.calibration_path(n.name)
            if not path.is_file():
                raise CampaignError(
                    f"the throttle is given relative to the calibrated disk, but node {n.name} "
                    f"has no calibration at {path}: run `lsmbench testbed calibrate "
                    f"{testbed.state.name}` first (or give absolute rates such as 100MB/s)")
            profile = DiskProfile.load(path)
        limits = resolve_limits(plan, store, testbed, profile=profile, device=n.device)
        try:
            check = testbed.check_throttle(n, limits) or {}
        except TestbedError as e:
            raise CampaignError(f"throttle on node {n.name}: {e}") from e
        if not check.get("ok"):
            if th.required:
                raise CampaignError(f"throttle on node {n.name}: {check.get('error')}")
            reporter.message(f"node {n.name}: throttle unavailable, running unthrottled: "
                             f"{check.get('error')}", "warning")
            limits = None
        out[n.name] = limits
    return out


def retrying_text(point_id: str, node: str, attempts: list[Attempt]) -> str:
    return (f"{point_id}: retrying on node {node} (attempt {len(attempts) + 1}; "
            f"{attempts[-1].node} failed: {attempts[-1].error})")


def node_attempt(testbed: RemoteTestbed, campaign: str, node: Any, point_id: str,
                 record: dict[str, Any], reporter: Any, lock: Any) -> Attempt:
    """How a point's run on a node went, for testbeds.distribute: a fault the node caused is
    marked in the testbed's state (`lsmbench testbed status`), and a node that is gone or out
    of disk is said to get no more points."""
    err = record.get("error") or {}
    attempt = Attempt(node=node.name, error=err.get("message"), stage=err.get("stage"),
                      node_failed=bool(err.get("node_failed")),
                      unreachable=bool(err.get("unreachable")),
                      retire=err.get("fault") in NODE_RETIRING)
    if err.get("fault") is not None and attempt.node_failed:
        with lock:
            testbed.state.record_fault(node.name, NodeFault(
                kind=err["fault"], message=err.get("message") or "",
                campaign=campaign, point=point_id, at=time.time()))
    if attempt.unreachable or attempt.retire:
        reporter.message(f"node {node.name} failed during {point_id} ({err.get('message')});"
                         " it gets no more points", "warning")
    return attempt


def run_distributed(plan: Plan, store: Store, testbed: RemoteTestbed, nodes: list[Any],
                     node_limits: dict[str, Any], todo: list[Any], hashes: dict[str, str],
                     reporter: Reporter, options: RunOptions, sink: _Sink, *,
                     extra: dict[str, Any] | None = None, shared: Any = None,
                     remember: Any = None) -> dict[str, Any]:
    """The points over the nodes (testbeds.distribute): complete, failed, driver_s and the
    node failures (node, point, error) that were retried or recorded. A node whose disk ran
    out (or failed) gets no more points and is marked in the testbed's state (`lsmbench
    testbed status`) until a point completes on it again. `extra`: more fields for each
    point.json (lsmbench tune's confirmation runs).

    `shared(point)` gives a point its group's shared testing maximum and directory, and
    `remember(point, record)` keeps a leader's (phases.testing.shared_across, which the spec
    allows on one node only: `testbed.nodes` naming one, whose one worker runs the points in
    plan order, leaders first)."""
    spec = plan.spec
    rep = LockedReporter(reporter)
    lock = threading.Lock()
    totals: dict[str, Any] = {"complete": 0, "failed": 0, "driver_s": 0.0, "n": 0,
                              "node_failures": []}
    retries = int(getattr(testbed.spec, "retries", 1))
    jobs = [Job(point=p, disk=str(getattr(plan.point(p).spec.testbed, "disk", "any")),
                node=getattr(plan.point(p).spec.testbed, "node", None))
            for p in todo]

    def finish(point: Any, record: dict[str, Any]) -> None:
        with lock:
            totals["driver_s"] += record.get("driver_s", 0.0)
            totals["complete" if record["state"] == STATE_COMPLETE else "failed"] += 1
        if record["state"] == STATE_COMPLETE and record.get("host"):
            with lock:
                testbed.state.clear_fault(record["host"])
        rep.point_end(point, record)
        if options.publish:
            rec = store.point(spec.name, point.id)
            if rec is not None:
                sink.publish(point.id, rec, {"host": record.get("host")}, rep)

    def runner(job: Job, node: Any, last: bool) -> Attempt:
        with lock:
            totals["n"] += 1
            n = totals["n"]
        rep.point_start(job.point, n, len(todo))
        if job.attempts:
            rep.message(retrying_text(job.point.id, node.name, job.attempts), "warning")
        mt, mt_dir = shared(job.point) if shared is not None else (None, None)
        record = _run_point(plan, store, testbed, node, node_limits.get(node.name), job.point,
                            hashes[job.point.id], rep,
                            attempts=[a.to_json() for a in job.attempts], may_retry=not last,
                            shared_testing=mt, shared_testing_dir=mt_dir, extra=extra)
        attempt = node_attempt(testbed, spec.name, node, job.point.id, record, rep, lock)
        if attempt.node_failed:
            with lock:
                totals["node_failures"].append({"node": node.name, "point": job.point.id,
                                                "error": attempt.error})
        if record["state"] != "retry":
            if remember is not None:
                with lock:
                    remember(job.point, record)
            finish(job.point, record)
        return attempt

    def no_node(job: Job, reason: str) -> None:
        writer = store.begin_point(spec.name, job.point.id)
        record = {
            "schema": POINT_SCHEMA, "campaign": spec.name, "point": job.point.id,
            "index": job.point.index, "params": job.point.params, "rep": job.point.rep,
            "seed": job.point.seed, "engine": spec.engine.name,
            "config_hash": hashes[job.point.id], "state": STATE_FAILED,
            "error": {"stage": "schedule", "message": reason, "exit_code": None},
            "attempts": [a.to_json() for a in job.attempts], "host": None,
            "started": time.time(), "finished": time.time(),
            "published": False if spec.sinks.influx else None, "publish_error": None,
        }
        writer.commit(record)
        finish(job.point, record)

    distribute(jobs, nodes, retries, runner, no_node)
    return totals
