"""One figure per series: the medians night by night with their intervals as a band, the
spec/testbed boundaries, and the change points (red: open regression, grey: acknowledged or
recovered, green: improvement) at the first run of the new level. A campaign on several nodes
has one figure per group and metric with a line per node (:func:`nodes_figure`), the nights
in common on one axis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure as MplFigure

from ..report.plotting import OKABE_ITO, render_png
from .changes import Change, HistorySeries
from .history import METRIC_BY_NAME

_CHANGE_COLOURS = {"open": "#D55E00", "improvement": "#009E73"}
_OTHER_CHANGE = "#777777"


def series_figure(series: HistorySeries, changes: Sequence[Change]) -> bytes:
    metric = METRIC_BY_NAME[series.metric]
    fig = MplFigure(figsize=(7.2, 2.6), layout="constrained")
    ax = fig.subplots()
    x0 = 0
    run_x: dict[int, int] = {}
    labels: list[tuple[int, str]] = []
    for i, seg in enumerate(series.segments):
        xs = list(range(x0, x0 + len(seg.points)))
        med = [p.value.median for p in seg.points]
        lo = [p.value.ci_low if p.value.ci_low is not None else p.value.median
              for p in seg.points]
        hi = [p.value.ci_high if p.value.ci_high is not None else p.value.median
              for p in seg.points]
        colour = OKABE_ITO[i % 2]  # alternate, so that segments read apart
        ax.fill_between(xs, lo, hi, color=colour, alpha=0.2, linewidth=0)
        ax.plot(xs, med, color=colour, marker="o", markersize=3, linewidth=1.2)
        for x, p in zip(xs, seg.points, strict=True):
            run_x[p.run.run_id] = x
            labels.append((x, p.run.date))
        if i > 0:
            prev = series.segments[i - 1]
            what = ("testbed" if prev.testbed_key != seg.testbed_key else "") + \
                   ("+spec" if prev.spec_hash != seg.spec_hash and
                    prev.testbed_key != seg.testbed_key else
                    "spec" if prev.spec_hash != seg.spec_hash else "")
            ax.axvline(x0 - 0.5, color="#000000", linestyle=":", linewidth=1)
            ax.annotate(f"{what} changed", (x0 - 0.5, 1.0), xycoords=("data", "axes fraction"),
                        fontsize=7, rotation=90, va="top", ha="right")
        x0 += len(seg.points)
    _change_lines(ax, changes, run_x)
    if labels:
        step = max(1, len(labels) // 10)
        shown = labels[::step]
        ax.set_xticks([x for x, _ in shown], _tick_labels([d for _, d in shown]), fontsize=7)
    ax.set_ylabel(f"{metric.label} ({metric.unit})", fontsize=8)
    ax.set_xlabel("run (date, UTC)", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"{series.group}: {metric.label} ({metric.better} is better)", fontsize=9)
    return render_png(fig)


def nodes_figure(series: Sequence[HistorySeries], changes: Sequence[Change]) -> bytes:
    """The nodes' series of one group and metric side by side: a line and band per node (its
    colour), the campaign's runs on one axis (a node's run of a night is at that night), each
    node's spec/testbed boundaries dotted in its colour, and each node's change points dashed
    and labelled with the node."""
    first = series[0]
    metric = METRIC_BY_NAME[first.metric]
    fig = MplFigure(figsize=(7.2, 2.9), layout="constrained")
    ax = fig.subplots()
    nights = sorted({(p.run.finished, p.run.date) for s in series for seg in s.segments
                     for p in seg.points})
    night_x = {f: i for i, (f, _) in enumerate(nights)}
    run_x: dict[int, int] = {}
    for i, s in enumerate(series):
        colour = OKABE_ITO[i % len(OKABE_ITO)]
        for j, seg in enumerate(s.segments):
            xs = [night_x[p.run.finished] for p in seg.points]
            med = [p.value.median for p in seg.points]
            lo = [p.value.ci_low if p.value.ci_low is not None else p.value.median
                  for p in seg.points]
            hi = [p.value.ci_high if p.value.ci_high is not None else p.value.median
                  for p in seg.points]
            ax.fill_between(xs, lo, hi, color=colour, alpha=0.12, linewidth=0)
            ax.plot(xs, med, color=colour, marker="o", markersize=3, linewidth=1.2,
                    label=(s.node or "one node") if j == 0 else None)
            for x, p in zip(xs, seg.points, strict=True):
                run_x[p.run.run_id] = x
            if j > 0:
                ax.axvline(xs[0] - 0.5, color=colour, linestyle=":", linewidth=1)
    _change_lines(ax, changes, run_x, lambda c: f"{c.node} " if c.node else "")
    if nights:
        step = max(1, len(nights) // 10)
        shown = list(enumerate(nights))[::step]
        ax.set_xticks([x for x, _ in shown], _tick_labels([d for _, (_, d) in shown]),
                      fontsize=7)
    ax.legend(fontsize=7, loc="lower left", ncols=min(len(series), 4), title="node",
              title_fontsize=7)
    ax.set_ylabel(f"{metric.label} ({metric.unit})", fontsize=8)
    ax.set_xlabel("campaign run (date, UTC)", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"{first.group}: {metric.label} ({metric.better} is better), "
                 f"{len(series)} nodes", fontsize=9)
    return render_png(fig)


def _change_lines(ax: Any, changes: Sequence[Change], run_x: dict[int, int],
                  prefix: Any = lambda c: "") -> None:
    """Each change point dashed at its first run, in its status's colour, labelled with its
    change and commit range (and ``prefix(change)``, e.g. its node)."""
    at: dict[int, int] = {}  # labels already at a run: the next one goes below them
    for c in changes:
        x = run_x.get(c.run_id)
        if x is None:
            continue
        below = at.get(x, 0)
        at[x] = below + 1
        colour = _CHANGE_COLOURS.get(c.status, _OTHER_CHANGE)
        ax.axvline(x - 0.5, color=colour, linestyle="--", linewidth=1.4)
        # Horizontal, in a box at the top right of the line: rotated text along the line
        # crossed the series where the step is, which is where the eye is.
        ax.annotate(f"{prefix(c)}{c.change:+.0%} {_short(c.commit_before)}.."
                    f"{_short(c.commit_after)}",
                    (x - 0.5, 0.97 - 0.09 * below), xycoords=("data", "axes fraction"),
                    xytext=(3, 0), textcoords="offset points", fontsize=7, color=colour,
                    va="top", ha="left",
                    bbox={"boxstyle": "round,pad=0.2", "facecolor": "white",
                          "edgecolor": colour, "linewidth": 0.6, "alpha": 0.9})


def _tick_labels(dates: Sequence[str]) -> list[str]:
    """MM-DD per run; with the time under it when two runs shown share a day (several nights
    a day, as in a test of the nightly job or a re-run)."""
    days = [d[5:10] for d in dates]
    if len(set(days)) == len(days):
        return days
    return [f"{d[5:10]}\n{d[11:16]}" for d in dates]


def _short(commit: str | None) -> str:
    return commit[:7] if commit else "?"
