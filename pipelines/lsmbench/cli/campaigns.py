"""The commands that measure or send: `lsmbench run`, `tune`, `calibrate` and `publish`."""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
from pathlib import Path
from typing import Any

from ..util.exits import EXIT_ENV, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from ..util.wording import plural
from .common import (
    history_load_s,
    history_phase_s,
    interrupted,
    make_reporter,
    print_json,
    print_warnings,
    results_store_error,
    spec_errors,
    stopped,
)
from .specs import load_checked, predict_points


def cmd_run(args: argparse.Namespace) -> int:
    from ..campaign import CampaignError, RunOptions, run_campaign
    from ..plan import build_plan
    from ..spec import SpecError
    from ..store import Store
    from ..testbeds import TestbedError

    try:
        loaded, warnings = load_checked(args)
    except SpecError as e:
        return spec_errors(e, args.spec, args.json)
    print_warnings(args, warnings)
    if loaded.spec.tune is not None:
        print(f"{args.spec}: tune: this spec is a study: run it with `lsmbench tune "
              f"{args.spec}`", file=sys.stderr)
        return EXIT_USAGE
    results = Path(args.results)
    fresh = not results.exists()  # a run refused before it starts leaves no directory behind
    problem = results_store_error(results)
    if problem:
        print(f"lsmbench run: {problem}", file=sys.stderr)
        return EXIT_ENV
    plan = build_plan(loaded, history_load_s(results, loaded.spec.name),
                      history_phase_s(results, loaded.spec.name))
    if not plan.points:
        print(f"{args.spec}: the exclude rules leave no point to run", file=sys.stderr)
        _remove_if_fresh(results, fresh)
        return EXIT_USAGE
    predict_points(plan)  # kept in campaign.json: the report shows it beside what was measured
    reporter = make_reporter(args)
    try:
        summary = run_campaign(plan, Store(results), reporter,
                               RunOptions(resume=args.resume, force=args.force,
                                          publish=not args.no_publish))
    except (CampaignError, TestbedError) as e:
        _remove_if_fresh(results, fresh)
        return stopped(reporter, args, "lsmbench", e)
    except KeyboardInterrupt:
        _remove_if_fresh(results, fresh)
        return interrupted(reporter, "`lsmbench run --resume` continues where it stopped")
    return EXIT_FAILED if summary["failed"] else EXIT_OK


def _remove_if_fresh(results: Path, fresh: bool) -> None:
    """The results directory this run made, removed again if the run left it empty (the
    store's lock removes a campaign directory it made and nothing was written in)."""
    if fresh:
        with contextlib.suppress(OSError):
            results.rmdir()  # only an empty directory


def cmd_tune(args: argparse.Namespace) -> int:
    from ..campaign import CampaignError
    from ..spec import SpecError
    from ..store import Store
    from ..testbeds import TestbedError

    try:
        loaded, warnings = load_checked(args)
        if loaded.spec.tune is None:
            raise SpecError([("tune", "this spec has no tune: section (parameters, trials, "
                                      "objective; docs/tuning.md); run it with `lsmbench "
                                      "run`")], args.spec)
    except SpecError as e:
        return spec_errors(e, args.spec, args.json)
    from ..campaign import RunOptions
    from ..tune.console import print_result
    from ..tune.study import TuneError, run_tune

    print_warnings(args, warnings)
    problem = results_store_error(Path(args.results))
    if problem:
        print(f"lsmbench tune: {problem}", file=sys.stderr)
        return EXIT_ENV
    reporter = make_reporter(args, final=False)
    try:
        result = run_tune(loaded, Store(Path(args.results)), reporter,
                          RunOptions(resume=args.resume, force=args.force,
                                     publish=not args.no_publish))
    except (CampaignError, TestbedError, TuneError) as e:
        return stopped(reporter, args, "lsmbench tune", e)
    except KeyboardInterrupt:
        return interrupted(reporter, "`lsmbench tune --resume` redoes the interrupted trial "
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
    from ..campaign import calibration_path
    from ..spec import LocalTestbedSpec, SpecError, load_spec
    from ..store import Store, write_json_atomic
    from ..testbeds import TestbedError, open_testbed

    tb_spec: Any
    name = "calibration"
    if args.testbed and Path(args.testbed).is_file():
        try:
            loaded = load_spec(args.testbed, sets=args.set)
        except SpecError as e:
            return spec_errors(e, args.testbed, args.json)
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
        print_json({"profile": data, "path": str(out)})
    else:
        if not args.quiet:
            mb = 1e6
            print(f"  disk {data.get('device')} under {data.get('directory')} "
                  f"({'direct I/O' if data.get('direct') else 'buffered I/O'}, "
                  f"{data.get('ioengine')}, iodepth {data.get('iodepth')}, "
                  f"{data.get('runtime_s')} s per job)")
            print(f"  sequential write {data['seq_write_bps'] / mb:,.0f} MB/s, "
                  f"read {data['seq_read_bps'] / mb:,.0f} MB/s")
            print(f"  random 4 KiB write {data['rand_write_iops']:,.0f} IOPS, "
                  f"read {data['rand_read_iops']:,.0f} IOPS")
            for w in data.get("warnings") or []:
                print(f"  warning: {w}")
        print(f"profile written to {out} (throttle percentages are relative to it)")
    return EXIT_OK


def cmd_publish(args: argparse.Namespace) -> int:
    from ..publish import publish_point, sink_from_url, stored_section
    from ..store import Store

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
            base = stored_section((store.read_campaign(c) or {}).get("spec") or {})
            if base is not None:
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
    else:  # with --quiet too: the one final line
        print(f"published {plural(sent, 'point')}, {failed} failed, {skipped} already published "
              f"(--all resends them)")
    return EXIT_FAILED if failed else EXIT_OK



def add_parsers(sub: Any, common: argparse.ArgumentParser,
                setting: argparse.ArgumentParser) -> None:
    s = sub.add_parser("run", parents=[common, setting], help="run a campaign")
    s.add_argument("spec", help="the campaign spec (YAML)")
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
    s.add_argument("spec", help="the campaign spec (YAML)")
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
    s.add_argument("--database", default=None,
                   help="the InfluxDB 1.x database (instead of the URL's db=)")
    s.add_argument("--org", default=None,
                   help="the InfluxDB 2.x organization (instead of the URL's org=)")
    s.add_argument("--bucket", default=None,
                   help="the InfluxDB 2.x bucket (instead of the URL's bucket=)")
    s.add_argument("--token-env", default=None, help="environment variable holding the token")
    s.add_argument("--token-file", default=None, help="file holding the token")
    s.set_defaults(func=cmd_publish)
