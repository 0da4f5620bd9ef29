"""An open campaign run: the store's lock and its failures, the points already stored, and
the session (testbed up, throttle resolved, campaign.json's run entry) that points run
through."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import __version__
from ..faults import ResultsStoreFull, is_no_space, is_under, results_full_text
from ..plan import Plan
from ..progress import Reporter
from ..store import STATE_COMPLETE, Store, StoreError
from ..testbeds import Testbed, TestbedError, open_testbed
from ..testbeds.distribute import Attempt
from ..util.wording import plural
from .base import CampaignError, RunOptions
from .limits import check_throttle, remote_limits, resolve_limits
from .nodes import retrying_text
from .plugins import install_plugins
from .point import run_point
from .sink import CampaignSink

log = logging.getLogger("lsmbench")


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
        self.sink: CampaignSink | None = None

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
            if self.remote:
                install_plugins(plan, self.testbed, self.nodes)
        except (TestbedError, ValueError) as e:
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
        self.sink = CampaignSink(plan, store, reporter)

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
        record = run_point(self.plan, self.store, self.testbed, on, limits, point,
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
