"""The two-phase arithmetic on time series: max throughput after warm-up, and the verdict.

Synthetic series are built to the driver's documented schema (engines/driver/README.md);
the recorded ones in data/ are real lsm-driver outputs of the builtin engine.
"""

from __future__ import annotations

import json

import pytest
from lsmbench.driverio import DriverOutputs, read_timeseries
from lsmbench.method.stats import Slope
from lsmbench.method.verdict import (
    LEGACY_INCONCLUSIVE_CAUSE,
    RunningFigures,
    VerdictError,
    inconclusive_cause,
    judge,
    max_throughput,
    not_computed,
    p99_from_timeseries,
    percentile_from_buckets,
    queue_slope,
    running_figures,
    tail_over_upper_bound,
    verdict_word,
    warmup_seconds,
)
from repo_paths import TESTS

DATA = TESTS / "data"


def interval(i, writes, *, start=None, length=1.0, queue=None, p99_us=None, arrivals=None):
    start = i * length if start is None else start
    iv = {
        "schema": "lsm-driver/interval/1",
        "interval": i,
        "t_start_s": start,
        "t_end_s": start + length,
        "ops": {"total": writes, "update": writes, "writes": writes},
        "throughput": {"writes": writes / length},
    }
    if p99_us is not None:
        iv["write_latency_us"] = {"count": writes, "p99": p99_us}
    if queue is not None:
        iv["queue"] = {"length": queue, "max": queue, "arrivals": arrivals or writes}
    return iv


# ---------------------------------------------------------------- max throughput


def test_warmup_default_is_one_sixth():
    assert warmup_seconds(120 * 60) == pytest.approx(20 * 60)  # the paper's 20 of 120 minutes
    assert warmup_seconds(30, warmup_s=2) == 2
    with pytest.raises(VerdictError):
        warmup_seconds(10, warmup_s=10)


def test_max_throughput_excludes_the_warmup():
    # 12 s: a fast start (the freshly loaded tree) then a steady 1000 writes/s.
    series = [interval(i, 5000 if i < 2 else 1000) for i in range(12)]
    mt = max_throughput(series, warmup_seconds(12))
    assert mt.writes_per_s == pytest.approx(1000)
    assert mt.window_start_s == 2 and mt.window_end_s == 12
    assert mt.intervals == 10 and mt.writes == 10_000
    # Without the warm-up the start inflates the figure.
    assert max_throughput(series, 0).writes_per_s == pytest.approx(20_000 / 12)


def test_max_throughput_weights_by_interval_length():
    # A short last interval must not count like a full one.
    series = [interval(0, 100), interval(1, 100), interval(2, 10, length=0.1)]
    mt = max_throughput(series, 0)
    assert mt.writes_per_s == pytest.approx(210 / 2.1)
    assert mt.per_interval_min == pytest.approx(100) and mt.per_interval_max == pytest.approx(100)
    assert mt.cv == pytest.approx(0)


def test_interval_straddling_the_warmup_is_left_out():
    series = [interval(0, 10, start=0.0, length=1.5), interval(1, 10, start=1.5, length=1.0),
              interval(2, 10, start=2.5, length=1.0)]
    mt = max_throughput(series, 1.0)
    assert mt.intervals == 2 and mt.window_start_s == 1.5


def test_max_throughput_with_no_window_fails_clearly():
    with pytest.raises(VerdictError, match="too short for its warm-up"):
        max_throughput([interval(0, 10)], 5.0)


def test_variation_coefficient():
    mt = max_throughput([interval(0, 100), interval(1, 300)], 0)
    assert mt.cv == pytest.approx(0.5)


# ---------------------------------------------------------------- verdict


# The figures a time series gives besides p99 and the final queue: a flat backlog over 30
# intervals, no stalled time in a 60 s window, the offered rate achieved.
def flat_slope(points: int = 30) -> Slope:
    return Slope(slope=0.0, ci_low=-1.0, ci_high=1.0, confidence=0.95, points=points,
                 from_s=30.0, to_s=60.0)


def fig(p99, final_q, rate=1000.0, u=0.95):
    return RunningFigures(utilization=u, arrival_rate=rate, p99_write_latency_s=p99,
                          final_queue_length=final_q, backlog_slope=flat_slope(), stalled_s=0.0,
                          window_s=60.0, achieved_rate=rate)


def test_sustainable_when_both_bounds_hold():
    v = judge(fig(0.020, 50), p99_limit_s=1.0, max_backlog_s=1.0)
    assert v.sustainable and v.verdict == "sustainable"
    assert v.queue_limit == pytest.approx(1000)
    assert v.reasons[:2] == ["p99 write latency 20.0 ms <= 1 s",
                             "final queue 50 writes < 1 s of arrivals (1000)"]
    # No merge events: window_coverage is not checked, and not held against the run.
    assert [c.name for c in v.criteria if c.ok is None] == ["window_coverage"]
    assert "not checked" in v.reasons[5] and len(v.reasons) == 6


def test_a_criterion_not_computed_makes_the_run_inconclusive_not_sustainable():
    # Without a time series the trend, the stalls and the achieved rate cannot be computed:
    # what was not measured cannot support "sustainable", nor fail the run.
    bare = RunningFigures(utilization=0.95, arrival_rate=1000.0, p99_write_latency_s=0.02,
                          final_queue_length=50)
    v = judge(bare, p99_limit_s=1.0, max_backlog_s=1.0)
    assert v.verdict == "inconclusive" and not v.sustainable and v.failed == []
    assert [c.name for c in v.criteria if c.ok is None] == ["backlog_growth", "stalls",
                                                            "achieved_rate", "window_coverage"]
    assert all("not computed" in r for r in v.reasons[2:5])
    assert v.reasons[-1] == ("inconclusive: backlog_growth, stalls, achieved_rate not computed")
    assert inconclusive_cause(v.reasons) == "backlog_growth, stalls, achieved_rate not computed"
    assert v.summary().startswith("inconclusive at 0.95 x max")
    # A short run: only the trend is missing (fewer than 4 intervals in the second half).
    short = fig(0.02, 50).model_copy(update={"backlog_slope": None})
    v = judge(short, p99_limit_s=1.0, max_backlog_s=1.0)
    assert v.verdict == "inconclusive" and not_computed(v.criteria) == ["backlog_growth"]
    # A failed criterion still decides: not-sustainable, whatever was not computed.
    v = judge(bare.model_copy(update={"p99_write_latency_s": 2.0}), p99_limit_s=1.0)
    assert v.verdict == "not-sustainable" and v.failed == ["p99"]
    # Stored criteria (dicts) read the same way.
    assert not_computed(c.model_dump() for c in judge(short).criteria) == ["backlog_growth"]


def test_the_verdict_word_of_a_stored_verdict():
    assert verdict_word({"verdict": "inconclusive", "sustainable": False}) == "inconclusive"
    # Records from before the verdict field: sustainable says it.
    assert verdict_word({"sustainable": False}) == "not-sustainable"
    assert verdict_word({"sustainable": True}) == "sustainable"
    assert verdict_word({}) is None
    # A record from before the inconclusive reasons: the window's coverage was the cause.
    assert inconclusive_cause(["p99 write latency 1 ms <= 1 s"]) == LEGACY_INCONCLUSIVE_CAUSE


def test_p99_over_the_bound_is_not_sustainable():
    v = judge(fig(1.5, 0), p99_limit_s=1.0)
    assert not v.sustainable
    assert v.reasons[0] == "p99 write latency 1.5 s > 1 s"


def test_p99_exactly_at_the_bound_is_sustainable():
    assert judge(fig(1.0, 0), p99_limit_s=1.0).sustainable


def test_growing_backlog_is_not_sustainable_even_with_low_p99():
    # The paper's point: the open loop's queue is the symptom of an unsustainable rate.
    v = judge(fig(0.5, 1000, rate=1000), max_backlog_s=1.0)
    assert not v.sustainable
    assert "the backlog grows" in v.reasons[1]
    assert judge(fig(0.5, 999, rate=1000), max_backlog_s=1.0).sustainable
    assert not judge(fig(0.5, 250, rate=1000), max_backlog_s=0.25).sustainable


def test_no_completed_write_is_not_sustainable():
    v = judge(fig(None, 0))
    assert not v.sustainable and "p99 unknown" in v.reasons[0]


def test_verdict_states_its_numbers():
    v = judge(fig(0.25, 10, rate=2000, u=0.9), p99_limit_s=0.5, max_backlog_s=2)
    d = v.to_json()
    assert d["p99_write_latency_s"] == 0.25 and d["p99_limit_s"] == 0.5
    assert d["final_queue_length"] == 10 and d["queue_limit"] == 4000
    assert d["utilization"] == 0.9 and d["arrival_rate"] == 2000
    assert "sustainable at 0.9 x max" in v.summary()


def test_percentile_from_buckets_matches_the_driver_rule():
    # 100 values: 98 in [1000,1015], 2 in [1_000_000, 1_015_624]
    buckets = [[1000, 1015, 98], [1_000_000, 1_015_624, 2]]
    assert percentile_from_buckets(buckets, 0.98) == 1007  # midpoint of the bucket with rank 98
    assert percentile_from_buckets(buckets, 0.99) == 1_000_000 + 15_624 // 2
    assert percentile_from_buckets(buckets, 0.99, lo=0, hi=1_004_000) == 1_004_000  # clamp
    assert percentile_from_buckets([], 0.99) is None


def test_queue_slope_and_worst_interval_p99():
    series = [interval(i, 100, queue=q, p99_us=p) for i, (q, p) in
              enumerate([(0, 100), (10, 300), (20, 200), (30, 100)])]
    assert queue_slope(series) == pytest.approx(10)
    assert p99_from_timeseries(series) == pytest.approx(300e-6)
    assert p99_from_timeseries(series, from_s=2) == pytest.approx(200e-6)


def test_timeseries_p99_bound_is_tighter_than_the_worst_interval_and_never_under_the_truth():
    # 99 quiet intervals (p99 1 ms, max 2 ms) and one with a stall (p90 5 ms, p99 2 s): the
    # stall's 100 writes are 1 % of 10,000: over 1.5 ms (the quiet p999) are at most 0.1 of
    # each quiet interval's writes and half the stall's (its p50 is under), 60 in all, so
    # the window's p99 is at most 1.5 ms — not the stall's 2 s p99 (the worst interval).
    quiet = {"count": 100, "p50": 200, "p90": 500, "p99": 1000, "p999": 1500, "max": 2000}
    stall = {"count": 100, "p50": 800, "p90": 5000, "p99": 2_000_000, "p999": 2_100_000,
             "max": 2_200_000}
    series = [interval(i, 100) | {"write_latency_us": dict(quiet)} for i in range(99)]
    series.append(interval(99, 100) | {"write_latency_us": dict(stall)})
    bound = p99_from_timeseries(series)
    assert bound == pytest.approx(1500e-6)
    lats = [iv["write_latency_us"] for iv in series]
    assert tail_over_upper_bound(lats, 1500) == pytest.approx(99 * 0.1 + 50)
    assert tail_over_upper_bound(lats, 1000) > 100  # one step lower is not a bound
    # with the stall in 20 intervals, 10 % of their writes over 5 ms are 2 % of the window:
    # the bound is the stall's p99
    series = [interval(i, 100) | {"write_latency_us": dict(stall if i % 5 == 0 else quiet)}
              for i in range(100)]
    assert p99_from_timeseries(series) == pytest.approx(2.0)


def test_running_figures_prefer_exact_sources():
    series = [interval(i, 100, queue=5 * i, p99_us=1000) for i in range(4)]
    summary = {"write_latency_us": {"p99": 2000.0},
               "open_loop": {"final_queue_length": 7, "achieved_rate": 99.0,
                             "max_queue_length": 40},
               "window": {"start_s": 0, "end_s": 4}}
    hist = {"histograms": {"write_latency": {"min": 10, "max": 5_000_000,
                                             "buckets": [[3_000_000, 3_046_874, 100]]}}}
    f = running_figures(0.95, 100, series, summary, hist)
    assert f.p99_write_latency_s == pytest.approx(3_023_437e-9)
    assert f.final_queue_length == 7 and f.achieved_rate == 99.0 and f.max_queue_length == 40
    f = running_figures(0.95, 100, series, summary, None)
    assert f.p99_write_latency_s == pytest.approx(2e-3)
    f = running_figures(0.95, 100, series, None, None)
    assert f.p99_write_latency_s == pytest.approx(1e-3)  # worst interval: conservative
    assert f.final_queue_length == 15
    with pytest.raises(VerdictError, match="open-loop"):
        running_figures(0.95, 100, [interval(0, 1)], None, None)


def _censored_figures(latencies_ms: dict[float, int], censored: int):
    """Figures from a histogram of writes at the given latencies, `censored` of them lower
    bounds (unfinished at the end)."""
    buckets = [[ms * 1e6, ms * 1e6, n] for ms, n in latencies_ms.items()]
    total = sum(latencies_ms.values())
    hist = {"histograms": {"write_latency": {"count": total, "buckets": buckets}}}
    summary = {"write_latency_us": {"censored": censored}, "open_loop": {"final_queue_length": 0}}
    series = [interval(i, 100) for i in range(4)]
    return running_figures(0.95, 100, series, summary, hist)


def test_censored_writes_make_the_p99_a_lower_bound():
    # 990 writes at 1 ms, 10 at 200 ms of which 5 were unfinished at the end: the p99 (rank
    # 990) is 1 ms; with the 5 taken as never finishing it is rank 995's, 200 ms.
    f = _censored_figures({1: 990, 200: 10}, censored=5)
    assert f.p99_write_latency_s == pytest.approx(1e-3)
    assert f.p99_upper_s == pytest.approx(0.2)
    p99 = next(c for c in judge(f, p99_limit_s=0.1).criteria if c.name == "p99")
    assert p99.ok is None and "5 writes unfinished" in p99.reason  # could be over 100 ms
    assert next(c for c in judge(f, p99_limit_s=0.5).criteria if c.name == "p99").ok is True
    # over the bound with the lower bounds already: certain
    f = _censored_figures({1: 900, 2000: 100}, censored=100)
    p99 = next(c for c in judge(f).criteria if c.name == "p99")
    assert p99.ok is False and "at least" in p99.reason
    # more unfinished writes than the 1 % tail: the upper bound is unbounded
    f = _censored_figures({1: 980, 200: 20}, censored=20)
    assert f.p99_upper_s is None
    assert next(c for c in judge(f).criteria if c.name == "p99").ok is None
    # none unfinished: as before
    f = _censored_figures({1: 980, 200: 20}, censored=0)
    assert next(c for c in judge(f).criteria if c.name == "p99").ok is True


def test_torn_timeseries_line_is_dropped(tmp_path):
    p = tmp_path / "timeseries.jsonl.partial"
    p.write_text(json.dumps(interval(0, 5)) + "\n" + '{"interval": 1, "t_st')
    assert [iv["interval"] for iv in read_timeseries(tmp_path / "timeseries.jsonl")] == [0]


# ---------------------------------------------------------------- recorded driver outputs


RECORDED = sorted(p for p in DATA.glob("recorded-*") if p.is_dir())


@pytest.mark.skipif(not RECORDED, reason="no recorded driver outputs in tests/data")
@pytest.mark.parametrize("point", RECORDED, ids=lambda p: p.name)
def test_recorded_point_arithmetic(point):
    """Recompute each recorded point's figures from its raw outputs and check them against
    the numbers the driver itself reports and the expectations recorded beside them."""
    expect = json.loads((point / "expect.json").read_text())
    testing = DriverOutputs.read(point / "testing")
    warmup = testing.summary["window"]["warmup_s"]
    mt = max_throughput(testing.intervals, warmup)
    # The driver computes its own figure over the same window: they must agree.
    assert mt.writes_per_s == pytest.approx(testing.driver_max_write_throughput(), rel=1e-9)
    assert mt.writes_per_s == pytest.approx(expect["max_write_throughput"], rel=1e-9)
    running = DriverOutputs.read(point / "running")
    rate = running.summary["open_loop"]["nominal_rate"]
    f = running_figures(expect["utilization"], rate, running.intervals, running.summary,
                        running.histograms)
    # p99 from the histogram equals the driver's summary p99 (same rule, same data).
    assert f.p99_write_latency_s == pytest.approx(
        running.summary["write_latency_us"]["p99"] / 1e6, rel=1e-3)
    v = judge(f, expect["p99_limit_s"], expect["max_backlog_s"])
    # The stall criterion judges the engine's own stall time (the tiering point's 0.275 s of
    # 8 s fails it; the interval rule saw no whole second without a write and passed it).
    assert v.stalled_s == pytest.approx(expect["stall_s"], rel=1e-9)
    assert v.stall_source == expect["stall_source"]
    assert v.sustainable is expect["sustainable"]
    assert v.final_queue_length == expect["final_queue_length"]


def test_final_queue_is_taken_before_a_drain():
    # Arrivals end at 3 s with 900 writes queued; a drain then empties the queue.
    series = [interval(0, 100, queue=0), interval(1, 100, queue=300),
              interval(2, 100, queue=900)]
    drained = interval(3, 900, queue=0)
    drained["drain"] = True
    summary = {"open_loop": {"final_queue_length": 0, "drain": {"limit_s": 5.0}}}
    f = running_figures(0.95, 100, [*series, drained], summary, None)
    assert f.final_queue_length == 900
    assert not judge(f, 1.0, 1.0).sustainable
    assert f.queue_slope_per_s == pytest.approx(450)


# ---------------------------------------------------------------- the whole-run criteria

SEED = 20261124  # the noise below is seeded: every run of the tests sees the same series


def open_loop_run(queues, *, rate=1000.0, writes=None):
    """A running phase of 1 s intervals at `rate` arrivals/s with the given queue lengths."""
    writes = writes or [rate] * len(queues)
    return [interval(i, w, queue=float(q), p99_us=20_000, arrivals=rate)
            for i, (q, w) in enumerate(zip(queues, writes, strict=True))]


def verdict_of(series, rate=1000.0, **bounds):
    f = running_figures(0.95, rate, series, None, None)
    return judge(f, 1.0, 1.0, **bounds)


def test_slowly_growing_backlog_is_not_sustainable():
    import numpy as np

    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    t = np.arange(1, 121)
    # +4 writes/s at 1000 arrivals/s: after 120 s the queue holds ~480 writes, under the
    # final-backlog bound of 1 s of arrivals (1000): only the trend gives it away.
    queues = np.clip(4 * t + rng.normal(0, 20, t.size), 0, None)
    v = verdict_of(open_loop_run(queues))
    assert v.final_queue_length < 1000
    assert not v.sustainable and v.failed == ["backlog_growth"]
    s = v.backlog_slope
    assert s is not None and s.ci_low <= 4 <= s.ci_high and s.ci_low > 1.0
    assert s.from_s == pytest.approx(60) and s.to_s == pytest.approx(120)
    assert "backlog grows steadily" in v.reasons[2]
    # The tolerance is a spec field: 1 % of the offered rate per second lets it pass.
    assert verdict_of(open_loop_run(queues), max_backlog_growth=0.01).sustainable


def test_noisy_flat_backlog_is_sustainable():
    import numpy as np

    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    queues = np.abs(rng.normal(200, 150, 120))  # noisy, heavy, but no trend
    queues[100] = 900  # and a burst near the end (not steady growth)
    v = verdict_of(open_loop_run(queues))
    assert v.sustainable, v.reasons
    s = v.backlog_slope
    assert s is not None and s.ci_low <= 0 <= s.ci_high


def test_backlog_growth_in_the_first_half_only_is_not_counted():
    # A queue that builds while the engine warms up, then holds steady.
    queues = [min(50 * i, 600) for i in range(60)]
    v = verdict_of(open_loop_run(queues))
    assert v.sustainable, v.reasons
    assert v.backlog_slope is not None and v.backlog_slope.slope == 0


def test_stalled_intervals_count_when_writes_waited():
    rate = 1000.0
    queues = [0] * 20 + [1000, 2000] + [0] * 78
    writes = [rate] * 20 + [0, 0] + [3 * rate] + [rate] * 77
    v = verdict_of(open_loop_run(queues, writes=writes))
    assert v.stalled_s == pytest.approx(2) and v.window_s == pytest.approx(100)
    assert "stalls" in v.failed  # 2 % of the window > 1 %
    assert verdict_of(open_loop_run(queues, writes=writes),
                      max_stalled_fraction=0.02).failed == []
    # An interval without arrivals and without writes is idle, not stalled.
    idle = open_loop_run([0] * 10, writes=[rate] * 5 + [0] * 5)
    for iv in idle[5:]:
        iv["queue"] = {"length": 0, "max": 0, "arrivals": 0}
    assert verdict_of(idle).stalled_s == 0


def test_achieved_rate_far_under_the_offered_rate_fails():
    f = fig(0.01, 0).model_copy(update={"achieved_rate": 850, "offered_rate": 1000})
    v = judge(f)
    assert v.failed == ["achieved_rate"] and "85.0%" in v.reasons[4]
    f = f.model_copy(update={"achieved_rate": 950})
    assert judge(f).sustainable


def test_verdict_json_names_failed_criteria_and_reads_back():
    from lsmbench.method.verdict import Verdict

    f = RunningFigures(utilization=0.95, arrival_rate=1000, p99_write_latency_s=2.0,
                       final_queue_length=5000, achieved_rate=500, offered_rate=1000)
    d = judge(f).to_json()
    assert d["schema"] == "lsmbench.verdict/2" and d["sustainable"] is False
    assert d["failed"] == ["p99", "final_backlog", "achieved_rate"]
    assert [c["name"] for c in d["criteria"]] == ["p99", "final_backlog", "backlog_growth",
                                                  "stalls", "achieved_rate", "window_coverage"]
    assert Verdict.model_validate(json.loads(json.dumps(d))).failed == d["failed"]


def test_a_window_without_the_deepest_merge_is_inconclusive_not_sustainable():
    from lsmbench.method.cycles import Coverage

    f = fig(0.01, 0).model_copy(update={"offered_rate": 1000})
    missed = Coverage(False, 3, 0, 120 << 20, "no merge into level 3 in the 45 s window")
    v = judge(f, coverage=missed)
    assert v.verdict == "inconclusive" and not v.sustainable and v.failed == []
    assert "no merge into level 3" in v.reasons[-2]
    assert v.reasons[-1] == "inconclusive: too few merges into the deepest level in the window"
    assert "inconclusive" in v.summary()
    seen = Coverage(True, 3, 1, 120 << 20, "1 merge(s) into level 3")
    v = judge(f, coverage=seen)
    assert v.verdict == "sustainable" and v.sustainable
    assert judge(f).verdict == "sustainable"  # no events: not checked, not held against it
    # A failed criterion decides, whatever the coverage.
    bad = f.model_copy(update={"p99_write_latency_s": 3.0})
    v = judge(bad, coverage=missed)
    assert v.verdict == "not-sustainable" and v.failed == ["p99"]


def test_timeseries_p99_bound_holds_on_random_windows():
    """The bound is never under the window's true p99 (nearest rank), whatever the intervals
    hold: random windows of heavy-tailed latencies, some intervals with a stall's tail."""
    import math
    import random

    seed = random.randrange(1 << 30)
    print("seed", seed)
    rng = random.Random(seed)

    def rank(values: list[float], q: float) -> float:
        return sorted(values)[max(0, math.ceil(q * len(values)) - 1)]

    for _ in range(200):
        window: list[float] = []
        series = []
        for i in range(rng.randint(1, 30)):
            n = rng.randint(1, 400)
            scale = rng.choice([1.0, 1.0, 1.0, 50.0, 2000.0])
            lat = [rng.paretovariate(1.5) * scale for _ in range(n)]
            window += lat
            summary = {"count": n, **{q: rank(lat, share) for q, share in
                                      (("p50", 0.5), ("p90", 0.9), ("p99", 0.99),
                                       ("p999", 0.999))}, "max": max(lat)}
            series.append(interval(i, n) | {"write_latency_us": summary})
        bound = p99_from_timeseries(series)
        assert bound is not None and bound * 1e6 >= rank(window, 0.99) - 1e-9, seed
        worst = max(iv["write_latency_us"]["p99"] for iv in series)
        assert bound * 1e6 <= worst + 1e-9, seed
