"""The synthetic suite for paired nights (issue 33; docs/tracking.md, "The synthetic suite",
"Paired nights"): a testbed whose noise is partly the night's, a reference build and the
build under test measured in the same night, a paired detector on their ratio, and the
single-series detector on the same measurements beside it.

**The testbed.** One run of a build on night t measures

    level(build) * (1 + shared[t] + own)

``shared[t]`` is the testbed's noise that night (the machine, its disk, what else ran): both
builds measured that night see it; across nights it is AR(1) with the spec's ``rho``, as the
single-series suite's noise is. ``own`` is each run's own noise, independent. Together they
have the spec's ``cov``, of which ``shared`` is the share of the variance. Each night runs
``reps`` repetitions of each build in ABBA order (A the reference, B the candidate: AB BA AB
...): ``reps`` pairs in run order. Nothing in this model changes within a night, so the order
does not change the values; it is there because the pairs are what the plumbing produces.

**The builds.** The candidate on night t is the build of night t (the commit of that night);
a step of ``step`` is in every build from night ``change_at`` on. The reference is the last
*accepted* build (:class:`PairedDetector`): the build of the newest night the paired detector
found not worse than its own reference. A night that is undecided or alarms does not move the
reference, so a regression keeps showing in the ratio on the following nights, against the
build before it, until it is acknowledged.

**The paired detector** (:func:`replay_paired`): each night, the pairs of the newest 3 nights
measured against the reference are pooled into a ratio (:func:`lsmbench.track.paired.
paired_ratio`, with the testbed's spread of a pair pooled over every night so far); it alarms
when that ratio is significantly worse than 1 (one-sided p <= 0.01) and beyond the boundary
halfway to a 5 % regression, and the build is accepted when the newest 1, 2 and 3 nights are
each "not-worse" (:func:`lsmbench.track.paired.classify` at 95 %).

**The single series beside it**: the existing detector (:func:`lsmbench.track.detect.detect`,
each series alone with its own autocorrelation, as ``track detect FILE.csv``) on the
candidate's nightly medians of the same runs, its changes in the worse direction only.

Scoring is the single-series suite's (:mod:`lsmbench.track.synthetic`): the delay of a
regression at night k is the least d such that night k+d reports one at k +/- 2; the false
alarms of a series without a regression (flat, or an improvement) are the distinct reported
change points (within 2 nights of each other counted once), per 100 of the series' nights.
Regressions only: neither detector's report of an improvement counts, as found or as an
alarm.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from lsmbench.track import synthetic
from lsmbench.track.detect import DetectorConfig, NotEnoughData, detect
from lsmbench.track.history import Better
from lsmbench.track.paired import (
    PairedDetectorConfig,
    PairedRatio,
    PairedReplay,
)

PairedKind = Literal["flat", "step"]

REPS = 3  # repetitions of each build a night: 3 pairs
SHARED = 0.5  # the share of a run's noise variance that is the night's (both builds see it)


class PairedSpec(BaseModel):
    """One kind of paired series; :func:`draw_paired` draws instances of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: PairedKind
    cov: float = 0.05  # one run's noise: its standard deviation over the level
    shared: float = Field(SHARED, ge=0.0, le=1.0)  # the night's share of that variance
    rho: float = 0.0  # AR(1) coefficient of the night's (shared) noise across nights
    reps: int = Field(REPS, ge=1)  # repetitions of each build a night
    nights: int = synthetic.NIGHTS
    step: float = 0.0  # relative change of the level from the step night on, signed
    step_from: int = 20
    step_until: int = 40
    better: Better = "higher"  # the metric's good direction: what a regression is

    @property
    def regression(self) -> bool:
        """A step in the worse direction: what the detectors must find."""
        if self.kind != "step" or self.step == 0:
            return False
        return (self.step < 0) == (self.better == "higher")

    @property
    def label(self) -> str:
        noise = (f"CoV {self.cov:.0%} ({self.shared:.0%} shared) rho {self.rho:g}, "
                 f"{self.reps} pairs a night")
        if self.kind == "step":
            what = "regression" if self.regression else "improvement"
            return f"{what} {self.step:+.0%}, {noise}"
        return f"flat, {noise}"


class PairedSeries(BaseModel):
    """One drawn testbed: the night's shared noise and each run's own, relative to the level,
    from which any build's runs on any night follow (:meth:`runs`)."""

    model_config = ConfigDict(frozen=True)

    spec: PairedSpec
    seed: int
    shared: list[float]  # per night
    reference_own: list[list[float]]  # per night, per repetition
    candidate_own: list[list[float]]
    change_at: int | None = None

    def level(self, build: int) -> float:
        """The true level of the build of night ``build`` (build -1: the one before night 0)."""
        if self.change_at is not None and build >= self.change_at:
            return synthetic.LEVEL * (1.0 + self.spec.step)
        return synthetic.LEVEL

    def runs(self, night: int, build: int, role: Literal["reference", "candidate"],
             ) -> list[float]:
        """The ``reps`` measurements of ``build`` on ``night`` in one role."""
        own = (self.reference_own if role == "reference" else self.candidate_own)[night]
        return [self.level(build) * (1.0 + self.shared[night] + e) for e in own]

    def pairs(self, night: int, reference: int) -> list[tuple[float, float]]:
        """Night ``night``'s (reference, candidate) pairs in run order: the candidate is the
        night's build, the reference the build of night ``reference``."""
        return list(zip(self.runs(night, reference, "reference"),
                        self.runs(night, night, "candidate"), strict=True))

    def candidate_medians(self) -> list[float]:
        """The single series: the candidate's median over its runs, night by night (what a
        nightly history records when it measures only the build under test)."""
        return [float(np.median(self.runs(t, t, "candidate"))) for t in range(self.spec.nights)]


def generate_paired(spec: PairedSpec, seed: int) -> PairedSeries:
    """One testbed of ``spec`` drawn from ``seed`` (the same seed gives the same runs)."""
    rng = np.random.default_rng(seed)
    change_at = (int(rng.integers(spec.step_from, spec.step_until + 1))
                 if spec.kind == "step" else None)
    shared = np.sqrt(spec.shared) * synthetic.ar1_noise(rng, spec.nights, spec.cov, spec.rho)
    own_sd = np.sqrt(1.0 - spec.shared) * spec.cov
    reference_own = rng.normal(0.0, own_sd, (spec.nights, spec.reps))
    candidate_own = rng.normal(0.0, own_sd, (spec.nights, spec.reps))
    return PairedSeries(spec=spec, seed=seed, shared=[float(v) for v in shared],
                        reference_own=reference_own.tolist(),
                        candidate_own=candidate_own.tolist(), change_at=change_at)


def draw_paired(spec: PairedSpec, count: int, seed: int) -> list[PairedSeries]:
    """``count`` independent testbeds of ``spec``; testbed i's seed derives from (seed, the
    spec's label, i), as :func:`lsmbench.track.synthetic.draw` derives a series'."""
    root = np.random.SeedSequence([seed, zlib.crc32(spec.label.encode())])
    return [generate_paired(spec, int(child.generate_state(1)[0]))
            for child in root.spawn(count)]


# ---------------------------------------------------------------- the paired detector


class PairedNight(BaseModel):
    """What the paired detector made of one night."""

    night: int
    reference: int  # the build the candidate was measured against (-1: before night 0)
    ratio: PairedRatio  # of the newest `window` nights since the reference: what alarms
    alarmed: bool  # they alarmed this night
    accepted: bool  # every window not-worse: the build is the next night's reference
    alarm: int | None  # the open regression's first night, reported this night
    change: float | None  # the open regression's ratio - 1 this night


def replay_paired(series: PairedSeries, config: PairedDetectorConfig) -> list[PairedNight]:
    """Run the paired detector (:class:`lsmbench.track.paired.PairedReplay`, the nightly
    alarm's own) night by night on one testbed: on night t the candidate (the build of night
    t) is measured against the reference; the build is the reference from the night after it
    is accepted, or after its regression was reported ``ack_after`` nights (acknowledged).

    The pairs are (reference, candidate) measurements that the testbed produced: the
    reference's level depends on which build it is, and so on what the detector decided on
    the nights before (:meth:`PairedSeries.pairs`)."""
    replay = PairedReplay(series.spec.better, config)
    reference = -1
    out: list[PairedNight] = []
    for night in range(series.spec.nights):
        j = replay.night(series.pairs(night, reference), reference)
        out.append(PairedNight(night=night, reference=reference, ratio=j.ratio,
                               alarmed=j.alarmed, accepted=j.accepted, alarm=j.alarm,
                               change=j.change))
        acknowledged = (j.reported is not None
                        and night - j.reported + 1 >= config.ack_after)
        if j.accepted or acknowledged:
            reference = night
    return out


def paired_reports(nights: Sequence[PairedNight]) -> list[list[tuple[int, float]]]:
    """Each night's report as the single-series replay sees a detector's: [(first night of
    the open regression, its change)] or []."""
    return [[] if n.alarm is None or n.change is None else [(n.alarm, n.change)]
            for n in nights]


# ---------------------------------------------------------------- the single series beside it


def regressions_only(detector: synthetic.Detector, better: Better) -> synthetic.Detector:
    """A detector whose changes in the better direction are dropped: an improvement is no
    alarm (and no finding)."""

    def run(values: Sequence[float]) -> list[tuple[int, float]]:
        return [(i, c) for i, c in detector(values)
                if (c < 0 if better == "higher" else c > 0)]

    return run


def single_detector(config: DetectorConfig | None, better: Better) -> synthetic.Detector:
    """The existing detector on one series, each series alone with its own autocorrelation
    (``track detect FILE.csv``), regressions only."""
    config = config or DetectorConfig()

    def run(values: Sequence[float]) -> list[tuple[int, float]]:
        try:
            return [(cp.index, cp.change) for cp in detect(values, config)]
        except NotEnoughData:  # the replay starts at the first night it accepts anyway
            return []

    return regressions_only(run, better)


# ---------------------------------------------------------------- scores


def _delay(reports: Sequence[Sequence[tuple[int, float]]], change_at: int,
           better: Better, tolerance: int) -> int | None:
    """The single-series suite's detection delay on per-night reports."""
    for night in range(change_at, len(reports)):
        for index, change in reports[night]:
            worse = change < 0 if better == "higher" else change > 0
            if abs(index - change_at) <= tolerance and worse:
                return night - change_at
    return None


def _false_alarms(reports: Sequence[Sequence[tuple[int, float]]], first_night: int,
                  tolerance: int) -> int:
    """The single-series suite's false alarms on per-night reports."""
    reported = sorted({i for night in reports[first_night:] for i, _ in night})
    return len(synthetic.alarm_clusters(reported, tolerance))


def score_reports(spec: PairedSpec, series: Sequence[PairedSeries],
                  reports: Sequence[Sequence[Sequence[tuple[int, float]]]], *, label: str,
                  first_night: int, within: int = 2,
                  tolerance: int = synthetic.TOLERANCE) -> synthetic.Score:
    """Aggregate per-night reports of one detector over every series of ``spec`` (a
    regression: found within ``within`` nights, by the last night, delays; otherwise: false
    alarms) into the single-series suite's :class:`~lsmbench.track.synthetic.Score`."""
    base = synthetic.Score(label=label, kind=spec.kind, cov=spec.cov, rho=spec.rho,
                           step=spec.step, series=len(series),
                           nights=sum(s.spec.nights for s in series))
    if spec.regression:
        delays = [_delay(r, s.change_at, spec.better, tolerance)
                  for s, r in zip(series, reports, strict=True) if s.change_at is not None]
        return synthetic.with_delays(base, delays, len(series), within)
    alarms = [_false_alarms(r, first_night, tolerance) for r in reports]
    return base.model_copy(update={
        "false_alarms": sum(alarms),
        "false_alarms_per_100_nights": 100.0 * sum(alarms) / base.nights,
        "series_with_false_alarm": sum(a > 0 for a in alarms) / len(series),
    })


def score_paired(spec: PairedSpec, series: Sequence[PairedSeries],
                 config: PairedDetectorConfig, *, within: int = 2) -> synthetic.Score:
    """The paired detector over every series of ``spec`` (it judges from the first night:
    it compares two builds, it needs no history)."""
    reports = [paired_reports(replay_paired(s, config)) for s in series]
    return score_reports(spec, series, reports, label=f"paired: {spec.label}",
                         first_night=0, within=within)


def score_single(spec: PairedSpec, series: Sequence[PairedSeries],
                 config: DetectorConfig | None = None, *, within: int = 2) -> synthetic.Score:
    """The single-series detector on the candidate's nightly medians of the same runs."""
    config = config or DetectorConfig()
    detector = single_detector(config, spec.better)
    first_night = config.min_points - 1
    reports = []
    for s in series:
        values = s.candidate_medians()
        reports.append([[] if night < first_night else list(detector(values[:night + 1]))
                        for night in range(spec.nights)])
    return score_reports(spec, series, reports, label=f"single series: {spec.label}",
                         first_night=first_night, within=within)
