"""The report's Workload section: what each group's workload sent, from its phases' workload
shape records (workload_shape.json: lsmbench.workload_shape.record), and the figure of the
running phase's rate over time.

Per group and phase (the testing phase and the running phase the verdict refers to), over the
group's complete repetitions: the op mix the driver completed (shares of the repetitions' summed
counts), and the medians of the sample's distinct keys, top-1 % key share, value sizes (every
write of the sample: mean, p50, p99) and scan lengths, and of the mean achieved and intended
rates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..method.stats import median_ci
from ..util.values import number as _num
from .load import GroupRow, StoredPhase, StoredPoint
from .plotting import BAND_NOTE, Figure, draw_group, figure_legend, new_figure, render_png, style
from .series import driver_interval_s, plot_groups, running_title, time_unit

RATE_FIGURE = "rate"  # the id of the rate figure, shown in the Workload section


@dataclass
class WorkloadRow:
    """One group's phase as the Workload section shows it; None where no record holds it."""

    group: str
    phase: str  # testing, or the running phase's directory (running, running@0.95)
    runs: int  # complete repetitions with this phase
    requests: float | None  # median requests completed in the measured window
    op_mix: dict[str, float]  # op type -> share of the repetitions' summed completed counts
    queries: dict[str, int]  # the query threads' ops beside the mix, summed
    sample_ops: float | None  # median operations sampled from the op stream
    distinct_keys: float | None
    top_1pct_key_share: float | None
    value_size: dict[str, float | None]  # mean, p50, p99 of the sample's writes (None: none)
    scan_length: dict[str, float | None]  # mean, p50, p99 of its scans (None: no scan)
    rate_mean: float | None  # mean achieved requests/s over the measured window
    intended_rate_mean: float | None  # open loop: the intended requests/s
    arrival: str | None  # the open loop's arrival process
    problems: list[str] = field(default_factory=list)

    @property
    def op_mix_text(self) -> str:
        """'update 59.9 %, read 40.1 %', largest first; each entry kept on one line (no-break
        spaces)."""
        return ", ".join(f"{op}\u00a0{100 * share:.1f}\u00a0%" for op, share in
                         sorted(self.op_mix.items(), key=lambda kv: -kv[1])) or "\u2013"


def _median(values: Sequence[float | None]) -> float | None:
    return median_ci(values).median


def _dist(shapes: Sequence[dict[str, Any]], get: Any) -> dict[str, float | None]:
    dists = [d for d in (get(s) for s in shapes) if isinstance(d, dict) and d.get("count")]
    return {q: _median([_num(d.get(q)) for d in dists]) for q in ("mean", "p50", "p99")}


def _part(shape: dict[str, Any], name: str) -> dict[str, Any]:
    v = shape.get(name)
    return v if isinstance(v, dict) else {}


def phase_row(group: str, phase: str, phases: Sequence[StoredPhase]) -> WorkloadRow:
    """The row of one group's phase over its repetitions' stored phases."""
    shapes = [ph.shape for ph in phases]
    counts: dict[str, float] = {}
    queries: dict[str, int] = {}
    for s in shapes:
        for op, n in (_part(s, "completed").get("ops") or {}).items():
            counts[op] = counts.get(op, 0.0) + (_num(n) or 0.0)
        for kind, n in (_part(s, "completed").get("queries") or {}).items():
            queries[kind] = queries.get(kind, 0) + int(_num(n) or 0)
    total = sum(counts.values())
    samples = [_part(s, "sample") for s in shapes if _part(s, "sample")]
    rates = [_part(s, "rate") for s in shapes]
    arrivals = {str(_part(r, "arrival").get("process")) for r in rates if _part(r, "arrival")}
    problems: list[str] = []
    for s in shapes:
        for p in s.get("problems") or []:
            if str(p) not in problems:
                problems.append(str(p))
    return WorkloadRow(
        group=group, phase=phase, runs=len(phases),
        requests=_median([_num(_part(s, "completed").get("requests")) for s in shapes]),
        op_mix={op: n / total for op, n in counts.items()} if total else {},
        queries=queries,
        sample_ops=_median([_num(s.get("ops")) for s in samples]),
        distinct_keys=_median([_num(s.get("distinct_keys")) for s in samples]),
        top_1pct_key_share=_median([_num(s.get("top_1pct_key_share")) for s in samples]),
        value_size=_dist(samples, lambda s: (s.get("value_size") or {}).get("all")),
        scan_length=_dist(samples, lambda s: s.get("scan_length")),
        rate_mean=_median([_num(r.get("mean_achieved")) for r in rates]),
        intended_rate_mean=_median([_num(r.get("mean_intended")) for r in rates]),
        arrival=", ".join(sorted(arrivals)) or None,
        problems=problems,
    )


def workload_rows(groups: Sequence[GroupRow], points: Sequence[StoredPoint]) -> list[WorkloadRow]:
    """The Workload section's rows: per group (in the summary's order), its testing phase and
    the running phase its verdict refers to, over its complete repetitions."""
    by_id = {p.id: p for p in points}
    out = []
    for g in groups:
        members = [by_id[pid] for pid in g.group.points if pid in by_id and by_id[pid].ok]
        per_phase: dict[str, list[StoredPhase]] = {}
        for pt in members:
            for ph in (pt.testing, pt.running):
                if ph is not None:
                    per_phase.setdefault(ph.name, []).append(ph)
        for name, phases in per_phase.items():
            out.append(phase_row(g.id, name, phases))
    return out


def _rate_series(ph: StoredPhase, scale: float, key: str) -> tuple[list[float], list[float]]:
    rate = _part(ph.shape, "rate")
    xs, ys = rate.get("t_end_s") or [], rate.get(key) or []
    pairs = [(x / scale, y) for x, y in zip(xs, ys, strict=False)
             if _num(x) is not None and _num(y) is not None]
    return [x for x, _ in pairs], [y for _, y in pairs]


def rate_figure(points: Sequence[StoredPoint]) -> Figure | None:
    """Requests/s over the running phase the verdict refers to: achieved per interval (a
    group's repetitions as one line), and intended (dashed, thin) where the arrivals vary."""
    phases = [pt.running for pt in points if pt.ok and pt.running is not None]
    if not phases:
        return None
    scale, unit = time_unit(phases)
    fig, (ax,) = new_figure(1)
    drawn = intended_drawn = False
    processes: set[str] = set()
    for g in plot_groups(points):
        st = style(g.index)
        runs = [pt.running for pt in g.points if pt.running is not None]
        series = [_rate_series(ph, scale, "achieved") for ph in runs]
        step = driver_interval_s(runs[0]) / scale if runs else 1.0
        drawn = draw_group(ax, series, step, st, g.label, marker=False) or drawn
        for ph in runs:
            arrival = _part(_part(ph.shape, "rate"), "arrival")
            if arrival.get("process"):
                processes.add(str(arrival["process"]))
        if runs:  # one intended line per group: the arrivals are the seed's, like the ops
            xs, ys = _rate_series(runs[0], scale, "intended")
            if xs and (max(ys) - min(ys)) > 0.01 * max(abs(max(ys)), 1.0):
                ax.plot(xs, ys, color=st.color, linestyle=(0, (2, 2)), linewidth=0.9,
                        label=f"{g.label}: intended")
                intended_drawn = True
    if not drawn:
        return None
    ax.set_title(running_title(points), fontsize="medium")
    ax.set_xlabel(f"time since phase start ({unit})")
    ax.set_ylabel("requests/s (the mix's operations)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    figure_legend(fig, [ax])
    arrivals = ", ".join(sorted(processes)) or "none recorded"
    intended = (" Dashed: the rate the arrival process intended, where it varies over the "
                "phase (the driver's intended arrivals per interval)." if intended_drawn else "")
    return Figure(RATE_FIGURE, "Workload: request rate over time",
                  "Requests of the workload's mix completed per second in each driver interval "
                  f"of the running phase (arrival process: {arrivals}; the drain after the "
                  f"arrivals ended left out).{intended}" + BAND_NOTE, render_png(fig))
