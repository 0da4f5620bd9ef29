"""What a report shows of one campaign: the table's numbers and the groups of repetitions.

The store is read by :mod:`lsmbench.results` (the same reader the exported tables are built
on); this module re-exports its types, since the figures work on the stored points and phases
as read. Tolerant of partial points: a failed point may lack phases, a phase may lack
histograms.json (the report then falls back to the summary's percentiles). The numbers of the
summary table are defined in one place, :func:`point_row`, so the tests can state what each
cell means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..method.groups import Group, Repetition, group_repetitions, make_repetition
from ..method.metrics import stall_time, write_amplification
from ..method.requests import REQUESTS, requests_summary
from ..method.stats import Estimate, median_ci
from ..method.verdict import verdict_word
from ..results.reading import (
    Campaign,
    ResultsError,
    StoredPhase,
    StoredPoint,
    read_campaign,
    read_point,
    resolve_campaign_dir,
)
from ..store import STATE_COMPLETE
from ..util.values import number as _num

# The input cannot be reported on because it cannot be read: one error for both.
ReportError = ResultsError

__all__ = [
    "Campaign", "GroupRow", "ReportError", "Row", "SearchRow", "StoredPhase", "StoredPoint",
    "component_counts", "group_rows", "interval_components", "measured_intervals", "point_row",
    "read_campaign", "read_point",
    "resolve_campaign_dir", "search_rows",
]


# ---------------------------------------------------------------- the summary table


@dataclass
class Row:
    """One point's line of the summary table; None where the store has no number."""

    point: str
    params: dict[str, Any]
    state: str
    error: str | None
    max_write_throughput: float | None  # writes/s, testing phase, warm-up excluded
    write_p50_ms: float | None  # running phase (the verdict's), from intended arrival
    write_p99_ms: float | None
    write_p999_ms: float | None
    proc_p50_ms: float | None  # running phase, processing only
    proc_p99_ms: float | None
    proc_p999_ms: float | None
    stall_count: float | None  # engine stalls in the running window
    stall_s: float | None  # metrics.stall_time of the running window
    # metrics.write_amplification of the running window: (flushed + merged) / user bytes
    write_amplification: float | None
    avg_components: float | None  # disk components over the running phase's intervals
    max_components: float | None
    sustainable: bool | None
    # sustainable | not-sustainable | inconclusive: the JSON's word, the one every view shows
    verdict: str | None
    utilization: float | None
    verdict_reasons: list[str]
    running_phase: str | None
    # phases.running.search: the highest sustainable utilization and its rate (writes/s)
    max_sustainable_rate: float | None = None
    max_sustainable_utilization: float | None = None
    search: dict[str, Any] | None = None  # point.json search (steps, bracket, summary)

    def values(self) -> dict[str, float | None]:
        return {k: getattr(self, k) for k in NUMERIC_COLUMNS}


NUMERIC_COLUMNS: tuple[str, ...] = (
    "max_write_throughput", "max_sustainable_rate", "write_p50_ms", "write_p99_ms",
    "write_p999_ms", "proc_p50_ms", "proc_p99_ms", "proc_p999_ms", "stall_count", "stall_s",
    "write_amplification", "avg_components", "max_components",
)


def _ms(us: Any) -> float | None:
    v = _num(us)
    return v / 1000.0 if v is not None else None


def measured_intervals(phase: StoredPhase) -> list[dict[str, Any]]:
    """The phase's measured intervals (all regular ones if none is marked measured)."""
    ivs = phase.regular_intervals()
    return [iv for iv in ivs if iv.get("measured")] or ivs


def interval_components(intervals: list[dict[str, Any]]) -> list[float]:
    """engine.disk_components of these intervals (those that report it)."""
    out = []
    for iv in intervals:
        v = _num((iv.get("engine") or {}).get("disk_components"))
        if v is not None:
            out.append(v)
    return out


def component_counts(phase: StoredPhase) -> list[float]:
    """engine.disk_components of the phase's measured intervals."""
    return interval_components(measured_intervals(phase))


def point_row(pt: StoredPoint) -> Row:
    mt = pt.record.get("max_throughput") or {}
    run = pt.running
    v = pt.verdict or {}

    # A mix without writes: its latencies are its requests' (method/requests.py), as in its
    # verdict and in `ls`.
    summary = run.summary if run else None
    if mt.get("unit") == REQUESTS:
        summary = requests_summary(summary)

    def lat(name: str, q: str) -> float | None:
        value = ((summary or {}).get(name) or {}).get(q)
        return _ms(value) if run else None

    comps = component_counts(run) if run else []
    stall = stall_time(run.summary) if run else None
    wa = write_amplification(run.summary) if run else None
    return Row(
        point=pt.id,
        params=pt.params,
        state=pt.state,
        error=pt.error,
        max_write_throughput=_num(mt.get("writes_per_s")),
        write_p50_ms=lat("write_latency_us", "p50"),
        write_p99_ms=lat("write_latency_us", "p99"),
        write_p999_ms=lat("write_latency_us", "p999"),
        proc_p50_ms=lat("write_processing_latency_us", "p50"),
        proc_p99_ms=lat("write_processing_latency_us", "p99"),
        proc_p999_ms=lat("write_processing_latency_us", "p999"),
        stall_count=stall.count if stall is not None else None,
        stall_s=stall.seconds if stall is not None else None,
        write_amplification=wa.value if wa is not None else None,
        avg_components=sum(comps) / len(comps) if comps else None,
        max_components=max(comps) if comps else None,
        sustainable=v.get("sustainable") if isinstance(v.get("sustainable"), bool) else None,
        verdict=verdict_word(v),
        utilization=_num(v.get("utilization")),
        verdict_reasons=[str(r) for r in v.get("reasons") or []],
        running_phase=run.name if run else None,
        max_sustainable_rate=_num((pt.search or {}).get("rate")),
        max_sustainable_utilization=_num((pt.search or {}).get("utilization")),
        search=pt.search,
    )


@dataclass
class SearchRow:
    """One point's search for the maximum sustainable rate, as the report's table shows it."""

    point: str
    rate: float | None  # writes/s; None: not even low was sustainable
    utilization: float | None
    bracket_low: float | None  # highest sustainable utilization
    bracket_high: float | None  # lowest one not judged sustainable
    upper_verdict: str | None  # not-sustainable, or inconclusive
    steps: int
    max_steps: int | None
    stopped: str
    summary: str


def search_rows(rows: list[Row]) -> list[SearchRow]:
    out = []
    for r in rows:
        s = r.search
        if s is None:
            continue
        bracket = s.get("bracket") if isinstance(s.get("bracket"), dict) else {}
        steps = s.get("steps") if isinstance(s.get("steps"), list) else []
        max_steps = s.get("max_steps")
        out.append(SearchRow(
            point=r.point, rate=r.max_sustainable_rate, utilization=r.max_sustainable_utilization,
            bracket_low=_num(bracket.get("sustainable")),
            bracket_high=_num(bracket.get("unsustainable")),
            upper_verdict=str(bracket["unsustainable_verdict"])
            if bracket.get("unsustainable_verdict") else None,
            steps=len(steps), max_steps=max_steps if isinstance(max_steps, int) else None,
            stopped=str(s.get("stopped") or ""), summary=str(s.get("summary") or "")))
    return out


# ---------------------------------------------------------------- groups of repetitions


@dataclass
class GroupRow:
    """One group's line: its verdict (lsmbench.method.groups), and per numeric column of the table
    the median and confidence interval over its complete repetitions' values."""

    group: Group
    estimates: dict[str, Estimate]
    rows: list[Row]  # its repetitions' lines, in rep order

    @property
    def id(self) -> str:
        return self.group.group


def stored_repetition(p: StoredPoint) -> Repetition:
    """A stored point as lsmbench.method.groups sees a repetition (its headline running summary)."""
    return make_repetition(p.id, p.record, p.running.summary if p.running else None)


def group_rows(points: list[StoredPoint]) -> list[GroupRow]:
    reps = [stored_repetition(p) for p in points]
    rows = {p.id: point_row(p) for p in points}
    out = []
    for g in group_repetitions(reps):
        members = [rows[pid] for pid in g.points]
        done = [r for r in members if r.state == STATE_COMPLETE]
        estimates = {k: median_ci([getattr(r, k) for r in done]) for k in NUMERIC_COLUMNS}
        out.append(GroupRow(g, estimates, members))
    return out
