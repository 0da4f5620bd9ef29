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
from pydantic import BaseModel, ConfigDict, Field
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


class PooledSpread:
    """The testbed's spread of one pair's log ratio, pooled over groups of pairs (nights, or a
    bisection's steps) about each group's own mean: a group's 3 pairs say little about their
    spread, the testbed's hundreds a lot. ``paired_ratio(..., **pool.given())``."""

    def __init__(self) -> None:
        self.squares, self.dof = 0.0, 0

    def add(self, pairs: Sequence[tuple[float, float]]) -> None:
        logs = _log_ratios(pairs)
        self.squares += float(np.sum((logs - logs.mean()) ** 2))
        self.dof += len(logs) - 1

    def plus(self, pairs: Sequence[tuple[float, float]]) -> PooledSpread:
        """This pool with one more group of pairs, this one left as it is."""
        more = PooledSpread()
        more.squares, more.dof = self.squares, self.dof
        more.add(pairs)
        return more

    def given(self) -> dict[str, float]:
        """paired_ratio's log_sd and log_sd_dof (none before any spread was seen)."""
        if self.dof <= 0:
            return {}
        return {"log_sd": float(np.sqrt(self.squares / self.dof)), "log_sd_dof": float(self.dof)}


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


# ---------------------------------------------------------------- the paired detector


class PairedDetectorConfig(BaseModel):
    """How a night of pairs turns into an alarm, an acceptance of the build, or neither."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float = Field(0.05, gt=0.0, lt=1.0,
                             description="the regression that matters (0.05: 5 %): an alarm's "
                                         "ratio must be beyond the boundary halfway to it, and "
                                         "a build is accepted when classify says not-worse")
    alarm_p: float = Field(0.01, gt=0.0, lt=1.0,
                           description="the newest nights alarm when the one-sided p-value "
                                       "of 'no change' against 'worse' is at most this (and "
                                       "their ratio is beyond the halfway boundary); 0.01 was "
                                       "chosen on seed 7 for 1 false alarm per 100 nights "
                                       "(docs/tracking.md, 'Paired nights')")
    alarm_rule: Literal["significant", "interval"] = Field(
        "significant",
        description="'significant': the p-value and the halfway boundary (alarms); "
                    "'interval': classify(...) == 'worse' at alarm_confidence, the whole "
                    "interval beyond the halfway boundary (compared in docs/tracking.md)")
    alarm_confidence: float = Field(0.9, gt=0.0, lt=1.0,
                                    description="the interval's confidence for the "
                                                "'interval' rule")
    accept_confidence: float = Field(0.95, gt=0.0, lt=1.0,
                                     description="the confidence of the intervals classify "
                                                 "judges for accepting a build")
    window: int = Field(3, ge=1,
                        description="nights pooled at most: the alarm judges the newest "
                                    "window nights since the reference (fewer when fewer have "
                                    "run); acceptance, every window of 1..window of them")
    ack_after: int = Field(3, ge=1,
                           description="nights an alarm stays open, the reference held "
                                       "before it, until it is acknowledged (the reference "
                                       "then moves to the newest build)")
    rho: float | None = Field(0.0, description="the pairs' lag-1 autocorrelation in run "
                                               "order, given to paired_ratio (None: each "
                                               "window's own estimate). 0: the runs of a "
                                               "pair are adjacent, so what the node carries "
                                               "from run to run cancels in each pair, and a "
                                               "window's 3-9 pairs cannot estimate what is "
                                               "left (the estimate widens the interval by a "
                                               "fifth on independent pairs)")
    pooled_spread: bool = Field(True, description="judge each window with the testbed's "
                                                  "spread of a pair's log ratio, pooled over "
                                                  "every night so far about each night's "
                                                  "mean (False: the window's own)")


def _likeliest_start(night_means: Sequence[float], first: int, better: Better) -> int:
    """The night a change most likely started among the nights of an alarm (the first of
    them is night ``first``): the split that best separates a ratio of 1 (the reference's
    own level, known: nothing had changed yet) from a worse one after it, the generalized
    likelihood ratio of a one-sided mean shift, max over j of S_j^2/(nights from j), S_j the
    sum of the worse-signed nightly mean log ratios from j on."""
    worse = -np.asarray(night_means) if better == "higher" else np.asarray(night_means)
    tail = np.cumsum(worse[::-1])[::-1]  # S_j
    counts = np.arange(len(worse), 0, -1)
    score = np.where(tail > 0, tail * tail / counts, -np.inf)
    return first + int(np.argmax(score))


def alarms(ratio: PairedRatio, better: Better, config: PairedDetectorConfig) -> bool:
    """The pooled nights alarm when their ratio is significantly worse than no change
    (one-sided p <= ``alarm_p``) and its estimate is beyond the boundary halfway to a
    regression of ``threshold`` (:func:`lsmbench.track.paired.worse_boundary`): statistical
    and practical significance, as the single-series detector asks a p-value and a
    magnitude.

    Why not classify(...) == "worse" (the whole interval beyond the halfway boundary): that
    asks a 5 % regression's 9 pairs to show more than 2.5 % with confidence, which they can
    only when the noise is small, and reaches 1 false alarm per 100 nights only at a 70 %
    interval; tested against no change, the same false-alarm rate finds 6 points more of the
    regressions within 2 nights (80 % against 74 % on seed 7, ``alarm_rule``). The halfway
    boundary stays as the practical floor, and decides acceptance and bisection."""
    boundary = worse_boundary(better, config.threshold)
    beyond = ratio.ratio < boundary if better == "higher" else ratio.ratio > boundary
    return beyond and ratio.p_worse(better) <= config.alarm_p


def _alarmed(pairs: Sequence[tuple[float, float]], better: Better,
             config: PairedDetectorConfig, spread: dict[str, float]) -> bool:
    if config.alarm_rule == "interval":
        judged = paired_ratio(pairs, config.alarm_confidence, rho=config.rho, **spread)
        return classify(judged, better, config.threshold) == "worse"
    return alarms(paired_ratio(pairs, rho=config.rho, **spread), better, config)


class NightJudgement(BaseModel):
    """What the paired detector made of one night of one series."""

    model_config = ConfigDict(frozen=True)

    ratio: PairedRatio  # of the newest `window` nights since the reference: what alarms
    # The newest night alone, with the testbed's spread: what it says of itself (its own 3
    # pairs' spread, with 2 degrees of freedom, can make an A/A night look significant)
    night: PairedRatio
    alarmed: bool  # they alarmed this night
    accepted: bool  # every window not-worse: the build may be the next reference
    alarm: int | None  # the open regression's first night (an index of the replay's nights)
    reported: int | None  # the night the open regression was first reported
    change: float | None  # the open regression's ratio - 1 this night


class PairedReplay:
    """The paired detector over one series' nights, in order (each night's pairs and the
    reference they were measured against): the nightly alarm (lsmbench.track.changes) and the
    synthetic suite (lsmbench.track.synthetic_paired) run this one.

    Each night the pairs of the newest 1, 2, .. ``window`` nights measured against that
    same reference are each pooled into a ratio (:func:`paired_ratio`, with the testbed's
    spread of a pair pooled over every night so far, about each night's own mean: a night's
    3 pairs say little about their own spread, the testbed's hundreds a lot):

    * the newest ``window`` nights alarm (:func:`alarms`): a regression is open from the
      night it most likely started among them (:func:`_likeliest_start`; an open one keeps
      its night), reported each night until the reference moves;
    * every window "not-worse" (:func:`classify` at ``accept_confidence``): the build is
      accepted (an open alarm that the nights since say was not one is withdrawn). Every
      window, the newest night's alone too: a regression on the newest night pooled with
      older nights could pass for not worse;
    * otherwise undecided: the next night adds its pairs. Since nothing before the regression
      changed the level against the reference, its ratio there is 1, known: older nights are
      never needed to tell it.

    A night measured against another reference than the night before starts the pooling
    anew (the spread keeps pooling: it is the testbed's)."""

    def __init__(self, better: Better, config: PairedDetectorConfig) -> None:
        self.better = better
        self.config = config
        self.nights = 0
        self.reference: object = None
        self.since: list[list[tuple[float, float]]] = []  # each night's pairs since it
        self.opened: tuple[int, int] | None = None  # (first night, night reported)
        self.spread = PooledSpread()  # over every night so far, each about its own mean

    def night(self, pairs: Sequence[tuple[float, float]], reference: object) -> NightJudgement:
        config, better = self.config, self.better
        night = self.nights
        self.nights += 1
        if night == 0 or reference != self.reference:
            self.reference, self.since, self.opened = reference, [], None
        self.since.append(list(pairs))
        self.spread.add(pairs)
        spread = self.spread.given() if config.pooled_spread else {}
        windows = [paired_ratio([p for ps in self.since[-w:] for p in ps],
                                config.accept_confidence, rho=config.rho, **spread)
                   for w in range(1, min(config.window, len(self.since)) + 1)]
        newest = self.since[-len(windows):]
        alarmed = _alarmed([p for ps in newest for p in ps], better, config, spread)
        accepted = not alarmed and all(
            classify(r, better, config.threshold) == "not-worse" for r in windows)
        if alarmed and self.opened is None:
            # the change is in the nights the alarming windows pool: the likeliest of them
            means = [float(np.mean(_log_ratios(ps))) for ps in newest]
            self.opened = (_likeliest_start(means, night + 1 - len(newest), better), night)
        if accepted:
            self.opened = None  # the nights since say it was not a regression: withdrawn
        return NightJudgement(
            ratio=windows[-1], night=windows[0], alarmed=alarmed, accepted=accepted,
            alarm=None if self.opened is None else self.opened[0],
            reported=None if self.opened is None else self.opened[1],
            change=None if self.opened is None else windows[-1].ratio - 1.0)
