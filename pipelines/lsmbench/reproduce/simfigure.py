"""Mao et al.'s Fig. 7 from lsm-sim-validate's table: the engine's write amplification against
the simulator's, one series per policy (CONSTANT excluded, as in the paper), with the line
y = x and each policy's R^2 of the linear fit (scipy)."""

from __future__ import annotations

from matplotlib.ticker import ScalarFormatter
from scipy import stats

from ..report.figures import Figure, _legend, _new, _render, style
from .simtable import SimTable

EXCLUDED = ("constant",)


def agreement_series(table: SimTable) -> dict[str, list[tuple[float, float]]]:
    """Policy -> [(simulated WA, engine WA)] per k, in the table's order."""
    out: dict[str, list[tuple[float, float]]] = {}
    for r in table.rows:
        if r.policy not in EXCLUDED:
            out.setdefault(r.policy, []).append((r.sim_write_amp, r.engine_write_amp))
    return out


def r_squared(pairs: list[tuple[float, float]]) -> float | None:
    if len(pairs) < 3 or len({x for x, _ in pairs}) < 2:
        return None
    fit = stats.linregress([x for x, _ in pairs], [y for _, y in pairs])
    return float(fit.rvalue ** 2)


def agreement_figure(table: SimTable) -> Figure | None:
    series = agreement_series(table)
    if not series:
        return None
    fig, (ax,) = _new(1, height=4.2)
    lo = min(v for pairs in series.values() for p in pairs for v in p)
    hi = max(v for pairs in series.values() for p in pairs for v in p)
    ax.plot([lo, hi], [lo, hi], color="0.6", linestyle=":", label="y = x")
    for i, (policy, pairs) in enumerate(series.items()):
        st = style(i)
        r2 = r_squared(pairs)
        name = f"{policy} (R^2 {r2:.4f})" if r2 is not None else policy
        ax.plot([x for x, _ in pairs], [y for _, y in pairs], color=st.color,
                linestyle="none", marker=st.marker, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(ScalarFormatter())
    ax.set_xlabel("simulated write amplification (lsm-sim)")
    ax.set_ylabel("observed write amplification (engine)")
    ax.grid(True, which="both", alpha=0.3)
    _legend(fig, (ax,))
    flushes = max(r.flushes for r in table.rows)
    return Figure(
        "sim-agreement", "Observed against simulated write amplification",
        "The counterpart of Mao et al.'s Fig. 7: a point per policy and k, the engine's final "
        f"write amplification after {flushes:,} flushes (one at a time, merges complete before "
        "the next write) against lsm-sim's on exactly the engine's flush sizes; CONSTANT is "
        "left out as in the paper; the legend gives each policy's R^2 of the linear fit. "
        "Differs from the paper: ~24,000 flushes of 4 MB memtables there, and the engine here "
        "waits for its merges (the paper's engine ran free).", _render(fig))
