"""Mao et al.'s Fig. 8: runs too long for an engine, simulated. lsm-sim (engines/sim: the
engine's own policy code in the instant model) runs every bounded-depth policy over the
experiment's (k, flushes) pairs with equal flushes, writing a row at flush counts spaced evenly
on a log scale; the result is kept as RESULTS/<experiment>/sim.json (renamed into place when
complete), with each run's wall time (the paper: "these simulations took only minutes")."""

from __future__ import annotations

import math
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..mergesim import SimError, run_lsm_sim
from ..store import write_bytes_atomic
from ..util.paths import find_sim

SIM_FILE = "sim.json"
POLICIES = ("bigtable", "exploring", "constant", "minlatency", "binomial")
FLUSH_BYTES = 4 << 20  # the paper's 4 MB memtables
ROWS_PER_DECADE = 20
RUN_TIMEOUT_S = 600.0
GROWTH_SPAN = 8  # the growth laws are fitted over at least this factor of flushes


class SimLongError(RuntimeError):
    pass


class LongPoint(BaseModel):
    flushes: int
    write_amp: float
    avg_sstables: float
    sstables: int


class LongRun(BaseModel):
    policy: str
    k: int
    flushes: int
    seconds: float
    points: list[LongPoint]

    @property
    def large_n_from(self) -> int:
        """Where the growth laws are fitted from: well inside the large-n regime (16 x 4^k
        flushes; the regime begins at about 4^k)."""
        return 16 * 4 ** self.k

    def at(self, flushes: int) -> LongPoint | None:
        return next((p for p in self.points if p.flushes == flushes), None)

    def growth_exponent(self) -> float | None:
        """The slope of log(write amplification) against log(flushes) from large_n_from to
        the end: 1 / k for a policy whose write amplification grows as t^(1/k), 1 for one
        that grows linearly (Mao et al., Sec. V-C). None unless the run goes on for at least
        three doublings past large_n_from (a shorter span does not tell the laws apart)."""
        a, b = self.at(self.large_n_from), self.points[-1] if self.points else None
        if a is None or b is None or b.flushes < GROWTH_SPAN * a.flushes:
            return None
        return math.log(b.write_amp / a.write_amp) / math.log(b.flushes / a.flushes)


class LongSims(BaseModel):
    name: str
    flush_bytes: int
    runs: list[LongRun]

    def run(self, policy: str, k: int) -> LongRun | None:
        return next((r for r in self.runs if r.policy == policy and r.k == k), None)

    @property
    def ks(self) -> list[int]:
        return sorted({r.k for r in self.runs})


def checkpoints(k: int, flushes: int) -> list[int]:
    """Flush counts spaced evenly on a log scale (ROWS_PER_DECADE a decade) plus 16 x 4^k,
    below `flushes` (lsm-sim always adds the last)."""
    grid = {round(10 ** (i / ROWS_PER_DECADE))
            for i in range(int(math.log10(flushes) * ROWS_PER_DECADE) + 1)}
    grid.add(16 * 4 ** k)
    return sorted(f for f in grid if 1 <= f < flushes)


def _one(sim: Path, policy: str, k: int, flushes: int) -> LongRun:
    args = ["--policy", policy, "--k", str(k), "--flushes", str(flushes), "--flush-bytes",
            str(FLUSH_BYTES), "--checkpoints", ",".join(map(str, checkpoints(k, flushes))),
            "--format", "csv"]
    start = time.monotonic()
    try:
        out = run_lsm_sim(sim, args, (), timeout=RUN_TIMEOUT_S)
    except SimError as e:
        raise SimLongError(f"{policy} k={k}: {e}") from e
    seconds = time.monotonic() - start
    points = []
    for line in out.strip().splitlines()[1:]:
        cols = line.split(",")
        try:
            points.append(LongPoint(flushes=int(cols[2]), write_amp=float(cols[3]),
                                    avg_sstables=float(cols[4]), sstables=int(cols[5])))
        except (IndexError, ValueError) as e:
            raise SimLongError(f"{policy} k={k}: lsm-sim printed {line!r}: {e}") from None
    if not points or points[-1].flushes != flushes:
        raise SimLongError(f"{policy} k={k}: lsm-sim did not reach {flushes} flushes")
    return LongRun(policy=policy, k=k, flushes=flushes, seconds=seconds, points=points)


def run_long(out_dir: Path, name: str, runs: list[tuple[int, int]]) -> Path:
    """Every policy over every (k, flushes) of `runs`; keeps out_dir/sim.json."""
    sim = find_sim()
    if sim is None:
        raise SimLongError("lsm-sim is not built (make build)")
    result = LongSims(name=name, flush_bytes=FLUSH_BYTES,
                      runs=[_one(sim, p, k, n) for k, n in runs for p in POLICIES])
    out_dir.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(out_dir / SIM_FILE, result.model_dump_json(indent=1).encode())
    return out_dir / SIM_FILE


def read_long(results: Path, name: str) -> LongSims | None:
    path = results / name / SIM_FILE
    if not path.is_file():
        return None
    try:
        return LongSims.model_validate_json(path.read_text())
    except (OSError, ValidationError) as e:
        raise SimLongError(f"{path}: not the long simulations' result: {e}") from None
