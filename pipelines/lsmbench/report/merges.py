"""The merge cycle: every merge of a phase as a bar on its output level over time, with each
level's size and, per level, the spans when a merge into it waited.

Drawn from the engine's events in the driver's time series (engines/driver/README.md,
``events``), for the testing and the (headline) running phase of the first repetition of
each group, so a reader sees whether the running window held a merge into the deepest level
(the verdict's window_coverage criterion, cycles.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure as MplFigure
from matplotlib.patches import Patch

from ..method.cycles import events
from .load import StoredPhase, StoredPoint
from .plotting import Figure, render_png
from .series import plot_groups

# Panels at most: one per group (its first repetition), two phases each.
MAX_GROUPS = 4


def _phase(pt: StoredPoint, kind: str) -> StoredPhase | None:
    chosen = [ph for ph in pt.phases.values() if ph.kind == kind and events(ph.intervals, "merge")]
    return sorted(chosen, key=lambda ph: ph.name)[0] if chosen else None


def level_sizes(ph: StoredPhase) -> tuple[list[float], dict[int, list[float]], list[float]]:
    """The engine's per-level sizes over a phase: interval end times, MB per level >= 1 at
    each (NaN where an interval did not report the level), and the merges waiting (created,
    not running) at each. Empty when the engine reports no per-level bytes."""
    times: list[float] = []
    by_level: dict[int, list[float]] = {}
    waiting: list[float] = []
    for iv in ph.intervals:
        eng = iv.get("engine") or {}
        sizes = {int(k[len("disk_bytes.L"):]): float(v) / 1e6 for k, v in eng.items()
                 if k.startswith("disk_bytes.L") and k[len("disk_bytes.L"):].isdigit()}
        if not sizes:
            continue
        for level, mb in sizes.items():
            if level >= 1:
                by_level.setdefault(level, [math.nan] * len(times)).append(mb)
        times.append(float(iv.get("t_end_s", 0.0)))
        for series in by_level.values():
            series.extend([math.nan] * (len(times) - len(series)))
        waiting.append(float(eng.get("merges_pending", 0.0)))
    return times, by_level, waiting


def level_spans(ph: StoredPhase, metric: str) -> dict[int, list[tuple[float, float]]]:
    """Per output level, the spans of the phase (merged across adjacent intervals) whose end
    found a merge into that level counted by the engine's metric ``merges_pending`` (created,
    waiting: paused by the scheduler or not yet started) or ``merges_running``. Empty when the
    engine does not report merges by level."""
    prefix = f"{metric}.L"
    spans: dict[int, list[tuple[float, float]]] = {}
    for iv in ph.intervals:
        eng = iv.get("engine") or {}
        start, end = float(iv.get("t_start_s", 0.0)), float(iv.get("t_end_s", 0.0))
        for key, count in eng.items():
            if not (key.startswith(prefix) and key[len(prefix):].isdigit()) or not count:
                continue
            runs = spans.setdefault(int(key[len(prefix):]), [])
            if runs and abs(runs[-1][1] - start) < 1e-6:
                runs[-1] = (runs[-1][0], end)
            else:
                runs.append((start, end))
    return spans


def merges_figure(points: Sequence[StoredPoint]) -> Figure | None:
    rows = []
    for g in plot_groups(points)[:MAX_GROUPS]:
        pt = g.points[0]
        phases = [ph for ph in (_phase(pt, "testing"), _phase(pt, "running")) if ph is not None]
        if phases:
            rows.append((g.label, phases))
    if not rows:
        return None
    fig = MplFigure(figsize=(9.6, 1.2 + 1.8 * len(rows)), layout="constrained")
    grid = fig.subplots(len(rows), 2, squeeze=False)
    deepest = max(int(e.get("output_level", 0)) for _, phases in rows for ph in phases
                  for e in events(ph.intervals, "merge"))
    cmap = [f"C{i % 10}" for i in range(deepest + 1)]
    for r, (label, phases) in enumerate(rows):
        for c, kind in enumerate(("testing", "running")):
            ax = grid[r][c]
            ph = next((p for p in phases if p.kind == kind), None)
            if ph is None:
                ax.set_axis_off()
                continue
            for e in events(ph.intervals, "merge"):
                level = int(e.get("output_level", 0))
                start, end = float(e.get("start_s", 0.0)), float(e.get("end_s", 0.0))
                ax.barh(level, max(end - start, 0.05), left=start, height=0.6,
                        color=cmap[level], alpha=0.3 if e.get("moved") else 0.8)
            # The merges waiting into each level: created, paused by the scheduler or not yet
            # started (hatched, below the bars), e.g. greedy serving smaller merges first.
            for level, runs in level_spans(ph, "merges_pending").items():
                if level > deepest:
                    continue
                for start, end in runs:
                    ax.barh(level - 0.38, end - start, left=start, height=0.16,
                            color="none", edgecolor=cmap[level], hatch="////", linewidth=0.6)
            times, sizes, waiting = level_sizes(ph)
            if sizes:
                # A level growing while a merge waits is a merge down being starved.
                right = ax.twinx()
                for level, mb in sorted(sizes.items()):
                    right.plot(times, mb, color=f"C{level % 10}", linewidth=1.2,
                               linestyle=":")
                right.set_yscale("log")
                right.set_ylabel("level size (MB, dotted)", fontsize="small")
                if waiting and waiting[-1] > 0:
                    ax.text(0.99, 0.04, f"{waiting[-1]:g} merge(s) waiting at the end",
                            transform=ax.transAxes, ha="right", va="bottom", fontsize="small")
            measured = [iv for iv in ph.intervals if iv.get("measured")]
            if measured:
                ax.axvspan(float(measured[0]["t_start_s"]), float(measured[-1]["t_end_s"]),
                           color="grey", alpha=0.12, linewidth=0)
            ax.set_ylim(0.3, deepest + 0.7)
            ax.set_yticks(range(1, deepest + 1))
            ax.set_ylabel("output level")
            ax.set_title(f"{label} [{ph.name}]", fontsize="small")
            ax.grid(True, axis="x", alpha=0.3)
            if r == len(rows) - 1:
                ax.set_xlabel("time (s)")
    fig.legend(handles=[Patch(color="grey", alpha=0.25, label="measured window"),
                        Patch(color="grey", alpha=0.8, label="merge (lighter: moved down, "
                              "not rewritten)"),
                        Patch(facecolor="none", edgecolor="grey", hatch="////",
                              label="a merge into the level waiting")],
               loc="outside lower center", ncols=3, fontsize="small", frameon=False)
    return Figure("merges", "The merge cycle",
                  "Every merge the engine completed, as a bar from its start to its end on its "
                  "output level, in the testing phase and the running phase of each group's "
                  "first repetition (a scheduler may pause a merge between the two); hatched, "
                  "under a level: a merge into it was waiting (created, paused by its scheduler "
                  "or not yet started) at the end of those intervals; the grey "
                  "band is the measured window. A running window without a bar on the deepest "
                  "level the testing phase reached cannot call the rate sustainable: its verdict "
                  "is inconclusive (window_coverage). Dotted, right axis: each level's size; "
                  "with the merges still waiting at the end of the phase, noted in the panel. A "
                  "level that keeps growing while no merge out of it completes is a merge down "
                  "starved (research/leveling-greedy.md).", render_png(fig))
