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

Both the tests (``pipelines/tests/test_track_detect.py``) and the benchmark
(``pipelines/bench/track_detect_synthetic.py``) use this module; it never times anything.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy import signal

from lsmbench.track.detect import DetectorConfig, Segmenter, detect

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


class Series(BaseModel):
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


def generate(spec: SeriesSpec, seed: int) -> Series:
    """One series of ``spec`` drawn from ``seed`` (the same seed gives the same series)."""
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
    values = level + ar1_noise(rng, n, spec.cov * LEVEL, spec.rho)
    if spec.kind == "spikes":
        for night in _spike_nights(rng, n, spec.spikes):
            size = rng.uniform(spec.spike_min, spec.spike_max) * rng.choice([-1.0, 1.0])
            values[night] += size * LEVEL
    change_end = None
    if change_at is not None:
        change_end = change_at + (spec.drift_nights - 1 if spec.kind == "drift" else 0)
    return Series(spec=spec, seed=seed, values=[float(v) for v in values],
                  change_at=change_at, change_end=change_end)


def draw(spec: SeriesSpec, count: int, seed: int) -> list[Series]:
    """``count`` independent series of ``spec``. Series i's seed derives from (seed, the
    spec's label, i): adding series or kinds never changes the others, and every detector
    compared sees the same series."""
    root = np.random.SeedSequence([seed, zlib.crc32(spec.label.encode())])
    return [generate(spec, int(child.generate_state(1)[0])) for child in root.spawn(count)]


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


def detection_delay(series: Series, detector: Detector, *,
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


def false_alarms(series: Series, detector: Detector, *, first_night: int,
                 tolerance: int = TOLERANCE) -> int:
    """Distinct change points reported on any night's run of a step-free series: the union
    over nights first_night..last of the reported indices, indices within ``tolerance`` of each
    other counted once."""
    reported: set[int] = set()
    for night in range(first_night, series.spec.nights):
        reported.update(index for index, _ in detector(series.values[: night + 1]))
    return len(_clusters(sorted(reported), tolerance))


def _clusters(indices: Sequence[int], tolerance: int) -> list[list[int]]:
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


def score(spec: SeriesSpec, series: Sequence[Series], detector: Detector, *,
          first_night: int, within: int = 3, tolerance: int = TOLERANCE) -> Score:
    """Replay every series of ``spec`` night by night and aggregate."""
    base = Score(label=spec.label, kind=spec.kind, cov=spec.cov, rho=spec.rho, step=spec.step,
                 series=len(series), nights=sum(s.spec.nights for s in series))
    if spec.kind in ("step", "drift"):
        delays = [detection_delay(s, detector, tolerance=tolerance) for s in series]
        found = [d for d in delays if d is not None]
        return base.model_copy(update={
            "within": within,
            "found_within": sum(d <= within for d in found) / len(series),
            "found": len(found) / len(series),
            "median_delay": float(np.median(found)) if found else None,
            "p90_delay": float(np.percentile(found, 90)) if found else None,
        })
    alarms = [false_alarms(s, detector, first_night=first_night, tolerance=tolerance)
              for s in series]
    return base.model_copy(update={
        "false_alarms": sum(alarms),
        "false_alarms_per_100_nights": 100.0 * sum(alarms) / base.nights,
        "series_with_false_alarm": sum(a > 0 for a in alarms) / len(series),
    })


def detector_of(config: DetectorConfig | None = None,
                segmenter: Segmenter | None = None) -> Detector:
    """lsmbench's detector (:func:`lsmbench.track.detect.detect`) as the replay calls it."""

    def run(values: Sequence[float]) -> list[tuple[int, float]]:
        return [(cp.index, cp.change) for cp in detect(values, config, segmenter=segmenter)]

    return run
