"""A build under test measured against a reference build in the same night, on the same node,
interleaved (issue 33; docs/tracking.md, "Paired nights"): the ratio of the two and whether it
says "worse".

A single nightly series cannot subtract the testbed's noise -- the machine, its disk, that
night -- so a change must stand out from all of it. When the reference and the candidate run
in ABBA-interleaved repetitions on one node in one night (randomized multiple interleaved
trials, Abedi & Brecht, ICPE 2017; duet benchmarking, Bulej et al., ICPE 2020; Chromium's
Pinpoint A/B), whatever the testbed does to both builds that night cancels in their ratio,
and only the noise of each run about its night remains.

* :func:`paired_ratio` -- the geometric mean of candidate/reference over the pairs of one
  metric, with a confidence interval valid for pairs that may be autocorrelated in run order;
* :func:`classify` -- "worse", "not-worse" or "undecided" against a regression threshold,
  for the nightly alarm and for bisection.

Pure functions over plain numbers; nothing here runs or times anything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy import stats

from lsmbench.track.detect import MAX_RHO, ar1_mean_variance
from lsmbench.track.history import Better

CONFIDENCE = 0.95
# Below this many pairs the lag-1 autocorrelation of the log ratios is not estimated (taken as
# 0): from 5 values its spread (about +-0.45) is as large as the effect it would correct
MIN_PAIRS_FOR_RHO = 6
METHOD = "student-t on the mean log ratio, variance inflated for lag-1 autocorrelation"

Verdict = Literal["worse", "not-worse", "undecided"]


class PairedRatio(BaseModel):
    """The candidate's level over the reference's, from pairs run adjacent in time.

    ``ratio`` is the geometric mean of candidate/reference (exp of the mean log ratio): a
    ratio of 0.95 is 5 % lower. ``low``..``high`` is its ``confidence`` interval."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ratio: float
    low: float
    high: float
    confidence: float
    n: int  # pairs
    n_eff: float  # the independent pairs the n are worth for the mean (n when rho is 0)
    rho: float  # the lag-1 autocorrelation of the log ratios used, in [0, MAX_RHO]
    rho_estimated: bool  # from these pairs (False: given by the caller, or too few pairs)
    log_mean: float  # mean log ratio
    log_sd: float  # the standard deviation of one pair's log ratio (AR-corrected)
    log_se: float  # the standard error of the mean log ratio
    dof: float  # Student's t degrees of freedom of the interval
    method: str = METHOD

    def p_worse(self, better: Better) -> float:
        """The one-sided p-value of "no change" against a change in the worse direction:
        how likely a mean log ratio this far on the worse side is when the builds are
        equal (Student's t with this interval's degrees of freedom)."""
        if self.log_se <= 0:
            worse = self.log_mean < 0 if better == "higher" else self.log_mean > 0
            return 0.0 if worse else 1.0
        t = self.log_mean / self.log_se
        return float(stats.t.cdf(t if better == "higher" else -t, self.dof))

    def to_json(self) -> dict[str, object]:
        """The fields as JSON values (for a report, or the benchmark's output)."""
        return self.model_dump(mode="json")


def _log_ratios(pairs: Sequence[tuple[float, float]]) -> np.ndarray:
    """log(candidate / reference) per pair; ValueError for anything that is not a sequence of
    at least 2 (reference, candidate) pairs of positive finite numbers."""
    try:
        x = np.asarray(pairs, dtype=float)
    except (TypeError, ValueError) as e:
        raise ValueError(f"pairs must be (reference, candidate) numbers: {e}") from None
    if x.size == 0:
        x = x.reshape(0, 2)  # no pairs: refused below for their number, not their shape
    if x.ndim != 2 or x.shape[1] != 2:
        raise ValueError(f"pairs must be (reference, candidate) pairs; got shape {x.shape}")
    if len(x) < 2:
        raise ValueError(f"{len(x)} pair(s): a ratio's spread needs at least 2")
    bad = np.argwhere(~np.isfinite(x))
    if len(bad):
        i, j = (int(v) for v in bad[0])
        raise ValueError(f"pair {i}: the {('reference', 'candidate')[j]} value is "
                         f"{float(x[i, j])!r}, not a finite number")
    bad = np.argwhere(x <= 0)
    if len(bad):
        i, j = (int(v) for v in bad[0])
        raise ValueError(f"pair {i}: the {('reference', 'candidate')[j]} value is "
                         f"{float(x[i, j])!r}; a ratio needs positive values")
    return np.log(x[:, 1]) - np.log(x[:, 0])


def lag1_autocorrelation(log_ratios: np.ndarray) -> float:
    """The lag-1 autocorrelation of the log ratios about their mean, corrected for the bias of
    that mean being estimated from the same values (E[r] = rho - (1 + 4 rho)/n, Marriott &
    Pope 1954, inverted), not clipped. ValueError for 4 values or fewer (the correction
    divides by n - 4)."""
    n = len(log_ratios)
    if n <= 4:
        raise ValueError(f"{n} values: a bias-corrected lag-1 autocorrelation needs 5 or more")
    d = log_ratios - np.mean(log_ratios)
    denominator = float(np.dot(d, d))
    if denominator <= 0:
        return 0.0
    r = float(np.dot(d[:-1], d[1:])) / denominator
    return (n * r + 1.0) / (n - 4.0)


def paired_ratio(pairs: Sequence[tuple[float, float]], confidence: float = CONFIDENCE, *,
                 rho: float | None = None, log_sd: float | None = None,
                 log_sd_dof: float | None = None) -> PairedRatio:
    """The geometric mean of candidate/reference over ``pairs`` (reference_value,
    candidate_value) of one metric in run order, each pair run adjacent in time (ABBA
    blocks), with a ``confidence`` interval.

    Why this interval: the pairs of one night, or of a few nights against one reference, are few
    (3 to 12) and may be correlated in run order -- a node that warms up or fills its page cache
    during a night moves neighbouring pairs' ratios alike, which interleaving cancels over an
    ABBA block but which leaves fewer independent pairs than pairs. A percentile or BCa
    bootstrap from 3-12 values covers too little (its resamples never leave the observed range)
    and a block bootstrap needs blocks of several pairs and many blocks; Student's t on the mean
    log ratio is exact for independent normal log ratios at any n, and an AR(1) correction keeps
    it honest for correlated ones: the mean's variance is the exact one of n AR(1) values
    (:func:`lsmbench.track.detect.ar1_mean_variance`, n(1-rho)/(1+rho) effective pairs for large
    n), the sample variance is de-biased for the same correlation, and the t has n_eff - 1
    degrees of freedom. The log makes the ratio's interval multiplicative (a 5 % gain and a 5 %
    loss are the same distance from 1) and the geometric mean the estimate a ratio of levels
    wants.

    ``rho``: the autocorrelation when it is known better than these pairs say (a testbed's,
    measured over many nights); by default estimated from the pairs when there are at least
    MIN_PAIRS_FOR_RHO of them (else 0), bias-corrected, and clipped to [0, MAX_RHO]: a negative
    one (ABBA's alternating order turns a drift within the night into alternating signs) would
    narrow the interval on the strength of a handful of values, so it is never used.

    ``log_sd``, ``log_sd_dof``: the standard deviation of one pair's log ratio when it is
    known from more pairs than these (a testbed's, pooled over many nights' pairs about each
    night's own mean), and the degrees of freedom it was estimated with, which the t then
    has: a night's 3 pairs estimate their own spread with 2, and Student's t at 2 degrees of
    freedom is 4.3 where a known spread's is 2.

    Raises ValueError for fewer than 2 pairs, a value that is not finite or not positive, a
    confidence outside (0, 1), or a given spread that is negative or without its degrees of
    freedom."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence!r} is not in (0, 1)")
    logs = _log_ratios(pairs)
    n = len(logs)
    if rho is not None:
        if not math.isfinite(rho):
            raise ValueError(f"rho {rho!r} is not a finite number")
        used, estimated = min(max(float(rho), 0.0), MAX_RHO), False
    elif n >= MIN_PAIRS_FOR_RHO:
        used, estimated = min(max(lag1_autocorrelation(logs), 0.0), MAX_RHO), True
    else:
        used, estimated = 0.0, False
    mean_variance = ar1_mean_variance(n, used)  # in units of one pair's variance
    n_eff = 1.0 / mean_variance
    if log_sd is not None:
        if not (math.isfinite(log_sd) and log_sd >= 0):
            raise ValueError(f"log_sd {log_sd!r} is not a non-negative number")
        if log_sd_dof is None or not log_sd_dof > 0:
            raise ValueError("a given log_sd needs its degrees of freedom (log_sd_dof > 0)")
        sd, dof, method = float(log_sd), float(log_sd_dof), METHOD + ", spread given"
    else:
        # AR(1) values spread less about their own mean than about the true one: the sample
        # variance is n/(n-1) (1 - v) times a value's, v the variance of their mean (for
        # independent values v = 1/n and the factor is 1)
        sd = float(np.std(logs, ddof=1)) / math.sqrt(n / (n - 1.0) * (1.0 - mean_variance))
        dof, method = max(n_eff - 1.0, 1.0), METHOD
    mean = float(np.mean(logs))
    se = sd * math.sqrt(mean_variance)
    half = float(stats.t.ppf(0.5 + confidence / 2.0, dof)) * se
    return PairedRatio(ratio=math.exp(mean), low=math.exp(mean - half),
                       high=math.exp(mean + half), confidence=confidence, n=n, n_eff=n_eff,
                       rho=used, rho_estimated=estimated, log_mean=mean, log_sd=sd,
                       log_se=se, dof=dof, method=method)


def worse_boundary(better: Better, threshold: float) -> float:
    """The ratio halfway between "no change" (1) and a change of ``threshold`` in the worse
    direction: 1 - threshold/2 when higher is better, 1 + threshold/2 when lower is."""
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold {threshold!r} is not in (0, 1) (0.05 is 5 %)")
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', not {better!r}")
    return 1.0 - threshold / 2.0 if better == "higher" else 1.0 + threshold / 2.0


def classify(ratio: PairedRatio, better: Better, threshold: float) -> Verdict:
    """"worse" when the whole interval is beyond the boundary halfway between no change and a
    change of ``threshold`` in the worse direction (:func:`worse_boundary`), "not-worse" when
    the whole interval is on the other side, else "undecided" (the evidence is too thin:
    more pairs, or another night).

    Why halfway: the two hypotheses a bisection step or a nightly alarm must tell apart are
    "this build is as good as the reference" (ratio 1) and "it is worse by the threshold"; the
    boundary in the middle is as far from each, so an interval of a given width errs toward
    either with the same probability, and any interval narrower than threshold/2 decides one
    way or the other -- bisection always progresses. A boundary at 1 would call every real but
    negligible slowdown "worse" once there are enough pairs, and never call an unchanged build
    "not-worse" (its interval straddles 1 forever); a boundary at the threshold would leave a
    regression of exactly the threshold "undecided" half the time however many pairs ran."""
    return classify_interval(ratio.low, ratio.high, better, threshold)


def classify_interval(low: float, high: float, better: Better, threshold: float) -> Verdict:
    """:func:`classify` of an interval as the history stores it (its bounds only)."""
    boundary = worse_boundary(better, threshold)
    if better == "higher":
        if high < boundary:
            return "worse"
        return "not-worse" if low > boundary else "undecided"
    if low > boundary:
        return "worse"
    return "not-worse" if high < boundary else "undecided"
