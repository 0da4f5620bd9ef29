"""lsm-sim's merges, level by level: how many flushes pass between merges into a level.

``lsm-sim`` (engines/sim) runs the builtin engine's own merge-policy code over a
sequence of flushes; ``--decisions`` writes every merge it applied (the flush
count, the stack position of its oldest input, the number of inputs). The
decisions do not name levels, so :func:`replay` rebuilds the stack and gives
each output the level the policy gives it (:func:`output_level`): leveling
and tiering by their rules, the policies whose merges all land on one level
(size-tiered: 0, the bounded-depth ones: 1) by that constant. Partitioned
leveling splits levels into files that the stack model does not have: it gets
no estimate.

The model is the instant one (merges complete at once): in flushes, not seconds,
and without updates (no merge drops anything). Against the quickstart's runs
(docs/orchestrator.md) the flushes between merges into the deepest level match
for tiering and are ~20 % short for leveling under uniform updates, where the
keys a flush shares with level 1 are dropped and level 1 fills more slowly.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .units import parse_size

SIM_TIMEOUT_S = 20.0
# Flushes simulated after the starting tree: at least this many, else as many as the
# starting tree took (a level's merges come at least once per the flushes that built it).
MIN_FLUSHES_AFTER = 100
MAX_FLUSHES = 100_000
# Merges into a level after the start needed before its cycle is trusted.
MIN_MERGES = 3

# Output level of every merge of these policies (the engine's own: size-tiered writes level
# 0, the bounded-depth policies kBoundedMergeLevel = 1).
CONSTANT_LEVEL = {"size-tiered": 0, "bigtable": 1, "exploring": 1, "constant": 1,
                  "minlatency": 1, "binomial": 1}
LEVELED = ("leveling", "tiering")
DEFAULT_POLICY = "tiering"  # the engine's default merge_policy

# Engine options that do not change what a policy decides in the instant model: left out of
# the simulation and its cache, so points that differ only in them share one run.
NOT_POLICY_OPTIONS = frozenset({
    "create_if_missing", "error_if_exists", "memory_components", "wal", "block_bytes",
    "bloom_bits_per_key", "merge_scheduler", "greedy_k", "idle_probe_ms",
    "idle_threshold_bytes_per_sec", "idle_mode", "idle_delay_ms", "max_components",
    "constraint", "max_components_per_level", "write_control", "slowdown_components",
    "verify_checksums", "io_budget_bytes_per_sec", "io_budget_charge_reads", "force_bytes",
})

# The builtin engine's memtable (engines/lsm/src/db/memtable.cc, arena.h): an entry takes the
# key and value plus an 8-byte sequence tag, two length varints and a skiplist node with its
# alignment; the memtable is full once its arena blocks (budget/16, in [256 B, 1 MiB]) reach
# the budget, i.e. with one block's worth less than the budget in entries. 43 bytes fits the
# 3,712 entries of a 4 MiB memtable of 16-byte keys and 1000-byte values the engine flushes.
MEMTABLE_ENTRY_OVERHEAD = 43

_DECISION_RE = re.compile(rb'"flush":(\d+),"time_s":[^,]*,"first":(\d+),"inputs":(\d+)')


class SimError(RuntimeError):
    """lsm-sim could not give the cycle (not runnable, refused the options, or a policy the
    replay does not know)."""


def records_per_flush(memtable_bytes: int, record_bytes: float) -> int:
    """The entries the builtin engine's memtable of memtable_bytes takes before it is flushed
    (records of record_bytes = key + value)."""
    block = min(max(memtable_bytes // 16, 256), 1 << 20)
    return max(1, int((memtable_bytes - block) // (record_bytes + MEMTABLE_ENTRY_OVERHEAD)))


def memtable_bytes(options: dict[str, str], default: int = 32 << 20) -> int:
    """The memtable budget of a phase's engine options (the engine's default without one)."""
    value = options.get("memtable_bytes")
    return parse_size(value) if value is not None else default


def output_level(policy: str, input_levels: list[int]) -> int:
    """The level a merge of components at input_levels writes (instant model).

    leveling: flushes (level 0) go into level 1; a full level i merges with level i+1 into
    level i+1, or moves down alone. tiering: T components of level i make one of level i+1.
    """
    if policy in CONSTANT_LEVEL:
        return CONSTANT_LEVEL[policy]
    low, high = min(input_levels), max(input_levels)
    if policy == "tiering":
        return high + 1
    if policy == "leveling":
        if low == 0:
            return 1
        return high if high > low else high + 1
    raise SimError(f"no level model for merge_policy {policy}")


@dataclass(frozen=True)
class SimCycles:
    """The merges lsm-sim applied after a starting tree, by the level they wrote."""

    policy: str
    flush_bytes: int
    start_flushes: int  # the phase starts from the tree these flushes built (the load)
    flushes: int  # simulated in all
    deepest: int | None  # the deepest level holding data at the start (None: empty tree)
    # level -> the flushes (after the start, each once) at which a merge into it or deeper ran
    into: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def _at(self, level: int) -> tuple[int, ...]:
        if level in self.into:
            return self.into[level]
        shallowest = min(self.into, default=None)
        # Every merge writes the shallowest level or deeper.
        return self.into[shallowest] if shallowest is not None and level < shallowest else ()

    def merges_into(self, level: int) -> int:
        """Flushes after the start at which a merge into the level (or deeper) ran."""
        return len(self._at(level))

    def cycle_flushes(self, level: int) -> float | None:
        """Mean flushes between merges into the level (or deeper) after the start; None with
        fewer than MIN_MERGES of them."""
        at = self._at(level)
        if len(at) < MIN_MERGES:
            return None
        return (at[-1] - at[0]) / (len(at) - 1)


def replay(policy: str, decisions: Iterable[tuple[int, int, int]], flushes: int,
           start_flushes: int, flush_bytes: int = 0) -> SimCycles:
    """The levels of lsm-sim's decisions (flush count, first stack position, inputs; in the
    order applied) over `flushes` flushes, and the merges into each level after the start."""
    stack: list[int] = []  # levels, oldest first
    todo = iter(decisions)
    nxt = next(todo, None)
    deepest: int | None = None
    by_level: dict[int, list[int]] = {}
    for f in range(1, flushes + 1):
        stack.append(0)
        while nxt is not None and nxt[0] == f:
            _, first, n = nxt
            if n < 1 or first + n > len(stack):
                raise SimError(f"lsm-sim decision at flush {f} does not fit the stack")
            level = output_level(policy, stack[first:first + n])
            stack[first:first + n] = [level]
            if f > start_flushes:
                at = by_level.setdefault(level, [])
                if not at or at[-1] != f:
                    at.append(f)
            nxt = next(todo, None)
        if f == start_flushes:
            deepest = max(stack)
    levels = sorted(by_level)
    into = {lv: tuple(sorted({f for deeper in levels if deeper >= lv for f in by_level[deeper]}))
            for lv in range(min(levels, default=0), max(levels, default=-1) + 1)}
    return SimCycles(policy, flush_bytes, start_flushes, flushes, deepest, into)


def parse_decisions(text: bytes) -> list[tuple[int, int, int]]:
    """(flush, first, inputs) of every line lsm-sim --decisions wrote."""
    return [(int(a), int(b), int(c)) for a, b, c in _DECISION_RE.findall(text)]


def sim_options(options: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The options that matter to the simulated policy, sorted (a cache key)."""
    return tuple(sorted((k, v) for k, v in options.items() if k not in NOT_POLICY_OPTIONS))


def simulate(sim: Path, options: dict[str, str], flush_bytes: int,
             start_flushes: int) -> SimCycles:
    """The merges by level after `start_flushes` flushes of flush_bytes, with the policy of
    these engine options (cached: points that share them share one run)."""
    return _simulate(str(sim), sim_options(options), flush_bytes, start_flushes)


@lru_cache(maxsize=256)
def _simulate(sim: str, options: tuple[tuple[str, str], ...], flush_bytes: int,
              start_flushes: int) -> SimCycles:
    policy = dict(options).get("merge_policy", DEFAULT_POLICY)
    if policy not in CONSTANT_LEVEL and policy not in LEVELED:
        raise SimError(f"merge_policy {policy}: its levels are files, which lsm-sim's stack "
                       "model does not have")
    if start_flushes >= MAX_FLUSHES:
        raise SimError(f"the starting tree's {start_flushes:,} flushes are more than the "
                       f"{MAX_FLUSHES:,} simulated here")
    after = max(MIN_FLUSHES_AFTER, start_flushes)
    while True:
        total = min(start_flushes + after, MAX_FLUSHES)
        result = replay(policy, _run(sim, options, flush_bytes, total), total, start_flushes,
                        flush_bytes)
        level = result.deepest if result.deepest is not None else 0
        if result.cycle_flushes(level) is not None or total >= MAX_FLUSHES:
            return result
        after *= 4


def run_lsm_sim(sim: str | Path, args: list[str], options: Iterable[tuple[str, str]],
                timeout: float = SIM_TIMEOUT_S) -> str:
    """lsm-sim's standard output for these flags and engine options (``--NAME VALUE``);
    SimError when it does not run or fails (its first line of error)."""
    cmd = [str(sim), *args]
    for k, v in options:
        cmd += [f"--{k}", v]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SimError(f"lsm-sim did not run: {e}") from e
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["(no message)"])[0]
        raise SimError(f"lsm-sim exited {r.returncode}: {last}")
    return r.stdout


def _run(sim: str, options: tuple[tuple[str, str], ...], flush_bytes: int,
         flushes: int) -> list[tuple[int, int, int]]:
    with tempfile.TemporaryDirectory(prefix="lsmbench-sim-") as d:
        out = Path(d) / "decisions.jsonl"
        run_lsm_sim(sim, ["--flushes", str(flushes), "--flush-bytes", str(flush_bytes),
                          "--decisions", str(out)], options)
        try:
            return parse_decisions(out.read_bytes())
        except OSError as e:
            raise SimError(f"lsm-sim wrote no decisions: {e}") from e
