"""Reading numbers out of stored JSON (point.json, summary.json, time series), tolerantly: a
missing key, a wrong type, a bool or a non-finite value is None, never an exception."""

from __future__ import annotations

import math
from typing import Any


def number(v: Any) -> float | None:
    """v as a finite float; None for anything else (bools included)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v) if math.isfinite(v) else None


def dig(obj: Any, *path: str) -> Any:
    """obj[path[0]][path[1]]...; None where a level is missing or not a mapping."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj
