"""Small pieces of English that output people read shares: counts with the right plural, and
an order for paths that numbers sort in ("matrix.x[99]" before "matrix.x[999]")."""

from __future__ import annotations

import re

_DIGITS = re.compile(r"(\d+)")


def plural(count: int, word: str, many: str | None = None) -> str:
    """'1 point', '2 points', '0 points'; ``many`` for a plural that is not word + 's'."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def natural_key(text: str) -> tuple[tuple[int, str | int], ...]:
    """A sort key that orders the runs of digits of a text by value, the rest as text:
    'x[2]' < 'x[10]' < 'x[99]' < 'x[999]' < 'y'."""
    # (0, text) and (1, number) parts: a number and a text at the same place still compare.
    return tuple((1, int(part)) if part.isdigit() else (0, part)
                 for part in _DIGITS.split(text) if part)
