"""The two-phase pipeline of one matrix point (Luo & Carey, Sec. 3).

1. a fresh data directory on the testbed's data disk (optionally: drop the
   page cache, fstrim);
2. ``load``, when enabled: the workload's records, closed loop;
3. ``testing``: closed loop with the testing-phase engine overrides (e.g. the
   fair scheduler, merge exactly the minimum);
4. the maximum write throughput: mean over the window after the warm-up
   (:func:`lsmbench.method.verdict.max_throughput`);
5. ``running``: open loop at utilization x maximum with the runtime engine
   options, once per utilization of the sweep, each from the state the spec
   asks for (``start``: a copy of the loaded state, a fresh load, or where
   the previous phase left off) -- or, with ``running.search``, at the
   utilizations the search for the maximum sustainable rate asks for, each from
   the loaded tree (:mod:`lsmbench.method.search`);
6. a verdict per running phase (:func:`lsmbench.method.verdict.judge`).

Every file lands in the point's temporary directory in the store; the
caller commits it. Any failure raises :class:`PointFailed` naming the stage.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .cyclecheck import ExpectedCycle, from_testing, short_phase_warning, simulated
from .driverio import EXIT_OK, DriverOutputs, build_run_json, describe_exit, read_timeseries
from .engine_options import plugins, write_share
from .faults import (
    RESULTS_DISK_FULL,
    Diagnosis,
    FaultContext,
    ResultsStoreFull,
    diagnose_driver,
    diagnose_error,
)
from .method import adaptive
from .method import requests as write_free
from .method import verdict as vd
from .method.cycles import MergeCycle, merge_cycle
from .method.search import SearchResult, StepVerdict, run_search
from .plan import Plan
from .points import Point, running_dir, testing_signature
from .progress import Reporter
from .spec import CampaignSpec
from .testbeds import Node, Testbed
from .testbeds.base import Monitor
from .util.paths import find_driver, find_sim
from .workload_shape.record import SHAPE_FILE, write_phase_shape

DEFAULT_LOAD_TIMEOUT_S = 3600.0


class PointFailed(Exception):
    """A stage of the point failed; `fault` names the machine's part in it (faults.py), when
    the machine and not the point is to blame."""

    def __init__(self, stage: str, message: str, exit_code: int | None = None,
                 fault: Diagnosis | None = None) -> None:
        super().__init__(f"{stage}: {message}")
        self.stage = stage
        self.message = message
        self.exit_code = exit_code
        self.fault = fault

    @classmethod
    def diagnosed(cls, stage: str, fault: Diagnosis, exit_code: int | None = None,
                  ) -> PointFailed:
        """The failure a fault explains; a full results store stops the campaign instead."""
        if fault.kind == RESULTS_DISK_FULL:
            raise ResultsStoreFull(fault.message)
        return cls(stage, fault.message, exit_code, fault)


@dataclass(frozen=True)
class RunningChoice:
    """What to do after the testing phase instead of the spec's running phases."""

    skip: str | None = None  # why no running phase runs (point.json: skipped_running)
    utilization: float | None = None  # one running phase at this utilization instead


@dataclass
class PointContext:
    plan: Plan
    point: Point
    testbed: Testbed
    node: Node
    out_dir: Path  # the point's temporary directory in the store
    limits: Any = None  # ThrottleLimits or None
    reporter: Reporter = field(default_factory=Reporter)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("lsmbench.point"))
    # The maximum measured by another point of the same testing group
    # (phases.testing.shared_across), with "shared_from" naming it: this point runs no
    # testing phase of its own.
    shared_testing: dict[str, Any] | None = None
    # The stored testing phase that measured it (its time series: what the tree does at
    # this scale, for the running window's coverage, cycles.window_coverage).
    shared_testing_dir: Path | None = None
    # The results store (out_dir is under it): a disk that ran out is told apart by it.
    store_root: Path | None = None
    # The lsm-driver this point runs with when it is not the node's (pair:'s reference build).
    driver: str | None = None
    # Asked with the testing maximum (writes/s) before any running phase: None runs them as
    # the spec says; a RunningChoice skips them (lsmbench tune prunes a trial that cannot
    # win) or runs one at another utilization (tune's fixed rate).
    after_testing: Callable[[float], RunningChoice | None] | None = None


@dataclass
class PointResult:
    """What point.json records about the pipeline (besides identity and state)."""

    phases: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_throughput: dict[str, Any] | None = None
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    headline: dict[str, Any] | None = None
    driver_s: float = 0.0
    fingerprint: dict[str, Any] | None = None
    search: dict[str, Any] | None = None  # phases.running.search: search.SearchResult
    skipped_running: str | None = None  # why the running phases did not run (after_testing)
    # What a reader of the results should know: running phases too short for the deepest
    # merge's cycle (cyclecheck).
    warnings: list[str] = field(default_factory=list)


def shared_testing_mismatches(plan: Plan) -> list[str]:
    """phases.testing.shared_across: groups whose points would not run the same testing
    phase (a listed dimension changes it after all), named with the first difference."""
    if not plan.spec.phases.testing.shared_across:
        return []
    leaders = plan.testing_leaders()
    by_id = {p.id: p for p in plan.points}
    errors: list[str] = []
    signatures: dict[str, dict[str, Any]] = {}
    for point in plan.points:
        leader = leaders[point.id]
        sig = testing_signature(plan.point(point).config)
        if leader == point.id:
            signatures[leader] = sig
            continue
        want = signatures[leader]
        for part, value in sig.items():
            if value == want[part]:
                continue
            if isinstance(value, dict) and isinstance(want[part], dict):
                diff = sorted(k for k in value.keys() | want[part].keys()
                              if value.get(k) != want[part].get(k))
                pairs = [f"{k}={want[part].get(k)!r} vs {value.get(k)!r}" for k in diff]
                what = f"{part}: {', '.join(pairs)}"
            else:
                what = f"{part}: {want[part]!r} vs {value!r}"
            errors.append(
                f"phases.testing.shared_across: {by_id[leader].label()} and {point.label()} "
                f"would share a testing phase, but theirs differ ({what}); fix it for the "
                f"load and testing phases (phases.load / phases.testing .engine_options) or "
                f"stop sharing across that dimension")
            break
    return errors


class PointPipeline:
    def __init__(self, ctx: PointContext) -> None:
        self.ctx = ctx
        self.resolved = ctx.plan.point(ctx.point)
        self.spec: CampaignSpec = self.resolved.spec
        self.workload = self.resolved.workload
        # A mix without writes (YCSB C): the testing and running phases count its requests.
        self._counts_requests = write_share(self.workload) == 0
        self.result = PointResult()
        self.data_dir: str | None = None
        self.snap_dir: str | None = None
        self._cycle: ExpectedCycle | None = None
        self._cycle_known = False

    # -- one driver run ---------------------------------------------------------------------


    def _run_phase(self, phase_dir: str, phase: str, *, duration_s: float = 0.0,
                   warmup_s: float = 0.0, threads: int | None = None,
                   arrival: dict[str, Any] | None = None, insert_start: int | None = None,
                   timeout_s: float | None = None, options_phase: str | None = None,
                   drain_s: float = 0.0, queries: dict[str, Any] | None = None,
                   settle_s: float = 0.0, monitor: Monitor | None = None) -> DriverOutputs:
        ctx = self.ctx
        opts = self.resolved.phase_options(options_phase or phase)
        doc = build_run_json(
            engine=self.spec.engine.name,
            engine_options=opts,
            data_dir=self.data_dir or "",
            phase=phase,
            workload=self.workload,
            seed=ctx.point.seed,
            label=f"{self.spec.name}/{ctx.point.id}/{phase_dir}",
            duration_s=duration_s,
            warmup_s=warmup_s,
            threads=threads,
            interval_s=self.spec.phases.interval,
            arrival=arrival,
            insert_start=insert_start,
            progress_s=5.0,
            drain_s=drain_s,
            queries=queries,
            settle_s=settle_s,
            engine_plugin=self._engine_plugin(ctx),
        )
        out = ctx.out_dir / phase_dir
        throttled = self.spec.throttle.enabled and phase in self.spec.throttle.phases
        # Unique among running runs (RunCgroup refuses a name whose cgroup holds processes):
        # two campaigns of one name, from two results directories, may run at once.
        base = f"{self.spec.name}.p{ctx.point.index}.{phase_dir}".replace("@", "_u")
        cg_name = f"{base[:170]}.{os.getpid()}"
        by_requests = phase != "load" and self._counts_requests
        if by_requests and monitor is not None:
            inner = monitor

            def monitor(fresh: list[dict[str, Any]]) -> bool:
                return inner([write_free.requests_interval(iv) for iv in fresh])

        ctx.reporter.phase_start(ctx.point, phase_dir, duration_s or None)
        ctx.log.info("%s: starting (%s)", phase_dir, ", ".join(f"{k}={v}" for k, v in opts.items()))
        try:
            run = ctx.testbed.run_driver(
                ctx.node, doc, out,
                driver=ctx.driver,
                limits=ctx.limits if throttled else None,
                cgroup_name=cg_name,
                timeout_s=timeout_s,
                tick=ctx.reporter.phase_tick,
                monitor=monitor,
            )
        except Exception as e:
            fault = diagnose_error(e, self._fault_context(out))
            if fault is not None:
                raise PointFailed.diagnosed(phase_dir, fault) from e
            raise PointFailed(phase_dir, f"could not run lsm-driver: {e}") from e
        self.result.driver_s += run.wall_s
        outputs = DriverOutputs.read(out)
        info = {
            "exit_code": run.exit_code,
            "wall_s": round(run.wall_s, 3),
            "driver_elapsed_s": outputs.elapsed_s,
            "status": outputs.status,
            "timed_out": run.timed_out,
            "throttled": run.throttled,
            "cgroup_backend": run.cgroup_backend,
            "io_counters": run.io_counters,
            "engine_options": opts,
        }
        if phase == "running" and arrival:
            info["arrival"] = arrival
        summary = outputs.summary or {}
        if summary.get("settle") is not None:
            info["settle"] = summary["settle"]
        if monitor is not None:
            # An adaptive phase: whether it ended before its cap, and when.
            info["ended_early"] = run.ended_early
            info["cap_s"] = duration_s
            if summary.get("ended_early"):
                info["ended_at_s"] = summary["ended_early"].get("at_s")
        self.result.phases[phase_dir] = info
        ctx.reporter.phase_end(ctx.point, phase_dir, info)
        ctx.log.info("%s: %s in %.1fs", phase_dir, describe_exit(run.exit_code), run.wall_s)
        if run.timed_out:
            raise PointFailed(phase_dir, f"lsm-driver exceeded its {timeout_s:.0f}s timeout",
                              run.exit_code)
        if run.exit_code != EXIT_OK:
            fault = diagnose_driver(run.exit_code, run.log_tail, self._fault_context(out),
                                    run.pid)
            if fault is not None:
                raise PointFailed.diagnosed(phase_dir, fault, run.exit_code)
            raise PointFailed(phase_dir, f"lsm-driver: {describe_exit(run.exit_code)}: "
                                         f"{_last_error(run.log_tail)}", run.exit_code)
        missing = outputs.missing()
        if missing:
            raise PointFailed(phase_dir, f"lsm-driver exited 0 but wrote no {', '.join(missing)}")
        # From the driver's own files, before any view of them (method/requests.py).
        self._record_shape(out, doc, outputs)
        if by_requests:
            # A mix without writes: the method counts its requests (method/requests.py).
            return replace(outputs, summary=write_free.requests_summary(outputs.summary),
                           histograms=write_free.requests_histograms(outputs.histograms),
                           intervals=[write_free.requests_interval(iv)
                                      for iv in outputs.intervals])
        return outputs

    def _record_shape(self, out: Path, doc: dict[str, Any], outputs: DriverOutputs) -> None:
        """workload_shape.json of the phase just run (workload_shape.record): never the phase's
        failure, whatever keeps it from being computed or written."""
        ctx = self.ctx
        local = ctx.node.address is None
        driver = find_driver(ctx.driver) if ctx.driver and local else find_driver()
        try:
            shape = write_phase_shape(out, driver, run=doc,
                                      outputs=(outputs.summary, outputs.intervals))
        except OSError as e:
            ctx.log.warning("%s: no %s: %s", out.name, SHAPE_FILE, e)
            return
        why = "; ".join(shape.get("problems") or [])
        ctx.log.info("%s: workload shape recorded in %.2f s%s", out.name,
                     shape.get("cost_s") or 0.0, f" ({why})" if why else "")

    def _engine_plugin(self, ctx: PointContext) -> str | None:
        """run.json's engine_plugin: on a remote node the file its testbed installed there
        for this campaign (campaign.session), else this machine's."""
        if ctx.node.address is not None:
            return (ctx.node.facts.get("plugins") or {}).get(self.spec.engine.name)
        return plugins.run_json_path(self.spec.engine.name, self.spec.engine.plugin, ctx.driver)

    def _fault_context(self, out_dir: Path) -> FaultContext:
        ctx = self.ctx
        return FaultContext(data_dir=self.data_dir, data_root=ctx.node.data_root, out_dir=out_dir,
                            store_root=ctx.store_root,
                            node=ctx.node.name if ctx.testbed.distributed else None)

    # -- the stages -------------------------------------------------------------------------

    def prepare(self) -> None:
        try:
            self.data_dir = self.ctx.testbed.prepare_data_dir(self.ctx.node, self.ctx.point.id)
        except Exception as e:
            fault = diagnose_error(e, self._fault_context(self.ctx.out_dir))
            if fault is not None:
                raise PointFailed.diagnosed("prepare", fault) from e
            raise PointFailed("prepare", str(e)) from e

    def load(self, phase_dir: str = "load") -> DriverOutputs:
        ph = self.spec.phases.load
        return self._run_phase(phase_dir, "load", threads=ph.threads,
                               timeout_s=(ph.timeout or DEFAULT_LOAD_TIMEOUT_S) + ph.settle,
                               settle_s=ph.settle)

    def testing(self, insert_start: int | None) -> vd.MaxThroughput:
        ph = self.spec.phases.testing
        warmup = ph.warmup_seconds()
        rule = ph.steady
        if rule is not None and self._counts_requests:
            # Nothing is written, so nothing merges: rounds of time alone.
            rule = rule.model_copy(update={"deepest_merges": 0})
        monitor = adaptive.SteadyMonitor(rule) if rule is not None else None
        out = self._run_phase(
            "testing", "testing", duration_s=ph.duration, warmup_s=warmup, threads=ph.threads,
            insert_start=insert_start,
            timeout_s=ph.timeout or _default_timeout(ph.duration + ph.settle),
            queries=ph.queries, settle_s=ph.settle, monitor=monitor,
        )
        steady = None
        try:
            if rule is not None:
                mt, steady = adaptive.steady_maximum(out.intervals, rule, ph.maximum)
            else:
                mt = vd.max_throughput_of_testing(out.intervals, warmup, ph.maximum)
        except vd.VerdictError as e:
            raise PointFailed("max-throughput", str(e)) from e
        if steady is not None:
            self.ctx.log.info("testing: %s", steady.reason)
            if not steady.attained:
                self.result.warnings.append(f"testing: the maximum did not attain steady state "
                                            f"({steady.reason})")
        self._testing_intervals = out.intervals
        if mt.writes_per_s <= 0:
            raise PointFailed("max-throughput",
                              f"no {'request' if self._counts_requests else 'write'} completed "
                              "after the warm-up: nothing to run the running phase at")
        fig = mt.to_json()
        if self._counts_requests:
            fig["unit"] = write_free.REQUESTS
        fig["driver_max_write_throughput"] = out.driver_max_write_throughput()
        if steady is not None:
            fig["steady"] = steady.to_json()
        # The testing phase's merges into its deepest level: how long a running window must be
        # to see one (shared with the points that take this maximum).
        mc = merge_cycle(out.intervals)
        fig["merge_cycle"] = mc.to_json() if mc is not None else None
        self.result.max_throughput = fig
        self._testing_next_insert = out.next_insert_id
        return mt

    def running(self, phase_dir: str, utilization: float, max_tp: float,
                insert_start: int | None) -> vd.Verdict:
        ph = self.spec.phases.running
        # The maximum is in writes/s; the arrivals are requests of the whole mix, so a mix with
        # reads arrives faster by its requests per write: the writes arrive at utilization x
        # the maximum whatever else the mix holds.
        write_rate = utilization * max_tp
        # A write-free mix's maximum counts its requests already (method/requests.py).
        share = write_share(self.workload) or 1.0
        rate = write_rate / share
        self._check_cycle(phase_dir, write_rate)
        arrival = dict(ph.arrival)
        if "process" not in arrival and not isinstance(self.workload.get("arrival"), dict):
            # A trace arrives at its own pace, sped up to the rate; anything else evenly.
            arrival["process"] = "replay" if "rocksdb_trace" in self.workload else "constant"
        arrival["rate"] = round(rate, 3)
        rule = ph.until_decided
        monitor = None
        if rule is not None:
            # A mix without writes merges nothing: no merge for the window to wait for.
            deepest = (adaptive.deepest_level(self._testing_intervals)
                       if self._testing_intervals is not None and not self._counts_requests
                       else None)
            monitor = adaptive.RunningMonitor(rule, self.spec.verdict, rate, ph.duration,
                                              ph.warmup, deepest, write_share=share,
                                              latency_of=self._latency_of())
        out = self._run_phase(
            phase_dir, "running", duration_s=ph.duration, warmup_s=ph.warmup,
            threads=ph.threads, arrival=arrival, insert_start=insert_start,
            timeout_s=ph.timeout or _default_timeout(ph.duration + ph.drain + ph.settle),
            options_phase="running", drain_s=ph.drain, queries=ph.queries,
            settle_s=ph.settle, monitor=monitor,
        )
        self._running_next_insert = out.next_insert_id
        try:
            fig = vd.running_figures(utilization, rate, out.intervals, out.summary,
                                     out.histograms, warmup_s=ph.warmup, unit=self._unit(),
                                     latency_of=self._latency_of())
        except vd.VerdictError as e:
            raise PointFailed(f"{phase_dir}-verdict", str(e)) from e
        bounds = self.spec.verdict
        coverage = (vd.running_coverage(self._testing_intervals, out.intervals, fig)
                    if self._testing_intervals is not None else None)
        if rule is not None and monitor is not None:
            cycle = self._expected_cycle()
            v = adaptive.judge_until_decided(
                fig, out.intervals, coverage, rule, bounds,
                cycle.seconds_at(write_rate) if cycle is not None else None)
        else:
            v = adaptive.judge_with_bounds(fig, bounds, coverage)
        record = v.to_json()
        steady = (self.result.max_throughput or {}).get("steady") or {}
        if steady.get("attained") is False:
            record["reasons"].append("the testing maximum did not attain steady state: "
                                     + str(steady.get("reason")))
        if rule is not None and monitor is not None:
            info = self.result.phases[phase_dir]
            ran = out.elapsed_s or 0.0
            last = monitor.log[-1].reason if monitor.log else "no interval"
            record["reasons"].append(
                f"ran {ran:.0f} s of its {ph.duration:.0f} s cap: {last}" if info.get("ended_early")
                else f"ran to its {ph.duration:.0f} s cap ({last})")
            if len(monitor.log) > 1:  # each extension and why, in the report too
                record["reasons"].append("decision log: " + " -> ".join(
                    f"{d.state} at {d.at_s:.0f} s ({d.reason[:90]})" for d in monitor.log))
            record["decision"] = {
                "rule": rule.model_dump(), "cap_s": ph.duration,
                "ended_early": bool(info.get("ended_early")),
                "ended_at_s": info.get("ended_at_s"),
                "log": [d.to_json() for d in monitor.log],
            }
        record["phase"] = phase_dir
        if self._counts_requests:
            record["unit"] = write_free.REQUESTS
            record["reasons"].append(
                "the mix has no writes: its maximum, latency and stall figures count every "
                "request (the 'write' figures of this record are its requests')")
        elif share < 1:
            record["write_share"] = share
            record["reasons"].append(
                f"the mix is {share:.1%} writes: {rate:.0f} requests/s arrive for "
                f"{write_rate:.0f} writes/s ({utilization:g} x the testing maximum)")
        record["figures_source"] = fig.source
        record["max_queue_length"] = fig.max_queue_length
        self.result.verdicts.append(record)
        (self.ctx.out_dir / phase_dir / "verdict.json").write_text(_dumps(record))
        self.ctx.log.info("%s: %s", phase_dir, v.summary())
        return v

    def _unit(self) -> str:
        """What the running phase's rates count: writes, or requests for a mix with reads (its
        arrivals are requests) or without writes (its figures are)."""
        return "requests" if self._counts_requests or write_share(self.workload) < 1 else "writes"

    def _latency_of(self) -> str:
        """What the running phase's latency and stall figures are of."""
        return write_free.REQUESTS if self._counts_requests else "writes"

    # -- is the running phase long enough? ---------------------------------------------------

    def _expected_cycle(self) -> ExpectedCycle | None:
        """The cycle of merges into the testing phase's deepest level (cyclecheck), found once
        per point: measured, else lsm-sim's; None when neither can tell (logged why)."""
        if self._cycle_known:
            return self._cycle
        self._cycle_known = True
        mc = MergeCycle.from_json((self.result.max_throughput or {}).get("merge_cycle"))
        if mc is None:
            self.ctx.log.info("merge cycle: no merge of the testing phase is known (an engine "
                              "that does not tell them, or a shared maximum recorded without "
                              "them); the running phases are not checked against it")
            return None
        sim, why = None, None
        if mc.writes is None:  # fewer than 2 merges to time: lsm-sim's cycle in flushes
            sim, why = simulated(self.resolved, find_sim())
        self._cycle, basis = from_testing(mc, sim, why)
        self.ctx.log.info("merge cycle: %s", basis)
        return self._cycle

    def _check_cycle(self, phase_dir: str, rate: float) -> None:
        """Warns (pipeline.log, the reporter, point.json) when the running phase at this rate
        is shorter than the expected cycle: it may see no merge into the deepest level, and its
        verdict then is inconclusive."""
        cycle = self._expected_cycle()
        if cycle is None:
            return
        text = short_phase_warning(phase_dir, self.spec.phases.running, rate, cycle)
        if text:
            self.result.warnings.append(text)
            self.ctx.log.warning("%s", text)
            self.ctx.reporter.message(f"{self.ctx.point.id}: {text}", "warning")

    # -- the whole point --------------------------------------------------------------------

    def run(self) -> PointResult:
        spec = self.spec
        tb, node = self.ctx.testbed, self.ctx.node
        self._testing_next_insert: int | None = None
        # The testing phase's time series: its merges are what a running window must see.
        self._testing_intervals: list[dict[str, Any]] | None = None
        self._running_next_insert: int | None = None
        self._loaded_next: int | None = None  # the id after the loaded records
        self._has_load = False
        self.prepare()
        try:
            self.result.fingerprint = tb.fingerprint(node, self.data_dir or node.data_root,
                                                     self.resolved.config_hash,
                                                     driver=self.ctx.driver)
        except Exception as e:  # the fingerprint is informative; never fail a point for it
            self.ctx.log.warning("fingerprint incomplete: %s", e)
        try:
            loaded_next: int | None = None
            # The workload "has a load" when it names records to insert first (an
            # insert-only workload starts from an empty store).
            has_load = spec.phases.load.enabled and _record_count(self.workload) > 0
            if has_load:
                loaded_next = self.load().next_insert_id
            running = spec.phases.running
            if running.enabled and running.start == "snapshot":
                self.snap_dir = f"{self.data_dir}.loaded"
                t0 = time.monotonic()
                tb.snapshot(node, self.data_dir, self.snap_dir)
                self.ctx.log.info("snapshot of the loaded state in %.1fs", time.monotonic() - t0)
            shared = self.ctx.shared_testing
            if shared is not None:
                self.result.max_throughput = dict(shared)
                max_tp = float(shared["writes_per_s"])
                if self.ctx.shared_testing_dir is not None:
                    self._testing_intervals = read_timeseries(
                        self.ctx.shared_testing_dir / "timeseries.jsonl") or None
                self.ctx.log.info("testing: shared with %s: %.0f writes/s",
                                  shared["shared_from"], max_tp)
            else:
                max_tp = self.testing(loaded_next).writes_per_s
            self._loaded_next, self._has_load = loaded_next, has_load
            choice = (self.ctx.after_testing(max_tp)
                      if self.ctx.after_testing is not None and running.enabled else None)
            if choice is not None and choice.skip is not None:
                self.result.skipped_running = choice.skip
                self.ctx.log.info("running phases skipped: %s", choice.skip)
            elif choice is not None and choice.utilization is not None:
                u = round(choice.utilization, 4)
                self.running("running", u, max_tp, self._restart(u, 0))
                self.result.headline = self._headline(u)
            elif running.enabled and running.search is not None:
                self.search(max_tp)
            elif running.enabled:
                for i, u in enumerate(running.sweep()):
                    phase_dir = running_dir(u, bool(running.utilizations))
                    self.running(phase_dir, u, max_tp, self._restart(u, i))
                self.result.headline = self._headline(running.headline_utilization())
        except (PointFailed, ResultsStoreFull):
            raise
        except Exception as e:  # a snapshot's copy, a verdict's file: a disk that ran out?
            fault = diagnose_error(e, self._fault_context(self.ctx.out_dir))
            if fault is None:
                raise
            raise PointFailed.diagnosed("data", fault) from e
        finally:
            if not spec.testbed.keep_data:
                for d in (self.data_dir, self.snap_dir):
                    if d:
                        try:
                            tb.remove_dir(node, d)
                        except Exception as e:
                            self.ctx.log.warning("could not remove %s: %s", d, e)
        return self.result

    def _restart(self, utilization: float, i: int) -> int | None:
        """Puts the data directory in the state the i-th running phase (at this utilization)
        starts from, as running.start says; returns the phase's insert_start."""
        tb, node = self.ctx.testbed, self.ctx.node
        start = self.spec.phases.running.start
        if start == "snapshot":
            tb.snapshot(node, self.snap_dir, self.data_dir)
        elif start == "reload":
            tb.remove_dir(node, self.data_dir)
            self.prepare()
            if self._has_load:
                self._loaded_next = self.load(
                    running_dir(utilization, True, "reload")).next_insert_id
        else:  # continue where the previous phase left off
            return self._running_next_insert if i > 0 else self._testing_next_insert
        return self._loaded_next

    def search(self, max_tp: float) -> SearchResult:
        """phases.running.search: running phases at the utilizations the search asks for, each
        from the loaded tree (start: snapshot or reload; lsmbench.method.search); the headline is
        the search's answer."""
        spec = self.spec.phases.running.search
        assert spec is not None

        def step(u: float) -> StepVerdict:
            phase_dir = running_dir(u, True)
            return StepVerdict.of(self.running(phase_dir, u, max_tp, self._restart(u, 0)),
                                  phase_dir)

        result = run_search(spec, step, max_tp)
        self.result.search = result.to_json()
        self.result.headline = self._headline(result.headline_step.utilization)
        self.ctx.log.info("search: %s", result.summary)
        return result

    def _headline(self, utilization: float) -> dict[str, Any] | None:
        for v in self.result.verdicts:
            if abs(v["utilization"] - utilization) < 1e-12:
                out = dict(v)
                sustainable = [x["utilization"] for x in self.result.verdicts if x["sustainable"]]
                out["max_sustainable_utilization"] = max(sustainable) if sustainable else None
                return out
        return None


def _record_count(workload: dict[str, Any]) -> int:
    try:
        return int(workload.get("record_count") or 0)
    except (TypeError, ValueError):
        return 0


def _default_timeout(duration_s: float) -> float:
    return duration_s * 2 + 300


def _last_error(log_tail: str) -> str:
    lines = [ln.strip() for ln in log_tail.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "lsm-driver:" in ln or "error" in ln.lower():
            return ln
    return lines[-1] if lines else "(no output)"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, default=str) + "\n"
