"""Change points of one nightly series: ``lsmbench track detect FILE.csv`` and the history's
detector (docs/tracking.md, "Detecting a change").

The segmentation is a maintained library's: ruptures' kernel change-point detection with a
linear kernel (PELT on the squared-error cost, in C), on the series in units of its own noise
and with a BIC penalty. It proposes where the level changes. What the library does not know
about nightly benchmarks is ours, applied to every proposed change point in a merge loop that
drops the weakest one and re-tests its neighbours on the longer segments left (the merge step
of Hunter/Otava, Fleming et al., ICPE 2023). A change point is kept when:

* each side has ``min_segment`` nights (the library's ``min_size``): the newest night alone
  is never a change;
* **most nights hold the shift** (the segments' medians, for an even count the middle value
  nearer the other side, differ by ``min_magnitude_noise`` times the series' measured noise):
  a spike, or a spike and its echo, is not a change, and a quiet series reports small
  changes that a noisy one cannot;
* Student's t-test between the two whole segments gives ``p <= max_p_value``, with the
  nights counted as the n(1-rho)/(1+rho) independent ones they are worth when consecutive
  nights are correlated (a machine slow for a few nights running);
* the shorter segment's level is new to the longer one (``max_overlap``): a run of nights in
  a bimodal machine's second mode is a level the series visits anyway.

Beside the segmentation, the newest ``min_segment`` nights are tested against the level since
the last change point with the noise measured on that level (:func:`_newest_nights`): the
segmentation's test estimates the noise from a 4-night segment too and so finds a fresh step
later than a test that knows it.

Direction is not decided here: ``change`` is signed, and whether up is a regression depends on
the metric (the history maps that).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Literal

import numpy as np
import ruptures
from pydantic import BaseModel, ConfigDict, Field
from scipy import stats

from lsmbench.spec.reading import read_text
from lsmbench.util.exits import EXIT_OK, EXIT_USAGE

MAX_CSV_BYTES = 64 << 20  # a nightly series is kilobytes; this only stops a wrong file early


class DetectError(ValueError):
    """A series the detector cannot analyse; the message says why."""


class NotEnoughData(DetectError):
    """Fewer values than two minimum segments: no change point can be confirmed."""


class BadSeries(DetectError):
    """A value that is not a finite number."""


class DetectorConfig(BaseModel):
    """The detector's knobs. The defaults were chosen on the synthetic suite
    (docs/tracking.md, "The synthetic suite"); each guards against something named below."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_p_value: float = Field(
        0.001, gt=0.0, le=1.0,
        description="a change point is kept when the test between the segments before and "
                    "after it gives p <= this; lower: fewer false alarms, later detection "
                    "(the newest nights' test, below, finds a fresh step sooner)")
    min_segment: int = Field(
        4, ge=2,
        description="nights each side of a change point (with the held shift, most of them "
                    "on the new level: 3 of 4): a step is reported 2 or 3 nights after it "
                    "at the earliest, a spike never")
    min_magnitude_noise: float = Field(
        1.0, ge=0.0,
        description="the shift most nights hold (the medians, for an even count the middle "
                    "value nearer the other side) must be at least this many times the "
                    "series' measured noise (robust standard deviation of a night)")
    min_change: float = Field(
        0.0, ge=0.0,
        description="and by at least this relative change (0.02 = 2 %), whatever the noise")
    penalty: float = Field(
        2.0, gt=0.0,
        description="ruptures' penalty per change point, times log(n), in units of the "
                    "noise variance (2 is BIC); lower proposes more candidates to test")
    test: Literal["student", "mannwhitney"] = Field(
        "student",
        description="the significance test between two segments: Student's t (pooled "
                    "variance, as Otava's; the most power on a short new segment) or "
                    "Mann-Whitney U (ranks)")
    max_overlap: float = Field(
        0.1, ge=0.0, le=1.0,
        description="the shorter segment's level must be new to the longer one: at most this "
                    "share of the longer segment's nights reach it (a bimodal machine's "
                    "second mode comes back at random, a new level does not)")
    newest_max_p_value: float = Field(
        0.02, ge=0.0, le=1.0,
        description="the newest nights' test (0 turns it off): the mean of the newest "
                    "min_segment nights against the level since the last change, in units "
                    "of the measured noise (with its autocorrelation); a change there is "
                    "reported when p <= this. It finds a step on the first night a segment "
                    "of min_segment nights allows, where the segmentation needs more")
    newest_min_magnitude_noise: float = Field(
        0.5, ge=0.0,
        description="the newest nights' test's held shift (min_magnitude_noise's, for the "
                    "newest min_segment nights against the level before them): 3 of 4 of "
                    "them at least this many noise beyond the level. Lower than the "
                    "segmentation's: the spread bound below already refuses a spike or two "
                    "bad nights, and the test's p the noise")
    newest_max_overlap: float = Field(
        0.1, ge=0.0, le=1.0,
        description="the newest nights' test's max_overlap: at most this share of the level's "
                    "nights reach the newest nights' mean (a night beyond 3 noise counted at "
                    "3; a bimodal machine's second mode)")
    newest_max_spread: float = Field(
        2.0, gt=0.0,
        description="the newest nights are one level only when their standard deviation is "
                    "at most this many times the noise (independent nights exceed 2 in 0.7 % "
                    "of windows): two bad nights and two ordinary ones, or a spike, are not a "
                    "new level however far they pull the mean")
    autocorrelation: bool = Field(
        True,
        description="correct for run-to-run autocorrelation (a machine slow for a few "
                    "nights): the t-test counts n(1-rho)/(1+rho) effective nights per segment "
                    "and the noise is the marginal one")

    @property
    def min_points(self) -> int:
        """The fewest values the detector analyses: one minimum segment each side."""
        return 2 * self.min_segment


class ChangePoint(BaseModel):
    """A change in the series' level, confirmed by the significance test and the guards."""

    index: int  # first index of the new segment
    time: str | float | int | None = None  # the first column's value at index (CSV)
    before: float  # median of the segment before
    after: float  # median of the segment after
    change: float  # (after - before) / |before|, signed; +-inf when before is 0 (JSON: null)
    p_value: float | None


# A segmentation: (values in units of their noise, config) -> first indices of new segments.
Segmenter = Callable[[np.ndarray, DetectorConfig], list[int]]


# ---------------------------------------------------------------- noise

MAX_RHO = 0.9  # beyond this a series is a random walk, not noise about a level


class Noise(BaseModel):
    """How much one night varies about its segment's level."""

    sigma: float  # robust standard deviation of a night
    rho: float  # lag-1 autocorrelation of the nights about their level, in [0, MAX_RHO]
    level: float  # the series' median

    @property
    def cov(self) -> float:
        if self.level == 0:
            return 0.0 if self.sigma == 0 else math.inf
        return self.sigma / abs(self.level)


def difference_sigma(x: np.ndarray) -> float:
    """The robust standard deviation of a night from successive differences: their median
    absolute deviation (scaled to a normal sigma) over sqrt(2). Differences ignore the level,
    so a step or a drift is not noise, and the median ignores spikes; autocorrelated nights
    differ less than independent ones, so this alone underestimates their spread."""
    diffs = np.diff(x)
    if len(diffs) == 0:
        return 0.0
    return float(stats.median_abs_deviation(diffs, scale="normal")) / math.sqrt(2.0)


def _residuals(x: np.ndarray, cuts: Sequence[int]) -> np.ndarray:
    bounds = [0, *cuts, len(x)]
    return np.concatenate([x[a:b] - np.median(x[a:b]) for a, b in pairwise(bounds)])


class Autocorrelation(BaseModel):
    """A series' lag-1 autocorrelation about its levels, as one share of a testbed's pooled
    estimate (:func:`pooled_autocorrelation`): the bias-corrected value, not clipped (a pool
    of clipped estimates would be biased up), and the number of nights it was measured on."""

    rho: float
    nights: int


def _lag1(resid: np.ndarray, segments: int = 1) -> Autocorrelation | None:
    """The lag-1 autocorrelation of residuals about ``segments`` levels each estimated from
    its own nights, corrected for that estimation's bias; None when there is nothing to
    measure. Measured on ranks (a spike moves one rank, not the estimate)."""
    if len(resid) <= 3 or np.ptp(resid) <= 0:
        return None
    r_s = float(stats.spearmanr(resid[:-1], resid[1:]).statistic)
    if not math.isfinite(r_s):
        return None
    # The rank correlation of a normal pair is (6/pi) arcsin(r/2) of its correlation r
    # (Pearson 1907; Kruskal 1958): 0.48 for 0.5, so back to the correlation first
    r = 2.0 * math.sin(math.pi * r_s / 6.0)
    # The lag-1 autocorrelation about a mean estimated from n nights is biased low by
    # (1 + 4 rho) / n (Marriott & Pope 1954; Kendall's (1 + 3 rho) / n is the least-squares
    # slope's, a smaller bias: it under-corrected rho 0.5 to about 0.42). Each segment's level
    # is estimated from its own nights, so each costs its share: k segments in n nights,
    # E[r] = rho - k (1 + 4 rho) / n, inverted below
    n = len(resid)
    # The expansion holds for levels of 8 nights or more (its error at 16 is under 0.01);
    # levels shorter than that on average are counted as if they were 8 nights long, so that
    # the correction at most doubles the estimate rather than dividing by nearly nothing
    k = min(max(segments, 1), n / 8.0)
    if n <= 4 * k + 1:
        return None
    return Autocorrelation(rho=(n * r + k) / (n - 4.0 * k), nights=n)


def _clip_rho(rho: float) -> float:
    return min(max(rho, 0.0), MAX_RHO)


def _measure_noise(x: np.ndarray, cuts: Sequence[int]) -> Noise:
    """The larger of two robust spreads -- from successive differences (blind to
    autocorrelation) and about the segments' medians (blind to a change the segmentation
    missed) -- and the rank autocorrelation at lag 1 about the segments' medians (each
    segment's level corrected for: :func:`_lag1`)."""
    resid = _residuals(x, cuts)
    about_levels = float(stats.median_abs_deviation(resid, scale="normal"))
    lag1 = _lag1(resid, len(cuts) + 1)
    return Noise(sigma=max(difference_sigma(x), about_levels),
                 rho=0.0 if lag1 is None else _clip_rho(lag1.rho),
                 level=float(np.median(x)))


def noise_of(values: Sequence[float], config: DetectorConfig | None = None) -> Noise:
    """The series' noise as the detector measures it (about the levels it finds, so a step is
    not noise). Series too short to analyse get the difference-based spread alone."""
    config = config or DetectorConfig()
    x = np.asarray(values, dtype=float)
    if len(x) < config.min_points or not np.all(np.isfinite(x)):
        finite = x[np.isfinite(x)]
        return Noise(sigma=difference_sigma(finite), rho=0.0,
                     level=float(np.median(finite)) if len(finite) else 0.0)
    return _analyse(x, config, ruptures_segments)[1]


def noise(values: Sequence[float]) -> float:
    """The series' noise as a coefficient of variation (the robust standard deviation of a
    night over the median's magnitude; inf for a noisy series whose median is 0, 0 for a
    constant one). What the history report shows beside each series."""
    return noise_of(values).cov


# ---------------------------------------------------------------- detection


def ruptures_segments(z: np.ndarray, config: DetectorConfig) -> list[int]:
    """ruptures' PELT with a linear kernel (least squares on the level), no segment shorter
    than ``min_segment``; the penalty per change point is ``penalty * log(n)`` (z is in units
    of the noise, so this is BIC's at penalty 2)."""
    algo = ruptures.KernelCPD(kernel="linear", min_size=config.min_segment).fit(z)
    breakpoints = algo.predict(pen=config.penalty * math.log(len(z)))
    return [int(b) for b in breakpoints[:-1]]  # the last one is len(z), the end


class _Candidate(BaseModel):
    index: int
    before_n: int
    after_n: int
    before: float  # medians
    after: float
    held_shift: float  # the shift most nights hold (see _held_shift); <= |after - before|
    overlap: float  # share of the longer segment's nights at the shorter one's level
    p_value: float

    def shift(self) -> float:
        return abs(self.after - self.before)


def _held_shift(before: np.ndarray, after: np.ndarray) -> float:
    """The shift between the segments that most of their nights hold: each median taken, for
    an even count, as the middle value nearer the other segment. With 4 nights after a cut,
    3 must be on the new level: two bad nights in a row (a spike and its echo) halve a plain
    median's shift but leave this one at about nothing."""
    up = np.median(after) >= np.median(before)
    after_held = np.quantile(after, 0.5, method="lower" if up else "higher")
    before_held = np.quantile(before, 0.5, method="higher" if up else "lower")
    return float(after_held - before_held) * (1.0 if up else -1.0)


def _overlap(before: np.ndarray, after: np.ndarray) -> float:
    """The share of the longer segment's nights that reach the shorter one's median (on the
    shorter one's side of the longer one's median). A short run of nights in a bimodal
    series' second mode is at a level the long segment visits often: that is no new level."""
    short, long_ = (after, before) if len(after) <= len(before) else (before, after)
    return _reaching(long_, float(np.median(short)))


def _reaching(nights: np.ndarray, level: float) -> float:
    """The share of ``nights`` that reach ``level``, on its side of their median."""
    centre = float(np.median(nights))
    return float(np.mean(nights >= level if level >= centre else nights <= level))


def _p_value(before: np.ndarray, after: np.ndarray, config: DetectorConfig, rho: float,
             ) -> float:
    if config.test == "mannwhitney":
        p = float(stats.mannwhitneyu(before, after, alternative="two-sided").pvalue)
    else:
        # Autocorrelated nights carry less evidence than their number: n(1-rho)/(1+rho)
        # effective nights for a segment's mean (Zwiers & von Storch, J. Climate 1995).
        shrink = (1.0 - rho) / (1.0 + rho) if config.autocorrelation else 1.0
        n_before, n_after = max(len(before) * shrink, 1.0), max(len(after) * shrink, 1.0)
        if n_before + n_after <= 3.0:  # under one degree of freedom: no evidence
            return 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            p = float(stats.ttest_ind_from_stats(
                np.mean(before), np.std(before, ddof=1), n_before,
                np.mean(after), np.std(after, ddof=1), n_after, equal_var=True).pvalue)
    # nan: two constant segments at the same level (constant ones at different levels give
    # t = inf, p = 0)
    return 1.0 if math.isnan(p) else p


def _candidates(x: np.ndarray, cuts: list[int], config: DetectorConfig,
                rho: float) -> list[_Candidate]:
    """Each cut tested on the whole segments either side of it (to the neighbouring cuts)."""
    bounds = [0, *cuts, len(x)]
    out = []
    for i, cut in enumerate(cuts, start=1):
        before, after = x[bounds[i - 1]:cut], x[cut:bounds[i + 1]]
        out.append(_Candidate(index=cut, before_n=len(before), after_n=len(after),
                              before=float(np.median(before)), after=float(np.median(after)),
                              held_shift=_held_shift(before, after),
                              overlap=_overlap(before, after),
                              p_value=_p_value(before, after, config, rho)))
    return out


def _passes(c: _Candidate, config: DetectorConfig, sigma: float, *,
            max_p_value: float | None = None, max_overlap: float | None = None,
            min_magnitude_noise: float | None = None) -> bool:
    """The guards; the newest nights' test has its own p, held-shift and overlap bounds."""
    if min(c.before_n, c.after_n) < config.min_segment:
        return False
    if c.p_value > (config.max_p_value if max_p_value is None else max_p_value):
        return False
    magnitude = (config.min_magnitude_noise if min_magnitude_noise is None
                 else min_magnitude_noise)
    if c.held_shift <= 0 or c.held_shift < magnitude * sigma:
        return False
    if c.overlap > (config.max_overlap if max_overlap is None else max_overlap):
        return False
    return not (config.min_change > 0 and c.before != 0
                and c.shift() / abs(c.before) < config.min_change)


def _merge(x: np.ndarray, cuts: list[int], config: DetectorConfig,
           noise: Noise) -> list[_Candidate]:
    """Drop the weakest failing cut (highest p, then smallest shift) and re-test its
    neighbours on the longer segments left, until every cut passes. One at a time because
    dropping a cut changes the segments its neighbours are tested on."""
    rho = noise.rho if config.autocorrelation else 0.0
    cuts = sorted(cuts)
    while True:
        tested = _candidates(x, cuts, config, rho)
        failing = [c for c in tested if not _passes(c, config, noise.sigma)]
        if not failing:
            return tested
        weakest = max(failing, key=lambda c: (c.p_value, -c.shift()))
        cuts.remove(weakest.index)


def ar1_mean_variance(n: float, rho: float) -> float:
    """The variance of the mean of n consecutive AR(1) nights, in units of one night's
    variance: (1/n^2) * sum over pairs of rho^|i-j|. For n = 4 and rho = 0.5 it is 2.1 times
    the 1/n of independent nights (the large-n shrink (1-rho)/(1+rho) says 3: too much for
    a handful of nights)."""
    if n <= 0:
        return math.inf
    if rho <= 0:
        return 1.0 / n
    k = np.arange(1, int(n))
    return float(n + 2.0 * np.sum((n - k) * rho ** k)) / (n * n)


def _segment_sigma(x: np.ndarray) -> float:
    """One night's standard deviation in a segment without a change: the sample one, with
    nights beyond 3 robust deviations (spikes) counted at 3, so that one spike does not
    inflate it and the estimate keeps most of a standard deviation's precision (a median
    absolute deviation alone has a third of it)."""
    centre = float(np.median(x))
    mad = float(stats.median_abs_deviation(x, scale="normal"))
    if mad <= 0:
        return 0.0
    return float(np.std(np.clip(x, centre - 3 * mad, centre + 3 * mad), ddof=1))


def _newest_nights(x: np.ndarray, kept: list[_Candidate],
                   config: DetectorConfig, rho: float | None = None) -> _Candidate | None:
    """The newest ``min_segment`` nights tested against the level since the last change: the
    segmentation's test on two whole segments needs a long new segment to see a step through
    the noise it estimates from them; this one measures the noise on the level's nights
    (spikes counted at 3 noise; the autocorrelation about the levels found before the newest
    nights, or the testbed's when it is given), compares the mean of the newest nights with
    it, and so finds a step of twice the noise on the first night a minimum segment allows (at
    a p that costs its share of false alarms: docs/tracking.md). The newest nights must be one
    level (``newest_max_spread``), and the segmentation's guards hold: the held shift, the
    overlap (measured at the newest nights' mean), the minimum change. None when the newest
    nights hold no new level."""
    m = config.min_segment
    start = kept[-1].index if kept else 0
    if config.newest_max_p_value <= 0:
        return None
    return _level_test(x, start, len(x) - m, len(x), kept, config, rho)


# The newest nights' test's level: a 10 % trimmed mean, whose variance for normal nights is
# 1.06 times the mean's (its asymptotic efficiency, 0.94; Stigler 1973)
TRIM = 0.1
TRIM_VARIANCE = 1.06


def _level_test(x: np.ndarray, start: int, cut: int, end: int, kept: Sequence[_Candidate],
                config: DetectorConfig, rho: float | None) -> _Candidate | None:
    """The newest nights' test of the nights cut..end against the level start..cut (see
    :func:`_newest_nights`); also the test that keeps a change reported on an earlier night
    (:func:`detect`'s ``held``) on the longer evidence of every night since it."""
    m = config.min_segment
    if cut - start < m or end - cut < m:
        return None
    base, newest = x[start:cut], x[cut:end]
    level = float(np.median(base))
    sigma = _segment_sigma(base)
    if sigma <= 0:
        return None
    if float(np.std(newest, ddof=1)) > config.newest_max_spread * sigma:
        return None
    # The overlap is measured at the newest nights' mean, a night beyond 3 noise of the level
    # counted at 3 (as the noise counts a spike), not at their median: the overlap bound is a
    # second threshold on how far the new nights are (a 10 % share of the level's nights is
    # reached 1.3 noise out), and the median of 4 nights is the noisier estimate of where they
    # are (the middle two of four), so a step whose mean passed the test was refused 3 times
    # in 100 for a median that came in low. A bimodal machine's run in its second mode has
    # its mean where its median is, and is refused as before.
    new_level = float(np.mean(np.clip(newest, level - 3 * sigma, level + 3 * sigma)))
    # rho (unless the testbed's is given) without the newest nights
    if not config.autocorrelation:
        rho = 0.0
    elif rho is None:
        own = _own_autocorrelation(x, kept, config)
        rho = 0.0 if own is None else _clip_rho(own.rho)
    # Autocorrelated nights spread less about their own mean than about the true level: the
    # sample variance of n AR(1) nights is n/(n-1) (1 - v) times a night's, v the variance of
    # their mean (exactly 1 for independent nights)
    n = len(base)
    sigma /= math.sqrt(n / (n - 1.0) * (1.0 - ar1_mean_variance(n, rho)))
    # The level is the base's trimmed mean (spikes cut off: TRIM of the nights each side),
    # nearly as precise as the mean (TRIM_VARIANCE times its variance; a median's is pi/2)
    shift = float(np.mean(newest)) - float(stats.trim_mean(base, TRIM))
    variance = (ar1_mean_variance(len(newest), rho)
                + TRIM_VARIANCE * ar1_mean_variance(n, rho))
    t = shift / (sigma * math.sqrt(variance))
    # Student's t's degrees of freedom: the nights the level is worth, n(1 - rho)/(1 + rho).
    # Those of the noise estimate alone are more, n(1 - rho^2)/(1 + rho^2) (Bartlett 1946),
    # but the test's variance also rests on the estimated rho, which this does not count:
    # with them, autocorrelated nights raised 0.90 false alarms per 100 nights on the tuning
    # seed (about 0.55 with these) and 1.19 on the suite's (docs/tracking.md)
    dof = max(n * (1.0 - rho) / (1.0 + rho) - 1.0, 1.0)
    candidate = _Candidate(index=cut, before_n=len(base), after_n=len(newest), before=level,
                           after=float(np.median(newest)),
                           held_shift=_held_shift(base, newest),
                           overlap=_reaching(base, new_level),
                           p_value=float(2.0 * stats.t.sf(abs(t), dof)))
    passes = _passes(candidate, config, sigma, max_p_value=config.newest_max_p_value,
                     min_magnitude_noise=config.newest_min_magnitude_noise,
                     max_overlap=config.newest_max_overlap)
    return candidate if passes else None


HOLD_SLACK = 2  # nights: a change found again this close to a held one is the same change


def _still_held(x: np.ndarray, kept: Sequence[_Candidate], found: Sequence[_Candidate],
                held: Sequence[int], config: DetectorConfig,
                rho: float | None) -> list[_Candidate]:
    """The changes reported on earlier nights (their first nights, ``held``) that this night
    neither reports (within HOLD_SLACK) nor rejects: each is tested as the newest nights' test
    tests its nights, but on all the nights since it (to the next change the segmentation
    keeps), against the level before it (from the last change the segmentation keeps before
    it). A change the newest nights' test found stays reported while the newest nights move on
    and until the segmentation confirms it or the longer evidence says it was not one."""
    out: list[_Candidate] = []
    cuts = sorted(c.index for c in kept)
    for index in sorted(set(held)):
        if not 0 < index < len(x) or any(abs(c.index - index) <= HOLD_SLACK
                                         for c in [*found, *out]):
            continue
        start = max([c for c in cuts if c < index], default=0)
        end = min([c for c in cuts if c > index], default=len(x))
        own = rho
        if own is None and config.autocorrelation:
            # the series' own, about the levels with this change among them: a step the
            # segmentation has not confirmed is a run of residuals on one side, which would
            # read as autocorrelation and reject the change it comes from
            head = x[:len(x) - config.min_segment]
            levels = sorted({*cuts, index} & set(range(1, len(head))))
            lag1 = _lag1(_residuals(head, levels), len(levels) + 1)
            own = 0.0 if lag1 is None else _clip_rho(lag1.rho)
        still = _level_test(x, start, index, end, kept, config, own)
        if still is not None:
            out.append(still)
    return out


def _in_noise_units(x: np.ndarray, sigma: float) -> np.ndarray:
    # A noise-free series (every night the same but for a step) has sigma 0: a tiny scale
    # keeps the units finite, and any real step is then far above the noise.
    scale = sigma if sigma > 0 else max(abs(float(np.median(x))), 1.0) * 1e-9
    return (x - float(np.median(x))) / scale


def _analyse(x: np.ndarray, config: DetectorConfig, segmenter: Segmenter,
             rho: float | None = None, held: Sequence[int] = (),
             ) -> tuple[list[_Candidate], Noise]:
    """The change points that pass the guards, and the noise they were judged against.

    The library first segments the series in units of the difference-based spread, and the
    noise is measured about its cuts. Autocorrelated nights wander, and the library cuts the
    wander into segments: the noise about its cuts is too small and too little correlated.
    So the noise is measured again about the cuts that survive the guards (the levels that
    are real), and the library and the guards run again in those units."""
    given = None if rho is None else min(max(float(rho), 0.0), MAX_RHO)

    def with_rho(noise: Noise) -> Noise:
        if not config.autocorrelation:
            return noise.model_copy(update={"rho": 0.0})
        return noise if given is None else noise.model_copy(update={"rho": given})

    cuts = segmenter(_in_noise_units(x, difference_sigma(x)), config)
    measured = with_rho(_measure_noise(x, cuts))
    if config.autocorrelation:
        kept = _merge(x, cuts, config, measured)
        measured = with_rho(_measure_noise(x, [c.index for c in kept]))
        cuts = segmenter(_in_noise_units(x, measured.sigma), config)
    kept = _merge(x, cuts, config, measured)
    newest = _newest_nights(x, kept, config, given)
    found = kept if newest is None else [*kept, newest]
    if held:
        found = sorted([*found, *_still_held(x, kept, found, held, config, given)],
                       key=lambda c: c.index)
    return found, measured


def _own_autocorrelation(x: np.ndarray, kept: Sequence[_Candidate],
                         config: DetectorConfig) -> Autocorrelation | None:
    """The lag-1 autocorrelation about the levels kept, without the newest ``min_segment``
    nights: a step there is a run of residuals on one side, which reads as autocorrelation
    and would hide the step it comes from."""
    head = x[:len(x) - config.min_segment]
    levels = [c.index for c in kept if c.index < len(head)]
    return _lag1(_residuals(head, levels), len(levels) + 1)


def autocorrelation(values: Sequence[float], config: DetectorConfig | None = None,
                    *, segmenter: Segmenter | None = None) -> Autocorrelation | None:
    """The series' own lag-1 autocorrelation, its share of a testbed's pooled estimate: about
    the levels the library's segmentation and the guards keep (the first pass of
    :func:`detect`, at the series' own autocorrelation), without the newest nights. None for a
    series too short or constant."""
    config = config or DetectorConfig()
    x = _as_array(values, config)
    cuts = (segmenter or ruptures_segments)(_in_noise_units(x, difference_sigma(x)), config)
    kept = _merge(x, cuts, config, _measure_noise(x, cuts))
    return _own_autocorrelation(x, kept, config)


def pooled_autocorrelation(parts: Sequence[Autocorrelation | None]) -> float | None:
    """A testbed's lag-1 autocorrelation: the mean of its series' own (bias-corrected)
    estimates weighted by their nights, clipped to [0, 0.9]. Each 10-40-night series' own
    estimate is +-0.2 rough; the series of one testbed share its machine, and their pool is
    what the detector is given (``detect(..., rho=)``). None when no series has one."""
    known = [p for p in parts if p is not None]
    nights = sum(p.nights for p in known)
    if nights == 0:
        return None
    return _clip_rho(sum(p.rho * p.nights for p in known) / nights)


def _as_array(values: Sequence[float], config: DetectorConfig) -> np.ndarray:
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as e:
        raise BadSeries(f"not a series of numbers: {e}") from None
    if x.ndim != 1:
        raise BadSeries(f"a series is one-dimensional (got shape {x.shape})")
    bad = np.flatnonzero(~np.isfinite(x))
    if len(bad):
        raise BadSeries(f"value {int(bad[0])} is {x[bad[0]]!r}, not a finite number")
    if len(x) < config.min_points:
        raise NotEnoughData(
            f"{len(x)} value(s); the detector needs at least {config.min_points} "
            f"(min_segment {config.min_segment} on each side of a change)")
    return x


def _relative(before: float, after: float) -> float:
    if before != 0:
        return (after - before) / abs(before)
    return math.copysign(math.inf, after - before) if after != before else 0.0


def detect(values: Sequence[float], config: DetectorConfig | None = None, *,
           segmenter: Segmenter | None = None, rho: float | None = None,
           held: Sequence[int] = ()) -> list[ChangePoint]:
    """The change points of a series, oldest first. ``segmenter`` replaces the library's
    segmentation (the benchmark plugs in the alternative it compares); the guards stay.
    ``rho``: the autocorrelation of the nights when it is known better than the series' own
    10-40 nights can say (the testbed's, :func:`pooled_autocorrelation`); by default the
    series' own. ``held``: the first nights of changes reported on earlier nights; each one
    this night does not report is reported still unless the nights since it reject it
    (:func:`_still_held`), so that a change does not flicker out of the report while the
    newest nights' window moves past it and before the segmentation confirms it.

    Raises NotEnoughData (fewer than ``config.min_points`` values) or BadSeries (a value
    that is not a finite number)."""
    config = config or DetectorConfig()
    x = _as_array(values, config)
    kept, _ = _analyse(x, config, segmenter or ruptures_segments, rho, held)
    return [ChangePoint(index=c.index, before=c.before, after=c.after,
                        change=_relative(c.before, c.after), p_value=c.p_value) for c in kept]


# ---------------------------------------------------------------- CSV and the command


class CsvSeries(BaseModel):
    """One column of a CSV file: the values and the first column's value at each row."""

    column: str
    times: list[str | float | int]
    values: list[float]


def _time_value(cell: str) -> str | float | int:
    """The first column as the user wrote it: an int or a float when it is one, else text."""
    for kind in (int, float):
        try:
            return kind(cell)
        except ValueError:
            pass
    return cell


def _read_text(path: Path) -> str:
    """The file's text; DetectError (without the path: the command puts it first)."""
    try:
        text = read_text(path, expected="a CSV file", what="a series",
                         max_bytes=MAX_CSV_BYTES)
    except ValueError as e:
        raise DetectError(str(e).removeprefix(f"{path}: ")) from None
    nul = text.find("\x00")
    if nul >= 0:  # valid UTF-8, but no text file has one
        raise DetectError(f"not a text file (a NUL character at offset {nul})")
    return text.removeprefix("\ufeff")  # a BOM (spreadsheets write one) is not a header


def read_csv_series(path: Path, column: str | None = None) -> CsvSeries:
    """The named column (default: the second) of a CSV with a header; blank lines skipped.
    DetectError with the row (the file's line number) and column for anything else."""
    rows = [(line, row) for line, row in _csv_rows(_read_text(path))
            if any(cell.strip() for cell in row)]
    if not rows:
        raise DetectError("empty (expected a header, then one row per night)")
    _, header = rows[0]
    names = [h.strip() for h in header]
    if column is None:
        if len(names) < 2:
            raise DetectError(f"one column ({names[0]!r}); expected the time or an index, "
                              "then the value")
        col = 1
    elif column in names:
        col = names.index(column)
    else:
        raise DetectError(f"no column {column!r}; the columns are: {', '.join(names)}")
    name = names[col]
    if len(rows) == 1:
        raise DetectError("a header and no rows")
    times: list[str | float | int] = []
    values: list[float] = []
    for line, row in rows[1:]:
        if col >= len(row) or not row[col].strip():
            raise DetectError(f"row {line}: no value in column {name!r}")
        cell = row[col].strip()
        try:
            value = float(cell)
        except ValueError:
            raise DetectError(f"row {line}: column {name!r}: {cell[:40]!r} is not a "
                              "number") from None
        if not math.isfinite(value):
            raise DetectError(f"row {line}: column {name!r}: {cell!r} is not a finite number")
        times.append(_time_value(row[0].strip()))
        values.append(value)
    return CsvSeries(column=name, times=times, values=values)


def _csv_rows(text: str) -> list[tuple[int, list[str]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        return [(reader.line_num, row) for row in reader]
    except csv.Error as e:
        raise DetectError(f"row {reader.line_num}: not valid CSV: {e}") from None


def _json(cp: ChangePoint) -> dict[str, object]:
    """The change point for JSON, which has no infinity: a change from 0 is null."""
    doc = cp.model_dump()
    if not math.isfinite(cp.change):
        doc["change"] = None
    return doc


def _describe(cp: ChangePoint) -> str:
    when = f" ({cp.time})" if cp.time is not None else ""
    change = f"{cp.change:+.1%}" if math.isfinite(cp.change) else "from 0"
    p = f", p = {cp.p_value:.2g}" if cp.p_value is not None else ""
    return f"index {cp.index}{when}: {cp.before:.6g} -> {cp.after:.6g} ({change}{p})"


def cmd_detect(args: argparse.Namespace) -> int:
    """``lsmbench track detect FILE.csv [--column NAME] [--json]``: 0, or 2 with
    'FILE: why' on stderr for a file or series the detector cannot take."""
    path = Path(args.file)
    try:
        series = read_csv_series(path, args.column)
    except DetectError as e:
        print(f"{path}: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        change_points = detect(series.values)
    except DetectError as e:
        print(f"{path}: column {series.column!r}: {e}", file=sys.stderr)
        return EXIT_USAGE
    for cp in change_points:
        cp.time = series.times[cp.index]
    if args.json:
        print(json.dumps({"change_points": [_json(cp) for cp in change_points]}, indent=2))
        return EXIT_OK
    if not args.quiet:
        for cp in change_points:
            print(_describe(cp))
    print(f"{path}: column {series.column!r}: {len(series.values)} values, noise "
          f"{noise(series.values):.1%} (CoV), {len(change_points)} change point(s)")
    return EXIT_OK
