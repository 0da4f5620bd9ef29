"""`lsmbench reproduce`'s plans of claim repetitions: an undecided claim's groups get the
repetitions it needs (balanced with the groups other claims compare them with), a plan
interrupted goes on as planned, and `lsmbench run --resume` with listed groups adds them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from lsmbench.reproduce import pages
from lsmbench.reproduce.evidence import INCONCLUSIVE, REPRODUCED, Finding


def _three_group_experiment(tmp_path: Path, name: str) -> Any:
    """A made-up experiment of the null engine: service_time_us 50, 60 and 70, 2 repetitions
    each, seconds-long phases."""
    from lsmbench.reproduce.suite import Experiment

    spec = {"name": name, "engine": {"name": "null"},
            "matrix": {"service_time_us": [50, 60, 70], "repetitions": 2},
            "workload": {"file": "update-uniform-1kb", "set": {"record_count": 1000}},
            "phases": {"testing": {"duration": "2s", "warmup": "1s"},
                       "running": {"duration": "1s"}},
            "throttle": "none"}
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(spec))
    return Experiment(name=name, paper="luo-carey", title=f"Experiment {name}",
                      spec=str(tmp_path / f"{name}.yaml"), setup="a test's")


@pytest.mark.slow
def test_an_undecided_claim_gets_the_repetitions_it_needs(tmp_path, lsmbench, monkeypatch,
                                                          driver_path):
    """A claim inconclusive only for want of repetitions: reproduce runs its experiment again
    with --resume and matrix.repetitions.groups, and only the groups the claim reads get
    them; the record and the page say so. (The claim is made up: it wants 3 repetitions of
    the two groups it reads, whatever they measure, so the test does not hang on noise.)"""
    from lsmbench.reproduce import cli as reproduce_cli
    from lsmbench.reproduce import more, suite
    from lsmbench.reproduce.claims.claim import Claim
    from lsmbench.reproduce.evidence import testing_max
    from lsmbench.store import Store

    exp = _three_group_experiment(tmp_path, "rm-three")

    def wants_three(ev):
        a, b = ev.of(testing_max, service_time_us=50), ev.of(testing_max, service_time_us=60)
        if min(a.n, b.n) < 3:
            return Finding(status=INCONCLUSIVE, ours="-", why="overlap", repetitions=3,
                           groups=[a.group, b.group])
        return Finding(status=REPRODUCED, ours="-", why="apart")

    def compares_60_70(ev):  # decided, but it compares 60, which XT1's plan runs, with 70
        ev.of(testing_max, service_time_us=60), ev.of(testing_max, service_time_us=70)
        return Finding(status=REPRODUCED, ours="-", why="apart")

    def reads_only_70(ev):  # one group: no comparison to keep balanced
        ev.of(testing_max, service_time_us=70)
        return Finding(status=REPRODUCED, ours="-", why="-")

    claim = Claim(id="XT1", paper="luo-carey", source="-", text="-", theirs="-",
                  experiment="rm-three", check=wants_three)
    other = Claim(id="XT3", paper="luo-carey", source="-", text="-", theirs="-",
                  experiment="rm-three", check=compares_60_70)
    single = Claim(id="XT4", paper="luo-carey", source="-", text="-", theirs="-",
                   experiment="rm-three", check=reads_only_70)
    monkeypatch.setattr(suite, "SUITE", (exp,))
    monkeypatch.setattr(reproduce_cli, "SUITE", (exp,))
    claims = [claim, single]
    monkeypatch.setattr(more, "all_claims", lambda: claims)
    results, out = tmp_path / "results", tmp_path / "pages"
    proc = lsmbench("reproduce", "--paper", "luo-carey", "--results", str(results),
                    "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "then up to 3 repetitions of 2 group(s) for XT1" in proc.stdout
    # Announced before it runs: what it lacks (a third of 50 and of 60), and about how long.
    assert re.search(r"reproduce: rm-three: more repetitions for XT1: up to 3 of 2 group\(s\), "
                     r"2 point\(s\) to run, ~[\dhms]+ at their points' median time so far",
                     proc.stdout), proc.stdout
    store = results / "reproduce"
    reps: dict[int, int] = {}
    for p in Store(store).points("rm-three"):
        assert p.state == "complete"
        key = p.data["params"]["service_time_us"]
        reps[key] = reps.get(key, 0) + 1
    assert reps == {50: 3, 60: 3, 70: 2}  # XT4 reads 70 alone: nothing to balance
    record = pages.read_run(store).experiments["rm-three"]
    assert record.exit_code == 0 and record.more is not None
    assert record.more["groups"] == ["service_time_us=50", "service_time_us=60"]
    assert "balance" not in record.more
    assert (record.more["claims"], record.more["repetitions"]) == (["XT1"], 3)
    assert "--resume" in record.more["command"] and "groups: [" in record.more["command"]
    section = (out / "luo-carey.md").read_text().split("## Experiment rm-three", 1)[1]
    assert "Then, for XT1" in section and "service_time_us=50; service_time_us=60" in section
    # The repetitions' seconds are said once, after "Then": "Ran in" is the experiment's own
    # time (it used to include them, so a reader adding the two counted them twice).
    ran = re.search(r"Ran in (\d+) s", section)
    assert ran is not None and record.more["seconds"] >= 2
    assert int(ran.group(1)) == round(record.seconds)
    assert record.took_s == pytest.approx(record.seconds + record.more["seconds"])

    # With --claim-repetitions 0 nothing is added.
    proc = lsmbench("reproduce", "--paper", "luo-carey", "--results", str(tmp_path / "r0"),
                    "--out", str(tmp_path / "p0"), "--claim-repetitions", "0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert pages.read_run(tmp_path / "r0" / "reproduce").experiments["rm-three"].more is None
    assert len(Store(tmp_path / "r0" / "reproduce").points("rm-three")) == 6

    # A claim that compares a planned group with another brings that one into the plan, so
    # that its comparison is not between repetitions run at different times.
    claims.append(other)
    proc = lsmbench("reproduce", "--paper", "luo-carey", "--results", str(tmp_path / "r1"),
                    "--out", str(tmp_path / "p1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts: dict[int, int] = {}
    for p in Store(tmp_path / "r1" / "reproduce").points("rm-three"):
        counts[p.data["params"]["service_time_us"]] = \
            counts.get(p.data["params"]["service_time_us"], 0) + 1
    assert counts == {50: 3, 60: 3, 70: 3}
    record = pages.read_run(tmp_path / "r1" / "reproduce").experiments["rm-three"]
    assert record.more is not None and record.more["claims"] == ["XT1"]
    assert record.more["balance"] == {"service_time_us=70": ["XT3"]}
    section = (tmp_path / "p1" / "luo-carey.md").read_text().split("## Experiment rm-three")[1]
    assert "(service_time_us=70 because XT3 compares it with one of the others" in section


@pytest.mark.slow
def test_an_interrupted_plan_of_repetitions_goes_on_as_planned(tmp_path, lsmbench,
                                                              monkeypatch, driver_path):
    """A plan of repetitions for a claim, interrupted after some of its points: the record
    keeps the plan (not done), the page says so, and `--resume` goes on with that plan even
    when the partial data would now ask for another number (a new estimate would be one more
    look). A later plan keeps the earlier one on record, and each second is counted once."""
    from lsmbench.reproduce import cli as reproduce_cli
    from lsmbench.reproduce import more, runner, suite
    from lsmbench.reproduce.claims.claim import Claim
    from lsmbench.reproduce.evidence import testing_max
    from lsmbench.store import Store

    exp = _three_group_experiment(tmp_path, "rm-plan")
    want = {"n": 3}

    def wants(ev):
        a, b = ev.of(testing_max, service_time_us=50), ev.of(testing_max, service_time_us=60)
        if min(a.n, b.n) < want["n"]:
            return Finding(status=INCONCLUSIVE, ours="-", why="overlap", repetitions=want["n"],
                           groups=[a.group, b.group])
        return Finding(status=REPRODUCED, ours="-", why="apart")

    claim = Claim(id="XT2", paper="luo-carey", source="-", text="-", theirs="-",
                  experiment="rm-plan", check=wants)
    monkeypatch.setattr(suite, "SUITE", (exp,))
    monkeypatch.setattr(reproduce_cli, "SUITE", (exp,))
    monkeypatch.setattr(more, "all_claims", lambda: [claim])
    real_run_child = runner.run_child

    def interrupted_midway(cmd):
        # The plan's child adds the first group's repetition, then the interruption comes.
        if "groups: [" not in cmd[-1]:
            return real_run_child(cmd)
        real_run_child([*cmd[:-1], cmd[-1].replace(", 'service_time_us=60'", "")])
        raise runner.ChildInterrupted

    monkeypatch.setattr(runner, "run_child", interrupted_midway)
    results, out = tmp_path / "results", tmp_path / "pages"
    store = results / "reproduce"

    def reps() -> dict[int, int]:
        n: dict[int, int] = {}
        for p in Store(store).points("rm-plan"):
            if p.state == "complete":
                key = p.data["params"]["service_time_us"]
                n[key] = n.get(key, 0) + 1
        return n

    proc = lsmbench("reproduce", "--paper", "luo-carey", "--results", str(results),
                    "--out", str(out))
    assert proc.returncode == 130, proc.stderr[-3000:]
    assert reps() == {50: 3, 60: 2, 70: 2}
    record = pages.read_run(store).experiments["rm-plan"]
    assert record.plan_pending and record.more["done"] is False
    assert (record.more["claims"], record.more["repetitions"]) == (["XT2"], 3)
    assert record.more["exit_code"] is None and record.more["points_s"] > 0
    proc = lsmbench("reproduce", "--pages-only", "--paper", "luo-carey", "--results",
                    str(results), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    section = (out / "luo-carey.md").read_text().split("## Experiment rm-plan", 1)[1]
    assert "interrupted: `--resume` goes on with this plan" in section

    # Resumed: the data now asks for 4, but the plan said 3, and 3 it is.
    monkeypatch.setattr(runner, "run_child", real_run_child)
    want["n"] = 4
    carried = record.more["seconds"]
    proc = lsmbench("reproduce", "--resume", "--paper", "luo-carey", "--results",
                    str(results), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "finished before" not in proc.stdout
    assert "rm-plan: going on with the interrupted plan for XT2: up to 3 of 2 group(s), " \
        "1 point(s) to run" in proc.stdout, proc.stdout
    assert reps() == {50: 3, 60: 3, 70: 2}
    record = pages.read_run(store).experiments["rm-plan"]
    assert not record.plan_pending and record.more["exit_code"] == 0
    assert record.more["repetitions"] == 3 and record.more["seconds"] > carried
    assert "earlier" not in record.more

    # A new plan (to 4) keeps the first on record; "Ran in" is the experiment's own points.
    proc = lsmbench("reproduce", "--resume", "--experiment", "rm-plan", "--claim-repetitions",
                    "4", "--results", str(results), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert reps() == {50: 4, 60: 4, 70: 2}
    record = pages.read_run(store).experiments["rm-plan"]
    first, second = record.plans
    assert (first["repetitions"], second["repetitions"]) == (3, 4)
    own = sum(float(p.data["wall_s"]) for p in Store(store).points("rm-plan")
              if p.data["rep"] < 2)
    assert record.points_s == pytest.approx(own, abs=0.5)
    assert record.took_s == pytest.approx(
        record.own_s + first["seconds"] + second["seconds"])
    section = (out / "luo-carey.md").read_text().split("## Experiment rm-plan", 1)[1]
    assert "Then, for XT2" in section and "Then again, for XT2" in section
    assert "third look" in section

    # Resumed with no plan allowed (--claim-repetitions 0): the plans stay on record.
    kept = record
    proc = lsmbench("reproduce", "--resume", "--experiment", "rm-plan", "--claim-repetitions",
                    "0", "--results", str(results), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = pages.read_run(store).experiments["rm-plan"]
    assert record.plans == kept.plans
    assert record.points_s == pytest.approx(own, abs=0.5)


@pytest.mark.slow
def test_listed_groups_resumed_past_min_go_on_from_their_first_missing_repetition(
        tmp_path, lsmbench, driver_path):
    """Resumed with a larger max, groups listed in matrix.repetitions.groups that all have
    repetitions past min get the missing ones (the loop over repetition numbers used to stop
    at the first number every listed group had, adding nothing)."""
    from lsmbench.store import Store

    spec = {"name": "rg-past", "engine": {"name": "null"},
            "matrix": {"service_time_us": [50, 60],
                       "repetitions": {"min": 1, "max": 2,
                                       "groups": ["service_time_us=50", "service_time_us=60"]}},
            "workload": {"file": "update-uniform-1kb", "set": {"record_count": 1000}},
            "phases": {"testing": {"duration": "2s", "warmup": "1s"},
                       "running": {"duration": "1s"}},
            "throttle": "none"}
    path = tmp_path / "rg-past.yaml"
    path.write_text(yaml.safe_dump(spec))
    results = tmp_path / "results"

    def reps() -> list[tuple[int, int]]:
        return sorted((p.data["params"]["service_time_us"], p.data["rep"])
                      for p in Store(results).points("rg-past") if p.state == "complete")

    proc = lsmbench("run", str(path), "--results", str(results), "--no-publish", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert reps() == [(50, 0), (50, 1), (60, 0), (60, 1)]
    proc = lsmbench("run", str(path), "--results", str(results), "--no-publish", "--quiet",
                    "--resume", "--set", "matrix.repetitions={min: 1, max: 3, groups: "
                    "['service_time_us=50', 'service_time_us=60']}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert reps() == [(50, 0), (50, 1), (50, 2), (60, 0), (60, 1), (60, 2)]


def test_repetitions_for_listed_groups_are_checked(tmp_path, lsmbench):
    spec = {"name": "rg", "engine": {"name": "null"},
            "matrix": {"service_time_us": [50, 60],
                       "repetitions": {"min": 2, "max": 3, "groups": ["service_time_us=5"]}},
            "workload": {"file": "update-uniform-1kb", "set": {"record_count": 1000}}}
    path = tmp_path / "rg.yaml"
    path.write_text(yaml.safe_dump(spec))
    proc = lsmbench("validate", str(path))
    assert proc.returncode == 2
    assert "matrix.repetitions.groups[0]: no group 'service_time_us=5' in the matrix (its " \
           "groups: service_time_us=50, service_time_us=60)" in proc.stderr, proc.stderr
    spec["matrix"]["repetitions"]["groups"] = "service_time_us=50"
    path.write_text(yaml.safe_dump(spec))
    proc = lsmbench("validate", str(path))
    assert proc.returncode == 2 and "matrix.repetitions.groups: expected a list of group " \
        "ids" in proc.stderr, proc.stderr
    spec["matrix"]["repetitions"]["groups"] = ["service_time_us=60"]
    path.write_text(yaml.safe_dump(spec))
    proc = lsmbench("validate", str(path))
    assert proc.returncode == 0, proc.stderr


def test_a_planned_claims_decided_part_is_balanced_too(monkeypatch):
    """A claim whose decided part (A against B) shares a group with its open part (A against
    C): the plan for A and C runs B as well, or A's new repetitions would be compared with
    B's old ones. (Reads are given, not measured: only the plan is under test.)"""
    from lsmbench.reproduce import more
    from lsmbench.reproduce.claims.claim import Claim

    findings = {
        "XP1": (Finding(status=INCONCLUSIVE, ours="-", why="A vs C overlap", repetitions=6,
                        groups=["g=A", "g=C"]), ["g=A", "g=B", "g=C"]),
        "XP2": (Finding(status=REPRODUCED, ours="-", why="-"), ["g=D"]),  # one group alone
        "XP3": (Finding(status=REPRODUCED, ours="-", why="-"), ["g=D", "g=E"]),  # apart
    }

    class Reads:
        def reading(self, check):
            return findings[check.__name__]

    def claim(cid: str) -> Claim:
        def check(ev):
            raise AssertionError("read through `reading`")
        check.__name__ = cid
        return Claim(id=cid, paper="luo-carey", source="-", text="-", theirs="-",
                     experiment="xp", check=check)

    monkeypatch.setattr(more, "all_claims", lambda: [claim(c) for c in findings])
    wanted = more.repetitions_wanted("xp", Reads(), cap=12)
    assert wanted is not None
    assert (wanted.claims, wanted.repetitions) == (["XP1"], 6)
    assert wanted.groups == ["g=A", "g=B", "g=C"]
    assert wanted.balance == {"g=B": ["XP1"]}
    assert more.repetitions_wanted("xp", Reads(), cap=5) is None  # 6 wanted, 5 allowed
