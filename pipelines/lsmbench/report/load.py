"""Reading one campaign of the results store into what a report shows.

Everything here is read-only and tolerant of partial points: a failed point may
lack phases, a phase may lack histograms.json (the report then falls back to
the summary's percentiles). The numbers of the summary table are defined in
one place, :func:`point_row`, so the tests can state what each cell means.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..driverio import read_timeseries
from ..groups import Group, error_text, group_repetitions, make_repetition
from ..points import phase_name, phase_utilization
from ..stats import Estimate, median_ci
from ..store import CAMPAIGN_FILE, POINT_FILE, STATE_COMPLETE
from ..values import number as _num


class ReportError(ValueError):
    """The input cannot be reported on (not a campaign, unreadable files)."""


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ReportError(f"{path}: unreadable JSON ({e})") from e
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object")
    return data


@dataclass
class StoredPhase:
    """One phase directory of a point: load, testing, running or running@U."""

    name: str
    intervals: list[dict[str, Any]]
    summary: dict[str, Any] | None
    histograms: dict[str, Any] | None

    @property
    def kind(self) -> str:
        return phase_name(self.name)

    @property
    def utilization(self) -> float | None:
        return phase_utilization(self.name)

    def regular_intervals(self) -> list[dict[str, Any]]:
        """The intervals without the drain after the arrivals ended."""
        return [iv for iv in self.intervals if not iv.get("drain")]

    def summary_get(self, *path: str) -> Any:
        cur: Any = self.summary or {}
        for key in path:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(key)
        return cur


@dataclass
class StoredPoint:
    """A point as the store holds it: point.json, spec.json, fingerprint and phase data."""

    id: str
    path: Path
    record: dict[str, Any]
    spec: dict[str, Any] | None
    fingerprint: dict[str, Any] | None
    phases: dict[str, StoredPhase] = field(default_factory=dict)

    @property
    def state(self) -> str:
        return str(self.record.get("state") or "unknown")

    @property
    def ok(self) -> bool:
        return self.state == STATE_COMPLETE

    @property
    def params(self) -> dict[str, Any]:
        p = self.record.get("params")
        return dict(p) if isinstance(p, dict) else {}

    @property
    def error(self) -> str | None:
        return error_text(self.record)

    @property
    def verdict(self) -> dict[str, Any] | None:
        v = self.record.get("verdict")
        return v if isinstance(v, dict) else None

    @property
    def search(self) -> dict[str, Any] | None:
        """point.json ``search`` (phases.running.search), if the point searched."""
        s = self.record.get("search")
        return s if isinstance(s, dict) else None

    @property
    def verdicts(self) -> list[dict[str, Any]]:
        return [v for v in self.record.get("verdicts") or [] if isinstance(v, dict)]

    @property
    def testing(self) -> StoredPhase | None:
        return self.phases.get("testing")

    @property
    def running(self) -> StoredPhase | None:
        """The running phase the point's verdict refers to (the headline of a sweep)."""
        v = self.verdict
        if v and isinstance(v.get("phase"), str) and v["phase"] in self.phases:
            return self.phases[v["phase"]]
        if "running" in self.phases:
            return self.phases["running"]
        runs = [p for p in self.phases.values() if p.kind == "running"]
        return max(runs, key=lambda p: p.utilization or 0.0) if runs else None


@dataclass
class Campaign:
    name: str
    path: Path
    meta: dict[str, Any]
    points: list[StoredPoint]

    @property
    def spec(self) -> dict[str, Any]:
        s = self.meta.get("spec")
        return s if isinstance(s, dict) else {}

    @property
    def description(self) -> str:
        return str(self.spec.get("description") or "")

    def point(self, point_id: str) -> StoredPoint | None:
        for p in self.points:
            if p.id == point_id:
                return p
        return None


def _read_phase(d: Path) -> StoredPhase | None:
    summary = _read_json(d / "summary.json")
    intervals = read_timeseries(d / "timeseries.jsonl")
    if summary is None and not intervals:
        return None
    return StoredPhase(d.name, intervals, summary, _read_json(d / "histograms.json"))


def read_point(d: Path) -> StoredPoint:
    record = _read_json(d / POINT_FILE)
    if record is None:
        raise ReportError(f"{d}: no {POINT_FILE}")
    pt = StoredPoint(str(record.get("point") or d.name), d, record, _read_json(d / "spec.json"),
               _read_json(d / "fingerprint.json"))
    for sub in sorted(p for p in d.iterdir() if p.is_dir()):
        ph = _read_phase(sub)
        if ph is not None:
            pt.phases[ph.name] = ph
    return pt


def resolve_campaign_dir(target: Path, results_root: Path) -> Path:
    """RESULTS on the command line: a campaign directory, or a campaign's name in the store."""
    if target.is_dir():
        if (target / CAMPAIGN_FILE).is_file() or any(
            (p / POINT_FILE).is_file() for p in target.iterdir() if p.is_dir()
        ):
            return target
        names = sorted(p.name for p in target.iterdir()
                       if p.is_dir() and (p / CAMPAIGN_FILE).is_file())
        hint = f" (campaigns in it: {', '.join(names)})" if names else ""
        raise ReportError(f"{target}: not a campaign directory: no {CAMPAIGN_FILE} and no point "
                          f"directories{hint}")
    named = results_root / str(target)
    if "/" not in str(target) and named.is_dir():
        return resolve_campaign_dir(named, results_root)
    raise ReportError(f"{target}: no such campaign directory (nor a campaign named so in "
                      f"{results_root})")


def read_campaign(d: Path) -> Campaign:
    meta = _read_json(d / CAMPAIGN_FILE) or {}
    points = []
    for p in sorted(d.iterdir()):
        if p.is_dir() and not p.name.startswith(".") and (p / POINT_FILE).is_file():
            try:
                points.append(read_point(p))
            except ReportError as e:  # one damaged point must not hide the others
                points.append(StoredPoint(p.name, p, {"state": "unreadable", "error": {
                    "stage": "report", "message": str(e)}}, None, None))
    if not points and not meta:
        raise ReportError(f"{d}: not a campaign directory (no {CAMPAIGN_FILE}, no points)")
    points.sort(key=lambda p: (p.record.get("index", 1 << 30), p.id))
    name = str(meta.get("campaign") or (meta.get("spec") or {}).get("name") or d.name)
    return Campaign(name, d, meta, points)


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
    stall_s: float | None
    write_amplification: float | None  # engine's (flushed + merged) / user bytes at the end
    avg_components: float | None  # disk components over the running phase's intervals
    max_components: float | None
    sustainable: bool | None
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


def component_counts(phase: StoredPhase) -> list[float]:
    """engine.disk_components of the phase's measured intervals (all regular ones if none is
    marked measured)."""
    ivs = phase.regular_intervals()
    measured = [iv for iv in ivs if iv.get("measured")]
    out = []
    for iv in measured or ivs:
        v = _num((iv.get("engine") or {}).get("disk_components"))
        if v is not None:
            out.append(v)
    return out


def point_row(pt: StoredPoint) -> Row:
    mt = pt.record.get("max_throughput") or {}
    run = pt.running
    v = pt.verdict or {}

    def lat(name: str, q: str) -> float | None:
        return _ms(run.summary_get(name, q)) if run else None

    comps = component_counts(run) if run else []
    stall_us = _num(run.summary_get("stalls", "engine_stall_micros")) if run else None
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
        stall_count=_num(run.summary_get("stalls", "engine_stall_count")) if run else None,
        stall_s=stall_us / 1e6 if stall_us is not None else None,
        write_amplification=_num(run.summary_get("engine_metrics", "end", "write_amplification"))
        if run else None,
        avg_components=sum(comps) / len(comps) if comps else None,
        max_components=max(comps) if comps else None,
        sustainable=v.get("sustainable") if isinstance(v.get("sustainable"), bool) else None,
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
    """One group's line: its verdict (lsmbench.groups), and per numeric column of the table the
    median and confidence interval over its complete repetitions' values."""

    group: Group
    estimates: dict[str, Estimate]
    rows: list[Row]  # its repetitions' lines, in rep order

    @property
    def id(self) -> str:
        return self.group.group


def group_rows(points: list[StoredPoint]) -> list[GroupRow]:
    reps = [make_repetition(p.id, p.record, p.running.summary if p.running else None)
            for p in points]
    rows = {p.id: point_row(p) for p in points}
    out = []
    for g in group_repetitions(reps):
        members = [rows[pid] for pid in g.points]
        done = [r for r in members if r.state == STATE_COMPLETE]
        estimates = {k: median_ci([getattr(r, k) for r in done]) for k in NUMERIC_COLUMNS}
        out.append(GroupRow(g, estimates, members))
    return out
