"""The synthetic suite of `lsmbench track detect` (research/change-detectors.md).

Replays seeded 60-night series night by night through a detector and prints, per kind of
series, the false alarms per 100 nights (step-free series) or the share of changes found
within 3 nights and the delays (steps, drifts); writes the same as JSON.

    /work/main/.venv/bin/python research/bench/track_detect_synthetic.py --series 200 --seed 1

--library compares the segmentations (the guards of lsmbench.track.detect stay the same):
``ruptures`` (lsmbench's), ``otava`` (Apache Otava's E-Divisive split/merge with its t-test),
``otava-raw`` (Otava's change points as Otava reports them: no guards), ``oracle`` (a bound, not
a detector: it knows the noise and the level before the change, see :func:`oracle`). The Otava
ones need
the apache-otava package in the interpreter that runs this. A benchmark, not a test: it takes
minutes and is never timed by the test suite.

--paired runs the paired-nights suite instead (issue 33; lsmbench.track.synthetic_paired): a
reference build and the build under test measured in the same night, the paired detector on
their ratio, and the single-series detector on the candidate's nightly medians of the same
runs beside it, regressions only:

    /work/main/.venv/bin/python research/bench/track_detect_synthetic.py --paired \
        --series 200 --seed 1 --cov 0.05 --paired-shared 0.5 --paired-reps 3
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from lsmbench.track import synthetic, synthetic_paired
from lsmbench.track.detect import DetectorConfig, NotEnoughData, Segmenter, detect

OTAVA_WINDOW = 30  # Otava's window_len for a 60-night history (its default is 50)


def otava_segmenter(window_len: int) -> Segmenter:
    """Otava's split/merge as the segmentation; its own t-test at our max_p_value, no
    magnitude (ours applies after)."""
    from otava.analysis import compute_change_points

    def segment(z: np.ndarray, config: DetectorConfig) -> list[int]:
        result = compute_change_points(list(map(float, z)), window_len=window_len,
                                       max_pvalue=config.max_p_value, min_magnitude=0.0)
        points = result[0] if isinstance(result, tuple) else result
        return sorted({int(cp.index) for cp in points})

    return segment


def otava_raw(config: DetectorConfig, window_len: int) -> synthetic.Detector:
    """Otava's change points as it reports them, with no guards of ours: what a user of
    Otava alone sees (needs no more than 3 points, like Otava)."""
    from otava.analysis import compute_change_points

    def run(values: Sequence[float]) -> list[tuple[int, float]]:
        if len(values) < config.min_points:
            raise NotEnoughData("too few")
        result = compute_change_points(list(map(float, values)), window_len=window_len,
                                       max_pvalue=config.max_p_value, min_magnitude=0.0)
        points = result[0] if isinstance(result, tuple) else result
        return [(int(cp.index), float(cp.stats.mean_2 - cp.stats.mean_1)) for cp in points]

    return run


ORACLE_CALIBRATION_SEED = 1_000_003  # not the suite's seed: h is fitted on other series


def oracle(sigma: float, h: float, window: int) -> synthetic.Detector:
    """What no detector can beat by much: it knows the night's noise (sigma) and the level
    before any change (the suite's LEVEL), and on each night alarms when the mean of the last
    ``window`` nights is more than h standard errors from that level. With h fitted to the
    same false-alarm rate (:func:`calibrate_oracle`), its detection rate bounds what a detector
    that must estimate both from the series can reach at that rate."""

    def run(values: Sequence[float]) -> list[tuple[int, float]]:
        if len(values) < window:
            return []
        shift = float(np.mean(values[-window:])) - synthetic.LEVEL
        if abs(shift) > h * sigma / math.sqrt(window):
            return [(len(values) - window, shift)]
        return []

    return run


def calibrate_oracle(window: int, first_night: int, target_per_100: float,
                     series: int) -> float:
    """The oracle's h at which step-free independent noise gives ``target_per_100`` false
    alarms per 100 nights (bisection; the rate falls as h grows)."""
    spec = synthetic.SeriesSpec(kind="flat", cov=0.05)
    drawn = synthetic.draw(spec, series, ORACLE_CALIBRATION_SEED)
    sigma = spec.cov * synthetic.LEVEL
    low, high = 0.5, 8.0
    for _ in range(30):
        h = (low + high) / 2
        rate = synthetic.score(spec, drawn, oracle(sigma, h, window),
                               first_night=first_night).false_alarms_per_100_nights or 0.0
        low, high = (h, high) if rate > target_per_100 else (low, h)
    return high


class _Counted:
    """A detector that counts its calls and their time (for the ms per run in the report;
    a testbed's detector's time includes its share of the pooled autocorrelation)."""

    def __init__(self, detector: synthetic.Detector | None) -> None:
        self.detector = detector
        self.calls = 0
        self.seconds = 0.0

    def __call__(self, values: Sequence[float]) -> Sequence[tuple[int, float]]:
        assert self.detector is not None
        return self.wrap(self.detector)(values)

    def wrap(self, detector: synthetic.Detector) -> synthetic.Detector:
        def run(values: Sequence[float]) -> Sequence[tuple[int, float]]:
            start = time.perf_counter()
            try:
                return detector(values)
            finally:
                self.calls += 1
                self.seconds += time.perf_counter() - start

        return run


def told_rho(config: DetectorConfig, rho: float) -> synthetic.Detector:
    """lsmbench's detector given the true autocorrelation (``detect(values, rho=...)``), as
    --rho-told runs it: what the testbed's pooled estimate costs, not a detector."""

    def run(values: Sequence[float]) -> list[tuple[int, float]]:
        return [(cp.index, cp.change) for cp in detect(values, config, rho=rho)]

    return run


def flicker_main(args: argparse.Namespace, config: DetectorConfig,
                 specs: Sequence[synthetic.SeriesSpec], testbeds: bool) -> int:
    """--flicker: per step kind, the nightly runs in the 10 nights after a change is first
    reported and how many of them miss it, without and with keeping reported changes."""
    rows = []
    print("| change | series | runs after the first report | missed, not kept | "
          "missed, kept |\n|---|---:|---:|---:|---:|")
    for spec in specs:
        counts = {}
        for hold in (False, True):
            if testbeds:
                drawn = synthetic.draw_testbeds(spec, args.series, args.seed, args.testbed,
                                                args.testbed_shared)
                pairs = [(s, d) for tb in drawn for s, d in zip(
                    tb, synthetic.testbed_detectors(tb, config, hold=hold), strict=True)]
            else:
                pairs = [(s, synthetic.detector_of(config, hold=hold))
                         for s in synthetic.draw(spec, args.series, args.seed)]
            results = [synthetic.flicker(s, d) for s, d in pairs]
            counts[hold] = (sum(r for r, _ in results), sum(m for _, m in results))
        rows.append({"label": spec.label, "series": args.series, "runs": counts[False][0],
                     "missed": counts[False][1], "runs_kept": counts[True][0],
                     "missed_kept": counts[True][1]})
        print(f"| {spec.label} | {args.series} | {counts[False][0]} | {counts[False][1]} | "
              f"{counts[True][1]} |", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"flicker": rows, "seed": args.seed, "testbed": args.testbed,
                               "config": config.model_dump()}, indent=2))
    print(f"wrote {out}")
    return 0


# ---------------------------------------------------------------- paired nights

PAIRED_CALIBRATION_SEED = 1_000_003  # the informed bound's h is fitted on other series
PAIRED_BOUND_RATE = 1.0  # false alarms per 100 nights the bound is fitted to: the target's


def _night_log_ratios(series: synthetic_paired.PairedSeries) -> np.ndarray:
    """Each night's mean log ratio of the candidate to the build before night 0: a reference
    before any change, every night (what the informed bound is told)."""
    return np.array([np.mean(np.log([c / r for r, c in series.pairs(t, -1)]))
                     for t in range(series.spec.nights)])


def _bound_alarms(means: np.ndarray, h: float, se: float, window: int,
                  better: str) -> np.ndarray:
    """Nights whose newest ``window`` nights' mean log ratio is h standard errors worse."""
    worse = -means if better == "higher" else means
    pooled = np.convolve(worse, np.ones(window) / window)[window - 1:len(worse)]
    alarms = np.zeros(len(worse), dtype=bool)
    alarms[window - 1:] = pooled > h * se / math.sqrt(window)
    return alarms


def paired_bound(spec: synthetic_paired.PairedSpec, series: int, seed: int, window: int,
                 target_per_100: float) -> dict[str, float]:
    """The informed bound beside the paired detector: told the spread of a pair's log ratio
    (sqrt(2 (1 - shared)) CoV) and compared every night with a build from before any change
    (no acceptance to get wrong), it alarms when the newest ``window`` nights' mean log ratio
    is h standard errors worse than no change, h fitted on other step-free series to
    ``target_per_100`` false alarms per 100 nights; its share of regressions found within 2
    nights (the change night of an alarm is taken as found: it is told nothing of where)."""
    sigma = math.sqrt(2.0 * (1.0 - spec.shared)) * spec.cov
    se = sigma / math.sqrt(spec.reps)
    flat = spec.model_copy(update={"kind": "flat", "step": 0.0})
    calibration = [_night_log_ratios(s) for s in synthetic_paired.draw_paired(
        flat, series, PAIRED_CALIBRATION_SEED)]

    def rate(h: float) -> float:
        alarms = 0
        for means in calibration:
            nights = np.flatnonzero(_bound_alarms(means, h, se, window, spec.better)).tolist()
            alarms += len(synthetic.alarm_clusters(nights, synthetic.TOLERANCE))
        return 100.0 * alarms / (len(calibration) * spec.nights)

    low, high = 0.5, 8.0
    for _ in range(30):
        h = (low + high) / 2
        low, high = (h, high) if rate(h) > target_per_100 else (low, h)
    found = 0
    drawn = synthetic_paired.draw_paired(spec, series, seed)
    for s in drawn:
        assert s.change_at is not None
        alarms = _bound_alarms(_night_log_ratios(s), high, se, window, spec.better)
        found += bool(alarms[s.change_at:s.change_at + 3].any())
    return {"h": high, "false_alarms_per_100_nights": rate(high),
            "found_within_2": found / len(drawn)}


def _paired_row(name: str, s: synthetic.Score) -> str:
    if s.false_alarms is not None:
        return (f"| {name} | {s.series} | {_num(s.false_alarms_per_100_nights, 2)} "
                f"({_pct(s.series_with_false_alarm)} of series) | | | |")
    return (f"| {name} | {s.series} | | {_pct(s.found_within)} | {_pct(s.found)} | "
            f"{_num(s.median_delay)} / {_num(s.p90_delay)} |")


def paired_main(args: argparse.Namespace, single_config: DetectorConfig) -> int:
    """--paired: per setting (CoV, shared share, pairs a night, rho), the paired detector and
    the single-series one on step-free series, a regression and an improvement."""
    overrides: dict[str, Any] = {}
    for item in args.paired_set:
        key, _, value = item.partition("=")
        overrides[key.strip()] = yaml.safe_load(value)
    config = synthetic_paired.PairedDetectorConfig(**overrides)
    cov = args.cov if args.cov is not None else 0.05
    settings = [(float(sh), int(r), float(rho))
                for sh in args.paired_shared.split(",") for r in args.paired_reps.split(",")
                for rho in args.paired_rho.split(",")]
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    lines = ["| series | testbeds | false alarms / 100 nights, regressions only | "
             "regression found within 2 nights | found by night 60 | "
             "median / p90 delay (nights) |", "|---|---:|---:|---:|---:|---:|"]
    for shared, reps, rho in settings:
        base = dict(cov=cov, shared=shared, reps=reps, rho=rho)
        specs = [synthetic_paired.PairedSpec(kind="flat", **base),
                 synthetic_paired.PairedSpec(kind="step", step=-args.paired_step, **base),
                 synthetic_paired.PairedSpec(kind="step", step=args.paired_step, **base)]
        for spec in specs:
            drawn = synthetic_paired.draw_paired(spec, args.series, args.seed)
            paired = synthetic_paired.score_paired(spec, drawn, config)
            single = (None if args.no_single
                      else synthetic_paired.score_single(spec, drawn, single_config))
            bound = (paired_bound(spec, args.series, args.seed, config.window,
                                  PAIRED_BOUND_RATE)
                     if args.paired_bound and spec.regression else None)
            rows.append({"spec": spec.model_dump(), "label": spec.label,
                         "paired": paired.model_dump(),
                         "single": None if single is None else single.model_dump(),
                         "bound": bound})
            lines.append(_paired_row(f"paired: {spec.label}", paired))
            if single is not None:
                lines.append(_paired_row(f"single series: {spec.label}", single))
            if bound is not None:
                lines.append(f"| informed bound (told the noise, window {config.window}, "
                             f"h {bound['h']:.2f}): {spec.label} | {args.series} | "
                             f"{bound['false_alarms_per_100_nights']:.2f} | "
                             f"{bound['found_within_2']:.0%} | | |")
            print(f"  {spec.label}: done ({time.monotonic() - started:.0f} s)",
                  file=sys.stderr, flush=True)
    elapsed = time.monotonic() - started
    print(f"paired nights: {args.series} testbeds per kind, seed {args.seed}, the seeds of "
          f"each testbed derived from (seed, label, i); paired config {config.model_dump()}; "
          f"single-series config {single_config.model_dump()}")
    print("\n".join(lines))
    print(f"\n{elapsed:.0f} s in all")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "paired": True, "series_per_kind": args.series, "seed": args.seed,
        "paired_config": config.model_dump(), "single_config": single_config.model_dump(),
        "seconds": elapsed, "rows": rows,
    }, indent=2))
    print(f"wrote {out}")
    return 0


def _config(sets: Sequence[str]) -> DetectorConfig:
    overrides: dict[str, Any] = {}
    for item in sets:
        key, _, value = item.partition("=")
        overrides[key.strip()] = yaml.safe_load(value)
    return DetectorConfig(**overrides)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _num(x: float | None, digits: int = 1) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def table(scores: Sequence[synthetic.Score]) -> str:
    """Two Markdown tables: step-free series, then series with a change."""
    lines = ["| step-free series | series | false alarms / 100 nights | series with one |",
             "|---|---:|---:|---:|"]
    lines += [f"| {s.label} | {s.series} | {_num(s.false_alarms_per_100_nights, 2)} | "
              f"{_pct(s.series_with_false_alarm)} |"
              for s in scores if s.false_alarms is not None]
    lines += ["", "| change | series | found within 3 nights | found by night 60 | "
              "median delay | p90 delay |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {s.label} | {s.series} | {_pct(s.found_within)} | {_pct(s.found)} | "
              f"{_num(s.median_delay)} | {_num(s.p90_delay)} |"
              for s in scores if s.found is not None]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--series", type=int, default=200, help="series per kind (default 200)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--library", choices=("ruptures", "otava", "otava-raw", "oracle"),
                   default="ruptures")
    p.add_argument("--otava-window", type=int, default=OTAVA_WINDOW)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a DetectorConfig field, e.g. --set min_segment=3 (repeatable)")
    p.add_argument("--only", default=None,
                   help="comma-separated kinds to run (flat,spikes,bimodal,step,drift)")
    p.add_argument("--cov", type=float, default=None,
                   help="only the kinds at this CoV (e.g. 0.05)")
    p.add_argument("--step", type=float, default=None,
                   help="only the step and drift kinds of this size (e.g. 0.10)")
    p.add_argument("--out", default="results/bench/track_detect_synthetic.json",
                   help="the JSON written (default: %(default)s)")
    p.add_argument("--oracle-rate", type=float, default=1.0,
                   help="--library oracle: the false alarms per 100 nights h is fitted to")
    p.add_argument("--testbed", type=int, default=synthetic.TESTBED_SIZE, metavar="SIZE",
                   help="series per testbed, whose detector is given the autocorrelation "
                        "pooled over them as track report pools a testbed key's series "
                        "(default %(default)s; 1: each series alone, its own estimate, as "
                        "track detect FILE.csv)")
    p.add_argument("--testbed-shared", type=float, default=synthetic.TESTBED_SHARED,
                   help="the share of a night's noise variance a testbed's series have in "
                        "common (default %(default)s)")
    p.add_argument("--rho-told", action="store_true",
                   help="give every series' detector its kind's true autocorrelation instead "
                        "of the testbed's pooled estimate (the same series): a bound on what "
                        "a better estimate of rho could buy, not a feature")
    p.add_argument("--flicker", action="store_true",
                   help="instead of the scores: for the step kinds, how many of the 10 "
                        "nightly runs after a change is first reported miss it, with and "
                        "without keeping reported changes (track report keeps them)")
    p.add_argument("--paired", action="store_true",
                   help="the paired-nights suite instead (issue 33): a reference build and the "
                        "build under test in the same night; the paired detector beside the "
                        "single-series one on the same runs, regressions only")
    p.add_argument("--paired-shared", default=str(synthetic_paired.SHARED),
                   help="--paired: the share of a run's noise variance that is the night's, "
                        "seen by both builds (comma-separated for several; default "
                        "%(default)s)")
    p.add_argument("--paired-reps", default=str(synthetic_paired.REPS),
                   help="--paired: repetitions of each build a night, ABBA (pairs a night; "
                        "comma-separated for several; default %(default)s)")
    p.add_argument("--paired-rho", default="0,0.5",
                   help="--paired: AR(1) of the night's noise across nights (comma-separated; "
                        "default %(default)s)")
    p.add_argument("--paired-step", type=float, default=0.05,
                   help="--paired: the regression's size, a drop of a higher-is-better metric; "
                        "the improvement scored as step-free is the same size up (default "
                        "%(default)s)")
    p.add_argument("--paired-set", action="append", default=[], metavar="KEY=VALUE",
                   help="--paired: a PairedDetectorConfig field, e.g. --paired-set alarm_p=0.005")
    p.add_argument("--paired-bound", action="store_true",
                   help="--paired: also the informed bound (told the noise) on the regressions")
    p.add_argument("--no-single", action="store_true",
                   help="--paired: without the single-series detector (most of the time)")
    args = p.parse_args(argv)

    config = _config(args.set)
    if args.paired:
        return paired_main(args, config)
    first_night = config.min_points - 1
    oracle_h = None
    if args.library == "oracle":
        oracle_h = calibrate_oracle(config.min_segment, first_night, args.oracle_rate,
                                    args.series)
        print(f"oracle: window {config.min_segment} nights, h = {oracle_h:.3f} gives "
              f"{args.oracle_rate} false alarms per 100 nights on independent noise",
              file=sys.stderr)
        detector: synthetic.Detector = oracle(1.0, oracle_h, config.min_segment)  # per spec below
    elif args.library == "otava-raw":
        detector = otava_raw(config, args.otava_window)
    else:
        segmenter = otava_segmenter(args.otava_window) if args.library == "otava" else None
        detector = synthetic.detector_of(config, segmenter)
    counted = _Counted(detector)

    kinds = set(args.only.split(",")) if args.only else None
    specs = [s for s in synthetic.suite() if kinds is None or s.kind in kinds]
    specs = [s for s in specs if args.cov is None or math.isclose(s.cov, args.cov)]
    specs = [s for s in specs if args.step is None or s.kind not in ("step", "drift")
             or math.isclose(s.step, args.step)]
    testbeds = args.testbed > 1 and args.library in ("ruptures", "otava")
    if args.flicker:
        return flicker_main(args, config, [s for s in specs if s.kind == "step"], testbeds)
    if oracle_h is not None:  # it knows sigma, which only means the same for independent noise
        specs = [s for s in specs if s.rho == 0 and s.kind in ("flat", "step")]
    started = time.monotonic()
    scores = []
    all_counted = [counted]
    for spec in specs:
        if testbeds:
            drawn = synthetic.draw_testbeds(spec, args.series, args.seed, args.testbed,
                                            args.testbed_shared)
            series = [s for tb in drawn for s in tb]
            segmenter = otava_segmenter(args.otava_window) if args.library == "otava" else None
            counted = _Counted(None)
            all_counted.append(counted)
            detectors: Any = [counted.wrap(d) for tb in drawn
                              for d in synthetic.testbed_detectors(tb, config, segmenter)]
            if args.rho_told:
                detectors = [counted.wrap(told_rho(config, spec.rho)) for _ in series]
        else:
            series = synthetic.draw(spec, args.series, args.seed)
            detectors = counted.wrap(told_rho(config, spec.rho)) if args.rho_told else counted
        if oracle_h is not None:
            counted = _Counted(oracle(spec.cov * synthetic.LEVEL, oracle_h, config.min_segment))
            all_counted.append(counted)
            detectors = counted
        scores.append(synthetic.score(spec, series, detectors, first_night=first_night))
        print(f"  {spec.label}: done ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    print(f"library {args.library}, {args.series} series per kind, seed {args.seed}, "
          f"testbeds of {args.testbed if testbeds else 1} series"
          f"{', the true rho told' if args.rho_told else ''}, config {config.model_dump()}")
    print(table(scores))
    calls = sum(c.calls for c in all_counted)
    ms = 1000.0 * sum(c.seconds for c in all_counted) / max(calls, 1)
    print(f"\n{calls} detector runs, {ms:.2f} ms each on average, "
          f"{time.monotonic() - started:.0f} s in all")

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "library": args.library, "series_per_kind": args.series, "seed": args.seed,
        "testbed": args.testbed if testbeds else 1, "testbed_shared": args.testbed_shared,
        "rho_told": args.rho_told,
        "config": config.model_dump(), "otava_window": args.otava_window,
        "oracle_h": oracle_h,
        "detector_runs": calls, "ms_per_run": ms,
        "scores": [s.model_dump() for s in scores],
    }, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
