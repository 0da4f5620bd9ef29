"""Closed sets of names the spec validates, each kept in exactly one place.

Engine options (policies, schedulers, ...) are not here: their names and values
come from the engines' option descriptions (lsmbench.engine_options).
"""

from __future__ import annotations

# Engines compiled into lsm-driver.
ENGINES: tuple[str, ...] = ("builtin", "null")

# Engine plugins this project builds (engines/plugin), into each build's plugins/ and, on a
# remote testbed, into the node's: a spec names them like a compiled-in engine, and a spec
# naming one is checked before they are built (leveldb's options against its committed
# description).
PROJECT_PLUGINS: tuple[str, ...] = ("rocksdb", "leveldb", "pebble", "fjall", "memkv")

# Testbed backends by short name.
TESTBEDS: tuple[str, ...] = ("local", "ssh", "terraform")

# Sink backends by short name (the fields of the spec's `sinks:` section).
SINKS: tuple[str, ...] = ("influx",)

# Matrix dimensions with a short name, mapped to the engine option they set.
DIMENSION_ALIASES: dict[str, str] = {
    "policy": "merge_policy",
    "scheduler": "merge_scheduler",
}


# pair: (docs/campaign-specs.md, "pair"): every point runs with two engine builds, told
# apart by this dimension, which the plan adds (a spec may not name it).
BUILD_DIMENSION = "build"

# engines: (docs/campaign-specs.md, "engines"): the matrix dimension whose values name the
# spec's engines, each an engine section of its own.
ENGINE_DIMENSION = "engine"
BUILD_REFERENCE = "reference"
BUILD_CANDIDATE = "candidate"

# A remote testbed's points may be pinned to one node (`testbed.node`); as a matrix dimension
# over the nodes every point runs on each node: what a nightly on a testbed of several nodes
# adds, so that each node has every group's repetitions (docs/tracking.md, "Nightly on a
# testbed").
NODE_DIMENSION = "testbed.node"


def choices(values: tuple[str, ...] | list[str]) -> str:
    """'a, b, c' as used in every 'choose from' message."""
    return ", ".join(values)
