"""InfluxDB line protocol: one point per line,

    measurement,tag=v field=1.5,n=3i 1700000000000000000

(measurement, tags, fields, timestamp in ns).

Escaping (checked against a real InfluxDB 1.6):
- measurement: comma and space are backslash-escaped;
- tag keys, tag values, field keys: comma, equals sign and space are backslash-escaped;
- string field values: double-quoted, with backslash and double quote backslash-escaped
  (newlines are kept as they are inside the quotes).
InfluxDB 1.x does not unescape a backslash in names (`a\\b` is stored with two backslashes) and
a name ending in a backslash breaks the line, while 2.x unescapes them: a backslash in a name
has no portable spelling, so names with one are refused (ValueError), as are newlines in names
and empty names. Empty tag values are left out (the protocol has no empty tag).

Field values: bool -> true/false; int -> `3i` (64-bit; a larger one is sent as a float); float
-> its shortest repr (`1e+20` is accepted); str -> quoted. None, NaN and +-inf are skipped: the
protocol cannot carry them, and a missing field is how InfluxDB says "no value". A line whose
fields are all skipped is not a point: to_line_protocol returns None for it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

_MEASUREMENT_ESCAPES = str.maketrans({",": r"\,", " ": r"\ "})
_NAME_ESCAPES = str.maketrans({",": r"\,", "=": r"\=", " ": r"\ "})
_STRING_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"'})

FieldValue = bool | int | float | str | None


def _check_name(kind: str, s: str) -> None:
    if not isinstance(s, str):
        raise TypeError(f"{kind} must be a string, got {type(s).__name__}")
    if not s:
        raise ValueError(f"empty {kind}")
    if "\\" in s:
        raise ValueError(f"{kind} {s!r} contains a backslash (not portable in line protocol)")
    if "\n" in s or "\r" in s:
        raise ValueError(f"{kind} {s!r} contains a newline")


def escape_measurement(s: str) -> str:
    _check_name("measurement", s)
    return s.translate(_MEASUREMENT_ESCAPES)


def escape_name(s: str, kind: str = "tag or field name") -> str:
    """Escape a tag key, tag value or field key."""
    _check_name(kind, s)
    return s.translate(_NAME_ESCAPES)


def format_field_value(value: FieldValue) -> str | None:
    """The line-protocol spelling of a field value, or None if it cannot be sent."""
    if value is None:
        return None
    if isinstance(value, bool):  # before int: bool is an int
        return "true" if value else "false"
    if isinstance(value, int):
        if _INT64_MIN <= value <= _INT64_MAX:
            return f"{value}i"
        value = float(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return '"' + value.translate(_STRING_ESCAPES) + '"'
    raise TypeError(f"unsupported field value type {type(value).__name__}: {value!r}")


def to_line_protocol(
    measurement: str,
    tags: Mapping[str, str],
    fields: Mapping[str, FieldValue],
    ts_ns: int | None = None,
) -> str | None:
    """One line (without the trailing newline), or None when no field has a value.

    Tags are sorted by key (InfluxDB's recommendation: it saves the server a sort). ts_ns is
    the timestamp in nanoseconds since the epoch; None lets the server stamp it (avoid that:
    re-publishing then duplicates instead of overwriting).
    """
    head = escape_measurement(measurement)
    for key in sorted(tags):
        value = tags[key]
        if value is None or value == "":
            continue
        head += f",{escape_name(key, 'tag key')}={escape_name(str(value), 'tag value')}"
    parts = []
    for key, value in fields.items():
        text = format_field_value(value)
        if text is not None:
            parts.append(f"{escape_name(key, 'field key')}={text}")
    if not parts:
        return None
    line = f"{head} {','.join(parts)}"
    if ts_ns is not None:
        if isinstance(ts_ns, bool) or not isinstance(ts_ns, int):
            raise TypeError(f"timestamp must be an int of nanoseconds, got {ts_ns!r}")
        line += f" {ts_ns}"
    return line
