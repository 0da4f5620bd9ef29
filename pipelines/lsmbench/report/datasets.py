"""Datasets (a primary index and secondary indexes; Luo & Carey Sec. 7) in the report: the disk
components of each index over time, and which of the generic figures are the counterparts of
the paper's Figs. 25-29 (their captions say so when the campaign ran datasets)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..util.values import dig as _get
from ..util.values import number as _num
from .load import StoredPhase, StoredPoint
from .plotting import BAND_NOTE, Figure, draw_group, figure_legend, new_figure, render_png, style
from .series import driver_interval_s, measured_phases, plot_groups, running_title, time_unit

_SECONDARY = re.compile(r"^secondary(\d+)\.disk_components$")

# Figure id -> what it is the counterpart of, for a dataset campaign.
PAPER_FIGURES: dict[str, str] = {
    "throughput": "Luo & Carey's Figs. 25a and 26a (instantaneous write throughput, lazy and "
                  "eager)",
    "latency": "Luo & Carey's Figs. 25b and 26b (percentile write latencies, lazy and eager)",
    "sweep": "Luo & Carey's Fig. 27 (the eager strategy's p99 write latency against the "
             "utilization)",
    "queries": "Luo & Carey's Figs. 28 and 29 (instantaneous secondary-query throughput per "
               "selectivity, lazy and eager)",
}


def _indexes(ph: StoredPhase) -> list[str]:
    """The dataset's trees seen in a phase's metrics: 'primary', 'secondary0', ..."""
    names: set[int] = set()
    primary = False
    for iv in ph.intervals[:3]:
        for key in (iv.get("engine") or {}):
            m = _SECONDARY.match(key)
            if m:
                names.add(int(m.group(1)))
            primary = primary or key == "primary.disk_components"
    return (["primary"] if primary else []) + [f"secondary{i}" for i in sorted(names)]


def is_dataset(points: Sequence[StoredPoint]) -> bool:
    return any(_indexes(ph) for ph in measured_phases(points))


def tree_components(ph: StoredPhase, tree: str) -> tuple[list[float], list[float]]:
    """(interval end times in s, disk components of index `tree`) over a phase's regular
    intervals."""
    xs, ys = [], []
    for iv in ph.regular_intervals():
        t = _num(iv.get("t_end_s"))
        c = _num(_get(iv, "engine", f"{tree}.disk_components"))
        if t is not None and c is not None:
            xs.append(t)
            ys.append(c)
    return xs, ys


def dataset_figure(points: Sequence[StoredPoint]) -> Figure | None:
    """One panel per index: its disk components over the running phase, a line per group."""
    running = [pt.running for pt in points if pt.ok and pt.running is not None]
    trees: list[str] = []
    for ph in running:
        for t in _indexes(ph):
            if t not in trees:
                trees.append(t)
    if not trees:
        return None
    scale, unit = time_unit(running)
    fig, axes = new_figure(len(trees))
    for g in plot_groups(points):
        st = style(g.index)
        for ax, tree in zip(axes, trees, strict=True):
            series = []
            step = 1.0
            for pt in g.points:
                if pt.running is None:
                    continue
                xs, ys = tree_components(pt.running, tree)
                series.append(([x / scale for x in xs], ys))
                step = driver_interval_s(pt.running) / scale
            draw_group(ax, series, step, st, g.label, steps=True)
    for ax, tree in zip(axes, trees, strict=True):
        name = "primary index" if tree == "primary" else f"secondary index {tree[9:]}"
        ax.set_title(f"{name}, {running_title(points, short=True)}", fontsize="medium")
        ax.set_xlabel(f"time since phase start ({unit})")
        ax.set_ylabel("disk components (count)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    figure_legend(fig, axes)
    return Figure("dataset", "Disk components of each index",
                  "The dataset's trees during the running phase: each index (the primary and "
                  "one per secondary field) is merged by its own merge scheduler instance, "
                  "while all share one memory budget (their memory components flush together) "
                  "and one I/O budget. Fewer components make the eager strategy's lookups and "
                  "the queries' scans cheaper (Luo & Carey Sec. 7)." + BAND_NOTE, render_png(fig))


def with_paper_references(figures: list[Figure]) -> list[Figure]:
    """The captions of a dataset campaign's figures, naming the paper figure each stands for."""
    for f in figures:
        ref = PAPER_FIGURES.get(f.id)
        if ref:
            f.caption = f"{f.caption} The counterpart of {ref}."
    return figures
