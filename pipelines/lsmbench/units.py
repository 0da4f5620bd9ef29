"""Parsing of human-friendly durations and byte sizes used in specs.

Durations: a number (seconds) or a string with a unit: "90", "90s", "1.5m",
"2h", "250ms". Sizes: a number (bytes) or "4MiB", "4M", "64KB", "1GiB"
(binary multiples: K = KiB, as the driver's option parser reads them).
"""

from __future__ import annotations

import re

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z]*)\s*$")

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
}
_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*$")


def parse_duration(value: object) -> float:
    """Seconds from a number or a string such as '30s', '2m', '1h', '250ms'."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as 30s, 2m or 1h, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        m = _DURATION_RE.match(value.lower())
        if not m or m.group(2) not in _DURATION_UNITS:
            raise ValueError(
                f"bad duration {value!r} (expected a number of seconds or a number with a "
                f"unit: {', '.join(_DURATION_UNITS)})"
            )
        seconds = float(m.group(1)) * _DURATION_UNITS[m.group(2) or "s"]
    else:
        raise ValueError(f"expected a duration such as 30s, 2m or 1h, got {value!r}")
    if seconds < 0:
        raise ValueError(f"duration must not be negative, got {value!r}")
    return seconds


def parse_size(value: object) -> int:
    """Bytes from a number or a string such as '4MiB', '64K', '1G' (binary units)."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as 4MiB, got {value!r}")
    if isinstance(value, int):
        n = value
    elif isinstance(value, float):
        n = int(value)
    elif isinstance(value, str):
        m = _SIZE_RE.match(value)
        if not m or m.group(2).lower() not in _SIZE_UNITS:
            raise ValueError(f"bad size {value!r} (expected bytes or a number with K, M, G)")
        n = int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
    else:
        raise ValueError(f"expected a size such as 4MiB, got {value!r}")
    if n < 0:
        raise ValueError(f"size must not be negative, got {value!r}")
    return n


def format_duration(seconds: float) -> str:
    """'45s', '12m30s', '2h05m' for plans and progress lines."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"
