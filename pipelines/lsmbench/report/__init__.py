"""`lsmbench report`: a campaign of the results store as one self-contained HTML file (figures
embedded) and a Markdown summary. Modules by role: load (the store -> points and the table's
numbers), plotting (the plotting toolkit, which other packages draw with too), series (stored
points as plotted series), figures, datasets, merges, papers (the figures; catalog: all of them
in order), tuning (the Tuning section of a study), compare (two campaigns side by side), render
(Jinja2 templates in reports/templates/, atomic output). docs/reports.md describes the report."""

from __future__ import annotations

from pathlib import Path

from .compare import compare
from .load import ReportError, read_campaign, resolve_campaign_dir
from .render import ReportFiles, write_report
from .series import DEFAULT_WINDOW_S

REPORT_DIR = "report"

__all__ = ["DEFAULT_WINDOW_S", "REPORT_DIR", "ReportError", "ReportFiles", "build_report"]


def build_report(target: Path, results_root: Path, *, compare_with: Path | None = None,
                 out_dir: Path | None = None, window_s: float = DEFAULT_WINDOW_S) -> ReportFiles:
    """Reads the campaign at target (a directory, or a campaign name in results_root), renders
    it into out_dir (default: <campaign>/report/). Raises ReportError on bad input."""
    camp_dir = resolve_campaign_dir(target, results_root)
    campaign = read_campaign(camp_dir)
    comparison = None
    if compare_with is not None:
        other = read_campaign(resolve_campaign_dir(compare_with, results_root))
        comparison = compare(campaign, other)
    return write_report(campaign, out_dir or camp_dir / REPORT_DIR, comparison, window_s)
