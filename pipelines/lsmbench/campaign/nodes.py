"""A campaign's points over a remote testbed's nodes (testbeds.distribute): one point per
free node at a time, a point a node failed retried on another, the node's fault recorded in
the testbed's state."""

from __future__ import annotations

import threading
import time
from typing import Any

from ..faults import NODE_RETIRING
from ..plan import Plan
from ..progress import Reporter
from ..store import STATE_COMPLETE, STATE_FAILED, Store
from ..testbeds.distribute import Attempt, Job, distribute
from ..testbeds.remote import RemoteTestbed
from ..testbeds.state import NodeFault
from .base import RunOptions
from .point import POINT_SCHEMA, run_point
from .sink import CampaignSink


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
                     reporter: Reporter, options: RunOptions, sink: CampaignSink, *,
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
        record = run_point(plan, store, testbed, node, node_limits.get(node.name), job.point,
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
            "seed": job.point.seed, "engine": plan.point(job.point).spec.engine.name,
            "config_hash": hashes[job.point.id], "state": STATE_FAILED,
            "error": {"stage": "schedule", "message": reason, "exit_code": None},
            "attempts": [a.to_json() for a in job.attempts], "host": None,
            "started": time.time(), "finished": time.time(),
            "published": False if spec.sinks.section else None, "publish_error": None,
        }
        writer.commit(record)
        finish(job.point, record)

    distribute(jobs, nodes, retries, runner, no_node)
    return totals
