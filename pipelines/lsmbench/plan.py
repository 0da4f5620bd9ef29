"""The plan: the matrix expanded into points, each point's phases and its estimate.

Expansion: the dimensions form a cross product, except that the dimensions of
one ``zip`` group advance together (one axis of the product); ``exclude``
rules then drop the points that match every key of a rule; every remaining
combination runs ``repetitions`` times, repetition r with ``seeds[r]``
(default r + 1).

Engine options of a phase, lowest to highest precedence:
``engine.options`` < the point's matrix values < ``phases.<phase>.engine_options``.
So a testing phase can prescribe the paper's fair scheduler while the
running phase uses the point's own scheduler.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from .engine_options import option_string
from .method.search import steps_needed
from .points import Point, ResolvedPoint, group_id, point_id, resolve_point, running_dir
from .spec import MATRIX_RESERVED, CampaignSpec, LoadedSpec, RunningPhase
from .spec.checks import repetition_range
from .spec.tune_domains import resolve_domains
from .util.digest import canonical_hash
from .util.names import BUILD_CANDIDATE, BUILD_DIMENSION, BUILD_REFERENCE
from .util.paths import build_driver
from .util.units import format_duration
from .util.wording import plural

# Rough speed of a load phase when nothing better is known (records/s), used
# only for the plan's estimate; the store's history replaces it.
ASSUMED_LOAD_RATE = 50_000.0
# Per point work around the driver runs (fresh dir, snapshot, fingerprint, store).
ASSUMED_POINT_OVERHEAD_S = 2.0

SINGLE_RUN_FLIPS = ("run once per point, 2 of the quickstart's 4 verdicts flipped between runs "
                    "of the same spec on this project's 2-core VM")
"""What one run per point is worth, as measured: the single place the single-run warning's
number comes from. The figure is research/quickstart-verdicts.md's (its opening
paragraph: before the quickstart ran repetitions, leveling + greedy and tiering came out
either way from one run to the next); change it only with that page."""
SINGLE_RUN_EVIDENCE = "research/quickstart-verdicts.md"


def single_run_warning(spec: CampaignSpec) -> str | None:
    """The warning of `plan` and `run` when a campaign's verdicts rest on single runs: every
    group at most one repetition (``repetitions: 1``, or ``max: 1``), or, with
    ``repetitions.groups``, the groups it does not list at ``min: 1``. None otherwise (and for
    a study, whose confirmations have repetitions of their own)."""
    if spec.tune is not None:
        return None
    lo, hi = repetition_range(spec.matrix)
    r = spec.matrix.get("repetitions")
    listed = isinstance(r, dict) and bool(r.get("groups"))
    if hi > 1 and not (listed and lo == 1):
        return None
    which = ("the groups matrix.repetitions.groups does not list run once (min: 1)"
             if hi > 1 else "every group runs once (matrix.repetitions: 1)")
    return (f"the verdicts rest on single runs: {which}, and one run has no interval; "
            f"{SINGLE_RUN_FLIPS} ({SINGLE_RUN_EVIDENCE}); `repetitions: {{min: 2, max: 3}}` "
            "judges each group on two runs at least, a third when they leave it undecided")


@dataclass
class PhasePlan:
    name: str  # load | testing | running (running@0.95 in sweeps) | search
    duration_s: float | None  # None: load until done; a search: all its running phases
    utilization: float | None = None
    runs: int = 1  # a search: at most this many running phases
    until: str | None = None  # an adaptive phase: what ends it before duration_s, its cap


@dataclass
class Expected:
    """An adaptive campaign's expected time, and how it was estimated."""

    point_s: float  # a point with min repetitions' share of the testing phases
    total_s: float
    basis: list[str]


@dataclass
class Plan:
    loaded: LoadedSpec
    points: list[Point]
    dimensions: dict[str, list[Any]]
    zips: list[list[str]]
    excluded: int
    repetitions: int
    estimate_point_s: float
    notes: list[str] = field(default_factory=list)
    # Things a run would likely regret (lsmbench plan: cyclecheck.plan_cycles).
    warnings: list[str] = field(default_factory=list)
    # Per point id, what is known of its deepest merge's cycle (cyclecheck.plan_cycles).
    cycles: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Each point resolved once (points.resolve_point), by id.
    resolved: dict[str, ResolvedPoint] = field(default_factory=dict)
    # Per point id, its estimated peak data on the data disk (datasize.check_data_size).
    data_bytes: dict[str, int] = field(default_factory=dict)
    # Per point id, lsm-sim's predicted testing maximum and verdict (predict.predict_plan).
    predictions: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Adaptive phases or repetitions: the expected time (phases as long as the last run's,
    # else their minimum; the minimum repetitions) beside estimate_s, the worst case.
    expected: Expected | None = None

    @property
    def spec(self) -> CampaignSpec:
        return self.loaded.spec

    def point(self, point: Point | str) -> ResolvedPoint:
        """A point of the plan, resolved (by the point or its id)."""
        pid = point if isinstance(point, str) else point.id
        if pid not in self.resolved:
            self.resolved[pid] = resolve_point(self.loaded, next(
                p for p in self.points if p.id == pid))
        return self.resolved[pid]

    @property
    def estimate_s(self) -> float:
        sharing = sum(1 for pid, leader in self.testing_leaders().items() if pid != leader)
        return (self.estimate_point_s * len(self.points)
                - sharing * self.spec.phases.testing.duration)

    def phases(self) -> list[PhasePlan]:
        return phase_plan(self.spec, self.loaded.workload)

    def testing_group(self, point: Point) -> tuple[Any, ...]:
        """Points with the same key share one testing phase (phases.testing.shared_across):
        the repetition and every dimension but the shared ones. Without sharing, a point's
        key is its own."""
        shared = self.spec.phases.testing.shared_across
        if not shared:
            return (point.id,)
        return (point.rep, *((k, repr(v)) for k, v in point.params.items() if k not in shared))

    def driver_for(self, point: Point) -> str | None:
        """The lsm-driver a point runs with when it is not the testbed's: the reference build's
        for pair:'s build=reference points; None otherwise."""
        pair = self.spec.pair
        if pair is None or point.params.get(BUILD_DIMENSION) != BUILD_REFERENCE:
            return None
        driver = build_driver(pair.reference)
        return str(driver) if driver is not None else None

    def testing_leaders(self) -> dict[str, str]:
        """Point id -> the id of the first point of its testing group, in plan order."""
        first: dict[tuple[Any, ...], str] = {}
        return {p.id: first.setdefault(self.testing_group(p), p.id) for p in self.points}

    def to_json(self) -> dict[str, Any]:
        spec = self.spec
        return {
            "campaign": spec.name,
            "points": [
                {"index": p.index, "id": p.id, "params": p.params, "rep": p.rep, "seed": p.seed}
                for p in self.points
            ],
            "dimensions": self.dimensions,
            "zip": self.zips,
            "excluded": self.excluded,
            "repetitions": self.repetitions,
            "phases": [
                {"name": ph.name, "duration_s": ph.duration_s, "utilization": ph.utilization,
                 "runs": ph.runs}
                for ph in self.phases()
            ],
            "search": (spec.phases.running.search.model_dump()
                       if spec.phases.running.search is not None else None),
            "testbed": spec.testbed.model_dump(),
            "throttle": spec.throttle.model_dump(),
            "sinks": {name: s.url if s else None for name, s in spec.sinks.by_name().items()},
            "estimate_point_s": round(self.estimate_point_s, 1),
            "estimate_s": round(self.estimate_s, 1),
            "notes": self.notes,
            "warnings": self.warnings,
            "cycles": self.cycles,
            "data_bytes": self.data_bytes,
            "predictions": self.predictions,
            "expected_s": round(self.expected.total_s, 1) if self.expected else None,
        }


def _dimensions(matrix: dict[str, Any]) -> dict[str, list[Any]]:
    dims: dict[str, list[Any]] = {}
    for key, values in matrix.items():
        if key in MATRIX_RESERVED:
            continue
        dims[key] = values if isinstance(values, list) else [values]
    return dims


def _zip_groups(matrix: dict[str, Any]) -> list[list[str]]:
    zips = matrix.get("zip") or []
    if zips and all(isinstance(z, str) for z in zips):
        zips = [zips]
    return [list(g) for g in zips]


def _excluded(params: dict[str, Any], rules: list[dict[str, Any]]) -> bool:
    for rule in rules:
        if all(
            params.get(d) in (v if isinstance(v, list) else [v]) for d, v in rule.items()
        ):
            return True
    return False


def expand_matrix(matrix: dict[str, Any]) -> tuple[list[Point], int]:
    """All points of a (validated) matrix, in a stable order, and how many were excluded."""
    dims = _dimensions(matrix)
    groups = _zip_groups(matrix)
    in_zip = {d for g in groups for d in g}
    # Axes in the order their first dimension appears in the matrix.
    axes: list[list[str]] = []
    for d in dims:
        if d in in_zip:
            g = next(g for g in groups if d in g)
            if g not in axes:
                axes.append(g)
        else:
            axes.append([d])
    axis_values = [list(zip(*(dims[d] for d in axis), strict=True)) for axis in axes]
    rules = matrix.get("exclude") or []
    seeds = matrix.get("seeds")
    reps = repetition_range(matrix)[1]  # every repetition that may run; adaptive ones too
    if not seeds:
        seeds = [r + 1 for r in range(reps)]
    order = list(dims)
    points: list[Point] = []
    excluded = 0
    for combo in itertools.product(*axis_values):
        values: dict[str, Any] = {}
        for axis, vals in zip(axes, combo, strict=True):
            values.update(zip(axis, vals, strict=True))
        params = {d: values[d] for d in order}
        if _excluded(params, rules):
            excluded += 1
            continue
        for r in range(reps):
            points.append(
                Point(index=len(points), id=point_id(params, r), params=params, rep=r,
                      seed=seeds[r])
            )
    return points, excluded * reps


def paired_points(points: list[Point], seed: int) -> list[Point]:
    """pair: every point as build=reference and build=candidate, the two of one repetition
    adjacent, in ABBA order -- A B for one repetition, B A for the next -- from a start drawn
    per group with the seed (randomized interleaved trials: a drift during the night weighs
    on both builds alike, and neither always runs first). Both keep the point's seed: the same
    workload for both builds."""
    out: list[Point] = []
    for p in points:
        draw = random.Random(canonical_hash([seed, group_id(p.params)]))
        reference_first = (draw.random() < 0.5) == (p.rep % 2 == 0)
        builds = (BUILD_REFERENCE, BUILD_CANDIDATE) if reference_first else (
            BUILD_CANDIDATE, BUILD_REFERENCE)
        for build in builds:
            params = {**p.params, BUILD_DIMENSION: build}
            out.append(Point(index=len(out), id=point_id(params, p.rep), params=params,
                             rep=p.rep, seed=p.seed))
    return out


def phase_plan(spec: CampaignSpec, workload: dict[str, Any] | None = None) -> list[PhasePlan]:
    phases: list[PhasePlan] = []
    records = (workload or {}).get("record_count", 1)
    if spec.phases.load.enabled and records:
        phases.append(PhasePlan("load", None))
    phases.append(PhasePlan("testing", spec.phases.testing.duration,
                            until="steady" if spec.phases.testing.steady else None))
    search = spec.phases.running.search
    if spec.phases.running.enabled and search is not None:
        # At most max_steps running phases: the estimate is the longest search.
        phases.append(PhasePlan("search", spec.phases.running.duration * search.max_steps,
                                runs=search.max_steps))
    elif spec.phases.running.enabled:
        for u in spec.phases.running.sweep():
            name = running_dir(u, bool(spec.phases.running.utilizations))
            phases.append(PhasePlan(name, spec.phases.running.duration, u,
                                    until="decided" if spec.phases.running.until_decided
                                    else None))
    return phases


def estimate_load_s(workload: dict[str, Any], history_load_s: float | None = None) -> float:
    if history_load_s is not None:
        return history_load_s
    records = workload.get("record_count", 0)
    try:
        return float(records) / ASSUMED_LOAD_RATE
    except (TypeError, ValueError):
        return 0.0


def estimate_point_s(spec: CampaignSpec, workload: dict[str, Any],
                     history_load_s: float | None = None) -> float:
    total = ASSUMED_POINT_OVERHEAD_S
    for ph in phase_plan(spec, workload):
        if ph.name == "load":
            total += estimate_load_s(workload, history_load_s)
            if spec.phases.running.enabled and spec.phases.running.start == "reload":
                total += estimate_load_s(workload, history_load_s) * spec.phases.running.runs()
        else:
            total += ph.duration_s or 0.0
    return total


def adaptive(spec: CampaignSpec) -> bool:
    """Whether a campaign's length is decided by its measurements."""
    lo, hi = repetition_range(spec.matrix)
    ph = spec.phases
    return (ph.testing.steady is not None or ph.running.until_decided is not None or lo < hi)


def expected_time(plan: Plan, history_phase_s: dict[str, float] | None = None) -> Expected:
    """The expected time of an adaptive campaign: each adaptive phase as long as the same
    campaign's stored phases of that kind took on average (history_phase_s), else its least
    (a steady testing phase: the ramp and its rounds plus one; a running phase until decided:
    its cap, nothing being known of its merges); the minimum repetitions of every group.
    The settle waits are counted only from history."""
    spec = plan.spec
    hist = history_phase_s or {}
    basis: list[str] = []
    point = plan.estimate_point_s
    testing, running = spec.phases.testing, spec.phases.running
    if testing.steady is not None:
        st = testing.steady
        least = min(testing.duration, st.ramp + (st.rounds + 1) * st.round)
        got = hist.get("testing")
        point += (got if got is not None else least) - testing.duration
        basis.append(f"testing ~{format_duration(got)} as last run" if got is not None else
                     f"testing at least {format_duration(least)} (ramp + {st.rounds + 1} rounds)"
                     f" of its {format_duration(testing.duration)} cap")
    if running.enabled and running.until_decided is not None and running.search is None:
        got = hist.get("running")
        if got is not None:
            point += (got - running.duration) * len(running.sweep())
            basis.append(f"running ~{format_duration(got)} as last run")
        else:
            basis.append(f"running at its {format_duration(running.duration)} cap (no earlier "
                         "run tells how soon it decides)")
    for name in ("load", "testing", "running"):
        if hist.get(f"{name}_settle"):
            point += hist[f"{name}_settle"]
            basis.append(f"{name} settle ~{format_duration(hist[name + '_settle'])} as last run")
    lo, hi = repetition_range(spec.matrix)
    share = lo / hi
    if lo < hi:
        basis.append(f"{plural(lo, 'repetition')} per group (at most {hi})")
    sharing = sum(1 for pid, leader in plan.testing_leaders().items() if pid != leader)
    testing_s = hist.get("testing", testing.duration)
    total = (point * len(plan.points) - sharing * testing_s) * share
    return Expected(point, max(total, 0.0), basis)


def build_plan(loaded: LoadedSpec, history_load_s: float | None = None,
               history_phase_s: dict[str, float] | None = None) -> Plan:
    spec = loaded.spec
    points, excluded = expand_matrix(spec.matrix)
    dimensions = _dimensions(spec.matrix)
    notes: list[str] = []
    if spec.pair is not None:
        points = paired_points(points, spec.pair.seed)
        dimensions[BUILD_DIMENSION] = [BUILD_REFERENCE, BUILD_CANDIDATE]
        notes.append(f"pair: every point with the reference build ({spec.pair.reference}) and "
                     "the build under test (the testbed's driver), repetitions in ABBA order")
    if not points:
        notes.append("the exclude rules leave no point to run")
    if spec.phases.running.utilizations and (
        spec.phases.running.utilization not in spec.phases.running.utilizations
    ):
        notes.append(
            f"phases.running.utilization {spec.phases.running.utilization:g} is not in the "
            f"sweep; the verdict refers to the sweep's largest value"
        )
    search = spec.phases.running.search
    if search is not None and spec.phases.running.enabled:
        needed = steps_needed(search)
        notes.append(
            f"phases.running.search: the highest sustainable utilization in "
            f"[{search.low:g}, {search.high:g}] x max, to within {search.tolerance:g}: "
            f"{search.high:g} first, then bisection; at most {search.max_steps} running "
            f"phases per point (estimated as {search.max_steps}); an inconclusive step counts "
            f"as not sustainable")
        if needed > search.max_steps:
            notes.append(
                f"phases.running.search.max_steps {search.max_steps} may stop the search "
                f"before its tolerance: it can take {needed} steps")
        if spec.phases.running.utilization != RunningPhase.model_fields["utilization"].default:
            notes.append("phases.running.utilization is not used: the search chooses the "
                         "utilizations")
    reps = repetition_range(spec.matrix)[1]
    plan = Plan(
        loaded=loaded,
        points=points,
        dimensions=dimensions,
        zips=_zip_groups(spec.matrix),
        excluded=excluded,
        repetitions=reps,
        estimate_point_s=estimate_point_s(spec, loaded.workload, history_load_s),
        notes=notes,
        resolved={p.id: resolve_point(loaded, p) for p in points},
    )
    if adaptive(spec):
        plan.expected = expected_time(plan, history_phase_s)
    single = single_run_warning(spec)
    if single is not None and points:
        plan.warnings.append(single)
    if spec.phases.testing.shared_across and points:
        groups = len(set(plan.testing_leaders().values()))
        notes.append(f"phases.testing.shared_across: {plural(groups, 'testing phase')} for "
                     f"{plural(len(points), 'point')}; the others run at their group's maximum")
    return plan


def _phase_text(p: PhasePlan) -> str:
    if p.duration_s is None:
        return f"{p.name} (until done)"
    if p.runs > 1:
        each = format_duration(p.duration_s / p.runs)
        return f"{p.name} (<= {p.runs} running phases of {each}: {format_duration(p.duration_s)})"
    if p.until:
        return f"{p.name} (until {p.until}, <= {format_duration(p.duration_s)})"
    return f"{p.name} ({format_duration(p.duration_s)})"


def tune_runs(plan: Plan) -> int:
    """A tune spec's most points: its trials and the confirmation runs (the top
    configurations and the spec's own, each its repetitions)."""
    tune = plan.spec.tune
    assert tune is not None
    confirm = tune.confirm
    return tune.trials + (confirm.top + 1) * confirm.repetitions * (
        len(tune.objectives()) == 1 and confirm.top > 0)


def describe_tune(plan: Plan) -> list[str]:
    """A tune spec's study: its trials instead of matrix points (lsmbench tune)."""
    spec = plan.spec
    tune = spec.tune
    assert tune is not None
    confirm = tune.confirm
    runs = tune_runs(plan)
    total = format_duration(runs * plan.estimate_point_s)
    lines = [f"study {spec.name} (lsmbench tune): {tune.trials} trials + up to "
             f"{runs - tune.trials} confirmation runs, ~{total} estimated (trials pruned "
             "after their testing phase take less)",
             f"  objective: {', '.join(tune.objectives())}; constraints: "
             f"{', '.join(b.text() for b in tune.bounds()) or 'none'}",
             f"  sampler: Optuna TPE (multivariate), seed {tune.seed}, the first "
             f"{tune.n_startup_trials()} trials random (the first of them the spec's own "
             f"configuration)"]
    for name, dom in resolve_domains(spec)[0].items():
        lines.append(f"  parameter {name}: {dom.describe()}")
    if len(tune.objectives()) == 1 and confirm.top > 0:
        lines.append(f"  confirmation: the top {confirm.top} configurations and the spec's own, "
                     f"{confirm.repetitions} fresh repetitions each; the answer by the "
                     "pessimistic end of each one's interval")
    return lines


def describe(plan: Plan) -> list[str]:
    """The human-readable plan, a line each."""
    spec = plan.spec
    if spec.tune is not None:
        lines = describe_tune(plan)
    else:
        lines = [f"campaign {spec.name}: {plural(len(plan.points), 'point')}"
                 f" ({plan.excluded} excluded), ~{format_duration(plan.estimate_s)} estimated"]
        if plan.expected is not None:
            lines[0] = (f"campaign {spec.name}: up to {plural(len(plan.points), 'point')}"
                        f" ({plan.excluded} excluded), ~{format_duration(plan.expected.total_s)}"
                        f" expected, at most ~{format_duration(plan.estimate_s)}")
            lines.append(f"  adaptive: {'; '.join(plan.expected.basis)}")
    for d, vals in plan.dimensions.items():
        lines.append(f"  dimension {d}: {', '.join(option_string(v) for v in vals)}")
    for g in plan.zips:
        lines.append(f"  zipped: {' + '.join(g)}")
    if spec.tune is None:
        lo, hi = repetition_range(spec.matrix)
        lines.append(f"  repetitions: {plan.repetitions}" if lo == hi else
                     f"  repetitions: {lo} to {hi} (more while a group is undecided)")
    ph = ", ".join(_phase_text(p) for p in plan.phases())
    lines.append(f"  phases: {ph}")
    sections = ([(f"engine {label} ({e.name})", e) for label, e in spec.engines.items()]
                if spec.engines else [(f"engine {spec.engine.name}", spec.engine)])
    for head, engine in sections:
        opts = ", ".join(f"{k}={option_string(v)}" for k, v in engine.options.items())
        lines.append(f"  {head}: {opts}" if opts else f"  {head}")
    for name in ("load", "testing", "running"):
        over = getattr(spec.phases, name).engine_options
        if over:
            opts = ", ".join(f"{k}={option_string(v)}" for k, v in over.items())
            lines.append(f"  {name} phase engine options: {opts}")
    tb = spec.testbed
    lines.append(f"  testbed: {tb.type} (data dir {tb.data_dir})")
    th = spec.throttle
    if th.enabled:
        lim = ", ".join(f"{k}={getattr(th, k)}" for k in ("write_bps", "read_bps", "write_iops",
                                                          "read_iops") if getattr(th, k))
        lines.append(f"  throttle: {lim or 'accounting only'} on {th.device} "
                     f"({', '.join(th.phases)})")
    else:
        lines.append("  throttle: off")
    for name, s in spec.sinks.by_name().items():
        if s:
            lines.append(f"  sink: {name} {s.url}")
    lines.extend(f"  note: {n}" for n in plan.notes)
    lines.extend(f"  warning: {w}" for w in plan.warnings)
    return lines
