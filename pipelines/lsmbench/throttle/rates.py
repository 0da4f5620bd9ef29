"""The throttle's rate grammar: a spec's write_bps / read_bps / write_iops / read_iops value
as an absolute rate, possibly relative to the fio-calibrated disk (lsmbench.calibrate).

``resolve_relative`` resolves a value; ``check_rate`` checks one's syntax when validating a spec
(a percentage needs a profile, so only its range is checked then).
"""

from __future__ import annotations

import math
import re
from typing import Any, Protocol


class DiskProfileLike(Protocol):
    """What a percentage refers to: the calibrated disk's bandwidths and IOPS."""

    seq_write_bps: float
    seq_read_bps: float
    rand_write_iops: float
    rand_read_iops: float

# Rates are decimal like fio's, dd's and disk vendors' MB/s: MB = 10**6 bytes; MiB = 2**20.
_RATE_UNITS = {
    "B": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
}
_NUM = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_PCT_RE = re.compile(rf"^{_NUM}\s*%$")
_RATE_RE = re.compile(rf"^{_NUM}\s*([A-Za-z]*)(/s)?$")
_IOPS_RE = re.compile(rf"^{_NUM}\s*(iops|IOPS)?$")

# kind -> the profile attribute a percentage refers to
_RELATIVE_TO = {
    "write_bps": "seq_write_bps",
    "read_bps": "seq_read_bps",
    "write_iops": "rand_write_iops",
    "read_iops": "rand_read_iops",
}


def resolve_relative(
    value: object,
    profile: DiskProfileLike | None = None,
    *,
    kind: str = "write_bps",
    plain_unit: int = 1,
) -> int:
    """An absolute throttle value (bytes/s or IOPS, an int > 0) from a spec value.

    kind: write_bps, read_bps, write_iops or read_iops.
    Forms for *_bps: a plain number (times plain_unit, default bytes/s: pass 10**6 for a spec
    key counted in MB/s), a rate with a unit -- B/s, kB/s, MB/s, GB/s (decimal) or KiB/s, MiB/s,
    GiB/s (binary), "/s" optional --, or a percentage "50%" of the profile's sequential bandwidth.
    Forms for *_iops: a plain number, "N iops", or "50%" of the profile's random IOPS.
    """
    if kind not in _RELATIVE_TO:
        raise ValueError(f"unknown throttle kind {kind!r}: use {', '.join(_RELATIVE_TO)}")
    iops = kind.endswith("_iops")
    forms = (
        "a number of operations per second (500 or '500 iops') or a percentage of the "
        "calibrated disk ('50%')"
        if iops
        else "bytes per second (52428800), a rate with a unit (100MB/s, 100MiB/s, 1.5GB/s; "
        "MB = 10^6, MiB = 2^20 bytes) or a percentage of the calibrated disk ('50%')"
    )
    bad = ValueError(f"bad {kind} value {value!r}: use {forms}")
    if isinstance(value, bool):
        raise bad
    if isinstance(value, int | float):
        result = float(value) * plain_unit
    elif isinstance(value, str):
        text = value.strip()
        m = _PCT_RE.match(text)
        if m:
            pct = float(m.group(1))
            if not 0 < pct <= 100:
                raise ValueError(f"{kind} percentage must be in (0, 100], got {value!r}")
            if profile is None:
                raise ValueError(
                    f"{kind} {value!r} is relative to the disk profile, and there is none: run "
                    "`lsmbench calibrate` for this testbed first, or give an absolute value"
                )
            result = getattr(profile, _RELATIVE_TO[kind]) * pct / 100
        elif iops:
            m = _IOPS_RE.match(text)
            if not m:
                raise bad
            result = float(m.group(1))
        else:
            m = _RATE_RE.match(text)
            if not m:
                raise bad
            unit = m.group(2)
            if unit == "" and m.group(3) is None:
                result = float(m.group(1)) * plain_unit
            elif unit in _RATE_UNITS:
                result = float(m.group(1)) * _RATE_UNITS[unit]
            else:
                raise bad
    else:
        raise bad
    if not math.isfinite(result) or int(result) <= 0:
        raise ValueError(f"{kind} must come out positive, got {value!r} -> {result}")
    return int(result)


def check_rate(value: Any, kind: str) -> Any:
    """Syntax check of a spec's rate (None passes); returns the value unchanged."""
    if value is None:
        return value
    if isinstance(value, str):
        m = _PCT_RE.match(value.strip())
        if m:
            pct = float(m.group(1))
            if not 0 < pct <= 100:
                raise ValueError(
                    f"a percentage of the calibrated disk must be in (0, 100], got {value!r}")
            return value
    resolve_relative(value, None, kind=kind)
    return value


def is_relative(value: Any) -> bool:
    """A percentage of the calibrated disk (needs a profile to resolve)."""
    return isinstance(value, str) and value.strip().endswith("%")
