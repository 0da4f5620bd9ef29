"""The Tuning section's figures: the optimization history and, with two objectives, the Pareto
front. Drawn with the report's toolkit (lsmbench.report.plotting): matplotlib's object API,
the Okabe-Ito palette, deterministic PNG bytes."""

from __future__ import annotations

from typing import Any

from ..results.tuning import TuneResult
from ..spec.tune import METRICS
from .plotting import OKABE_ITO, Figure, new_figure, render_png


def _scale(name: str) -> tuple[float, str]:
    kind = METRICS[name][0]
    if kind == "duration":
        return 1e3, f"{name} (ms)"
    if kind == "rate":
        return 1.0, f"{name} (writes/s)"
    return 1.0, name


def history_figure(result: TuneResult) -> Figure | None:
    """Each complete trial's objective (hollow: a constraint not met), the best feasible
    value so far as a step line, and ticks for the pruned and failed trials."""
    name = result.objectives[0]
    k, label = _scale(name)
    done = [r for r in result.rows if r.state == "complete" and r.values]
    if not done:
        return None
    fig, (ax,) = new_figure(1)
    feasible = [r for r in done if r.feasible is not False]
    infeasible = [r for r in done if r.feasible is False]
    ax.scatter([r.number for r in feasible], [r.values[0] * k for r in feasible if r.values],
               color=OKABE_ITO[0], marker="o", label="trial", zorder=3)
    if infeasible:
        ax.scatter([r.number for r in infeasible],
                   [r.values[0] * k for r in infeasible if r.values], facecolors="none",
                   edgecolors=OKABE_ITO[5], marker="o", label="constraint not met", zorder=3)
    maximize = result.directions[0] == "maximize"
    xs: list[float] = []
    ys: list[float] = []
    best: float | None = None
    for r in sorted(feasible, key=lambda r: r.number):
        v = (r.values or [0.0])[0] * k
        if best is None or (v > best if maximize else v < best):
            best = v
        xs.append(r.number)
        ys.append(best)
    if xs:
        last = max(r.number for r in result.rows)
        ax.step([*xs, last], [*ys, ys[-1]], where="post", color=OKABE_ITO[2],
                label="best so far")
    for state, color, mark in (("pruned", "#888888", "|"), ("failed", OKABE_ITO[5], "x")):
        rows = [r for r in result.rows if r.state == state]
        if rows:
            ymin = ax.get_ylim()[0]
            ax.scatter([r.number for r in rows], [ymin] * len(rows), marker=mark, color=color,
                       label=state, clip_on=False, zorder=4)
    defaults = next((r for r in done if r.defaults), None)
    if defaults is not None and defaults.values:
        ax.axhline(defaults.values[0] * k, color=OKABE_ITO[1], linestyle="--",
                   label="the spec's own configuration")
    ax.set_xlabel("trial")
    ax.set_ylabel(label)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    caption = (f"{len(result.rows)} trials of study {result.campaign}: {result.complete} "
               f"complete, {result.pruned} pruned (running phases skipped: their testing "
               f"maximum showed they could not beat the best so far), {result.failed} failed. "
               f"One run per trial; the confirmed answer is in the table above.")
    return Figure(id="tune-history", title="Optimization history", caption=caption,
                  png=render_png(fig))


def pareto_figure(result: TuneResult) -> Figure | None:
    if len(result.objectives) != 2:
        return None
    done = [r for r in result.rows if r.state == "complete" and r.values
            and len(r.values) == 2]
    if not done:
        return None
    (kx, lx), (ky, ly) = _scale(result.objectives[0]), _scale(result.objectives[1])
    fig, (ax,) = new_figure(1)
    front = set(result.pareto)
    rest = [r for r in done if r.number not in front]
    on = sorted((r for r in done if r.number in front), key=lambda r: (r.values or [0])[0])

    def xy(rows: list[Any]) -> tuple[list[float], list[float]]:
        return [r.values[0] * kx for r in rows], [r.values[1] * ky for r in rows]

    if rest:
        ax.scatter(*xy(rest), color="#999999", label="trial")
    if on:
        ax.plot(*xy(on), color=OKABE_ITO[0], marker="o", label="Pareto front")
    ax.set_xlabel(lx)
    ax.set_ylabel(ly)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    caption = (f"{len(done)} complete trials; the Pareto front ({len(on)}) are those no other "
               f"trial beats on both objectives (one run each).")
    return Figure(id="tune-pareto", title="Pareto front", caption=caption, png=render_png(fig))


def tune_figures(result: TuneResult) -> list[Figure]:
    return [f for f in (history_figure(result), pareto_figure(result)) if f is not None]
