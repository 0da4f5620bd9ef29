"""Repetitions as one result: the median and its order-statistic interval, the backlog trend,
the group verdict rule, and `lsmbench ls CAMPAIGN --json` on a small synthetic store written the
way store.py writes points (old verdict records without the new fields among them)."""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

import numpy as np
import pytest
from lsmbench.cli import main
from lsmbench.method.groups import (
    INCONCLUSIVE,
    NOT_SUSTAINABLE,
    SUSTAINABLE,
    Repetition,
    agreement_text,
    group_repetitions,
    make_group,
    make_repetition,
    repetitions_needed,
    repetitions_to_part,
)
from lsmbench.method.stats import achieved_confidence, backlog_slope, median_ci, widening
from lsmbench.store import Store
from repo_paths import TESTS
from scipy import stats

SEED = 1311  # every random sample below is drawn from this seed: the tests are deterministic


# ---------------------------------------------------------------- median and its interval


def test_median_ci_matches_scipy_quantile_test():
    print(f"seed {SEED}")
    x = np.random.default_rng(SEED).lognormal(0, 1, 15)
    e = median_ci(x)
    ci = stats.quantile_test(x, q=0, p=0.5).confidence_interval(0.95)
    assert e.median == np.median(x) and e.n == 15 and e.confidence == 0.95
    assert (e.ci_low, e.ci_high) == (ci.low, ci.high)
    # The interval is a pair of order statistics, ranks from the binomial distribution.
    k = int(stats.binom.ppf(0.025, 15, 0.5))  # P(Binom < k) <= 2.5 %
    s = np.sort(x)
    assert (e.ci_low, e.ci_high) == (s[k - 1], s[15 - k])
    assert e.ci_low <= e.median <= e.ci_high


def test_identical_samples_give_a_zero_width_interval():
    e = median_ci([0.25] * 7)
    assert e.median == e.ci_low == e.ci_high == 0.25


def test_few_repetitions_give_min_max_with_its_true_confidence_or_nothing():
    assert not median_ci([]).has_interval and median_ci([]).median is None
    for n in (1, 2):
        e = median_ci(list(range(n)))
        assert e.n == n and not e.has_interval and e.ci_low is None
    for n, conf in ((3, 0.75), (4, 0.875), (5, 0.9375)):
        values = [float(v) for v in range(10, 10 + n)]
        e = median_ci(values[::-1])
        assert (e.ci_low, e.ci_high) == (min(values), max(values))
        assert e.confidence == pytest.approx(conf) == achieved_confidence(n)
    assert median_ci([1.0, None, 2.0, float("nan"), 3.0]).n == 3  # missing values are skipped


def test_interval_covers_the_true_median_at_least_95_percent():
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    true_median = 1.0  # lognormal(0, s) has median e^0
    trials, n = 2000, 10
    covered = 0
    for _ in range(trials):
        e = median_ci(rng.lognormal(0, 1.5, n))
        assert e.ci_low <= e.median <= e.ci_high
        covered += e.ci_low <= true_median <= e.ci_high
    # The exact coverage for n = 10 is 1 - 2 P(Binom(10, 1/2) <= 1) = 97.9 %.
    assert covered / trials >= 0.95
    assert covered / trials == pytest.approx(achieved_confidence(10, 2), abs=0.015)


def test_the_repetitions_estimate_from_three_is_not_optimistic():
    """Two normal groups one standard deviation apart, 3 repetitions each: the "~N repetitions
    each would part them" estimate, at its median over trials, is a number at which the two
    groups' 95 % intervals do part at least half of the time. The estimate of old took the
    75 % interval of 3 repetitions for a 95 % one, and at its median they parted about a
    quarter of the time (plans of repetitions that then did not decide their claims)."""
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    new, old = [], []
    for _ in range(1000):
        a, b = median_ci(rng.normal(0, 1, 3)), median_ci(rng.normal(1, 1, 3))
        gap = abs(a.median - b.median)
        if gap == 0:
            continue
        new.append(repetitions_to_part(a, b, gap))
        halves = sum(max(e.median - e.ci_low, e.ci_high - e.median) for e in (a, b))
        old.append(repetitions_needed(3, halves, gap))

    def parted(n: int) -> float:
        trials = 300
        return sum(median_ci(rng.normal(0, 1, n)).ci_high < median_ci(rng.normal(1, 1, n)).ci_low
                   for _ in range(trials)) / trials

    assert widening(median_ci([1, 2, 3])) == pytest.approx(1.96 / 1.1503, rel=1e-3)
    assert widening(median_ci(range(10))) == 1.0  # a 95 % interval is not widened
    assert parted(int(statistics.median(new))) >= 0.5
    assert parted(int(statistics.median(old))) < 0.4


def test_backlog_slope_of_a_line_and_of_too_few_points():
    s = backlog_slope([1, 2, 3, 4, 5], [10, 13, 16, 19, 22])
    assert s is not None and s.slope == pytest.approx(3) and s.ci_low == s.ci_high == s.slope
    assert backlog_slope([1, 2, 3], [1, 2, 3]) is None
    assert backlog_slope([1, 1, 1, 1], [1, 2, 3, 4]) is None  # no spread in time


# ---------------------------------------------------------------- the group verdict


def rep(i: int, p99: float, ok: bool, *, tp: float = 1000.0, state: str = "complete",
        failed: list[str] | None = None, group: str = "g") -> Repetition:
    return Repetition(point=f"{group},rep={i}", group=group, rep=i, state=state,
                      verdict=(SUSTAINABLE if ok else NOT_SUSTAINABLE)
                      if state == "complete" else None,
                      sustainable=ok if state == "complete" else None,
                      failed_criteria=[] if ok else (failed or ["p99"]),
                      p99_limit_s=1.0, max_backlog_s=1.0, max_write_throughput=tp,
                      p99_write_latency_s=p99, final_backlog_s=0.0,
                      error=None if state == "complete" else "testing: boom")


def test_an_inconclusive_repetition_keeps_the_group_from_sustainable():
    unsure = rep(1, 0.5, True).model_copy(update={"verdict": "inconclusive",
                                                   "sustainable": False})
    g = make_group([rep(0, 0.4, True), unsure, rep(2, 0.6, True)])
    assert g.verdict == INCONCLUSIVE
    assert g.agree == {SUSTAINABLE: 2, NOT_SUSTAINABLE: 0, "inconclusive": 1}
    assert any("deepest level" in r for r in g.reasons)
    # Stored records carry the run's own word for it.
    r = make_repetition("g,rep=0", {"state": "complete", "rep": 0, "verdict": {
        "sustainable": False, "verdict": "inconclusive"}}, None)
    assert r.verdict == "inconclusive"


def test_the_group_says_why_its_repetitions_were_inconclusive_and_counts_them():
    said = rep(1, 0.5, True).model_copy(update={
        "verdict": "inconclusive", "sustainable": False,
        "reasons": ["backlog trend not computed", "inconclusive: backlog_growth not computed"]})
    legacy = rep(2, 0.5, True).model_copy(update={"verdict": "inconclusive",
                                                   "sustainable": False})
    g = make_group([rep(0, 0.4, True), said, legacy])
    assert ("2 of 3 repetitions inconclusive: backlog_growth not computed / the window saw no "
            "merge into the deepest level") in g.reasons
    assert agreement_text(g.agree) == "1 sustainable, 2 inconclusive of 3"
    # A window too short says how long the running phase would need; the group, the longest.
    short = [rep(i, 0.01, True).model_copy(update={
        "verdict": "inconclusive", "sustainable": False, "reasons": [
            "inconclusive: too few merges into the deepest level in the window",
            f"2 merges into level 7 needed; a running phase would need about {s} s (2 "
            "merges into level 7 at one per ~62 s, and the phase's start)"]})
        for i, s in ((1, 187), (2, 245))]
    g = make_group([rep(0, 0.01, True), *short])
    assert ("2 of 3 repetitions inconclusive: too few merges into the deepest level in the "
            "window (a running phase would need about 245 s)") in g.reasons
    assert agreement_text({SUSTAINABLE: 0, NOT_SUSTAINABLE: 2}) == "2 not-sustainable of 2"
    assert agreement_text({SUSTAINABLE: 0, NOT_SUSTAINABLE: 0}) == "-"
    one = make_group([rep(0, 0.4, True)])
    assert one.reasons[0] == "the repetition is sustainable"
    assert "1 run: too few for an interval, the verdict rests on one repetition" in one.reasons


def test_a_stored_criterion_not_computed_is_kept_with_the_repetition():
    criteria = [{"name": "p99", "ok": True, "reason": "ok"},
                {"name": "backlog_growth", "ok": None, "reason": "not computed"},
                {"name": "window_coverage", "ok": None, "reason": "not checked"}]
    r = make_repetition("g,rep=0", {"state": "complete", "rep": 0, "verdict": {
        "sustainable": True, "verdict": "sustainable", "criteria": criteria}}, None)
    # A record judged before the rule: its word stays; what was not computed is shown with it.
    assert r.verdict == SUSTAINABLE and r.not_computed == ["backlog_growth"]


def test_disagreeing_repetitions_are_inconclusive():
    g = make_group([rep(0, 0.4, True), rep(1, 1.2, False), rep(2, 0.6, True)])
    assert g.verdict == INCONCLUSIVE
    assert g.agree == {SUSTAINABLE: 2, NOT_SUSTAINABLE: 1}
    assert g.reasons[0] == "2 of 3 repetitions sustainable"
    assert ("p99 CI 400 ms\u20131.2 s (75%) straddles the 1 s bound: the median 600 ms is 40% "
            "from it; ~20 repetitions would decide it (an interval ~1/sqrt(n) as wide), or "
            "longer windows as far as they narrow the repetitions' spread"
            ) in g.reasons  # 3 x (0.6 x 1.704 / 0.4)^2 = 19.6: the 75 % interval as a 95 % one
    assert "failed criteria: p99 (1 of 3)" in g.reasons
    assert g.p99_write_latency_s.median == 0.6
    assert (g.p99_write_latency_s.ci_low, g.p99_write_latency_s.ci_high) == (0.4, 1.2)
    assert g.points == ["g,rep=0", "g,rep=1", "g,rep=2"]


def test_a_group_at_the_bound_says_no_length_decides_it():
    g = make_group([rep(0, 0.986, True), rep(1, 1.03, False), rep(2, 0.994, True)])
    assert g.verdict == INCONCLUSIVE
    straddle = [r for r in g.reasons if "straddles" in r]
    assert straddle and "the median 994 ms is within 1 % of it" in straddle[0]
    assert "the group sits at the bound" in straddle[0]
    # 3 % from the bound with a spread of a factor of four: 3 x (0.97 / 0.03)^2 ~ 3,136
    # repetitions is no advice; the text says no practical number decides it.
    g = make_group([rep(0, 0.5, True), rep(1, 1.03, False), rep(2, 2.0, False)])
    straddle = [r for r in g.reasons if "straddles" in r]
    assert straddle and "the median 1.03 s is 3% from it, too close for its spread: more " \
        "than 100 repetitions would be needed" in straddle[0]
    assert "~" not in straddle[0]


def test_unanimous_repetitions_decide():
    g = make_group([rep(i, 0.1 + i / 100, True) for i in range(6)])
    assert g.verdict == SUSTAINABLE and g.agree == {SUSTAINABLE: 6, NOT_SUSTAINABLE: 0}
    assert g.reasons[0] == "all 6 repetitions are sustainable"
    assert g.p99_write_latency_s.confidence == 0.95
    g = make_group([rep(i, 2.0 + i, False, failed=["backlog_growth"]) for i in range(3)])
    assert g.verdict == NOT_SUSTAINABLE and g.agree == {SUSTAINABLE: 0, NOT_SUSTAINABLE: 3}
    assert "failed criteria: backlog_growth (3 of 3)" in g.reasons


def test_an_interval_wholly_beyond_the_bound_outweighs_a_lucky_run():
    reps = [rep(0, 0.9, True)] + [rep(i, 1.5 + i / 10, False) for i in range(1, 10)]
    g = make_group(reps)
    assert g.verdict == NOT_SUSTAINABLE and g.agree == {SUSTAINABLE: 1, NOT_SUSTAINABLE: 9}
    assert g.p99_write_latency_s.ci_low > 1.0
    assert "is wholly above the 1 s bound" in g.reasons[0]
    assert "1 of 10 repetitions sustainable" in g.reasons


def test_one_repetition_has_no_interval_and_says_so():
    g = make_group([rep(0, 0.2, True)])
    assert g.verdict == SUSTAINABLE
    assert g.max_write_throughput.median == 1000 and g.max_write_throughput.ci_low is None
    assert any("1 run: too few for an interval" in r for r in g.reasons)


def test_failed_repetitions_are_named_not_counted():
    g = make_group([rep(0, 0.2, True), rep(1, 0.3, True), rep(2, 0, True, state="failed")])
    assert g.verdict == SUSTAINABLE and g.repetitions == 3 and g.complete == 2 and g.failed == 1
    assert g.agree == {SUSTAINABLE: 2, NOT_SUSTAINABLE: 0}
    assert "g,rep=2 failed, not counted: testing: boom" in g.reasons
    only_failed = make_group([rep(0, 0, True, state="failed")])
    assert only_failed.verdict == INCONCLUSIVE and only_failed.max_write_throughput.n == 0


def test_groups_keep_the_order_of_their_first_repetition():
    reps = [rep(0, 0.1, True, group="b"), rep(0, 0.1, True, group="a"),
            rep(1, 0.1, True, group="b")]
    assert [(g.group, g.repetitions) for g in group_repetitions(reps)] == [("b", 2), ("a", 1)]


def test_an_old_record_reads_its_figures_from_the_summary():
    # A point.json written before the verdict carried p50 / p99.9 / stalls / final backlog.
    record = {"point": "policy=x,rep=1", "params": {"policy": "x"}, "rep": 1,
              "state": "complete", "max_throughput": {"writes_per_s": 500.0},
              "verdict": {"sustainable": True, "p99_write_latency_s": 0.25, "p99_limit_s": 1.0,
                          "arrival_rate": 400.0, "final_queue_length": 100.0,
                          "max_backlog_s": 1.0, "reasons": ["p99 ..."]}}
    summary = {"write_latency_us": {"p50": 1000.0, "p99": 999_999.0, "p999": 300_000.0},
               "stalls": {"engine_stall_count": 3, "engine_stall_micros": 1_500_000}}
    r = make_repetition("policy=x,rep=1", record, summary)
    assert r.group == "policy=x" and r.rep == 1 and r.verdict == SUSTAINABLE
    assert r.p99_write_latency_s == 0.25  # the verdict's own p99 first
    assert (r.p50_write_latency_s, r.p999_write_latency_s) == (1e-3, 0.3)
    assert (r.stall_count, r.stall_s, r.final_backlog_s) == (3, 1.5, 0.25)
    assert r.failed_criteria == []
    # Without params and rep (hand-made), a point is a group of its own.
    assert make_repetition("a", {"state": "complete"}, None).group == "a"


# ---------------------------------------------------------------- ls --json on a synthetic store


def write_point(store: Store, campaign: str, params: dict[str, Any], rep_: int,
                verdict: dict[str, Any] | None, tp: float | None,
                summary: dict[str, Any] | None = None, state: str = "complete") -> str:
    pid = ",".join([*(f"{k}={v}" for k, v in params.items()), f"rep={rep_}"])
    w = store.begin_point(campaign, pid)
    if summary is not None:
        (w.path / "running").mkdir()
        (w.path / "running" / "summary.json").write_text(json.dumps(summary))
    w.commit({"schema": "lsmbench.point/1", "campaign": campaign, "point": pid,
              "params": params, "rep": rep_, "state": state, "published": None,
              "max_throughput": {"writes_per_s": tp} if tp is not None else None,
              "verdict": verdict, "sustainable": verdict["sustainable"] if verdict else None,
              "error": None if state == "complete" else {"stage": "testing",
                                                         "message": "boom"}})
    return pid


def old_verdict(p99: float) -> dict[str, Any]:
    return {"sustainable": p99 <= 1.0, "utilization": 0.95, "arrival_rate": 1000.0,
            "p99_write_latency_s": p99, "p99_limit_s": 1.0, "final_queue_length": 10.0,
            "queue_limit": 1000.0, "max_backlog_s": 1.0, "phase": "running",
            "reasons": [f"p99 write latency {p99} s"]}


def test_ls_json_gives_groups_with_median_ci_verdict_and_agreement(tmp_path, capsys,
                                                                     monkeypatch):
    store = Store(tmp_path)
    store.write_campaign("c", {"plan": {"points": [{}] * 7}})
    print(f"seed {SEED}", file=sys.stderr)  # stdout is the JSON under test
    rng = np.random.default_rng(SEED)
    tps = list(rng.uniform(900, 1100, 3))
    p99s = [0.4, 1.3, 0.7]  # one repetition over the 1 s bound: the group is inconclusive
    for i, (tp, p99) in enumerate(zip(tps, p99s, strict=True)):
        write_point(store, "c", {"policy": "tiering"}, i, old_verdict(p99), tp,
                    {"write_latency_us": {"p50": 10.0 * (i + 1), "p999": 2e6}})
    for i in range(3):  # a group whose repetitions agree
        v = old_verdict(0.1 + i / 100)
        v.update(failed=[], schema="lsmbench.verdict/2", engine_stall_count=float(i))
        # The stall figures are the running summary's (metrics.stall_time), as the verdict's.
        write_point(store, "c", {"policy": "leveling"}, i, v, 2000.0 + i,
                    {"stalls": {"engine_stall_count": float(i),
                                "engine_stall_micros": 1000.0 * i}})
    write_point(store, "c", {"policy": "leveling"}, 3, None, None, state="failed")

    assert main(["ls", "c", "--json", "--results", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["campaign"] == "c" and out["planned"] == 7
    groups = {g["group"]: g for g in out["groups"]}
    assert list(groups) == ["policy=leveling", "policy=tiering"]

    t = groups["policy=tiering"]
    assert t["repetitions"] == 3 and t["verdict"] == "inconclusive"
    assert t["agree"] == {"sustainable": 2, "not-sustainable": 1}
    assert "2 of 3 repetitions sustainable" in t["reasons"]
    assert any("straddles the 1 s bound" in r for r in t["reasons"])
    mt = t["max_write_throughput"]
    assert mt["median"] == pytest.approx(statistics.median(tps))
    assert (mt["ci_low"], mt["ci_high"]) == pytest.approx((min(tps), max(tps)))
    assert t["p99_write_latency_s"]["median"] == statistics.median(p99s)
    assert t["p50_write_latency_s"]["median"] == pytest.approx(20e-6)  # from summary.json
    assert t["points"] == [f"policy=tiering,rep={i}" for i in range(3)]

    lv = groups["policy=leveling"]
    assert lv["verdict"] == "sustainable" and lv["repetitions"] == 4 and lv["failed"] == 1
    assert lv["agree"] == {"sustainable": 3, "not-sustainable": 0}
    assert lv["stall_count"]["median"] == 1.0
    assert lv["stall_s"]["median"] == pytest.approx(0.001)
    assert any("rep=3 failed, not counted: testing: boom" in r for r in lv["reasons"])

    # The per-repetition rows stay reachable.
    rows = {r["point"]: r for r in out["points"]}
    assert len(rows) == 7
    assert rows["policy=tiering,rep=1"]["sustainable"] is False
    assert rows["policy=tiering,rep=1"]["group"] == "policy=tiering"
    assert rows["policy=leveling,rep=3"]["state"] == "failed"

    monkeypatch.setenv("COLUMNS", "1000")  # the table, unwrapped
    assert main(["ls", "c", "--results", str(tmp_path), "--repetitions"]) == 0
    text = capsys.readouterr().out
    assert "inconclusive" in text and "rep 1" in text
    assert "2 sustainable, 1 not-sustainable of 3" in text
    assert "straddles the 1 s bound" in text


def test_ls_of_the_recorded_report_fixture_reads_old_runs(capsys):
    results = TESTS / "fixtures" / "report" / "results"
    assert main(["ls", "report-fixture", "--json", "--results", str(results)]) == 0
    out = json.loads(capsys.readouterr().out)
    groups = {g["group"]: g for g in out["groups"]}
    assert groups["policy=tiering,memtable_bytes=1M"]["verdict"] == "sustainable"
    assert groups["policy=tiering,memtable_bytes=1K"]["verdict"] == "inconclusive"
    point = json.loads((results / "report-fixture" / "policy=leveling,memtable_bytes=1M,rep=0" /
                        "point.json").read_text())
    lv = groups["policy=leveling,memtable_bytes=1M"]
    assert lv["p99_write_latency_s"] == {"median": point["verdict"]["p99_write_latency_s"],
                                         "ci_low": None, "ci_high": None, "confidence": None,
                                         "n": 1}


# ---------------------------------------------------------------- the maximum sustainable rate


def searched(i: int, u: float | None, max_tp: float = 2000.0, group: str = "s") -> Repetition:
    return rep(i, 0.2, u is not None, group=group).model_copy(update={
        "searched": True, "max_sustainable_utilization": u,
        "max_sustainable_rate": u * max_tp if u is not None else None})


def test_a_group_search_gives_the_median_and_the_rate_every_repetition_sustained():
    g = make_group([searched(0, 0.78), searched(1, 0.84, 1900.0), searched(2, 0.81)])
    s = g.search
    assert s is not None and s.runs == 3 and s.none == 0
    assert s.utilization.median == 0.81 and (s.utilization.ci_low, s.utilization.ci_high) == (
        0.78, 0.84)
    assert s.rate.median == pytest.approx(1596.0)  # 0.84 x 1900: rates differ in their maxima
    assert (s.lowest_utilization, s.lowest_rate) == (0.78, pytest.approx(1560.0))
    assert g.reasons[0] == s.reason == (
        "maximum sustainable rate: median 1,596 writes/s, median utilization 0.81 x max, over "
        "3 repetitions; "
        "each sustained at least 1,560 writes/s (0.78 x max)")


def test_a_repetition_without_an_answer_leaves_no_promise():
    g = make_group([searched(0, 0.7), searched(1, None), searched(2, 0.74)])
    s = g.search
    assert s is not None and s.none == 1 and s.lowest_utilization is None
    assert s.lowest_rate is None and s.utilization.n == 2
    assert "1 of 3 found none" in s.reason
    none = make_group([searched(0, None)]).search
    assert none is not None and none.rate.median is None
    assert none.reason.startswith("maximum sustainable rate: none, not even the search's low")
    one = make_group([searched(0, 0.9)]).search
    assert one is not None and one.reason == (
        "maximum sustainable rate: 1,800 writes/s (0.9 x max)")
    # Without a search, no search figures; failed repetitions do not count.
    assert make_group([rep(0, 0.2, True)]).search is None
    failed = searched(1, 0.5).model_copy(update={"state": "failed"})
    s = make_group([searched(0, 0.9), failed]).search
    assert s is not None and s.runs == 1


def test_ls_shows_the_maximum_sustainable_rate(tmp_path, capsys, monkeypatch):
    store = Store(tmp_path)
    store.write_campaign("c", {"plan": {"points": [{}] * 3}})
    for i, u in enumerate((0.75, 0.8125, None)):
        v = old_verdict(0.1 if u is not None else 2.0)
        pid = write_point(store, "c", {"policy": "leveling"}, i, v, 2000.0)
        rec = store.point("c", pid)
        assert rec is not None
        store.update_point(rec, search={
            "schema": "lsmbench.search/1", "utilization": u,
            "rate": u * 2000.0 if u is not None else None, "steps": []})
    assert main(["ls", "c", "--json", "--results", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    (g,) = out["groups"]
    assert g["search"]["runs"] == 3 and g["search"]["none"] == 1
    assert g["search"]["rate"]["median"] == pytest.approx(1562.5)
    rows = {r["point"]: r for r in out["points"]}
    assert rows["policy=leveling,rep=1"]["max_sustainable_rate"] == 1625.0
    assert rows["policy=leveling,rep=2"]["searched"] is True
    assert rows["policy=leveling,rep=2"]["max_sustainable_utilization"] is None
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["ls", "c", "--results", str(tmp_path), "--repetitions"]) == 0
    text = capsys.readouterr().out
    assert "max sustainable" in text and "1,562 @ 0.781x (1 none)" in text
    assert "1,625 @ 0.812x" in text and "none" in text


def test_the_progress_line_says_inconclusive_not_unsustainable() -> None:
    from lsmbench.progress import point_line

    base = {"state": "complete", "point": "p", "max_throughput": {"writes_per_s": 1000.0}}
    inconclusive = {**base, "verdict": {"verdict": "inconclusive", "sustainable": False,
                                        "p99_write_latency_s": 0.08}}
    failing = {**base, "verdict": {"verdict": "not-sustainable", "sustainable": False}}
    passing = {**base, "verdict": {"verdict": "sustainable", "sustainable": True}}
    # The JSON's words, and the cause of an inconclusive run: a record from before the causes
    # were said had the window's coverage as its only one.
    assert "; inconclusive (the window saw no merge into the deepest level)" in point_line(
        inconclusive)
    said = {**inconclusive, "verdict": {**inconclusive["verdict"],
                                        "reasons": ["inconclusive: backlog_growth not computed"]}}
    assert "; inconclusive (backlog_growth not computed)" in point_line(said)
    assert point_line(failing).endswith("; not-sustainable")
    assert point_line(passing).endswith("; sustainable")
    # Records from before the verdict field: sustainable says it, in the same words.
    old = {**base, "verdict": {"sustainable": False}}
    assert point_line(old).endswith("; not-sustainable")
    assert point_line({**base, "verdict": None}).endswith("no verdict")
