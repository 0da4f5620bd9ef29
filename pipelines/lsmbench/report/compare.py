"""Two campaigns side by side: per matching point, each figure and its ratio.

Points match by id (the id is derived from the matrix values, so the same
configuration has the same id in both campaigns); points of only one side are
listed as unmatched. The ratio is this campaign / the other (the baseline):
above 1 means more throughput -- or more latency -- than the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .load import Campaign, Row, point_row

# The figures compared, with their table heading and unit.
COMPARED: tuple[tuple[str, str], ...] = (
    ("max_write_throughput", "max throughput (writes/s)"),
    ("write_p99_ms", "p99 write latency (ms)"),
    ("proc_p99_ms", "p99 processing latency (ms)"),
    ("stall_s", "stall time (s)"),
    ("write_amplification", "write amplification"),
    ("avg_components", "avg disk components"),
)


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
class ComparedPoint:
    point: str
    this: Row
    other: Row
    cells: dict[str, Cell]
    verdicts: tuple[str | None, str | None]  # this run's and the baseline's, the JSON's words


@dataclass
class Comparison:
    this_name: str
    other_name: str
    other_path: str
    points: list[ComparedPoint] = field(default_factory=list)
    only_this: list[str] = field(default_factory=list)
    only_other: list[str] = field(default_factory=list)


def compare(this: Campaign, other: Campaign) -> Comparison:
    # Two runs of one campaign (the usual case) are told apart by their directories.
    names = ((this.name, other.name) if this.name != other.name
             else (str(this.path), str(other.path)))
    out = Comparison(names[0], names[1], str(other.path))
    other_ids = {p.id for p in other.points}
    for pt in this.points:
        op = other.point(pt.id)
        if op is None:
            out.only_this.append(pt.id)
            continue
        a, b = point_row(pt), point_row(op)
        cells = {key: Cell(getattr(a, key), getattr(b, key)) for key, _ in COMPARED}
        out.points.append(ComparedPoint(pt.id, a, b, cells, (a.verdict, b.verdict)))
    this_ids = {p.id for p in this.points}
    out.only_other = sorted(other_ids - this_ids)
    return out
