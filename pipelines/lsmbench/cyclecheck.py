"""Is a running phase long enough to see a merge into the deepest level?

A running window that sees no merge into the deepest level the testing phase
reached is inconclusive (:func:`lsmbench.method.cycles.window_coverage`). How often
such merges come is known in two ways:

* **measured**: the testing phase's merges into its deepest level
  (:func:`lsmbench.method.cycles.merge_cycle`), a number of writes per cycle when it
  saw two or more of them, so the cycle at the running rate follows;
* **simulated**: ``lsm-sim`` runs the engine's policy over the flushes of the
  load and after (:mod:`lsmbench.mergesim`): the flushes between merges into
  the deepest level, times the records a memtable holds. It needs no rate, so
  ``lsmbench plan`` can say before any run at which write rate the running
  window sees one; it is also what ``lsmbench run`` falls back on when the
  testing phase saw a single merge into its deepest level (the usual case
  with a testing phase of a few cycles).

``lsmbench run`` warns (pipeline.log, point.json ``warnings``) before each
running phase shorter than the cycle at its rate; ``lsmbench plan`` says the
rate-free figure, and warns outright when the results store holds a complete
run of the same point to take the rate from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .driverio import read_timeseries
from .engine_options import option_string, record_sizes
from .mergesim import (
    SimCycles,
    SimError,
    memtable_bytes,
    records_per_flush,
    sim_options,
    simulate,
)
from .method.cycles import MergeCycle, deepest_text, merge_cycle
from .plan import Plan
from .points import Point, ResolvedPoint, running_dir, testing_signature
from .spec.models import RunningPhase
from .store import STATE_COMPLETE, Store, read_json
from .util.digest import canonical_hash

# lsmbench plan simulates at most this many distinct engine configurations (each a few ms;
# the plan of a large matrix must stay fast); beyond it, it says so.
MAX_PLAN_SIMULATIONS = 16
SIM_NOT_BUILT = "lsm-sim is not built (make build)"
LENGTHEN = "lengthen phases.running.duration"


class CycleUnknown(Exception):
    """Why there is no cycle to compare a running phase with (said, never raised to a user)."""


# ---------------------------------------------------------------- the cycle


@dataclass(frozen=True)
class ExpectedCycle:
    """How many writes pass between merges into a level, and how that is known."""

    level: int
    writes: float
    basis: str  # "from the testing phase's 2 merges into level 2", ...
    flushes: float | None = None  # the same cycle in flushes, when simulated
    # The testing phase opened with a merge into this level that the load left pending, and
    # it ended this long after the phase began (MergeCycle.pending_end_s).
    pending_end_s: float | None = None

    def seconds_at(self, rate: float) -> float:
        """The cycle's length at a write rate (writes/s)."""
        return self.writes / rate

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "writes": round(self.writes),
                "flushes": self.flushes, "basis": self.basis}


def from_testing(mc: MergeCycle, sim: SimCycles | None,
                 sim_unknown: str | None = None,
                 records: int | None = None) -> tuple[ExpectedCycle | None, str]:
    """The expected cycle from a testing phase's merges (and lsm-sim's, when the testing phase
    saw fewer than 2 into its deepest level), with a sentence saying how it was found.

    records: the records per flush when the testing phase's flush events do not tell them."""
    many = "merge" if mc.merges == 1 else "merges"
    if mc.writes is not None:
        basis = f"from the testing phase's {mc.merges} {many} into {deepest_text(mc.level)}"
        return ExpectedCycle(mc.level, mc.writes, basis, pending_end_s=mc.pending_end_s), basis
    seen = (f"the testing phase saw {mc.merges} {many} into {deepest_text(mc.level)} in "
            f"{mc.phase_s:.0f} s")
    per_flush = mc.writes_per_flush or records
    if sim is None or not per_flush:
        why = sim_unknown or "no flush events to count writes by"
        return None, f"{seen}, too few to time; no estimate either: {why}"
    flushes = sim.cycle_flushes(mc.level)
    if flushes is None:
        return None, (f"{seen}, too few to time; lsm-sim ran {sim.merges_into(mc.level)} merge(s) "
                      f"into it in {sim.flushes - sim.start_flushes} flushes, too few as well")
    basis = f"{seen}; lsm-sim puts one every ~{flushes:.0f} flushes of ~{per_flush:,.0f} writes"
    return ExpectedCycle(mc.level, flushes * per_flush, basis, flushes,
                         pending_end_s=mc.pending_end_s), basis


# How much longer than in the testing phase a pending merge may take in a running phase (a
# judgement, from the quickstart: the greedy scheduler, serving small merges first, took
# 1.6-1.8x the single scheduler's time for the same pending level-2 merge; tiering's pending
# level-4 merge took 7.5-15 s in running phases against 16 s in the testing phase).
PENDING_MARGIN = 1.5


def window_s(running: RunningPhase) -> float:
    """The measured window of a running phase (the verdict's): its duration less the warm-up."""
    return running.duration - running.warmup


def short_phase_warning(phase_dir: str, running: RunningPhase, rate: float,
                        cycle: ExpectedCycle) -> str | None:
    """The warning for a running phase at `rate` writes/s whose window is shorter than the
    cycle (None when it is long enough).

    The verdict counts the merges that completed by the end of the phase and ended in its
    window (or started before it and ended in it), so a window of W s sees one about W / cycle
    of the time when it is shorter than the cycle."""
    if rate <= 0:
        return None
    window, cycle_s = window_s(running), cycle.seconds_at(rate)
    if window >= cycle_s:
        return None
    if cycle.pending_end_s is not None and running.start in ("snapshot", "reload"):
        # The running phase starts from the same loaded tree, so it opens with the same merge:
        # it sees one if it lasts until that merge ends, with room for a scheduler that runs
        # it slower than the testing phase's did.
        needed = PENDING_MARGIN * cycle.pending_end_s
        if window >= needed:
            return None
        return (f"{phase_dir} phase {running.duration:g} s may end before the merge into "
                f"{deepest_text(cycle.level)} that the load left pending (it ended "
                f"{cycle.pending_end_s:.0f} s into the testing phase; allowing "
                f"{PENDING_MARGIN:g}x for a slower scheduler: "
                f"~{needed:.0f} s); without it the verdict is inconclusive; {LENGTHEN} to >= "
                f"{math.ceil(needed + running.warmup)} s")
    length = f"{running.duration:g} s"
    if running.warmup:
        length += f" ({window:g} s after its {running.warmup:g} s warm-up)"
    return (f"{phase_dir} phase {length} is shorter than the expected cycle of merges into "
            f"{deepest_text(cycle.level)} (~{cycle_s:.0f} s at {rate:,.0f} writes/s, "
            f"{cycle.basis}): "
            f"a window this long sees one end only ~{100 * window / cycle_s:.0f} % of the time, "
            f"and without one its verdict is inconclusive; {LENGTHEN} to >= "
            f"{math.ceil(cycle_s + running.warmup)} s")


# ---------------------------------------------------------------- lsm-sim for a point


@dataclass(frozen=True)
class SimInputs:
    """What lsm-sim needs for a point: the policy's options and the flushes."""

    options: dict[str, str]
    records_per_flush: int
    flush_bytes: int
    start_flushes: int  # the load's flushes: the tree every running phase starts from
    # The loaded data the phase's writes update (lsm-sim --key-space, in flush_bytes' units):
    # > 0 when every write updates a loaded key; 0 when writes insert (or there is no load).
    key_space_bytes: int = 0
    distribution: str = "uniform"  # of the updated keys (lsm-sim draws them uniformly)

    def key(self) -> tuple[Any, ...]:
        """What decides the simulation: points with the same key share one lsm-sim run."""
        return (sim_options(self.options), self.flush_bytes, self.start_flushes,
                self.key_space_bytes)


def sim_inputs(resolved: ResolvedPoint, sim: Path | None, phase: str = "running") -> SimInputs:
    """The flushes of a point's phase as lsm-sim takes them (the records a memtable holds are
    lsm-sim's answer too); CycleUnknown says why not."""
    if resolved.spec.engine.name != "builtin":
        raise CycleUnknown(f"lsm-sim runs the builtin engine's policies, not "
                           f"{resolved.spec.engine.name}'s")
    if sim is None:
        raise CycleUnknown(SIM_NOT_BUILT)
    options = resolved.phase_options(phase)
    try:
        key, mean_value = record_sizes(resolved.workload)
        value = round(mean_value)
        records = records_per_flush(sim, memtable_bytes(options), key, value)
        loaded = int(resolved.workload.get("record_count") or 0)
    except (TypeError, ValueError) as e:
        raise CycleUnknown(f"the workload's record size or count: {e}") from e
    except SimError as e:
        raise CycleUnknown(str(e)) from e
    start = loaded // records if resolved.spec.phases.load.enabled else 0
    space = loaded * (key + value) if start > 0 and updates_only(resolved.workload) else 0
    return SimInputs(options, records, records * (key + value), start, space,
                     str(resolved.workload.get("distribution") or "uniform"))


def updates_only(workload: dict[str, Any]) -> bool:
    """True when the workload writes by updating existing keys only (updates or
    read-modify-writes; no insert, no delete)."""
    ops = workload.get("operations") or {}
    weight = {k: float(v) for k, v in ops.items() if isinstance(v, int | float)}
    return weight.get("update", 0.0) + weight.get("rmw", 0.0) > 0 \
        and weight.get("insert", 0.0) == 0 and weight.get("delete", 0.0) == 0


def simulated(resolved: ResolvedPoint, sim: Path | None) -> tuple[SimCycles | None, str | None]:
    """lsm-sim's merges for a point (cached per configuration), or why there are none."""
    if sim is None:
        return None, SIM_NOT_BUILT
    try:
        inputs = sim_inputs(resolved, sim)
        return simulate(sim, inputs.options, inputs.flush_bytes, inputs.start_flushes,
                        inputs.key_space_bytes), None
    except (CycleUnknown, SimError) as e:
        return None, str(e)
    except OSError as e:  # no scratch directory for its decisions
        return None, f"lsm-sim could not run: {e}"


# ---------------------------------------------------------------- lsmbench plan


@dataclass
class CycleReport:
    """What lsmbench plan says about the merge cycle: notes, warnings, and per point (JSON)."""

    notes: list[str]
    warnings: list[str]
    points: dict[str, dict[str, Any]]


def _phase_dirs(running: RunningPhase) -> list[tuple[str, float]]:
    """The running phases a point runs, as (directory, utilization); a search: its lowest
    step, the slowest it may run."""
    if running.search is not None:
        return [(running_dir(running.search.low, True), running.search.low)]
    sweep = bool(running.utilizations)
    return [(running_dir(u, sweep), u) for u in running.sweep()]


def _history(store: Store, plan: Plan, point: Point) -> tuple[float, MergeCycle] | None:
    """The testing maximum and merge cycle of a complete stored run of this point whose testing
    phase ran as this one would (points.testing_signature: a longer running phase, the usual
    fix, keeps it), if the store holds one that tells them."""
    rec = store.point(plan.spec.name, point.id)
    if rec is None or rec.state != STATE_COMPLETE:
        return None
    try:
        stored = testing_signature(read_json(rec.path / "spec.json"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if canonical_hash(stored) != canonical_hash(testing_signature(plan.point(point).config)):
        return None
    mt = rec.data.get("max_throughput")
    rate = mt.get("writes_per_s") if isinstance(mt, dict) else None
    if not isinstance(rate, int | float) or rate <= 0:
        return None
    mc = MergeCycle.from_json(mt.get("merge_cycle"))
    if mc is None and "merge_cycle" not in mt:  # written before merge_cycle was recorded
        try:
            mc = merge_cycle(read_timeseries(rec.path / "testing" / "timeseries.jsonl"))
        except (OSError, ValueError, TypeError):
            return None
    return (float(rate), mc) if mc is not None else None


def _measured_warning(point: Point, running: RunningPhase, max_tp: float,
                      cycle: ExpectedCycle) -> str | None:
    """lsmbench plan's warning from a stored run of the point: its slowest running phase
    (utilization x the maximum measured last time) too short for the cycle, if any."""
    short = [(d, u) for d, u in _phase_dirs(running)
             if short_phase_warning(d, running, u * max_tp, cycle)]
    if not short:
        return None
    phase_dir, u = min(short, key=lambda du: du[1])
    text = short_phase_warning(phase_dir, running, u * max_tp, cycle)
    others = [d for d, _ in short if d != phase_dir]
    also = f" (also too short: {', '.join(others)})" if others else ""
    return (f"{point.id}: at the {max_tp:,.0f} writes/s its testing phase measured last time, "
            f"{text}{also}")


def _rate_free_note(sim: SimCycles, level: int, records: int, running: RunningPhase) -> str:
    """What lsm-sim says without a rate: every how many writes the merge comes, and the rate
    at which the running window holds one."""
    flushes = sim.cycle_flushes(level)
    if flushes is None:
        return (f"lsm-sim ran {sim.merges_into(level)} merge(s) into {deepest_text(level)} (the "
                f"deepest after the load) in {sim.flushes - sim.start_flushes} flushes: a running "
                "phase may well see none")
    writes = flushes * records
    return (f"a merge into {deepest_text(level)} (the deepest after the load) comes every "
            f"~{flushes:.0f} flushes (~{writes:,.0f} writes, lsm-sim): the running phase's "
            f"{window_s(running):g} s window is sure to see one end only at >= "
            f"{writes / window_s(running):,.0f} writes/s")


def _group_label(points: list[Point], all_points: list[Point]) -> str:
    """The matrix values that pick out exactly this group of points ('policy=leveling: '),
    else how many they are; nothing for all of them."""
    if len(points) == len(all_points):
        return ""
    common = {k: v for k, v in points[0].params.items()
              if all(p.params.get(k) == v for p in points)}
    matching = [p for p in all_points
                if all(p.params.get(k) == v for k, v in common.items())]
    if common and len(matching) == len(points):
        return ",".join(f"{k}={option_string(v)}" for k, v in common.items()) + ": "
    return f"{len(points)} points: "


def plan_cycles(plan: Plan, store: Store | None, sim: Path | None) -> CycleReport:
    """lsmbench plan's statements about the deepest merge's cycle: a rate-free note per group
    of points from lsm-sim, a warning per point whose last run makes its running phase too
    short (never raises)."""
    report = CycleReport([], [], {})
    if not plan.spec.phases.running.enabled or not plan.points:
        return report
    off = None  # why lsm-sim is not run
    if sim is None:
        off = SIM_NOT_BUILT
    else:
        configs = {_sim_key(plan.point(p), sim) for p in plan.points} - {None}
        if len(configs) > MAX_PLAN_SIMULATIONS:
            sim, off = None, (f"{len(configs)} distinct engine configurations, more than the "
                              f"{MAX_PLAN_SIMULATIONS} lsm-sim runs a plan makes")
    if off:
        report.notes.append(f"merge cycle: no estimate before a run: {off}; lsmbench run warns "
                            "after each point's testing phase")
    grouped: dict[str, list[Point]] = {}
    for p in plan.points:
        note = _point_cycle(plan, store, sim, p, report, off)
        if note:
            grouped.setdefault(note, []).append(p)
    for note, pts in grouped.items():
        report.notes.append(f"merge cycle: {_group_label(pts, plan.points)}{note}")
    return report


def _sim_key(resolved: ResolvedPoint, sim: Path) -> tuple[Any, ...] | None:
    try:
        return sim_inputs(resolved, sim).key()
    except CycleUnknown:
        return None


def _records(resolved: ResolvedPoint, sim: Path | None) -> int | None:
    """The records per flush of a point (None when they cannot be told)."""
    try:
        return sim_inputs(resolved, sim).records_per_flush
    except CycleUnknown:
        return None


def _point_cycle(plan: Plan, store: Store | None, sim: Path | None, point: Point,
                 report: CycleReport, off: str | None) -> str | None:
    """Adds a point's warning and JSON to the report; returns its note, if any (off: why
    lsm-sim is not run, said once by the caller)."""
    resolved = plan.point(point)
    running = resolved.spec.phases.running
    cycles, why = simulated(resolved, sim) if sim is not None else (None, None)
    entry: dict[str, Any] = {"window_s": window_s(running)}
    note = None
    if cycles is not None and cycles.deepest is None:
        note = ("no loaded tree to start from: the deepest level the testing phase reaches "
                "depends on its rate; lsmbench run warns after the testing phase")
    elif cycles is not None:
        records = sim_inputs(resolved, sim).records_per_flush
        flushes = cycles.cycle_flushes(cycles.deepest)
        entry["lsm_sim"] = {
            "level": cycles.deepest, "flushes": flushes, "records_per_flush": records,
            "min_writes_per_s": (round(flushes * records / window_s(running), 1)
                                 if flushes else None)}
        note = _rate_free_note(cycles, cycles.deepest, records, running)
    elif why:
        note = f"no estimate before a run: {why}"
    past = _history(store, plan, point) if store is not None else None
    if past is not None:
        max_tp, mc = past
        cycle, basis = from_testing(mc, cycles, why or off, _records(resolved, sim))
        entry["last_run"] = {"max_writes_per_s": round(max_tp, 1),
                             "cycle": cycle.to_json() if cycle else None,
                             "basis": None if cycle else basis}
        warning = _measured_warning(point, running, max_tp, cycle) if cycle else None
        if warning:
            report.warnings.append(warning)
    if len(entry) > 1:
        report.points[point.id] = entry
    return note
