"""What every command prints for people: tables and lines that never break a word or a number
across lines.

The width is COLUMNS when set, else the terminal's -- also when the output is piped and the
terminal is on stdin or stderr; with no terminal at all (a file, CI) lines are as long as their
content, for grep. A table is one line per row when it fits the width; else each row is stacked
as a block under its first cell, "label  value" lines with the values wrapped between words. A
line of text is wrapped between words, its continuation indented. `lsmbench ls`, `validate`,
`plan` (and `--predict`), `tune` and `report` print through here.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

# A width no output reaches: the table's own, unwrapped, where no terminal sets one.
UNBOUNDED = 100_000


def terminal_width() -> int | None:
    """The width to lay the output out in: COLUMNS when set, else the terminal's -- stdout's,
    or, when stdout is piped (`ls | cat`), stdin's or stderr's, as rich looks for it; None
    when no terminal is attached at all (rich would assume 80 columns there)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    for fd in (1, 0, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (OSError, ValueError):
            continue
        if width > 0:
            return width
    return None


def make_console(width: int | None, stderr: bool = False) -> Console:
    """A console for ``width`` columns (None: no limit), no highlighting, no markup."""
    return Console(width=width or UNBOUNDED, highlight=False, stderr=stderr)


# A number stays with what qualifies it ("at most ~20m18s", "<= 1m15s") and with its unit
# ("60 s", "295.3 MiB", "4,371 writes/s"): the spaces between them do not break a line.
_QUALIFIED = re.compile(r"(\b(?:most|least|to)|[<>]=)\s+(?=[~0-9])"
                        r"|(\b(?:at|up))\s+(?=(?:most|least|to)\s+[~0-9])")
_UNIT = re.compile(r"([0-9])\s+(?=(?:s|ms|us|min|h|%|x|B|KiB|MiB|GiB|TiB|KB|MB|GB|MB/s|"
                   r"writes/s|bytes|bytes/s|IOPS)(?![\w/]))")
_NBSP = "\u00a0"


def wrap(line: str, width: int | None) -> list[str]:
    """A line wrapped between words for the width, each continuation indented two columns more
    than the line itself; a word longer than the line is left whole, and a number is not
    parted from its qualifier or its unit."""
    if width is None:
        return [line]
    lead = line[:len(line) - len(line.lstrip(" "))]
    glued = _UNIT.sub(r"\1" + _NBSP,
                      _QUALIFIED.sub(lambda m: (m[1] or m[2]) + _NBSP, line))
    # textwrap breaks at ASCII whitespace only: a no-break space holds the parts together.
    parts = textwrap.wrap(glued, width, subsequent_indent=lead + "  ", break_long_words=False,
                          break_on_hyphens=False, drop_whitespace=True) or [""]
    return [p.replace(_NBSP, " ") for p in parts]


def say(console: Console, line: str, width: int | None) -> None:
    """A line of text wrapped between words for the width (rich would fold a path longer than
    the line)."""
    for part in wrap(line, width):
        console.print(Text(part), soft_wrap=True)


def final(console: Console, line: str, width: int | None, quiet: bool) -> None:
    """A command's final summary line: wrapped as any line, but with --quiet on one line
    whatever the width -- exactly one line, for scripts."""
    say(console, line, None if quiet else width)


def natural_width(console: Console, table: Table) -> int:
    """The table's width on one line per row, measured without the console's width, which
    would clamp it."""
    return Measurement.get(console, console.options.update(max_width=UNBOUNDED), table).maximum


def print_layout(console: Console, table: Table, blocks: Iterable[tuple[Text, Table]],
                 width: int | None) -> bool:
    """The table when it fits the width (or there is none), else the blocks, a blank line
    between them. True when the table was printed."""
    if width is None or natural_width(console, table) <= width:
        console.print(table)
        return True
    for i, (heading, block) in enumerate(blocks):
        if i:
            console.print()
        # A heading is one word (an id): longer than the line, the terminal wraps it, not rich.
        console.print(heading, soft_wrap=True)
        console.print(block)
    return False


@dataclass
class Rows:
    """A table of text cells, laid out by :func:`print_layout`: one line per row, no cell
    wrapped, or per row a block headed by its first cell."""

    headings: Sequence[str]
    rows: list[Sequence[str]] = field(default_factory=list)
    right: frozenset[int] = frozenset()  # the columns aligned right (numbers)
    title: str | None = None
    prefix: str = ""  # before the first cell in a block's heading ("trial " for "trial 3")

    def add(self, *cells: str) -> None:
        self.rows.append(cells)

    def table(self) -> Table:
        table = Table(box=None, header_style="bold", pad_edge=False)
        for i, heading in enumerate(self.headings):
            table.add_column(heading, no_wrap=True,
                             justify="right" if i in self.right else "left")
        for row in self.rows:
            table.add_row(*map(Text, row))
        return table

    def blocks(self) -> Iterator[tuple[Text, Table]]:
        for row in self.rows:
            block = Table.grid(padding=(0, 2), pad_edge=True)
            block.add_column(no_wrap=True)
            block.add_column()
            for label, value in zip(self.headings[1:], row[1:], strict=True):
                if value:
                    block.add_row(label, Text(value))
            yield Text(self.prefix + row[0], style="bold"), block

    def print(self, console: Console, width: int | None) -> None:
        if self.title:
            say(console, self.title, width)
        print_layout(console, self.table(), self.blocks(), width)
