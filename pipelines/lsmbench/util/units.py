"""Parsing of human-friendly durations and byte sizes used in specs.

Durations: a number (seconds) or a string with a unit: "90", "90s", "1.5m",
"2h", "250ms". Sizes (engine options of type size): a number of bytes or
digits with a K, M or G suffix, "4M" (binary multiples: K = KiB), exactly as
the driver's option parser reads them (engines/adapters/option_parser.h).
This is the one size parser; throttle rates have their own grammar
(lsmbench.throttle.rates).
"""

from __future__ import annotations

import re

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z]*)\s*$")

_SIZE_RE = re.compile(r"([0-9]+)([KkMmGg]?)")
_SIZE_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30}


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
    """Bytes from an integer or a string of digits with an optional K, M or G suffix (KiB,
    MiB, GiB; either case): exactly the byte counts lsm-driver reads ("4M", "65536")."""
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    elif isinstance(value, str):
        text = value
    else:
        raise ValueError(f"expected a byte count such as 4M or 65536, got {value!r}")
    m = _SIZE_RE.fullmatch(text)
    if not m:
        raise ValueError(f"bad size {value!r} (expected digits with an optional suffix K, M "
                         "or G = KiB, MiB, GiB)")
    return int(m.group(1)) << _SIZE_SHIFT[m.group(2).lower()]


def format_duration(seconds: float) -> str:
    """'45s', '12m30s', '2h05m' for plans and progress lines."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"
