"""`lsmbench track report`: the history's change points, ``history.html``, ``regressions.json``
and ``history.csv``; exit 4 while a regression is open.

Per series (campaign, group, metric) the runs are cut into *segments* wherever the spec hash
or the testbed key changes; the detector (``lsmbench.track.detect``) runs on each segment's
medians alone, so a new kernel or a longer running phase is a boundary, never a change point.
A change point is a *regression* when it moves the metric the wrong way (``Metric.better``).

A regression is **open** until it is acknowledged (``track ack``), or the series recovers
(its latest median is back within half the change of the level before), or its segment
ended (a later spec or testbed change: nothing after it is comparable, the report says so).
An acknowledgement matches the change it was given for even when later nights move the
detected index by a night or two (the same series, direction, and a run within
``ACK_SLACK`` runs).
"""

from __future__ import annotations

import argparse
import base64
import csv
import io
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..store import write_bytes_atomic
from .history import (
    METRIC_BY_NAME,
    METRICS,
    Ack,
    History,
    HistoryError,
    RunRecord,
    Value,
    canonical_hash,
    history_path,
    open_history,
)

REGRESSIONS_SCHEMA = "lsmbench.regressions/1"
HTML_FILE = "history.html"
JSON_FILE = "regressions.json"
CSV_FILE = "history.csv"
CSV_COLUMNS = ("run_id", "campaign", "group", "metric", "commit", "date", "testbed_key",
               "spec_hash", "median", "ci_low", "ci_high", "n")
ACK_SLACK = 2  # runs: how far a re-detected change may move and keep its acknowledgement

Direction = Literal["regression", "improvement"]
Status = Literal["open", "acked", "recovered", "segment-ended", "improvement"]


class Change(BaseModel):
    """One change point of one series, as regressions.json and the report show it."""

    id: str
    campaign: str
    group: str
    metric: str
    direction: Direction
    change: float  # (after - before) / |before|, signed
    before: float
    after: float
    index: int  # in its segment: the first run of the new level
    run_id: int  # that run
    commit_before: str | None  # the last run before the change
    commit_after: str | None  # the first run after it
    date: str  # of the first run after
    p_value: float | None
    testbed_key: str
    spec_hash: str
    acked: bool = False
    why: str | None = None
    status: Status = "open"
    # reported on an earlier night and kept: this night's detector no longer reports it (the
    # newest nights' window moved past it), and the nights since it do not reject it
    held: bool = False


@dataclass
class Point:
    run: RunRecord
    value: Value


@dataclass
class Segment:
    """A stretch of one series with one spec hash and one testbed key."""

    campaign: str
    group: str
    metric: str
    spec_hash: str
    testbed_key: str
    points: list[Point]
    note: str | None = None  # why no detection ran (too few runs), or None
    noise: float | None = None  # the detector's measure of the segment's run-to-run noise


@dataclass
class Series:
    campaign: str
    group: str
    metric: str
    segments: list[Segment]


@dataclass
class Analysis:
    series: list[Series]
    changes: list[Change]

    @property
    def open(self) -> list[Change]:
        return [c for c in self.changes if c.status == "open"]

    @property
    def acked(self) -> list[Change]:
        return [c for c in self.changes if c.acked]


def _segments(campaign: str, group: str, metric: str, points: list[Point]) -> list[Segment]:
    out: list[Segment] = []
    for p in points:
        key = (p.run.spec_hash, p.run.testbed_key)
        if not out or (out[-1].spec_hash, out[-1].testbed_key) != key:
            out.append(Segment(campaign, group, metric, key[0], key[1], []))
        out[-1].points.append(p)
    return out


def build_series(history: History, campaign: str | None = None) -> list[Series]:
    runs = {r.run_id: r for r in history.runs(campaign)}
    by_key: dict[tuple[str, str, str], list[Point]] = {}
    for v in history.values(campaign):
        if v.median is None or v.metric not in METRIC_BY_NAME:
            continue
        by_key.setdefault((runs[v.run_id].campaign, v.group, v.metric), []).append(
            Point(runs[v.run_id], v))
    order = {m.name: i for i, m in enumerate(METRICS)}
    out = []
    for (camp, group, metric), pts in sorted(by_key.items(),
                                             key=lambda kv: (kv[0][0], kv[0][1],
                                                             order[kv[0][2]])):
        pts.sort(key=lambda p: (p.run.finished, p.run.run_id))
        out.append(Series(camp, group, metric, _segments(camp, group, metric, pts)))
    return out


def change_id(seg: Segment, direction: str, run_id: int) -> str:
    return "c-" + canonical_hash([seg.campaign, seg.group, seg.metric, direction,
                                  seg.spec_hash, seg.testbed_key, run_id])


def _matching_ack(acks: Sequence[Ack], seg: Segment, direction: str, index: int) -> Ack | None:
    position = {p.run.run_id: i for i, p in enumerate(seg.points)}
    for a in acks:
        if (a.campaign, a.group, a.metric, a.direction) != (seg.campaign, seg.group,
                                                            seg.metric, direction):
            continue
        at = position.get(a.run_id)
        if at is not None and abs(at - index) <= ACK_SLACK:
            return a
    return None


def _status(direction: str, before: float, after: float, latest: float, last_segment: bool,
            acked: bool) -> Status:
    if direction == "improvement":
        return "improvement"
    if acked:
        return "acked"
    if not last_segment:
        return "segment-ended"
    # Recovered: the latest level is back within half the change of the level before.
    if abs(latest - before) <= abs(after - before) / 2:
        return "recovered"
    return "open"


def detect_segment(seg: Segment, last_segment: bool, acks: Sequence[Ack],
                   rho: float | None = None, held_runs: Sequence[int] = ()) -> list[Change]:
    """The segment's change points. ``rho``: its testbed's autocorrelation
    (:func:`testbed_autocorrelation`); ``held_runs``: the first runs of the changes the last
    report gave for this segment, reported again unless the nights since reject them."""
    from .detect import detect, noise

    values = [p.value.median for p in seg.points]
    position = {p.run.run_id: i for i, p in enumerate(seg.points)}
    held = [position[r] for r in held_runs if r in position]
    try:
        seg.noise = noise(values)
        found = detect(values, rho=rho, held=held)
        fresh = {cp.index for cp in detect(values, rho=rho)} if held else None
    except ValueError as e:  # too few runs, or a series the detector cannot use
        seg.note = str(e)
        return []
    better = METRIC_BY_NAME[seg.metric].better
    out = []
    latest = values[-1]
    for cp in found:
        worse = cp.after < cp.before if better == "higher" else cp.after > cp.before
        direction: Direction = "regression" if worse else "improvement"
        first = seg.points[cp.index]
        prev = seg.points[cp.index - 1] if cp.index > 0 else None
        ack = _matching_ack(acks, seg, direction, cp.index)
        out.append(Change(
            id=change_id(seg, direction, first.run.run_id),
            campaign=seg.campaign, group=seg.group, metric=seg.metric, direction=direction,
            change=cp.change, before=cp.before, after=cp.after, index=cp.index,
            run_id=first.run.run_id,
            commit_before=prev.run.commit if prev else None, commit_after=first.run.commit,
            date=first.run.date, p_value=cp.p_value, testbed_key=seg.testbed_key,
            spec_hash=seg.spec_hash, acked=ack is not None, why=ack.why if ack else None,
            status=_status(direction, cp.before, cp.after, latest, last_segment,
                           ack is not None),
            held=fresh is not None and cp.index not in fresh,
        ))
    return out


def testbed_autocorrelation(series: Sequence[Series]) -> dict[str, float | None]:
    """Per testbed key, the lag-1 autocorrelation of its nights pooled over every segment of
    every series (campaign, group, metric) measured on it
    (:func:`lsmbench.track.detect.pooled_autocorrelation`): one series' 10-40 nights give
    its own +-0.2, and a machine that stays slow for a few nights does so for all its
    series. None for a testbed none of whose segments is long enough."""
    from .detect import autocorrelation, pooled_autocorrelation

    parts: dict[str, list] = {}
    for s in series:
        for seg in s.segments:
            values = [p.value.median for p in seg.points]
            try:
                own = autocorrelation(values)
            except ValueError:  # too few runs
                own = None
            parts.setdefault(seg.testbed_key, []).append(own)
    return {key: pooled_autocorrelation(p) for key, p in parts.items()}


def find_changes(history: History, campaign: str | None = None) -> Analysis:
    """Every segment's change points: the detector at its testbed's autocorrelation (pooled
    over all the history's series on that testbed, whatever the campaign), with the changes
    the last report gave kept (``History.held_changes``)."""
    series = build_series(history, campaign)
    rho = testbed_autocorrelation(series if campaign is None else build_series(history))
    acks = history.acks()
    changes: list[Change] = []
    for s in series:
        for i, seg in enumerate(s.segments):
            held = history.held_changes(*_segment_key(seg))
            changes.extend(detect_segment(seg, i == len(s.segments) - 1, acks,
                                          rho.get(seg.testbed_key), held))
    return Analysis(series, changes)


def _segment_key(seg: Segment) -> tuple[str, str, str, str, str]:
    return seg.campaign, seg.group, seg.metric, seg.spec_hash, seg.testbed_key


def keep_reported(history: History, analysis: Analysis) -> None:
    """Remember, per segment, the changes this report gives (their first runs), so that the
    next report keeps them until the nights since reject them (:func:`detect_segment`)."""
    for s in analysis.series:
        for seg in s.segments:
            key = _segment_key(seg)
            history.set_held_changes(*key, sorted({
                c.run_id for c in analysis.changes
                if (c.campaign, c.group, c.metric, c.spec_hash, c.testbed_key) == key}))


# ---------------------------------------------------------------- outputs


def regressions_json(analysis: Analysis, history: Path, generated: str) -> dict[str, Any]:
    return {
        "schema": REGRESSIONS_SCHEMA,
        "generated": generated,
        "history": str(history),
        "open": [c.model_dump() for c in analysis.open],
        "acked": [c.model_dump() for c in analysis.acked],
        "changes": [c.model_dump() for c in analysis.changes],
    }


def history_csv(history: History, campaign: str | None = None) -> str:
    runs = {r.run_id: r for r in history.runs(campaign)}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    rows = sorted(history.values(campaign),
                  key=lambda v: (runs[v.run_id].finished, v.run_id, v.group, v.metric))
    for v in rows:
        r = runs[v.run_id]
        w.writerow([v.run_id, r.campaign, v.group, v.metric, r.commit or "", r.date,
                    r.testbed_key, r.spec_hash, _num(v.median), _num(v.ci_low),
                    _num(v.ci_high), v.n])
    return buf.getvalue()


def _num(v: float | None) -> str:
    return "" if v is None else repr(float(v))


def _write_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode())


@dataclass
class TrackReportFiles:
    html: Path
    json: Path
    csv: Path


def write_track_report(history: History, out_dir: Path, campaign: str | None = None,
                       ) -> tuple[Analysis, TrackReportFiles]:
    """The three files, each replaced atomically; the JSON last, so that a reader that polls
    for it finds the HTML and CSV of the same analysis."""
    import time

    from .figures import series_figure
    from .render import render_history

    analysis = find_changes(history, campaign)
    keep_reported(history, analysis)
    generated = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    figures = {}
    for s in analysis.series:
        png = series_figure(s, [c for c in analysis.changes
                                if (c.campaign, c.group, c.metric) ==
                                (s.campaign, s.group, s.metric)])
        figures[(s.campaign, s.group, s.metric)] = (
            "data:image/png;base64," + base64.b64encode(png).decode("ascii"))
    html = render_history(analysis, history, figures, generated, campaign)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = TrackReportFiles(out_dir / HTML_FILE, out_dir / JSON_FILE, out_dir / CSV_FILE)
    _write_atomic(files.csv, history_csv(history, campaign))
    _write_atomic(files.html, html)
    _write_atomic(files.json, json.dumps(regressions_json(analysis, history.path, generated),
                                         indent=2) + "\n")
    return analysis, files


def cmd_report(args: argparse.Namespace) -> int:
    from ..cli import EXIT_OK, EXIT_USAGE
    from ..outputs import OutputError, check_writable, record_written, resolve_out
    from .cli import EXIT_REGRESSION

    path = history_path(args)
    try:
        with open_history(path, create=False) as h:
            if args.campaign is not None and args.campaign not in h.campaigns():
                known = ", ".join(h.campaigns()) or "none"
                raise HistoryError(f"{path}: no run of campaign {args.campaign!r} "
                                   f"(campaigns: {known})")
            out, owned = resolve_out(args.out, path.parent)
            check_writable(out, "track report", [HTML_FILE, JSON_FILE, CSV_FILE], owned=owned)
            analysis, files = write_track_report(h, out, args.campaign)
            record_written(out, "track report", [files.html, files.json, files.csv])
    except (HistoryError, OutputError) as e:
        print(f"lsmbench track report: {e}", file=sys.stderr)
        return EXIT_USAGE
    opened = analysis.open
    if args.json:
        print(json.dumps({"html": str(files.html), "regressions": str(files.json),
                          "csv": str(files.csv), "open": [c.model_dump() for c in opened]},
                         indent=2))
    elif not args.quiet:
        for c in opened:
            print(f"REGRESSION {c.id}: {c.campaign} {c.group} {c.metric} {c.change:+.1%} "
                  f"({_short(c.commit_before)}..{_short(c.commit_after)}, {c.date})")
        print(f"{len(opened)} open regression(s), {len(analysis.changes)} change point(s); "
              f"{files.html}")
    return EXIT_REGRESSION if opened else EXIT_OK


def _short(commit: str | None) -> str:
    return commit[:10] if commit else "?"
