"""Closed sets of names the spec validates, each kept in exactly one place.

Engine options (policies, schedulers, ...) are not here: their names and values
come from the engines' option descriptions (lsmbench.engine_options).
"""

from __future__ import annotations

# Engines the driver can measure (its adapters).
ENGINES: tuple[str, ...] = ("builtin", "rocksdb", "leveldb", "null")

# Testbed backends by short name.
TESTBEDS: tuple[str, ...] = ("local", "ssh", "terraform")

# Matrix dimensions with a short name, mapped to the engine option they set.
DIMENSION_ALIASES: dict[str, str] = {
    "policy": "merge_policy",
    "scheduler": "merge_scheduler",
}


def choices(values: tuple[str, ...] | list[str]) -> str:
    """'a, b, c' as used in every 'choose from' message."""
    return ", ".join(values)
