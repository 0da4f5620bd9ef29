"""Reading one campaign of the results store: point.json, spec.json, fingerprint.json and each
phase's driver outputs, as the store holds them (store.py describes the layout).

The one reader of a campaign's files: the tables of :mod:`lsmbench.results` and the HTML
report (:mod:`lsmbench.report.load`) are both built on :func:`read_campaign`. Read-only and
tolerant of partial points: a failed point may lack phases, a phase may lack histograms.json,
and a damaged point becomes an ``unreadable`` point rather than hiding the others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..driverio import read_timeseries
from ..method.groups import error_text
from ..points import phase_name, phase_utilization
from ..store import CAMPAIGN_FILE, POINT_FILE, STATE_COMPLETE
from ..workload_shape.record import read_shape, stored_shape


class ResultsError(ValueError):
    """The input cannot be read as a campaign (not a campaign, unreadable files); the message
    names the path."""


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ResultsError(f"{path}: unreadable JSON ({e})") from e
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: expected a JSON object")
    return data


@dataclass
class StoredPhase:
    """One phase directory of a point: load, testing, running or running@U."""

    name: str
    intervals: list[dict[str, Any]]
    summary: dict[str, Any] | None
    histograms: dict[str, Any] | None
    shape_file: dict[str, Any] | None = None  # workload_shape.json, when the phase has one

    @cached_property
    def shape(self) -> dict[str, Any]:
        """What the phase's workload sent (workload_shape.record): its workload_shape.json,
        else the parts its driver outputs hold (the op mix completed, the rate over time)."""
        if self.shape_file is not None:
            return self.shape_file
        return stored_shape(self.name, self.kind, self.summary, self.intervals)

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
    # A record of another schema, or unreadable, is read as none: the phase stays readable.
    return StoredPhase(d.name, intervals, summary, _read_json(d / "histograms.json"),
                       read_shape(d))


def read_point(d: Path) -> StoredPoint:
    record = _read_json(d / POINT_FILE)
    if record is None:
        raise ResultsError(f"{d}: no {POINT_FILE}")
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
        raise ResultsError(f"{target}: not a campaign directory: no {CAMPAIGN_FILE} and no point "
                          f"directories{hint}")
    named = results_root / str(target)
    if "/" not in str(target) and named.is_dir():
        return resolve_campaign_dir(named, results_root)
    raise ResultsError(f"{target}: no such campaign directory (nor a campaign named so in "
                      f"{results_root})")


def read_campaign(d: Path) -> Campaign:
    meta = _read_json(d / CAMPAIGN_FILE) or {}
    points = []
    for p in sorted(d.iterdir()):
        if p.is_dir() and not p.name.startswith(".") and (p / POINT_FILE).is_file():
            try:
                points.append(read_point(p))
            except ResultsError as e:  # one damaged point must not hide the others
                points.append(StoredPoint(p.name, p, {"state": "unreadable", "error": {
                    "stage": "report", "message": str(e)}}, None, None))
    if not points and not meta:
        raise ResultsError(f"{d}: not a campaign directory (no {CAMPAIGN_FILE}, no points)")
    points.sort(key=lambda p: (p.record.get("index", 1 << 30), p.id))
    name = str(meta.get("campaign") or (meta.get("spec") or {}).get("name") or d.name)
    return Campaign(name, d, meta, points)
