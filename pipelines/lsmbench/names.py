"""Closed sets of names the spec validates, each kept in exactly one place.

Engine options in general are validated by the driver's adapter (it exits 2
naming the bad option); the spec checks only the names it knows here, so a
typo in a policy or scheduler is caught before anything runs.
"""

from __future__ import annotations

# Merge policies of the bundled engine (lsm::Options::merge_policy).
POLICIES: tuple[str, ...] = (
    "leveling",
    "tiering",
    "size-tiered",
    "partitioned",
    "bigtable",
    "exploring",
    "constant",
    "minlatency",
    "binomial",
)

# Merge schedulers: the engine option `merge_scheduler`, the same list as
# lsm::sched::SchedulerNames() (engines/lsm/sched/scheduler.cc).
SCHEDULERS: tuple[str, ...] = ("single", "fair", "greedy", "greedy_k", "idle", "leveldb")

# partitioned leveling's file choice (lsm::policy::PartitionPickNames()).
PARTITION_PICKS: tuple[str, ...] = ("round-robin", "choose-best")

# Engines the driver can measure (its adapters).
ENGINES: tuple[str, ...] = ("builtin", "rocksdb", "leveldb", "null")

# Testbed backends by short name.
TESTBEDS: tuple[str, ...] = ("local", "ssh", "terraform")

# Matrix dimensions with a short name, mapped to the engine option they set.
DIMENSION_ALIASES: dict[str, str] = {
    "policy": "merge_policy",
    "scheduler": "merge_scheduler",
}

# Engine options whose values the spec checks, with their allowed values.
CHECKED_ENGINE_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "merge_policy": (POLICIES, "policy"),
    "merge_scheduler": (SCHEDULERS, "scheduler"),
    "partition_pick": (PARTITION_PICKS, "partition pick"),
}


def choices(values: tuple[str, ...] | list[str]) -> str:
    """'a, b, c' as used in every 'choose from' message."""
    return ", ".join(values)
