"""Markdown for the generated reference pages (docs/reference/): table cells and tables."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence


def code(text: object) -> str:
    """Inline code; a backtick inside takes a longer fence."""
    s = str(text)
    fence = "``" if "`" in s else "`"
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def cell(text: str) -> str:
    """Text that fits in one table cell: no line breaks, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A pipe table's lines; cells are escaped here."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, backticks and punctuation dropped (hyphens and
    underscores kept), spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")
