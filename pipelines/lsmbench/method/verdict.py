"""The arithmetic of the two-phase method, as pure functions over driver outputs.

* :func:`max_throughput` — the testing phase's maximum write throughput: the
  writes completed in the measured window divided by the window's length,
  the window being the phase without its warm-up (by default the first 1/6,
  as the paper excluded 20 of 120 minutes).
* :func:`judge` -- the running phase's verdict, from the whole run rather than one
  percentile: the p99 write latency (from each write's *intended* arrival) under a bound, the
  final backlog under ``max_backlog`` seconds of arrivals, no steady growth of the backlog over
  the second half of the window (Theil-Sen slope with a 95 % interval,
  :mod:`lsmbench.method.stats`), little time with writes stalled, and the achieved rate close to
  the offered one. The verdict names the criteria that failed; a run none failed is still
  inconclusive when a criterion could not be computed, or when its window missed the deepest merge.

Nothing here reads files or clocks: the inputs are the parsed
``timeseries.jsonl`` lines, ``summary.json`` and ``histograms.json``
(schemas in engines/driver/README.md), so the tests feed recorded outputs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from scipy import stats as scipy_stats

from ..engine_options import WRITE_OPERATIONS
from ..spec.models import TestingPhase, VerdictSpec
from ..util.values import number
from ..util.wording import plural
from .cycles import Coverage, flush_cycle_throughput, window_coverage
from .latency_bounds import (  # noqa: F401  (re-exported: the verdict's figures)
    p99_from_timeseries,
    percentile_from_buckets,
    tail_over_upper_bound,
)
from .metrics import STALL_INTERVALS, StallTime, stall_time, stall_time_of_intervals
from .stats import MIN_SLOPE_POINTS, Slope, backlog_slope


class VerdictError(ValueError):
    """Driver outputs that cannot support a figure (empty window, missing fields)."""


# ---------------------------------------------------------------- helpers


def _writes(interval: dict[str, Any]) -> float:
    ops = interval.get("ops") or {}
    if "writes" in ops:
        return float(ops["writes"])
    return float(sum(ops.get(k, 0) for k in WRITE_OPERATIONS))


def _requests_per_s(intervals: list[dict[str, Any]], warmup_s: float) -> float:
    """Every operation's rate (the writers' whole mix) over the intervals after the warm-up."""
    chosen = [(*_span(iv), float((iv.get("ops") or {}).get("total", 0))) for iv in intervals]
    chosen = [(a, b, n) for a, b, n in chosen if a + 1e-6 >= warmup_s and b > a]
    if not chosen:
        raise VerdictError(f"no complete interval after the {warmup_s:g}s warm-up")
    return sum(n for _, _, n in chosen) / sum(b - a for a, b, _ in chosen)


def _span(interval: dict[str, Any]) -> tuple[float, float]:
    try:
        return float(interval["t_start_s"]), float(interval["t_end_s"])
    except (KeyError, TypeError, ValueError) as e:
        raise VerdictError(f"interval without t_start_s/t_end_s: {interval!r:.120}") from e


# ---------------------------------------------------------------- max throughput


@dataclass
class MaxThroughput:
    """The testing phase's figure and the window it covers."""

    writes_per_s: float
    window_start_s: float
    window_end_s: float
    intervals: int
    writes: float
    warmup_s: float
    per_interval_min: float
    per_interval_max: float
    cv: float  # coefficient of variation of the per-interval write rates
    # Both figures, when the engine tells its flushes (max_throughput_of_testing): the rate
    # over whole memtable cycles and the interval count; `method` says which is writes_per_s.
    cycle_writes_per_s: float | None = None
    cycles: int | None = None
    interval_writes_per_s: float | None = None
    method: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def warmup_seconds(duration_s: float, warmup_s: float | None = None,
                   warmup_fraction: float = 1 / 6) -> float:
    """The warm-up excluded from the measured window: explicit, else a fraction of the phase."""
    w = warmup_s if warmup_s is not None else duration_s * warmup_fraction
    if not 0 <= w < duration_s:
        raise VerdictError(f"warm-up {w:g}s must be in [0, {duration_s:g}s)")
    return w


def max_throughput(intervals: list[dict[str, Any]], warmup_s: float,
                   end_s: float | None = None) -> MaxThroughput:
    """Mean write throughput over the intervals that start at or after the warm-up.

    An interval that straddles the warm-up boundary is left out whole (its
    writes cannot be split); so is one that ends after ``end_s`` when given.
    The mean is total writes / total covered time, which weights intervals
    by their length (the last interval of a run may be short).
    """
    eps = 1e-6
    chosen = []
    for iv in intervals:
        start, end = _span(iv)
        if start + eps < warmup_s:
            continue
        if end_s is not None and end > end_s + eps:
            continue
        if end <= start:
            continue
        chosen.append((start, end, _writes(iv)))
    if not chosen:
        raise VerdictError(
            f"no complete interval after the {warmup_s:g}s warm-up "
            f"({len(intervals)} intervals in all): the phase is too short for its warm-up"
        )
    span = sum(e - s for s, e, _ in chosen)
    writes = sum(w for _, _, w in chosen)
    rates = [w / (e - s) for s, e, w in chosen]
    mean_rate = sum(rates) / len(rates)
    var = sum((r - mean_rate) ** 2 for r in rates) / len(rates)
    return MaxThroughput(
        writes_per_s=writes / span,
        window_start_s=chosen[0][0],
        window_end_s=chosen[-1][1],
        intervals=len(chosen),
        writes=writes,
        warmup_s=warmup_s,
        per_interval_min=min(rates),
        per_interval_max=max(rates),
        cv=math.sqrt(var) / mean_rate if mean_rate > 0 else 0.0,
    )


# Whole memtable cycles the testing window must hold for the cycle rate to be recorded.
MIN_TESTING_CYCLES = 3

# phases.testing.maximum: how the testing phase's figure is taken.
MAXIMUM_INTERVALS = "intervals"
MAXIMUM_CYCLES = "cycles"
# The spec's default is the one default (a caller without a spec gets what a spec gets).
DEFAULT_MAXIMUM: str = TestingPhase.model_fields["maximum"].default


def max_throughput_of_testing(intervals: list[dict[str, Any]], warmup_s: float,
                              method: str = DEFAULT_MAXIMUM) -> MaxThroughput:
    """The testing phase's maximum, with both figures recorded: the interval count of
    max_throughput and, when the engine tells its flushes, the rate over whole memtable
    cycles (cycles.flush_cycle_throughput).

    ``method`` (phases.testing.maximum) says which is the maximum. "cycles", the default,
    is not quantized by the memtables a window holds, and over short windows it erred a little
    less than the count against the long-run rate (research/quickstart-verdicts.md);
    it falls back on the interval count when the events do not allow it (``method`` in the
    record says which was used). "intervals" is the count. Where the window holds about one
    cycle of the deepest merge, neither is free of where that merge falls."""
    mt = max_throughput(intervals, warmup_s)
    whole = flush_cycle_throughput(intervals, warmup_s, min_cycles=MIN_TESTING_CYCLES)
    if whole is None:
        return replace(mt, method=MAXIMUM_INTERVALS)
    mt = replace(mt, cycle_writes_per_s=whole.writes_per_s, cycles=whole.cycles,
                 interval_writes_per_s=mt.writes_per_s)
    if method == MAXIMUM_CYCLES:
        return replace(mt, writes_per_s=whole.writes_per_s, method=MAXIMUM_CYCLES)
    return replace(mt, method=MAXIMUM_INTERVALS)


def running_coverage(testing: list[dict[str, Any]], running: list[dict[str, Any]],
                     fig: RunningFigures) -> Coverage | None:
    """Whether the running window saw a merge into the deepest level the testing phase
    reached (None when there is nothing to judge by)."""
    if fig.window_start_s is None:
        return None
    ends = [float(iv["t_end_s"]) for iv in running if "t_end_s" in iv and not iv.get("drain")]
    end = fig.window_end_s if fig.window_end_s is not None else max(ends, default=None)
    if end is None:
        return None
    return window_coverage(testing, running, fig.window_start_s, end)


# ---------------------------------------------------------------- verdict

# The defaults of the spec's verdict: fields (VerdictSpec says what each means).
_DEFAULTS = VerdictSpec()
DEFAULT_P99_LIMIT_S = _DEFAULTS.p99_write_latency
DEFAULT_MAX_BACKLOG_S = _DEFAULTS.max_backlog
DEFAULT_MAX_BACKLOG_GROWTH = _DEFAULTS.max_backlog_growth
DEFAULT_MAX_STALLED_FRACTION = _DEFAULTS.max_stalled_fraction
DEFAULT_MAX_RATE_SHORTFALL = _DEFAULTS.max_rate_shortfall

VERDICT_SCHEMA = "lsmbench.verdict/2"
CRITERIA: tuple[str, ...] = ("p99", "final_backlog", "backlog_growth", "stalls", "achieved_rate",
                             "window_coverage")
# The per-run verdicts: window_coverage does not fail a run, it makes it inconclusive. These
# words are the JSON's and every view's (ls, the report, the progress lines).
SUSTAINABLE = "sustainable"
NOT_SUSTAINABLE = "not-sustainable"
INCONCLUSIVE = "inconclusive"
# A reason that says why a run is inconclusive starts with this.
INCONCLUSIVE_PREFIX = "inconclusive: "
# The one criterion a sustainable verdict does without when it cannot be computed:
# window_coverage needs the engine's merge events, and an engine that tells none would
# otherwise never be sustainable -- the engine's property, not the run's.
MAY_GO_UNCHECKED: frozenset[str] = frozenset({"window_coverage"})


class RunningFigures(BaseModel):
    """What the verdict is computed from, extracted from one running phase's outputs."""

    utilization: float
    arrival_rate: float  # intended requests/s: writes/s (utilization x max throughput) / share
    # What the queue and the rates count: "writes" for a write-only mix, "requests" when the
    # mix also reads (its arrivals are every request).
    unit: str = "writes"
    # What the latency and stall figures are of: the writes, or every request for a mix
    # without writes (method/requests.py).
    latency_of: str = "writes"
    p99_write_latency_s: float | None  # from intended arrival: queueing + processing
    final_queue_length: float  # writes arrived but not yet started at the end
    achieved_rate: float | None = None
    offered_rate: float | None = None  # intended arrivals / window (exact); else arrival_rate
    window_start_s: float | None = None
    window_end_s: float | None = None
    max_queue_length: float | None = None
    queue_slope_per_s: float | None = None  # least-squares trend of the queue (informative)
    backlog_slope: Slope | None = None  # Theil-Sen over the second half, with its interval
    stalled_s: float | None = None  # metrics.stall_time: the engine's, else the interval rule
    window_s: float | None = None  # the measured window's length (regular intervals)
    stall: StallTime | None = None  # stalled_s with its source
    engine_stall_count: float | None = None
    engine_stall_s: float | None = None
    p50_write_latency_s: float | None = None
    p999_write_latency_s: float | None = None
    # Writes that arrived but had not completed when the phase ended: in the p99 at their wait
    # so far (lower bounds), so the p99 is a lower bound when there are any.
    censored_writes: float | None = None
    # The p99 had every censored write taken forever: the p99's upper bound (None: unbounded
    # or unknown). Equal to the p99 without censored writes.
    p99_upper_s: float | None = None
    source: str = ""


class Criterion(BaseModel):
    """One test of the verdict: passed (True), failed (False) or not computable (None)."""

    name: str
    ok: bool | None
    value: float | None = None
    limit: float | None = None
    reason: str


class Verdict(BaseModel):
    """A running phase's verdict: every criterion, which failed, and the numbers behind them.

    Stored as verdict.json and in point.json; records written before the criteria existed
    have only the fields up to ``reasons`` (readers take the others as absent)."""

    sustainable: bool
    utilization: float
    arrival_rate: float
    p99_write_latency_s: float | None
    p99_limit_s: float
    final_queue_length: float
    queue_limit: float  # max_backlog_s x arrival rate
    max_backlog_s: float
    achieved_rate: float | None
    window_start_s: float | None
    window_end_s: float | None
    queue_slope_per_s: float | None
    reasons: list[str] = Field(default_factory=list)
    schema_: str = Field(default=VERDICT_SCHEMA, alias="schema")
    failed: list[str] = Field(default_factory=list)  # names of the failed criteria
    criteria: list[Criterion] = Field(default_factory=list)
    offered_rate: float | None = None
    backlog_slope: Slope | None = None
    max_backlog_growth: float = DEFAULT_MAX_BACKLOG_GROWTH
    stalled_s: float | None = None  # metrics.stall_time over the window
    window_s: float | None = None
    # where stalled_s came from: "engine" (its stall accounting) or "intervals" (whole
    # intervals without a completed write); absent in records from before it existed
    stall_source: str | None = None
    max_stalled_fraction: float = DEFAULT_MAX_STALLED_FRACTION
    max_rate_shortfall: float = DEFAULT_MAX_RATE_SHORTFALL
    engine_stall_count: float | None = None
    engine_stall_s: float | None = None
    p50_write_latency_s: float | None = None
    p999_write_latency_s: float | None = None
    final_backlog_s: float | None = None  # final queue in seconds of arrivals
    # sustainable | not-sustainable | inconclusive (the window missed the deepest merge);
    # absent in records from before it existed (sustainable says it then).
    verdict: str | None = None
    coverage: dict[str, Any] | None = None  # cycles.Coverage of the running window

    model_config = ConfigDict(populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)

    def summary(self) -> str:
        word = self.verdict or (SUSTAINABLE if self.sustainable else NOT_SUSTAINABLE)
        failed = f" (failed: {', '.join(self.failed)})" if self.failed else ""
        return f"{word} at {self.utilization:g} x max{failed}: " + "; ".join(self.reasons)


def verdict_word(v: Mapping[str, Any]) -> str | None:
    """The verdict of a stored verdict (point.json, verdict.json): its ``verdict``, else, in
    records from before that field, what ``sustainable`` says; None without either."""
    word = v.get("verdict")
    if word in (SUSTAINABLE, NOT_SUSTAINABLE, INCONCLUSIVE):
        return str(word)
    s = v.get("sustainable")
    return (SUSTAINABLE if s else NOT_SUSTAINABLE) if isinstance(s, bool) else None


def not_computed(criteria: Iterable[Criterion | Mapping[str, Any]]) -> list[str]:
    """The names of the criteria that could not be computed (``ok`` None) and that a
    sustainable verdict needs: all but MAY_GO_UNCHECKED. Takes stored criteria too."""
    out = []
    for c in criteria:
        name, ok = (c.name, c.ok) if isinstance(c, Criterion) else (c.get("name"), c.get("ok"))
        if ok is None and name not in MAY_GO_UNCHECKED:
            out.append(str(name))
    return out


# Why a run was inconclusive when its record does not say: records from before the reasons
# said had the window's coverage as the only cause.
LEGACY_INCONCLUSIVE_CAUSE = "the window saw no merge into the deepest level"


# How an undecided running phase's reasons say the length it needed (adaptive.py writes it).
NEEDED_MARK = "a running phase would need "
_NEEDED = re.compile(r"(?:about|more than) ([0-9.]+) s")


def window_needed(reasons: Iterable[str]) -> tuple[float, str] | None:
    """The running phase's length a stored undecided run said it would need: (seconds, its
    words, e.g. 'about 187 s'), or None when its reasons do not say."""
    for r in reasons:
        if NEEDED_MARK in r:
            said = r.split(NEEDED_MARK, 1)[1].split(" (", 1)[0]
            m = _NEEDED.match(said)
            if m:
                return float(m.group(1)), said
    return None


def inconclusive_cause(reasons: Iterable[str]) -> str:
    """Why a stored inconclusive run is, from its reasons: the last that says."""
    said = [r.removeprefix(INCONCLUSIVE_PREFIX) for r in reasons
            if r.startswith(INCONCLUSIVE_PREFIX)]
    return said[-1] if said else LEGACY_INCONCLUSIVE_CAUSE


def fmt_seconds(v: float) -> str:
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.3g} s"


def _one(fig: RunningFigures) -> str:
    """'write', or 'request' when the latency figures are of every request."""
    return fig.latency_of[:-1]


def _p99_criterion(fig: RunningFigures, limit_s: float) -> Criterion:
    p99 = fig.p99_write_latency_s
    one = _one(fig)
    if p99 is None:
        return Criterion(name="p99", ok=False, limit=limit_s,
                         reason=f"no {one} completed in the measured window (p99 unknown)")
    censored = fig.censored_writes or 0
    if censored > 0:
        # The p99 counts unfinished writes at their wait so far: over the bound is certain,
        # under it only if the p99 stays under with those writes taken as never finishing.
        upper = fig.p99_upper_s
        unfinished = f"{plural(int(censored), one)} unfinished at the end"
        if p99 > limit_s:
            return Criterion(name="p99", ok=False, value=p99, limit=limit_s,
                             reason=f"p99 {one} latency at least {fmt_seconds(p99)} > "
                                    f"{fmt_seconds(limit_s)} ({unfinished} count at their "
                                    "wait so far)")
        if upper is None or upper > limit_s:
            bound = "unbounded" if upper is None else f"up to {fmt_seconds(upper)}"
            return Criterion(name="p99", ok=None, value=p99, limit=limit_s,
                             reason=f"p99 {one} latency between {fmt_seconds(p99)} and "
                                    f"{bound}: {unfinished} could put it over "
                                    f"{fmt_seconds(limit_s)}")
    ok = p99 <= limit_s
    return Criterion(name="p99", ok=ok, value=p99, limit=limit_s,
                     reason=f"p99 {one} latency {fmt_seconds(p99)} {'<=' if ok else '>'} "
                            f"{fmt_seconds(limit_s)}")


def _final_backlog_criterion(fig: RunningFigures, max_backlog_s: float) -> Criterion:
    limit = max_backlog_s * fig.arrival_rate
    q = fig.final_queue_length
    ok = q < limit or (limit == 0 and q == 0)
    u = fig.unit
    text = (f"final queue {q:.0f} {u} < {max_backlog_s:g} s of arrivals ({limit:.0f})" if ok
            else f"final queue {q:.0f} {u} >= {max_backlog_s:g} s of arrivals ({limit:.0f}): "
                 "the backlog grows")
    return Criterion(name="final_backlog", ok=ok, value=q, limit=limit, reason=text)


def _growth_criterion(fig: RunningFigures, max_growth: float) -> Criterion:
    s = fig.backlog_slope
    if s is None:
        return Criterion(name="backlog_growth", ok=None,
                         reason="backlog trend not computed (fewer than "
                                f"{MIN_SLOPE_POINTS} intervals in the second half)")
    rate = fig.offered_rate or fig.arrival_rate
    limit = max_growth * rate
    ok = s.ci_low <= limit
    u = fig.unit
    ci = f"{s.slope:+.3g} {u}/s (95 % CI {s.ci_low:+.3g} .. {s.ci_high:+.3g})"
    span = f"over {s.from_s:.3g}..{s.to_s:.3g} s"
    if ok:
        text = f"backlog trend {ci} {span}: no steady growth above {limit:.3g} {u}/s"
    else:
        text = (f"backlog grows steadily: {ci} {span}, above {limit:.3g} {u}/s "
                f"({max_growth:g} s of arrivals per second)")
    return Criterion(name="backlog_growth", ok=ok, value=s.ci_low, limit=limit, reason=text)


def _stall_criterion(fig: RunningFigures, max_fraction: float) -> Criterion:
    if fig.stalled_s is None or not fig.window_s:
        return Criterion(name="stalls", ok=None,
                         reason="stalled time not computed (no time series)")
    frac = fig.stalled_s / fig.window_s
    ok = frac <= max_fraction
    how = (fig.stall.describe() if fig.stall is not None
           else StallTime(fig.stalled_s, fig.window_s, STALL_INTERVALS).describe())
    text = (f"{fig.latency_of} stalled {fig.stalled_s:.3g} s of {fig.window_s:.3g} s ({frac:.1%}, "
            f"{'<=' if ok else '>'} {max_fraction:.1%}): {how}")
    return Criterion(name="stalls", ok=ok, value=frac, limit=max_fraction, reason=text)


def _rate_criterion(fig: RunningFigures, max_shortfall: float) -> Criterion:
    offered = fig.offered_rate or fig.arrival_rate
    if fig.achieved_rate is None or offered <= 0:
        return Criterion(name="achieved_rate", ok=None,
                         reason="achieved rate not computed")
    ratio = fig.achieved_rate / offered
    ok = ratio >= 1 - max_shortfall
    text = (f"achieved {fig.achieved_rate:.0f} of {offered:.0f} {fig.unit}/s offered "
            f"({ratio:.1%}, "
            f"{'>=' if ok else '<'} {1 - max_shortfall:.0%})")
    return Criterion(name="achieved_rate", ok=ok, value=ratio, limit=1 - max_shortfall,
                     reason=text)


def _coverage_criterion(coverage: Coverage | None) -> Criterion:
    if coverage is None:
        return Criterion(name="window_coverage", ok=None,
                         reason="merge cycle not checked (no merge events from the engine)")
    return Criterion(name="window_coverage", ok=coverage.complete,
                     value=float(coverage.merges_into_deepest), reason=coverage.reason)


def judge(fig: RunningFigures, p99_limit_s: float = DEFAULT_P99_LIMIT_S,
          max_backlog_s: float = DEFAULT_MAX_BACKLOG_S, *,
          max_backlog_growth: float = DEFAULT_MAX_BACKLOG_GROWTH,
          max_stalled_fraction: float = DEFAULT_MAX_STALLED_FRACTION,
          max_rate_shortfall: float = DEFAULT_MAX_RATE_SHORTFALL,
          coverage: Coverage | None = None) -> Verdict:
    """Sustainable iff every criterion passes:

    * p99 write latency <= p99_limit_s;
    * the final queue < max_backlog_s of arrivals;
    * the queue does not grow steadily over the second half of the window: the lower end of
      the 95 % interval of its Theil-Sen slope is at most max_backlog_growth x offered rate;
    * writes were stalled at most max_stalled_fraction of the window (metrics.stall_time:
      the engine's stall time, else whole intervals with no completed write while writes
      waited);
    * the achieved rate is at least (1 - max_rate_shortfall) x the offered rate.

    A run that fails none of them is *inconclusive*, not sustainable, when one of them could
    not be computed (a window too short for a backlog trend, no time series): what was not
    measured cannot support "sustainable"; or when its window saw no merge into the deepest
    level the testing phase reached (``coverage``, cycles.window_coverage): the largest merge,
    the one that stalls longest, may be ahead. A reason starting "inconclusive: " says which.
    """
    criteria = [
        _p99_criterion(fig, p99_limit_s),
        _final_backlog_criterion(fig, max_backlog_s),
        _growth_criterion(fig, max_backlog_growth),
        _stall_criterion(fig, max_stalled_fraction),
        _rate_criterion(fig, max_rate_shortfall),
        _coverage_criterion(coverage),
    ]
    failed = [c.name for c in criteria if c.ok is False and c.name != "window_coverage"]
    missing = not_computed(criteria)
    unsure = [f"{', '.join(missing)} not computed"] if missing else []
    if coverage is not None and not coverage.complete:
        # Not "no merge": a rule may need more than one (adaptive.judge_until_decided).
        unsure.append("too few merges into the deepest level in the window")
    reasons = [c.reason for c in criteria]
    if failed:
        verdict = NOT_SUSTAINABLE
    elif unsure:
        verdict = INCONCLUSIVE
        reasons.append(INCONCLUSIVE_PREFIX + " and ".join(unsure))
    else:
        verdict = SUSTAINABLE
    return Verdict(
        verdict=verdict,
        coverage=coverage.to_json() if coverage is not None else None,
        sustainable=verdict == SUSTAINABLE,
        utilization=fig.utilization,
        arrival_rate=fig.arrival_rate,
        p99_write_latency_s=fig.p99_write_latency_s,
        p99_limit_s=p99_limit_s,
        final_queue_length=fig.final_queue_length,
        queue_limit=max_backlog_s * fig.arrival_rate,
        max_backlog_s=max_backlog_s,
        achieved_rate=fig.achieved_rate,
        window_start_s=fig.window_start_s,
        window_end_s=fig.window_end_s,
        queue_slope_per_s=fig.queue_slope_per_s,
        reasons=reasons,
        failed=failed,
        criteria=criteria,
        offered_rate=fig.offered_rate,
        backlog_slope=fig.backlog_slope,
        max_backlog_growth=max_backlog_growth,
        stalled_s=fig.stalled_s,
        window_s=fig.window_s,
        stall_source=fig.stall.source if fig.stall is not None else (
            STALL_INTERVALS if fig.stalled_s is not None else None),
        max_stalled_fraction=max_stalled_fraction,
        max_rate_shortfall=max_rate_shortfall,
        engine_stall_count=fig.engine_stall_count,
        engine_stall_s=fig.engine_stall_s,
        p50_write_latency_s=fig.p50_write_latency_s,
        p999_write_latency_s=fig.p999_write_latency_s,
        final_backlog_s=(fig.final_queue_length / fig.arrival_rate
                         if fig.arrival_rate > 0 else None),
    )


def _queue_points(intervals: list[dict[str, Any]], from_s: float) -> tuple[list[float],
                                                                          list[float]]:
    """(interval end times, queue length at each end) of the intervals ending at or after
    from_s that report a queue."""
    ts, qs = [], []
    for iv in intervals:
        q = (iv.get("queue") or {}).get("length")
        if q is None:
            continue
        _, end = _span(iv)
        if end + 1e-6 >= from_s:
            ts.append(end)
            qs.append(float(q))
    return ts, qs


def queue_slope(intervals: list[dict[str, Any]], from_s: float = 0.0) -> float | None:
    """Least-squares slope (writes/s) of the queue length over time; None if < 2 points."""
    ts, qs = _queue_points(intervals, from_s)
    if len(ts) < 2 or max(ts) == min(ts):
        return None
    return float(scipy_stats.linregress(ts, qs).slope)


def second_half_backlog(intervals: list[dict[str, Any]], warmup_s: float = 0.0) -> Slope | None:
    """Theil-Sen trend of the queue, with its 95 % interval, over the second half of the
    measured window (the regular intervals after the warm-up): the first half is where a
    queue may still be settling; a trend that persists into the second half is growth."""
    measured = [iv for iv in intervals if not iv.get("drain") and _span(iv)[0] + 1e-6 >= warmup_s]
    if not measured:
        return None
    start, end = _span(measured[0])[0], _span(measured[-1])[1]
    ts, qs = _queue_points(measured, (start + end) / 2)
    return backlog_slope(ts, qs)


def window_stall(summary: Mapping[str, Any] | None, intervals: list[dict[str, Any]],
                 warmup_s: float = 0.0) -> StallTime | None:
    """The stall time the stall criterion judges: the summary's (metrics.stall_time, the
    figure every view shows), else, while the phase runs and there is no summary yet, the
    same engine figure from the intervals' snapshots, else the interval rule over the time
    series (an engine that keeps no stall time)."""
    stall = stall_time(summary)
    if stall is not None and stall.window_s:
        return stall
    stall = stall_time_of_intervals(intervals, warmup_s)
    if stall is not None:
        return stall
    rule = stalled_seconds(intervals, warmup_s)
    if rule is None:
        return None
    widths = [_span(iv)[1] - _span(iv)[0] for iv in intervals if not iv.get("drain")]
    return StallTime(rule[0], rule[1], STALL_INTERVALS,
                     resolution_s=max(widths) if widths else None)


def stalled_seconds(intervals: list[dict[str, Any]], warmup_s: float = 0.0
                    ) -> tuple[float, float] | None:
    """(seconds of the measured window in intervals where no write completed although writes
    were waiting, the window's length) over the regular intervals after the warm-up; None
    without intervals."""
    stalled = window = 0.0
    seen = False
    for iv in intervals:
        start, end = _span(iv)
        if iv.get("drain") or start + 1e-6 < warmup_s or end <= start:
            continue
        seen = True
        window += end - start
        queue = iv.get("queue") or {}
        waiting = max(float(queue.get("max") or 0), float(queue.get("length") or 0)) > 0
        if _writes(iv) == 0 and waiting:
            stalled += end - start
    return (stalled, window) if seen else None


def running_figures(
    utilization: float,
    arrival_rate: float,
    intervals: list[dict[str, Any]],
    summary: dict[str, Any] | None = None,
    histograms: dict[str, Any] | None = None,
    warmup_s: float = 0.0,
    unit: str = "writes",
    latency_of: str = "writes",
) -> RunningFigures:
    """Extracts the verdict's inputs, preferring the exact sources.

    p99: the write histogram of histograms.json, else summary.json's
    write_latency_us.p99, else the worst per-interval p99 of the time series.
    Final queue: summary.json's open_loop.final_queue_length, else the last
    interval's queue length.
    """
    summary = summary or {}
    p99 = None
    source = []
    latency = summary.get("write_latency_us") or {}
    censored = number(latency.get("censored"))
    p99_upper = None
    hist = _write_histogram(histograms) if histograms else None
    if hist is not None:
        buckets = hist.get("buckets") or []
        p99_ns = percentile_from_buckets(buckets, 0.99, hist.get("min"), hist.get("max"))
        if p99_ns is not None:
            p99 = p99_ns / 1e9
            source.append("p99 from histograms.json")
        total = float(hist.get("count") or 0)
        if censored and total > 0 and 0.99 + censored / total <= 1.0:
            # Taking the censored writes to infinity removes at most that many values from
            # under any latency: the p99 can rise at most to the quantile that many ranks up.
            upper_ns = percentile_from_buckets(buckets, 0.99 + censored / total,
                                               hist.get("min"), hist.get("max"))
            p99_upper = upper_ns / 1e9 if upper_ns is not None else None
    if p99 is None and (summary.get("write_latency_us") or {}).get("p99") is not None:
        p99 = float(summary["write_latency_us"]["p99"]) / 1e6
        source.append("p99 from summary.json")
    if p99 is None:
        p99 = p99_from_timeseries(intervals, warmup_s)
        if p99 is not None:
            source.append("p99 = an upper bound from the intervals' percentiles (timeseries)")
    open_loop = summary.get("open_loop") or {}
    final_q = open_loop.get("final_queue_length")
    regular = [iv for iv in intervals if not iv.get("drain")]
    if len(regular) < len(intervals) and regular and (regular[-1].get("queue") or {}).get(
            "length") is not None:
        # A drain ran after the arrivals ended: the backlog that counts is the one at the
        # end of the arrivals, not what is left after draining it.
        final_q = regular[-1]["queue"]["length"]
        source.append("final queue = last interval before the drain")
    elif final_q is None:
        qs = [(iv.get("queue") or {}).get("length") for iv in intervals]
        qs = [q for q in qs if q is not None]
        if not qs:
            raise VerdictError("no queue length in summary.json or the time series: "
                               "was this an open-loop (running) phase?")
        final_q = qs[-1]
        source.append("final queue from timeseries")
    else:
        source.append("final queue from summary.json")
    window = summary.get("window") or {}
    max_q = open_loop.get("max_queue_length")
    if max_q is None:
        qs = [(iv.get("queue") or {}).get("max") for iv in intervals]
        qs = [q for q in qs if q is not None]
        max_q = max(qs) if qs else None
    achieved = open_loop.get("achieved_rate")
    if achieved is None and intervals:
        try:
            achieved = (max_throughput(intervals, warmup_s).writes_per_s if unit == "writes"
                        else _requests_per_s(intervals, warmup_s))
        except VerdictError:
            achieved = None
    stalls = summary.get("stalls") or {}
    stall = window_stall(summary, intervals, warmup_s)
    engine_us = number(stalls.get("engine_stall_micros"))
    p50, p999 = number(latency.get("p50")), number(latency.get("p999"))
    return RunningFigures(
        utilization=utilization,
        arrival_rate=arrival_rate,
        unit=unit,
        latency_of=latency_of,
        p99_write_latency_s=p99,
        final_queue_length=float(final_q),
        achieved_rate=achieved,
        offered_rate=number(open_loop.get("intended_rate")),
        window_start_s=window.get("start_s", warmup_s),
        window_end_s=window.get("end_s"),
        max_queue_length=max_q,
        queue_slope_per_s=queue_slope(regular, warmup_s),
        backlog_slope=second_half_backlog(intervals, warmup_s),
        stalled_s=stall.seconds if stall is not None else None,
        window_s=stall.window_s if stall is not None else None,
        stall=stall,
        engine_stall_count=number(stalls.get("engine_stall_count")),
        engine_stall_s=engine_us / 1e6 if engine_us is not None else None,
        p50_write_latency_s=p50 / 1e6 if p50 is not None else None,
        p999_write_latency_s=p999 / 1e6 if p999 is not None else None,
        censored_writes=censored,
        p99_upper_s=p99_upper,
        source="; ".join(source),
    )


def _write_histogram(histograms: dict[str, Any]) -> dict[str, Any] | None:
    """The all-writes latency histogram (from intended arrival, ns) in histograms.json."""
    hs = histograms.get("histograms", histograms)
    h = hs.get("write_latency") if isinstance(hs, dict) else None
    if isinstance(h, dict) and "buckets" in h:
        return h
    return None
