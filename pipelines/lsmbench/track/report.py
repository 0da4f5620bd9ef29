"""`lsmbench track report`: the history's change points (:mod:`.changes`) as ``history.html``,
``regressions.json`` and ``history.csv``; exit 4 while a regression is open."""

from __future__ import annotations

import argparse
import base64
import csv
import io
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..outputs import OutputError, check_writable, record_written, resolve_out
from ..store import write_bytes_atomic
from ..util.exits import EXIT_OK, EXIT_REGRESSION, EXIT_USAGE
from .changes import Analysis, find_changes, keep_reported
from .history import History, HistoryError, history_path, open_history

REGRESSIONS_SCHEMA = "lsmbench.regressions/1"
HTML_FILE = "history.html"
JSON_FILE = "regressions.json"
CSV_FILE = "history.csv"
# node: the run's node when its campaign ran on several (one run per node), else empty.
CSV_COLUMNS = ("run_id", "campaign", "group", "metric", "commit", "date", "testbed_key",
               "spec_hash", "median", "ci_low", "ci_high", "n", "node")
# The paired nights' ratios (candidate / reference, header only without a paired run): the
# series the paired detector judges, with the reference each night was measured against.
PAIRED_CSV_FILE = "history-paired.csv"
# ci_low/ci_high: the night's own pairs' interval, as recorded; testbed_ci_low/high: the same
# pairs with the testbed's spread pooled over the series' nights so far (the page's, and what
# the detector judges a night alone with).
PAIRED_CSV_COLUMNS = ("run_id", "campaign", "group", "metric", "commit", "reference_commit",
                      "date", "ratio", "ci_low", "ci_high", "testbed_ci_low",
                      "testbed_ci_high", "pairs", "reference_median", "candidate_median",
                      "node")


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


def _tidy_csv(history: History, campaign: str | None, columns: Sequence[str],
              values: Sequence[Any], row: Callable[[Any, Any], list[Any]]) -> str:
    """One row per value (`row(its run, it)`), in the order the runs finished."""
    runs = {r.run_id: r for r in history.runs(campaign)}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for v in sorted(values, key=lambda v: (runs[v.run_id].finished, v.run_id, v.group,
                                           v.metric)):
        w.writerow(row(runs[v.run_id], v))
    return buf.getvalue()


def history_csv(history: History, campaign: str | None = None) -> str:
    return _tidy_csv(history, campaign, CSV_COLUMNS, history.values(campaign), lambda r, v: [
        v.run_id, r.campaign, v.group, v.metric, r.commit or "", r.date, r.testbed_key,
        r.spec_hash, _num(v.median), _num(v.ci_low), _num(v.ci_high), v.n, r.node or ""])


def paired_csv(history: History, analysis: Analysis, campaign: str | None = None) -> str:
    judged = {(n.value.run_id, n.value.group, n.value.metric): n
              for nights in analysis.paired.values() for n in nights}

    def testbed(v: Any) -> list[str]:
        n = judged.get((v.run_id, v.group, v.metric))
        return ["", ""] if n is None else [_num(n.night_low), _num(n.night_high)]

    return _tidy_csv(history, campaign, PAIRED_CSV_COLUMNS, history.paired_values(campaign),
                     lambda r, v: [
        v.run_id, r.campaign, v.group, v.metric, r.commit or "", v.reference_commit or "",
        r.date, _num(v.ratio), _num(v.ci_low), _num(v.ci_high), *testbed(v), v.n,
        _num(v.reference_median), _num(v.candidate_median), r.node or ""])


def _num(v: float | None) -> str:
    return "" if v is None else repr(float(v))


def _write_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode())


@dataclass
class TrackReportFiles:
    html: Path
    json: Path
    csv: Path
    paired_csv: Path

    @property
    def all(self) -> list[Path]:
        return [self.html, self.json, self.csv, self.paired_csv]


def write_track_report(history: History, out_dir: Path, campaign: str | None = None,
                       ) -> tuple[Analysis, TrackReportFiles]:
    """The three files, each replaced atomically; the JSON last, so that a reader that polls
    for it finds the HTML and CSV of the same analysis."""
    # matplotlib and Jinja2 only when a report is written: influx_history reads this module's
    # file formats on nights that publish.
    from .figures import nodes_figure, series_figure
    from .render import panel_series, render_history

    analysis = find_changes(history, campaign)
    keep_reported(history, analysis)
    generated = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    figures = {}
    for key, series in panel_series(analysis).items():
        # Each series' own change points (a node's, labelled with it), not the merged ones.
        changes = [c for c in analysis.series_changes
                   if (c.campaign, c.group, c.metric) == key]
        png = (series_figure(series[0], changes) if len(series) == 1
               else nodes_figure(series, changes))
        figures[key] = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    html = render_history(analysis, history, figures, generated, campaign)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = TrackReportFiles(out_dir / HTML_FILE, out_dir / JSON_FILE, out_dir / CSV_FILE,
                             out_dir / PAIRED_CSV_FILE)
    _write_atomic(files.csv, history_csv(history, campaign))
    _write_atomic(files.paired_csv, paired_csv(history, analysis, campaign))
    _write_atomic(files.html, html)
    _write_atomic(files.json, json.dumps(regressions_json(analysis, history.path, generated),
                                         indent=2) + "\n")
    return analysis, files


def cmd_report(args: argparse.Namespace) -> int:
    path = history_path(args)
    try:
        with open_history(path, create=False) as h:
            if args.campaign is not None and args.campaign not in h.campaigns():
                known = ", ".join(h.campaigns()) or "none"
                raise HistoryError(f"{path}: no run of campaign {args.campaign!r} "
                                   f"(campaigns: {known})")
            out, owned = resolve_out(args.out, path.parent)
            check_writable(out, "track report",
                           [HTML_FILE, JSON_FILE, CSV_FILE, PAIRED_CSV_FILE], owned=owned)
            analysis, files = write_track_report(h, out, args.campaign)
            record_written(out, "track report", files.all)
    except (HistoryError, OutputError) as e:
        print(f"lsmbench track report: {e}", file=sys.stderr)
        return EXIT_USAGE
    opened = analysis.open
    if args.json:
        print(json.dumps({"html": str(files.html), "regressions": str(files.json),
                          "csv": str(files.csv), "paired_csv": str(files.paired_csv),
                          "open": [c.model_dump() for c in opened]},
                         indent=2))
    else:
        from ..util.terminal import final, make_console, say, terminal_width

        width = terminal_width()
        console = make_console(width)
        for c in [] if args.quiet else opened:  # --quiet: the final line alone
            nodes = f" on {len(c.nodes)} node(s): {', '.join(c.nodes)}" if c.nodes else ""
            say(console, f"REGRESSION {c.id}: {c.campaign} {c.group} {c.metric} "
                         f"{c.change:+.1%} ({_short(c.commit_before)}.."
                         f"{_short(c.commit_after)}, {c.date}){nodes}", width)
        final(console, f"{len(opened)} open regression(s), {len(analysis.changes)} change "
                       f"point(s); {files.html}", width, args.quiet)
    return EXIT_REGRESSION if opened else EXIT_OK


def _short(commit: str | None) -> str:
    return commit[:10] if commit else "?"
