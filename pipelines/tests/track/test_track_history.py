"""`lsmbench track record`: what a recorded run holds, the keys that cut series into segments,
and bad input (exit 2, nothing written)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from lsmbench.cli import main
from lsmbench.report.load import group_rows, read_campaign
from lsmbench.track.history import History
from lsmbench.track.record import campaign_run, record
from track_nights import FIXTURE, GROUPS, adaptive_night, make_night


def test_a_recorded_run_holds_each_groups_medians_and_intervals(tmp_path):
    camp = make_night(tmp_path, 3, throughput_scale=1.1, commit="a" * 40)
    h = History(tmp_path / "h.sqlite")
    _, added = record(h, camp)
    assert added
    [run] = h.runs()
    assert run.commit == "a" * 40 and run.campaign == "report-fixture"
    values = {(v.group, v.metric): v for v in h.values()}
    # The failed point's group has no numbers; the two complete ones have every metric the
    # campaign report shows, equal to the report's own group estimates.
    assert {g for g, _ in values} == set(GROUPS)
    expected = {gr.id: gr.estimates for gr in group_rows(read_campaign(camp).points)}
    for (group, metric), v in values.items():
        assert v.median == pytest.approx(expected[group][metric].median)
        assert v.n == 1
    thr = values[(GROUPS[0], "max_write_throughput")].median
    base = json.loads((FIXTURE / "policy=leveling,memtable_bytes=1M,rep=0" /
                       "point.json").read_text())["max_throughput"]["writes_per_s"]
    assert thr == pytest.approx(base * 1.1)
    assert {v.group: v.verdict for v in h.verdicts()}.keys() >= set(GROUPS)


def test_recording_the_same_run_twice_adds_nothing(tmp_path):
    camp = make_night(tmp_path, 1)
    h = History(tmp_path / "h.sqlite")
    first = record(h, camp)
    again = record(h, camp)
    assert first == (first[0], True) and again == (first[0], False)
    assert len(h.runs()) == 1


def test_kernel_changes_the_testbed_key_host_name_does_not(tmp_path):
    keys = {}
    for name, kw in {"base": {}, "kernel": {"kernel": "7.0.0-test"}}.items():
        camp = make_night(tmp_path / name, 1, **kw)
        keys[name] = campaign_run(camp)[0]["testbed_key"]
    renamed = make_night(tmp_path / "renamed", 1)
    for fp in renamed.glob("*/fingerprint.json"):
        d = json.loads(fp.read_text())
        d["hostname"] = "another-name"
        fp.write_text(json.dumps(d))
    keys["renamed"] = campaign_run(renamed)[0]["testbed_key"]
    assert keys["base"] != keys["kernel"]
    assert keys["base"] == keys["renamed"]


def test_the_io_scheduler_by_either_name_is_one_testbed_and_a_change_of_it_is_another():
    """Fingerprints say io_scheduler since the merge scheduler and the disk's I/O scheduler were
    spelled apart; older ones say scheduler. Both read as one testbed identity (its hash, the
    testbed key, unchanged), and another I/O scheduler is another testbed."""
    from lsmbench.fingerprint import testbed_identity
    from lsmbench.util.digest import canonical_hash

    def key(disk: dict) -> str:
        return canonical_hash(testbed_identity({"kernel": "6.1", "disk": disk}, None))

    old = key({"model": "x", "scheduler": "mq-deadline [none]"})
    assert key({"model": "x", "io_scheduler": "mq-deadline [none]"}) == old
    assert key({"model": "x", "io_scheduler": "[mq-deadline] none"}) != old
    assert testbed_identity({"disk": {"io_scheduler": "[bfq] none"}}, None)[
        "disk_scheduler"] == "bfq"


def test_a_measured_setting_changes_the_spec_hash_the_description_does_not(tmp_path):
    def longer(spec):
        spec["phases"]["running"]["duration"] = 99.0

    def described(spec):
        spec["description"] = "another text"

    base = campaign_run(make_night(tmp_path / "a", 1))[0]["spec_hash"]
    assert campaign_run(make_night(tmp_path / "b", 1, spec_edit=longer))[0]["spec_hash"] != base
    assert campaign_run(make_night(tmp_path / "c", 1,
                                   spec_edit=described))[0]["spec_hash"] == base


def test_cli_record_prints_the_run_and_takes_a_commit(tmp_path, capsys):
    camp = make_night(tmp_path, 2)
    hist = tmp_path / "hist.sqlite"
    assert main(["track", "record", str(camp), "--history", str(hist), "--commit", "f" * 40,
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["added"] is True and out["commit"] == "f" * 40 and out["run_id"] == 1
    # The default history is RESULTS/history.sqlite; a campaign name resolves in --results.
    assert main(["track", "record", "report-fixture", "--results", str(tmp_path), "-q"]) == 0
    assert (tmp_path / "history.sqlite").is_file()


def _unfinished(camp: Path) -> None:
    d = json.loads((camp / "campaign.json").read_text())
    d["runs"][-1]["finished"] = None
    (camp / "campaign.json").write_text(json.dumps(d))


def _mixed_commits(camp: Path) -> None:
    fp = next(camp.glob("policy=tiering,memtable_bytes=1M*/fingerprint.json"))
    d = json.loads(fp.read_text())
    d["project"]["commit"] = "b" * 40
    fp.write_text(json.dumps(d))


def _stopped(camp: Path) -> None:
    d = json.loads((camp / "campaign.json").read_text())
    d["runs"][-1]["stopped"] = "the results store is full"
    (camp / "campaign.json").write_text(json.dumps(d))


def _nothing_complete(camp: Path) -> None:
    import shutil

    for pt in camp.glob("policy=*"):
        if json.loads((pt / "point.json").read_text())["state"] == "complete":
            shutil.rmtree(pt)


@pytest.mark.parametrize(("damage", "message"), [
    (_unfinished, "has not finished"),
    (_stopped, "stopped before its end (the results store is full)"),
    (_mixed_commits, "different commits"),
    (_nothing_complete, "no group is complete (policy=tiering,memtable_bytes=1M: 0 of 1 "
                        "planned repetition stored"),
])
def test_a_campaign_that_is_not_one_night_is_refused(tmp_path, capsys, damage, message):
    """Refused, exit 2, and nothing created: no history file where there was none."""
    camp = make_night(tmp_path, 1)
    damage(camp)
    hist = tmp_path / "new" / "hist.sqlite"
    assert main(["track", "record", str(camp), "--history", str(hist)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(camp) in err and "Traceback" not in err
    assert not hist.exists() and not hist.parent.exists()


ALL_THREE = ("policy=leveling,memtable_bytes=1M", "policy=tiering,memtable_bytes=1M",
             "policy=tiering,memtable_bytes=1K")


def test_an_adaptive_campaign_decided_before_its_max_is_a_night(tmp_path, capsys):
    """The quickstart's shape: repetitions {min: 2, max: 3}, every group decided by its first
    two (the failed group at its max): 7 of 9 planned points stored is the whole night, the
    2 unneeded repetitions not missing (it said '7 of 9 planned points are stored; a partial
    campaign is not a night')."""
    camp = adaptive_night(tmp_path, {GROUPS[0]: 2, GROUPS[1]: 2, ALL_THREE[2]: 3})
    hist = tmp_path / "hist.sqlite"
    assert main(["track", "record", str(camp), "--history", str(hist), "--json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["added"] is True and doc["incomplete"] == [] and err == ""
    verdicts = {v.group: v for v in History(hist).verdicts()}
    assert set(verdicts) == set(ALL_THREE)
    assert verdicts[GROUPS[0]].repetitions == 2 and verdicts[ALL_THREE[2]].repetitions == 3
    assert {v.n for v in History(hist).values() if v.group == GROUPS[0]} == {2}


def test_a_group_missing_what_its_plan_runs_is_left_out_and_named(tmp_path, capsys):
    """A group short of its first `min` repetitions, or undecided below its max, is not
    complete: the night is the other groups, and record names the ones it leaves out."""
    camp = adaptive_night(tmp_path, {GROUPS[0]: 2, GROUPS[1]: 1, ALL_THREE[2]: 2})
    hist = tmp_path / "hist.sqlite"
    assert main(["track", "record", str(camp), "--history", str(hist)]) == 0
    out, err = capsys.readouterr()
    assert "recorded as run 1" in out
    assert "2 groups not recorded, not complete" in err
    assert (f"{GROUPS[1]}: 1 of 3 planned repetitions stored: repetition 2 of the first 2 "
            "missing") in err
    # Two failed repetitions decide nothing, and a third may: it would run.
    assert f"{ALL_THREE[2]}: 2 of 3 planned repetitions stored, undecided" in err
    assert {v.group for v in History(hist).verdicts()} == {GROUPS[0]}
    assert {v.group for v in History(hist).values()} == {GROUPS[0]}


def test_not_a_history_file_is_a_clear_error(tmp_path, capsys):
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_bytes(b"this is no database at all" * 100)
    camp = make_night(tmp_path, 1)
    assert main(["track", "record", str(camp), "--history", str(bogus)]) == 2
    assert "not a history database" in capsys.readouterr().err
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    assert main(["track", "report", "--history", str(other)]) == 2
    assert "not a history database" in capsys.readouterr().err
    assert main(["track", "report", "--history", str(tmp_path / "none.sqlite")]) == 2
    assert "no history here" in capsys.readouterr().err
    assert main(["track", "record", str(tmp_path / "nowhere")]) == 2
    assert "no such campaign directory" in capsys.readouterr().err


def test_an_odd_plan_or_matrix_in_campaign_json_is_no_traceback(tmp_path, capsys):
    """campaign.json hand-edited (a plan's points that are not records, a matrix that is not
    a mapping): record takes the stored groups as they are, and ls lists them."""
    camp = make_night(tmp_path, 1)
    d = json.loads((camp / "campaign.json").read_text())
    d["plan"]["points"] = ["x", 3, None]
    d["spec"]["matrix"] = [1, 2]
    (camp / "campaign.json").write_text(json.dumps(d))
    assert main(["track", "record", str(camp), "--history", str(tmp_path / "h.sqlite")]) == 0
    assert main(["ls", "--results", str(tmp_path)]) == 0
    assert main(["ls", camp.name, "--results", str(tmp_path)]) == 0
    assert "Traceback" not in capsys.readouterr().err
