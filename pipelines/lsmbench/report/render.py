"""Rendering a campaign (and optionally a comparison) through the Jinja2 templates.

The HTML template runs with autoescape on: every value that comes from a spec,
a point or a fingerprint is text, never markup. The Markdown template escapes
through ``finalize`` (every ``{{ }}`` passes through :func:`md_escape`), so a
value cannot open an HTML tag or break a table row of a CI comment either.
Templates only format; they call no code that takes input.
"""

from __future__ import annotations

import base64
import math
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from .. import __version__
from ..method.groups import agreement_text, interval_text
from ..method.stats import Estimate
from ..util.paths import project_root
from ..util.wording import plural
from .catalog import all_figures
from .compare import COMPARED, Comparison
from .load import Campaign, Row, group_rows, point_row, search_rows
from .plotting import Figure
from .predicted import predicted_rows
from .series import DEFAULT_WINDOW_S
from .tuning import tune_section
from .workload import RATE_FIGURE, workload_rows

HTML_TEMPLATE = "report.html.j2"
MD_TEMPLATE = "summary.md.j2"
HTML_FILE = "report.html"
MD_FILE = "summary.md"
FIGURES_DIR = "figures"
# Written into every report directory: the one mark that lets a later report replace it.
MARKER_FILE = ".lsmbench-report"
NONE = "\u2013"  # an en dash where the store has no number


def templates_dir() -> Path:
    return project_root() / "reports" / "templates"


@dataclass(frozen=True)
class Column:
    key: str
    heading: str
    unit: str
    digits: int  # significant digits shown; the exact value is in data-value


COLUMNS: tuple[Column, ...] = (
    Column("max_write_throughput", "max throughput", "writes/s", 0),
    Column("max_sustainable_rate", "max sustainable rate", "writes/s", 0),
    Column("write_p50_ms", "write p50", "ms", 3),
    Column("write_p99_ms", "write p99", "ms", 3),
    Column("write_p999_ms", "write p99.9", "ms", 3),
    Column("proc_p50_ms", "processing p50", "ms", 3),
    Column("proc_p99_ms", "processing p99", "ms", 3),
    Column("proc_p999_ms", "processing p99.9", "ms", 3),
    Column("stall_count", "stalls", "count", 0),
    Column("stall_s", "stall time", "s", 3),
    Column("write_amplification", "write amp. (window)", "x", 3),
    Column("avg_components", "avg components", "count", 3),
    Column("max_components", "max components", "count", 0),
)


def fmt(v: Any, digits: int = 3) -> str:
    """A number for people: thousands separators for counts, significant digits otherwise."""
    if v is None:
        return NONE
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not isinstance(v, int | float) or not math.isfinite(v):
        return str(v)
    if digits == 0 or abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def raw(v: Any) -> str:
    """The exact value of a cell, for sorting and for machines (repr round-trips floats)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    return repr(float(v)) if isinstance(v, int | float) else str(v)


def interval(e: Estimate, digits: int = 3) -> str:
    """An estimate's interval for people: '1,100\u20131,300', the confidence added when under
    95 %; '' without one."""
    if not e.has_interval:
        return ""
    return interval_text(e, lambda v: fmt(v, digits))


def agreement(agree: dict[str, int]) -> str:
    """A group's repetitions by their own verdicts, inconclusive ones counted."""
    return agreement_text(agree, none=NONE)


def ratio_text(v: float | None) -> str:
    return NONE if v is None else f"{v:.3g}x"


def md_escape(value: Any) -> Any:
    """Escapes a value for Markdown tables and CI comments (HTML is allowed there)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                .replace("|", "\\|").replace("`", "\\`").replace("\r", " ").replace("\n", " "))
    return value


def _environment(markdown: bool) -> Environment:
    loader = FileSystemLoader(str(templates_dir()))
    if markdown:
        env = Environment(loader=loader, autoescape=False, finalize=md_escape,
                          undefined=StrictUndefined, keep_trailing_newline=True)
    else:
        env = Environment(loader=loader, autoescape=select_autoescape(
            enabled_extensions=("html", "j2"), default_for_string=True, default=True),
            undefined=StrictUndefined)
    env.filters["fmt"] = fmt
    env.filters["raw"] = raw
    env.filters["ratio"] = ratio_text
    env.filters["interval"] = interval
    env.filters["agreement"] = agreement
    env.filters["plural"] = plural  # {{ n | plural("point") }}: '1 point', '2 points'
    return env


def markdown_environment() -> Environment:
    """The Jinja2 environment of the Markdown templates (reports/templates/*.md.j2)."""
    return _environment(markdown=True)


def html_environment() -> Environment:
    """The Jinja2 environment of the HTML templates (reports/templates/*.html.j2): autoescape
    on, the report's number filters."""
    return _environment(markdown=False)


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = obj
    return out


def fingerprint_context(campaign: Campaign) -> dict[str, Any]:
    """What all points share, and per point what differs (disk paths differ by design)."""
    flat = {p.id: _flatten(p.fingerprint) for p in campaign.points if p.fingerprint}
    if not flat:
        return {"common": [], "differing": [], "varying": []}
    keys = sorted({k for f in flat.values() for k in f})
    common, varying = [], []
    for k in keys:
        values = {repr(f.get(k)) for f in flat.values()}
        if len(values) == 1:
            common.append((k, next(iter(flat.values())).get(k)))
        else:
            varying.append(k)
    differing = [(pid, [f.get(k) for k in varying]) for pid, f in flat.items()]
    return {"common": common, "differing": differing, "varying": varying}


def _yaml(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=True,
                          width=100)


def context(campaign: Campaign, figures: list[Figure], comparison: Comparison | None,
            window_s: float, html_name: str = HTML_FILE) -> dict[str, Any]:
    rows: list[Row] = [point_row(p) for p in campaign.points]
    searched = any(r.search is not None for r in rows)  # its column only then
    groups = group_rows(campaign.points)
    plan = campaign.meta.get("plan") if isinstance(campaign.meta.get("plan"), dict) else None
    runs = campaign.meta.get("runs") or []
    return {
        "campaign": campaign,
        "name": campaign.name,
        "description": campaign.description,
        "path": str(campaign.path),
        "generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "version": __version__,
        "rows": rows,
        "groups": groups,
        "repeated": any(len(g.rows) > 1 for g in groups),
        "columns": [c for c in COLUMNS if c.key != "max_sustainable_rate" or searched],
        "searches": search_rows(rows),
        "predicted": predicted_rows(rows, plan),
        "param_keys": sorted({k for r in rows for k in r.params}),
        "failed": [r for r in rows if r.state != "complete"],
        "complete": sum(1 for r in rows if r.state == "complete"),
        "figures": [_figure(f) for f in figures if f.id != RATE_FIGURE],
        # The Workload section: what each group's workload sent, and its rate figure.
        "workload": workload_rows(groups, campaign.points),
        "workload_figure": next((_figure(f) for f in figures if f.id == RATE_FIGURE), None),
        "window_s": window_s,
        "spec_yaml": _yaml(campaign.spec) if campaign.spec else "",
        "plan_yaml": _yaml(plan) if plan else "",
        "last_run": runs[-1] if runs and isinstance(runs[-1], dict) else None,
        "point_specs": [(p.id, _yaml(p.spec)) for p in campaign.points if p.spec],
        "fingerprint": fingerprint_context(campaign),
        "comparison": comparison,
        "compared": COMPARED,
        "html_name": html_name,
        "tune": None,  # write_report: lsmbench tune's study (tuning.TuneSection)
    }


def _figure(f: Figure) -> dict[str, str]:
    return {"id": f.id, "title": f.title, "caption": f.caption,
            "data_uri": "data:image/png;base64," + base64.b64encode(f.png).decode("ascii"),
            "file": f"{FIGURES_DIR}/{f.id}.png"}


def render_html(ctx: dict[str, Any]) -> str:
    return html_environment().get_template(HTML_TEMPLATE).render(**ctx)


def render_markdown(ctx: dict[str, Any]) -> str:
    return markdown_environment().get_template(MD_TEMPLATE).render(**ctx)


@dataclass
class ReportFiles:
    dir: Path
    html: Path
    markdown: Path
    figures: list[str]
    warnings: list[str] = field(default_factory=list)  # the comparison's unmatched groups


def check_replaceable(out_dir: Path) -> None:
    """A report replaces its directory whole, so it may only replace a report: refuses (ValueError,
    exit 2) a path that is not a directory, and a non-empty directory that holds something a
    report did not write -- a user's files must never go with it. A report's directory has the
    marker file; one written before the marker holds only a report's own names."""
    if not out_dir.exists() and not out_dir.is_symlink():
        return
    if not out_dir.is_dir():
        raise ValueError(f"{out_dir}: not a directory (--out names the report's directory, "
                         "which the report replaces whole)")
    entries = sorted(p.name for p in out_dir.iterdir())
    if not entries or MARKER_FILE in entries:
        return
    foreign = [n for n in entries if n not in (HTML_FILE, MD_FILE, FIGURES_DIR)]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5
                                          else "")
        raise ValueError(f"{out_dir}: holds files a report did not write ({shown}); the report "
                         "replaces its directory whole, so give --out a new or empty directory, "
                         "or a previous report's")


def write_report(campaign: Campaign, out_dir: Path, comparison: Comparison | None = None,
                 window_s: float = DEFAULT_WINDOW_S) -> ReportFiles:
    """Renders everything into a temporary sibling of out_dir, then renames it into place:
    a report directory is either the old one or the new one, never half of one."""
    if not window_s > 0:
        raise ValueError(f"window must be > 0 seconds, got {window_s:g}")
    out_dir = out_dir.resolve()
    check_replaceable(out_dir)
    tune = tune_section(campaign.path, campaign.name)  # lsmbench tune's study, if any
    figures = (tune.figures if tune else []) + all_figures(campaign.points, window_s)
    ctx = context(campaign, figures, comparison, window_s)
    ctx["tune"] = tune
    html = render_html(ctx)
    md = render_markdown(ctx)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f".{out_dir.name}.tmp.{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / FIGURES_DIR).mkdir(parents=True)
    try:
        for f in figures:
            (tmp / FIGURES_DIR / f"{f.id}.png").write_bytes(f.png)
        (tmp / MD_FILE).write_text(md)
        (tmp / HTML_FILE).write_text(html)
        (tmp / MARKER_FILE).write_text("a report of lsmbench: `lsmbench report` replaces this "
                                       "directory whole\n")
        check_replaceable(out_dir)  # again: the rendering took a while
        old = None
        if out_dir.exists():
            old = out_dir.with_name(f".{out_dir.name}.old.{os.getpid()}")
            os.rename(out_dir, old)
        os.rename(tmp, out_dir)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ReportFiles(out_dir, out_dir / HTML_FILE, out_dir / MD_FILE, [f.id for f in figures],
                       list(comparison.warnings) if comparison else [])
