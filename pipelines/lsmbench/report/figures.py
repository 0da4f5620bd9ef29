"""The report's figures, one per question, in the style of the seed papers.

Each builder takes the campaign's points and returns a :class:`Figure` (a PNG
and the caption that says what window it covers), or None when the data has
nothing for it (no queries ran, no sweep, an engine without flush metrics).
They are drawn with the plotting toolkit (plotting.py: matplotlib's object API,
the Okabe-Ito palette, line styles and markers that survive greyscale printing).
"""


from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure as MplFigure

from ..util.values import dig as _get
from ..util.values import number as _num
from .load import StoredPhase, StoredPoint
from .plotting import (
    BAND_NOTE,
    Figure,
    band,
    draw_group,
    figure_legend,
    new_figure,
    render_png,
    style,
)
from .series import (
    DEFAULT_WINDOW_S,
    driver_interval_s,
    effective_window,
    label,
    measured_phases,
    plot_groups,
    running_title,
    time_unit,
    windowed,
)


def _writes(iv: dict[str, Any]) -> float | None:
    return _num(_get(iv, "ops", "writes"))



# ---------------------------------------------------------------- figures


def throughput_figure(points: Sequence[StoredPoint], window_s: float = DEFAULT_WINDOW_S
                      ) -> Figure | None:
    phases = measured_phases(points)
    if not phases:
        return None
    w, wtext = effective_window(phases, window_s)
    scale, unit = time_unit(phases)
    fig, (ax_t, ax_r) = new_figure(2)
    drawn = False
    for g in plot_groups(points):
        st = style(g.index)
        for ax, kind in ((ax_t, "testing"), (ax_r, "running")):
            series = []
            for pt in g.points:
                ph = pt.testing if kind == "testing" else pt.running
                if ph is not None:
                    xs, ys = windowed(ph.regular_intervals(), w, _writes)
                    series.append(([x / scale for x in xs], ys))
            drawn = draw_group(ax, series, w / scale, st, g.label) or drawn
        maxima = [m for m in (_num(_get(pt.record, "max_throughput", "writes_per_s"))
                              for pt in g.points if pt.testing is not None) if m is not None]
        if maxima:
            ax_t.axhline(float(np.median(maxima)), color=st.color, linewidth=0.8, alpha=0.6,
                         linestyle=":")
    if not drawn:
        return None
    ax_t.set_title("testing phase (closed loop)", fontsize="medium")
    ax_r.set_title(running_title(points), fontsize="medium")
    for ax in (ax_t, ax_r):
        ax.set_xlabel(f"time since phase start ({unit})")
        ax.set_ylabel("write throughput (writes/s)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    figure_legend(fig, (ax_t, ax_r))
    return Figure("throughput", "Instantaneous write throughput",
                  f"Writes completed per second over time; {wtext}. Dotted lines: the maximum "
                  "throughput measured in the testing phase (warm-up excluded; the median of "
                  "a group's repetitions)." + BAND_NOTE, render_png(fig))


def _component_series(ph: StoredPhase, scale: float
                      ) -> tuple[tuple[list[float], list[float]], tuple[list[float], list[float]]]:
    """((times, disk components), (times, the component constraint in force)) of a phase."""
    xs, ys, cx, cy = [], [], [], []
    for iv in ph.regular_intervals():
        t = _num(iv.get("t_end_s"))
        if t is None:
            continue
        c = _num(_get(iv, "engine", "disk_components"))
        if c is not None:
            xs.append(t / scale)
            ys.append(c)
        mc = _num(_get(iv, "engine", "max_components"))
        if mc:  # 0 = no constraint
            cx.append(t / scale)
            cy.append(mc)
    return (xs, ys), (cx, cy)


def components_figure(points: Sequence[StoredPoint]) -> Figure | None:
    phases = measured_phases(points)
    scale, unit = time_unit(phases)
    fig, (ax_t, ax_r) = new_figure(2)
    constraints: set[float] = set()
    drawn = False
    for g in plot_groups(points):
        st = style(g.index)
        for ax, kind in ((ax_t, "testing"), (ax_r, "running")):
            comps, limits = [], []
            step = 1.0
            for pt in g.points:
                ph = pt.testing if kind == "testing" else pt.running
                if ph is None:
                    continue
                c, lim = _component_series(ph, scale)
                comps.append(c)
                limits.append(lim)
                constraints.update(lim[1])
                step = driver_interval_s(ph) / scale
            drawn = draw_group(ax, comps, step, st, g.label, steps=True) or drawn
            # The constraint in force can change over a run (it follows the levels).
            lim = next((x for x in limits if x[0]), None)
            if lim is not None:
                ax.step(lim[0], lim[1], where="post", color=st.color, linewidth=2.2, alpha=0.45,
                        linestyle=(0, (4, 2)), label="component constraint (wide dashed, "
                        "in the point's colour)")
    if not drawn:
        return None
    for ax in (ax_t, ax_r):
        ax.set_xlabel(f"time since phase start ({unit})")
        ax.set_ylabel("disk components (count)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    ax_t.set_title("testing phase (closed loop)", fontsize="medium")
    ax_r.set_title(running_title(points), fontsize="medium")
    figure_legend(fig, (ax_t, ax_r))
    cons = ", ".join(f"{c:g}" for c in sorted(constraints)) or "none reported"
    return Figure("components", "Disk components over time",
                  "The number of disk components at the end of each driver interval. Wide "
                  "dashed lines: the engine's component constraint in force at that time "
                  f"(values seen: {cons}); writes stall when it is reached." + BAND_NOTE,
                  render_png(fig))


def ccdf_from_buckets(buckets: list[list[float]]) -> tuple[list[float], list[float]]:
    """(latency in ms, fraction of values above it) at each bucket's upper bound."""
    total = sum(b[2] for b in buckets)
    if total <= 0:
        return [], []
    xs, ys = [], []
    seen = 0.0
    for _low, high, count in sorted(buckets, key=lambda b: b[0]):
        seen += count
        frac = (total - seen) / total
        if frac <= 0:
            break
        xs.append(high / 1e6)
        ys.append(frac)
    return xs, ys


_PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))


def ccdf_band(curves: Sequence[tuple[Sequence[float], Sequence[float]]]
              ) -> tuple[list[float], list[float], list[float], list[float]]:
    """Several repetitions' CCDFs (ccdf_from_buckets) on the union of their latencies: at each,
    the median, min and max of the fraction slower. A curve is a step function (the fraction
    holds until its next latency) and is 0 past its last one (ccdf_from_buckets stops where
    no write is slower, and every curve shares the driver's bucket bounds)."""
    xs = sorted({x for cx, _ in curves for x in cx})

    def at(cx: Sequence[float], cy: Sequence[float], x: float) -> float:
        if x > cx[-1]:
            return 0.0
        i = bisect.bisect_right(cx, x) - 1
        return float(cy[i]) if i >= 0 else 1.0

    cols = [[at(cx, cy, x) for cx, cy in curves] for x in xs]
    return (xs, [float(np.median(c)) for c in cols], [min(c) for c in cols],
            [max(c) for c in cols])


def latency_figure(points: Sequence[StoredPoint]) -> Figure | None:
    fig, axes = new_figure(2)
    sources: set[str] = set()
    drawn = False
    for g in plot_groups(points):
        st = style(g.index)
        for ax, hist, summ in ((axes[0], "write_latency", "write_latency_us"),
                               (axes[1], "write_processing_latency",
                                "write_processing_latency_us")):
            kw: dict[str, Any] = {"color": st.color, "linestyle": st.linestyle,
                                  "label": g.label}
            curves = []
            for pt in g.points:
                run = pt.running
                buckets = _get(run.histograms, "histograms", hist, "buckets") if run else None
                if isinstance(buckets, list) and buckets:
                    xs, ys = ccdf_from_buckets(buckets)
                    if xs:
                        curves.append((xs, ys))
            if len(curves) == 1:
                ax.step(curves[0][0], curves[0][1], where="post", **kw)
            elif curves:
                xs, med, lo, hi = ccdf_band(curves)
                # Log axes: a fraction of 0 (no write that slow in some repetition) is drawn
                # a decade below the smallest positive one instead.
                floor = min(y for y in hi if y > 0) / 10
                ax.step(xs, [y if y > 0 else np.nan for y in med], where="post", **kw)
                ax.fill_between(xs, [max(y, floor) for y in lo], hi, step="post",
                                color=st.color, alpha=0.2, linewidth=0)
            if curves:
                sources.add("histograms.json")
                drawn = True
                continue
            lab: str | None = g.label  # points without histograms: their stored percentiles
            for pt in g.points:
                run = pt.running
                if run is None:
                    continue
                xs, ys = [], []
                for key, q in _PERCENTILES:
                    v = _num(run.summary_get(summ, key))
                    if v is not None and v > 0:
                        xs.append(v / 1000)
                        ys.append(1 - q)
                if xs:
                    ax.plot(xs, ys, marker=st.marker, **{**kw, "label": lab})
                    sources.add("summary.json percentiles (no histogram stored)")
                    drawn = True
                    lab = None
    if not drawn:
        return None
    axes[0].set_title("write latency (from intended arrival)", fontsize="medium")
    axes[1].set_title("processing latency (from start of processing)", fontsize="medium")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("latency (ms)")
        ax.set_ylabel("fraction of writes slower")
        for q in (0.01, 0.001):
            ax.axhline(q, color="grey", linewidth=0.6, linestyle=":")
        ax.grid(True, which="major", alpha=0.3)
    figure_legend(fig, axes)
    return Figure("latency", "Write and processing latency",
                  "Complementary CDF of write latency over the running phase's measured window "
                  "(the verdict's phase): the fraction of writes slower than x, log-log. Dotted "
                  "lines mark p99 and p99.9. Write latency counts queueing from each write's "
                  "intended arrival; processing latency only the engine's share. A group's "
                  "repetitions are one line, the median fraction at each latency, with a shaded "
                  "band from their minimum to their maximum. Source: "
                  f"{', '.join(sorted(sources))}.", render_png(fig))


def _query_types(ph: StoredPhase) -> list[str]:
    types: list[str] = []
    for iv in ph.intervals:
        for name, q in (iv.get("queries") or {}).items():
            if isinstance(q, dict) and (_num(q.get("ops")) or 0) > 0 and name not in types:
                types.append(name)
    return types


def query_figure(points: Sequence[StoredPoint], window_s: float = DEFAULT_WINDOW_S
                 ) -> Figure | None:
    groups = plot_groups(points)
    phases = [pt.running for g in groups for pt in g.points if pt.running is not None]
    types: list[str] = []
    for ph in phases:
        for t in _query_types(ph):
            if t not in types:
                types.append(t)
    if not types:
        return None
    w, wtext = effective_window(phases, window_s)
    scale, unit = time_unit(phases)
    fig, axes = new_figure(len(types))
    for g in groups:
        st = style(g.index)
        for ax, t in zip(axes, types, strict=True):
            series = []
            for pt in g.points:
                # A group that ran no query of this type is not drawn in its panel.
                if pt.running is None or t not in _query_types(pt.running):
                    continue
                xs, ys = windowed(pt.running.regular_intervals(), w,
                                  lambda iv, t=t: _num(_get(iv, "queries", t, "ops")))
                series.append(([x / scale for x in xs], ys))
            if series:
                draw_group(ax, series, w / scale, st, g.label)
    for ax, t in zip(axes, types, strict=True):
        ax.set_title(f"{t} queries, {running_title(points, short=True)}", fontsize="medium")
        ax.set_xlabel(f"time since phase start ({unit})")
        ax.set_ylabel(f"{t} throughput (queries/s)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    figure_legend(fig, axes)
    return Figure("queries", "Query throughput under writes",
                  f"Queries completed per second by the query threads during the running "
                  f"phase; {wtext}." + BAND_NOTE, render_png(fig))


def _flush_series(ph: StoredPhase) -> tuple[list[float], list[float], list[float]]:
    fl, wa, comps = [], [], []
    for iv in ph.intervals:
        e = iv.get("engine") or {}
        f, a, c = _num(e.get("flushes")), _num(e.get("write_amplification")), _num(
            e.get("disk_components"))
        if f is None or a is None or f <= 0:
            continue
        if fl and f == fl[-1]:  # one value per flush count: the latest
            wa[-1], comps[-1] = a, c if c is not None else math.nan
            continue
        fl.append(f)
        wa.append(a)
        comps.append(c if c is not None else math.nan)
    return fl, wa, comps


def flushes_figure(points: Sequence[StoredPoint]) -> Figure | None:
    """Write amplification and SSTable count as functions of the number of flushes (the
    bounded-depth paper's figures); drawn when the engine reports flushes and write
    amplification, from the phase of each point with the most flushes."""
    chosen = []
    for g in plot_groups(points):
        for j, pt in enumerate(g.points):
            best: tuple[StoredPhase, tuple[list[float], list[float], list[float]]] | None = None
            for ph in pt.phases.values():
                if ph.kind == "load":
                    continue
                series = _flush_series(ph)
                if len(series[0]) >= 2 and (best is None or len(series[0]) > len(best[1][0])):
                    best = (ph, series)
            if best is not None:
                chosen.append((g, j, best[0], best[1]))
    if not chosen:
        return None
    fig, (ax_wa, ax_c) = new_figure(2)
    labelled: set[int] = set()
    for g, _j, ph, (fl, wa, comps) in chosen:
        st = style(g.index)
        lab = None if g.index in labelled else f"{g.label} [{ph.name}]"
        labelled.add(g.index)
        alpha = 1.0 if len(g.points) == 1 else 0.6
        ax_wa.plot(fl, wa, color=st.color, linestyle=st.linestyle, marker=st.marker,
                   markersize=3, label=lab, alpha=alpha)
        ax_c.step(fl, comps, where="post", color=st.color, linestyle=st.linestyle, alpha=alpha)
    ax_wa.set_ylabel("cumulative write amplification over the phase (x)")
    ax_c.set_ylabel("disk components (SSTables)")
    for ax in (ax_wa, ax_c):
        ax.set_xlabel("flushes (count)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    ax_wa.set_title("cumulative write amplification over flushes", fontsize="medium")
    ax_c.set_title("SSTable count over flushes", fontsize="medium")
    figure_legend(fig, (ax_wa, ax_c))
    return Figure("flushes", "Write amplification and SSTable count over flushes",
                  "The engine's cumulative write amplification ((bytes flushed + bytes merged) / "
                  "user bytes since the engine opened the store for the phase, warm-up "
                  "included) and its number of disk "
                  "components, sampled at each driver interval and plotted against the flushes "
                  "completed so far in the phase named in the legend (the one with the most "
                  "flushes). A group's repetitions are drawn each, in the group's colour. The "
                  "tables' write amplification is another figure: the running phase's, over "
                  "its measured window only.",
                  render_png(fig))


def sweep_figure(points: Sequence[StoredPoint]) -> Figure | None:
    groups = [g for g in plot_groups(points) if any(len(p.verdicts) >= 2 for p in g.points)]
    if not groups:
        return None
    fig, (ax,) = new_figure(1)
    limits: set[float] = set()
    for g in groups:
        st = style(g.index)
        series = []
        verdicts: dict[float, list[bool]] = {}
        for pt in g.points:
            vs = sorted((v for v in pt.verdicts if _num(v.get("p99_write_latency_s")) is not None
                         and _num(v.get("utilization")) is not None),
                        key=lambda v: v["utilization"])
            series.append(([float(v["utilization"]) for v in vs],
                           [float(v["p99_write_latency_s"]) * 1000 for v in vs]))
            for v in vs:
                verdicts.setdefault(float(v["utilization"]), []).append(bool(v.get("sustainable")))
                lim = _num(v.get("p99_limit_s"))
                if lim:
                    limits.add(lim * 1000)
        draw_group(ax, series, 1e-6, st, g.label, marker=False)
        us, med, _, _ = band(series, 1e-6)
        for u, y in zip(us, med, strict=True):
            oks = verdicts.get(u) or next((vs for k, vs in verdicts.items()
                                           if abs(k - u) < 1e-6), [])
            face = st.color if oks and all(oks) else ("white" if not any(oks) else "lightgrey")
            ax.plot([u], [y], marker=st.marker, color=st.color, linestyle="none",
                    markerfacecolor=face)
    for j, lim in enumerate(sorted(limits)):
        ax.axhline(lim, color="black", linestyle=(0, (5, 2)), linewidth=1.2,
                   label="p99 bound of the verdict" if j == 0 else None)
    ax.set_yscale("log")
    ax.set_xlabel("utilization (arrival rate / maximum throughput)")
    ax.set_ylabel("p99 write latency (ms)")
    ax.grid(True, which="major", alpha=0.3)
    figure_legend(fig, (ax,))
    return Figure("sweep", "p99 write latency vs utilization",
                  "The running phase repeated at each utilization of the sweep; filled markers "
                  "are sustainable runs, hollow ones are not, grey ones are sustainable in some "
                  "repetitions only." + BAND_NOTE, render_png(fig))


# The search's steps by verdict: colour and marker (the shapes differ for greyscale).
SEARCH_VERDICTS: tuple[tuple[str, str, str], ...] = (
    ("sustainable", "#009E73", "o"), ("not-sustainable", "#D55E00", "X"),
    ("inconclusive", "#E69F00", "^"),
)
SEARCH_COLUMNS = 3


def search_figure(points: Sequence[StoredPoint]) -> Figure | None:
    """The search for the maximum sustainable rate (phases.running.search), one panel per
    point: the utilization of each step, coloured by its verdict, and the final bracket."""
    searched = [(pt, pt.search) for pt in points if pt.ok and pt.search
                and isinstance(pt.search.get("steps"), list) and pt.search["steps"]]
    if not searched:
        return None
    ncols = min(SEARCH_COLUMNS, len(searched))
    nrows = math.ceil(len(searched) / ncols)
    fig = MplFigure(figsize=(4.8 * ncols if ncols > 1 else 7.2, 2.9 * nrows + 0.6),
                    layout="constrained")
    axes = list(fig.subplots(nrows, ncols, squeeze=False).flat)
    for ax in axes[len(searched):]:
        ax.set_visible(False)
    for ax, (pt, search) in zip(axes, searched, strict=False):
        steps = [(int(st.get("step") or i + 1), float(st["utilization"]), str(st.get("verdict")))
                 for i, st in enumerate(search["steps"])
                 if _num(st.get("utilization")) is not None]
        ax.plot([x for x, _, _ in steps], [u for _, u, _ in steps], color="grey",
                linewidth=0.8, zorder=1)
        for word, colour, marker in SEARCH_VERDICTS:
            xs = [x for x, _, v in steps if v == word]
            us = [u for _, u, v in steps if v == word]
            if xs:
                ax.scatter(xs, us, color=colour, marker=marker, s=42, zorder=3, label=word)
        bracket = search.get("bracket") or {}
        lo, hi = _num(bracket.get("sustainable")), _num(bracket.get("unsustainable"))
        low, high = _num(search.get("low")), _num(search.get("high"))
        if lo is not None:  # none sustainable: no bracket to shade, the title says none
            ax.axhspan(lo, hi if hi is not None else lo, color="#56B4E9", alpha=0.3,
                       linewidth=0, zorder=0, label="final bracket")
            ax.axhline(lo, color="#0072B2", linestyle="--", linewidth=1.0,
                       label="highest sustainable")
        for end in (low, high):
            if end is not None:
                ax.axhline(end, color="black", linestyle=":", linewidth=0.6)
        answer = f"{lo:g} x max" if lo is not None else "none"
        ax.set_title(f"{label(pt)}: {answer}", fontsize="small")
        ax.set_xlabel("step")
        ax.set_ylabel("utilization (x max)")
        ax.set_xticks([x for x, _, _ in steps])
        ax.grid(True, alpha=0.3)
    figure_legend(fig, axes[: len(searched)])
    return Figure("search", "The search for the maximum sustainable rate",
                  "Each step of phases.running.search: the utilization (offered rate / the "
                  "testing maximum) its running phase ran at, from the same loaded tree, "
                  "coloured by its verdict. The search runs the upper end first, then bisects "
                  "the bracket [highest sustainable, lowest not]; an inconclusive step counts "
                  "as not sustainable. Shaded: the final bracket; dashed: the answer, the "
                  "highest utilization judged sustainable; dotted: the search's low and high.",
                  render_png(fig))
