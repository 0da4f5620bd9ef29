"""A campaign's stored points as the report's figures draw them: the complete repetitions of a
point as one group (one line, one style, one legend entry), the phases' intervals as rates over
windows, and the time axis's unit."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..method.groups import point_group
from ..points import short_names
from ..util.values import number as _num
from .load import StoredPhase, StoredPoint

DEFAULT_WINDOW_S = 30.0  # the rates' averaging window (lsmbench report --window)
_MIN_WINDOWS = 3  # fewer windows than this per phase says nothing about stability


def label(pt: StoredPoint) -> str:
    """A point's legend entry: its matrix values, else its id."""
    params = pt.params
    if params:
        short = short_names(params)
        return ", ".join(f"{short[k]}={v}" for k, v in params.items())
    return pt.id


@dataclass
class PlotGroup:
    """The complete repetitions of one point (one group), drawn as one line in one style."""

    index: int  # the group's place among all groups: its style
    label: str
    points: list[StoredPoint]


def plot_groups(points: Sequence[StoredPoint]) -> list[PlotGroup]:
    """Groups in the order of their first repetition; only complete repetitions are drawn, but
    a group whose repetitions all failed still takes its place (stable styles)."""
    order: dict[str, PlotGroup] = {}
    for pt in points:
        key = point_group(pt.id, pt.record)
        if key not in order:
            order[key] = PlotGroup(len(order), label(pt), [])
        if pt.ok:
            order[key].points.append(pt)
    out = [g for g in order.values() if g.points]
    for g in out:
        if len(g.points) > 1:
            g.label = f"{g.label} ({len(g.points)} runs)"
    return out


def windowed(intervals: list[dict[str, Any]], window_s: float,
             count: Callable[[dict[str, Any]], float | None]) -> tuple[list[float], list[float]]:
    """(window end times, rate per second in each window): count summed over the intervals
    whose end falls in [k*W, (k+1)*W), divided by the time they cover."""
    buckets: dict[int, list[float]] = {}
    for iv in intervals:
        t0, t1, n = _num(iv.get("t_start_s")), _num(iv.get("t_end_s")), count(iv)
        if t0 is None or t1 is None or n is None or t1 <= t0:
            continue
        k = max(0, math.ceil(t1 / window_s - 1e-9) - 1)
        acc = buckets.setdefault(k, [0.0, 0.0, 0.0])
        acc[0] += n
        acc[1] += t1 - t0
        acc[2] = max(acc[2], t1)
    ks = sorted(buckets)
    return [buckets[k][2] for k in ks], [buckets[k][0] / buckets[k][1] for k in ks]


def _duration(ph: StoredPhase) -> float:
    ends = [_num(iv.get("t_end_s")) for iv in ph.intervals]
    return max((e for e in ends if e is not None), default=0.0)


def driver_interval_s(ph: StoredPhase) -> float:
    """The driver's interval in a phase: from its summary, else the longest interval seen."""
    v = _num(ph.summary_get("interval_s"))
    if v:
        return v
    spans = [(_num(iv.get("t_end_s")) or 0) - (_num(iv.get("t_start_s")) or 0)
             for iv in ph.intervals]
    return max(spans, default=1.0) or 1.0


def effective_window(phases: Sequence[StoredPhase], window_s: float) -> tuple[float, str]:
    """The averaging window and how the caption describes it. Phases shorter than three
    windows fall back to the driver's interval, and the caption says so."""
    longest = max((_duration(p) for p in phases), default=0.0)
    if longest >= _MIN_WINDOWS * window_s:
        return window_s, f"each value is the mean over a {window_s:g} s window"
    interval = max((driver_interval_s(p) for p in phases), default=1.0)
    return interval, (f"each value is the mean over one {interval:g} s interval of the driver "
                      f"(the phases, at most {longest:.3g} s long, are shorter than "
                      f"{_MIN_WINDOWS} windows of {window_s:g} s)")


def time_unit(phases: Sequence[StoredPhase]) -> tuple[float, str]:
    """(seconds per unit, unit) of a time axis over these phases: minutes past 20 min."""
    longest = max((_duration(p) for p in phases), default=0.0)
    return (60.0, "min") if longest > 1200 else (1.0, "s")


def measured_phases(points: Sequence[StoredPoint]) -> list[StoredPhase]:
    """The testing and running phases of the complete points."""
    return [ph for p in points if p.ok for ph in (p.testing, p.running) if ph is not None]


def running_title(points: Sequence[StoredPoint], short: bool = False) -> str:
    """A running phase's panel title, with the utilization when every point ran the same."""
    us = {p.verdict.get("utilization") for p in points if p.ok and p.verdict}
    if len(us) == 1:
        (u,) = us
        if isinstance(u, int | float):
            return f"running at {u:g} x max" if short else (
                f"running phase (open loop at {u:g} x max)")
    return "running phase" if short else "running phase (open loop)"
