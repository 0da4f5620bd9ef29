"""The maximum sustainable rate: a search over the running phase's utilization.

``phases.running.search: {low, high, tolerance, max_steps}`` replaces the fixed utilization
(95 % of the testing maximum) with a search for the highest utilization, between ``low`` and
``high``, whose running phase is judged sustainable (:func:`lsmbench.method.verdict.judge`). Every
step is one running phase from the same loaded tree; the pipeline
(:mod:`lsmbench.point_pipeline`) supplies the step runner, the tests a fake one.

The search (:class:`RateSearch`, ask/tell; :func:`run_search` drives it):

1. ``high`` first: when it is sustainable, that is the answer after one step (the common case
   the fixed 95 % running phase covers; no bisection can do better), and the bracket is open
   above (the maximum sustainable rate is at least that);
2. then bisection of the bracket [highest sustainable so far (``low`` while none),
   lowest not sustainable so far], a midpoint per step, rounded to 4 decimals;
3. while nothing was sustainable, the last step the budget allows -- or the step after the
   bracket has shrunk to within ``tolerance`` of ``low`` -- tests ``low`` itself, so that
   "none" is only said of a rate that was run: "not even ``low`` is sustainable";
4. it stops when ``high`` is sustainable, ``low`` is not, the bracket is at most ``tolerance``
   wide, or after ``max_steps`` steps.

An **inconclusive** step (a criterion not computed, or the window saw no merge into the deepest
level) counts as not sustainable: the answer must be a rate that was seen sustained, and the
bracket's upper end says which verdict bounds it. Each step tests a utilization strictly inside
the current bracket, so the steps never contradict each other: every sustainable step lies
below every other one. With noise near the threshold (a verdict that flips from run to run) the
search still ends within ``max_steps``, with a bracket whose upper end was seen unsustainable
(or inconclusive) and whose lower end was seen sustainable; repetitions (lsmbench.method.groups)
judge how far that holds.

From ``low=0.5, high=1, tolerance=0.02`` it needs at most 7 steps: 1 at ``high``, 5 halvings of
0.5 down to 0.016, 1 at ``low`` when none of them was sustainable.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..spec.models import RateSearchSpec as SearchSpec
from .verdict import INCONCLUSIVE, NOT_SUSTAINABLE, SUSTAINABLE, Verdict, not_computed

SEARCH_SCHEMA = "lsmbench.search/1"
DIGITS = 4  # step utilizations are rounded to this many decimals (directory names)

VerdictWord = Literal["sustainable", "not-sustainable", "inconclusive"]
Stopped = Literal["high-sustainable", "low-not-sustainable", "tolerance", "max-steps"]


class StepVerdict(BaseModel):
    """What one running phase tells the search."""

    verdict: VerdictWord
    failed: list[str] = Field(default_factory=list)  # names of the failed criteria
    reason: str = ""
    phase: str | None = None  # its directory (running@U)

    @property
    def sustainable(self) -> bool:
        return self.verdict == SUSTAINABLE

    @classmethod
    def of(cls, v: Verdict, phase: str | None = None) -> StepVerdict:
        """From a running phase's verdict: the reason is that of every criterion that did
        not hold (the window coverage of an inconclusive run included) or that could not be
        computed (which makes a run inconclusive too)."""
        word = v.verdict or (SUSTAINABLE if v.sustainable else NOT_SUSTAINABLE)
        missing = not_computed(v.criteria)
        bad = [c.reason for c in v.criteria if c.ok is False or c.name in missing]
        return cls.model_validate({"verdict": word, "failed": list(v.failed), "phase": phase,
                                   "reason": "; ".join(bad) or "every criterion held"})


class SearchStep(StepVerdict):
    step: int  # 1-based
    utilization: float
    rate: float | None = None  # writes/s offered: utilization x the testing maximum


class Bracket(BaseModel):
    """[highest utilization judged sustainable, lowest one not]: the maximum sustainable
    utilization lies between. None at an end the search never found (nothing sustainable;
    high sustainable)."""

    sustainable: float | None
    unsustainable: float | None
    unsustainable_verdict: VerdictWord | None = None  # not-sustainable, or inconclusive
    width: float | None = None


class SearchResult(BaseModel):
    """The search's answer and every step (point.json ``search``)."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=SEARCH_SCHEMA, alias="schema")
    low: float
    high: float
    tolerance: float
    max_steps: int
    max_throughput: float | None  # writes/s, the testing phase's maximum the rates refer to
    utilization: float | None  # the highest utilization judged sustainable; None: none was
    rate: float | None  # its offered rate, writes/s
    ratio_to_max: float | None  # rate / the testing maximum (= utilization)
    bracket: Bracket
    stopped: Stopped
    converged: bool  # the answer is decided: high sustainable, low not, or within tolerance
    summary: str
    steps: list[SearchStep]

    def to_json(self) -> dict[str, object]:
        return self.model_dump(by_alias=True)

    @property
    def headline_step(self) -> SearchStep:
        """The step the point's verdict is: the highest sustainable one, else the last."""
        best = [s for s in self.steps if s.sustainable]
        return max(best, key=lambda s: s.utilization) if best else self.steps[-1]


class RateSearch:
    """The search as ask/tell: :meth:`next_utilization` (None: done), then :meth:`tell`."""

    def __init__(self, spec: SearchSpec, max_throughput: float | None = None) -> None:
        self.spec = spec
        self.max_throughput = max_throughput
        self.steps: list[SearchStep] = []

    # -- the bracket ------------------------------------------------------------------------

    @property
    def best(self) -> SearchStep | None:
        """The highest sustainable step."""
        ok = [s for s in self.steps if s.sustainable]
        return max(ok, key=lambda s: s.utilization) if ok else None

    @property
    def worst(self) -> SearchStep | None:
        """The lowest step not judged sustainable (inconclusive included)."""
        bad = [s for s in self.steps if not s.sustainable]
        return min(bad, key=lambda s: s.utilization) if bad else None

    def stopped(self) -> Stopped | None:
        best, worst, sp = self.best, self.worst, self.spec
        if best is not None and best.utilization >= sp.high:
            return "high-sustainable"
        if worst is not None and worst.utilization <= sp.low:
            return "low-not-sustainable"
        if best is not None and worst is not None and _width(best, worst) <= sp.tolerance:
            return "tolerance"
        if len(self.steps) >= sp.max_steps:
            return "max-steps"
        return None

    # -- ask / tell -------------------------------------------------------------------------

    def next_utilization(self) -> float | None:
        if self.stopped() is not None:
            return None
        sp = self.spec
        if not self.steps:
            return sp.high
        best, worst = self.best, self.worst
        assert worst is not None  # else high was sustainable: stopped
        if best is None and (len(self.steps) == sp.max_steps - 1
                             or worst.utilization - sp.low <= sp.tolerance):
            return sp.low
        lo = best.utilization if best is not None else sp.low
        return round((lo + worst.utilization) / 2, DIGITS)

    def tell(self, utilization: float, outcome: StepVerdict) -> SearchStep:
        rate = (round(utilization * self.max_throughput, 3)
                if self.max_throughput is not None else None)
        step = SearchStep(step=len(self.steps) + 1, utilization=utilization, rate=rate,
                          **outcome.model_dump())
        self.steps.append(step)
        return step

    # -- the answer -------------------------------------------------------------------------

    def result(self) -> SearchResult:
        if not self.steps:
            raise ValueError("the search has not run a step")
        sp, best, worst = self.spec, self.best, self.worst
        stopped = self.stopped() or "max-steps"
        u = best.utilization if best is not None else None
        bracket = Bracket(
            sustainable=u,
            unsustainable=worst.utilization if worst is not None else None,
            unsustainable_verdict=worst.verdict if worst is not None else None,
            width=_width(best, worst) if best is not None and worst is not None else None)
        mt = self.max_throughput
        return SearchResult(
            low=sp.low, high=sp.high, tolerance=sp.tolerance, max_steps=sp.max_steps,
            max_throughput=mt, utilization=u, rate=best.rate if best is not None else None,
            ratio_to_max=u, bracket=bracket, stopped=stopped,
            converged=stopped != "max-steps", summary=self._summary(stopped),
            steps=list(self.steps))

    def _summary(self, stopped: Stopped) -> str:
        sp, best, worst = self.spec, self.best, self.worst
        n = len(self.steps)
        after = f"after {n} step{'s' if n != 1 else ''}"
        if best is None:
            assert worst is not None
            how = ("inconclusive, counted as not sustainable" if worst.verdict == INCONCLUSIVE
                   else worst.verdict)
            return f"not even low, {_at(worst)}, was judged sustainable ({how}), {after}"
        answer = f"maximum sustainable utilization {_at(best)}"
        if worst is None:
            return (f"{answer}: high is sustainable, {after}; the maximum may lie above it "
                    f"(raise phases.running.search.high to look further)")
        upper = f"{worst.utilization:g} is {worst.verdict}"
        if worst.verdict == INCONCLUSIVE:
            upper += " (counted as not sustainable)"
        width = _width(best, worst)
        if stopped == "tolerance":
            return (f"{answer}; {upper}: bracket {width:.3g} wide <= tolerance "
                    f"{sp.tolerance:g}, {after}")
        return (f"{answer}; {upper}: bracket {width:.3g} wide, still over tolerance "
                f"{sp.tolerance:g}, {after} (max_steps): the maximum lies in the bracket")


def steps_needed(spec: SearchSpec) -> int:
    """The most steps the search can take to decide within its tolerance: high, the halvings
    of high - low down to the tolerance, and low when none of them was sustainable."""
    width = spec.high - spec.low
    halvings = math.ceil(math.log2(width / spec.tolerance) - 1e-9) if width > spec.tolerance else 0
    return 2 + halvings


def run_search(spec: SearchSpec, run_step: Callable[[float], StepVerdict],
               max_throughput: float | None = None) -> SearchResult:
    """Runs the search: run_step(u) runs the running phase at utilization u (from the loaded
    tree) and returns its verdict."""
    search = RateSearch(spec, max_throughput)
    while (u := search.next_utilization()) is not None:
        search.tell(u, run_step(u))
    return search.result()


def _width(best: SearchStep, worst: SearchStep) -> float:
    return round(worst.utilization - best.utilization, DIGITS + 2)


def _at(step: SearchStep) -> str:
    rate = f" ({step.rate:,.0f} writes/s)" if step.rate is not None else ""
    return f"{step.utilization:g} x max{rate}"
