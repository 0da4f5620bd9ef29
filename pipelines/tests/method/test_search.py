"""The search for the maximum sustainable rate (lsmbench.method.search), over fake step runners: a
known threshold is found within the tolerance in at most max_steps steps; noise near the
threshold still ends in a bracket that holds it, or says its upper end is inconclusive."""

from __future__ import annotations

import random

import pytest
from lsmbench.method.search import RateSearch, StepVerdict, run_search, steps_needed
from lsmbench.method.verdict import INCONCLUSIVE, NOT_SUSTAINABLE, SUSTAINABLE
from lsmbench.spec import RateSearchSpec as SearchSpec
from lsmbench.spec import SpecError, validate_raw

MAX_TP = 2000.0


def threshold_runner(t: float, calls: list[float] | None = None):
    """Sustainable at and under t, not above."""

    def run(u: float) -> StepVerdict:
        if calls is not None:
            calls.append(u)
        if u <= t:
            return StepVerdict(verdict=SUSTAINABLE)
        return StepVerdict(verdict=NOT_SUSTAINABLE, failed=["p99"], reason="p99 too high")

    return run


SPECS = [SearchSpec(), SearchSpec(low=0.3, high=1.5, tolerance=0.01, max_steps=10),
         SearchSpec(low=0.5, high=1.0, tolerance=0.05, max_steps=6)]
THRESHOLDS = [0.05, 0.29, 0.3, 0.3001, 0.499, 0.5, 0.5001, 0.51, 0.61, 0.75, 0.8, 0.9137,
              0.97, 0.999, 1.0, 1.2, 1.5, 1.9]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.low:g}-{s.high:g}/{s.tolerance:g}")
@pytest.mark.parametrize("t", THRESHOLDS)
def test_a_known_threshold_is_found_within_tolerance(spec, t):
    calls: list[float] = []
    r = run_search(spec, threshold_runner(t, calls), MAX_TP)
    assert len(r.steps) == len(calls) <= spec.max_steps
    assert [s.utilization for s in r.steps] == calls and len(set(calls)) == len(calls)
    assert [s.step for s in r.steps] == list(range(1, len(calls) + 1))
    assert all(spec.low <= u <= spec.high for u in calls)
    assert r.converged is True
    if t >= spec.high:
        assert calls == [spec.high] and r.stopped == "high-sustainable"
        assert r.utilization == spec.high and r.bracket.unsustainable is None
    elif t < spec.low:
        assert r.utilization is None and r.rate is None and r.stopped == "low-not-sustainable"
        assert calls[-1] == spec.low and r.bracket.unsustainable == spec.low
        assert r.summary.startswith(f"not even low, {spec.low:g} x max (")
        assert "was judged sustainable (not-sustainable)" in r.summary
        assert r.headline_step.utilization == spec.low  # the last step
    else:
        assert r.stopped == "tolerance"
        lo, hi = r.bracket.sustainable, r.bracket.unsustainable
        assert lo is not None and hi is not None
        assert lo <= t < hi and hi - lo <= spec.tolerance + 1e-9
        assert r.utilization == lo >= t - spec.tolerance
        assert r.rate == pytest.approx(lo * MAX_TP) and r.ratio_to_max == lo
        assert r.bracket.width == pytest.approx(hi - lo)
        assert r.headline_step.utilization == lo and r.headline_step.sustainable


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.low:g}-{s.high:g}/{s.tolerance:g}")
def test_steps_needed_is_the_most_a_search_takes(spec):
    lengths = {len(run_search(spec, threshold_runner(t / 1000)).steps)
               for t in range(0, 2000, 3)}
    assert max(lengths) == steps_needed(spec) <= spec.max_steps and min(lengths) == 1


def test_the_default_search_needs_at_most_seven_steps():
    """1 at high, 5 halvings of 0.5 to 0.016 <= 0.02, and low when nothing was sustainable."""
    assert steps_needed(SearchSpec()) == 7
    assert steps_needed(SearchSpec(low=0.9, high=0.95, tolerance=0.1)) == 2


def test_the_step_order_high_first_then_bisection():
    calls: list[float] = []
    r = run_search(SearchSpec(), threshold_runner(0.8, calls), MAX_TP)
    assert calls == [1.0, 0.75, 0.875, 0.8125, 0.7812, 0.7969]
    assert [s.verdict for s in r.steps] == [NOT_SUSTAINABLE, SUSTAINABLE, NOT_SUSTAINABLE,
                                            NOT_SUSTAINABLE, SUSTAINABLE, SUSTAINABLE]
    assert r.utilization == 0.7969 and r.bracket.unsustainable == 0.8125
    assert [s.rate for s in r.steps] == [pytest.approx(u * MAX_TP) for u in calls]
    assert r.steps[0].failed == ["p99"] and r.steps[0].reason == "p99 too high"
    assert "maximum sustainable utilization 0.7969 x max (1,594 writes/s)" in r.summary


def test_max_steps_ends_the_search_with_an_open_bracket():
    r = run_search(SearchSpec(max_steps=3), threshold_runner(0.8), MAX_TP)
    assert [s.utilization for s in r.steps] == [1.0, 0.75, 0.875]
    assert r.stopped == "max-steps" and r.converged is False
    assert (r.bracket.sustainable, r.bracket.unsustainable) == (0.75, 0.875)
    assert "still over tolerance" in r.summary


def test_the_last_step_tests_low_when_nothing_was_sustainable():
    """With one step left and nothing sustainable yet, the search runs low itself: 'none' is
    only said of a rate that was run, and a sustainable low is a promise."""
    calls: list[float] = []
    r = run_search(SearchSpec(max_steps=3), threshold_runner(0.55, calls), MAX_TP)
    assert calls == [1.0, 0.75, 0.5]
    assert r.utilization == 0.5 and r.stopped == "max-steps"
    r = run_search(SearchSpec(max_steps=2), threshold_runner(0.2), MAX_TP)
    assert [s.utilization for s in r.steps] == [1.0, 0.5]
    assert r.utilization is None and r.stopped == "low-not-sustainable" and r.converged


def test_inconclusive_counts_as_not_sustainable_and_is_named():
    def run(u: float) -> StepVerdict:
        return StepVerdict(verdict=SUSTAINABLE if u < 0.7 else INCONCLUSIVE,
                           reason="no merge into L3 in the window")

    r = run_search(SearchSpec(), run, MAX_TP)
    assert r.bracket.unsustainable_verdict == INCONCLUSIVE
    assert r.bracket.sustainable is not None and r.bracket.sustainable < 0.7
    assert r.bracket.unsustainable is not None and r.bracket.unsustainable >= 0.7
    assert "inconclusive (counted as not sustainable)" in r.summary
    r = run_search(SearchSpec(), lambda u: StepVerdict(verdict=INCONCLUSIVE), MAX_TP)
    assert r.utilization is None and r.stopped == "low-not-sustainable"


def flipping_runner(t: float, width: float, seed: int):
    """Sustainable under t - width, not above t + width, a coin flip in between."""
    rng = random.Random(seed)

    def run(u: float) -> StepVerdict:
        if u < t - width or (u <= t + width and rng.random() < 0.5):
            return StepVerdict(verdict=SUSTAINABLE)
        return StepVerdict(verdict=NOT_SUSTAINABLE)

    return run


def inconclusive_runner(t: float, width: float, seed: int):
    """Truly sustainable at and under t, but a run within width under t may come out
    inconclusive (its window missed the deepest merge)."""
    rng = random.Random(seed)

    def run(u: float) -> StepVerdict:
        if u > t:
            return StepVerdict(verdict=NOT_SUSTAINABLE)
        if u >= t - width and rng.random() < 0.5:
            return StepVerdict(verdict=INCONCLUSIVE)
        return StepVerdict(verdict=SUSTAINABLE)

    return run


def _consistent(r) -> None:
    ok = [s.utilization for s in r.steps if s.sustainable]
    bad = [s.utilization for s in r.steps if not s.sustainable]
    assert not ok or not bad or max(ok) < min(bad)  # the steps never contradict each other
    assert r.bracket.sustainable == (max(ok) if ok else None)
    assert r.bracket.unsustainable == (min(bad) if bad else None)


@pytest.mark.parametrize("t", [0.45, 0.52, 0.66, 0.8, 0.98, 1.02])
def test_a_flipping_verdict_still_ends_with_a_bracket_at_the_threshold(t):
    width = 0.03
    spec = SearchSpec()
    for seed in range(60):
        r = run_search(spec, flipping_runner(t, width, seed), MAX_TP)
        assert len(r.steps) <= spec.max_steps
        _consistent(r)
        lo, hi = r.bracket.sustainable, r.bracket.unsustainable
        # The bracket holds the threshold up to the noise: its sustainable end was seen
        # sustainable (so under t + width), its other end not (so over t - width).
        assert lo is None or lo <= t + width
        assert hi is None or hi >= t - width
        if not (lo is None or lo <= t) or not (hi is None or hi > t):
            flipped = [s for s in r.steps if abs(s.utilization - t) <= width]
            assert flipped, (seed, r.summary)
        if r.stopped == "tolerance":
            assert lo is not None and lo >= t - width - spec.tolerance


@pytest.mark.parametrize("t", [0.45, 0.52, 0.66, 0.8, 0.98])
def test_an_inconclusive_run_near_the_threshold_is_said(t):
    spec = SearchSpec()
    for seed in range(60):
        r = run_search(spec, inconclusive_runner(t, 0.05, seed), MAX_TP)
        assert len(r.steps) <= spec.max_steps
        _consistent(r)
        lo, hi = r.bracket.sustainable, r.bracket.unsustainable
        assert lo is None or lo <= t  # a sustainable answer is never above the threshold
        contains = hi is None or hi > t
        assert contains or r.bracket.unsustainable_verdict == INCONCLUSIVE, (seed, r.summary)


def test_a_step_verdict_from_a_running_phase_verdict():
    from lsmbench.method.stats import Slope
    from lsmbench.method.verdict import RunningFigures, judge

    flat = Slope(slope=0.0, ci_low=-1.0, ci_high=1.0, confidence=0.95, points=20, from_s=10.0,
                 to_s=20.0)
    measured = RunningFigures(utilization=0.8, arrival_rate=1000, p99_write_latency_s=0.01,
                              final_queue_length=0, backlog_slope=flat, stalled_s=0.0,
                              window_s=20.0, achieved_rate=1000)
    sv = StepVerdict.of(judge(measured), "running@0.8")
    assert (sv.verdict, sv.failed, sv.phase, sv.reason) == (
        SUSTAINABLE, [], "running@0.8", "every criterion held")
    # Without a backlog trend (too short a window) the step is inconclusive, and says why.
    sv = StepVerdict.of(judge(measured.model_copy(update={"backlog_slope": None})))
    assert sv.verdict == INCONCLUSIVE and sv.failed == []
    assert sv.reason.startswith("backlog trend not computed")
    bad = judge(RunningFigures(utilization=1.0, arrival_rate=1000, p99_write_latency_s=2.0,
                               final_queue_length=5000))
    sv = StepVerdict.of(bad)
    assert sv.verdict == NOT_SUSTAINABLE and sv.failed == ["p99", "final_backlog"]
    assert sv.reason.startswith("p99 write latency 2 s > 1 s; final queue 5000 writes")


def test_ask_and_tell():
    s = RateSearch(SearchSpec(low=0.6, high=0.9, tolerance=0.15, max_steps=5), MAX_TP)
    assert s.next_utilization() == 0.9
    s.tell(0.9, StepVerdict(verdict=NOT_SUSTAINABLE))
    assert s.next_utilization() == 0.75
    s.tell(0.75, StepVerdict(verdict=SUSTAINABLE))
    assert s.next_utilization() is None and s.stopped() == "tolerance"
    assert s.result().utilization == 0.75
    with pytest.raises(ValueError, match="not run a step"):
        RateSearch(SearchSpec()).result()


def test_the_stored_shape():
    r = run_search(SearchSpec(), threshold_runner(0.8), MAX_TP).to_json()
    assert r["schema"] == "lsmbench.search/1"
    assert set(r) >= {"low", "high", "tolerance", "max_steps", "max_throughput", "utilization",
                      "rate", "ratio_to_max", "bracket", "stopped", "converged", "summary",
                      "steps"}
    assert set(r["bracket"]) == {"sustainable", "unsustainable", "unsustainable_verdict",
                                 "width"}
    assert set(r["steps"][0]) == {"step", "utilization", "rate", "phase", "verdict", "failed",
                                  "reason"}


# ---------------------------------------------------------------- the spec

BASE = {"name": "t", "workload": {"inline": {"record_count": 1000, "value_size": 100,
                                             "operations": {"update": 1.0}}}}


def _errors(running: dict, matrix: dict | None = None) -> list[str]:
    raw = {**BASE, "phases": {"running": running}, **({"matrix": matrix} if matrix else {})}
    with pytest.raises(SpecError) as e:
        validate_raw(raw)
    return e.value.lines()


def test_spec_search_excludes_a_sweep_and_continue():
    lines = _errors({"search": {}, "utilizations": [0.5, 0.9]})
    assert any(ln.startswith("phases.running: phases.running.search and "
                             "phases.running.utilizations exclude each other") for ln in lines)
    lines = _errors({"search": {"low": 0.6}, "start": "continue"})
    assert any(ln.startswith("phases.running: phases.running.search needs phases.running.start "
                             "'snapshot' or 'reload'") and "same loaded tree" in ln
               for ln in lines), lines
    lines = _errors({"search": {}}, {"phases.running.start": ["snapshot", "continue"]})
    assert any(ln.startswith("matrix.phases.running.start[1]: phases.running.search needs")
               for ln in lines), lines


@pytest.mark.parametrize("search,expected", [
    ({"low": 0.9, "high": 0.8}, "phases.running.search: low (0.9) must be under high (0.8)"),
    ({"tolerance": 0}, "phases.running.search.tolerance: must be greater than or equal to 0.001"),
    ({"max_steps": 1}, "phases.running.search.max_steps: must be greater than or equal to 2"),
    ({"high": 3}, "phases.running.search.high: must be less than or equal to 2"),
    ({"steps": 3}, "phases.running.search.steps: unknown key 'steps' (allowed: low, high, "
                   "tolerance, max_steps)"),
])
def test_bad_search_specs(search, expected):
    lines = _errors({"search": search})
    assert any(ln.startswith(expected) for ln in lines), lines


def test_cli_reports_a_bad_search_as_path_and_message(tmp_path, capsys):
    import yaml
    from lsmbench.cli import main

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**BASE, "phases": {"running": {
        "search": {}, "start": "continue"}}}))
    assert main(["plan", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "phases.running: phases.running.search needs" in err and "Traceback" not in err
