"""`lsmbench track ...`: the arguments of every subcommand; each runs a function of its own
module, imported only when that subcommand runs."""

from __future__ import annotations

import argparse
from typing import Any

from .history import DEFAULT_THRESHOLD

# Each subcommand imports its module when it runs (start-up time); the imports are written out
# so that the layer contract sees them.


def _record(args: argparse.Namespace) -> int:
    from .record import cmd_record

    return int(cmd_record(args))


def _detect(args: argparse.Namespace) -> int:
    from .detect import cmd_detect

    return int(cmd_detect(args))


def _report(args: argparse.Namespace) -> int:
    from .report import cmd_report

    return int(cmd_report(args))


def _ack(args: argparse.Namespace) -> int:
    from .ack import cmd_ack

    return int(cmd_ack(args))


def _nightly(args: argparse.Namespace) -> int:
    from .nightly import cmd_nightly

    return int(cmd_nightly(args))


def _bisect(args: argparse.Namespace) -> int:
    from .bisect import cmd_bisect

    return int(cmd_bisect(args))


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    t = sub.add_parser("track",
                       help="nightly tracking: record|detect|report|ack|nightly|bisect "
                            "(docs/tracking.md)")
    tsub = t.add_subparsers(dest="track_command", required=True, metavar="ACTION")

    s = tsub.add_parser("record", parents=[common],
                        help="add a finished campaign run to the history (one run per node "
                             "for a campaign that ran on several nodes)")
    s.add_argument("campaign", metavar="RESULTS/CAMPAIGN",
                   help="a campaign directory, or a campaign name in --results")
    s.add_argument("--history", default=None, metavar="FILE",
                   help="the history database (default: RESULTS/history.sqlite)")
    s.add_argument("--commit", default=None,
                   help="the commit measured (default: the points' recorded project commit)")
    s.set_defaults(func=_record)

    s = tsub.add_parser("detect", parents=[common],
                        help="change points of one series in a CSV file")
    s.add_argument("file", metavar="FILE.csv",
                   help="a CSV with a header; the first column is the time or an index")
    s.add_argument("--column", default=None,
                   help="the value column (default: the second)")
    s.set_defaults(func=_detect)

    s = tsub.add_parser("report", parents=[common],
                        help="history.html + regressions.json; exit 4 with an open regression "
                             "(a change several nodes saw is one, with its nodes)")
    s.add_argument("--history", default=None, metavar="FILE",
                   help="the history database (default: RESULTS/history.sqlite)")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default: the history's directory)")
    s.add_argument("--campaign", default=None, help="only this campaign")
    s.set_defaults(func=_report)

    s = tsub.add_parser("ack", parents=[common],
                        help="mark a change point as expected (kept in the history)")
    s.add_argument("id", metavar="ID", help="the change's id (track report lists them)")
    s.add_argument("--why", required=True, help="why the change is expected")
    s.add_argument("--history", default=None, metavar="FILE",
                   help="the history database (default: RESULTS/history.sqlite)")
    s.set_defaults(func=_ack)

    s = tsub.add_parser("nightly", parents=[common],
                        help="fetch, build, testbed up, run, record, report, publish")
    s.add_argument("spec", metavar="SPEC", help="the campaign spec")
    s.add_argument("--repo", default=None,
                   help="the project checkout to update and build (default: this one)")
    s.add_argument("--ref", default="origin/main", help="what to fetch and check out")
    s.add_argument("--testbed", default=None, metavar="NAME",
                   help="a kept testbed (the spec's `testbed: NAME`) to bring up first "
                        "(lsmbench testbed up NAME); every node must be reachable (else exit "
                        "3), and on several nodes every point runs on each (matrix "
                        "testbed.node) and each node is a series of its own in the history")
    s.add_argument("--history", default=None, metavar="FILE",
                   help="the history database (default: RESULTS/history.sqlite)")
    s.add_argument("--publish", default=None, metavar="URL",
                   help="InfluxDB URL for the points and the change-point annotations")
    s.add_argument("--lock", default=None, metavar="FILE",
                   help="lock file, so that two nights never overlap "
                        "(default: RESULTS/.nightly.lock)")
    s.add_argument("--no-fetch", action="store_true",
                   help="do not fetch: check out REF as the repository already has it")
    s.add_argument("--build-dir", default=None, metavar="DIR",
                   help="where the engine is built (default: REPO/build-nightly)")
    s.add_argument("--build-command", default=None, metavar="CMD",
                   help="a shell command that builds BUILD_DIR/bin/lsm-driver, run in REPO with "
                        "$LSMBENCH_BUILD_DIR set (default: cmake, Release, the lsm-driver and "
                        "lsm-sim targets)")
    s.add_argument("--token-env", default=None, metavar="VAR",
                   help="with --publish: environment variable holding the InfluxDB token")
    s.add_argument("--token-file", default=None, metavar="FILE",
                   help="with --publish: file holding the InfluxDB token")
    s.add_argument("--reference", default="accepted", metavar="REF",
                   help="the build the night's commit is measured against, interleaved on the "
                        "same node (spec pair:): 'accepted' (default: the commit of the last "
                        "night whose every paired ratio was not worse than its reference, or "
                        "whose regression was acknowledged), a commit or tag, or 'none' for an "
                        "unpaired night")
    s.add_argument("--bisect", action="store_true",
                   help="after the report, bisect a regression it holds open that no "
                        "bisection has taken up yet (lsmbench track bisect, on this machine): "
                        "one a night, paired ones first")
    s.add_argument("--bisect-threshold", type=float, default=None,
                   help="with --bisect: track bisect's --threshold (default: the regression "
                        "as the nights measured it)")
    s.set_defaults(func=_nightly)

    s = tsub.add_parser("bisect", parents=[common],
                        help="the commit that made a regression: paired A/B runs against the "
                             "range's first commit")
    s.add_argument("change_id", metavar="CHANGE_ID", help="a regression's id (track report)")
    s.add_argument("--history", default=None, metavar="FILE",
                   help="the history database (default: RESULTS/history.sqlite)")
    s.add_argument("--repo", default=None,
                   help="the project checkout holding the range (default: this one)")
    s.add_argument("--work", default=None, metavar="DIR",
                   help="builds, specs and results of the steps (default: "
                        "HISTORY_DIR/bisect-CHANGE_ID)")
    s.add_argument("--build-command", default=None, metavar="CMD",
                   help="as track nightly's (default: cmake, Release)")
    s.add_argument("--threshold", type=float, default=None,
                   help="the regression to look for, relative: a commit is worse when its "
                        "ratio's interval is past halfway to it (default: the regression as "
                        "the nights measured it against the range's good commit, else "
                        f"{DEFAULT_THRESHOLD:g})")
    s.add_argument("--range", default=None, metavar="GOOD..BAD",
                   help="bisect these commits instead of the change's own range (the same "
                        "regression on another branch, or a narrower range)")
    s.add_argument("--repetitions", type=int, default=3,
                   help="pairs per comparison (default 3)")
    s.add_argument("--max-repetitions", type=int, default=24,
                   help="an undecided comparison adds as many pairs again up to this many, "
                        "then the bisection stops and says so (default 24)")
    s.set_defaults(func=_bisect)
