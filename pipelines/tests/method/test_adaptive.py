"""Adaptive phases' stopping rules on synthetic series (lsmbench.method.adaptive): no driver, no
clock.

A synthetic testing phase: one interval a second, a memtable sealed every second holding that
second's writes, a merge into level 2 (the deepest) every `cycle` seconds. A synthetic running
phase: the same with an open-loop queue.
"""

from __future__ import annotations

import random

import pytest
from lsmbench.method import adaptive
from lsmbench.method.cycles import Coverage
from lsmbench.method.groups import Repetition, make_group
from lsmbench.method.verdict import INCONCLUSIVE, NOT_SUSTAINABLE, SUSTAINABLE, running_figures
from lsmbench.spec.models import SteadyState, UntilDecided, VerdictSpec

SEED = 20261127


def make_testing_series(rates: list[float], cycle: int = 5, seed: int = SEED) -> list[dict]:
    """One interval per rate (writes/s), flushes sealed at every interval's end, a merge into
    level 2 completing every `cycle` seconds; the tree's metrics say level 2 exists."""
    rng = random.Random(seed)
    out = []
    for i, rate in enumerate(rates):
        writes = max(0.0, rate * (1 + rng.uniform(-0.01, 0.01)))
        evs = [{"kind": "flush", "start_s": i + 0.9, "end_s": i + 0.95, "sealed_s": i + 0.9,
                "entries": writes, "output_level": 0}]
        if (i + 1) % cycle == 0:
            evs.append({"kind": "merge", "start_s": i - 2.0, "end_s": i + 0.5,
                        "output_level": 2, "input_bytes": 100 << 20})
        out.append({"index": i, "t_start_s": float(i), "t_end_s": float(i + 1),
                    "ops": {"writes": writes}, "events": evs,
                    "engine": {"disk_components.L0": 2, "disk_components.L2": 1}})
    # The sealing at 0 opens the first round (a phase's first memtable started then).
    out[0]["events"].insert(0, {"kind": "flush", "start_s": 0.0, "end_s": 0.01, "sealed_s": 0.0,
                                "entries": 0, "output_level": 0})
    return out


RULE = SteadyState(rounds=5, round=10.0, ramp=0.0)


def test_a_steady_series_stops_after_its_window():
    series = make_testing_series([2000.0] * 200)
    res = adaptive.steady_state(series, RULE)
    print("seed", SEED)
    assert res.attained, res.reason
    # Rounds of >= 10 s each holding a level-2 merge, from the sealing at 0: closed at the
    # first sealing 10 s on (10.9, 20.9, ...); the window is the first five.
    assert res.window == (0, 5)
    assert [r.end_s for r in res.rounds[:5]] == pytest.approx([10.9, 20.9, 30.9, 40.9, 50.9])
    assert res.writes_per_s == pytest.approx(2000, rel=0.01)
    assert res.range_fraction <= RULE.max_range and res.slope_fraction <= RULE.max_slope


def test_the_live_monitor_stops_where_the_stored_figure_says():
    series = make_testing_series([1500.0] * 16 + [2000.0] * 184)
    mon = adaptive.SteadyMonitor(RULE)
    stopped_at = None
    for i in range(0, len(series), 3):  # batches, as a monitor sees them
        if mon(series[i:i + 3]):
            stopped_at = i + 3
            break
    assert stopped_at is not None
    # The driver ends a little after it was asked: the stored figure over more intervals
    # still takes the first steady window, the one the monitor saw.
    later = adaptive.steady_state(series[:stopped_at + 4], RULE)
    assert mon.result is not None
    assert later.window == mon.result.window
    assert later.writes_per_s == pytest.approx(mon.result.writes_per_s)


def test_a_transient_at_the_start_is_left_out_of_the_window():
    # The merge the load left pending: the first 16 s at 1,500 writes/s, then 2,000.
    series = make_testing_series([1500.0] * 16 + [2000.0] * 184)
    res = adaptive.steady_state(series, RULE)
    assert res.attained
    # Rounds 0 (1,500/s) and 1 (1,750/s: 6 s of 1,500) span 12.5 % or more of any window
    # they are in, more than the default 10 %.
    assert res.window == (2, 7)
    assert res.writes_per_s == pytest.approx(2000, rel=0.02)
    mt, steady = adaptive.steady_maximum(series, RULE)
    assert mt.method == "steady" and mt.writes_per_s == pytest.approx(res.writes_per_s)
    assert steady.attained


def test_a_drifting_series_runs_to_the_cap_and_says_so():
    # 1 % more every second: every window of five 10 s rounds spans ~50 %.
    series = make_testing_series([1000.0 * 1.01 ** i for i in range(120)])
    res = adaptive.steady_state(series, RULE)
    assert not res.attained
    assert res.reason.startswith("not steady")
    assert "range" in res.reason
    assert len(res.rounds) == 11 and res.window == (6, 11)  # the last five rounds
    mon = adaptive.SteadyMonitor(RULE)
    assert not any(mon(series[i:i + 1]) for i in range(len(series)))


def test_rounds_wait_for_a_merge_into_the_deepest_level():
    # Merges every 25 s: a round of >= 10 s must hold one, so rounds are ~25 s long.
    series = make_testing_series([2000.0] * 200, cycle=25)
    rounds = adaptive.testing_rounds(series, RULE)
    assert [r.end_s for r in rounds[:3]] == pytest.approx([24.9, 49.9, 74.9])
    assert all(r.deepest_merges >= 1 for r in rounds)
    res = adaptive.steady_state(series[:90], RULE)
    assert not res.attained and "only 3 of the 5 rounds" in res.reason


def test_without_merge_events_rounds_are_time_alone():
    series = make_testing_series([2000.0] * 60)
    for iv in series:
        iv["events"] = [e for e in iv["events"] if e["kind"] != "merge"]
    rounds = adaptive.testing_rounds(series, RULE)
    assert len(rounds) == 5 and rounds[0].deepest_merges == 0


# ---------------------------------------------------------------- running until decided

BOUNDS = VerdictSpec(p99_write_latency=1.0, max_backlog=1.0)
DECIDE = UntilDecided(deepest_merges=2)


def running_series(n: int, rate: float = 1000.0, merges_at: tuple[int, ...] = (),
                   stall: tuple[int, int] | None = None, queue_growth: float = 0.0) -> list[dict]:
    out = []
    queue = 0.0
    for i in range(n):
        stalled = stall is not None and stall[0] <= i < stall[1]
        writes = 0.0 if stalled else rate
        queue = queue + rate if stalled else max(0.0, queue_growth * i)
        p = 5e6 if stalled else 500.0  # microseconds
        evs = [{"kind": "merge", "start_s": i - 5.0, "end_s": i + 0.5, "output_level": 2,
                "input_bytes": 1 << 27} for m in merges_at if m == i]
        out.append({"index": i, "t_start_s": float(i), "t_end_s": float(i + 1),
                    "ops": {"writes": writes}, "arrivals": rate, "events": evs,
                    "queue": {"length": queue, "max": queue},
                    "write_latency_us": {"count": rate, "p50": p, "p90": p, "p99": p, "p999": p},
                    "engine": {"disk_components.L2": 1}})
    return out


def decide(series: list[dict], cap: float = 100.0) -> adaptive.Decision:
    return adaptive.running_decision(series, rule=DECIDE, bounds=BOUNDS, offered_rate=1000.0,
                                     cap_s=cap, warmup_s=0.0, deepest=2)


def test_a_stalling_running_phase_fails_at_its_first_stall():
    series = running_series(60, merges_at=(50,), stall=(10, 13))
    # The stall allowance of a 100 s cap is 1 s (1 %): the second stalled second decides.
    assert decide(series[:10]).state == adaptive.CONTINUE
    assert decide(series[:11]).state == adaptive.CONTINUE
    d = decide(series[:12])
    assert d.state == adaptive.FAIL and "stalls criterion cannot pass" in d.reason
    mon = adaptive.RunningMonitor(DECIDE, BOUNDS, 1000.0, 100.0, 0.0, 2)
    stops = [mon(series[i:i + 1]) for i in range(12)]
    assert stops == [False] * 11 + [True]
    assert mon.log[-1].state == adaptive.FAIL


def test_the_live_rule_judges_the_engines_stall_time_as_the_verdict_does():
    """Sub-second stalls leave no interval without a write, so the interval rule sees none;
    the engine's stall time (its snapshots in the intervals) fails the criterion live, with
    the same figure the final verdict reads from summary.json."""
    series = running_series(60, merges_at=(20, 45))
    for i, iv in enumerate(series):  # 0.3 s of stalls in each of intervals 10-13
        iv["engine"]["stall_micros"] = 300_000.0 * max(0, min(i, 13) - 9)
    assert decide(series[:11]).state == adaptive.CONTINUE  # 0.3 s <= 1 % of the 100 s cap
    d = decide(series[:14])
    assert d.state == adaptive.FAIL and "writes stalled 1.2 s" in d.reason, d.reason
    without = running_series(60, merges_at=(20, 45))  # no engine figure: the interval rule
    assert decide(without[:14]).state == adaptive.CONTINUE
    assert decide(without[:50]).state == adaptive.PASS


def test_a_healthy_running_phase_passes_after_k_deepest_merges():
    series = running_series(100, merges_at=(20, 45))
    states = [decide(series[:i]).state for i in range(1, 100)]
    first_pass = states.index(adaptive.PASS) + 1
    assert first_pass == 46  # the interval in which the second merge into level 2 completed
    assert all(s == adaptive.CONTINUE for s in states[:first_pass - 1])


def test_a_mix_with_reads_is_judged_on_its_requests():
    # 1000 requests/s arrive, 140 of them writes: the rate achieved is the requests'. Judged
    # as if every request were a write, the 140 writes/s would look 86 % short of the offer.
    series = running_series(100, rate=140.0, merges_at=(20, 45))
    for iv in series:
        iv["ops"] = {"writes": 140.0, "read": 860.0, "total": 1000.0}
    mixed = adaptive.running_decision(series[:60], rule=DECIDE, bounds=BOUNDS,
                                      offered_rate=1000.0, cap_s=100.0, warmup_s=0.0, deepest=2,
                                      write_share=0.14)
    assert mixed.state == adaptive.PASS, mixed.reason
    as_writes = decide(series[:60])
    assert as_writes.state == adaptive.CONTINUE and "writes/s offered" in as_writes.reason


def test_min_duration_holds_a_pass_back():
    series = running_series(100, merges_at=(5, 10))
    rule = UntilDecided(deepest_merges=2, min_duration=30.0)
    d = adaptive.running_decision(series[:20], rule=rule, bounds=BOUNDS, offered_rate=1000.0,
                                  cap_s=100.0, warmup_s=0.0, deepest=2)
    assert d.state == adaptive.CONTINUE and "min_duration" in d.reason
    d = adaptive.running_decision(series[:31], rule=rule, bounds=BOUNDS, offered_rate=1000.0,
                                  cap_s=100.0, warmup_s=0.0, deepest=2)
    assert d.state == adaptive.PASS


def _final(series: list[dict], merges: int) -> tuple:
    fig = running_figures(0.95, 1000.0, series, None, None, 0.0)
    cov = Coverage(merges > 0, 2, merges, 1 << 27, "synthetic")
    return fig, cov


def test_at_the_cap_too_few_deepest_merges_is_inconclusive_with_the_length_needed():
    series = running_series(60, merges_at=(30,))
    assert decide(series).state == adaptive.CONTINUE
    fig, cov = _final(series, 1)
    v = adaptive.judge_until_decided(fig, series, cov, DECIDE, BOUNDS, cycle_s=40.0)
    assert v.verdict == INCONCLUSIVE and not v.sustainable
    assert "1 completed merge(s) into level 2" in " ".join(v.reasons)
    # 2 merges at one per 40 s, and the phase's start:
    assert "a running phase would need about 120 s" in v.reasons[-1]
    # With the merges, the same series is sustainable.
    series = running_series(60, merges_at=(20, 45))
    fig, cov = _final(series, 2)
    v = adaptive.judge_until_decided(fig, series, cov, DECIDE, BOUNDS, cycle_s=None)
    assert v.verdict == SUSTAINABLE


def test_a_window_too_short_for_a_backlog_trend_is_never_passed_and_inconclusive_at_the_cap():
    # Both merges land, but 5 intervals leave 3 in the second half: no trend (4 needed).
    series = running_series(5, merges_at=(1, 3))
    states = [decide(series[:i]).state for i in range(1, 6)]
    assert adaptive.PASS not in states
    assert "backlog trend not computed" in decide(series).reason
    fig, cov = _final(series, 2)
    v = adaptive.judge_until_decided(fig, series, cov, DECIDE, BOUNDS, cycle_s=None)
    assert v.verdict == INCONCLUSIVE and not v.sustainable and v.failed == []
    assert "inconclusive: backlog_growth not computed" in v.reasons


def test_a_growing_backlog_is_never_passed_and_fails_at_the_end():
    series = running_series(80, merges_at=(20, 45), queue_growth=30.0)
    assert all(decide(series[:i]).state != adaptive.PASS for i in range(1, 81))
    fig, cov = _final(series, 2)
    v = adaptive.judge_until_decided(fig, series, cov, DECIDE, BOUNDS, cycle_s=None)
    assert v.verdict == NOT_SUSTAINABLE


# ---------------------------------------------------------------- repetitions


def rep(i: int, verdict: str, p99: float) -> Repetition:
    return Repetition(point=f"policy=x,rep={i}", group="policy=x", rep=i, params={"policy": "x"},
                      state="complete", sustainable=verdict == SUSTAINABLE, verdict=verdict,
                      p99_write_latency_s=p99, p99_limit_s=1.0, final_backlog_s=0.0,
                      max_backlog_s=1.0)


def test_a_split_group_is_undecided_and_an_agreeing_one_is_not():
    split = make_group([rep(0, SUSTAINABLE, 0.5), rep(1, NOT_SUSTAINABLE, 1.5),
                        rep(2, SUSTAINABLE, 0.6)])
    assert adaptive.group_undecided(split) is not None
    agree = make_group([rep(i, SUSTAINABLE, 0.1 + i / 100) for i in range(3)])
    assert adaptive.group_undecided(agree) is None
    # All sustainable, but the p99 interval reaches over the bound: another repetition.
    straddle = make_group([rep(0, SUSTAINABLE, 0.5), rep(1, SUSTAINABLE, 0.7),
                           rep(2, SUSTAINABLE, 0.9), rep(3, NOT_SUSTAINABLE, 1.2),
                           rep(4, SUSTAINABLE, 0.8)])
    assert adaptive.group_undecided(straddle) is not None
    assert adaptive.repetitions_help(split) and adaptive.repetitions_help(straddle)


def test_no_more_repetitions_for_a_group_whose_windows_were_all_too_short():
    short = make_group([rep(i, INCONCLUSIVE, 0.01) for i in range(3)])
    assert short.verdict == INCONCLUSIVE and adaptive.group_undecided(short) is not None
    assert not adaptive.repetitions_help(short)  # the same cap again: inconclusive again
    mixed = make_group([rep(0, INCONCLUSIVE, 0.01), rep(1, SUSTAINABLE, 0.01),
                        rep(2, INCONCLUSIVE, 0.01)])
    assert adaptive.repetitions_help(mixed)


def test_a_tree_that_deepens_lengthens_its_rounds_once_the_new_level_recurs():
    """Tiering deepens as it takes writes (a merge into level L + 1 every T^(L+1) flushes).
    The one merge that creates a level is not a cycle: rounds keep holding merges into the
    tree's level and the range criterion judges the rate around it (a quickstart run hit this:
    the level-5 merge at 41 s of a 75 s testing phase left its rounds waiting for a second
    one that could not come before the cap). Once a second merge lands in the new level, it is
    the bar for the rounds after it: they must hold merges into it, and the cap bounds the
    wait. Rounds closed before it stay closed (the rule only looks back)."""
    series = make_testing_series([2000.0] * 200)
    deepen = {"kind": "merge", "start_s": 50.0, "end_s": 60.5, "output_level": 3,
              "input_bytes": 300 << 20}
    series[60]["events"].append(dict(deepen))
    assert adaptive.deepest_level(series) == 2  # one merge into level 3: a deepening
    assert adaptive.steady_state(series, RULE).attained
    assert adaptive.steady_state(series[:60], RULE).attained
    series[100]["events"].append(dict(deepen, start_s=90.0, end_s=100.5))
    assert adaptive.deepest_level(series) == 3  # the second: level 3 is the tree's now
    rounds = adaptive.testing_rounds(series, RULE)
    # Every 10 s while level 2 was the deepest; the round holding the second level-3 merge;
    # then none: no third merge into level 3 came in the remaining 99 s.
    assert [r.end_s for r in rounds] == pytest.approx([10.9 + 10 * k for k in range(10)])
    res = adaptive.steady_state(series, RULE)
    assert res.attained and res.window == (0, 5)


def test_a_window_does_not_straddle_the_deepening_of_a_tree_that_settles():
    """A loaded store under updates often deepens once before its data settles in its last
    level (tiering in the quickstart: level 4 under a loaded level 2). Rounds judged on
    the shallower tree may look steady beside the first ones of the deeper tree, yet their rate
    is another tree's: a window's rounds must all judge one deepest level."""
    rates = [2000.0] * 25 + [1940.0] * 175  # the deeper tree writes 3 % slower
    series = make_testing_series(rates)
    for at in [15, 25, *range(35, 200, 10)]:  # level 3 from 25 s on, its merges recurring
        series[at]["events"].append({"kind": "merge", "start_s": at - 5.0, "end_s": at + 0.5,
                                     "output_level": 3, "input_bytes": 300 << 20})
    res = adaptive.steady_state(series, RULE)
    print("seed", SEED)
    assert res.attained, res.reason
    window = res.window_rounds
    assert {r.level for r in window} == {3}
    assert window[0].start_s >= 20  # the round in which level 3 became the deepest
    assert res.writes_per_s == pytest.approx(1940, rel=0.01)
    # Without the rule the first five rounds (two of them on level 2) passed both criteria.
    head = res.rounds[:5]
    assert {r.level for r in head} == {2, 3}
    _, spread, slope = adaptive.window_figures(head)
    assert spread <= RULE.max_range and slope <= RULE.max_slope


def test_the_steady_rule_only_looks_back_so_a_longer_series_keeps_its_window():
    """The stored series runs on after the monitor asked the driver to stop, and may hold a
    deepening the monitor never saw: the window found on any prefix is the window of every
    longer one (a CI run once stored "ended early" with "not steady" when a second merge into
    a new level landed after the stop)."""
    rng = random.Random(SEED)
    print("seed", SEED)
    series = make_testing_series([2000.0 * (1 + rng.uniform(-0.03, 0.03)) for _ in range(150)])
    for at in sorted(rng.sample(range(20, 150), 4)):
        series[at]["events"].append({"kind": "merge", "start_s": at - 5.0, "end_s": at + 0.5,
                                     "output_level": 3, "input_bytes": 300 << 20})
    first = None
    for n in range(1, len(series) + 1):
        res = adaptive.steady_state(series[:n], RULE)
        if first is None and res.attained:
            first = res
        elif first is not None:
            assert res.attained and res.window == first.window, n
            assert res.writes_per_s == pytest.approx(first.writes_per_s)
    assert first is not None


def test_a_flat_backlog_needs_enough_intervals():
    # Both merges early: the pass waits for a trend over MIN_FLAT_POINTS intervals.
    series = running_series(60, merges_at=(3, 6))
    states = [decide(series[:i]).state for i in range(1, 60)]
    first_pass = states.index(adaptive.PASS) + 1
    points = [running_figures(0.0, 1000.0, series[:n], None, None, 0.0).backlog_slope.points
              for n in (first_pass - 1, first_pass)]
    assert points == [adaptive.MIN_FLAT_POINTS - 1, adaptive.MIN_FLAT_POINTS]
    assert "a flat one needs" in decide(series[:first_pass - 1]).reason


def test_a_one_level_tree_passes_only_after_merges_of_most_of_the_tree():
    # Size-tiered: every merge lands in level 0. Small merges every second decide nothing;
    # the pass waits for two merges that read at least half the tree (the major merges).
    series = running_series(90)
    for i, iv in enumerate(series):
        iv["engine"] = {"disk_components.L0": 6, "disk_bytes": 300 << 20}
        iv["events"].append({"kind": "merge", "start_s": i + 0.1, "end_s": i + 0.6,
                             "output_level": 0, "input_bytes": 4 << 20})
        if i in (40, 75):
            iv["events"].append({"kind": "merge", "start_s": i - 20.0, "end_s": i + 0.5,
                                 "output_level": 0, "input_bytes": 280 << 20})
    rule = UntilDecided(deepest_merges=2, min_duration=30.0)
    states = [adaptive.running_decision(series[:i], rule=rule, bounds=BOUNDS,
                                        offered_rate=1000.0, cap_s=180.0, warmup_s=0.0,
                                        deepest=0) for i in range(1, 91)]
    first_pass = [d.state for d in states].index(adaptive.PASS) + 1
    assert first_pass == 76  # the interval of the second major merge, not min_duration's 30
    assert "1 of 2 merges into level 0 reading at least 50% of the tree" in states[60].reason


def test_moves_into_the_deepest_level_neither_close_rounds_nor_pass_a_running_phase():
    # Partitioned leveling hands files down as they are (moves) many a second while its last
    # level fills; rounds and the running pass wait for merges that rewrite data.
    def with_moves(series: list[dict]) -> list[dict]:
        for i, iv in enumerate(series):
            iv["events"].append({"kind": "merge", "start_s": i + 0.1, "end_s": i + 0.2,
                                 "output_level": 2, "input_bytes": 2 << 20, "inputs": 1,
                                 "moved": True})
        return series

    series = with_moves(running_series(90, merges_at=(50, 80)))
    rule = UntilDecided(deepest_merges=2, min_duration=30.0)
    states = [adaptive.running_decision(series[:i], rule=rule, bounds=BOUNDS,
                                        offered_rate=1000.0, cap_s=180.0, warmup_s=0.0,
                                        deepest=2) for i in range(1, 91)]
    first_pass = [d.state for d in states].index(adaptive.PASS) + 1
    assert first_pass == 81  # the second merge, not min_duration's 30 on moves
    rounds = adaptive.testing_rounds(series, SteadyState(round=10.0, deepest_merges=1))
    assert [r.end_s for r in rounds] == [51.0, 81.0]


def test_a_group_of_one_run_is_undecided_whatever_that_run_said():
    """matrix.repetitions {min: 1, max: 2}: one run has no interval, so the group gets its
    second run (it was decided by its one run, and the second never ran)."""
    for verdict, p99 in ((SUSTAINABLE, 0.1), (NOT_SUSTAINABLE, 1.5)):
        one = make_group([rep(0, verdict, p99)])
        assert one.verdict == verdict
        assert adaptive.group_undecided(one) == adaptive.SINGLE_RUN
        assert adaptive.repetitions_help(one)
    # A failed repetition beside it leaves one judged run: still undecided.
    failed = rep(1, SUSTAINABLE, 0.1).model_copy(update={"state": "failed", "verdict": None,
                                                          "sustainable": None})
    assert adaptive.group_undecided(make_group([rep(0, SUSTAINABLE, 0.1), failed])) is not None
    two = make_group([rep(0, SUSTAINABLE, 0.1), rep(1, SUSTAINABLE, 0.2)])
    assert adaptive.group_undecided(two) is None


def test_the_run_gives_a_stored_group_of_one_run_another(tmp_path):
    """What campaign.run's waves ask of the store: after a first wave of one repetition
    each, a group one sustainable run judged is among those to repeat (another one can
    decide it), and a group of two agreeing runs is not."""
    from lsmbench.campaign.run import _undecided_groups
    from lsmbench.store import Store

    store = Store(tmp_path)
    for policy, reps in (("x", 1), ("y", 2)):
        for r in range(reps):
            pid = f"policy={policy},rep={r}"
            store.begin_point("c", pid).commit({
                "campaign": "c", "point": pid, "state": "complete", "rep": r,
                "params": {"policy": policy},
                "verdict": {"sustainable": True, "verdict": SUSTAINABLE,
                            "p99_write_latency_s": 0.1, "p99_limit_s": 1.0}})
    got = _undecided_groups(store, "c")
    assert got == {"policy=x": (adaptive.SINGLE_RUN, True)}
