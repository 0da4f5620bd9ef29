"""Seeded synthetic nightly series and the nightly replay that scores a detector on them
(docs/tracking.md, "The synthetic suite").

The series are what a nightly benchmark produces: a level with noise of a given coefficient
of variation (CoV), optionally autocorrelated (AR(1): a slow machine tends to stay slow for a
few nights), with isolated one-night spikes, a bimodal mixture (two states the machine
alternates between at random), a step (the change a detector must find), or a slow drift.

Scoring replays the nights, because that is what a nightly user sees: on night t the detector
runs on nights 0..t.

* **Detection delay** of a step at night k: the smallest d such that the run on nights
  0..k+d reports a change point at k +/- ``tolerance`` with the step's sign.
* **False alarms** of a step-free series: every change point reported on any night's run,
  those within ``tolerance`` of each other counted once (a change point that moves by a night
  as evidence accrues is still one alarm to the user); per 100 nights is that count over the
  series' nights.

Both the tests (``pipelines/tests/track/test_track_detect.py``) and the benchmark
(``research/bench/track_detect_synthetic.py``) use this module; it never times anything.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy import signal

from lsmbench.track.detect import (
    Autocorrelation,
    DetectorConfig,
    Segmenter,
    autocorrelation,
    detect,
    pooled_autocorrelation,
)

Kind = Literal["flat", "spikes", "bimodal", "step", "drift"]

# A detector as the replay sees it: values -> [(index, signed relative change), ...].
Detector = Callable[[Sequence[float]], Sequence[tuple[int, float]]]

LEVEL = 100.0
NIGHTS = 60
TOLERANCE = 2  # nights either side of the true change that still count as finding it
AR_BURN_IN = 200  # nights discarded so the AR(1) process starts from its stationary state


class SeriesSpec(BaseModel):
    """One kind of synthetic series; :func:`generate` draws instances of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    cov: float  # noise: the standard deviation of a night over the level (marginal, for AR)
    rho: float = 0.0  # AR(1) coefficient of the noise
    nights: int = NIGHTS
    step: float = 0.0  # step (or drift total): relative change of the level, signed
    step_from: int = 20  # a step starts at a night drawn from [step_from, step_until]
    step_until: int = 40
    drift_nights: int = 10  # a drift ramps the level over this many nights
    spikes: int = 3  # spike series: isolated one-night spikes per series
    spike_min: float = 0.2  # spike size, relative to the level, drawn from [min, max]
    spike_max: float = 0.6
    bimodal_gap: float = 0.15  # the second mode's level above the first, relative
    bimodal_share: float = 0.3  # the share of nights in the second mode

    @property
    def label(self) -> str:
        noise = f"CoV {self.cov:.0%} rho {self.rho:g}"
        if self.kind == "step":
            return f"step {self.step:+.0%}, {noise}"
        if self.kind == "drift":
            return f"drift {self.step:+.0%} over {self.drift_nights} nights, {noise}"
        return f"{self.kind}, {noise}"


class SyntheticSeries(BaseModel):
    """One drawn series and where its change is: nights change_at..change_end (the same night
    for a step; the ramp for a drift; None for a step-free series)."""

    model_config = ConfigDict(frozen=True)

    spec: SeriesSpec
    seed: int
    values: list[float]
    change_at: int | None = None
    change_end: int | None = None


def ar1_noise(rng: np.random.Generator, n: int, sigma: float, rho: float) -> np.ndarray:
    """Stationary AR(1) noise whose marginal standard deviation is sigma: the innovations are
    scaled by sqrt(1 - rho^2) so that a CoV means the same with and without autocorrelation."""
    innovations = rng.normal(0.0, sigma * np.sqrt(1.0 - rho * rho), n + AR_BURN_IN)
    return signal.lfilter([1.0], [1.0, -rho], innovations)[AR_BURN_IN:]


def _spike_nights(rng: np.random.Generator, nights: int, count: int) -> list[int]:
    """Nights for isolated spikes: at least 5 nights apart, so each one is a single spike."""
    chosen: list[int] = []
    for night in rng.permutation(np.arange(2, nights)):
        if all(abs(int(night) - c) >= 5 for c in chosen):
            chosen.append(int(night))
        if len(chosen) == count:
            break
    return sorted(chosen)


def generate(spec: SeriesSpec, seed: int, shared: np.ndarray | None = None,
             shared_share: float = 0.0) -> SyntheticSeries:
    """One series of ``spec`` drawn from ``seed`` (the same seed gives the same series).
    ``shared``: a testbed's own unit AR(1) noise (:func:`draw_testbeds`), of which the series'
    noise takes ``shared_share`` of its variance (its marginal CoV and rho are unchanged)."""
    rng = np.random.default_rng(seed)
    n = spec.nights
    level = np.full(n, LEVEL)
    change_at: int | None = None
    if spec.kind == "step":
        change_at = int(rng.integers(spec.step_from, spec.step_until + 1))
        level[change_at:] *= 1.0 + spec.step
    elif spec.kind == "drift":
        change_at = int(rng.integers(spec.step_from, spec.step_until + 1))
        ramp = np.clip((np.arange(n) - change_at + 1) / spec.drift_nights, 0.0, 1.0)
        level *= 1.0 + spec.step * ramp
    elif spec.kind == "bimodal":
        level[rng.random(n) < spec.bimodal_share] *= 1.0 + spec.bimodal_gap
    noise = ar1_noise(rng, n, spec.cov * LEVEL, spec.rho)
    if shared is not None and shared_share > 0:
        noise = (np.sqrt(1.0 - shared_share) * noise
                 + np.sqrt(shared_share) * spec.cov * LEVEL * shared[:n])
    values = level + noise
    if spec.kind == "spikes":
        for night in _spike_nights(rng, n, spec.spikes):
            size = rng.uniform(spec.spike_min, spec.spike_max) * rng.choice([-1.0, 1.0])
            values[night] += size * LEVEL
    change_end = None
    if change_at is not None:
        change_end = change_at + (spec.drift_nights - 1 if spec.kind == "drift" else 0)
    return SyntheticSeries(spec=spec, seed=seed, values=[float(v) for v in values],
                  change_at=change_at, change_end=change_end)


def draw(spec: SeriesSpec, count: int, seed: int) -> list[SyntheticSeries]:
    """``count`` independent series of ``spec``. Series i's seed derives from (seed, the
    spec's label, i): adding series or kinds never changes the others, and every detector
    compared sees the same series."""
    root = np.random.SeedSequence([seed, zlib.crc32(spec.label.encode())])
    return [generate(spec, int(child.generate_state(1)[0])) for child in root.spawn(count)]


TESTBED_SIZE = 8  # series per testbed: the nightly campaign's metrics of one group
TESTBED_SHARED = 0.5  # the share of a night's noise variance a testbed's series have in common


def draw_testbeds(spec: SeriesSpec, count: int, seed: int, size: int = TESTBED_SIZE,
                  shared_share: float = TESTBED_SHARED) -> list[list[SyntheticSeries]]:
    """``count`` series of ``spec`` as testbeds of ``size`` series each (the last one may be
    smaller): the series of one testbed are what the metrics of one machine's nights are,
    each of this kind (its own step night, spikes, modes), with the same autocorrelation,
    and ``shared_share`` of their noise variance in common (the machine's state that night).
    Series i has the seed it has in :func:`draw`; at ``shared_share`` 0 the series are those
    of :func:`draw`."""
    root = np.random.SeedSequence([seed, zlib.crc32(spec.label.encode())])
    seeds = [int(child.generate_state(1)[0]) for child in root.spawn(count)]
    testbeds = []
    for j, first in enumerate(range(0, count, size)):
        machine = np.random.default_rng(
            np.random.SeedSequence([seed, zlib.crc32(spec.label.encode()), 0x7E57BED, j]))
        shared = ar1_noise(machine, spec.nights, 1.0, spec.rho)
        testbeds.append([generate(spec, s, shared, shared_share)
                         for s in seeds[first:first + size]])
    return testbeds


def suite(covs: Sequence[float] = (0.02, 0.05, 0.10), rhos: Sequence[float] = (0.0, 0.5),
          steps: Sequence[float] = (0.05, 0.10, 0.15, 0.20)) -> list[SeriesSpec]:
    """The synthetic suite of issue 14: step-free series (plain noise at each CoV and AR(1)
    rho, isolated spikes, a bimodal mixture), steps of each size, and a slow drift (asv's
    blind spot: 10 % over 10 nights)."""
    specs = [SeriesSpec(kind="flat", cov=c, rho=r) for c in covs for r in rhos]
    specs += [SeriesSpec(kind=k, cov=c) for k in ("spikes", "bimodal") for c in covs]
    specs += [SeriesSpec(kind="step", cov=c, rho=r, step=s)
              for s in steps for c in covs for r in rhos]
    specs += [SeriesSpec(kind="drift", cov=c, step=0.10) for c in covs]
    return specs


# ---------------------------------------------------------------- the nightly replay


def detection_delay(series: SyntheticSeries, detector: Detector, *,
                    tolerance: int = TOLERANCE) -> int | None:
    """Nights after the change starts until the nightly run first reports it (at the change,
    or anywhere on a drift's ramp, within ``tolerance``; with the change's sign); None if no
    night up to the last one does."""
    if series.change_at is None or series.change_end is None:
        raise ValueError("a step-free series has no detection delay")
    first, last = series.change_at - tolerance, series.change_end + tolerance
    sign = np.sign(series.spec.step)
    for night in range(series.change_at, series.spec.nights):
        for index, change in detector(series.values[: night + 1]):
            if first <= index <= last and np.sign(change) == sign:
                return night - series.change_at
    return None


def flicker(series: SyntheticSeries, detector: Detector, *, nights_after: int = 10,
            tolerance: int = TOLERANCE) -> tuple[int, int]:
    """After the night a change is first reported, on how many of the next ``nights_after``
    nightly runs it is not reported (at the change +/- tolerance, with its sign): (runs, runs
    that miss it). A holding detector must see every night from the change on, as here."""
    if series.change_at is None or series.change_end is None:
        raise ValueError("a step-free series has no change to flicker")
    first, last = series.change_at - tolerance, series.change_end + tolerance
    sign = np.sign(series.spec.step)
    found_on: int | None = None
    runs = misses = 0
    for night in range(series.change_at, series.spec.nights):
        hit = any(first <= index <= last and np.sign(change) == sign
                  for index, change in detector(series.values[: night + 1]))
        if found_on is None:
            found_on = night if hit else None
            continue
        if night - found_on > nights_after:
            break
        runs += 1
        misses += not hit
    return runs, misses


def false_alarms(series: SyntheticSeries, detector: Detector, *, first_night: int,
                 tolerance: int = TOLERANCE) -> int:
    """Distinct change points reported on any night's run of a step-free series: the union
    over nights first_night..last of the reported indices, indices within ``tolerance`` of each
    other counted once."""
    reported: set[int] = set()
    for night in range(first_night, series.spec.nights):
        reported.update(index for index, _ in detector(series.values[: night + 1]))
    return len(alarm_clusters(sorted(reported), tolerance))


def alarm_clusters(indices: Sequence[int], tolerance: int) -> list[list[int]]:
    """Sorted reported indices grouped as the user sees alarms: those within ``tolerance``
    of the previous one are the same alarm."""
    clusters: list[list[int]] = []
    for i in indices:
        if clusters and i - clusters[-1][-1] <= tolerance:
            clusters[-1].append(i)
        else:
            clusters.append([i])
    return clusters


# ---------------------------------------------------------------- scores


class Score(BaseModel):
    """One kind of series scored over many draws (the benchmark's table row)."""

    label: str
    kind: Kind
    cov: float
    rho: float
    step: float
    series: int
    nights: int  # nights over all the series
    # step-free series
    false_alarms: int | None = None
    false_alarms_per_100_nights: float | None = None
    series_with_false_alarm: float | None = None  # share
    # series with a change
    found_within: float | None = None  # share found within `within` nights
    within: int | None = None
    found: float | None = None  # share found by the last night
    median_delay: float | None = None  # nights, over the series where it was found
    p90_delay: float | None = None


def score(spec: SeriesSpec, series: Sequence[SyntheticSeries],
          detector: Detector | Sequence[Detector], *, first_night: int, within: int = 3,
          tolerance: int = TOLERANCE) -> Score:
    """Replay every series of ``spec`` night by night and aggregate. ``detector``: one for
    every series, or one per series (:func:`testbed_detectors`)."""
    detectors = (list(detector) if isinstance(detector, Sequence)
                 else [detector] * len(series))
    base = Score(label=spec.label, kind=spec.kind, cov=spec.cov, rho=spec.rho, step=spec.step,
                 series=len(series), nights=sum(s.spec.nights for s in series))
    if spec.kind in ("step", "drift"):
        delays = [detection_delay(s, d, tolerance=tolerance)
                  for s, d in zip(series, detectors, strict=True)]
        return with_delays(base, delays, len(series), within)
    alarms = [false_alarms(s, d, first_night=first_night, tolerance=tolerance)
              for s, d in zip(series, detectors, strict=True)]
    return base.model_copy(update={
        "false_alarms": sum(alarms),
        "false_alarms_per_100_nights": 100.0 * sum(alarms) / base.nights,
        "series_with_false_alarm": sum(a > 0 for a in alarms) / len(series),
    })


class _Holding:
    """A detector that remembers what it reported on the last night of one series and passes
    it back as ``held`` (as ``track report`` keeps the changes it last reported in the
    history). The memory starts again when the values are not the last night's plus one."""

    def __init__(self, run: Callable[[Sequence[float], Sequence[int]], list[tuple[int, float]]],
                 ) -> None:
        self.run = run
        self.seen: list[float] = []
        self.held: set[int] = set()

    def __call__(self, values: Sequence[float]) -> list[tuple[int, float]]:
        if len(values) != len(self.seen) + 1 or list(values[:-1]) != self.seen:
            self.held = set()
        self.seen = list(values)
        found = self.run(values, sorted(self.held))
        self.held = {index for index, _ in found}  # what was rejected is no longer kept
        return found


def detector_of(config: DetectorConfig | None = None, segmenter: Segmenter | None = None,
                *, hold: bool = False) -> Detector:
    """lsmbench's detector (:func:`lsmbench.track.detect.detect`) as the replay calls it;
    ``hold``: it keeps the changes it reported on the series' earlier nights (see
    :class:`_Holding`), as the history does."""

    def run(values: Sequence[float], held: Sequence[int] = ()) -> list[tuple[int, float]]:
        return [(cp.index, cp.change)
                for cp in detect(values, config, segmenter=segmenter, held=held)]

    return _Holding(run) if hold else run


def testbed_detectors(testbed: Sequence[SyntheticSeries], config: DetectorConfig | None = None,
                      segmenter: Segmenter | None = None, *, hold: bool = False,
                      ) -> list[Detector]:
    """lsmbench's detector for each series of one testbed as the history runs it: on night t
    every series is given the testbed's autocorrelation, pooled over its series' own
    estimates on nights 0..t (:func:`lsmbench.track.detect.pooled_autocorrelation`), as
    ``track report`` pools the series of a testbed key. Night t's pool is computed once,
    whichever series asks first."""
    config = config or DetectorConfig()
    own: dict[tuple[int, int], Autocorrelation | None] = {}

    def pooled(night: int) -> float | None:
        parts = []
        for j, s in enumerate(testbed):
            if (j, night) not in own:
                own[j, night] = (autocorrelation(s.values[: night + 1], config,
                                                 segmenter=segmenter)
                                 if night + 1 >= config.min_points else None)
            parts.append(own[j, night])
        return pooled_autocorrelation(parts)

    def run(values: Sequence[float], held: Sequence[int] = ()) -> list[tuple[int, float]]:
        return [(cp.index, cp.change) for cp in detect(values, config, segmenter=segmenter,
                                                        rho=pooled(len(values) - 1),
                                                        held=held)]

    return [_Holding(run) if hold else run for _ in testbed]


def with_delays(base: Score, delays: Sequence[int | None], series: int, within: int) -> Score:
    """A score with its detection figures: the share of the series whose step was found
    within ``within`` nights and at all, and the median and 90th percentile delays of those
    found (None: not found)."""
    found = [d for d in delays if d is not None]
    return base.model_copy(update={
        "within": within,
        "found_within": sum(d <= within for d in found) / series,
        "found": len(found) / series,
        "median_delay": float(np.median(found)) if found else None,
        "p90_delay": float(np.percentile(found, 90)) if found else None,
    })
