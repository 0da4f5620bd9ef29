"""The plotting toolkit of every figure lsmbench draws -- the campaign report's, a study's,
the history's series, the reproduced papers' -- so that they share one look and their bytes
depend on the data only.

Matplotlib's object API is used without pyplot, so no global state or display backend is
involved. Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies),
and lines also differ by line style and marker so that the figures survive greyscale printing.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure

OKABE_ITO: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
)
LINESTYLES: tuple[str, ...] = ("-", "--", "-.", ":")
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*")


@dataclass
class Figure:
    """A drawn figure: its id (the file name's stem), its title and caption, its PNG."""

    id: str
    title: str
    caption: str
    png: bytes


@dataclass(frozen=True)
class Style:
    """How one line is drawn: colour, line style and marker."""

    color: str
    linestyle: str
    marker: str


def style(i: int) -> Style:
    """The i-th line's style: the palette's colours first, then other line styles."""
    n = len(OKABE_ITO)
    return Style(OKABE_ITO[i % n], LINESTYLES[(i // n + i) % len(LINESTYLES)],
                 MARKERS[i % len(MARKERS)])


def render_png(fig: MplFigure) -> bytes:
    """The figure as PNG bytes at 100 dpi."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    # No software/date metadata: the same data gives the same bytes.
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def new_figure(ncols: int, height: float = 3.4) -> tuple[MplFigure, list[Axes]]:
    """A figure of ncols panels side by side (one panel is wider), laid out to fit a legend
    below them (:func:`figure_legend`)."""
    fig = MplFigure(figsize=(4.8 * ncols if ncols > 1 else 7.2, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def figure_legend(fig: MplFigure, axes: Sequence[Axes]) -> None:
    """One legend for all the axes, below them, each label once."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        per_row = 3 if len(axes) > 1 else 2  # a single axis is narrower
        # Fewer columns when the longest entry would not fit: a "small" character is about
        # 0.07 in wide and a handle with its gaps about 0.7 in; the legend must not outgrow
        # the figure (it was cut at both edges).
        fits = int(fig.get_figwidth() // (0.07 * max(len(lab) for lab in labels) + 0.7))
        fig.legend(handles, labels, loc="outside lower center",
                   ncols=max(1, min(per_row, fits, len(labels))), fontsize="small",
                   frameon=False)


def band(series: Sequence[tuple[Sequence[float], Sequence[float]]], step: float
         ) -> tuple[list[float], list[float], list[float], list[float]]:
    """Several repetitions' series on one x grid: values whose x rounds to the same multiple of
    step are one sample. Returns (x: their mean, median, min, max) per grid point."""
    cells: dict[int, list[tuple[float, float]]] = {}
    for xs, ys in series:
        for x, y in zip(xs, ys, strict=True):
            if y is not None and math.isfinite(y):
                cells.setdefault(round(x / step), []).append((x, y))
    keys = sorted(cells)
    xs_out = [float(np.mean([x for x, _ in cells[k]])) for k in keys]
    ys = [[y for _, y in cells[k]] for k in keys]
    return (xs_out, [float(np.median(v)) for v in ys], [min(v) for v in ys],
            [max(v) for v in ys])


def draw_group(ax: Axes, series: Sequence[tuple[Sequence[float], Sequence[float]]], step: float,
               st: Style, lab: str, *, steps: bool = False, marker: bool = True) -> bool:
    """One group's line: the series itself for one repetition, else the median across the
    repetitions with a shaded min..max band. False when there is nothing to draw."""
    series = [(xs, ys) for xs, ys in series if len(xs)]
    if not series:
        return False
    if len(series) == 1:
        xs, med = list(series[0][0]), list(series[0][1])
        lo = hi = None
    else:
        xs, med, lo, hi = band(series, step)
    kw: dict[str, Any] = {"color": st.color, "linestyle": st.linestyle, "label": lab}
    if steps:
        ax.step(xs, med, where="post", **kw)
    else:
        ax.plot(xs, med, marker=st.marker if marker else None, markersize=3, **kw)
    if lo is not None and hi is not None:
        ax.fill_between(xs, lo, hi, color=st.color, alpha=0.2, linewidth=0,
                        step="post" if steps else None)
    return True


BAND_NOTE = (" A group's repetitions are one line, their median, with a shaded band from their "
             "minimum to their maximum.")
