"""The seed papers' figures that the generic ones do not draw, and which generic figure is the
counterpart of which paper figure.

* ``activity`` -- Pramanik & Venkatesh's Figs. 21-24: client writes and the disk, data per
  level, CPU, merge and flush output over time, on one time axis, bursts shaded.
* ``tradeoff`` -- Mao et al.'s Fig. 3: write amplification against the average SSTable count,
  one curve per merge policy.
* ``merge-cost`` -- Mao et al.'s Fig. 5: every merge's elapsed time against its bytes.
* ``vs-<parameter>`` -- Luo & Carey's Fig. 11 (size ratio) and Fig. 24 (partition size): the
  testing maximum and the p99 write latency against a numeric matrix parameter.

Each builder returns None when the campaign holds nothing for it. Every caption names the
paper's figure and what differs from the paper's setup.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from matplotlib.figure import Figure as MplFigure
from matplotlib.ticker import NullFormatter, ScalarFormatter
from scipy import stats

from ..engine_options import record_sizes
from ..method.cycles import events
from ..util.units import parse_size
from ..util.values import dig as _get
from ..util.values import number as _num
from .load import StoredPhase, StoredPoint
from .plotting import Figure, figure_legend, new_figure, render_png, style
from .series import label, plot_groups

MIB = float(1 << 20)
# Activity panels at most: one column per group (its first repetition).
MAX_ACTIVITY_GROUPS = 3
# An open-loop interval is in a burst when its intended arrival rate is above this share of
# the phase's highest: bursty arrivals alternate between the burst rate and (nearly) nothing.
BURST_SHARE = 0.5
_LEVEL_BYTES = "disk_bytes.L"


# ---------------------------------------------------------------- Pramanik & Venkatesh 21-24


def _activity_phase(pt: StoredPoint) -> StoredPhase | None:
    """The headline running phase when it recorded the process's figures, else the testing
    phase."""
    for ph in (pt.running, pt.testing):
        if ph is not None and any(isinstance(iv.get("process"), dict) for iv in ph.intervals):
            return ph
    return None


def bursts(ph: StoredPhase) -> list[tuple[float, float]]:
    """The (start, end) times of a phase's write bursts. Bursty arrivals (``bursts``): from
    the arrival configuration, as the driver schedules them (a burst of burst_s, or of
    burst_count requests at the rate, from time 0, then idle_s, repeated). Traced ones: runs of
    intervals whose intended rate exceeds BURST_SHARE of the phase's highest."""
    arrival = _get(ph.summary or {}, "config", "arrival") or {}
    process = arrival.get("process") if isinstance(arrival, dict) else None
    end_s = max((_num(iv.get("t_end_s")) or 0.0 for iv in ph.regular_intervals()), default=0.0)
    if process == "bursts":
        rate, idle = _num(arrival.get("rate")), _num(arrival.get("idle_s"))
        length = _num(arrival.get("burst_s"))
        count = _num(arrival.get("burst_count"))
        if length is None and count is not None and rate:
            length = count / rate
        if not length or length <= 0 or idle is None or idle < 0:
            return []
        period = length + idle
        return [(k * period, min(k * period + length, end_s))
                for k in range(int(end_s // period) + 1) if k * period < end_s]
    if process != "trace":
        return []
    rates = [(_num(iv.get("t_start_s")), _num(iv.get("t_end_s")),
              _num(_get(iv, "queue", "intended_rate"))) for iv in ph.regular_intervals()]
    top = max((r for _, _, r in rates if r is not None), default=0.0)
    spans: list[tuple[float, float]] = []
    for start, end, rate in rates:
        if start is None or end is None or rate is None or rate <= BURST_SHARE * top:
            continue
        if spans and abs(spans[-1][1] - start) < 1e-6:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def level_bytes(ph: StoredPhase) -> dict[int, tuple[list[float], list[float]]]:
    """Level -> (interval end times, the level's file bytes), from the engine metrics
    ``disk_bytes.L<i>``; every level seen in the phase has a value at every interval (0 where
    the engine reported no such level then: it held nothing)."""
    samples: list[tuple[float, dict[int, float]]] = []
    for iv in ph.regular_intervals():
        t = _num(iv.get("t_end_s"))
        engine = iv.get("engine") if isinstance(iv.get("engine"), dict) else {}
        levels = {int(key[len(_LEVEL_BYTES):]): float(value) for key, value in engine.items()
                  if key.startswith(_LEVEL_BYTES) and key[len(_LEVEL_BYTES):].isdigit()
                  and _num(value) is not None}
        if t is not None and levels:
            samples.append((t, levels))
    seen = sorted({level for _, levels in samples for level in levels})
    return {level: ([t for t, _ in samples], [levels.get(level, 0.0) for _, levels in samples])
            for level in seen}


@dataclass
class ActivitySeries:
    """One phase's per-interval figures, as the activity figure draws them (MiB/s, %)."""

    t: list[float]
    client_mib_s: list[float]
    disk_read_mib_s: list[float]
    disk_write_mib_s: list[float]
    cpu_percent: list[float]
    # The device's bytes (the phase's own cgroup's counters): only for a phase that ran alone
    # in its cgroup (own_cgroup), else empty
    device_write_mib_s: list[float] = field(default_factory=list)
    device_read_mib_s: list[float] = field(default_factory=list)


def activity_series(ph: StoredPhase, own_cgroup: bool = False) -> ActivitySeries:
    """Per regular interval (at its end): the clients' write throughput in MiB/s (writes x
    the workload's key + value bytes), the process's disk read and write MiB/s, and its CPU
    use in % of its CPUs; with own_cgroup (the phase ran alone in a cgroup of its own) the
    device's read and write MiB/s too."""
    workload = _get(ph.summary or {}, "config", "workload") or {}
    record = float(sum(record_sizes(workload))) if isinstance(workload, dict) else 0.0
    s = ActivitySeries([], [], [], [], [])
    for iv in ph.regular_intervals():
        t, start = _num(iv.get("t_end_s")), _num(iv.get("t_start_s"))
        if t is None or start is None or t <= start:
            continue
        dt = t - start
        proc = iv.get("process") if isinstance(iv.get("process"), dict) else {}
        writes = _num(_get(iv, "throughput", "writes"))
        s.t.append(t)
        s.client_mib_s.append(writes * record / MIB if writes is not None and record
                              else math.nan)
        read, write = _num(proc.get("disk_read_bytes")), _num(proc.get("disk_write_bytes"))
        s.disk_read_mib_s.append(read / dt / MIB if read is not None else math.nan)
        s.disk_write_mib_s.append(write / dt / MIB if write is not None else math.nan)
        cpu = _num(proc.get("cpu_utilization"))
        s.cpu_percent.append(cpu * 100 if cpu is not None else math.nan)
        if own_cgroup:
            dread, dwrite = (_num(proc.get("device_read_bytes")),
                             _num(proc.get("device_write_bytes")))
            s.device_read_mib_s.append(dread / dt / MIB if dread is not None else math.nan)
            s.device_write_mib_s.append(dwrite / dt / MIB if dwrite is not None else math.nan)
    if own_cgroup and all(math.isnan(v) for v in s.device_write_mib_s):
        s.device_write_mib_s, s.device_read_mib_s = [], []
    return s


def ran_in_own_cgroup(pt: StoredPoint, ph: StoredPhase) -> bool:
    """Whether the phase ran alone in a cgroup of its own (a throttled phase, v1 or v2): only
    then are its cgroup's device counters its own."""
    info = _get(pt.record, "phases", ph.name)
    return isinstance(info, dict) and info.get("cgroup_backend") in ("v1", "v2")


def activity_figure(points: Sequence[StoredPoint]) -> Figure | None:
    chosen = []
    for g in plot_groups(points):
        ph = _activity_phase(g.points[0])
        if ph is not None:
            chosen.append((g, ph))
    chosen = chosen[:MAX_ACTIVITY_GROUPS]
    if not chosen:
        return None
    ncols = len(chosen)
    fig = MplFigure(figsize=(4.8 * ncols if ncols > 1 else 8.0, 10.5), layout="constrained")
    grid = fig.subplots(5, ncols, squeeze=False, sharex="col")
    deepest = 0
    for _, ph in chosen:
        for e in events(ph.intervals, "merge"):
            deepest = max(deepest, int(_num(e.get("output_level")) or 0))
    level_colors = [f"C{i % 10}" for i in range(max(deepest, 8) + 1)]
    for c, (g, ph) in enumerate(chosen):
        ax_io, ax_levels, ax_cpu, ax_merge, ax_flush = (grid[r][c] for r in range(5))
        s = activity_series(ph, ran_in_own_cgroup(g.points[0], ph))
        # Interval means: each value holds over the interval that ends at its time
        ax_io.plot(s.t, s.client_mib_s, color="#0072B2", drawstyle="steps-pre",
                   label="client writes (key + value bytes)")
        ax_io.plot(s.t, s.disk_write_mib_s, color="#D55E00", linestyle="--",
                   drawstyle="steps-pre", label="writes dirtied (process; not device bytes)")
        ax_io.plot(s.t, s.disk_read_mib_s, color="#009E73", linestyle=":",
                   drawstyle="steps-pre", label="reads from the block layer (process)")
        if s.device_write_mib_s:
            ax_io.plot(s.t, s.device_write_mib_s, color="#CC79A7", drawstyle="steps-pre",
                       label="device writes (its cgroup's counters)")
        ax_io.set_ylabel("MiB/s")
        ax_io.set_title(f"{g.label} [{ph.name}]", fontsize="small")
        for level, (xs, ys) in level_bytes(ph).items():
            ax_levels.plot(xs, [y / MIB for y in ys], color=level_colors[level % len(level_colors)],
                           drawstyle="steps-post", label=f"level {level}")
        ax_levels.set_ylabel("data per level (MiB)")
        ax_cpu.plot(s.t, s.cpu_percent, color="#CC79A7", drawstyle="steps-pre")
        ax_cpu.set_ylabel("CPU (% of usable)")
        ax_cpu.set_ylim(0, 105)
        for e in events(ph.intervals, "merge"):
            if e.get("moved"):
                continue
            start, end = _num(e.get("start_s")), _num(e.get("end_s"))
            out = _num(e.get("output_bytes"))
            if start is None or end is None or out is None:
                continue
            level = int(_num(e.get("output_level")) or 0)
            ax_merge.bar(start, out / MIB, width=max(end - start, 0.02), align="edge",
                         color=level_colors[level % len(level_colors)], alpha=0.7)
        ax_merge.set_ylabel("merge output (MiB)")
        for e in events(ph.intervals, "flush"):
            end, out = _num(e.get("end_s")), _num(e.get("output_bytes"))
            if end is not None and out is not None:
                ax_flush.vlines(end, 0, out / MIB, color="#56B4E9")
        ax_flush.set_ylabel("flush to L0 (MiB)")
        ax_flush.set_xlabel("time since phase start (s)")
        spans = bursts(ph)
        for ax in (ax_io, ax_levels, ax_cpu, ax_merge, ax_flush):
            for start, end in spans:
                ax.axvspan(start, end, color="#56B4E9", alpha=0.15, linewidth=0)
            ax.grid(True, alpha=0.3)
            if ax is not ax_cpu:
                ax.set_ylim(bottom=0)
    figure_legend(fig, [grid[0][0], grid[1][0]])
    return Figure(
        "activity", "Writes, disk, data per level, CPU, merges and flushes over time",
        "The counterpart of Pramanik & Venkatesh's Figs. 21-24, one column per group (the first "
        "three; each group's first repetition; its headline running phase, or the testing phase "
        "without one), on "
        "one time axis: (1) the clients' write throughput (writes x the workload's key + value "
        "bytes) and the process's disk reads and writes, each a mean over a driver interval; "
        "(2) the file bytes at each level at each interval's end; (3) CPU use in % of the CPUs "
        "the process may use; "
        "(4) every merge's output bytes from its start to its end, coloured by output level; "
        "(5) every flush's bytes at its end. Shaded: the write bursts (bursty arrivals: as "
        "the arrival configuration schedules them; traced ones: intervals whose intended rate "
        "is above half the phase's highest). "
        "Differs from the paper: the engine and the clients are one process, so CPU and disk "
        "include the driver's client threads; disk bytes are the block layer's "
        "(/proc/self/io: reads the page cache serves count nothing, writes count when dirtied, "
        "so they can exceed a device throttle); a phase that ran in a cgroup of its own (a "
        "throttled one) also has its device writes, the bytes its cgroup's counters saw "
        "issued to the device (v2 io.stat, v1 blkio.throttle.io_service_bytes), the figure "
        "the throttle limits; the memtable's data is not drawn.",
        render_png(fig))


# ---------------------------------------------------------------- Mao et al. 3 and 5


def _phase_with_most_flushes(pt: StoredPoint) -> StoredPhase | None:
    best: tuple[float, StoredPhase] | None = None
    for ph in pt.phases.values():
        if ph.kind == "load":
            continue
        flushes = _num(_get(ph.summary or {}, "engine_metrics", "end", "flushes"))
        if flushes is not None and flushes > 0 and (best is None or flushes > best[0]):
            best = (flushes, ph)
    return best[1] if best else None


def _policy_of(pt: StoredPoint) -> str:
    """The curve a point belongs to in the trade-off figure: its merge policy (matrix value,
    else the engine option it ran with)."""
    params = pt.params
    if "merge_policy" in params:
        return str(params["merge_policy"])
    ph = pt.testing or pt.running
    options = _get(ph.summary or {}, "config", "engine_options") if ph else None
    return str(options.get("merge_policy", "?")) if isinstance(options, dict) else "?"


def _others(pt: StoredPoint, skip: str) -> str:
    return ", ".join(f"{k}={v}" for k, v in pt.params.items() if k != skip)


@dataclass
class TradeoffPoint:
    policy: str
    label: str  # the group's other parameters
    write_amplification: list[float]  # one per repetition
    average_sstables: list[float]


def tradeoff_points(points: Sequence[StoredPoint]) -> list[TradeoffPoint]:
    """Per group: its policy, and each repetition's final write amplification and average
    SSTable count (the engine's, in the phase with the most flushes)."""
    out = []
    for g in plot_groups(points):
        wa, avg = [], []
        for pt in g.points:
            ph = _phase_with_most_flushes(pt)
            end = _get(ph.summary or {}, "engine_metrics", "end") if ph else None
            a = _num(_get(end or {}, "write_amplification"))
            s = _num(_get(end or {}, "average_sstables"))
            if a is not None and s is not None and a > 0 and s > 0:
                wa.append(a)
                avg.append(s)
        if wa:
            first = g.points[0]
            out.append(TradeoffPoint(_policy_of(first), _others(first, "merge_policy")
                                     or label(first), wa, avg))
    return out


def _median_and_range(xs: list[float]) -> tuple[float, float, float]:
    m = statistics.median(xs)
    return m, m - min(xs), max(xs) - m


def tradeoff_figure(points: Sequence[StoredPoint]) -> Figure | None:
    rows = tradeoff_points(points)
    if len(rows) < 2:
        return None
    fig, (ax,) = new_figure(1, height=4.2)
    policies = list(dict.fromkeys(r.policy for r in rows))
    for i, policy in enumerate(policies):
        st = style(i)
        mine = sorted((r for r in rows if r.policy == policy),
                      key=lambda r: statistics.median(r.write_amplification))
        xs, ys, xerr, yerr = [], [], [[], []], [[], []]
        for r in mine:
            x, xlo, xhi = _median_and_range(r.write_amplification)
            y, ylo, yhi = _median_and_range(r.average_sstables)
            xs.append(x)
            ys.append(y)
            xerr[0].append(xlo)
            xerr[1].append(xhi)
            yerr[0].append(ylo)
            yerr[1].append(yhi)
            ax.annotate(r.label, (x, y), textcoords="offset points", xytext=(4, 4),
                        fontsize="x-small", color=st.color)
        ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, color=st.color, linestyle=st.linestyle,
                    marker=st.marker, capsize=2, label=policy)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(ScalarFormatter())
    ax.set_xlabel("write amplification, final (x, log scale)")
    ax.set_ylabel("average SSTable count over the flushes")
    ax.grid(True, which="both", alpha=0.3)
    figure_legend(fig, (ax,))
    return Figure(
        "tradeoff", "Write amplification against the average SSTable count",
        "The counterpart of Mao et al.'s Fig. 3: one curve per merge policy, a point per group "
        "(labelled with its other parameters): the engine's write amplification at the end of "
        "the phase with the most flushes (x, log-scaled) against its SSTable count averaged "
        "over that phase's flushes (y). Several repetitions: the median, with bars from their "
        "minimum to their maximum. Differs from the paper: the paper runs each policy over "
        "~24,000 flushes of its own key sequence; here a phase holds the flushes its duration "
        "allows, and write amplification includes the bytes the phase's own merges rewrote of "
        "the loaded data.", render_png(fig))


@dataclass
class MergeCosts:
    label: str
    mib: list[float]  # input bytes per merge
    seconds: list[float]  # start to end


def merge_costs(points: Sequence[StoredPoint]) -> list[tuple[int, MergeCosts]]:
    """Per group (with its style index): every merge that rewrote data (not a move) in the
    phase with the most flushes of each repetition."""
    out = []
    for g in plot_groups(points):
        costs = MergeCosts(g.label, [], [])
        for pt in g.points:
            ph = _phase_with_most_flushes(pt)
            for e in events(ph.intervals, "merge") if ph else []:
                size, start, end = (_num(e.get("input_bytes")), _num(e.get("start_s")),
                                    _num(e.get("end_s")))
                if e.get("moved") or size is None or start is None or end is None or size <= 0:
                    continue
                costs.mib.append(size / MIB)
                costs.seconds.append(max(end - start, 0.0))
        if costs.mib:
            out.append((g.index, costs))
    return out


def merge_cost_figure(points: Sequence[StoredPoint]) -> Figure | None:
    groups = merge_costs(points)
    if not groups or sum(len(c.mib) for _, c in groups) < 3:
        return None
    fig, (ax,) = new_figure(1, height=4.2)
    fig.set_size_inches(10.0, 4.2 + 0.25 * math.ceil(len(groups) / 2))  # room for the fits
    for index, c in groups:
        st = style(index)
        text = c.label
        if len(set(c.mib)) >= 3:
            fit = stats.linregress(c.mib, c.seconds)
            if fit.slope > 0:
                text = f"{c.label}: {1 / fit.slope:.0f} MiB/s, r={fit.rvalue:.2f}"
            top = max(c.mib)
            ax.plot([0, top], [fit.intercept, fit.intercept + fit.slope * top], color=st.color,
                    linestyle=st.linestyle, linewidth=1)
        ax.scatter(c.mib, c.seconds, color=st.color, marker=st.marker, s=10, alpha=0.6,
                   label=text)
    ax.set_xlabel("merge input (MiB)")
    ax.set_ylabel("merge elapsed time (s)")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    figure_legend(fig, (ax,))
    return Figure(
        "merge-cost", "Merge time against merged bytes",
        "The counterpart of Mao et al.'s Fig. 5: a point per merge that rewrote data (moves "
        "excluded), from its start to its end against the bytes it read, in the phase with "
        "the most flushes of every repetition; lines are least-squares fits (scipy), the legend "
        "gives 1 / slope as MiB/s and the correlation. Differs from the paper: the paper plots "
        "bytes written and merges that ran alone; here a scheduler may pause a merge or run "
        "several at once under one I/O budget, so the time includes its waits.",
        render_png(fig))


# ---------------------------------------------------------------- Luo & Carey 11 and 24


# Matrix parameter -> the paper figure that sweeps it.
PARAMETER_FIGURES: dict[str, str] = {
    "size_ratio": "Luo & Carey's Fig. 11 (impact of the size ratio on write stalls: the testing "
                  "maximum and the p99 write latency, per merge policy and scheduler)",
    "partition_bytes": "Luo & Carey's Fig. 24 (impact of the partition size on write stalls)",
}
_MIN_VALUES = 3  # a sweep of fewer values is no curve


def _value(v: object) -> float | None:
    """A matrix value as a number: a number, or a size such as "8M"."""
    if isinstance(v, bool):
        return None
    n = _num(v)
    if n is not None or not isinstance(v, str):
        return n
    try:
        return float(parse_size(v))
    except ValueError:
        return None


def numeric_dimensions(points: Sequence[StoredPoint]) -> list[str]:
    """Matrix parameters with at least three distinct numeric values among the points (and
    nothing else)."""
    values: dict[str, set[float]] = {}
    other: set[str] = set()
    for pt in points:
        for k, v in pt.params.items():
            n = _value(v)
            if n is None:
                other.add(k)
            else:
                values.setdefault(k, set()).add(n)
    return [k for k, vs in values.items() if len(vs) >= _MIN_VALUES and k not in other]


def _testing_max(pt: StoredPoint) -> float | None:
    return _num((pt.record.get("max_throughput") or {}).get("writes_per_s"))


def _running_p99_ms(pt: StoredPoint) -> float | None:
    run = pt.running
    p99 = _num(run.summary_get("write_latency_us", "p99")) if run else None
    return p99 / 1000 if p99 is not None else None


def parameter_series(points: Sequence[StoredPoint], dim: str
                     ) -> dict[str, dict[float, tuple[list[float], list[float]]]]:
    """Curve (the other parameters) -> the parameter's value -> (testing maxima, running p99s
    in ms) of the repetitions there."""
    out: dict[str, dict[float, tuple[list[float], list[float]]]] = {}
    for pt in points:
        x = _value(pt.params.get(dim))
        if not pt.ok or x is None:
            continue
        cell = out.setdefault(_others(pt, dim) or dim, {}).setdefault(x, ([], []))
        m, p = _testing_max(pt), _running_p99_ms(pt)
        if m is not None:
            cell[0].append(m)
        if p is not None:
            cell[1].append(p)
    return out


def tick_labels(points: Sequence[StoredPoint], dim: str, xs: Sequence[float]) -> list[str]:
    """Each value as the spec wrote it ("16M", not 1.67772e+07); a number as a number."""
    written = {_value(v): v for pt in points
               if isinstance(v := pt.params.get(dim), str) and _value(v) is not None}
    return [written.get(x, f"{x:g}") for x in xs]


MAX_CURVES = 8  # beyond this the legend outgrows the figure (a study's trials, say)


def parameter_figure(points: Sequence[StoredPoint], dim: str) -> Figure | None:
    """None unless the parameter is swept: some curve has _MIN_VALUES values of it (a study's
    trials, each with its own values of everything, make no curve)."""
    curves = {name: cells for name, cells in parameter_series(points, dim).items()
              if len(cells) >= 2}
    if not any(len(cells) >= _MIN_VALUES for cells in curves.values()) or \
            len(curves) > MAX_CURVES:
        return None
    fig, (ax_max, ax_p99) = new_figure(2)
    for i, (name, cells) in enumerate(curves.items()):
        st = style(i)
        for ax, which in ((ax_max, 0), (ax_p99, 1)):
            xs = [x for x in sorted(cells) if cells[x][which]]
            if not xs:
                continue
            meds = [_median_and_range(cells[x][which]) for x in xs]
            ax.errorbar(xs, [m for m, _, _ in meds],
                        yerr=[[lo for _, lo, _ in meds], [hi for _, _, hi in meds]],
                        color=st.color, linestyle=st.linestyle, marker=st.marker, capsize=2,
                        label=name if which == 0 else None)
    ax_max.set_ylabel("testing maximum (writes/s)")
    ax_p99.set_ylabel("p99 write latency, running (ms)")
    ax_p99.set_yscale("log")
    xs_all = sorted({x for cells in curves.values() for x in cells})
    for ax in (ax_max, ax_p99):
        ax.set_xlabel(dim)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs_all, tick_labels(points, dim, xs_all))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="both", alpha=0.3)
    ax_p99.yaxis.set_major_formatter(ScalarFormatter())
    ax_max.set_ylim(bottom=0)
    figure_legend(fig, (ax_max, ax_p99))
    ref = PARAMETER_FIGURES.get(dim)
    paper = (f" The counterpart of {ref}; differs from the paper: minutes, not hours, and "
             "this machine's disk under the campaign's I/O budget." if ref else "")
    return Figure(
        f"vs-{dim}", f"Testing maximum and p99 write latency against {dim}",
        f"Each curve holds the other matrix parameters fixed (legend) and varies {dim} "
        "(log2 axis): left, the testing phase's maximum write throughput; right, the p99 write "
        "latency of the headline running phase (from intended arrival). Several repetitions: "
        "the median, with bars from their minimum to their maximum." + paper, render_png(fig))


def parameter_figures(points: Sequence[StoredPoint]) -> list[Figure]:
    out = [parameter_figure(points, dim) for dim in numeric_dimensions(points)]
    return [f for f in out if f is not None]


# ---------------------------------------------------------------- the generic figures' papers


def _has_queries(points: Sequence[StoredPoint]) -> bool:
    return any(isinstance(iv.get("queries"), dict)
               for pt in points for ph in pt.phases.values() for iv in ph.intervals[:2])


def _dimensions(points: Sequence[StoredPoint]) -> set[str]:
    return {k for pt in points for k in pt.params}


def generic_references(points: Sequence[StoredPoint]) -> dict[str, str]:
    """Generic figure id -> the paper figures it is the counterpart of in this campaign."""
    dims = _dimensions(points)
    refs = {
        "throughput": "Luo & Carey's Fig. 1 and the instantaneous write throughput of Figs. 8-10, "
                      "19-21 and 23",
        "components": "the disk-component panels of Luo & Carey's Figs. 8-10",
        "latency": "the percentile write latencies of Luo & Carey's Figs. 9 and 10",
        "flushes": "Mao et al.'s Figs. 2 and 4 (write amplification over flushes; they also "
                   "count SSTables)",
    }
    if _has_queries(points):
        refs["queries"] = ("Luo & Carey's Figs. 14 and 16 (instantaneous query throughput under "
                           "writes, Sec. 5.2.4)")
        refs["latency"] += (" and, for the queries, the percentile query latencies of Figs. 15 "
                            "and 17")
    if dims & {"constraint", "component_constraint"}:
        refs["latency"] += "; with the constraint in the matrix, Fig. 12"
    if dims & {"write_control"}:
        refs["throughput"] += "; with the write control in the matrix, Fig. 13a"
        refs["latency"] += "; with the write control in the matrix, Fig. 13b"
    return refs


def with_generic_references(figures: list[Figure], points: Sequence[StoredPoint],
                            skip: set[str]) -> list[Figure]:
    """Each generic figure's caption names its paper counterparts (not those in ``skip``,
    which a more specific reference -- the datasets' -- already names)."""
    refs = generic_references(points)
    for f in figures:
        ref = refs.get(f.id)
        if ref and f.id not in skip:
            f.caption = f"{f.caption} The counterpart of {ref}."
    return figures
