"""The history's change points: what `lsmbench track report` reports and `track ack` marks.

Per series (campaign, group, metric) the runs are cut into *segments* wherever the spec hash
or the testbed key changes; the detector (``lsmbench.track.detect``) runs on each segment's
medians alone, so a new kernel or a longer running phase is a boundary, never a change point.
A change point is a *regression* when it moves the metric the wrong way (``Metric.better``).

A regression is **open** until it is acknowledged (``track ack``), or the series recovers
(its latest median is back within half the change of the level before), or its segment
ended (a later spec or testbed change: nothing after it is comparable, the report says so).
An acknowledgement matches the change it was given for even when later nights move the
detected index by a night or two (the same series, direction, and a run within
``ACK_SLACK`` runs).

A campaign that runs on several nodes has a series per node (``HistorySeries.node``), each
detected on its own. What they found is reported per *change*, not per node
(:func:`merge_node_changes`): the same group, metric and direction under the same spec, first
seen within ``ACK_SLACK`` nights of each other on different nodes, is one change with the list
of the nodes that saw it (``Change.nodes``, each node's own in ``Change.per_node``). A
regression every node saw is reported once; one that some nodes saw, once with those.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from ..method.groups import group_id_key
from ..util.digest import canonical_hash
from ..util.names import BUILD_DIMENSION
from ..util.wording import plural
from .history import (
    DEFAULT_THRESHOLD,
    METRIC_BY_NAME,
    METRICS,
    Ack,
    History,
    PairedValue,
    RunRecord,
    Value,
)
from .paired import PairedDetectorConfig, PairedReplay, classify_interval

ACK_SLACK = 2  # runs: how far a re-detected change may move and keep its acknowledgement

Direction = Literal["regression", "improvement"]
# series: a change point of one series of medians; paired: the build under test against the
# reference build of the same night (spec pair:, lsmbench.track.paired).
ChangeKind = Literal["series", "paired"]
Status = Literal["open", "acked", "recovered", "segment-ended", "improvement"]


class Change(BaseModel):
    """One change point of one series, as regressions.json and the report show it."""

    id: str
    campaign: str
    group: str
    metric: str
    direction: Direction
    change: float  # (after - before) / |before|, signed
    before: float
    after: float
    index: int  # in its segment: the first run of the new level
    run_id: int  # that run
    commit_before: str | None  # the last run before the change
    commit_after: str | None  # the first run after it
    date: str  # of the first run after
    p_value: float | None
    testbed_key: str
    spec_hash: str
    acked: bool = False
    why: str | None = None
    status: Status = "open"
    # reported on an earlier night and kept: this night's detector no longer reports it (the
    # newest nights' window moved past it), and the nights since it do not reject it
    held: bool = False
    kind: ChangeKind = "series"
    # paired: the ratio's interval (candidate / reference) on the night it was found
    ci_low: float | None = None
    ci_high: float | None = None
    # A campaign on several nodes: the node whose series this is (a change of one node's
    # series), or None; a reported change lists the nodes that saw it in `nodes` and each
    # one's own change in `per_node` (its figures above are the first node's to see it).
    node: str | None = None
    nodes: list[str] = []
    per_node: list[Change] = []


@dataclass
class HistoryPoint:
    run: RunRecord
    value: Value


@dataclass
class Segment:
    """A stretch of one series with one spec hash and one testbed key."""

    campaign: str
    group: str
    metric: str
    spec_hash: str
    testbed_key: str
    points: list[HistoryPoint]
    note: str | None = None  # why no detection ran (too few runs), or None
    noise: float | None = None  # the detector's measure of the segment's run-to-run noise
    node: str | None = None  # the series' node (a campaign on several nodes), or None


@dataclass
class HistorySeries:
    campaign: str
    group: str
    metric: str
    segments: list[Segment]
    node: str | None = None  # a campaign on several nodes: one series per node


@dataclass
class Analysis:
    series: list[HistorySeries]
    changes: list[Change]  # as reported: one per change, with the nodes that saw it
    # every series' own change points (a node's series' own, before they are merged)
    series_changes: list[Change] = field(default_factory=list)
    # each paired series' nights as the paired detector judged them (paired_nights)
    paired: dict[tuple[str, str, str, str], list[PairedNightState]] = field(
        default_factory=dict)

    @property
    def open(self) -> list[Change]:
        return [c for c in self.changes if c.status == "open"]

    @property
    def acked(self) -> list[Change]:
        return [c for c in self.changes if c.acked]


# The nights' noise is measured from successive differences (detect.difference_sigma, or the
# detector's levels on longer series): one difference (two nights) has no spread to measure.
NOISE_MIN_NIGHTS = 3


@dataclass
class SegmentNoise:
    """A segment's run-to-run noise, each part a coefficient of variation, measured only where
    there is data for it: between nights (the detector's measure over the nights' medians,
    from NOISE_MIN_NIGHTS nights), and between one night's repetitions (their relative
    spread, pooled over the nights with two or more stored)."""

    nights: int
    between_nights: float | None
    rep_nights: int  # nights with two or more repetitions' values stored
    between_repetitions: float | None

    def text(self) -> str:
        """'run-to-run noise 4.1 % between nights (5 nights), 2.3 % between a night's
        repetitions (5 nights)'; without the data for either: 'noise: not measured (needs 3
        nights or repetitions)'."""
        parts = []
        if self.between_nights is not None:
            parts.append(f"{_pct(self.between_nights)} between nights "
                         f"({plural(self.nights, 'night')})")
        if self.between_repetitions is not None:
            parts.append(f"{_pct(self.between_repetitions)} between a night's repetitions "
                         f"({plural(self.rep_nights, 'night')})")
        if not parts:
            return (f"noise: not measured (needs {NOISE_MIN_NIGHTS} nights or repetitions; "
                    f"{plural(self.nights, 'night')} of one run each)")
        text = "run-to-run noise " + ", ".join(parts)
        if self.between_nights is None:
            text += f"; between nights not measured (needs {NOISE_MIN_NIGHTS} nights)"
        return text


def _pct(cov: float) -> str:
    return "unbounded (median 0)" if math.isinf(cov) else f"{cov * 100:.1f} %"


def segment_noise(seg: Segment) -> SegmentNoise:
    """The segment's noise (:class:`SegmentNoise`) from its nights' medians and the
    repetitions each night stored."""
    from .detect import noise

    medians = [p.value.median for p in seg.points if p.value.median is not None]
    between = noise(medians) if len(medians) >= NOISE_MIN_NIGHTS else None
    covs = []
    for p in seg.points:
        reps = [x for x in (p.value.reps or []) if math.isfinite(x)]
        if len(reps) < 2:
            continue
        level = abs(statistics.median(reps))
        sd = statistics.stdev(reps)
        covs.append(math.inf if level == 0 and sd > 0 else 0.0 if level == 0 else sd / level)
    within = math.sqrt(sum(c * c for c in covs) / len(covs)) if covs else None
    return SegmentNoise(nights=len(seg.points), between_nights=between, rep_nights=len(covs),
                        between_repetitions=within)


def _segments(campaign: str, group: str, metric: str, points: list[HistoryPoint],
              node: str | None = None) -> list[Segment]:
    out: list[Segment] = []
    for p in points:
        key = (p.run.spec_hash, p.run.testbed_key)
        if not out or (out[-1].spec_hash, out[-1].testbed_key) != key:
            out.append(Segment(campaign, group, metric, key[0], key[1], [], node=node))
        out[-1].points.append(p)
    return out


def build_series(history: History, campaign: str | None = None) -> list[HistorySeries]:
    """Per campaign, group, metric and node (runs of a campaign on several nodes are one
    series per node; a single-node run's node is None), the runs in time order."""
    runs = {r.run_id: r for r in history.runs(campaign)}
    by_key: dict[tuple[str, str, str, str], list[HistoryPoint]] = {}
    for v in history.values(campaign):
        if v.median is None or v.metric not in METRIC_BY_NAME:
            continue
        run = runs[v.run_id]
        by_key.setdefault((run.campaign, v.group, v.metric, run.node or ""), []).append(
            HistoryPoint(run, v))
    order = {m.name: i for i, m in enumerate(METRICS)}
    out = []
    for (camp, group, metric, node), pts in sorted(
            by_key.items(), key=lambda kv: (kv[0][0], group_id_key(kv[0][1]), order[kv[0][2]],
                                            kv[0][3])):
        pts.sort(key=lambda p: (p.run.finished, p.run.run_id))
        out.append(HistorySeries(camp, group, metric,
                                 _segments(camp, group, metric, pts, node or None),
                                 node=node or None))
    return out


def change_id(seg: Segment, direction: str, run_id: int) -> str:
    return "c-" + canonical_hash([seg.campaign, seg.group, seg.metric, direction,
                                  seg.spec_hash, seg.testbed_key, run_id])


def _matching_ack(acks: Sequence[Ack], seg: Segment, direction: str, index: int) -> Ack | None:
    position = {p.run.run_id: i for i, p in enumerate(seg.points)}
    for a in acks:
        if (a.campaign, a.group, a.metric, a.direction) != (seg.campaign, seg.group,
                                                            seg.metric, direction):
            continue
        at = position.get(a.run_id)
        if at is not None and abs(at - index) <= ACK_SLACK:
            return a
    return None


def _status(direction: str, before: float, after: float, latest: float, last_segment: bool,
            acked: bool) -> Status:
    if direction == "improvement":
        return "improvement"
    if acked:
        return "acked"
    if not last_segment:
        return "segment-ended"
    # Recovered: the latest level is back within half the change of the level before.
    if abs(latest - before) <= abs(after - before) / 2:
        return "recovered"
    return "open"


def detect_segment(seg: Segment, last_segment: bool, acks: Sequence[Ack],
                   rho: float | None = None, held_runs: Sequence[int] = ()) -> list[Change]:
    """The segment's change points. ``rho``: its testbed's autocorrelation
    (:func:`testbed_autocorrelation`); ``held_runs``: the first runs of the changes the last
    report gave for this segment, reported again unless the nights since reject them."""
    from .detect import detect, noise

    values = [p.value.median for p in seg.points]
    position = {p.run.run_id: i for i, p in enumerate(seg.points)}
    held = [position[r] for r in held_runs if r in position]
    try:
        seg.noise = noise(values)
        found = detect(values, rho=rho, held=held)
        fresh = {cp.index for cp in detect(values, rho=rho)} if held else None
    except ValueError as e:  # too few runs, or a series the detector cannot use
        seg.note = str(e)
        return []
    better = METRIC_BY_NAME[seg.metric].better
    out = []
    latest = values[-1]
    for cp in found:
        worse = cp.after < cp.before if better == "higher" else cp.after > cp.before
        direction: Direction = "regression" if worse else "improvement"
        first = seg.points[cp.index]
        prev = seg.points[cp.index - 1] if cp.index > 0 else None
        ack = _matching_ack(acks, seg, direction, cp.index)
        out.append(Change(
            id=change_id(seg, direction, first.run.run_id),
            campaign=seg.campaign, group=seg.group, metric=seg.metric, direction=direction,
            change=cp.change, before=cp.before, after=cp.after, index=cp.index,
            run_id=first.run.run_id,
            commit_before=prev.run.commit if prev else None, commit_after=first.run.commit,
            date=first.run.date, p_value=cp.p_value, testbed_key=seg.testbed_key,
            spec_hash=seg.spec_hash, acked=ack is not None, why=ack.why if ack else None,
            status=_status(direction, cp.before, cp.after, latest, last_segment,
                           ack is not None),
            held=fresh is not None and cp.index not in fresh, node=seg.node,
            nodes=[seg.node] if seg.node else [],
        ))
    return out


@dataclass
class PairedNightState:
    """One paired night of one series as the paired detector judged it
    (lsmbench.track.paired.PairedReplay): pooled with the nights before it against the same
    reference, with the testbed's spread of a pair."""

    value: PairedValue
    alarmed: bool  # the newest nights against this reference are significantly worse
    accepted: bool  # every window of them not-worse: the build may be the next reference
    alarm: PairedValue | None  # the night the open regression most likely started
    change: float | None  # the open regression's ratio - 1, pooled over the newest nights
    ci_low: float  # the interval of the newest nights' pooled ratio (the night's own when
    ci_high: float  # the history holds no pairs for it: runs recorded before they were kept)
    # This night alone, its pairs judged with the testbed's spread (the stored interval,
    # from its own pairs' spread, when the history holds no pairs for it): the history page's
    # and the improvements' interval
    night_low: float
    night_high: float


def paired_nights(history: History, campaign: str | None = None, *,
                  threshold: float = DEFAULT_THRESHOLD,
                  ) -> dict[tuple[str, str, str, str], list[PairedNightState]]:
    """Per paired series (campaign, group, metric, testbed key) its nights in order, each as
    the paired detector judged it -- the same detector, with the same settings, that the
    synthetic suite scores (lsmbench.track.synthetic_paired; docs/tracking.md, "Paired
    nights"). The testbed key, not the spec hash, keys a paired series: the spec names its
    reference, which moves; the spread pooled is the testbed's."""
    runs = {r.run_id: r for r in history.runs(campaign)}
    config = PairedDetectorConfig(threshold=threshold)
    by_key: dict[tuple[str, str, str, str], list[PairedValue]] = {}
    for v in history.paired_values(campaign):
        if v.metric in METRIC_BY_NAME:
            run = runs[v.run_id]
            by_key.setdefault((run.campaign, v.group, v.metric, run.testbed_key), []).append(v)
    out: dict[tuple[str, str, str, str], list[PairedNightState]] = {}
    for key, values in by_key.items():
        values.sort(key=lambda v: (runs[v.run_id].finished, v.run_id))
        better = METRIC_BY_NAME[key[2]].better
        replay = PairedReplay(better, config)
        nights: list[PairedNightState] = []
        for v in values:
            if v.pairs is None or len(v.pairs) < 2:
                verdict = classify_interval(v.ci_low, v.ci_high, better, threshold)
                nights.append(PairedNightState(
                    value=v, alarmed=verdict == "worse", accepted=verdict == "not-worse",
                    alarm=v if verdict == "worse" else None,
                    change=v.ratio - 1 if verdict == "worse" else None,
                    ci_low=v.ci_low, ci_high=v.ci_high,
                    night_low=v.ci_low, night_high=v.ci_high))
                continue
            j = replay.night(v.pairs, v.reference_commit)
            nights.append(PairedNightState(
                value=v, alarmed=j.alarmed, accepted=j.accepted,
                alarm=None if j.alarm is None else values[j.alarm], change=j.change,
                ci_low=j.ratio.low, ci_high=j.ratio.high,
                night_low=j.night.low, night_high=j.night.high))
        out[key] = nights
    return out


# How a merged change's status follows from its nodes': open while any node's is.
_STATUS_ORDER: tuple[Status, ...] = ("open", "acked", "recovered", "segment-ended",
                                     "improvement")


def merge_node_changes(changes: Sequence[Change], nights: dict[int, int]) -> list[Change]:
    """The changes as reported: the nodes' changes of one group, metric and direction under
    one spec whose first runs are within ``ACK_SLACK`` nights of the earliest one (``nights``:
    run id -> the index of its campaign run among the campaign's runs, the same for every
    node's run of one campaign run) are one change, each node once, listing the nodes
    (``nodes``) and their own changes (``per_node``). Its figures are those of the node
    that saw it first (then by name); its status is open while any node's is (else acked,
    recovered, segment-ended in that order); it is acked when every node's is. A change
    of a single-node series, or a paired one, is reported as it is."""
    out: list[Change] = []
    pending: dict[tuple[str, str, str, str, str], list[Change]] = {}
    for c in changes:
        if c.node is None or c.kind != "series":
            out.append(c)
            continue
        pending.setdefault((c.campaign, c.group, c.metric, c.direction, c.spec_hash),
                           []).append(c)
    for members in pending.values():
        members.sort(key=lambda c: (nights.get(c.run_id, 0), c.node or ""))
        clusters: list[list[Change]] = []
        for c in members:
            home = next((cl for cl in clusters
                         if nights.get(c.run_id, 0) - nights.get(cl[0].run_id, 0) <= ACK_SLACK
                         and c.node not in {m.node for m in cl}), None)
            if home is None:
                clusters.append([c])
            else:
                home.append(c)
        out.extend(_merged(cl) for cl in clusters)
    return out


def _merged(members: list[Change]) -> Change:
    first = members[0]
    if len(members) == 1:
        return first.model_copy(update={"nodes": [first.node], "per_node": [first]})
    status = next(s for s in _STATUS_ORDER if any(m.status == s for m in members))
    acked = all(m.acked for m in members)
    return first.model_copy(update={
        "id": "c-" + canonical_hash([first.campaign, first.group, first.metric,
                                     first.direction, first.spec_hash, first.date, "nodes"]),
        "node": None, "nodes": sorted(str(m.node) for m in members), "per_node": members,
        "status": status, "acked": acked,
        "why": next((m.why for m in members if m.why), None),
        "held": all(m.held for m in members)})


def paired_changes(history: History, campaign: str | None = None, *,
                   threshold: float = DEFAULT_THRESHOLD,
                   nights: dict[tuple[str, str, str, str], list[PairedNightState]] | None = None,
                   ) -> list[Change]:
    """The paired runs' changes, per series and reference commit: a regression from the
    night the paired detector's alarm says it most likely started (:func:`paired_nights`),
    or an improvement (the night's ratio's whole interval beyond the boundary halfway to a
    change of ``threshold`` the good way: listed, never an alarm). A regression is open while
    the latest night held against the same reference still reports it; recovered once the
    nights since accept the build (the alarm withdrawn); acknowledged by ``track ack`` (after
    which the nightly job's default reference moves past it). ``nights``: paired_nights'
    answer when the caller has it already."""
    runs = {r.run_id: r for r in history.runs(campaign)}
    acked = {a.change_id: a for a in history.acks()}
    out: list[Change] = []
    if nights is None:
        nights = paired_nights(history, campaign, threshold=threshold)
    for (camp, group, metric, _), held_nights in sorted(nights.items()):
        by_reference: dict[str | None, list[PairedNightState]] = {}
        for n in held_nights:
            by_reference.setdefault(n.value.reference_commit, []).append(n)
        for reference, held in by_reference.items():
            values = [n.value for n in held]
            reported = next((n for n in held if n.alarm is not None), None)
            improved = next((n.value for n in held if paired_state(n, threshold) == "better"),
                            None)
            for direction, first, night in (("regression", None, reported),
                                            ("improvement", improved, None)):
                if night is not None:
                    first = night.alarm
                if first is None:
                    continue
                run = runs[first.run_id]
                cid = paired_change_id(camp, group, metric, direction, reference)
                ack = acked.get(cid)
                status: Status
                if direction == "improvement":
                    status = "improvement"
                elif ack is not None:
                    status = "acked"
                else:
                    status = "open" if held[-1].alarm is not None else "recovered"
                change = (night.change if night is not None and night.change is not None
                          else first.ratio - 1)
                out.append(Change(
                    id=cid, campaign=camp, group=group, metric=metric, direction=direction,
                    change=change, before=first.reference_median or 0.0,
                    after=first.candidate_median or 0.0, index=values.index(first),
                    run_id=first.run_id, commit_before=reference, commit_after=run.commit,
                    date=run.date, p_value=None, testbed_key=run.testbed_key,
                    spec_hash=run.spec_hash, acked=ack is not None,
                    why=ack.why if ack else None, status=status, kind="paired",
                    ci_low=night.ci_low if night is not None else first.ci_low,
                    ci_high=night.ci_high if night is not None else first.ci_high))
    return out


def paired_state(n: PairedNightState, threshold: float = DEFAULT_THRESHOLD) -> str:
    """"worse" or "better" than the reference by the paired rule on the night alone (its
    interval with the testbed's spread; an improvement is a change the other way past the
    same boundary), else "same" (not worse, or undecided)."""
    better = METRIC_BY_NAME[n.value.metric].better
    if classify_interval(n.night_low, n.night_high, better, threshold) == "worse":
        return "worse"
    other = "lower" if better == "higher" else "higher"
    return "better" if classify_interval(n.night_low, n.night_high, other,
                                         threshold) == "worse" else "same"


def paired_change_id(campaign: str, group: str, metric: str, direction: str,
                     reference_commit: str | None) -> str:
    """One change per series and reference: every night held against the same reference and
    found worse is the same regression (its acknowledgement covers them all)."""
    return "p-" + canonical_hash([campaign, group, metric, direction, reference_commit])


def accepted_commit(history: History, campaign: str, *,
                    threshold: float = DEFAULT_THRESHOLD) -> str | None:
    """The commit of the campaign's latest accepted run: the nightly job's default reference.
    A paired run is accepted when the paired detector accepts every metric of every group it
    holds (:func:`paired_nights`: the newest nights against the reference each "not-worse"),
    or alarms on one whose regression was acknowledged: an undecided night keeps the
    reference, as an alarm does, so that a regression is compared with the build before it on
    every night until it is told (docs/tracking.md, "Paired nights": a reference that moved
    on every night without an alarm would give a regression one night of pairs to be seen
    on). A run without paired values (the first night, an unpaired one) is accepted. None
    without a run with a commit."""
    acked = {a.change_id for a in history.acks()}
    runs = history.runs(campaign)
    rejected = set()
    for (camp, group, metric, _), nights in paired_nights(history, campaign,
                                                          threshold=threshold).items():
        for n in nights:
            if n.accepted:
                continue
            if n.alarm is not None and paired_change_id(
                    camp, group, metric, "regression", n.value.reference_commit) in acked:
                continue
            rejected.add(n.value.run_id)
    for run in reversed(runs):
        if run.commit and run.run_id not in rejected:
            return run.commit
    return None


def testbed_autocorrelation(series: Sequence[HistorySeries]) -> dict[str, float | None]:
    """Per testbed key, the lag-1 autocorrelation of its nights pooled over every segment of
    every series (campaign, group, metric) measured on it
    (:func:`lsmbench.track.detect.pooled_autocorrelation`): one series' 10-40 nights give
    its own +-0.2, and a machine that stays slow for a few nights does so for all its
    series. None for a testbed none of whose segments is long enough."""
    from .detect import autocorrelation, pooled_autocorrelation

    parts: dict[str, list] = {}
    for s in series:
        for seg in s.segments:
            values = [p.value.median for p in seg.points]
            try:
                own = autocorrelation(values)
            except ValueError:  # too few runs
                own = None
            parts.setdefault(seg.testbed_key, []).append(own)
    return {key: pooled_autocorrelation(p) for key, p in parts.items()}


# A paired run's builds (their groups carry the build dimension) are judged by their ratio,
# where the night's noise cancels; their raw series move with the night (docs/tracking.md,
# "Paired nights"). Detection on the raw series is for nights without a reference.
PAIRED_BUILD_NOTE = ("a paired run's build: judged by the paired ratio (Paired nights), not "
                     "by change points of this series")


def paired_build(group: str) -> bool:
    """Whether the group is one build of a paired run (``...,build=candidate``)."""
    return any(part.split("=", 1)[0] == BUILD_DIMENSION for part in group.split(","))


def find_changes(history: History, campaign: str | None = None) -> Analysis:
    """Every segment's change points: the detector at its testbed's autocorrelation (pooled
    over all the history's series on that testbed, whatever the campaign), with the changes
    the last report gave kept (``History.held_changes``); the paired runs' changes from their
    ratios (:func:`paired_changes`), their builds' raw series left undetected."""
    series = build_series(history, campaign)
    rho = testbed_autocorrelation(series if campaign is None else build_series(history))
    acks = history.acks()
    changes: list[Change] = []
    for s in series:
        for i, seg in enumerate(s.segments):
            if paired_build(s.group):
                seg.note = PAIRED_BUILD_NOTE
                continue
            held = history.held_changes(*_segment_key(seg))
            changes.extend(detect_segment(seg, i == len(s.segments) - 1, acks,
                                          rho.get(seg.testbed_key), held))
    paired = paired_nights(history, campaign)
    changes.extend(paired_changes(history, campaign, nights=paired))
    return Analysis(series, merge_node_changes(changes, campaign_nights(history, campaign)),
                    changes, paired)


def campaign_nights(history: History, campaign: str | None = None) -> dict[int, int]:
    """Run id -> the index of its campaign run (its campaign's distinct end times in order):
    the nodes' runs of one campaign run share it."""
    ends: dict[str, list[float]] = {}
    runs = history.runs(campaign)
    for r in runs:
        ends.setdefault(r.campaign, []).append(r.finished)
    index = {c: {f: i for i, f in enumerate(sorted(set(fs)))} for c, fs in ends.items()}
    return {r.run_id: index[r.campaign][r.finished] for r in runs}


def _segment_key(seg: Segment) -> tuple[str, str, str, str, str]:
    return seg.campaign, seg.group, seg.metric, seg.spec_hash, seg.testbed_key


def keep_reported(history: History, analysis: Analysis) -> None:
    """Remember, per segment, the changes this report gives (their first runs), so that the
    next report keeps them until the nights since reject them (:func:`detect_segment`)."""
    for s in analysis.series:
        for seg in s.segments:
            key = _segment_key(seg)
            history.set_held_changes(*key, sorted({
                c.run_id for c in analysis.series_changes
                if (c.campaign, c.group, c.metric, c.spec_hash, c.testbed_key) == key}))

