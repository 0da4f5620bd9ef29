"""cycles.py on synthetic time series with known answers."""

from __future__ import annotations

import random

import pytest
from lsmbench.method import cycles


def _flush(sealed_s: float, entries: int, took_s: float = 0.4) -> dict:
    return {"kind": "flush", "sealed_s": sealed_s, "start_s": sealed_s + 0.01,
            "end_s": sealed_s + took_s, "entries": entries, "output_level": 0,
            "output_bytes": entries * 1000}


def _merge(start_s: float, end_s: float, level: int, input_bytes: int) -> dict:
    return {"kind": "merge", "start_s": start_s, "end_s": end_s, "output_level": level,
            "deepest_input_level": level - 1, "inputs": 2, "input_bytes": input_bytes,
            "output_bytes": input_bytes, "entries": input_bytes // 1000, "moved": False}


def _series(evts: list[dict], seconds: int) -> list[dict]:
    """One-second intervals, each holding the events that ended in it."""
    ivs = [{"t_start_s": float(i), "t_end_s": float(i + 1), "events": []} for i in range(seconds)]
    for e in evts:
        ivs[min(int(e["end_s"]), seconds - 1)]["events"].append(e)
    return ivs


def test_cycle_rate_counts_whole_cycles_only() -> None:
    # A memtable of 1000 entries sealed every 2.5 s: 400 writes/s exactly,
    # whatever window is chosen.
    evts = [_flush(0.5 + 2.5 * k, 1000) for k in range(12)]
    ivs = _series(evts, 31)
    for start in (1.0, 3.3, 7.9):
        c = cycles.flush_cycle_throughput(ivs, start)
        assert c is not None
        assert abs(c.writes_per_s - 400.0) < 1e-9, (start, c)
        assert c.writes == 1000 * c.cycles
        assert start - 2.5 < c.window_start_s <= start  # the last sealing at or before it
    assert cycles.flush_cycle_throughput(ivs, 0.0) is None  # no sealing before the start
    c = cycles.flush_cycle_throughput(ivs, 3.0, to_s=20.0)
    assert c is not None and c.window_start_s == 3.0 and c.window_end_s == 18.0 and c.cycles == 6


def test_cycle_rate_is_stable_where_window_counting_is_quantized() -> None:
    # Writes arrive in bursts right after each flush (a stall-bound engine):
    # counting a fixed window moves in whole bursts, the cycle rate does not.
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    period, entries = 2.3, 3700
    rates = []
    for _ in range(5):
        offset = rng.uniform(0, period)
        evts = [_flush(offset + period * k, entries) for k in range(20)]
        ivs = _series(evts, 46)
        c = cycles.flush_cycle_throughput(ivs, 4.0, to_s=24.0)
        assert c is not None
        rates.append(c.writes_per_s)
    assert max(rates) - min(rates) < 1e-6 * max(rates), rates
    assert abs(rates[0] - entries / period) < 1e-6 * rates[0]


def test_cycle_rate_is_not_biased_toward_short_cycles() -> None:
    # Memtable cycles of 1 s, one in five stalled to 5 s (a merge stall): 1000 writes per
    # 1.8 s on average. Over many 20 s windows the rate from "last sealing before" edges
    # averages the true rate; spans from the first sealing in the window to the last leave
    # the cycle in progress out at both edges -- more often a long one -- and overestimate.
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    t, seals = 0.0, []
    while t < 6000:
        t += 1.0 if rng.random() < 0.8 else 5.0
        seals.append(t)
    ivs = _series([_flush(s, 1000, took_s=0.1) for s in seals], int(t) + 2)
    true_rate = 1000 * (len(seals) - 1) / (seals[-1] - seals[0])  # this realization's
    ours, first_to_last = [], []
    for _ in range(800):
        a = rng.uniform(10, t - 40)
        c = cycles.flush_cycle_throughput(ivs, a, a + 20)
        assert c is not None
        ours.append(c.writes_per_s)
        inside = [s for s in seals if a <= s <= a + 20]
        first_to_last.append(1000 * (len(inside) - 1) / (inside[-1] - inside[0]))
    mean_ours = sum(ours) / len(ours) / true_rate
    mean_first = sum(first_to_last) / len(first_to_last) / true_rate
    print(f"mean / true rate: ours {mean_ours:.3f}, first-to-last {mean_first:.3f}")
    assert abs(mean_ours - 1) < 0.06
    assert mean_first - mean_ours > 0.03


def test_the_testing_maximum_is_the_cycle_rate_unless_the_count_is_asked_for() -> None:
    from lsmbench.method.verdict import max_throughput_of_testing

    # Bursts of 1000 writes right after each sealing (every 2.5 s, from 0.5 s), a 30 s
    # phase measured from 4 s: the cycle rate is 400/s wherever the bursts fall, the interval
    # count is the bursts that land in [4, 30) over 26 s.
    seals = [0.5 + 2.5 * k for k in range(12)]
    ivs = _series([_flush(s, 1000) for s in seals], 30)

    def burst_after(delay_s: float) -> int:
        for iv in ivs:
            iv["ops"] = {"writes": 0.0}
        for s in seals:
            ivs[int(s + delay_s)]["ops"]["writes"] += 1000.0
        return sum(1 for s in seals if 4.0 <= s + delay_s < 30.0)

    n = burst_after(0.2)
    counted = max_throughput_of_testing(ivs, 4.0, "intervals")
    assert counted.method == "intervals"
    assert counted.writes_per_s == pytest.approx(n * 1000 / 26)
    assert counted.cycle_writes_per_s == pytest.approx(400.0)
    assert counted.interval_writes_per_s == counted.writes_per_s
    # Later bursts: one more lands in the window, the count moves by a burst; the cycle
    # rate, the default, does not.
    assert burst_after(1.1) == n + 1
    shifted = max_throughput_of_testing(ivs, 4.0, "intervals")
    chosen = max_throughput_of_testing(ivs, 4.0)
    assert shifted.writes_per_s == pytest.approx((n + 1) * 1000 / 26)
    assert chosen.method == "cycles" and chosen.writes_per_s == pytest.approx(400.0)
    assert chosen.interval_writes_per_s == pytest.approx(shifted.writes_per_s)
    # Without flush events "cycles" falls back on the count, and says so.
    for iv in ivs:
        iv["events"] = []
    bare = max_throughput_of_testing(ivs, 4.0)
    assert bare.method == "intervals" and bare.cycle_writes_per_s is None


def test_cycle_rate_needs_sealing_times_and_enough_cycles() -> None:
    evts = [_flush(1.0 + k, 100) for k in range(5)]
    assert cycles.flush_cycle_throughput(_series(evts, 8), 1.0, min_cycles=5) is None
    assert cycles.flush_cycle_throughput(_series(evts, 8), 1.0, min_cycles=4) is not None
    for e in evts:
        del e["sealed_s"]
    assert cycles.flush_cycle_throughput(_series(evts, 8), 1.0) is None
    assert cycles.flush_cycle_throughput([{"t_start_s": 0.0, "t_end_s": 1.0}], 0.0) is None


def test_window_without_a_merge_into_the_deepest_level_is_incomplete() -> None:
    testing = _series([_merge(1, 2, 1, 10 << 20), _merge(3, 9, 2, 80 << 20),
                       _merge(10, 12, 1, 10 << 20)], 15)
    shallow = _series([_merge(1, 2, 1, 10 << 20), _merge(5, 6, 1, 11 << 20)], 20)
    cov = cycles.window_coverage(testing, shallow, 3.0, 20.0)
    assert cov is not None and not cov.complete
    assert cov.deepest_level == 2 and cov.merges_into_deepest == 0
    assert "no merge into level 2" in cov.reason and "80.0 MiB" in cov.reason

    deep = _series([_merge(1, 2, 1, 10 << 20), _merge(2.5, 19.5, 2, 90 << 20)], 20)
    cov = cycles.window_coverage(testing, deep, 3.0, 18.0)  # spans the whole window
    assert cov is not None and cov.complete and cov.merges_into_deepest == 1
    # A deep merge that ended before the window does not count.
    cov = cycles.window_coverage(testing, deep, 19.6, 20.0)
    assert cov is not None and not cov.complete


def test_the_trees_deepest_level_sets_the_bar_when_testing_saw_no_merge_into_it() -> None:
    # The testing phase was too short to merge into level 2, but the running phase starts
    # from a tree whose data reaches level 2: merges into level 1 do not cover the cycle.
    testing = _series([_merge(1, 2, 1, 10 << 20), _merge(6, 7, 1, 10 << 20)], 10)
    running = _series([_merge(1, 2, 1, 10 << 20), _merge(5, 6, 1, 11 << 20)], 20)
    running[0]["engine"] = {"disk_components.L0": 1.0, "disk_components.L1": 3.0,
                            "disk_components.L2": 1.0, "disk_components.L3": 0.0}
    cov = cycles.window_coverage(testing, running, 0.0, 20.0)
    assert cov is not None and not cov.complete and cov.deepest_level == 2
    assert cycles.tree_deepest_level(running) == 2
    running = _with(running, [_merge(8, 15, 2, 90 << 20)])
    cov = cycles.window_coverage(testing, running, 0.0, 20.0)
    assert cov is not None and cov.complete and cov.deepest_level == 2
    # Without level metrics the testing phase's deepest merge (level 1) is the bar: merges
    # into level 1 or deeper count.
    del running[0]["engine"]
    assert cycles.tree_deepest_level(running) is None
    cov = cycles.window_coverage(testing, running, 0.0, 20.0)
    assert cov is not None and cov.deepest_level == 1 and cov.merges_into_deepest == 3


def test_no_merge_events_no_coverage_verdict() -> None:
    assert cycles.window_coverage(_series([], 5), _series([], 5), 0.0, 5.0) is None


# ---------------------------------------------------------------- the deepest merge's cycle


def _writing(seconds: int, per_s: float) -> list[dict]:
    """One-second intervals of per_s writes each."""
    return [{"t_start_s": float(i), "t_end_s": float(i + 1), "ops": {"writes": per_s},
             "events": []} for i in range(seconds)]


def _with(ivs: list[dict], evts: list[dict]) -> list[dict]:
    for e in evts:
        ivs[min(int(e["end_s"]), len(ivs) - 1)]["events"].append(e)
    return ivs


def test_merge_cycle_times_the_starts_of_merges_into_the_deepest_level() -> None:
    # Merges into level 2 start at 2, 12 and 22 s (10 s apart) and last 1, 5 and 2 s: their
    # ends are 10.5 s apart on average, the shallower merges come every second.
    deep = [_merge(2, 3, 2, 80 << 20), _merge(12, 17, 2, 90 << 20), _merge(22, 24, 2, 85 << 20)]
    shallow = [_merge(k + 0.1, k + 0.5, 1, 4 << 20) for k in range(28)]
    flushes = [_flush(0.5 + 2.5 * k, 250) for k in range(11)]
    mc = cycles.merge_cycle(_with(_writing(30, 100.0), deep + shallow + flushes))
    assert mc is not None
    assert mc.level == 2 and mc.merges == 3 and mc.phase_s == 30.0
    assert abs(mc.mean_s - 10.0) < 1e-9
    assert abs(mc.writes_per_s - 100.0) < 1e-9  # over 2..22 s
    assert abs(mc.writes - 1000.0) < 1e-6
    assert mc.writes_per_flush == 250
    assert cycles.MergeCycle.from_json(mc.to_json()) == mc


def test_merge_cycle_rate_is_the_rate_between_the_merges() -> None:
    # 100 writes/s for 10 s, then 300 writes/s: merges into level 1 at 12 and 20 s lie in the
    # fast part, so the cycle is 8 s of 300 writes/s, not of the phase's mean rate.
    ivs = _writing(10, 100.0) + [
        {"t_start_s": float(i), "t_end_s": float(i + 1), "ops": {"update": 300}, "events": []}
        for i in range(10, 30)]
    mc = cycles.merge_cycle(_with(ivs, [_merge(12, 13, 1, 1 << 20), _merge(20, 21, 1, 1 << 20)]))
    assert mc is not None and mc.merges == 2 and mc.mean_s == 8.0
    assert abs(mc.writes_per_s - 300.0) < 1e-9 and abs(mc.writes - 2400.0) < 1e-6
    assert mc.writes_per_flush is None  # no flush events


def test_one_merge_into_the_deepest_level_times_nothing() -> None:
    ivs = _with(_writing(24, 50.0), [_merge(3, 18, 2, 200 << 20), _merge(4, 5, 1, 4 << 20),
                                     _merge(9, 10, 1, 8 << 20)])
    mc = cycles.merge_cycle(ivs)
    assert mc is not None and mc.level == 2 and mc.merges == 1
    assert mc.mean_s is None and mc.writes is None
    assert abs(mc.writes_per_s - 50.0) < 1e-9  # the phase's rate
    assert cycles.merge_cycle(_writing(5, 10.0)) is None  # no merge told
    assert cycles.MergeCycle.from_json({"level": 2}) is None
    assert cycles.MergeCycle.from_json(None) is None


def test_merge_cycle_is_of_the_trees_deepest_level_when_the_phase_merged_above_it() -> None:
    ivs = _with(_writing(24, 50.0), [_merge(4, 5, 1, 4 << 20), _merge(9, 10, 1, 8 << 20)])
    assert cycles.merge_cycle(ivs).level == 1
    ivs[0]["engine"] = {"disk_components.L1": 2.0, "disk_components.L2": 1.0}
    mc = cycles.merge_cycle(ivs)
    assert mc is not None and mc.level == 2 and mc.merges == 0 and mc.mean_s is None


def test_writes_between_counts_the_share_of_cut_intervals() -> None:
    drain = {"t_start_s": 4.0, "t_end_s": 5.0, "ops": {"writes": 500}, "drain": True}
    ivs = [*_writing(4, 100.0), drain]
    assert abs(cycles.writes_between(ivs, 0.5, 2.25) - 175.0) < 1e-9
    assert cycles.writes_between(ivs, 3.0, 10.0) == 100.0  # the drain interval is left out
    assert cycles.writes_between(ivs, 6.0, 7.0) == 0.0


def test_scale_cycle_is_inverse_to_the_rate() -> None:
    assert abs(cycles.scale_cycle(41.0, 2260.0, 1130.0) - 82.0) < 1e-9
    assert abs(cycles.scale_cycle(40.0, 2000.0, 4000.0) - 20.0) < 1e-9
    assert cycles.scale_cycle(12.5, 300.0, 300.0) == 12.5
    with pytest.raises(ValueError):
        cycles.scale_cycle(10.0, 0.0, 100.0)


def test_a_level_the_testing_phase_created_once_does_not_raise_the_running_bar() -> None:
    # A quickstart run: the tree starts with level 3 deepest; the testing phase merged into
    # level 4 every ~13 s and, once, into a new level 5 (tiering deepens). The running phase,
    # from the same tree, decides on its merges into level 4; one into level 5 is no cycle.
    tree = {"disk_components.L0": 3.0, "disk_components.L3": 2.0, "disk_components.L4": 0.0}
    testing = _series([_merge(9, 9.5, 4, 90 << 20), _merge(22, 23, 4, 90 << 20),
                       _merge(35, 36, 4, 90 << 20), _merge(36, 41, 5, 270 << 20),
                       _merge(50, 52, 4, 90 << 20)], 60)
    testing[0]["engine"] = dict(tree)
    running = _series([_merge(9, 9.5, 4, 90 << 20), _merge(22, 23.7, 4, 90 << 20)], 25)
    running[0]["engine"] = dict(tree)
    assert cycles.phase_deepest_level(testing) == 4
    cov = cycles.window_coverage(testing, running, 0.0, 25.0)
    assert cov is not None and cov.complete and cov.deepest_level == 4
    assert cov.merges_into_deepest == 2
    assert cycles.merge_cycle(testing).level == 4
    # a second merge into level 5: the tree's new deepest level, the bar from then on
    testing = _with(testing, [_merge(55, 59, 5, 270 << 20)])
    assert cycles.phase_deepest_level(testing) == 5
    cov = cycles.window_coverage(testing, running, 0.0, 25.0)
    assert cov is not None and not cov.complete and cov.deepest_level == 5


def _one_level(seconds: int, majors: tuple[int, ...], tree_mib: int = 300) -> list[dict]:
    """A size-tiered phase: one level, a small merge into level 0 every second (2 MiB
    components), a merge of the whole tree starting at each of ``majors`` (20 s long); the
    engine tells the tree's bytes."""
    ivs = _writing(seconds, 100.0)
    for iv in ivs:
        iv["engine"] = {"disk_components.L0": 6.0, "disk_bytes": float(tree_mib << 20)}
    small = [_merge(k + 0.1, k + 0.6, 0, 4 << 20) for k in range(seconds - 1)]
    big = [_merge(m, m + 20, 0, (tree_mib - 20) << 20) for m in majors]
    return _with(ivs, small + big)


def test_a_one_level_trees_deepest_merges_are_those_that_rewrite_most_of_it() -> None:
    # Size-tiered keeps one level, so every merge is "into the deepest level"; the small ones
    # every second must not count as the merge cycle the window has to hold (a running phase
    # passed at 30 s on 30 of them, none touching the tree's largest component).
    testing = _one_level(120, majors=(10, 60))
    running = _one_level(40, majors=())
    cov = cycles.window_coverage(testing, running, 0.0, 40.0)
    assert cov is not None and not cov.complete and cov.deepest_level == 0
    assert cov.merges_into_deepest == 0 and "of the tree" in cov.reason
    running = _one_level(70, majors=(35,))
    cov = cycles.window_coverage(testing, running, 0.0, 70.0)
    assert cov is not None and cov.complete and cov.merges_into_deepest == 1
    # The cycle is the major merges' (50 s apart), not the small merges' (1 s).
    mc = cycles.merge_cycle(testing)
    assert mc is not None and mc.level == 0 and mc.merges == 2 and mc.mean_s == 50.0
    # Half the tree is the bar: a merge of 40 % is not major, of 60 % is.
    ivs = _with(_one_level(30, majors=()),
                [_merge(5, 9, 0, 120 << 20), _merge(12, 19, 0, 180 << 20)])  # of 300 MiB
    assert [e["input_bytes"] >> 20 for e in cycles.merges_into(ivs, 0)] == [180]
    # Without the tree's bytes every merge into level 0 counts, as before.
    for iv in ivs:
        del iv["engine"]["disk_bytes"]
    assert len(cycles.merges_into(ivs, 0)) == 31
    # A leveled tree's deepest merges are still those into its last level, of any size.
    leveled = _with(_writing(10, 100.0), [_merge(2, 3, 2, 1 << 20), _merge(4, 5, 1, 1 << 20)])
    leveled[0]["engine"] = {"disk_components.L2": 1.0, "disk_bytes": float(500 << 20)}
    assert [e["output_level"] for e in cycles.merges_into(leveled, 2)] == [2]


def _moves_into(level: int, seconds: int, every_s: int = 1) -> list[dict]:
    """A partitioned tree's moves: one 2 MiB file handed down as it is every ``every_s``."""
    return [dict(_merge(k + 0.1, k + 0.2, level, 2 << 20), inputs=1, output_bytes=0,
                 moved=True) for k in range(0, seconds - 1, every_s)]


def test_a_move_is_no_merge_into_the_deepest_level() -> None:
    # Partitioned leveling moves files into its last level while that level does not cover
    # their keys yet, many a second; a running phase passed at 30 s on 20 such moves and not
    # one merge. A move rewrites nothing: no merge cycle, no bar for the level it lands in.
    leveled = {"disk_components.L3": 50.0, "disk_bytes": float(300 << 20)}
    merges = [_merge(20, 30, 3, 20 << 20), _merge(80, 92, 3, 24 << 20)]
    testing = _with(_writing(120, 100.0), [*_moves_into(3, 120), *merges])
    running = _with(_writing(40, 100.0), _moves_into(3, 40))
    for iv in testing + running:
        iv["engine"] = dict(leveled)
    assert [e["moved"] for e in cycles.merges_into(testing, 3)] == [False, False]
    cov = cycles.window_coverage(testing, running, 0.0, 40.0)
    assert cov is not None and not cov.complete and cov.merges_into_deepest == 0
    assert cov.largest_merge_bytes == 24 << 20  # the largest merge, not a move
    mc = cycles.merge_cycle(testing)
    assert mc is not None and mc.level == 3 and mc.merges == 2 and mc.mean_s == 60.0
    # A level that only moves reach is not the phase's deepest; one merges recur into is.
    into4 = _with(_writing(30, 100.0), _moves_into(4, 30, every_s=5))
    into4[0]["engine"] = dict(leveled)
    assert cycles.phase_deepest_level(into4) == 3
    assert cycles.phase_deepest_level(_with(into4, [_merge(5, 9, 4, 8 << 20),
                                                    _merge(15, 19, 4, 8 << 20)])) == 4
    # Moves alone without level metrics: no level to name, nothing to judge.
    bare = _with(_writing(30, 100.0), _moves_into(2, 30))
    assert cycles.phase_deepest_level(bare) is None and cycles.merge_cycle(bare) is None
    assert cycles.window_coverage(bare, bare, 0.0, 30.0) is None
