"""What a trial measured, in the tune section's metric names, read from its stored point
through the same :class:`lsmbench.method.groups.Repetition` the grouped verdicts use."""

from __future__ import annotations

from ..method.groups import Repetition
from ..spec.tune import METRICS, Bound
from ..store import STATE_COMPLETE


def metric_value(rep: Repetition, name: str) -> float | None:
    """The metric of one stored point (None: not measured -- failed, or its running phase
    skipped). max_sustainable_rate is 0 when the search found none (not even its low)."""
    if rep.state != STATE_COMPLETE:
        return None
    if name == "max_write_throughput":
        return rep.max_write_throughput
    if name == "max_sustainable_rate":
        if not rep.searched:
            return None
        return rep.max_sustainable_rate if rep.max_sustainable_rate is not None else 0.0
    if name == "sustainable":
        return None if rep.verdict is None else float(rep.verdict == "sustainable")
    if name == "stall_time":
        return rep.stall_s
    return getattr(rep, f"{name}_s", None)


def direction(name: str) -> str:
    return METRICS[name][1]


def violation(rep: Repetition, bound: Bound) -> float | None:
    """Optuna's constraint value: <= 0 when the bound holds, the relative excess otherwise
    (None: not measured)."""
    x = metric_value(rep, bound.metric)
    if x is None:
        return None
    scale = abs(bound.value) or 1.0
    return (x - bound.value) / scale if bound.op == "<=" else (bound.value - x) / scale


def violations(rep: Repetition, bounds: list[Bound]) -> list[float]:
    """One value per bound; a bound that was not measured counts as violated (1.0)."""
    out = []
    for b in bounds:
        v = violation(rep, b)
        out.append(1.0 if v is None else v)
    return out
