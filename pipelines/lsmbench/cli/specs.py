"""`lsmbench validate` and `lsmbench plan`, and the spec loading every command that takes a
spec shares (the driver's checks included)."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

from ..util.exits import EXIT_OK, EXIT_USAGE
from ..util.wording import plural
from .common import history_load_s, history_phase_s, print_json, print_warnings, spec_errors


def load(args: argparse.Namespace) -> Any:
    from ..spec import load_spec
    from ..spec.checks import MAX_POINTS

    if getattr(args, "max_points", None) is not None:
        MAX_POINTS.set(args.max_points)
    return load_spec(args.spec, sets=args.set)


def load_checked(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """The spec loaded and validated, its engine options checked by lsm-driver when it is
    built (SpecError listing every error); the warnings to show."""
    from ..spec import SpecError

    loaded = load(args)
    errors, warnings = _driver_check(loaded)
    errors += _throttle_errors(loaded, Path(getattr(args, "results", None) or "results"))
    if not errors and loaded.spec.tune is None:
        errors = _sharing_errors(loaded) + _repetition_group_errors(loaded)
    if errors:
        raise SpecError(errors, args.spec)
    return loaded, warnings


DEVICE_FORMS = ("auto (the data directory's disk), MAJ:MIN (e.g. 8:0), /dev/NAME of a block "
                "device, or a comma-separated list of them")


def _throttle_errors(loaded: Any, results: Path) -> list[tuple[str, str]]:
    """What the throttle needs on this machine, checked before anything runs (a local
    testbed's; a remote node's calibration and devices are its own, checked when it is up):
    a rate given in % of the calibrated disk needs a calibration, and a device named must
    exist."""
    from ..campaign.limits import calibration_path
    from ..store import Store
    from ..throttle import ThrottleError
    from ..throttle.devices import parse_device_spec
    from ..throttle.rates import is_relative

    th, tb = loaded.spec.throttle, loaded.spec.testbed
    if not th.enabled or getattr(tb, "type", None) != "local":
        return []
    errors = []
    relative = [k for k in ("write_bps", "read_bps", "write_iops", "read_iops")
                if is_relative(getattr(th, k))]
    if relative:
        cal = Path(getattr(tb, "calibration", None)
                   or calibration_path(Store(results), socket.gethostname()))
        if not cal.is_file():
            for k in relative:
                errors.append((f"throttle.{k}", f"{getattr(th, k)} is a share of the calibrated "
                               f"disk, and there is no calibration at {cal}: run `lsmbench "
                               "calibrate` first (testbed.calibration names another file), or "
                               "give an absolute rate such as 100MB/s"))
    if th.device != "auto":
        try:
            parse_device_spec(th.device)
        except ThrottleError as e:
            errors.append(("throttle.device", f"{str(e).removeprefix('throttle device ')}: "
                           f"give {DEVICE_FORMS}"))
    return errors


def _sharing_errors(loaded: Any) -> list[tuple[str, str]]:
    """Points that phases.testing.shared_across would make share a testing phase although a
    resolved option differs: refused here, before anything runs, not when the run starts."""
    from ..plan import build_plan
    from ..point_pipeline import shared_testing_mismatches

    path = "phases.testing.shared_across"
    mismatches = shared_testing_mismatches(build_plan(loaded))
    return [(path, m.removeprefix(f"{path}: ")) for m in mismatches]


def _repetition_group_errors(loaded: Any) -> list[tuple[str, str]]:
    """matrix.repetitions.groups naming a group the matrix does not have."""
    from ..plan import expand_matrix
    from ..points import group_id
    from ..spec.checks import repetition_groups

    listed = repetition_groups(loaded.spec.matrix) or []
    if not listed:
        return []
    known = list(dict.fromkeys(group_id(p.params) for p in expand_matrix(loaded.spec.matrix)[0]))
    return [(f"matrix.repetitions.groups[{i}]",
             f"no group {g!r} in the matrix (its groups: {', '.join(known[:8])}"
             f"{', ...' if len(known) > 8 else ''})")
            for i, g in enumerate(listed) if g not in known]


def _driver_check(loaded: Any) -> tuple[list[tuple[str, str]], list[str]]:
    """Engine options (lsm-driver --check-options) and each phase's workload and queries
    (--check-config) checked by the driver, when it is built: (errors by spec path, warnings).
    Without it, the options of an engine with no committed description (a project plugin not
    built yet, such as rocksdb) and the rules between a workload, its queries and the engine go
    unchecked until the run starts."""
    from .. import engine_options
    from ..driver_checks.config import config_errors
    from ..driver_checks.options import DriverCannotCheck, driver_errors
    from ..spec.checks import engines_of
    from ..util.paths import find_driver

    unchecked = []
    for e in engines_of(loaded.raw):
        desc = engine_options.description(e)
        if desc is None or desc.options_open:
            unchecked.append(e)
    driver = find_driver(getattr(loaded.spec.testbed, "driver", None))
    if driver is None:
        return [], [*(f"{e} engine options were not checked: lsm-driver is not built (make "
                      "build); the driver checks them when the run starts" for e in unchecked),
                    "the workload and queries were not checked: lsm-driver is not built (make "
                    "build); the driver checks them when each phase starts"]
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


def _check_data_size(plan: Any, results: Path) -> None:
    """Each point's estimated data against the testbed's data disk (datasize)."""
    from ..datasize import check_data_size

    report = check_data_size(plan, results)
    plan.notes.extend(report.notes)
    plan.warnings.extend(report.warnings)
    plan.data_bytes.update({p.point: p.bytes for p in report.points})


def _check_cycles(plan: Any, results: Path) -> None:
    """The plan's notes and warnings about the deepest merge's cycle (lsm-sim, the store)."""
    from ..cyclecheck import plan_cycles
    from ..store import Store
    from ..util.paths import find_sim

    report = plan_cycles(plan, Store(results), find_sim())
    plan.notes.extend(report.notes)
    plan.warnings.extend(report.warnings)
    plan.cycles.update(report.points)


def cmd_validate(args: argparse.Namespace) -> int:
    from ..plan import expand_matrix
    from ..spec import SpecError

    try:
        loaded, warnings = load_checked(args)
    except SpecError as e:
        return spec_errors(e, args.spec, args.json)
    if not args.json:
        for w in warnings:
            print(f"{args.spec}: warning: {w}", file=sys.stderr)
    points, excluded = expand_matrix(loaded.spec.matrix)
    if not points:
        msg = "matrix.exclude: the exclude rules leave no point to run"
        if args.json:
            print_json({"valid": False, "spec": args.spec,
                         "errors": [{"path": "matrix.exclude", "message": msg}]})
        else:
            print(f"{args.spec}: 1 error\n  {msg}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print_json({"valid": True, "spec": args.spec, "campaign": loaded.spec.name,
                     "points": len(points), "excluded": excluded, "warnings": warnings})
    else:  # with --quiet too: the one final line
        what = (f"study {loaded.spec.name}, {plural(loaded.spec.tune.trials, 'trial')}"
                if loaded.spec.tune is not None
                else f"campaign {loaded.spec.name}, {plural(len(points), 'point')}")
        from ..util.terminal import final, make_console, terminal_width

        width = terminal_width()
        final(make_console(width), f"{args.spec}: valid ({what})", width, args.quiet)
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from ..plan import build_plan, describe
    from ..spec import SpecError

    try:
        # What validate refuses, plan refuses: one path, the driver's checks included.
        loaded, warnings = load_checked(args)
    except SpecError as e:
        return spec_errors(e, args.spec, args.json)
    print_warnings(args, warnings)
    history = history_load_s(Path(args.results), loaded.spec.name)
    plan = build_plan(loaded, history, history_phase_s(Path(args.results), loaded.spec.name))
    if loaded.spec.tune is None:  # a study's points are not known before it runs
        _check_cycles(plan, Path(args.results))
    _check_data_size(plan, Path(args.results))
    predictions = predict_points(plan) if args.predict and loaded.spec.tune is None else None
    if args.json:
        print_json(plan.to_json())
        return EXIT_OK
    from ..util.terminal import Rows, make_console, say, terminal_width

    lines = describe(plan)
    if args.quiet:
        print(lines[0])  # the one final line: what the plan holds and how long it takes
        return EXIT_OK
    width = terminal_width()
    console = make_console(width)
    for line in lines[1:]:
        say(console, line, width)
    if loaded.spec.tune is None:
        limit = args.limit
        rows = Rows(("#", "point", "seed"), right=frozenset({0, 2}), prefix="point ")
        for p in plan.points[:limit]:
            rows.add(str(p.index), p.id, str(p.seed))
        rows.print(console, width)
        if len(plan.points) > limit:
            say(console, f"... and {len(plan.points) - limit} more (--limit N to show more)",
                width)
        if predictions is not None:
            from ..predict import print_predictions

            print_predictions(console, predictions[:limit], width)
    say(console, lines[0], width)  # the summary last, as every command ends
    return EXIT_OK


def predict_points(plan: Any) -> Any:
    from ..predict import add_predictions
    from ..util.paths import find_sim

    return add_predictions(plan, find_sim())



def add_parsers(sub: Any, common: argparse.ArgumentParser,
                setting: argparse.ArgumentParser) -> None:
    s = sub.add_parser("validate", parents=[common, setting], help="check a spec; list every "
                       "error by its path (exit 2)")
    s.add_argument("spec", help="the campaign spec (YAML)")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("plan", parents=[common, setting],
                       help="dry run: matrix points, phases, testbed, estimated duration")
    s.add_argument("spec", help="the campaign spec (YAML)")
    s.add_argument("--limit", type=int, default=50, help="points to list (default 50)")
    s.add_argument("--predict", action="store_true",
                   help="lsm-sim's testing maximum per point and whether 95 %% of it is "
                        "sustainable (builtin engine with an I/O budget)")
    s.set_defaults(func=cmd_plan)
