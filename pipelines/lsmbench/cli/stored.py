"""The commands that read the results store: `lsmbench ls`, `report` and `export`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ..util.exits import EXIT_ENV, EXIT_OK, EXIT_USAGE
from ..util.wording import plural
from .common import print_json


def cmd_ls(args: argparse.Namespace) -> int:
    from ..store import Store

    store = Store(args.results)
    if args.campaign:
        from ..listing import campaign_listing, print_listing, terminal_width

        if not store.points(args.campaign) and store.read_campaign(args.campaign) is None:
            print(f"no campaign {args.campaign!r} in {store.root}", file=sys.stderr)
            return EXIT_USAGE
        data = campaign_listing(store, args.campaign)
        if args.json:
            print_json(data)
        elif args.quiet:
            from ..listing import footer_lines

            print(footer_lines(data, str(store.campaign_dir(args.campaign)),
                               args.repetitions)[-1])
        else:
            print_listing(data, str(store.campaign_dir(args.campaign)), args.repetitions,
                          terminal_width())
        return EXIT_OK
    from ..listing import campaign_points, last_run_state
    from ..method.groups import repetition_from_store

    out = []
    for c in store.campaigns():
        recs = store.points(c)
        camp = store.read_campaign(c) or {}
        runs = camp.get("runs") or []
        out.append({
            "campaign": c,
            **campaign_points(camp, [repetition_from_store(r) for r in recs]),
            "last_run_state": last_run_state(camp, store.campaign_dir(c)),
            "complete": sum(1 for r in recs if r.state == "complete"),
            "failed": sum(1 for r in recs if r.state == "failed"),
            "unpublished": sum(1 for r in recs if r.published is False),
            "last_run": runs[-1].get("started") if runs else None,
        })
    if args.json:
        print_json({"results": str(store.root), "campaigns": out})
        return EXIT_OK
    if not out:
        print(f"no campaigns in {store.root}")
        return EXIT_OK
    final = f"{plural(len(out), 'campaign')} in {store.root}"
    if args.quiet:
        print(final)
        return EXIT_OK
    from ..listing import points_text
    from ..util.terminal import Rows, make_console, say, terminal_width

    rows = Rows(("campaign", "points", "complete", "failed", "unpublished", "last run"),
                right=frozenset({2, 3, 4}))
    for row in out:
        last = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["last_run"])) \
            if row["last_run"] else "-"
        if row["last_run_state"] in ("interrupted", "running", "stopped"):
            last += f" ({row['last_run_state']})"
        rows.add(row["campaign"], points_text(row), str(row["complete"]),
                 str(row["failed"]), str(row["unpublished"]), last)
    # As `ls CAMPAIGN`: the terminal's width (also when piped), unwrapped without a terminal.
    width = terminal_width()
    console = make_console(width)
    rows.print(console, width)
    say(console, final, width)
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from ..report import ReportError, build_report

    try:
        files = build_report(Path(args.target), Path(args.results),
                             compare_with=Path(args.compare) if args.compare else None,
                             out_dir=Path(args.out) if args.out else None,
                             window_s=args.window)
    except (ReportError, ValueError, OSError) as e:
        print(f"lsmbench report: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print_json({"html": str(files.html), "markdown": str(files.markdown),
                     "figures": files.figures, "warnings": files.warnings})
    else:
        from ..util.terminal import final, make_console, say, terminal_width

        width = terminal_width()
        for w in files.warnings:
            say(make_console(width, stderr=True), f"lsmbench report: warning: {w}", width)
        console = make_console(width)
        if not args.quiet:
            say(console, f"figures: {', '.join(files.figures) or 'none'}; summary "
                         f"{files.markdown}", width)
        final(console, f"report written to {files.html}", width, args.quiet)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """A campaign as tidy tables (docs/analysis.md): points, timeseries, histograms, merges."""
    from ..outputs import OutputError, check_writable, record_written, resolve_out
    from ..results import ResultsError, load
    from ..results.export import EXPORT_DIR, table_names, write_tables

    try:
        results = load(args.target, results=args.results)
    except (ResultsError, OSError) as e:
        print(f"lsmbench export: {e}", file=sys.stderr)
        return EXIT_USAGE
    out, owned = resolve_out(args.out, results.path / EXPORT_DIR)
    try:
        check_writable(out, "export", table_names(args.format), owned=owned)
    except OutputError as e:
        print(f"lsmbench export: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        tables = write_tables(results, out, args.format)
        record_written(out, "export", [t.path for t in tables])
    except OSError as e:
        print(f"lsmbench export: cannot write {out}: {e}", file=sys.stderr)
        return EXIT_ENV
    if args.json:
        print_json({"campaign": results.campaign, "out": str(out), "format": args.format,
                     "tables": {t.name: {"path": str(t.path), "rows": t.rows,
                                         "columns": t.columns} for t in tables}})
        return EXIT_OK
    if not args.quiet:
        for t in tables:
            print(f"{t.name}: {t.rows} rows, {t.columns} columns -> {t.path}")
    print(f"export written to {out}")
    return EXIT_OK



def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("ls", parents=[common], help="campaigns and points in the results store")
    s.add_argument("campaign", nargs="?", default=None,
                   help="one campaign: its groups and points (default: every campaign)")
    s.add_argument("--repetitions", action="store_true",
                   help="with CAMPAIGN: list each repetition under its group")
    s.set_defaults(func=cmd_ls)

    s = sub.add_parser("report", parents=[common],
                       help="a campaign as one self-contained HTML report + Markdown summary")
    s.add_argument("target", metavar="RESULTS",
                   help="a campaign directory (results/NAME) or a campaign name in --results")
    s.add_argument("--compare", default=None, metavar="OTHER",
                   help="a second campaign (directory or name): side by side, with ratios")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default: RESULTS/report/)")
    s.add_argument("--window", type=float, default=30.0, metavar="S",
                   help="throughput averaging window in seconds (default 30, as in the paper)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("export", parents=[common],
                       help="a campaign as tidy tables (Parquet or CSV) for pandas and DuckDB")
    s.add_argument("target", metavar="RESULTS",
                   help="a campaign directory (results/NAME) or a campaign name in --results")
    s.add_argument("--format", choices=("parquet", "csv"), default="parquet",
                   help="file format (default: %(default)s)")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default: RESULTS/export/); the tables' files in it "
                        "are replaced")
    s.set_defaults(func=cmd_export)
