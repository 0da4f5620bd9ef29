"""Adaptive phases: how long to measure, decided by the measurements (pure functions).

* **Steady-state testing** (``phases.testing.steady``; fio's ``steadystate``, the SNIA PTS
  rule): the testing phase is cut into rounds that each hold whole memtable cycles and at
  least one completed merge into the tree's deepest level, so every round's rate averages the
  merge cycle that shapes it; the window is the last N rounds after a ramp; the state is
  steady when the window's round rates span at most ``max_range`` of their mean and their
  least-squares line changes by at most ``max_slope`` of the mean across the window
  (:func:`steady_state`). The phase ends there; its maximum is the window's rate.
* **Running until decided** (``phases.running.until_decided``; Pebble's write benchmark fails
  a step at once and passes it only after a full period): a running phase ends as soon as a
  criterion of its verdict can no longer pass within the cap (fail fast), or once its window
  holds ``k`` completed merges into the deepest level with every criterion passing and a flat
  backlog (:func:`running_decision`). At the cap it is judged as it stands, and undecided is
  inconclusive with the length it would need.
* **Repetitions until decided** (``matrix.repetitions: {min, max}``): a group gets another
  repetition while its verdict is split, an interval straddles a bound, or one run alone
  judged it (:func:`group_undecided`).

The live side (:class:`SteadyMonitor`, :class:`RunningMonitor`) feeds the driver's intervals
as they come to these functions and asks the driver to end the phase when they say so
(testbeds.base.Monitor); the stored figures are recomputed from the whole series by the same
functions, so a stored decision never depends on when the monitor happened to look.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from scipy import stats as scipy_stats

from ..spec.models import SteadyState, UntilDecided, VerdictSpec
from . import verdict as vd
from .cycles import (
    Coverage,
    deepest_of,
    deepest_text,
    events,
    interval_writes,
    merges_into,
    phase_deepest_level,
    rewriting_merges,
    tree_deepest_level,
)

# ---------------------------------------------------------------- steady-state testing


@dataclass(frozen=True)
class Round:
    """One round of a testing phase: a span of whole memtable cycles (or of whole intervals
    when the engine does not tell its flushes)."""

    start_s: float
    end_s: float
    writes: float
    deepest_merges: int  # merges into the deepest level completed in the round
    level: int | None = None  # the deepest level known at the round's end, which it judged

    @property
    def writes_per_s(self) -> float:
        return self.writes / (self.end_s - self.start_s)

    def to_json(self) -> dict[str, Any]:
        return {"start_s": round(self.start_s, 3), "end_s": round(self.end_s, 3),
                "writes": self.writes, "writes_per_s": round(self.writes_per_s, 2),
                "deepest_merges": self.deepest_merges, "deepest_level": self.level}


def deepest_level(intervals: list[dict[str, Any]]) -> int | None:
    """The deepest level of the tree the phase started from (engine metrics), or a deeper one
    its merges recur into (cycles.phase_deepest_level); None without either. Merges into it
    are the largest the phase does, the ones that shape its rate. A tree deepens while its
    data grows (a tiered tree under inserts: a merge into level L + 1 every T^(L+1) flushes):
    the one merge that
    creates a level is not a cycle rounds or a running window could hold twice -- the range
    and slope criteria judge the rate around it -- and once a second merge lands there, the
    new level is the bar (rounds as long as its cycle, which the cap bounds)."""
    return phase_deepest_level(intervals)


def _boundaries(intervals: list[dict[str, Any]]) -> tuple[list[tuple[float, float]], bool]:
    """(time, writes since the previous boundary) at each possible round edge, and whether
    they are memtable sealings (True) or interval ends (False). Sealings make rounds of
    whole memtable cycles: a memtable's writes are exactly those between its predecessor's
    sealing and its own (cycles.flush_cycle_throughput)."""
    flushes = events(intervals, "flush")
    if flushes and all(e.get("sealed_s") is not None for e in flushes):
        sealed = sorted((float(e["sealed_s"]), float(e.get("entries", 0))) for e in flushes)
        return sealed, True
    out = []
    for iv in intervals:
        if iv.get("drain") or "t_end_s" not in iv:
            continue
        out.append((float(iv["t_end_s"]), interval_writes(iv)))
    return out, False


def testing_rounds(intervals: list[dict[str, Any]], rule: SteadyState) -> list[Round]:
    """The closed rounds after the ramp: each from one boundary to the first later one at
    least ``rule.round`` on that holds ``rule.deepest_merges`` completed merges into the
    deepest level (when the engine tells its merges; without merge events, time alone).

    A round's close depends only on what had happened by its end: the deepest level is the
    one known then (deepest_level of the merges completed by then), so a later deepening of
    the tree does not reopen rounds already closed. The rule is a stopping rule: what the
    live monitor found when it ended the phase, the whole stored series finds again."""
    edges, _ = _boundaries(intervals)
    start_edges = [t for t, _ in edges if t <= rule.ramp]
    if not edges:
        return []
    # The first round starts at the last edge at or before the ramp's end (as
    # flush_cycle_throughput does), else at the first edge after it.
    start = start_edges[-1] if start_edges else edges[0][0]
    need = rule.deepest_merges if _tells_merges(intervals) else 0  # none told: time alone
    level_at = _DeepestLevelAt(intervals)
    rounds: list[Round] = []
    writes = 0.0
    for t, w in edges:
        if t <= start:
            continue
        writes += w
        merges = level_at.merges_in(start, t)
        if t - start + 1e-9 >= rule.round and merges >= need:
            rounds.append(Round(start, t, writes, merges, level_at.level(t)))
            start, writes = t, 0.0
    return rounds


def _tells_merges(intervals: list[dict[str, Any]]) -> bool:
    """Whether the engine tells its merges: it counts them from the first interval on
    (engine metric ``merges``), or a merge event is in the series."""
    first = next((iv.get("engine") for iv in intervals if iv.get("engine")), None) or {}
    return "merges" in first or bool(events(intervals, "merge"))


class _DeepestLevelAt:
    """The merges into the deepest level as known at a time: phase_deepest_level of the
    merges completed by then (the tree's deepest level at the phase's start, or a deeper one
    two merges have landed in)."""

    def __init__(self, intervals: list[dict[str, Any]]) -> None:
        self.tree = tree_deepest_level(intervals)
        self.done = [(float(e.get("end_s", 0.0)), int(e.get("output_level", 0)))
                     for e in rewriting_merges(intervals)]
        candidates = {lv for _, lv in self.done} | ({self.tree} if self.tree is not None
                                                    else set())
        self.ends = {lv: [float(e.get("end_s", 0.0)) for e in merges_into(intervals, lv)]
                     for lv in candidates}

    def level(self, t: float) -> int | None:
        return deepest_of(self.tree, Counter(lv for end, lv in self.done if end <= t))

    def merges_in(self, start: float, t: float) -> int:
        level = self.level(t)
        ends = self.ends.get(level, []) if level is not None else []
        return bisect_right(ends, t) - bisect_right(ends, start)


@dataclass
class SteadyResult:
    """What the steady-state rule found in a testing phase (point.json: max_throughput.steady)."""

    attained: bool
    rounds: list[Round]
    window: tuple[int, int] | None  # [first, last + 1) of the window's rounds
    writes_per_s: float | None  # the window's rate: its writes over its length
    range_fraction: float | None  # (max - min) / mean of the window's round rates
    slope_fraction: float | None  # |least-squares change across the window| / mean
    reason: str
    rule: dict[str, Any] = field(default_factory=dict)

    @property
    def window_rounds(self) -> list[Round]:
        return self.rounds[self.window[0]:self.window[1]] if self.window else []

    @property
    def end_s(self) -> float | None:
        """When the window closed (the phase may end there)."""
        w = self.window_rounds
        return w[-1].end_s if w else None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["rounds"] = [r.to_json() for r in self.rounds]
        out["window"] = list(self.window) if self.window else None
        for k in ("writes_per_s", "range_fraction", "slope_fraction"):
            if out[k] is not None:
                out[k] = round(out[k], 6)
        return out


def window_figures(rounds: list[Round]) -> tuple[float, float, float]:
    """(rate, range fraction, slope fraction) of a window of rounds; the slope is fitted to
    the round rates against the round number (the SNIA rule), its change across the window
    taken over rounds - 1 steps."""
    rates = [r.writes_per_s for r in rounds]
    mean = sum(rates) / len(rates)
    rate = sum(r.writes for r in rounds) / sum(r.end_s - r.start_s for r in rounds)
    if mean <= 0:
        return rate, math.inf, math.inf
    spread = (max(rates) - min(rates)) / mean
    if len(rates) < 2:
        return rate, spread, 0.0  # one round: no line to fit (a window is >= 2 rounds)
    slope = float(scipy_stats.linregress(range(len(rates)), rates).slope)
    return rate, spread, abs(slope) * (len(rates) - 1) / mean


def one_depth(rounds: list[Round]) -> bool:
    """Whether the rounds all judged the same deepest level: a window must not straddle a
    change of the tree's depth, since the rate before it is a shallower tree's (the tree of a
    loaded store often deepens once under updates before its data settles in its last level)."""
    return len({r.level for r in rounds}) <= 1


def steady_state(intervals: list[dict[str, Any]], rule: SteadyState) -> SteadyResult:
    """The first window of ``rule.rounds`` consecutive rounds, all judging one deepest level,
    that meets both criteria; else (not attained) the last such window, or every round when
    there are fewer."""
    rounds = testing_rounds(intervals, rule)
    n = rule.rounds
    spec = rule.model_dump()
    for end in range(n, len(rounds) + 1):
        if not one_depth(rounds[end - n:end]):
            continue
        rate, spread, slope = window_figures(rounds[end - n:end])
        if spread <= rule.max_range and slope <= rule.max_slope:
            return SteadyResult(True, rounds, (end - n, end), rate, spread, slope,
                                f"steady after {end} rounds: the last {n} within "
                                f"{spread:.1%} (<= {rule.max_range:.0%}) of their mean, their "
                                f"line changing {slope:.1%} (<= {rule.max_slope:.0%})", spec)
    if not rounds:
        return SteadyResult(False, [], None, None, None, None,
                            "no round closed: " + _no_round_reason(intervals, rule), spec)
    first = max(0, len(rounds) - n)
    rate, spread, slope = window_figures(rounds[first:])
    if len(rounds) < n:
        why = (f"only {len(rounds)} of the {n} rounds the window needs closed before the cap "
               f"(a round: >= {rule.round:g} s and {rule.deepest_merges} merge(s) into the "
               f"deepest level)")
    else:
        bad = []
        if not one_depth(rounds[first:]):
            bad.append("the tree deepened within it (rounds judged levels "
                       + ", ".join(str(lv) for lv in dict.fromkeys(r.level for r in rounds[first:]))
                       + ")")
        if spread > rule.max_range:
            bad.append(f"range {spread:.1%} > {rule.max_range:.0%}")
        if slope > rule.max_slope:
            bad.append(f"slope {slope:.1%} > {rule.max_slope:.0%}")
        why = f"no window of {n} rounds was steady in {len(rounds)}; the last: {', '.join(bad)}"
    return SteadyResult(False, rounds, (first, len(rounds)), rate, spread, slope,
                        "not steady: " + why, spec)


def _no_round_reason(intervals: list[dict[str, Any]], rule: SteadyState) -> str:
    edges, sealings = _boundaries(intervals)
    if not edges:
        return "no interval or flush to count"
    return (f"no span of >= {rule.round:g} s after the {rule.ramp:g} s ramp held "
            f"{rule.deepest_merges} merge(s) into the deepest level"
            + ("" if sealings else " (the engine tells no flush: rounds of whole intervals)"))


MAXIMUM_STEADY = "steady"


def steady_maximum(intervals: list[dict[str, Any]], rule: SteadyState,
                   method: str = vd.DEFAULT_MAXIMUM) -> tuple[vd.MaxThroughput, SteadyResult]:
    """The testing maximum of a steady-state phase: the window's rate (``method`` "steady"),
    with the interval figures of the same span beside it; a phase in which no round closed
    falls back on the fixed-window maximum after the ramp (``method`` as the spec says), and
    its SteadyResult says it was not attained."""
    res = steady_state(intervals, rule)
    rounds = res.window_rounds
    if not rounds or res.writes_per_s is None:
        return vd.max_throughput_of_testing(intervals, rule.ramp, method), res
    start, end = rounds[0].start_s, rounds[-1].end_s
    try:
        base = vd.max_throughput(intervals, start, end_s=end)
    except vd.VerdictError:
        base = vd.max_throughput(intervals, rule.ramp)
    mt = replace(base, writes_per_s=res.writes_per_s, window_start_s=start, window_end_s=end,
                 writes=sum(r.writes for r in rounds), warmup_s=rule.ramp,
                 interval_writes_per_s=base.writes_per_s, method=MAXIMUM_STEADY)
    return mt, res


def rounds_needed_s(result: SteadyResult, rule: SteadyState) -> float | None:
    """About how long a testing phase would need for a steady window: the ramp and the
    window's rounds at the mean round length seen (None without a round)."""
    if not result.rounds:
        return None
    mean = sum(r.end_s - r.start_s for r in result.rounds) / len(result.rounds)
    return rule.ramp + (rule.rounds + 1) * mean


# ---------------------------------------------------------------- running until decided

CONTINUE = "continue"
PASS = "pass"
FAIL = "fail"


@dataclass
class Decision:
    """A running phase's state under the sequential rule at one moment."""

    state: str  # continue | pass | fail
    at_s: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "at_s": round(self.at_s, 3), "reason": self.reason}


def deepest_merges_completed(intervals: list[dict[str, Any]], level: int | None,
                             from_s: float) -> int:
    """Merges into ``level`` or deeper (cycles.merges_into: a one-level tree's major merges)
    completed at or after from_s."""
    return sum(1 for e in merges_into(intervals, level) if float(e.get("end_s", 0.0)) >= from_s)


def _over_limit_lower_bound(iv: dict[str, Any], limit_us: float) -> float:
    """A lower bound on the writes of one interval whose latency exceeded the limit, from its
    percentiles (more than half over when p50 is, and so on)."""
    lat = iv.get("write_latency_us") or {}
    n = float(lat.get("count") or 0)
    for q, share in (("p50", 0.5), ("p90", 0.1), ("p99", 0.01), ("p999", 0.001)):
        v = lat.get(q)
        if v is not None and float(v) > limit_us:
            return n * share
    return 0.0


def running_decision(intervals: list[dict[str, Any]], *, rule: UntilDecided,
                     bounds: VerdictSpec, offered_rate: float, cap_s: float,
                     warmup_s: float, deepest: int | None,
                     write_share: float = 1.0, latency_of: str = "writes") -> Decision:
    """Whether a running phase is decided by the intervals so far.

    Fail (certain): the stalled time (verdict.window_stall: the engine's, as the final verdict
    judges it) already exceeds max_stalled_fraction of the capped window;
    or the writes known to have waited longer than the p99 bound exceed 1 % of all the writes
    the capped window can hold. Either criterion then fails however the phase goes on.

    Pass: at least ``min_duration``, ``rule.deepest_merges`` completed merges into the deepest
    level in the window, and the verdict of the window so far (conservative: its p99 is an
    upper bound from the intervals' percentiles, verdict.p99_from_timeseries) passes every
    criterion with a flat backlog (the upper end of its trend's 95 % interval under the growth
    bound).

    ``latency_of``: "requests" for a mix without writes (method/requests.py), whose figures
    are its requests'.
    ``offered_rate`` counts requests; ``write_share`` is the mix's share of writes (1: the
    requests are writes), so the writes the window can hold are offered x share.
    """
    regular = [iv for iv in intervals if not iv.get("drain") and "t_end_s" in iv]
    if not regular:
        return Decision(CONTINUE, 0.0, "no interval yet")
    now = float(regular[-1]["t_end_s"])
    window_cap = max(cap_s - warmup_s, 1e-9)
    stall = vd.window_stall(None, regular, warmup_s)
    if stall is not None and stall.seconds > bounds.max_stalled_fraction * window_cap:
        return Decision(FAIL, now, f"{latency_of} stalled {stall.seconds:.3g} s, more than "
                                   f"{bounds.max_stalled_fraction:.1%} of the {window_cap:.0f} s "
                                   "capped window: the stalls criterion cannot pass")
    limit_us = bounds.p99_write_latency * 1e6
    over = sum(_over_limit_lower_bound(iv, limit_us) for iv in regular
               if float(iv["t_start_s"]) + 1e-6 >= warmup_s)
    most = offered_rate * write_share * window_cap
    if most > 0 and over > 0.01 * most:
        return Decision(FAIL, now, f"at least {over:,.0f} {latency_of} waited over the "
                                   f"{vd.fmt_seconds(bounds.p99_write_latency)} bound, more than "
                                   f"1 % of the {most:,.0f} the capped window can hold: the p99 "
                                   "criterion cannot pass")
    if now < warmup_s + rule.min_duration:
        return Decision(CONTINUE, now, f"under min_duration ({rule.min_duration:g} s)")
    merges = deepest_merges_completed(regular, deepest, warmup_s)
    if deepest is not None and merges < rule.deepest_merges:
        return Decision(CONTINUE, now, f"{merges} of {rule.deepest_merges} merges into "
                                       f"{deepest_text(deepest)} completed")
    # The criteria need no utilization: the offered rate is the arrival rate.
    fig = vd.running_figures(0.0, offered_rate, regular, None, None, warmup_s,
                             unit="writes" if write_share >= 1 and latency_of == "writes"
                             else "requests", latency_of=latency_of)
    v = judge_with_bounds(fig, bounds, None)
    # A criterion not computed yet is not passing: judge would call the run inconclusive.
    missing = vd.not_computed(v.criteria)
    failing = [c for c in v.criteria if c.ok is False or c.name in missing]
    if failing:
        return Decision(CONTINUE, now, "not yet: " + "; ".join(c.reason for c in failing))
    flat = flat_backlog(fig, bounds)
    if flat is not True:
        return Decision(CONTINUE, now, "backlog trend not yet flat: " + backlog_text(fig, bounds))
    what = (f"{merges} merges into {deepest_text(deepest)}" if deepest is not None
            else "no merge events (the engine tells none)")
    return Decision(PASS, now, f"decided: {what}, every criterion passing, flat backlog")


def judge_with_bounds(fig: vd.RunningFigures, bounds: VerdictSpec,
                      coverage: Coverage | None) -> vd.Verdict:
    """verdict.judge with a spec's verdict bounds."""
    return vd.judge(fig, bounds.p99_write_latency, bounds.max_backlog,
                    max_backlog_growth=bounds.max_backlog_growth,
                    max_stalled_fraction=bounds.max_stalled_fraction,
                    max_rate_shortfall=bounds.max_rate_shortfall, coverage=coverage)


def judge_until_decided(fig: vd.RunningFigures, intervals: list[dict[str, Any]],
                        coverage: Coverage | None, rule: UntilDecided, bounds: VerdictSpec,
                        cycle_s: float | None) -> vd.Verdict:
    """The verdict of a running phase that ran until decided (or to its cap): the usual
    criteria (verdict.judge), and sustainable only with ``rule.deepest_merges`` completed
    merges into the deepest level in the window and a flat backlog; a window that fails no
    criterion but has neither is inconclusive, with the length it would need."""
    start = fig.window_start_s or 0.0
    level = coverage.deepest_level if coverage is not None else deepest_level(intervals)
    merges = deepest_merges_completed(intervals, level, start)
    window = (fig.window_end_s or start) - start
    if coverage is not None:
        enough = merges >= rule.deepest_merges
        coverage = Coverage(
            enough, level, merges, coverage.largest_merge_bytes,
            f"{merges} completed merge(s) into {deepest_text(level)}, the deepest, in the "
            f"{window:.0f} s window ({rule.deepest_merges} needed)")
    v = judge_with_bounds(fig, bounds, coverage)
    if v.verdict == vd.INCONCLUSIVE and coverage is not None and not coverage.complete:
        needed = needed_length(coverage, rule, window, cycle_s)
        return v.model_copy(update={"reasons": [
            *v.reasons, f"{rule.deepest_merges} merges into {deepest_text(level)} needed; "
            f"{vd.NEEDED_MARK}{needed}"]})
    if v.verdict != vd.SUSTAINABLE:
        return v
    if flat_backlog(fig, bounds) is not True:
        return v.model_copy(update={
            "verdict": vd.INCONCLUSIVE, "sustainable": False,
            "reasons": [*v.reasons, vd.INCONCLUSIVE_PREFIX + "the backlog's trend is not flat: "
                        + backlog_text(fig, bounds)]})
    return v


# A flat backlog needs a trend over at least this many intervals (the second half of a 20 s
# window at 1 s intervals): Theil-Sen's interval over fewer moves with every new point.
MIN_FLAT_POINTS = 10


def flat_backlog(fig: Any, bounds: VerdictSpec) -> bool | None:
    """True when the upper end of the backlog trend's 95 % interval is at most the growth
    bound (over at least MIN_FLAT_POINTS intervals), False when its lower end is above it
    (growth), None in between or unknown."""
    s = fig.backlog_slope
    if s is None:
        return None
    limit = bounds.max_backlog_growth * (fig.offered_rate or fig.arrival_rate)
    if s.ci_low > limit:
        return False
    if s.ci_high <= limit and s.points >= MIN_FLAT_POINTS:
        return True
    return None


def backlog_text(fig: Any, bounds: VerdictSpec) -> str:
    s = fig.backlog_slope
    if s is None:
        return "too few intervals in the second half for a trend"
    if s.points < MIN_FLAT_POINTS:
        return (f"a trend over {s.points} intervals (the second half of the window); a flat "
                f"one needs {MIN_FLAT_POINTS}")
    limit = bounds.max_backlog_growth * (fig.offered_rate or fig.arrival_rate)
    u = getattr(fig, "unit", "writes")
    return (f"95 % interval {s.ci_low:+.3g}..{s.ci_high:+.3g} {u}/s straddles the "
            f"{limit:.3g} {u}/s bound")


def needed_length(coverage: Coverage | None, rule: UntilDecided, window_s: float,
                  cycle_s: float | None) -> str:
    """What a running phase that ended undecided would need, in words."""
    if coverage is None or coverage.deepest_level is None:
        return "no merge events to size it by"
    seen = coverage.merges_into_deepest
    if cycle_s:
        need = cycle_s * (rule.deepest_merges + 1)
        return (f"about {need:.0f} s ({rule.deepest_merges} merges into "
                f"{deepest_text(coverage.deepest_level)} at one per ~{cycle_s:.0f} s, and the "
                "phase's start)")
    if seen:
        per = window_s / seen
        return (f"about {per * (rule.deepest_merges + 1):.0f} s ({seen} merge(s) in "
                f"{window_s:.0f} s)")
    return (f"more than {window_s:.0f} s (no merge into "
            f"{deepest_text(coverage.deepest_level)} completed in it)")


# ---------------------------------------------------------------- the live monitors


class SteadyMonitor:
    """Ends a testing phase at steady state: testbeds.base.Monitor."""

    def __init__(self, rule: SteadyState) -> None:
        self.rule = rule
        self.intervals: list[dict[str, Any]] = []
        self.result: SteadyResult | None = None

    def __call__(self, fresh: list[dict[str, Any]]) -> bool:
        self.intervals.extend(fresh)
        self.result = steady_state(self.intervals, self.rule)
        return self.result.attained


class RunningMonitor:
    """Ends a running phase once decided (running_decision): testbeds.base.Monitor. Keeps
    every change of state with its reason (the phase's record: point.json, the report)."""

    def __init__(self, rule: UntilDecided, bounds: VerdictSpec, offered_rate: float,
                 cap_s: float, warmup_s: float, deepest: int | None,
                 write_share: float = 1.0, latency_of: str = "writes") -> None:
        self.args = dict(rule=rule, bounds=bounds, offered_rate=offered_rate, cap_s=cap_s,
                         warmup_s=warmup_s, write_share=write_share, latency_of=latency_of)
        self.deepest = deepest
        # A mix without writes merges nothing: the window waits for no merge.
        self.merges = latency_of == "writes"
        self.intervals: list[dict[str, Any]] = []
        self.log: list[Decision] = []

    def __call__(self, fresh: list[dict[str, Any]]) -> bool:
        self.intervals.extend(fresh)
        # The testing phase's deepest level, or the running phase's own when deeper.
        levels = [x for x in (self.deepest, deepest_level(self.intervals)) if x is not None]
        deepest = max(levels) if levels and self.merges else None
        d = running_decision(self.intervals, deepest=deepest, **self.args)
        if not self.log or self.log[-1].state != d.state or _kind(self.log[-1]) != _kind(d):
            self.log.append(d)
        return d.state != CONTINUE


def _kind(d: Decision) -> str:
    """A decision's reason without its numbers: a new log entry only when it changes."""
    return "".join(ch for ch in d.reason if not ch.isdigit())[:40]


# ---------------------------------------------------------------- repetitions


def repetitions_help(group: Any) -> bool:
    """Whether another repetition can decide an undecided group: not when every judged
    repetition was itself inconclusive -- a running window too short for the deepest merges
    or for a criterion (a backlog trend needs intervals), which the next one at the same cap
    will be too (a longer cap is what it needs, and each repetition's reasons say how long)."""
    judged = [r for r in group.agree.items() if r[1]]
    return not (judged and all(k == "inconclusive" for k, _ in judged))


SINGLE_RUN = "one judged run: no interval, the verdict rests on a single repetition"


def group_undecided(group: Any) -> str | None:
    """Why a group (groups.Group) needs another repetition, or None: its verdict is
    inconclusive (the repetitions disagree, or one was inconclusive), an interval of its
    figures straddles a verdict bound, or one run alone judged it (no interval: asked for
    up to more repetitions, a group of one run is never decided)."""
    if group.verdict == "inconclusive":
        return "; ".join(group.reasons[:2]) or "inconclusive"
    straddle = [r for r in group.reasons if "straddles" in r]
    if straddle:
        return straddle[0]
    if sum(group.agree.values()) == 1:
        return SINGLE_RUN
    return None
