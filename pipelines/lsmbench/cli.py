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
import json
import logging
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from . import __version__
from .exits import (  # noqa: F401  (EXIT_INTERNAL: re-exported, as are all the codes)
    EXIT_ENV,
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    uncaught,
)

# The commands import what they need inside their functions: `lsmbench validate` should not
# pay for scipy, matplotlib and ansible at every start.
from .paths import default_results_dir
from .spec.checks import DEFAULT_MAX_POINTS
from .wording import plural


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def _spec_errors(e: Any, path: str, as_json: bool) -> int:
    if as_json:
        _print_json({"valid": False, "spec": path,
                     "errors": [{"path": p, "message": m} for p, m in e.errors]})
    else:
        print(f"{path}: {plural(len(e.errors), 'error')}", file=sys.stderr)
        for line in e.lines():
            print(f"  {line}", file=sys.stderr)
    return EXIT_USAGE


def _load(args: argparse.Namespace) -> Any:
    from .spec import load_spec
    from .spec.checks import MAX_POINTS

    if getattr(args, "max_points", None) is not None:
        MAX_POINTS.set(args.max_points)
    return load_spec(args.spec, sets=args.set)


def _load_checked(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """The spec loaded and validated, its engine options checked by lsm-driver when it is
    built (SpecError listing every error); the warnings to show."""
    from .spec import SpecError

    loaded = _load(args)
    errors, warnings = _driver_check(loaded)
    if not errors and loaded.spec.tune is None:
        errors = _sharing_errors(loaded)
    if errors:
        raise SpecError(errors, args.spec)
    return loaded, warnings


def _sharing_errors(loaded: Any) -> list[tuple[str, str]]:
    """Points that phases.testing.shared_across would make share a testing phase although a
    resolved option differs: refused here, before anything runs, not when the run starts."""
    from .plan import build_plan
    from .stages import shared_testing_mismatches

    path = "phases.testing.shared_across"
    mismatches = shared_testing_mismatches(build_plan(loaded))
    return [(path, m.removeprefix(f"{path}: ")) for m in mismatches]


def _driver_check(loaded: Any) -> tuple[list[tuple[str, str]], list[str]]:
    """Engine options (lsm-driver --check-options) and each phase's workload and queries
    (--check-config) checked by the driver, when it is built: (errors by spec path, warnings).
    Without it, rocksdb's options (no committed description) and the rules between a workload,
    its queries and the engine go unchecked until the run starts."""
    from .driver_checks.config import config_errors
    from .driver_checks.options import DriverCannotCheck, driver_errors
    from .paths import find_driver
    from .spec.checks import engines_of

    unchecked = [e for e in engines_of(loaded.raw) if e == "rocksdb"]
    driver = find_driver(getattr(loaded.spec.testbed, "driver", None))
    if driver is None:
        return [], [f"{e} engine options were not checked: lsm-driver is not built (make "
                    "build); the driver checks them when the run starts" for e in unchecked]
    errors: list[tuple[str, str]] = []
    warnings: list[str] = []
    try:
        errors += driver_errors(loaded, driver)
    except DriverCannotCheck as e:
        warnings += [f"{name} engine options were not checked: {e}; the driver checks them "
                     "when the run starts" for name in unchecked]
    try:
        errors += config_errors(loaded, driver)
    except DriverCannotCheck as e:
        warnings.append(f"the workload and queries were not checked: {e}; the driver checks "
                        "them when each phase starts")
    return errors, warnings


def _history_load_s(results: Path, campaign: str) -> float | None:
    from .store import Store

    return Store(results).mean_load_s(campaign)


def _history_phase_s(results: Path, campaign: str) -> dict[str, float]:
    from .store import Store

    return Store(results).mean_phase_s(campaign)


def _check_data_size(plan: Any, results: Path) -> None:
    """Each point's estimated data against the testbed's data disk (datasize)."""
    from .datasize import check_data_size

    report = check_data_size(plan, results)
    plan.notes.extend(report.notes)
    plan.warnings.extend(report.warnings)
    plan.data_bytes.update({p.point: p.bytes for p in report.points})


def _check_cycles(plan: Any, results: Path) -> None:
    """The plan's notes and warnings about the deepest merge's cycle (lsm-sim, the store)."""
    from .cyclecheck import plan_cycles
    from .paths import find_sim
    from .store import Store

    report = plan_cycles(plan, Store(results), find_sim())
    plan.notes.extend(report.notes)
    plan.warnings.extend(report.warnings)
    plan.cycles.update(report.points)


# ---------------------------------------------------------------- commands


def cmd_validate(args: argparse.Namespace) -> int:
    from .plan import expand_matrix
    from .spec import SpecError

    try:
        loaded, warnings = _load_checked(args)
    except SpecError as e:
        return _spec_errors(e, args.spec, args.json)
    if not args.json:
        for w in warnings:
            print(f"{args.spec}: warning: {w}", file=sys.stderr)
    points, excluded = expand_matrix(loaded.spec.matrix)
    if not points:
        msg = "matrix.exclude: the exclude rules leave no point to run"
        if args.json:
            _print_json({"valid": False, "spec": args.spec,
                         "errors": [{"path": "matrix.exclude", "message": msg}]})
        else:
            print(f"{args.spec}: 1 error\n  {msg}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        _print_json({"valid": True, "spec": args.spec, "campaign": loaded.spec.name,
                     "points": len(points), "excluded": excluded, "warnings": warnings})
    elif not args.quiet:
        what = (f"study {loaded.spec.name}, {plural(loaded.spec.tune.trials, 'trial')}"
                if loaded.spec.tune is not None
                else f"campaign {loaded.spec.name}, {plural(len(points), 'point')}")
        print(f"{args.spec}: valid ({what})")
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from .plan import build_plan, describe
    from .spec import SpecError

    try:
        # What validate refuses, plan refuses: one path, the driver's checks included.
        loaded, warnings = _load_checked(args)
    except SpecError as e:
        return _spec_errors(e, args.spec, args.json)
    if not args.json and not args.quiet:
        for w in warnings:
            print(f"{args.spec}: warning: {w}", file=sys.stderr)
    history = _history_load_s(Path(args.results), loaded.spec.name)
    plan = build_plan(loaded, history, _history_phase_s(Path(args.results), loaded.spec.name))
    if loaded.spec.tune is None:  # a study's points are not known before it runs
        _check_cycles(plan, Path(args.results))
    _check_data_size(plan, Path(args.results))
    predictions = _predict(plan) if args.predict and loaded.spec.tune is None else None
    if args.json:
        _print_json(plan.to_json())
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for line in describe(plan):
        console.print(line, highlight=False, markup=False)
    if loaded.spec.tune is not None:
        return EXIT_OK
    limit = args.limit
    table = Table(show_header=True, header_style="bold", box=None)
    table.add_column("#", justify="right")
    table.add_column("point", overflow="fold")
    table.add_column("seed", justify="right")
    for p in plan.points[:limit]:
        table.add_row(str(p.index), p.id, str(p.seed))
    console.print(table)
    if len(plan.points) > limit:
        console.print(f"... and {len(plan.points) - limit} more (--limit N to show more)")
    if predictions is not None:
        from .predict import print_predictions

        print_predictions(console, predictions[:limit])
    return EXIT_OK


def _predict(plan: Any) -> Any:
    from .paths import find_sim
    from .predict import add_predictions

    return add_predictions(plan, find_sim())


def _reporter(args: argparse.Namespace) -> Any:
    from .progress import JsonReporter, QuietReporter, RichReporter

    if args.json:
        return JsonReporter()
    if args.quiet:
        return QuietReporter()
    return RichReporter()


def _stopped(reporter: Any, args: argparse.Namespace, who: str, e: Exception) -> int:
    """A run the environment stopped (exit 3), said on stderr and, with --json, as an event."""
    reporter.close()
    if args.json:
        print(json.dumps({"event": "error", "error": str(e)}))
    print(f"{who}: {e}", file=sys.stderr)
    return EXIT_ENV


def _interrupted(reporter: Any, how_to_go_on: str) -> int:
    reporter.close()
    print(f"lsmbench: interrupted; {how_to_go_on}", file=sys.stderr)
    return EXIT_INTERRUPTED


def _results_store_error(results: Path) -> str | None:
    from .store import results_store_problem

    return results_store_problem(results)


def cmd_run(args: argparse.Namespace) -> int:
    from .campaign import CampaignError, RunOptions, run_campaign
    from .plan import build_plan
    from .spec import SpecError
    from .store import Store
    from .testbeds import TestbedError

    try:
        loaded, warnings = _load_checked(args)
    except SpecError as e:
        return _spec_errors(e, args.spec, args.json)
    if not args.json and not args.quiet:
        for w in warnings:
            print(f"{args.spec}: warning: {w}", file=sys.stderr)
    if loaded.spec.tune is not None:
        print(f"{args.spec}: tune: this spec is a study: run it with `lsmbench tune "
              f"{args.spec}`", file=sys.stderr)
        return EXIT_USAGE
    results = Path(args.results)
    problem = _results_store_error(results)
    if problem:
        print(f"lsmbench run: {problem}", file=sys.stderr)
        return EXIT_ENV
    plan = build_plan(loaded, _history_load_s(results, loaded.spec.name),
                      _history_phase_s(results, loaded.spec.name))
    if not plan.points:
        print(f"{args.spec}: the exclude rules leave no point to run", file=sys.stderr)
        return EXIT_USAGE
    _predict(plan)  # kept in campaign.json: the report shows it beside what was measured
    reporter = _reporter(args)
    try:
        summary = run_campaign(plan, Store(results), reporter,
                               RunOptions(resume=args.resume, force=args.force,
                                          publish=not args.no_publish))
    except (CampaignError, TestbedError) as e:
        return _stopped(reporter, args, "lsmbench", e)
    except KeyboardInterrupt:
        return _interrupted(reporter, "`lsmbench run --resume` continues where it stopped")
    return EXIT_FAILED if summary["failed"] else EXIT_OK


def cmd_tune(args: argparse.Namespace) -> int:
    from .campaign import CampaignError
    from .spec import SpecError
    from .store import Store
    from .testbeds import TestbedError

    try:
        loaded, warnings = _load_checked(args)
        if loaded.spec.tune is None:
            raise SpecError([("tune", "this spec has no tune: section (parameters, trials, "
                                      "objective; docs/tuning.md); run it with `lsmbench "
                                      "run`")], args.spec)
    except SpecError as e:
        return _spec_errors(e, args.spec, args.json)
    from .campaign import RunOptions
    from .tune.console import print_result
    from .tune.study import TuneError, run_tune

    if not args.json and not args.quiet:
        for w in warnings:
            print(f"{args.spec}: warning: {w}", file=sys.stderr)
    problem = _results_store_error(Path(args.results))
    if problem:
        print(f"lsmbench tune: {problem}", file=sys.stderr)
        return EXIT_ENV
    reporter = _reporter(args)
    try:
        result = run_tune(loaded, Store(Path(args.results)), reporter,
                          RunOptions(resume=args.resume, force=args.force,
                                     publish=not args.no_publish))
    except (CampaignError, TestbedError, TuneError) as e:
        return _stopped(reporter, args, "lsmbench tune", e)
    except KeyboardInterrupt:
        return _interrupted(reporter, "`lsmbench tune --resume` redoes the interrupted trial "
                                      "and goes on")
    reporter.close()
    if args.json:
        print(json.dumps({"best": result.best.model_dump() if result.best else None,
                          "trials": result.trials, "complete": result.complete,
                          "pruned": result.pruned, "failed": result.failed,
                          "study": result.study,
                          "confirmed": [c.model_dump() for c in result.confirmed]},
                         default=str))
    else:
        print_result(result, quiet=args.quiet)
    return EXIT_OK if result.best is not None else EXIT_FAILED


def cmd_calibrate(args: argparse.Namespace) -> int:
    from .campaign import calibration_path
    from .spec import LocalTestbedSpec, SpecError, load_spec
    from .store import Store, write_json_atomic
    from .testbeds import TestbedError, open_testbed

    tb_spec: Any
    name = "calibration"
    if args.testbed and Path(args.testbed).is_file():
        try:
            loaded = load_spec(args.testbed, sets=args.set)
        except SpecError as e:
            return _spec_errors(e, args.testbed, args.json)
        tb_spec = loaded.spec.testbed
        name = loaded.spec.name
    elif args.testbed in (None, "local"):
        tb_spec = LocalTestbedSpec(**({"data_dir": args.data_dir} if args.data_dir else {}))
    else:
        print(f"lsmbench calibrate: --testbed takes 'local' or a campaign spec file, "
              f"got {args.testbed!r}", file=sys.stderr)
        return EXIT_USAGE
    if args.data_dir:
        tb_spec = tb_spec.model_copy(update={"data_dir": args.data_dir})
    try:
        tb = open_testbed(tb_spec, campaign=name)
        node = tb.up()[0]
        if not args.quiet and not args.json:
            print(f"calibrating the disk under {node.data_root} with fio ({args.runtime:g}s per "
                  "job)...", file=sys.stderr)
        profile = tb.calibrate(node, args.runtime, args.size_mb)
    except TestbedError as e:
        print(f"lsmbench calibrate: {e}", file=sys.stderr)
        return EXIT_ENV
    except Exception as e:  # fio missing or failing: its errors say how to fix
        print(f"lsmbench calibrate: {e}", file=sys.stderr)
        return EXIT_ENV
    data = json.loads(profile.to_json())
    out = Path(args.output) if args.output else calibration_path(Store(args.results),
                                                                 socket.gethostname())
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out, data)
    if args.json:
        _print_json({"profile": data, "path": str(out)})
    elif not args.quiet:
        mb = 1e6
        print(f"  disk {data.get('device')} under {data.get('directory')} "
              f"({'direct I/O' if data.get('direct') else 'buffered I/O'}, {data.get('ioengine')}, "
              f"iodepth {data.get('iodepth')}, {data.get('runtime_s')} s per job)")
        print(f"  sequential write {data['seq_write_bps'] / mb:,.0f} MB/s, "
              f"read {data['seq_read_bps'] / mb:,.0f} MB/s")
        print(f"  random 4 KiB write {data['rand_write_iops']:,.0f} IOPS, "
              f"read {data['rand_read_iops']:,.0f} IOPS")
        for w in data.get("warnings") or []:
            print(f"  warning: {w}")
        print(f"profile written to {out} (throttle percentages are relative to it)")
    return EXIT_OK


def cmd_publish(args: argparse.Namespace) -> int:
    from .publish import publish_point, sink_from_url
    from .store import Store

    target = Path(args.results)
    if not target.is_dir():
        print(f"{target}: not a directory (expected the results store, a campaign directory "
              "or a point directory)", file=sys.stderr)
        return EXIT_USAGE
    # RESULTS may be the store, a campaign directory, or a point directory.
    if (target / "point.json").is_file():
        store, campaigns, only = Store(target.parent.parent), [target.parent.name], target.name
    elif (target / "campaign.json").is_file():
        store, campaigns, only = Store(target.parent), [target.name], None
    else:
        store, only = Store(target), None
        campaigns = [args.campaign] if args.campaign else store.campaigns()
    if args.campaign and args.campaign not in campaigns:
        campaigns = [args.campaign]
    try:
        base = None
        for c in campaigns:
            spec = (store.read_campaign(c) or {}).get("spec") or {}
            influx = (spec.get("sinks") or {}).get("influx")
            if influx:
                from .spec import InfluxSinkSpec

                base = InfluxSinkSpec.model_validate(influx)
                break
        sink = sink_from_url(args.to, base, token_env=args.token_env,
                             token_file=args.token_file, database=args.database,
                             org=args.org, bucket=args.bucket)
    except Exception as e:
        print(f"lsmbench publish: bad target {args.to!r}: {e}", file=sys.stderr)
        return EXIT_USAGE
    sent = failed = skipped = 0
    for c in campaigns:
        for rec in store.points(c):
            if only and rec.point_id != only:
                continue
            if rec.published is True and not args.all:
                skipped += 1
                continue
            out = publish_point(store, rec, sink)
            if out.ok:
                sent += 1
            else:
                failed += 1
            if args.json:
                print(json.dumps({"event": "published", "campaign": c, "point": rec.point_id,
                                  "ok": out.ok, "lines": out.lines, "error": out.error}))
            elif not args.quiet or not out.ok:
                word = "sent" if out.ok else "FAILED"
                detail = f"{out.lines} lines" if out.ok else out.error
                print(f"{word} {c}/{rec.point_id}: {detail}",
                      file=sys.stdout if out.ok else sys.stderr)
    summary = {"sent": sent, "failed": failed, "skipped_already_published": skipped}
    if args.json:
        print(json.dumps({"event": "publish_end", **summary}))
    elif not args.quiet:
        print(f"published {plural(sent, 'point')}, {failed} failed, {skipped} already published "
              f"(--all resends them)")
    return EXIT_FAILED if failed else EXIT_OK


def cmd_ls(args: argparse.Namespace) -> int:
    from .store import Store

    store = Store(args.results)
    if args.campaign:
        from .listing import campaign_listing, print_listing, terminal_width

        if not store.points(args.campaign) and store.read_campaign(args.campaign) is None:
            print(f"no campaign {args.campaign!r} in {store.root}", file=sys.stderr)
            return EXIT_USAGE
        data = campaign_listing(store, args.campaign)
        if args.json:
            _print_json(data)
        else:
            print_listing(data, str(store.campaign_dir(args.campaign)), args.repetitions,
                          terminal_width())
        return EXIT_OK
    out = []
    for c in store.campaigns():
        recs = store.points(c)
        camp = store.read_campaign(c) or {}
        runs = camp.get("runs") or []
        out.append({
            "campaign": c,
            "planned": len((camp.get("plan") or {}).get("points") or []),
            "complete": sum(1 for r in recs if r.state == "complete"),
            "failed": sum(1 for r in recs if r.state == "failed"),
            "unpublished": sum(1 for r in recs if r.published is False),
            "last_run": runs[-1].get("started") if runs else None,
        })
    if args.json:
        _print_json({"results": str(store.root), "campaigns": out})
        return EXIT_OK
    if not out:
        print(f"no campaigns in {store.root}")
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from .listing import UNBOUNDED, terminal_width

    table = Table(box=None, header_style="bold")
    for col in ("campaign", "points", "complete", "failed", "unpublished", "last run"):
        table.add_column(col)
    for row in out:
        last = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["last_run"])) \
            if row["last_run"] else "-"
        table.add_row(Text(row["campaign"]), str(row["planned"] or "?"), str(row["complete"]),
                      str(row["failed"]), str(row["unpublished"]), last)
    # As `ls CAMPAIGN`: the terminal's width (also when piped), unwrapped without a terminal.
    Console(width=terminal_width() or UNBOUNDED).print(table)
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from .report import ReportError, build_report

    try:
        files = build_report(Path(args.target), Path(args.results),
                             compare_with=Path(args.compare) if args.compare else None,
                             out_dir=Path(args.out) if args.out else None,
                             window_s=args.window)
    except (ReportError, ValueError, OSError) as e:
        print(f"lsmbench report: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        _print_json({"html": str(files.html), "markdown": str(files.markdown),
                     "figures": files.figures})
    else:
        if not args.quiet:
            print(f"figures: {', '.join(files.figures) or 'none'}; summary {files.markdown}")
        print(f"report written to {files.html}")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """A campaign as tidy tables (docs/analysis.md): points, timeseries, histograms, merges."""
    from .outputs import OutputError, check_writable, record_written, resolve_out
    from .results import ResultsError, load
    from .results.export import EXPORT_DIR, table_names, write_tables

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
        _print_json({"campaign": results.campaign, "out": str(out), "format": args.format,
                     "tables": {t.name: {"path": str(t.path), "rows": t.rows,
                                         "columns": t.columns} for t in tables}})
        return EXIT_OK
    if not args.quiet:
        for t in tables:
            print(f"{t.name}: {t.rows} rows, {t.columns} columns -> {t.path}")
    print(f"export written to {out}")
    return EXIT_OK


# ---------------------------------------------------------------- parser


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {n}")
    return n


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lsmbench",
        description="Benchmark campaigns for LSM-tree engines: the two-phase method of "
                    "Luo & Carey under cgroup I/O throttling. Docs: docs/orchestrator.md",
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
    setting.add_argument("--max-points", type=_positive_int, default=None, metavar="N",
                         help="refuse a campaign of more points than this (default: "
                              f"{DEFAULT_MAX_POINTS:,}; counted before any is made)")

    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("validate", parents=[common, setting], help="check a spec; list every "
                       "error by its path (exit 2)")
    s.add_argument("spec")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("plan", parents=[common, setting],
                       help="dry run: matrix points, phases, testbed, estimated duration")
    s.add_argument("spec")
    s.add_argument("--limit", type=int, default=50, help="points to list (default 50)")
    s.add_argument("--predict", action="store_true",
                   help="lsm-sim's testing maximum per point and whether 95 %% of it is "
                        "sustainable (builtin engine with an I/O budget)")
    s.set_defaults(func=cmd_plan)

    s = sub.add_parser("run", parents=[common, setting], help="run a campaign")
    s.add_argument("spec")
    s.add_argument("--resume", action="store_true",
                   help="skip the complete points of an earlier run; redo the rest")
    s.add_argument("--force", action="store_true",
                   help="discard the campaign's stored points and start over")
    s.add_argument("--no-publish", action="store_true",
                   help="do not send to the spec's sinks (points stay unpublished)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("tune", parents=[common, setting],
                       help="search engine options (Optuna TPE) toward a spec's tune: "
                            "objective; docs/tuning.md")
    s.add_argument("spec")
    s.add_argument("--resume", action="store_true",
                   help="go on with the study in RESULTS/CAMPAIGN/tune.sqlite3 (an "
                        "interrupted trial is run again)")
    s.add_argument("--force", action="store_true",
                   help="discard the study and the campaign's points and start over")
    s.add_argument("--no-publish", action="store_true",
                   help="do not send to the spec's sinks (points stay unpublished)")
    s.set_defaults(func=cmd_tune)

    s = sub.add_parser("calibrate", parents=[common, setting],
                       help="fio calibration of the testbed's data disk")
    s.add_argument("--testbed", default=None,
                   help="'local' (default) or a campaign spec whose testbed to calibrate")
    s.add_argument("--data-dir", default=None, help="directory on the disk to calibrate")
    s.add_argument("--runtime", type=float, default=10.0, help="seconds per fio job")
    s.add_argument("--size-mb", type=int, default=1024,
                   help="fio scratch file size (bigger than the disk cache gives truer numbers)")
    s.add_argument("--output", default=None, help="profile file (default: "
                   "RESULTS/.calibration/<host>.json, where runs look for it)")
    s.set_defaults(func=cmd_calibrate)

    s = sub.add_parser("publish", parents=[common],
                       help="(re)send stored points to InfluxDB")
    s.add_argument("results", metavar="RESULTS",
                   help="the results store, a campaign directory or a point directory")
    s.add_argument("--to", required=True, metavar="URL",
                   help="InfluxDB URL, e.g. http://127.0.0.1:8086?db=lsmbench")
    s.add_argument("--campaign", default=None, help="only this campaign")
    s.add_argument("--all", action="store_true", help="also resend published points")
    s.add_argument("--database", default=None)
    s.add_argument("--org", default=None)
    s.add_argument("--bucket", default=None)
    s.add_argument("--token-env", default=None, help="environment variable holding the token")
    s.add_argument("--token-file", default=None, help="file holding the token")
    s.set_defaults(func=cmd_publish)

    from .testbeds.cli import add_parser as add_testbed_parser

    add_testbed_parser(sub, common)

    from .track.cli import add_parser as add_track_parser

    add_track_parser(sub, common)

    from .reproduce.cli import add_parser as add_reproduce_parser

    add_reproduce_parser(sub, common)

    s = sub.add_parser("ls", parents=[common], help="campaigns and points in the results store")
    s.add_argument("campaign", nargs="?", default=None)
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
    return p


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


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
