"""What a claim is judged on: a campaign's groups (lsmbench.method.groups: medians and
order-statistic intervals over repetitions) and figures per point that the group table does not
carry (components, query rates, write amplification, writes within bursts), each aggregated the
same way; and the one rule that turns two estimates into a status.

The rule (docs/results/reproduce.md, "How a claim is judged"): a claim that A is higher than B
is **reproduced** when A's interval lies wholly above B's, **not reproduced** when wholly
below, and **inconclusive** otherwise -- overlapping intervals, or fewer than 3 repetitions
(no interval: the medians' direction is reported, never a status). A claim about a verdict
takes the group verdict, which already says inconclusive when the repetitions disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..listing import estimate_text
from ..method.groups import (
    PRACTICAL_REPETITIONS,
    Group,
    beyond_practical,
    group_repetitions,
    repetitions_needed,
    repetitions_to_part,
)
from ..method.stats import Estimate, median_ci, widening
from ..report.load import (
    component_counts,
    interval_components,
    measured_intervals,
    stored_repetition,
)
from ..report.papers import bursts
from ..results import Campaign, StoredPoint, read_campaign
from ..util.names import DIMENSION_ALIASES
from ..util.values import dig, number

Status = Literal["reproduced", "not reproduced", "inconclusive", "not run"]
REPRODUCED: Status = "reproduced"
NOT_REPRODUCED: Status = "not reproduced"
INCONCLUSIVE: Status = "inconclusive"
NOT_RUN: Status = "not run"


class Finding(BaseModel):
    """A claim's result: what we measured, the status, and why."""

    status: Status
    ours: str
    why: str
    # An inconclusive comparison that more repetitions would likely decide: about how many
    # each of `groups` (the groups compared) would need if the medians hold. None: none
    # would, or it is decided.
    repetitions: int | None = None
    groups: list[str] = []


class GroupEstimate(Estimate):
    """An estimate over one stored group's repetitions, which knows the group."""

    group: str | None = None


def _compared(*estimates: Estimate) -> list[str]:
    """The groups of the estimates a comparison read (those that know theirs)."""
    return [g for e in estimates if (g := getattr(e, "group", None))]


PointMetric = Callable[[StoredPoint], float | None]


# ---------------------------------------------------------------- per-point figures


def testing_max(pt: StoredPoint) -> float | None:
    return number(dig(pt.record, "max_throughput", "writes_per_s"))


def components_mean(pt: StoredPoint) -> float | None:
    """Mean disk components over the running phase's measured intervals."""
    counts = component_counts(pt.running) if pt.running else []
    return sum(counts) / len(counts) if counts else None


def running_window_s(pt: StoredPoint) -> float | None:
    """The length of the running phase's measured window."""
    ivs = measured_intervals(pt.running) if pt.running else []
    if not ivs:
        return None
    return float(ivs[-1].get("t_end_s") or 0.0) - float(ivs[0].get("t_start_s") or 0.0)


def _first_intervals(pt: StoredPoint, first_s: float, after_s: float = 0.0
                     ) -> list[dict[str, Any]]:
    """The running phase's measured intervals starting within `first_s` of the first one's
    start, and not within `after_s` of it (by start: the intervals of two runs end a few
    microseconds apart)."""
    ivs = measured_intervals(pt.running) if pt.running else []
    if not ivs:
        return []
    start = float(ivs[0].get("t_start_s") or 0.0)
    return [iv for iv in ivs
            if after_s - 1e-3 <= float(iv.get("t_start_s") or 0.0) - start < first_s - 1e-3]


def common_window(ev: CampaignEvidence, *selections: dict[str, Any]) -> float | None:
    """The shortest running window of the selected groups' complete repetitions when the
    windows differ by more than a second, else None. A running phase that stops when decided
    ends early on a failure and runs on while undecided: a figure averaged over whole windows
    would compare a tree before its deepest merge with one through it, so such figures are
    compared over each window's first seconds, the same for all."""
    windows = [w for sel in selections if (g := ev.one(**sel)) is not None
               for p in g.points if p in ev.points and ev.points[p].ok
               and (w := running_window_s(ev.points[p]))]
    if not windows or max(windows) - min(windows) <= 1.0:
        return None
    return min(windows)


def over_first(first_s: float | None) -> str:
    """What a comparison over common_window's seconds adds to the figure's name."""
    return "" if first_s is None else \
        f" over each running phase's first {first_s:.0f} s (the shortest window compared)"


def components_mean_over(first_s: float | None) -> PointMetric:
    """Mean disk components over the first `first_s` seconds of the running phase's measured
    window (None: all of it)."""
    if first_s is None:
        return components_mean

    def metric(pt: StoredPoint) -> float | None:
        counts = interval_components(_first_intervals(pt, first_s))
        return sum(counts) / len(counts) if counts else None
    return metric


def compare_components(ev: CampaignEvidence, a: dict[str, Any], b: dict[str, Any],
                       a_name: str, b_name: str) -> Finding:
    """"a keeps fewer disk components than b", over the same stretch of running for every
    repetition (common_window)."""
    first = common_window(ev, a, b)
    metric = components_mean_over(first)
    return compare(ev.of(metric, **a), ev.of(metric, **b), a_name, b_name, higher=False,
                   fmt=fmt_plain, what="mean disk components" + over_first(first))


def query_rate(kind: str, first_s: float | None = None, after_s: float = 0.0) -> PointMetric:
    """Queries of `kind` (get, scan, secondary) per second in the running phase's measured
    window, or in its first `first_s` seconds (those after its first `after_s`)."""
    def metric(pt: StoredPoint) -> float | None:
        if first_s is None:
            return number(pt.running.summary_get("queries", kind, "throughput")) \
                if pt.running else None
        ivs = _first_intervals(pt, first_s, after_s)
        ops = [number(((iv.get("queries") or {}).get(kind) or {}).get("ops")) for iv in ivs]
        if not ivs or any(o is None for o in ops):
            return None
        seconds = sum(float(iv.get("t_end_s") or 0.0) - float(iv.get("t_start_s") or 0.0)
                      for iv in ivs)
        return sum(o for o in ops if o is not None) / seconds if seconds > 0 else None
    return metric


def testing_engine_metric(name: str) -> PointMetric:
    """An engine metric at the end of the testing phase (write_amplification, ...)."""
    def metric(pt: StoredPoint) -> float | None:
        return number(pt.testing.summary_get("engine_metrics", "end", name)) if pt.testing \
            else None
    return metric


def burst_write_rate(pt: StoredPoint) -> float | None:
    """Writes completed per second within the running phase's bursts (the client's write
    throughput while it has something to write; Pramanik & Venkatesh's Table 2 measure)."""
    ph = pt.running
    if ph is None:
        return None
    spans = bursts(ph)
    if not spans:
        return None
    writes = seconds = 0.0
    for iv in ph.regular_intervals():
        start, end = number(iv.get("t_start_s")), number(iv.get("t_end_s"))
        w = number(dig(iv, "ops", "writes"))
        if start is None or end is None or w is None:
            continue
        if any(s - 1e-6 <= start and end <= e + 1e-6 for s, e in spans):
            writes += w
            seconds += end - start
    return writes / seconds if seconds > 0 else None


def confirmed_estimate(c: dict[str, Any]) -> Estimate:
    """A confirmed configuration of a tune study (tune.json `confirmed`) as an Estimate."""
    return Estimate(median=c.get("median"), ci_low=c.get("ci_low"), ci_high=c.get("ci_high"),
                    confidence=c.get("confidence"), n=int(c.get("repetitions") or 0))


# ---------------------------------------------------------------- a campaign


def param(params: dict[str, Any], name: str) -> Any:
    """A matrix value by its dimension's name (`policy` and `merge_policy` are one), or by
    the last part of a dotted name."""
    for key in (name, DIMENSION_ALIASES.get(name)):
        if key in params:
            return params[key]
    for short, option in DIMENSION_ALIASES.items():
        if name == option and short in params:
            return params[short]
    found = [v for k, v in params.items() if k.rsplit(".", 1)[-1] == name]
    return found[0] if len(found) == 1 else None


@dataclass
class CampaignEvidence:
    """One experiment's stored campaign, read once."""

    name: str
    campaign: Campaign
    groups: list[Group]
    points: dict[str, StoredPoint] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # non-campaign evidence (sim tables)
    # While `reading` runs a check: the groups it took estimates of.
    _reads: list[str] | None = field(default=None, repr=False)

    def reading(self, check: Callable[[CampaignEvidence], Finding]
                ) -> tuple[Finding, list[str]]:
        """`check` (a claim's) on this evidence, and the groups it took estimates of, each
        once, in order."""
        self._reads = []
        try:
            return check(self), list(dict.fromkeys(self._reads))
        finally:
            self._reads = None

    def select(self, **params: Any) -> list[Group]:
        """The groups whose matrix values include these: a name as in the spec's matrix, or
        the last part of a dotted one (`get` for phases.running.queries.operations.get)."""
        return [g for g in self.groups
                if all(param(g.params, k) == v for k, v in params.items())]

    def one(self, **params: Any) -> Group | None:
        found = self.select(**params)
        return found[0] if len(found) == 1 else None

    def of(self, metric: str | PointMetric, **params: Any) -> Estimate:
        """`metric` over the one group these matrix values select (no estimate when they
        select none or several)."""
        return self.estimate(self.one(**params), metric)

    def estimate(self, group: Group | None, metric: str | PointMetric) -> Estimate:
        """A group figure (a name of lsmbench.method.groups.FIGURES) or a per-point metric's median
        and interval over the group's complete repetitions."""
        if group is None:
            return Estimate()
        if self._reads is not None:
            self._reads.append(group.group)
        if isinstance(metric, str):
            found = getattr(group, metric)
        else:
            found = median_ci([metric(self.points[p]) for p in group.points
                               if p in self.points and self.points[p].ok])
        return GroupEstimate(**found.model_dump(), group=group.group)


def read_evidence(results: Path, name: str) -> CampaignEvidence | None:
    """The campaign `name` in the store `results`, or None when it has no stored point."""
    d = results / name
    if not (d / "campaign.json").is_file():
        return None
    campaign = read_campaign(d)
    if not campaign.points:
        return None
    return campaign_evidence(name, campaign, campaign.points)


def campaign_evidence(name: str, campaign: Campaign, points: list[StoredPoint]
                      ) -> CampaignEvidence:
    """The evidence of these points of the campaign (all of them, or some: a backtest)."""
    return CampaignEvidence(name=name, campaign=campaign,
                            groups=group_repetitions([stored_repetition(p) for p in points]),
                            points={p.id: p for p in points})


# ---------------------------------------------------------------- judging


def fmt_rate(v: float) -> str:
    return f"{v:,.0f}/s"


def fmt_seconds(v: float) -> str:
    return f"{v * 1000:.3g} ms" if v < 1 else f"{v:.3g} s"


def fmt_plain(v: float) -> str:
    return f"{v:.3g}"


def est(e: Estimate, fmt: Callable[[float], str]) -> str:
    """'1,234/s [1,100-1,300] (n=3)': the median, its interval and the repetitions."""
    if e.median is None:
        return "no data"
    return f"{estimate_text(e, fmt)} (n={e.n})"


def compare(a: Estimate, b: Estimate, a_name: str, b_name: str, *, higher: bool,
            fmt: Callable[[float], str], what: str) -> Finding:
    """The claim "a's `what` is higher (lower) than b's", judged by their intervals."""
    ours = f"{a_name} {est(a, fmt)}; {b_name} {est(b, fmt)}"
    if a.median is None or b.median is None:
        return Finding(status=INCONCLUSIVE, ours=ours, why=f"no {what} measured for "
                       f"{a_name if a.median is None else b_name}")
    word = "higher" if higher else "lower"
    as_claimed = a.median > b.median if higher else a.median < b.median
    if not (a.has_interval and b.has_interval):
        return Finding(status=INCONCLUSIVE, ours=ours, why=(
            f"fewer than 3 repetitions, no interval: the median {what} of {a_name} is "
            f"{'' if as_claimed else 'not '}{word}, which so few runs cannot confirm"))
    assert a.ci_low is not None and a.ci_high is not None
    assert b.ci_low is not None and b.ci_high is not None
    above, below = a.ci_low > b.ci_high, a.ci_high < b.ci_low
    if (above and higher) or (below and not higher):
        return Finding(status=REPRODUCED, ours=ours,
                       why=f"the intervals of {what} are apart, {a_name}'s {word}")
    if above or below:
        return Finding(status=NOT_REPRODUCED, ours=ours, why=(
            f"the intervals of {what} are apart the other way: {a_name}'s is "
            f"{'lower' if higher else 'higher'}"))
    text, n = _what_would_separate(a, b)
    return Finding(status=INCONCLUSIVE, ours=ours, repetitions=n, groups=_compared(a, b), why=(
        f"the intervals of {what} overlap (the medians point "
        f"{'the claimed way' if as_claimed else 'the other way'}){text}"))


def _what_would_separate(a: Estimate, b: Estimate) -> tuple[str, int | None]:
    """What two overlapping intervals need: about how many repetitions each for them to part
    if the medians hold (each interval ~1/sqrt(n) as wide), or that the medians are too
    close for any practical number (None)."""
    assert a.median is not None and b.median is not None
    assert a.ci_low is not None and a.ci_high is not None
    assert b.ci_low is not None and b.ci_high is not None
    gap = abs(a.median - b.median)
    scale = max(abs(a.median), abs(b.median))
    if gap <= 0.01 * scale:
        return "; the medians are within 1 %: no practical number of repetitions parts them", None
    n = repetitions_to_part(a, b, gap)
    if n > PRACTICAL_REPETITIONS:
        return (f"; the medians are too close for their spread: "
                f"{beyond_practical(each=True)} to part them"), n
    return f"; ~{n} repetitions each would part them if the medians hold", n


def verdict_is(group: Group | None, name: str, wanted: Sequence[str]) -> Finding:
    """The claim "`name` is <one of wanted>" about a group verdict."""
    if group is None:
        return Finding(status=INCONCLUSIVE, ours="no such group", why=f"{name} did not run")
    agree = ", ".join(f"{k} {v}" for k, v in group.agree.items() if v)
    ours = (f"{name}: {group.verdict} ({agree or 'no verdict'}; p99 "
            f"{est(group.p99_write_latency_s, fmt_seconds)})")
    reason = group.reasons[0] if group.reasons else group.verdict
    if group.verdict == "inconclusive":
        return Finding(status=INCONCLUSIVE, ours=ours,
                       why=f"{name}: {'; '.join(group.reasons[:2])}")
    if group.complete < 3:
        return Finding(status=INCONCLUSIVE, ours=ours, why=(
            f"{name}: {group.complete} repetition(s), the verdict is {group.verdict}, but "
            "one or two runs are no evidence either way"))
    status = REPRODUCED if group.verdict in wanted else NOT_REPRODUCED
    return Finding(status=status, ours=ours, why=f"{name}: {reason}")


def all_of(findings: Sequence[Finding]) -> Finding:
    """A claim made of parts: reproduced when every part is, not reproduced when any part is
    not, inconclusive otherwise."""
    statuses = {f.status for f in findings}
    if statuses == {REPRODUCED}:
        status: Status = REPRODUCED
    elif NOT_REPRODUCED in statuses:
        status = NOT_REPRODUCED
    else:
        status = INCONCLUSIVE
    whys = dict.fromkeys(f.why for f in findings)  # each reason once, in order
    # Inconclusive: more repetitions decide it only if they decide every open part.
    open_parts = [f for f in findings if f.status == INCONCLUSIVE]
    repetitions = None
    groups: list[str] = []
    if status == INCONCLUSIVE and all(f.repetitions is not None for f in open_parts):
        repetitions = max(f.repetitions or 0 for f in open_parts)
        groups = list(dict.fromkeys(g for f in open_parts for g in f.groups))
    return Finding(status=status, ours="; ".join(f.ours for f in findings),
                   why="; ".join(whys), repetitions=repetitions, groups=groups)


def margin_text(within: float) -> str:
    """'±20 %' for 1.2, 'a factor of 2' for 2."""
    return f"±{(within - 1) * 100:.0f} %" if within < 1.5 else f"a factor of {within:g}"


def _ratio_bounds(a: Estimate, b: Estimate, ours: str, what: str,
                  question: str) -> tuple[float, float] | Finding:
    """The plausible range of the ratio of a's and b's medians, a.low/b.high to a.high/b.low;
    or, when there is none (no interval, or one down to 0), the inconclusive finding that
    says why `question` ("within ±20 %") cannot be answered."""
    if not (a.has_interval and b.has_interval):
        return Finding(status=INCONCLUSIVE, ours=ours,
                       why=f"fewer than 3 repetitions, no interval of {what}")
    assert a.ci_low is not None and a.ci_high is not None
    assert b.ci_low is not None and b.ci_high is not None
    if min(a.ci_low, b.ci_low) <= 0:
        return Finding(status=INCONCLUSIVE, ours=ours, why=(
            f"an interval of {what} reaches 0: the ratio is unbounded, {question} or not"))
    return a.ci_low / b.ci_high, a.ci_high / b.ci_low


def similar(a: Estimate, b: Estimate, a_name: str, b_name: str, *,
            fmt: Callable[[float], str], what: str, within: float) -> Finding:
    """The claim "a's and b's `what` are about the same", as an equivalence: the ratio a/b
    within a factor `within` either way (1.2: ±20 %). The intervals bound the ratio of the
    medians between a.low/b.high and a.high/b.low: reproduced when that whole range is inside
    the margin, not reproduced when it is wholly outside, inconclusive when it straddles. (Not
    "the intervals overlap": wide intervals would then make any two groups similar, and more
    repetitions would part any two that differ at all.)"""
    ours = f"{a_name} {est(a, fmt)}; {b_name} {est(b, fmt)}"
    margin = margin_text(within)
    bounds = _ratio_bounds(a, b, ours, what, f"within {margin}")
    if isinstance(bounds, Finding):
        return bounds
    low, high = bounds
    span = f"{a_name}/{b_name} between {low:.2f} and {high:.2f}"
    if 1 / within <= low and high <= within:
        return Finding(status=REPRODUCED, ours=ours,
                       why=f"the {what} ratio {span}: within {margin}")
    if high < 1 / within or low > within:
        return Finding(status=NOT_REPRODUCED, ours=ours,
                       why=f"the {what} ratio {span}: they differ by more than {margin}")
    n = _repetitions_to_settle(a, b, within, low, high)
    return Finding(status=INCONCLUSIVE, ours=ours, repetitions=n, groups=_compared(a, b),
                   why=f"the {what} ratio {span}: within {margin} or not, the intervals "
                       f"cannot tell{_settling_text(n)}")


def _repetitions_to_settle(a: Estimate, b: Estimate, within: float, low: float,
                           high: float) -> int | None:
    """About how many repetitions each would bring the ratio a/b's range wholly inside or
    wholly outside the margin, if the medians hold."""
    assert a.median is not None and b.median is not None and b.median > 0 and a.median > 0
    return _settle(a, b, a.median / b.median, low, high, (within, 1 / within))


def _settle(a: Estimate, b: Estimate, ratio: float, low: float, high: float,
            edges: Sequence[float]) -> int | None:
    """About how many repetitions each would keep a ratio's range [low, high] (from a's and
    b's intervals) off every edge of a margin, if the medians' `ratio` holds: the range's
    spread around the ratio (in logs, widened to the judged confidence) shrinks as
    1/sqrt(n) until it no longer reaches the nearest edge. None when the ratio is within 1 %
    of an edge."""
    edge = min(abs(math.log(ratio / e)) for e in edges)
    if edge <= math.log(1.01):
        return None
    spread = max(math.log(high / ratio), math.log(ratio / low)) * widening(a, b)
    return repetitions_needed(min(a.n, b.n), spread, edge)


def much(a: Estimate, b: Estimate, a_name: str, b_name: str, *, higher: bool,
         fmt: Callable[[float], str], what: str, within: float) -> Finding:
    """The claim "a's `what` is *much* higher (lower) than b's": the ratio a/b (b/a) beyond
    the factor `within`, the margin inside which `similar` calls two alike. Reproduced when
    the ratio's whole plausible range (as in `similar`) lies beyond it; not reproduced when
    the whole range lies at or under it -- alike, or the other way; inconclusive when it
    straddles. (Not "the intervals are apart": two tight groups 5 % apart are apart, and
    "much" would then mean nothing.)"""
    ours = f"{a_name} {est(a, fmt)}; {b_name} {est(b, fmt)}"
    big, small, big_name, small_name = (a, b, a_name, b_name) if higher else (b, a, b_name,
                                                                             a_name)
    margin = margin_text(within)
    bounds = _ratio_bounds(big, small, ours, what, f"beyond {margin}")
    if isinstance(bounds, Finding):
        return bounds
    low, high = bounds
    assert big.median is not None and small.median is not None
    span = f"the {what} ratio {big_name}/{small_name} between {low:.2f} and {high:.2f}"
    if low > within:
        return Finding(status=REPRODUCED, ours=ours, why=f"{span}: beyond {margin}")
    if high <= within:
        return Finding(status=NOT_REPRODUCED, ours=ours, why=(
            f"{span}: not beyond {margin}, so not much {'higher' if higher else 'lower'}"))
    n = _settle(a, b, big.median / small.median, low, high, (within,))
    return Finding(status=INCONCLUSIVE, ours=ours, repetitions=n, groups=_compared(a, b),
                   why=f"{span}: beyond {margin} or not, the intervals cannot tell"
                       f"{_settling_text(n)}")


def _settling_text(n: int | None) -> str:
    """What a ratio's range that straddles a margin's edge would need (`_settle`'s n)."""
    if n is None:
        return "; the medians' ratio sits on the margin: no practical number of repetitions " \
               "settles it"
    if n > PRACTICAL_REPETITIONS:
        return ("; the ratio is too close to the margin for its spread: "
                f"{beyond_practical(each=True)} to settle it")
    return f"; ~{n} repetitions each would settle it if the medians hold"
