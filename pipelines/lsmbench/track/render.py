"""history.html through its Jinja2 template (reports/templates/history.html.j2), with the
campaign report's environment: autoescape on, every value from the history is text."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from .. import __version__
from ..report.render import html_environment
from .changes import Analysis, HistorySeries, paired_state, segment_noise
from .history import METRIC_BY_NAME, History

HTML_TEMPLATE = "history.html.j2"


def _testbed_changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    """'kernel 6.1.0-18 -> 6.1.0-20' for a single-node testbed; the node counts otherwise."""
    if len(before) == 1 and len(after) == 1:
        keys = sorted(set(before[0]) | set(after[0]))
        diffs = [f"{k} {before[0].get(k)} -> {after[0].get(k)}" for k in keys
                 if before[0].get(k) != after[0].get(k)]
        return "; ".join(diffs)
    return f"{len(before)} node(s) -> {len(after)} node(s)"


def panel_series(analysis: Analysis) -> dict[tuple[str, str, str], list[HistorySeries]]:
    """The report's panels: per campaign, group and metric, its series -- one, or one per node
    of a campaign that ran on several -- in the analysis' order."""
    out: dict[tuple[str, str, str], list[HistorySeries]] = {}
    for s in analysis.series:
        out.setdefault((s.campaign, s.group, s.metric), []).append(s)
    return out


def boundaries(history: History, campaign: str | None) -> list[dict[str, Any]]:
    """Every run whose spec hash or testbed key differs from the run before it of the same
    campaign and node (a campaign on several nodes: each node's runs are its own series)."""
    out = []
    by_campaign: dict[tuple[str, str], list[Any]] = {}
    for r in history.runs(campaign):
        by_campaign.setdefault((r.campaign, r.node or ""), []).append(r)
    for (camp, _), runs in sorted(by_campaign.items()):
        for prev, run in pairwise(runs):
            what = []
            if prev.spec_hash != run.spec_hash:
                what.append(f"spec {prev.spec_hash} -> {run.spec_hash}")
            if prev.testbed_key != run.testbed_key:
                what.append(f"testbed {prev.testbed_key} -> {run.testbed_key}: "
                            + _testbed_changes(prev.testbed, run.testbed))
            if what:
                out.append({"campaign": camp, "run": run, "what": "; ".join(what)})
    out.sort(key=lambda b: (b["campaign"], b["run"].finished, b["run"].node or ""))
    return out


def render_history(analysis: Analysis, history: History, figures: dict[tuple[str, str, str], str],
                   generated: str, campaign: str | None) -> str:
    runs = history.runs(campaign)
    order = {r.run_id: i for i, r in enumerate(runs)}
    campaign_of = {r.run_id: r.campaign for r in runs}
    node_of = {r.run_id: r.node for r in runs}
    # the group verdict of each group's last run (per node, for a campaign on several)
    latest: dict[tuple[str, str, str | None], str] = {}
    for v in sorted(history.verdicts(campaign), key=lambda v: order[v.run_id]):
        latest[(campaign_of[v.run_id], v.group, node_of[v.run_id])] = v.verdict
    panels = []
    for (camp, group, metric), series in panel_series(analysis).items():
        m = METRIC_BY_NAME[metric]
        nodes = [s.node for s in series if s.node]
        segments = [seg for s in series for seg in s.segments]
        notes = [f"{seg.node}: {seg.note}" if seg.node else seg.note for seg in segments
                 if seg.note]
        # Each series' latest segment: the noise its newest nights are judged against.
        noise = "; ".join((f"{s.node}: " if s.node else "") + segment_noise(s.segments[-1]).text()
                          for s in series if s.segments)
        verdicts = [(s.node, latest.get((camp, group, s.node))) for s in series]
        panels.append({
            "campaign": camp, "group": group, "metric": m, "figure": figures[(camp, group,
                                                                              metric)],
            "runs": sum(len(g.points) for g in segments), "nodes": nodes,
            "segments": len(segments), "notes": notes,
            "noise": noise or None,
            "verdict": ", ".join(f"{n} {v}" if n else str(v) for n, v in verdicts if v)
                       or None,
            "changes": [c for c in analysis.changes
                        if (c.campaign, c.group, c.metric) == (camp, group, metric)],
        })
    by_run = {r.run_id: r for r in runs}
    paired = [{"run": by_run[n.value.run_id], "value": n.value, "state": paired_state(n),
               "low": n.night_low, "high": n.night_high}
              for nights in analysis.paired.values() for n in nights
              if n.value.run_id in by_run]
    paired.sort(key=lambda p: (order[p["run"].run_id], p["value"].group, p["value"].metric))
    ctx = {
        "generated": generated,
        "version": __version__,
        "history": str(history.path),
        "campaign": campaign,
        "runs": runs,
        # a campaign ran on several nodes: the tables get a nodes column
        "per_node": any(r.node for r in runs),
        "open": analysis.open,
        "changes": analysis.changes,
        "panels": panels,
        "boundaries": boundaries(history, campaign),
        "acks": history.acks(),
        "paired": paired,
        "bisections": [b for b in history.bisections()
                       if campaign is None or b.get("campaign") == campaign],
        "metrics": METRIC_BY_NAME,
    }
    return html_environment().get_template(HTML_TEMPLATE).render(**ctx)
