"""The tracking history in the sink (InfluxDB), for the Grafana dashboard
dashboards/lsmbench-history.json: the rows of `track report`'s history.csv and the change points
of its regressions.json, as time-series points (lsmbench.sinks.SeriesPoint).

Measurements (names fixed: the dashboard reads them):

* ``lsmbench_history``: one point per history row, stamped with the run's date. Tags campaign,
  group, metric, testbed_key, spec_hash (few values each), and node for a run of a campaign on
  several nodes; fields median, ci_low, ci_high, n
  (floats, like every number the sink sends) and commit, run_id (strings: one value per run,
  so never tags).
* ``lsmbench_change_points``: one point per change point (improvements too), stamped with the
  date of the first run after the change. Tags campaign, group, metric, direction; fields
  text ("p99_write_latency_s +12.0% between abc1234..def5678"), change, before, after, p_value,
  id, commit_before, commit_after, why, nodes (those that saw it, comma-separated, for a
  campaign on several nodes), and acked (a boolean field, not a tag: acking a change
  then overwrites its point instead of adding a second series beside it).

Publishing is idempotent: the same tags and timestamp overwrite a point. Change points are the
detector's current view, and a later run can move or drop one, so the campaign's change points
are deleted before they are written again (Sink.delete_series; on InfluxDB's 2.x API, which
has no InfluxQL DELETE, they are only overwritten, and a moved change point stays).

The sending is the sink's (lsmbench.sinks, through its interface): the encoding, batching,
retries, credential handling and scrubbing.
"""

from __future__ import annotations

import csv
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..sinks import SeriesPoint, Sink
from .report import CSV_COLUMNS as HISTORY_COLUMNS
from .report import REGRESSIONS_SCHEMA

HISTORY_MEASUREMENT = "lsmbench_history"
CHANGES_MEASUREMENT = "lsmbench_change_points"


class ReportFileError(ValueError):
    """history.csv or regressions.json is missing or not what `track report` writes."""


class HistoryRow(BaseModel):
    """One row of history.csv: a group's metric in one run."""

    model_config = ConfigDict(extra="ignore")

    run_id: str
    campaign: str
    group: str
    metric: str
    commit: str = ""
    date: datetime
    testbed_key: str = ""
    spec_hash: str = ""
    median: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: float | None = None
    node: str = ""  # a run of a campaign on several nodes (history.csv has it since then)

    @field_validator("median", "ci_low", "ci_high", "n", mode="before")
    @classmethod
    def _empty_is_none(cls, v: Any) -> Any:
        return None if v in ("", None) else v


class RecordedChange(BaseModel):
    """One entry of regressions.json's `changes`."""

    model_config = ConfigDict(extra="ignore")

    id: str
    campaign: str
    group: str
    metric: str
    direction: Literal["regression", "improvement"]
    change: float
    before: float | None = None
    after: float | None = None
    index: int | None = None
    commit_before: str | None = None
    commit_after: str | None = None
    date: datetime
    p_value: float | None = None
    testbed_key: str | None = None
    spec_hash: str | None = None
    acked: bool = False
    why: str | None = None
    nodes: list[str] = []


class RegressionsFile(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    schema_: str = Field(alias="schema")
    generated: datetime | None = None
    open: list[RecordedChange] = []
    acked: list[RecordedChange] = []
    changes: list[RecordedChange] = []


def read_history_csv(path: Path) -> list[HistoryRow]:
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            # `node` came later: a history.csv without it is one of single-node runs.
            missing = set(HISTORY_COLUMNS) - {"node"} - set(reader.fieldnames or ())
            if missing:
                raise ReportFileError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
            return [HistoryRow.model_validate(row) for row in reader]
    except OSError as e:
        raise ReportFileError(f"{path}: {e.strerror}") from None
    except ValidationError as e:
        raise ReportFileError(f"{path}: {_first_error(e)}") from None


def read_regressions(path: Path) -> RegressionsFile:
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise ReportFileError(f"{path}: {e.strerror}") from None
    except ValueError as e:
        raise ReportFileError(f"{path}: not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("schema") != REGRESSIONS_SCHEMA:
        raise ReportFileError(f"{path}: expected schema {REGRESSIONS_SCHEMA!r}")
    try:
        return RegressionsFile.model_validate(data)
    except ValidationError as e:
        raise ReportFileError(f"{path}: {_first_error(e)}") from None


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(x) for x in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


def _ns(when: datetime) -> int:
    if when.tzinfo is None:  # the contract says ISO 8601; a date without a zone is UTC
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp()) * 1_000_000_000 + when.microsecond * 1000


def _float(v: float | None) -> float | None:
    return float(v) if v is not None and math.isfinite(v) else None


def short_commit(sha: str | None) -> str:
    return (sha or "?")[:7]


def change_text(c: RecordedChange) -> str:
    """The annotation's text: what moved, by how much, between which commits."""
    text = (f"{c.metric} {c.change * 100:+.1f}% between "
            f"{short_commit(c.commit_before)}..{short_commit(c.commit_after)}")
    if c.acked:
        text += f" (acked: {c.why})" if c.why else " (acked)"
    return text


def history_points(rows: list[HistoryRow]) -> list[SeriesPoint]:
    out = []
    for r in rows:
        tags = {"campaign": r.campaign, "group": r.group, "metric": r.metric,
                "testbed_key": r.testbed_key, "spec_hash": r.spec_hash}
        if r.node:  # each node's series its own (its testbed key differs too)
            tags["node"] = r.node
        fields = {"median": _float(r.median), "ci_low": _float(r.ci_low),
                  "ci_high": _float(r.ci_high), "n": _float(r.n), "commit": r.commit,
                  "run_id": r.run_id}
        out.append(SeriesPoint(HISTORY_MEASUREMENT, tags, fields, _ns(r.date)))
    return out


def change_points(changes: list[RecordedChange]) -> list[SeriesPoint]:
    out = []
    for c in changes:
        tags = {"campaign": c.campaign, "group": c.group, "metric": c.metric,
                "direction": c.direction}
        fields: dict[str, Any] = {
            "text": change_text(c), "change": _float(c.change), "before": _float(c.before),
            "after": _float(c.after), "p_value": _float(c.p_value), "id": c.id,
            "commit_before": c.commit_before, "commit_after": c.commit_after,
            "acked": c.acked, "why": c.why,
        }
        if c.nodes:
            fields["nodes"] = ", ".join(c.nodes)
        out.append(SeriesPoint(CHANGES_MEASUREMENT, tags, fields, _ns(c.date)))
    return out


class HistoryPublished(BaseModel):
    history_points: int
    change_points: int
    stale_deleted: bool


def publish_history(sink: Sink, report_dir: Path, campaigns: list[str]) -> HistoryPublished:
    """Writes report_dir's history.csv and regressions.json; `campaigns` are those the report
    covers, whose change points are replaced (not only overwritten). Raises ReportFileError for
    bad files, the sink's PublishError when it refuses."""
    rows = read_history_csv(report_dir / "history.csv")
    regressions = read_regressions(report_dir / "regressions.json")
    deleted = False
    for name in sorted(set(campaigns)):
        deleted = sink.delete_series(CHANGES_MEASUREMENT, {"campaign": name}) or deleted
    sent_history = sink.write_series(history_points(rows))
    sent_changes = sink.write_series(change_points(regressions.changes))
    return HistoryPublished(history_points=sent_history, change_points=sent_changes,
                            stale_deleted=deleted)
