"""What the commands share: JSON output, spec errors, the progress reporter, how a stopped or
interrupted run ends, and the results store's history."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..util.exits import EXIT_ENV, EXIT_INTERRUPTED, EXIT_USAGE
from ..util.wording import plural


def print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def spec_errors(e: Any, path: str, as_json: bool) -> int:
    if as_json:
        print_json({"valid": False, "spec": path,
                     "errors": [{"path": p, "message": m} for p, m in e.errors]})
    else:
        print(f"{path}: {plural(len(e.errors), 'error')}", file=sys.stderr)
        for line in e.lines():
            print(f"  {line}", file=sys.stderr)
    return EXIT_USAGE


def history_load_s(results: Path, campaign: str) -> float | None:
    from ..store import Store

    return Store(results).mean_load_s(campaign)


def history_phase_s(results: Path, campaign: str) -> dict[str, float]:
    from ..store import Store

    return Store(results).mean_phase_s(campaign)


def make_reporter(args: argparse.Namespace, final: bool = True) -> Any:
    """The run's reporter; ``final=False`` when the command prints its own final line (tune:
    the best configuration), so that --quiet prints that one line alone."""
    from ..progress import JsonReporter, QuietReporter, RichReporter

    if args.json:
        return JsonReporter()
    if args.quiet:
        return QuietReporter(final=final)
    return RichReporter()


def stopped(reporter: Any, args: argparse.Namespace, who: str, e: Exception) -> int:
    """A run the environment stopped (exit 3), said on stderr and, with --json, as an event."""
    reporter.close()
    if args.json:
        print(json.dumps({"event": "error", "error": str(e)}))
    print(f"{who}: {e}", file=sys.stderr)
    return EXIT_ENV


def interrupted(reporter: Any, how_to_go_on: str) -> int:
    reporter.close()
    print(f"lsmbench: interrupted; {how_to_go_on}", file=sys.stderr)
    return EXIT_INTERRUPTED


def results_store_error(results: Path) -> str | None:
    from ..store import results_store_problem

    return results_store_problem(results)


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {n}")
    return n


def print_warnings(args: argparse.Namespace, warnings: list[str]) -> None:
    """A spec's warnings on stderr, unless the output is --json or --quiet."""
    if not args.json and not args.quiet:
        for w in warnings:
            print(f"{args.spec}: warning: {w}", file=sys.stderr)
