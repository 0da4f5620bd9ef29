"""The reference pages made from the code, docs/reference/: the command line (cli.md, from
build_parser()) and the campaign spec (spec.md, from the spec's models). A test compares the
committed pages with them (pipelines/tests/docs/test_reference_current.py).

    python -m lsmbench.cli.reference [--out DIR] [--check]

docs/reference/engine-options.md is lsm-driver's (`make docs` writes all three).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..spec.reference import spec_page
from ..util.markdown import anchor, code, table
from ..util.paths import project_root

REGENERATE = ".venv/bin/python -m lsmbench.cli.reference (or make docs)"
# Usage lines are wrapped at this width whatever the terminal's.
WIDTH = 100
# Defaults that depend on the machine, shown as they are on a fresh clone.
_ENVIRONMENT = ("LSMBENCH_RESULTS",)


@dataclass(frozen=True)
class Command:
    name: str  # "track record"; "" for lsmbench itself
    parser: argparse.ArgumentParser
    help: str

    @property
    def title(self) -> str:
        return code(self.name or "lsmbench")


def commands(parser: argparse.ArgumentParser) -> list[Command]:
    """lsmbench and each of its commands and subcommands, in the parser's order."""
    out = [Command("", parser, parser.description or "")]

    def visit(p: argparse.ArgumentParser, prefix: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {a.dest: a.help or "" for a in action._choices_actions}
                for name, sub in action.choices.items():
                    out.append(Command(f"{prefix} {name}".strip(), sub, helps.get(name, "")))
                    visit(sub, f"{prefix} {name}".strip())

    visit(parser, "")
    return out


def _usage(parser: argparse.ArgumentParser) -> str:
    own = parser.formatter_class
    parser.formatter_class = lambda prog: own(prog, width=WIDTH)  # type: ignore[call-arg]
    try:
        return parser.format_usage().rstrip()
    finally:
        parser.formatter_class = own


def _shown(value: Any) -> str:
    """A default as the page shows it: a path in the checkout relative to it."""
    text = str(value)
    root = project_root()
    if os.path.isabs(text) and Path(text).is_relative_to(root):
        return str(Path(text).relative_to(root))
    return text


def _help(action: argparse.Action, prog: str) -> str:
    """The option's help as --help prints it (%(default)s and the like filled in)."""
    params = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
    params.update(prog=prog, default=_shown(action.default))
    if action.choices is not None:
        params["choices"] = ", ".join(map(str, action.choices))
    text = (action.help or "") % params
    if isinstance(action, argparse._AppendAction) and "repeatable" not in text:
        text += "; repeatable"
    return text


def _argument(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.metavar is not None:
        metavar = str(action.metavar)
    elif action.choices is not None:
        metavar = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        metavar = action.dest.upper() if action.option_strings else action.dest
    shapes = {None: "{0}", "?": "[{0}]", "*": "[{0} ...]", "+": "{0} [{0} ...]"}
    shape = shapes.get(action.nargs) if isinstance(action.nargs, str | None) else None
    return (shape or " ".join(["{0}"] * int(action.nargs or 1))).format(metavar)


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS, []):
        return ""
    return code(_shown(action.default))


def _rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    rows = []
    # The positionals first, as a command line starts with them; then the options.
    for action in sorted(parser._actions, key=lambda a: bool(a.option_strings)):
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if not action.help:
            raise ValueError(f"{parser.prog} {'/'.join(action.option_strings) or action.dest}: "
                             "no help; the reference needs one")
        if action.option_strings:
            name = ", ".join(code(o) for o in action.option_strings)
            argument = _argument(action)
        else:
            name = code(_argument(action))
            argument = "positional"
        rows.append([name, code(argument) if action.option_strings and argument else argument,
                     _default(action), _help(action, parser.prog)])
    return rows


def _section(command: Command, subcommands: list[Command]) -> list[str]:
    depth = 2 + command.name.count(" ")
    lines = ["", f"{'#' * depth} {command.title}", ""]
    if command.help:
        lines += [command.help, ""]
    lines += ["```text", _usage(command.parser), "```"]
    rows = _rows(command.parser)
    if rows:
        lines += ["", *table(["option", "argument", "default", "description"], rows)]
    if subcommands:
        lines += ["", "Commands: " + ", ".join(_link(c) for c in subcommands) + "."]
    return lines


def _link(command: Command) -> str:
    return f"[{command.title}](#{anchor(command.title)})"


@contextmanager
def _fresh_environment() -> Iterator[None]:
    saved = {k: os.environ.pop(k) for k in _ENVIRONMENT if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def cli_page(parser: argparse.ArgumentParser | None = None) -> str:
    """docs/reference/cli.md: every command of ``parser`` (default: lsmbench's)."""
    if parser is None:
        from . import build_parser

        with _fresh_environment():
            parser = build_parser()
    found = commands(parser)
    top = [c for c in found if c.name and " " not in c.name]
    lines = [
        "<!-- Generated by `python -m lsmbench.cli.reference` from build_parser() in "
        "pipelines/lsmbench/cli/__init__.py; do not edit (a test compares). -->",
        "# Command-line reference",
        "",
        "Each command with its usage, what it does and its options. "
        "Every command also takes `-h` or `--help`. "
        "Exit codes and output: [commands.md](../commands.md).",
        "",
        *table(["command", "what it does"], [[_link(c), c.help] for c in top]),
    ]
    for command in found:
        subcommands = [c for c in found if c.name.rpartition(" ")[0] == command.name]
        lines += _section(command, subcommands if command.name else [])
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """The generated pages by file name."""
    return {"cli.md": cli_page(), "spec.md": spec_page()}


def stale(out: Path, made: dict[str, str] | None = None) -> list[Path]:
    """The pages under ``out`` that differ from what the code makes now."""
    made = pages() if made is None else made
    return [out / name for name, text in made.items()
            if not (out / name).is_file() or (out / name).read_text() != text]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lsmbench.cli.reference",
                                 description="Write docs/reference/cli.md and spec.md.")
    ap.add_argument("--out", type=Path, default=project_root() / "docs" / "reference",
                    help="the directory of the pages (default: docs/reference)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when a page is not current")
    args = ap.parse_args(argv)
    made = pages()
    if args.check:
        old = stale(args.out, made)
        for path in old:
            print(f"{path} is stale: regenerate it with {REGENERATE}", file=sys.stderr)
        return 1 if old else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in made.items():
        (args.out / name).write_text(text)
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
