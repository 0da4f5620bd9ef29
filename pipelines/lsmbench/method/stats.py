"""The statistics behind verdicts you can trust: pure functions over plain numbers (scipy).

* :func:`median_ci` -- the median of a group's repetitions with a distribution-free confidence
  interval from order statistics (``scipy.stats.quantile_test``; Hoefler & Belli, SC '15).
  No resampling, so no seed and no run-to-run wobble. The interval ``[x(k), x(n+1-k)]`` covers
  the true median with probability ``1 - 2 * BinomCDF(k-1; n, 1/2)``: 95 % needs at least 6
  repetitions; with 3 to 5 the widest interval (min..max) is given with the confidence it
  really has (75 %, 87.5 %, 93.75 %, stated in ``confidence``); with fewer than 3 no interval
  is computed.
* :func:`backlog_slope` -- the trend of the open-loop queue with a 95 % interval by Theil-Sen
  (``scipy.stats.theilslopes``): robust to the spikes stalls put into a queue, so one burst does
  not make a trend, while a steady climb does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel
from scipy import stats

CONFIDENCE = 0.95
MIN_CI_SAMPLES = 3  # below this, min..max covers the median with at most 50 %: no interval
MIN_SLOPE_POINTS = 4


class Estimate(BaseModel):
    """A median over repetitions and its confidence interval (None where not computable)."""

    median: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None  # the interval's real coverage (0.95, or less for n < 6)
    n: int = 0

    @property
    def has_interval(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None


def median_ci(values: Sequence[float | None], confidence: float = CONFIDENCE) -> Estimate:
    """Median and order-statistic confidence interval of the finite values given."""
    xs = np.array([float(v) for v in values if v is not None and math.isfinite(float(v))])
    n = len(xs)
    if n == 0:
        return Estimate()
    median = float(np.median(xs))
    if n < MIN_CI_SAMPLES:
        return Estimate(median=median, n=n)
    # The best a sample of n can do is [min, max], which covers the median with 1 - 2^(1-n).
    # quantile_test refuses a level it cannot reach (nan), so ask for just under it.
    level = min(confidence, 1.0 - 2.0 ** (1 - n) - 1e-9)
    ci = stats.quantile_test(xs, q=median, p=0.5).confidence_interval(level)
    low, high = float(ci.low), float(ci.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return Estimate(median=median, n=n)
    return Estimate(median=median, ci_low=low, ci_high=high,
                    confidence=confidence if level == confidence else achieved_confidence(n),
                    n=n)


def half_width_at(e: Estimate, confidence: float = CONFIDENCE) -> float:
    """The interval's larger half (from the median), widened to what an interval of
    `confidence` would be: 3 repetitions' [min, max] covers the median with only 75 %, and
    taking its width for a 95 % interval's made every "~N repetitions would decide it" from
    3 repetitions about (1.96 / 1.15)^2 ~ 2.9 times too small (normal quantiles)."""
    assert e.median is not None and e.ci_low is not None and e.ci_high is not None
    return max(e.median - e.ci_low, e.ci_high - e.median) * widening(e, confidence=confidence)


def widening(*estimates: Estimate, confidence: float = CONFIDENCE) -> float:
    """How much wider an interval at `confidence` is than the least sure of these estimates'
    intervals (1 when all have it): the ratio of the normal quantiles."""
    have = min((e.confidence for e in estimates if e.confidence is not None),
               default=confidence)
    if have >= confidence:
        return 1.0
    return float(stats.norm.ppf((1 + confidence) / 2) / stats.norm.ppf((1 + have) / 2))


def achieved_confidence(n: int, k: int = 1) -> float:
    """Coverage of [x(k), x(n+1-k)] for the median of n values: 1 - 2 P(Binom(n, 1/2) < k)."""
    return float(1.0 - 2.0 * stats.binom.cdf(k - 1, n, 0.5))


class Slope(BaseModel):
    """A least-absolute trend (Theil-Sen) with its confidence interval, in units per second."""

    slope: float
    ci_low: float
    ci_high: float
    confidence: float
    points: int
    from_s: float
    to_s: float
    method: str = "theil-sen"


def backlog_slope(times: Sequence[float], values: Sequence[float],
                  confidence: float = CONFIDENCE) -> Slope | None:
    """Theil-Sen slope of values over times with its interval; None with too few points or no
    spread in time."""
    t = np.asarray(times, dtype=float)
    y = np.asarray(values, dtype=float)
    if len(t) < MIN_SLOPE_POINTS or len(t) != len(y) or float(np.ptp(t)) <= 0:
        return None
    r = stats.theilslopes(y, t, alpha=confidence)
    return Slope(slope=float(r.slope), ci_low=float(r.low_slope), ci_high=float(r.high_slope),
                 confidence=confidence, points=len(t), from_s=float(t.min()),
                 to_s=float(t.max()))
