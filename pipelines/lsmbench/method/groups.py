"""Repetitions are one result: a point's repetitions (same matrix values, ``rep=0..N-1``) form
a *group*, judged once.

Per group: the median of each figure with its order-statistic confidence interval
(:func:`lsmbench.method.stats.median_ci`), and one verdict, ``sustainable``, ``not-sustainable`` or
``inconclusive``, by this rule (docs/explanation/repetitions.md):

* a repetition that failed (no result) is not evidence either way: it is counted apart and
  named in the reasons;
* **sustainable** when every judged repetition is sustainable. Being sustainable is the claim
  that needs proof, so one unsustainable run out of ten is enough to doubt it. (Every
  repetition's p99 is then under the bound, so the p99 interval, which lies within min..max,
  is too.) With one or two repetitions there is no interval and the reasons say so;
* **not-sustainable** when every judged repetition is not, or when an interval lies wholly
  beyond its bound -- the p99's lower end above the p99 bound, or the final backlog's lower
  end at or above ``max_backlog``: most runs fail it, whatever a lucky one did;
* **inconclusive** otherwise: the repetitions disagree and the intervals straddle the bounds.

``agree`` counts the judged repetitions per per-repetition verdict
(``{"sustainable": 2, "not-sustainable": 1}``, with ``"inconclusive"`` when there are any);
:func:`agreement_text` says it for people, inconclusive ones included.

The figures come from point.json (the headline verdict) and, for records written before the
verdict carried p50/p99.9 and stalls, from the headline running phase's summary.json.

A group whose points searched the maximum sustainable rate (``phases.running.search``) also
gets :class:`GroupSearch`: the median answer with its interval, and the lowest answer of any
repetition -- the rate every repetition sustained, the one to promise.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..points import group_id
from ..store import STATE_COMPLETE, PointRecord
from ..util.units import parse_size
from ..util.values import dig as _get
from ..util.values import number as _num
from ..util.wording import natural_key, plural
from .metrics import stall_time
from .stats import Estimate, half_width_at, median_ci
from .verdict import (
    INCONCLUSIVE,
    NEEDED_MARK,
    NOT_SUSTAINABLE,
    SUSTAINABLE,
    inconclusive_cause,
    not_computed,
    verdict_word,
    window_needed,
)

GroupVerdict = Literal["sustainable", "not-sustainable", "inconclusive"]
# inconclusive: a criterion was not computed, or the run's window saw too few merges into the
# deepest level (verdict.judge).
RepVerdict = Literal["sustainable", "not-sustainable", "inconclusive"]

# The figures aggregated per group, in the order the tables show them.
FIGURES: tuple[str, ...] = (
    "max_write_throughput", "p50_write_latency_s", "p99_write_latency_s",
    "p999_write_latency_s", "stall_count", "stall_s", "final_backlog_s",
)


class Repetition(BaseModel):
    """One repetition (one stored point) as the group sees it; None where the store has no
    number."""

    point: str
    group: str
    rep: int | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    state: str
    error: str | None = None
    published: bool | None = None
    sustainable: bool | None = None  # the point's own (headline) verdict
    verdict: RepVerdict | None = None
    failed_criteria: list[str] = Field(default_factory=list)
    # criteria that could not be computed (verdict.not_computed): a run judged since that
    # rule is inconclusive with any; an older record may say sustainable with them
    not_computed: list[str] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    utilization: float | None = None
    p99_limit_s: float | None = None
    max_backlog_s: float | None = None
    max_write_throughput: float | None = None  # writes/s, testing phase
    # What max_write_throughput and the latencies count: "requests" for a mix without writes
    # (method/requests.py), else "writes".
    unit: str = "writes"
    # phases.testing.steady: whether the maximum attained steady state (None: fixed length)
    steady: bool | None = None
    p50_write_latency_s: float | None = None  # running phase, from intended arrival
    p99_write_latency_s: float | None = None
    p999_write_latency_s: float | None = None
    stall_count: float | None = None  # the engine's stalls in the running window
    stall_s: float | None = None  # metrics.stall_time: seconds stalled in the running window
    final_backlog_s: float | None = None  # final queue in seconds of arrivals
    # phases.running.search: the point searched; its answer (None: not even low, or no search)
    searched: bool = False
    max_sustainable_utilization: float | None = None
    max_sustainable_rate: float | None = None  # writes/s


class GroupSearch(BaseModel):
    """The maximum sustainable rate over a group's complete repetitions that searched it."""

    runs: int
    none: int  # of them, those where not even the search's low was sustainable
    utilization: Estimate  # over the repetitions that found one
    rate: Estimate  # writes/s
    # The lowest answer of any repetition (each its own minimum): every repetition sustained
    # it. None when a repetition found none.
    lowest_utilization: float | None
    lowest_rate: float | None
    reason: str


class Group(BaseModel):
    """A point's repetitions, judged as one."""

    group: str
    params: dict[str, Any] = Field(default_factory=dict)
    repetitions: int  # stored repetitions, failed ones included
    complete: int
    failed: int
    verdict: GroupVerdict
    agree: dict[str, int]  # judged repetitions per per-repetition verdict
    reasons: list[str]
    max_write_throughput: Estimate
    unit: str = "writes"  # what the maximum and the latencies count (Repetition.unit)
    p50_write_latency_s: Estimate
    p99_write_latency_s: Estimate
    p999_write_latency_s: Estimate
    stall_count: Estimate
    stall_s: Estimate
    final_backlog_s: Estimate
    points: list[str]  # the repetitions' point ids, in rep order
    search: GroupSearch | None = None  # phases.running.search


# ---------------------------------------------------------------- one repetition


def _us_to_s(v: Any) -> float | None:
    f = _num(v)
    return f / 1e6 if f is not None else None


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def error_text(record: dict[str, Any]) -> str | None:
    err = record.get("error")
    if isinstance(err, dict):
        stage = err.get("stage")
        msg = str(err.get("message") or "")
        return f"{stage}: {msg}" if stage else msg
    return str(err) if err else None


def point_group(point_id: str, record: dict[str, Any]) -> str:
    """The group of a stored point: its matrix values without rep; a point stored without
    params and rep (hand-made, or older than repetitions) is a group of its own."""
    params, rep = record.get("params"), record.get("rep")
    if isinstance(params, dict) and isinstance(rep, int) and not isinstance(rep, bool):
        return group_id(params)
    return point_id


def _rep_verdict(v: dict[str, Any], sustainable: bool | None, state: str) -> RepVerdict | None:
    if sustainable is None or state != STATE_COMPLETE:
        return None
    # verdict_word's words are RepVerdict's; pydantic checks them again.
    return verdict_word(v)  # type: ignore[return-value]


def make_repetition(point_id: str, record: dict[str, Any],
                    running_summary: dict[str, Any] | None) -> Repetition:
    """A repetition from point.json and the summary.json of its headline running phase.

    The headline verdict's own figures come first (verdicts since lsmbench.verdict/2 carry
    p50, p99.9 and the final backlog); the summary fills in for older records. The stall time
    is the summary's (lsmbench.method.metrics.stall_time), as the verdict computes it."""
    v = record.get("verdict") if isinstance(record.get("verdict"), dict) else {}
    s = running_summary or {}
    sustainable = v.get("sustainable") if isinstance(v.get("sustainable"), bool) else None
    state = str(record.get("state") or "unknown")
    arrival = _num(v.get("arrival_rate"))
    final_q = _num(v.get("final_queue_length"))
    old_backlog = final_q / arrival if final_q is not None and arrival else None
    stall = stall_time(s)
    rep = record.get("rep")
    search = record.get("search") if isinstance(record.get("search"), dict) else None
    return Repetition(
        point=point_id,
        group=point_group(point_id, record),
        rep=rep if isinstance(rep, int) and not isinstance(rep, bool) else None,
        params=record.get("params") if isinstance(record.get("params"), dict) else {},
        state=state,
        error=error_text(record),
        published=record.get("published") if isinstance(record.get("published"), bool)
        else None,
        sustainable=sustainable,
        verdict=_rep_verdict(v, sustainable, state),
        failed_criteria=[str(c) for c in v.get("failed") or []],
        not_computed=not_computed(c for c in v.get("criteria") or [] if isinstance(c, dict)),
        reasons=[str(r) for r in v.get("reasons") or []],
        utilization=_num(v.get("utilization")),
        p99_limit_s=_num(v.get("p99_limit_s")),
        max_backlog_s=_num(v.get("max_backlog_s")),
        max_write_throughput=_num(_get(record, "max_throughput", "writes_per_s")),
        unit=str(_get(record, "max_throughput", "unit") or "writes"),
        steady=_steady(record),
        p50_write_latency_s=_first(_num(v.get("p50_write_latency_s")),
                                   _us_to_s(_get(s, "write_latency_us", "p50"))),
        p99_write_latency_s=_first(_num(v.get("p99_write_latency_s")),
                                   _us_to_s(_get(s, "write_latency_us", "p99"))),
        p999_write_latency_s=_first(_num(v.get("p999_write_latency_s")),
                                    _us_to_s(_get(s, "write_latency_us", "p999"))),
        stall_count=stall.count if stall is not None else None,
        stall_s=stall.seconds if stall is not None else None,
        final_backlog_s=_first(_num(v.get("final_backlog_s")), old_backlog),
        searched=search is not None,
        max_sustainable_utilization=_num((search or {}).get("utilization")),
        max_sustainable_rate=_num((search or {}).get("rate")),
    )


def _steady(record: dict[str, Any]) -> bool | None:
    attained = _get(record, "max_throughput", "steady", "attained")
    return attained if isinstance(attained, bool) else None


def headline_phase(record: dict[str, Any]) -> str:
    """The directory of the running phase the point's verdict refers to."""
    phase = _get(record, "verdict", "phase")
    return phase if isinstance(phase, str) and phase and "/" not in phase else "running"


def repetition_from_store(rec: PointRecord) -> Repetition:
    summary = None
    if rec.state == STATE_COMPLETE:
        try:
            loaded = json.loads((Path(rec.path) / headline_phase(rec.data) /
                                 "summary.json").read_text())
            summary = loaded if isinstance(loaded, dict) else None
        except (OSError, ValueError):
            summary = None
    return make_repetition(rec.point_id, rec.data, summary)


# ---------------------------------------------------------------- a group


def _fmt_s(v: float) -> str:
    return f"{v * 1000:.3g} ms" if v < 1 else f"{v:.3g} s"


DASH = "\u2013"


def interval_text(e: Estimate, fmt: Any = _fmt_s) -> str:
    """'0.4 s..1.2 s' (an en dash between), with the confidence when under 95 %; or why there
    is no interval."""
    if not e.has_interval:
        return f"no interval ({plural(e.n, 'run')})"
    conf = "" if e.confidence is None or e.confidence >= 0.95 else f" ({e.confidence:.0%})"
    return f"{fmt(e.ci_low)}{DASH}{fmt(e.ci_high)}{conf}"


def _bound_reasons(p99: Estimate, p99_limit: float | None, backlog: Estimate,
                   max_backlog: float | None) -> tuple[list[str], list[str]]:
    """(reasons for not-sustainable: intervals wholly beyond their bound, reasons that an
    interval straddles or is under its bound)."""
    beyond, other = [], []
    checks = [("p99", p99, p99_limit, False), ("final backlog", backlog, max_backlog, True)]
    for name, e, bound, inclusive in checks:
        if bound is None or not e.has_interval:
            continue
        assert e.ci_low is not None and e.ci_high is not None
        span = f"{name} CI {interval_text(e)}"
        over_low = e.ci_low >= bound if inclusive else e.ci_low > bound
        over_high = e.ci_high >= bound if inclusive else e.ci_high > bound
        if over_low:
            beyond.append(f"{span} is wholly above the {_fmt_s(bound)} bound")
        elif over_high:
            other.append(f"{span} straddles the {_fmt_s(bound)} bound"
                         + _what_would_decide(e, bound, name == "p99"))
        elif name == "p99":
            other.append(f"{span} is under the {_fmt_s(bound)} bound")
    return beyond, other


def _what_would_decide(e: Estimate, bound: float, is_time: bool) -> str:
    """What an interval straddling its bound needs: about how many repetitions for an interval
    (width ~ 1/sqrt(n)) to clear the bound from the median -- or longer windows, as far as they
    narrow the repetitions' spread -- or, when the median sits on the bound, that nothing
    practical will."""
    assert e.median is not None and e.ci_low is not None and e.ci_high is not None
    distance = abs(e.median - bound)
    shown = _fmt_s(e.median) if is_time else f"{e.median:.3g}"
    if distance <= 0.01 * bound:
        return (f": the median {shown} is within 1 % of it, so no practical number of "
                "repetitions decides it; the group sits at the bound")
    n = repetitions_needed(e.n, half_width_at(e), distance)
    if n > PRACTICAL_REPETITIONS:
        return (f": the median {shown} is {distance / bound:.0%} from it, too close for its "
                f"spread: {beyond_practical()}, so no practical number decides it; the "
                "group sits at the bound")
    return (f": the median {shown} is {distance / bound:.0%} from it; "
            f"~{n} repetitions would decide it "
            "(an interval ~1/sqrt(n) as wide), or longer windows as far as they narrow the "
            "repetitions' spread")


# Beyond this many repetitions of a group, an estimate of "~N repetitions would decide it" is
# not advice anyone would follow (a full-variant point takes minutes): the text says no
# practical number decides it instead.
PRACTICAL_REPETITIONS = 100


def beyond_practical(*, each: bool = False) -> str:
    """The words for an estimate past PRACTICAL_REPETITIONS (the callers add what for)."""
    return (f"more than {PRACTICAL_REPETITIONS} repetitions{' each' if each else ''} "
            "would be needed")


def repetitions_needed(n: int, half_width: float, distance: float) -> int:
    """About how many repetitions make an interval of this half-width at n repetitions
    narrower than distance, its width shrinking as 1/sqrt(n). (The half-width at the
    confidence the answer is judged at: stats.half_width_at.)"""
    return max(n + 1, math.ceil(n * (half_width / distance) ** 2))


def repetitions_to_part(a: Estimate, b: Estimate, distance: float) -> int:
    """About how many repetitions each make two intervals (each at its own n, each ~1/sqrt(n)
    as wide, at the judged confidence) together narrower than `distance`: the smallest m with
    (h_a sqrt(n_a) + h_b sqrt(n_b)) / sqrt(m) <= distance."""
    spread = half_width_at(a) * math.sqrt(a.n) + half_width_at(b) * math.sqrt(b.n)
    return max(min(a.n, b.n) + 1, math.ceil((spread / distance) ** 2))


def judge_group(reps: Sequence[Repetition]) -> tuple[GroupVerdict, dict[str, int], list[str]]:
    """The group verdict, the count per per-repetition verdict, and the reasons."""
    judged = [r for r in reps if r.verdict is not None]
    failed = [r for r in reps if r.state != STATE_COMPLETE]
    counts = Counter(r.verdict for r in judged)
    agree = {SUSTAINABLE: counts[SUSTAINABLE], NOT_SUSTAINABLE: counts[NOT_SUSTAINABLE]}
    if counts[INCONCLUSIVE]:
        agree[INCONCLUSIVE] = counts[INCONCLUSIVE]
    reasons: list[str] = []
    for r in failed:
        reasons.append(f"{r.point} failed, not counted: {r.error or '(no error recorded)'}")
    unjudged = len(reps) - len(judged) - len(failed)
    if unjudged:
        reasons.append(f"{plural(unjudged, 'complete repetition')} without a verdict")
    n = len(judged)
    if n == 0:
        return INCONCLUSIVE, agree, ["no repetition has a verdict", *reasons]
    s = agree[SUSTAINABLE]
    p99 = median_ci([r.p99_write_latency_s for r in judged])
    backlog = median_ci([r.final_backlog_s for r in judged])
    p99_limit = next((r.p99_limit_s for r in judged if r.p99_limit_s is not None), None)
    max_backlog = next((r.max_backlog_s for r in judged if r.max_backlog_s is not None), None)
    beyond, other = _bound_reasons(p99, p99_limit, backlog, max_backlog)
    few = [] if n >= 3 else [f"{plural(n, 'run')}: too few for an interval, the "
                             "verdict rests on " + ("one repetition" if n == 1 else
                                                    "two repetitions")]
    criteria = Counter(c for r in judged for c in r.failed_criteria)
    failing = ([f"failed criteria: {', '.join(f'{c} ({k} of {n})' for c, k in criteria.items())}"]
               if criteria else [])
    if s == n:
        word = "the repetition is" if n == 1 else f"all {n} repetitions are"
        return SUSTAINABLE, agree, [f"{word} sustainable", *other, *few, *reasons]
    unsure = agree.get(INCONCLUSIVE, 0)
    short = ([f"{unsure} of {plural(n, 'repetition')} inconclusive: "
              + _inconclusive_causes([r for r in judged if r.verdict == INCONCLUSIVE])]
             if unsure else [])
    if s == 0 and unsure == 0:
        word = "the repetition is" if n == 1 else f"all {n} repetitions are"
        return NOT_SUSTAINABLE, agree, [f"{word} not sustainable", *failing, *beyond, *few,
                                        *reasons]
    split = f"{s} of {plural(n, 'repetition')} sustainable"
    if beyond:
        return NOT_SUSTAINABLE, agree, [*beyond, split, *short, *failing, *reasons]
    return INCONCLUSIVE, agree, [split, *short, *other, *failing, *reasons]


def _inconclusive_causes(reps: Sequence[Repetition]) -> str:
    """The causes of the inconclusive repetitions, each once, in the order they come, and
    the longest running phase any of them said it would need."""
    causes = " / ".join(dict.fromkeys(inconclusive_cause(r.reasons) for r in reps))
    needs = [n for n in (window_needed(r.reasons) for r in reps) if n is not None]
    if not needs:
        return causes
    return f"{causes} ({NEEDED_MARK}{max(needs)[1]})"


def agreement_text(agree: dict[str, int], none: str = "-") -> str:
    """The per-repetition verdicts of a group in the verdicts' own words, inconclusive ones
    counted, out of every judged repetition: '1 sustainable, 2 inconclusive of 3', '3
    not-sustainable of 3' (a verdict no repetition had is left out); ``none`` when no
    repetition has one."""
    counts = [(agree.get(word, 0), word) for word in (SUSTAINABLE, NOT_SUSTAINABLE, INCONCLUSIVE)]
    total = sum(k for k, _ in counts)
    if not total:
        return none
    return ", ".join(f"{k} {word}" for k, word in counts if k) + f" of {total}"


def rate_text(rate: float | None, utilization: float | None) -> str:
    """'1,832 writes/s (0.78 x max)'; the parts known."""
    u = f"{utilization:.3g} x max" if utilization is not None else "?"
    return f"{rate:,.0f} writes/s ({u})" if rate is not None else u


def group_search(reps: Sequence[Repetition]) -> GroupSearch | None:
    """The maximum sustainable rate of the complete repetitions that searched it (None: none
    searched)."""
    searched = [r for r in reps if r.state == STATE_COMPLETE and r.searched]
    if not searched:
        return None
    found = [r for r in searched if r.max_sustainable_utilization is not None]
    none = len(searched) - len(found)
    us = [r.max_sustainable_utilization for r in found]
    rates = [r.max_sustainable_rate for r in found]
    low_u = min(u for u in us if u is not None) if found and not none else None
    low_rate = (min((x for x in rates if x is not None), default=None)
                if found and not none else None)
    n = len(searched)
    if not found:
        reason = (f"maximum sustainable rate: none, not even the search's low was sustainable "
                  f"({'the repetition' if n == 1 else f'all {n} repetitions'})")
    elif n == 1:
        reason = f"maximum sustainable rate: {rate_text(low_rate, low_u)}"
    else:
        est_u, est_r = median_ci(us), median_ci(rates)
        reason = (f"maximum sustainable rate: median {est_r.median or 0:,.0f} writes/s, median "
                  f"utilization {est_u.median or 0:.3g} x max, over "
                  f"{plural(len(found), 'repetition')}")
        reason += (f"; each sustained at least {rate_text(low_rate, low_u)}" if not none else
                   f"; {none} of {n} found none (not even the search's low was sustainable)")
    return GroupSearch(runs=n, none=none, utilization=median_ci(us), rate=median_ci(rates),
                       lowest_utilization=low_u, lowest_rate=low_rate, reason=reason)


def make_group(reps: Sequence[Repetition]) -> Group:
    reps = sorted(reps, key=lambda r: (r.rep if r.rep is not None else 1 << 30, r.point))
    verdict, agree, reasons = judge_group(reps)
    judged = [r for r in reps if r.state == STATE_COMPLETE]
    estimates = {name: median_ci([getattr(r, name) for r in judged]) for name in FIGURES}
    search = group_search(reps)
    if search is not None:
        reasons = [search.reason, *reasons]
    if reps[0].unit != "writes":
        reasons.append(f"a mix without writes: its maximum, latencies and stalls count "
                       f"{reps[0].unit}")
    unsteady = [r for r in judged if r.steady is False]
    if unsteady:
        reasons.append(f"the testing maximum did not attain steady state in {len(unsteady)} of "
                       f"{plural(len(judged), 'repetition')}: it is the rate of the last rounds")
    return Group(
        group=reps[0].group,
        params=reps[0].params,
        unit=reps[0].unit,
        repetitions=len(reps),
        complete=len(judged),
        failed=sum(1 for r in reps if r.state != STATE_COMPLETE),
        verdict=verdict,
        agree=agree,
        reasons=reasons,
        points=[r.point for r in reps],
        search=search,
        **estimates,
    )


def _number(v: Any) -> float | None:
    """A matrix value as a number: numbers, numeric text, sizes ('4M': its bytes); else None."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        for read in (float, parse_size):
            try:
                return float(read(v))
            except ValueError:
                pass
    return None


def group_id_key(group: str) -> tuple[Any, ...]:
    """The order of groups known by their ids alone ('policy=tiering,size_ratio=10', as the
    history keeps them): value by value, numbers by value (sizes by their bytes) before text,
    text with its digits by value -- group_repetitions' order, but for text values, whose
    matrix order an id does not hold."""
    out = []
    for part in group.split(","):
        k, _, v = part.partition("=")
        n = _number(v)
        out.append((k, (0, n, ()) if n is not None else (1, 0.0, natural_key(v))))
    return tuple(out)


def group_repetitions(reps: Iterable[Repetition]) -> list[Group]:
    """Groups in the order of their matrix values, dimension by dimension: numbers by value
    ('size_ratio=4' before 'size_ratio=10', sizes by their bytes), any other value where it
    first comes (the matrix's order when the repetitions come in the plan's order, as ls and
    the report read them); groups without matrix values in the order they first come."""
    by_group: dict[str, list[Repetition]] = {}
    first: dict[tuple[str, str], int] = {}
    for r in reps:
        by_group.setdefault(r.group, []).append(r)
        for k, v in r.params.items():
            first.setdefault((k, repr(v)), len(first))
    groups = [make_group(rs) for rs in by_group.values()]

    def key(g: Group) -> tuple[Any, ...]:
        out = []
        for k, v in g.params.items():
            n = _number(v)
            out.append((k, (0, n, 0) if n is not None else (1, 0.0, first[(k, repr(v))])))
        return tuple(out)

    return sorted(groups, key=key)


# ---------------------------------------------------------------- a campaign's groups, complete


class GroupCompletion(BaseModel):
    """Whether a group of a finished campaign has every repetition its plan runs for it: the
    first ``min`` ones, and then more only while it is undecided (``matrix.repetitions
    {min, max}``). A planned repetition a decided group did not run is not missing: it was
    not needed."""

    group: str
    planned: int  # repetitions planned for it (max)
    stored: int  # repetitions stored, failed ones included
    complete: bool  # nothing more would run for it (`lsmbench run --resume` runs none)
    why: str  # 'decided', 'at its max', or what is missing


def campaign_completion(planned: Sequence[dict[str, Any]], reps: Sequence[Repetition],
                        matrix: dict[str, Any]) -> list[GroupCompletion]:
    """Per group of the plan (``planned``: campaign.json's plan points, each with ``params``
    and ``rep``), in the plan's order, whether the stored repetitions ``reps`` complete it:
    all of its first ``min`` repetitions stored, and then at its max, decided
    (adaptive.group_undecided), undecided where no repetition at the same caps decides it
    (adaptive.repetitions_help), or, with ``matrix.repetitions.groups``, not listed there --
    exactly the groups a run adds nothing more to."""
    from ..spec.checks import repetition_groups, repetition_range
    from .adaptive import group_undecided, repetitions_help

    try:
        rep_min = repetition_range(matrix if isinstance(matrix, dict) else {})[0]
        listed = repetition_groups(matrix if isinstance(matrix, dict) else {})
    except (AttributeError, KeyError, TypeError, ValueError):  # too old or odd: all of it
        rep_min, listed = 1 << 30, None
    plan: dict[str, list[int]] = {}
    for p in planned if isinstance(planned, list) else []:
        if not isinstance(p, dict):
            continue
        params, rep = p.get("params"), p.get("rep")
        if isinstance(params, dict) and isinstance(rep, int):
            plan.setdefault(group_id(params), []).append(rep)
    stored: dict[str, list[Repetition]] = {}
    for r in reps:
        stored.setdefault(r.group, []).append(r)
    out = []
    for g, planned_reps in plan.items():
        mine = stored.get(g, [])
        have = {r.rep for r in mine}
        first = [k for k in planned_reps if k < rep_min]
        missing = [k for k in first if k not in have]
        n, most = len(mine), len(planned_reps)
        counted = f"{n} of {plural(most, 'planned repetition')} stored"
        if missing:
            done, why = False, (f"{counted}: repetition{'' if len(missing) == 1 else 's'} "
                                f"{', '.join(str(k + 1) for k in missing)} of the first "
                                f"{len(first)} missing")
        elif n >= most:
            done, why = True, "at its max"
        elif listed is not None:
            done = g not in listed
            why = "decided" if done else (f"{counted}: listed in matrix.repetitions.groups, "
                                          "it runs them all")
        else:
            group = make_group(mine)
            undecided = group_undecided(group)
            if undecided is None:
                done, why = True, "decided"
            elif not repetitions_help(group):
                done, why = True, "undecided, and only a longer running cap decides it"
            else:
                done, why = False, f"{counted}, undecided: {undecided}"
        out.append(GroupCompletion(group=g, planned=most, stored=n, complete=done, why=why))
    return out
