"""lsm-sim's merges, level by level: how many flushes pass between merges into a level.

``lsm-sim`` (engines/sim) runs the builtin engine's own merge-policy code over a
sequence of flushes; ``--decisions`` writes every merge it applied (the flush
count, the stack position of its oldest input, the number of inputs, the level
the policy gives its output). :func:`replay` rebuilds the stack from them and
counts the merges into each level. Partitioned leveling splits levels into
files, which the stack replay does not model: it gets no estimate.

Every engine fact here comes from the engine: the levels from lsm-sim's
decisions, the writes a memtable holds from ``lsm-sim --memtable-entries`` (the
engine's own memtable, filled as the DB fills it), the defaults and which
options the merge policy reads (``scope``) from the committed option
descriptions, which a driver test holds to the engine's option table.

The model is the instant one (merges complete at once): in flushes, not seconds,
and without updates (no merge drops anything). Against the quickstart's runs
(research/quickstart-verdicts.md) the flushes between merges into the deepest level match
for tiering and are ~20 % short for leveling under uniform updates, where the
keys a flush shares with level 1 are dropped and level 1 fills more slowly.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .engine_options import EngineDescription, description
from .method.cycles import MAJOR_MERGE_SHARE
from .util.units import parse_size

SIM_TIMEOUT_S = 20.0
# Flushes simulated after the starting tree: at least this many, else as many as the
# starting tree took (a level's merges come at least once per the flushes that built it).
MIN_FLUSHES_AFTER = 100
MAX_FLUSHES = 100_000
# Merges into a level after the start needed before its cycle is trusted.
MIN_MERGES = 3


class SimError(RuntimeError):
    """lsm-sim could not give the cycle (not runnable, refused the options, or a policy the
    replay does not know)."""


# The policy whose levels are files: the stack replay has no model of them.
FILE_LEVELS = frozenset({"partitioned"})


def _builtin() -> EngineDescription:
    desc = description("builtin")
    if desc is None:  # a packaging bug: the description is committed beside the package
        raise SimError("the builtin engine's option description is missing")
    return desc


def default_option(name: str) -> Any:
    """The builtin engine's default for an option (its committed description)."""
    opt = _builtin().get(name)
    if opt is None:
        raise SimError(f"the builtin engine has no option {name}")
    return opt.default


def not_policy_options() -> frozenset[str]:
    """The engine options the merge policy does not read (scope 'engine'): left out of the
    simulation and its cache, so points that differ only in them share one run."""
    return frozenset(o.name for o in _builtin().options if o.scope == "engine")


def records_per_flush(sim: str | Path, memtable_bytes: int, key_bytes: int,
                      value_bytes: int) -> int:
    """The writes of key_bytes + value_bytes one memtable of memtable_bytes takes before the
    builtin engine flushes it (lsm-sim --memtable-entries: the engine's own memtable)."""
    return _records_per_flush(str(sim), memtable_bytes, key_bytes, value_bytes)


@lru_cache(maxsize=64)
def _records_per_flush(sim: str, memtable_bytes: int, key_bytes: int, value_bytes: int) -> int:
    out = run_lsm_sim(sim, ["--memtable-entries", f"{key_bytes},{value_bytes}"],
                      [("memtable_bytes", str(memtable_bytes))])
    try:
        entries = int(json.loads(out)["entries"])
    except (ValueError, KeyError, TypeError) as e:
        raise SimError(f"lsm-sim --memtable-entries said {out.strip()[:80]!r}: {e}") from e
    if entries < 1:
        raise SimError(f"lsm-sim --memtable-entries said {entries} entries")
    return entries


def memtable_bytes(options: dict[str, str]) -> int:
    """The memtable budget of a phase's engine options (the engine's default without one)."""
    value = options.get("memtable_bytes")
    return parse_size(value) if value is not None else int(default_option("memtable_bytes"))


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
    # When every merge wrote level 0 (a one-level tree: size-tiered), the flushes at which a
    # major merge ran, one reading at least cycles.MAJOR_MERGE_SHARE of the tree: what the
    # engine's phases count as merges into its deepest level (cycles.merges_into). None else.
    major: tuple[int, ...] | None = None

    def _at(self, level: int) -> tuple[int, ...]:
        if level == 0 and self.major is not None:
            return self.major
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


def replay(policy: str, decisions: Iterable[tuple[int, int, int, int]], flushes: int,
           start_flushes: int, flush_bytes: int = 0) -> SimCycles:
    """lsm-sim's decisions (flush count, first stack position, inputs, output level; in the
    order applied) over `flushes` flushes, and the merges into each level after the start.
    A flush adds a component at level 0 (the engine's memory-to-disk level); a component's
    size is counted in flushes (a merge's output: its inputs', no key dropped)."""
    stack: list[int] = []  # levels, oldest first
    sizes: list[int] = []  # flushes in each component of the stack
    todo = iter(decisions)
    nxt = next(todo, None)
    deepest: int | None = None
    by_level: dict[int, list[int]] = {}
    major: list[int] = []
    for f in range(1, flushes + 1):
        stack.append(0)
        sizes.append(1)
        while nxt is not None and nxt[0] == f:
            _, first, n, level = nxt
            if n < 1 or first + n > len(stack):
                raise SimError(f"lsm-sim decision at flush {f} does not fit the stack")
            read = sum(sizes[first:first + n])
            # One input is a move (lsm-sim's, as the engine's): no merge, as
            # cycles.merges_into does not count the engine's.
            counted = f > start_flushes and n > 1
            if counted and read >= MAJOR_MERGE_SHARE * sum(sizes) and (
                    not major or major[-1] != f):
                major.append(f)
            stack[first:first + n] = [level]
            sizes[first:first + n] = [read]
            if counted:
                at = by_level.setdefault(level, [])
                if not at or at[-1] != f:
                    at.append(f)
            nxt = next(todo, None)
        if f == start_flushes:
            deepest = max(stack)
    levels = sorted(by_level)
    into = {lv: tuple(sorted({f for deeper in levels if deeper >= lv for f in by_level[deeper]}))
            for lv in range(min(levels, default=0), max(levels, default=-1) + 1)}
    one_level = deepest in (0, None) and set(by_level) <= {0}
    return SimCycles(policy, flush_bytes, start_flushes, flushes, deepest, into,
                     tuple(major) if one_level else None)


def parse_decisions(text: bytes) -> list[tuple[int, int, int, int]]:
    """(flush, first, inputs, level) of every line lsm-sim --decisions wrote."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append((int(d["flush"]), int(d["first"]), int(d["inputs"]), int(d["level"])))
        except (ValueError, KeyError, TypeError) as e:
            raise SimError(f"lsm-sim --decisions line {number} is not a decision: {e}") from e
    return out


def sim_options(options: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The options that matter to the simulated policy, sorted (a cache key)."""
    ignored = not_policy_options()
    return tuple(sorted((k, v) for k, v in options.items() if k not in ignored))


def simulate(sim: Path, options: dict[str, str], flush_bytes: int,
             start_flushes: int, key_space_bytes: int = 0) -> SimCycles:
    """The merges by level after `start_flushes` flushes of flush_bytes, with the policy of
    these engine options (cached: points that share them share one run). key_space_bytes > 0:
    the flushes after the start update that much loaded data (lsm-sim --key-space), the start's
    are the load's (distinct keys)."""
    return _simulate(str(sim), sim_options(options), flush_bytes, start_flushes, key_space_bytes)


@lru_cache(maxsize=256)
def _simulate(sim: str, options: tuple[tuple[str, str], ...], flush_bytes: int,
              start_flushes: int, key_space_bytes: int = 0) -> SimCycles:
    policy = dict(options).get("merge_policy", str(default_option("merge_policy")))
    if policy in FILE_LEVELS:
        raise SimError(f"merge_policy {policy}: its levels are files, which the stack replay "
                       "of lsm-sim's decisions does not model")
    if start_flushes >= MAX_FLUSHES:
        raise SimError(f"the starting tree's {start_flushes:,} flushes are more than the "
                       f"{MAX_FLUSHES:,} simulated here")
    after = max(MIN_FLUSHES_AFTER, start_flushes)
    while True:
        total = min(start_flushes + after, MAX_FLUSHES)
        result = replay(policy, _run(sim, options, flush_bytes, total,
                                     start_flushes if key_space_bytes > 0 else 0,
                                     key_space_bytes), total, start_flushes, flush_bytes)
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
         flushes: int, load_flushes: int = 0,
         key_space_bytes: int = 0) -> list[tuple[int, int, int, int]]:
    """lsm-sim's decisions over `flushes` flushes in all, the first `load_flushes` of them the
    load's (their decisions count flushes from the first load flush on, as replay does)."""
    extra = (["--load-flushes", str(load_flushes), "--key-space", str(key_space_bytes)]
             if key_space_bytes > 0 else [])
    with tempfile.TemporaryDirectory(prefix="lsmbench-sim-") as d:
        out = Path(d) / "decisions.jsonl"
        run_lsm_sim(sim, ["--flushes", str(flushes - load_flushes), "--flush-bytes",
                          str(flush_bytes), *extra, "--decisions", str(out)], options)
        try:
            return parse_decisions(out.read_bytes())
        except OSError as e:
            raise SimError(f"lsm-sim wrote no decisions: {e}") from e
