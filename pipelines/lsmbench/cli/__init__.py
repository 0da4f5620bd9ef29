"""The `lsmbench` command.

    lsmbench validate SPEC [--set k=v ...]
    lsmbench plan SPEC [--set k=v ...]
    lsmbench run SPEC [--resume] [--force] [--set k=v ...]
    lsmbench tune SPEC [--resume] [--force] [--set k=v ...]   (docs/tuning.md)
    lsmbench calibrate [--testbed local|SPEC] [--runtime S]
    lsmbench publish RESULTS --to URL
    lsmbench ls [CAMPAIGN] [--repetitions]
    lsmbench testbed up|status|down|calibrate NAME [--file F] [--yes] [--dry-run]
    lsmbench report RESULTS [--compare OTHER] [--out DIR] [--window S]
    lsmbench export RESULTS [--format parquet|csv] [--out DIR]   (docs/analysis.md)
    lsmbench track record|detect|report|ack|nightly ...   (docs/tracking.md)

Exit codes: 0 success; 1 a point failed (run) or a point could not be
published (publish); 2 bad spec or usage; 3 the environment cannot run it
(testbed, driver, throttle, results store); 4 an open regression (track
report, track nightly); 70 a bug in lsmbench (one line,
--verbose for the traceback); 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextvars
import logging
import signal
import sys
from typing import Any

from .. import __version__
from ..spec.checks import DEFAULT_MAX_POINTS
from ..util.exits import (  # noqa: F401  (re-exported, as are all the codes)
    EXIT_ENV,
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Terminated,
    uncaught,
)
from ..util.paths import default_results_dir
from . import campaigns, specs, stored
from .common import positive_int

# The parser here; the commands in specs (validate, plan), campaigns (run, tune, calibrate,
# publish) and stored (ls, report, export), and in their packages' cli modules (testbed, track,
# reproduce). They import what they need inside their functions: `lsmbench validate` should
# not pay for scipy, matplotlib and ansible at every start.


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lsmbench",
        description="Benchmark campaigns for LSM-tree engines: the two-phase method of "
                    "Luo & Carey under cgroup I/O throttling. Docs: docs/README.md",
    )
    p.add_argument("--version", action="version", version=f"lsmbench {__version__}")

    common = argparse.ArgumentParser(add_help=False)
    out = common.add_mutually_exclusive_group()
    out.add_argument("--quiet", "-q", action="store_true", help="only errors and a final line")
    out.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    common.add_argument("--results", default=str(default_results_dir()),
                        help="the results store (default: %(default)s; $LSMBENCH_RESULTS)")
    common.add_argument("--verbose", "-v", action="store_true", help="debug logging on stderr")

    setting = argparse.ArgumentParser(add_help=False)
    setting.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                         help="override a spec value (dotted path, YAML value); repeatable; "
                              "e.g. --set phases.testing.duration=30s "
                              "--set matrix.size_ratio=[3,5]")
    setting.add_argument("--max-points", type=positive_int, default=None, metavar="N",
                         help="refuse a campaign of more points than this (default: "
                              f"{DEFAULT_MAX_POINTS:,}; counted before any is made)")

    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    specs.add_parsers(sub, common, setting)
    campaigns.add_parsers(sub, common, setting)
    from ..reproduce.cli import add_parser as add_reproduce_parser
    from ..testbeds.cli import add_parser as add_testbed_parser
    from ..track.cli import add_parser as add_track_parser

    add_testbed_parser(sub, common)
    add_track_parser(sub, common)
    add_reproduce_parser(sub, common)
    stored.add_parsers(sub, common)
    return p


def _sigterm(signum: int, frame: Any) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        # Each command in a context of its own: what it sets (--max-points) ends with it, also
        # when main() is called again in the same process.
        return int(contextvars.copy_context().run(args.func, args))
    except KeyboardInterrupt:
        print("lsmbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # one line, never a traceback (exits.uncaught)
        return uncaught(args.command, e)


if __name__ == "__main__":
    sys.exit(main())
