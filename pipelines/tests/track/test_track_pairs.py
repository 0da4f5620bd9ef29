"""Paired nights in the history: the build under test against its reference (spec pair:),
regressions that alarm until acknowledged, improvements that only inform, and the nightly
job's default reference, the last accepted night (lsmbench.track.changes)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from lsmbench.cli import main
from lsmbench.track.changes import (
    accepted_commit,
    find_changes,
    paired_changes,
    paired_nights,
    paired_state,
)
from lsmbench.track.history import Ack, History, now_iso
from lsmbench.util.exits import EXIT_OK, EXIT_REGRESSION

DAY = 86400.0


def night(h: History, n: int, commit: str, reference: str | None,
          ratios: dict[str, tuple[float, float, float]]) -> int:
    """A paired night: metric -> (ratio, ci_low, ci_high) of group g against reference."""
    run = {"campaign": "nightly", "date": f"2026-10-{n:02d}T02:00:00+00:00",
           "finished": 1.7e9 + n * DAY, "commit": commit, "dirty": False, "spec_hash": "s",
           "testbed_key": "t", "testbed": [{}], "results_dir": f"/r/{n}"}
    values = [{"group": f"g,build={b}", "metric": m, "median": 100.0, "ci_low": 99.0,
               "ci_high": 101.0, "n": 3} for m in ratios for b in ("reference", "candidate")]
    paired = [{"group": "g", "metric": m, "ratio": r, "ci_low": lo, "ci_high": hi, "n": 3,
               "reference_median": 100.0, "candidate_median": 100.0 * r,
               "reference_commit": reference} for m, (r, lo, hi) in ratios.items()
              if reference is not None]  # the first night runs unpaired
    return h.add_run(run, values, [], paired)


def test_a_regression_alarms_every_night_until_acknowledged(tmp_path):
    h = History(tmp_path / "h.sqlite")
    night(h, 1, "aaa", None, {"max_write_throughput": (1.0, 0.98, 1.02)})
    assert paired_changes(h) == [] and accepted_commit(h, "nightly") == "aaa"
    # 7 % slower than aaa, the whole interval under 1 - 5 %/2: a regression.
    night(h, 2, "bbb", "aaa", {"max_write_throughput": (0.93, 0.90, 0.96)})
    (c,) = paired_changes(h)
    assert (c.kind, c.direction, c.status) == ("paired", "regression", "open")
    assert (c.commit_before, c.commit_after) == ("aaa", "bbb")
    assert c.change == pytest.approx(-0.07) and (c.ci_low, c.ci_high) == (0.90, 0.96)
    # Not accepted: the next night is held against aaa again, and is the same regression.
    assert accepted_commit(h, "nightly") == "aaa"
    night(h, 3, "ccc", "aaa", {"max_write_throughput": (0.94, 0.91, 0.97)})
    (again,) = paired_changes(h)
    assert again.id == c.id and again.status == "open" and again.run_id == c.run_id
    assert c.id in {x.id for x in find_changes(h).open}
    # Acknowledged: no longer open, and the night after it moves the reference on.
    h.add_ack(Ack(change_id=c.id, campaign="nightly", group="g",
                  metric="max_write_throughput", direction="regression", run_id=c.run_id,
                  why="a slower but safer flush", acked_at=now_iso()))
    (acked,) = paired_changes(h)
    assert acked.status == "acked" and not find_changes(h).open
    assert accepted_commit(h, "nightly") == "ccc"


def test_a_regression_that_goes_away_is_recovered(tmp_path):
    h = History(tmp_path / "h.sqlite")
    night(h, 1, "aaa", None, {"write_p99_ms": (1.0, 0.9, 1.1)})
    # p99 is better lower: 30 % higher is worse.
    night(h, 2, "bbb", "aaa", {"write_p99_ms": (1.3, 1.15, 1.45)})
    assert [c.status for c in paired_changes(h)] == ["open"]
    night(h, 3, "ccc", "aaa", {"write_p99_ms": (1.0, 0.96, 1.04)})  # undecided
    assert [c.status for c in paired_changes(h)] == ["recovered"]
    # Not worse, but not known to be as good either: the reference stays.
    assert accepted_commit(h, "nightly") == "aaa"
    night(h, 4, "ddd", "aaa", {"write_p99_ms": (1.0, 0.98, 1.02)})  # not worse
    assert accepted_commit(h, "nightly") == "ddd"


def test_improvements_inform_and_undecided_nights_say_nothing(tmp_path):
    h = History(tmp_path / "h.sqlite")
    night(h, 1, "aaa", None, {"max_write_throughput": (1.0, 0.98, 1.02)})
    night(h, 2, "bbb", "aaa", {"max_write_throughput": (1.08, 1.05, 1.11),
                               "write_p99_ms": (0.99, 0.90, 1.08)})  # straddles: undecided
    (c,) = paired_changes(h)
    assert (c.direction, c.status, c.metric) == ("improvement", "improvement",
                                                 "max_write_throughput")
    assert not find_changes(h).open
    # The undecided p99 keeps the reference where it was.
    assert accepted_commit(h, "nightly") == "aaa"


def test_track_report_exits_4_on_an_open_paired_regression(tmp_path, capsys):
    path = tmp_path / "h.sqlite"
    h = History(path)
    night(h, 1, "aaa", None, {"max_write_throughput": (1.0, 0.98, 1.02)})
    night(h, 2, "bbb", "aaa", {"max_write_throughput": (0.9, 0.86, 0.94)})
    h.close()
    out = tmp_path / "report"
    code = main(["track", "report", "--history", str(path), "--out", str(out)])
    assert code == EXIT_REGRESSION, capsys.readouterr().err
    doc = json.loads((out / "regressions.json").read_text())
    assert [c["kind"] for c in doc["open"]] == ["paired"]
    page = (out / "history.html").read_text()
    table = page[page.index('id="paired-table"'):page.index("</table>", page.index(
        'id="paired-table"'))]
    assert table.count('<tr class="paired-') == 1  # the first night ran unpaired
    assert '<tr class="paired-worse">' in table and "[0.860, 0.940]" in table
    assert "REGRESSION p-" in capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO((out / "history-paired.csv").read_text())))
    assert [(r["commit"], r["reference_commit"], r["metric"]) for r in rows] == [
        ("bbb", "aaa", "max_write_throughput")]  # the unpaired first night has no ratio
    assert [float(rows[0][k]) for k in ("ratio", "ci_low", "ci_high")] == [0.9, 0.86, 0.94]
    assert main(["track", "ack", doc["open"][0]["id"], "--why", "expected",
                 "--history", str(path)]) == EXIT_OK
    assert main(["track", "report", "--history", str(path), "--out", str(out)]) == EXIT_OK


def test_a_history_without_paired_runs_reads_as_before(tmp_path):
    h = History(tmp_path / "h.sqlite")
    night(h, 1, "aaa", None, {})
    assert h.paired_values() == [] and paired_changes(h) == []
    assert accepted_commit(h, "nightly") == "aaa"


# ---------------------------------------------------------------- the nightly alarm's detector


def paired_night(h: History, n: int, reference: int, pairs: list[tuple[float, float]]) -> int:
    """Night n of build c<n> against build c<reference>, with its pairs (what track record
    keeps since the paired detector pools nights)."""
    from lsmbench.track.paired import paired_ratio

    r = paired_ratio(pairs)
    run = {"campaign": "nightly", "date": f"night {n}", "finished": 1.7e9 + n * DAY,
           "commit": f"c{n}", "dirty": False, "spec_hash": f"s{reference}",
           "testbed_key": "t", "testbed": [{}], "results_dir": f"/r/{n}"}
    paired = [{"group": "g", "metric": "max_write_throughput", "ratio": r.ratio,
               "ci_low": r.low, "ci_high": r.high, "n": r.n,
               "reference_median": 100.0, "candidate_median": 100.0 * r.ratio,
               "reference_commit": f"c{reference}", "pairs": [list(p) for p in pairs]}]
    return h.add_run(run, [], [], paired)


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_the_nightly_alarm_is_the_detector_the_synthetic_suite_scores(tmp_path, seed):
    """Nights of a drawn testbed with a 5 % regression, recorded as the nightly job would
    (each night against the commit accepted_commit names, an open regression acknowledged
    after 3 nights): every night, the history's open regression and reference are the ones
    the synthetic suite's replay of the same testbed has."""
    from lsmbench.track import synthetic_paired as sp

    print(f"seed {seed}")
    spec = sp.PairedSpec(kind="step", step=-0.05, nights=36, step_from=12, step_until=20)
    (series,) = sp.draw_paired(spec, 1, seed)
    config = sp.PairedDetectorConfig()
    expected = sp.replay_paired(series, config)
    h = History(tmp_path / "h.sqlite")
    night_of = {}
    reported: dict[str, int] = {}
    for t in range(spec.nights):
        accepted = accepted_commit(h, "nightly")
        reference = int(accepted[1:]) if accepted else -1
        assert reference == expected[t].reference, f"night {t}"
        night_of[paired_night(h, t, reference, series.pairs(t, reference))] = t
        open_ = [c for c in paired_changes(h) if c.status == "open"]
        alarm = night_of[open_[0].run_id] if open_ else None
        assert alarm == expected[t].alarm, f"night {t}"
        for c in open_:
            reported.setdefault(c.id, t)
            if t - reported[c.id] + 1 >= config.ack_after:
                h.add_ack(Ack(change_id=c.id, campaign="nightly", group="g",
                              metric=c.metric, direction="regression", run_id=c.run_id,
                              why="seen", acked_at=now_iso()))
    found = [n.night for n in expected if n.alarm is not None]
    assert found and found[0] - series.change_at <= 4  # the drawn regression, not noise


def test_pooled_nights_see_a_regression_one_night_alone_cannot(tmp_path):
    """Three pairs a night, 1 % noise: a 5 % regression's first night alone has an interval
    that straddles the boundary (what the history judged before it kept the pairs); with the
    testbed's spread pooled from the nights before, the nightly alarm opens that night."""
    import numpy as np
    from lsmbench.track.paired import classify, paired_ratio

    rng = np.random.default_rng(5)
    print("seed 5")
    h = History(tmp_path / "h.sqlite")
    for t in range(10):  # A/A nights, each against the last accepted build, as nightly runs
        accepted = accepted_commit(h, "nightly")
        pairs = [(100.0, 100.0 * float(np.exp(e))) for e in rng.normal(0, 0.01, 3)]
        paired_night(h, t, int(accepted[1:]) if accepted else -1, pairs)
        assert [c for c in paired_changes(h) if c.direction == "regression"] == []
    good = accepted_commit(h, "nightly")
    assert good is not None
    bad = [(100.0, 95.0 * float(np.exp(e))) for e in (0.02, -0.015, 0.01)]
    assert classify(paired_ratio(bad), "higher", 0.05) == "undecided"
    paired_night(h, 10, int(good[1:]), bad)
    (c,) = [c for c in paired_changes(h) if c.direction == "regression"]
    assert (c.status, c.commit_before, c.commit_after) == ("open", good, "c10")
    assert c.change == pytest.approx(-0.045, abs=0.01) and c.ci_high < 0.975
    assert accepted_commit(h, "nightly") == good  # held against the build before it


def test_a_history_recorded_before_pairs_were_kept_gains_the_column(tmp_path):
    import sqlite3

    path = tmp_path / "h.sqlite"
    h = History(path)
    night(h, 1, "aaa", None, {})
    night(h, 2, "bbb", "aaa", {"max_write_throughput": (0.93, 0.90, 0.96)})
    h.close()
    db = sqlite3.connect(path)  # as a history written before the column existed
    db.execute("ALTER TABLE paired_values DROP COLUMN pairs")
    db.commit()
    db.close()
    h = History(path)
    assert [v.pairs for v in h.paired_values()] == [None]
    assert [c.status for c in paired_changes(h)] == ["open"]  # judged by its interval
    paired_night(h, 3, 1, [(100.0, 93.0), (100.0, 94.0), (100.0, 92.5)])
    assert [v.pairs is not None for v in h.paired_values()] == [False, True]


def test_a_night_whose_own_pairs_agree_by_chance_is_judged_with_the_testbed_spread(tmp_path,
                                                                                  capsys):
    """Five A/A nights whose pairs spread ~4 %, then one whose 3 pairs happen to agree within
    0.1 %, 3 % up: its own interval (t with 2 degrees of freedom on that tiny spread) is
    wholly past the improvement boundary, the testbed's spread says it is noise -- no
    improvement is listed, and the page shows the night's interval with the testbed's spread."""
    from lsmbench.track.paired import paired_ratio

    h = History(tmp_path / "h.sqlite")
    night(h, 0, "c0", None, {})
    spread = [(100.0, 104.0), (100.0, 96.5), (100.0, 100.5)]
    for n in range(1, 6):
        paired_night(h, n, 0, spread)
    lucky = [(100.0, 103.0), (100.0, 103.1), (100.0, 102.95)]
    own = paired_ratio(lucky)
    assert own.low > 1.025  # by its own pairs alone: "better"
    run = paired_night(h, 6, 0, lucky)
    assert paired_changes(h) == []
    state = next(n for nights in paired_nights(h, "nightly").values() for n in nights
                 if n.value.run_id == run)
    assert state.night_low < 1.0 < state.night_high and paired_state(state) == "same"
    h.close()
    out = tmp_path / "report"
    assert main(["track", "report", "--history", str(tmp_path / "h.sqlite"), "--out",
                 str(out)]) == EXIT_OK, capsys.readouterr().err
    page = (out / "history.html").read_text()
    assert f"[{state.night_low:.3f}, {state.night_high:.3f}]" in page
    assert f"[{own.low:.3f}, {own.high:.3f}]" not in page
    assert "paired-better" not in page
    rows = list(csv.DictReader(io.StringIO((out / "history-paired.csv").read_text())))
    mine = next(r for r in rows if int(r["run_id"]) == run)
    assert [float(mine[k]) for k in ("ci_low", "ci_high", "testbed_ci_low",
                                     "testbed_ci_high")] == [
        own.low, own.high, state.night_low, state.night_high]


def test_a_paired_builds_raw_series_does_not_alarm_when_the_night_moves_both(tmp_path):
    """The testbed gets 30 % slower from night 8 on, for both builds alike: their ratio stays
    1, and the builds' raw series are left to it (no change point, a note saying why); an
    unpaired group's raw series with the same step is still detected."""
    from lsmbench.track.changes import PAIRED_BUILD_NOTE

    h = History(tmp_path / "h.sqlite")
    for n in range(16):
        level = 100.0 if n < 8 else 70.0
        wobble = 1.0 + 0.01 * ((n * 7) % 3 - 1)
        run = {"campaign": "nightly", "date": f"2026-10-{n + 1:02d}T02:00:00+00:00",
               "finished": 1.7e9 + n * DAY, "commit": f"c{n}", "dirty": False,
               "spec_hash": "s", "testbed_key": "t", "testbed": [{}], "results_dir": f"/r/{n}"}
        values = [{"group": g, "metric": "max_write_throughput", "median": level * wobble,
                   "ci_low": level * wobble * 0.99, "ci_high": level * wobble * 1.01, "n": 3}
                  for g in ("g,build=reference", "g,build=candidate", "unpaired")]
        pairs = [[level, level * 1.002], [level, level * 0.999], [level, level * 1.001]]
        paired = [{"group": "g", "metric": "max_write_throughput", "ratio": 1.0007,
                   "ci_low": 0.996, "ci_high": 1.005, "n": 3, "reference_median": level,
                   "candidate_median": level, "reference_commit": "c0", "pairs": pairs}]
        h.add_run(run, values, [], paired if n else [])
    analysis = find_changes(h)
    assert [(c.group, c.direction) for c in analysis.changes] == [("unpaired", "regression")]
    notes = {s.group: {seg.note for seg in s.segments} for s in analysis.series}
    assert notes["g,build=candidate"] == notes["g,build=reference"] == {PAIRED_BUILD_NOTE}
    assert notes["unpaired"] == {None}
