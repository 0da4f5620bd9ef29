"""Two campaigns side by side: per matching group, each figure and its ratio, and both verdicts.

Groups match by their matrix values (a group is a point's repetitions: its matrix values
without the repetition), whatever their order in the ids or the number of repetitions; each
figure is the group's median over its complete repetitions (:func:`load.group_rows`, the
report's group table) and the verdict is the group's. Groups of only one side are listed and
warned about; when no group matches at all there is nothing to compare and
:class:`CompareError` names the dimensions that differ. The ratio is this campaign / the
other (the baseline): above 1 means more throughput -- or more latency -- than the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine_options import option_string
from ..util.units import parse_size
from ..util.wording import natural_key, plural
from .load import Campaign, GroupRow, group_rows

# The figures compared, with their table heading and unit.
COMPARED: tuple[tuple[str, str], ...] = (
    ("max_write_throughput", "max throughput (writes/s)"),
    ("write_p99_ms", "p99 write latency (ms)"),
    ("proc_p99_ms", "p99 processing latency (ms)"),
    ("stall_s", "stall time (s)"),
    ("write_amplification", "write amplification"),
    ("avg_components", "avg disk components"),
)
SHOWN = 6  # groups named in a warning before "and N more"


class CompareError(ValueError):
    """Two campaigns with no group in common: nothing to compare (exit 2)."""


@dataclass
class Cell:
    this: float | None
    other: float | None

    @property
    def ratio(self) -> float | None:
        if self.this is None or self.other is None or self.other == 0:
            return None
        return self.this / self.other


@dataclass
class ComparedGroup:
    group: str  # this campaign's group id
    params: dict[str, Any]
    this: GroupRow
    other: GroupRow
    cells: dict[str, Cell]
    verdicts: tuple[str, str]  # this campaign's group verdict and the baseline's

    @property
    def runs(self) -> tuple[int, int]:
        """The complete repetitions each side's medians are over."""
        return self.this.group.complete, self.other.group.complete


@dataclass
class Comparison:
    this_name: str
    other_name: str
    other_path: str
    groups: list[ComparedGroup] = field(default_factory=list)
    only_this: list[str] = field(default_factory=list)
    only_other: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def match_key(params: dict[str, Any], group: str) -> tuple[tuple[str, str], ...] | str:
    """What two groups match by: their matrix values, in any order; a group stored without
    matrix values (hand-made, or older than repetitions) by its id."""
    if not params:
        return group
    return tuple(sorted((k, option_string(v)) for k, v in params.items()))


def _values(rows: list[GroupRow]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in rows:
        for k, v in r.group.params.items():
            vals = out.setdefault(k, [])
            if option_string(v) not in vals:
                vals.append(option_string(v))
    return out


def _order(value: str) -> tuple[int, float, Any]:
    """Numbers and sizes (1K, 8M) by their value, other words after them (digits by value)."""
    try:
        return 0, float(parse_size(value)), ()
    except ValueError:
        pass
    try:
        return 0, float(value), ()
    except ValueError:
        return 1, 0.0, natural_key(value)


def _set(values: list[str]) -> str:
    return "{" + ", ".join(sorted(values, key=_order)) + "}"


def dimension_differences(this: list[GroupRow], other: list[GroupRow], a: str,
                          b: str) -> list[str]:
    """Each dimension whose values differ between the two campaigns, or that only one has."""
    va, vb = _values(this), _values(other)
    out = []
    for dim in dict.fromkeys([*va, *vb]):
        if dim not in vb:
            out.append(f"dimension {dim} only in {a}")
        elif dim not in va:
            out.append(f"dimension {dim} only in {b}")
        elif set(va[dim]) != set(vb[dim]):
            out.append(f"dimension {dim} is {_set(va[dim])} in {a} and {_set(vb[dim])} in {b}")
    return out


def _named(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN])
    return shown + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def compare(this: Campaign, other: Campaign) -> Comparison:
    """The groups of both campaigns matched by their matrix values. Raises CompareError when
    no group matches."""
    # Two runs of one campaign (the usual case) are told apart by their directories.
    a, b = ((this.name, other.name) if this.name != other.name
            else (str(this.path), str(other.path)))
    out = Comparison(a, b, str(other.path))
    mine, theirs = group_rows(this.points), group_rows(other.points)
    by_key = {match_key(g.group.params, g.id): g for g in theirs}
    matched: set[str] = set()
    for g in mine:
        og = by_key.get(match_key(g.group.params, g.id))
        if og is None:
            out.only_this.append(g.id)
            continue
        matched.add(og.id)
        cells = {key: Cell(g.estimates[key].median, og.estimates[key].median)
                 for key, _ in COMPARED}
        out.groups.append(ComparedGroup(g.id, dict(g.group.params), g, og, cells,
                                        (g.group.verdict, og.group.verdict)))
    out.only_other = [g.id for g in theirs if g.id not in matched]
    if not out.groups:
        diffs = dimension_differences(mine, theirs, a, b) or [
            "the dimensions and their values are the same, but no combination of them is in "
            "both"]
        raise CompareError(f"nothing to compare: no group of {a} matches a group of {b} (groups "
                           f"match by their matrix values): {'; '.join(diffs)}")
    for side, ids, there in ((a, out.only_this, b), (b, out.only_other, a)):
        if ids:
            out.warnings.append(
                f"{plural(len(ids), 'group')} of {side} not in {there}, left out of the "
                f"comparison: {_named(ids)}")
    return out
