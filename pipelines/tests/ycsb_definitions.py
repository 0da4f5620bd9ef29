"""YCSB 0.17.0's core workloads as the tests check them (workloads/ycsb/README.md): the
operation mix of workloads/workload{a..f}, the committed summaries of YCSB's own client, and
the binomial tolerance every proportion is held to."""

from __future__ import annotations

import math

from repo_paths import REPO

EXPECTED = REPO / "workloads" / "ycsb" / "reference" / "expected"

YCSB_MIX = {
    "a": {"read": 0.5, "update": 0.5},
    "b": {"read": 0.95, "update": 0.05},
    "c": {"read": 1.0},
    "d": {"read": 0.95, "insert": 0.05},
    "e": {"scan": 0.95, "insert": 0.05},
    "f": {"read": 0.5, "rmw": 0.5},
}


def binomial_sigma(p: float, n: int) -> float:
    """sqrt(p (1 - p) / n) + 1/n (the 1/n: one op of rounding)."""
    return math.sqrt(p * (1 - p) / n) + 1 / n


def within_binomial(observed: float, p: float, n: int, sigmas: float = 5.0) -> bool:
    """|observed - p| <= sigmas binomial sigmas."""
    return abs(observed - p) <= sigmas * binomial_sigma(p, n)
