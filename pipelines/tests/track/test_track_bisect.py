"""`lsmbench track bisect`: the search over a commit range by paired comparisons (pure, with
constructed ratios), its bad input, and one bisection end to end on a git repository whose
"slow" commits build a driver that runs with a 4 MB/s I/O budget (a real regression)."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from lsmbench.cli import main
from lsmbench.track.bisect import Comparison, bisect_commits
from lsmbench.track.paired import paired_ratio
from lsmbench.util.exits import EXIT_USAGE
from track_nights import git

COMMITS = [f"{i:02d}" + "c0ffee" * 6 for i in range(9)]  # after the good one; the last is bad
SAME = paired_ratio([(100.0, 100.0), (100.0, 101.0), (100.0, 99.0)])
SLOWER = paired_ratio([(100.0, 90.0), (100.0, 91.0), (100.0, 89.0)])
UNSURE = paired_ratio([(100.0, 80.0), (100.0, 110.0), (100.0, 97.0)])


def regression_at(k: int, skip: set[int] = frozenset(), unsure: set[int] = frozenset()):
    asked: list[tuple[str, int]] = []

    def compare(commit: str, repetitions: int) -> Comparison:
        asked.append((commit, repetitions))
        i = COMMITS.index(commit)
        if i in skip:
            return Comparison(skipped="does not build")
        if i in unsure:
            return Comparison(ratio=UNSURE)
        return Comparison(ratio=SLOWER if i >= k else SAME)

    return compare, asked


@pytest.mark.parametrize("k", range(9))
def test_bisection_names_the_first_worse_commit_in_few_steps(k):
    compare, asked = regression_at(k)
    steps, first, suspects, conclusion = bisect_commits(COMMITS, compare, better="higher",
                                                        threshold=0.05)
    assert first == k and suspects == [COMMITS[k]]
    assert conclusion.startswith(COMMITS[k][:12])
    assert len(steps) <= 4  # 8 untested commits: at most ceil(log2(9)) comparisons
    assert all(s.decision == ("worse" if COMMITS.index(s.commit) >= k else "not-worse")
               for s in steps)
    assert COMMITS[-1] not in [c for c, _ in asked]  # the bad end is known, never run


def test_a_commit_that_does_not_build_is_skipped_like_git_bisect_skip():
    compare, _asked = regression_at(5, skip={3})
    steps, first, _, _ = bisect_commits(COMMITS, compare, better="higher", threshold=0.05)
    assert first == 5
    assert [s.decision for s in steps if s.commit == COMMITS[3]] == ["skipped"]
    # Skipped where the answer lies: the range is named, not a guess.
    compare, _ = regression_at(4, skip={3})
    steps, first, suspects, conclusion = bisect_commits(COMMITS, compare, better="higher",
                                                        threshold=0.05)
    assert first is None and suspects == [COMMITS[3], COMMITS[4]]
    assert "do not build" in conclusion


def test_an_undecided_step_adds_pairs_then_stops_and_says_so():
    compare, asked = regression_at(6, unsure={3})
    _steps, first, suspects, conclusion = bisect_commits(COMMITS, compare, better="higher",
                                                        threshold=0.05, repetitions=3,
                                                        max_repetitions=12)
    assert first is None and conclusion.startswith(f"undecided at {COMMITS[3][:12]}")
    assert [r for c, r in asked if c == COMMITS[3]] == [3, 6, 12]
    assert COMMITS[3] in suspects and COMMITS[-1] in suspects


def test_commits_sharing_a_judged_build_take_its_judgement_unmeasured():
    # The good commit and 0-2 share one engines/ tree, 3-4 another, 5 (the regression) a
    # third, 6-8 the bad end's: only the builds nobody judged yet are measured, once each.
    builds = dict(zip(["good", *COMMITS], ["g", "g", "g", "g", "x", "x", "y", "z", "z", "z"],
                      strict=True))
    compare, asked = regression_at(5)
    steps, first, suspects, _ = bisect_commits(
        COMMITS, compare, better="higher", threshold=0.05, build_of=builds.__getitem__,
        good="good")
    assert first == 5 and suspects == [COMMITS[5]]
    # x and y measured once each (3, then 5); g and z never: their judgements are known.
    assert [c for c, _ in asked] == [COMMITS[3], COMMITS[5]]
    assert [s.commit for s in steps if s.same_build_as is None] == [COMMITS[3], COMMITS[5]]
    for s in steps:
        if s.same_build_as is not None:
            assert builds[s.same_build_as] == builds[s.commit] and s.ratio is None
            assert s.decision == ("worse" if COMMITS.index(s.commit) >= 5 else "not-worse")
    # A range of docs commits around one engine change: named without a single run.
    builds = dict(zip(["good", *COMMITS], ["g"] * 6 + ["bad"] * 4, strict=True))
    compare, asked = regression_at(5)
    _steps, first, _, _ = bisect_commits(COMMITS, compare, better="higher", threshold=0.05,
                                         build_of=builds.__getitem__, good="good")
    assert first == 5 and asked == []
    # A build measured once decides every commit that shares it, however far apart.
    builds = dict(zip(["good", *COMMITS], ["g", "a", "b", "a", "b", "a", "b", "a", "b", "c"],
                      strict=True))
    compare, asked = regression_at(8)  # only the bad end's build is slower
    _steps, first, _, _ = bisect_commits(COMMITS, compare, better="higher", threshold=0.05,
                                         build_of=builds.__getitem__, good="good")
    assert first == 8 and sorted(builds[c] for c, _ in asked) == ["a", "b"]
    # A change whose ends are one build is not the engine's: nothing is named, nor measured.
    compare, asked = regression_at(5)
    steps, first, suspects, conclusion = bisect_commits(
        COMMITS, compare, better="higher", threshold=0.05, build_of=lambda _: "same",
        good="good")
    assert (steps, first, asked) == ([], None, []) and suspects == COMMITS
    assert conclusion.startswith("no engine change to bisect")


def test_the_boundary_is_halfway_to_the_regression_the_nights_measured(tmp_path):
    """regression_size pools the pairs of the nights at and after the change's first night
    that ran against the bisection's good commit; none: another good commit, or no night."""
    from lsmbench.track.bisect import regression_size
    from lsmbench.track.changes import Change
    from lsmbench.track.history import History

    h = History(tmp_path / "h.sqlite")
    nights = [(1.0, "c0"), (0.99, "c0"), (0.93, "c0"), (0.95, "c0"), (0.5, "elsewhere")]
    for n, (level, ref) in enumerate(nights, start=1):
        run = {"campaign": "nightly", "date": f"2026-10-{n:02d}T02:00:00+00:00",
               "finished": 1.7e9 + n * 86400.0, "commit": f"c{n}", "dirty": False,
               "spec_hash": "s", "testbed_key": "t", "testbed": [{}], "results_dir": f"/r/{n}"}
        pairs = [(100.0, 100.0 * level * f) for f in (0.99, 1.0, 1.01)]
        h.add_run(run, [], [], [{"group": "g", "metric": "max_write_throughput",
                                 "ratio": level, "ci_low": 0.9, "ci_high": 1.1, "n": 3,
                                 "reference_median": 1.0, "candidate_median": level,
                                 "reference_commit": ref, "pairs": pairs}])
    first_after = h.runs("nightly")[2].run_id
    change = Change.model_construct(campaign="nightly", group="g", testbed_key="t",
                                    spec_hash="s", metric="max_write_throughput",
                                    run_id=first_after)
    size, pairs = regression_size(h, change, "c0", "higher")
    assert pairs == 6 and 0.055 < size < 0.065  # nights 3-4: ~0.94, not the A/A nights
    assert regression_size(h, change, "c9", "higher") is None  # no night against c9
    assert regression_size(h, change, "c0", "lower") is None  # a latency 6 % lower: better
    h.close()


def test_latencies_are_worse_when_higher():
    compare, _ = regression_at(2)
    # For a latency the same ratios read the other way round: 0.9 is 10 % better, and no
    # commit is worse -- the search ends at the bad end, which it never ran.
    steps, first, _, _ = bisect_commits(COMMITS, compare, better="lower", threshold=0.05)
    assert first == 8 and all(s.decision == "not-worse" for s in steps)


def test_bad_input_exits_2_naming_it(tmp_path, capsys):
    from lsmbench.track.history import History

    h = History(tmp_path / "h.sqlite")
    h.close()
    code = main(["track", "bisect", "c-nosuch", "--history", str(tmp_path / "h.sqlite")])
    assert code == EXIT_USAGE and "no change with id 'c-nosuch'" in capsys.readouterr().err
    for bad, named in ((["--threshold", "1.5"], "--threshold 1.5"),
                       (["--threshold", "0"], "--threshold 0"),
                       (["--repetitions", "1"], "--repetitions 1"),
                       (["--repetitions", "4", "--max-repetitions", "3"], "--max-repetitions 3"),
                       (["--range", "abc"], "--range abc"),
                       (["--range", "a...b"], "--range a...b")):
        code = main(["track", "bisect", "c-nosuch", "--history", str(tmp_path / "h.sqlite"),
                     *bad])
        err = capsys.readouterr().err
        assert code == EXIT_USAGE and named in err, (bad, err)


# ------------------------------------------------------------------------------------ end to end


SLOW_DRIVER = """#!{python}
# A build of a "slow" commit: the real driver with a 4 MB/s I/O budget on every phase.
import json, os, sys
args = sys.argv[1:]
if "--config" in args:
    path = args[args.index("--config") + 1]
    doc = json.load(open(path))
    doc.setdefault("engine_options", {{}})["io_budget_bytes_per_sec"] = "4M"
    json.dump(doc, open(path, "w"))
os.execv({driver!r}, [{driver!r}, *args])
"""


def build_command(driver_path: Path, tmp_path: Path) -> str:
    """Copies this machine's driver; a commit whose engines.txt says "slow" gets the slow
    wrapper instead."""
    driver_path = driver_path.resolve()
    slow = tmp_path / "slow-driver"
    slow.write_text(SLOW_DRIVER.format(python=sys.executable, driver=str(driver_path)))
    slow.chmod(0o755)
    sim = driver_path.with_name("lsm-sim")
    return (f'mkdir -p "$LSMBENCH_BUILD_DIR/bin" && cp {sim} "$LSMBENCH_BUILD_DIR/bin/" && '
            f'if grep -q slow engines.txt; then cp {slow} "$LSMBENCH_BUILD_DIR/bin/lsm-driver"; '
            f'else cp {driver_path} "$LSMBENCH_BUILD_DIR/bin/lsm-driver"; fi')


@pytest.mark.slow
def test_bisect_finds_the_commit_that_made_a_real_regression(tmp_path, data_root, driver_path,
                                                             capsys):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("/build-*/\n")
    git(repo, "add", ".gitignore")
    shas = []
    for i in range(9):  # the regression comes with the 6th commit after the good one
        (repo / "engines.txt").write_text(f"slow v{i}\n" if i >= 6 else f"engine v{i}\n")
        git(repo, "add", "engines.txt")
        git(repo, "commit", "-q", "-m", f"commit {i}")
        shas.append(git(repo, "rev-parse", "HEAD"))
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "bisect-tiny", "matrix": {"repetitions": 3},
        # Every build writes within the engine's own I/O budget (a slow one's is 4 MB/s), so
        # the maximum is the budget's, not the CPU's: two runs of one build agree also when
        # other work loads this 2-core machine (an unbudgeted one left good against good
        # undecided under load).
        "engine": {"name": "builtin", "options": {"memtable_bytes": "1M",
                                                  "io_budget_bytes_per_sec": "16M"}},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 3000}},
        # the testing maximum is the metric bisected: no running phase
        "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                   "running": {"enabled": False}},
        "throttle": {"enabled": False},
        "testbed": {"type": "local", "data_dir": str(data_root / "data")}}))
    results = tmp_path / "results"
    command = build_command(driver_path, tmp_path)

    def night(ref: str) -> dict:
        r = subprocess.run([sys.executable, "-m", "lsmbench", "track", "nightly", str(spec),
                            "--repo", str(repo), "--ref", ref, "--no-fetch", "--results",
                            str(results), "--build-command", command, "--json", "--bisect",
                            "--bisect-threshold", "0.5"],
                           capture_output=True, text=True, timeout=900, check=False)
        assert r.returncode in (0, 4), r.stderr[-3000:]
        end = json.loads(r.stdout.splitlines()[-1])
        assert end["event"] == "nightly_end" and end["exit"] == r.returncode
        return end

    # Two nights: the good commit, then the last, paired, which alarms and -- with --bisect --
    # bisects the regression at its end.
    summaries = [night(shas[0]), night(shas[-1])]
    doc = json.loads((results / "regressions.json").read_text())
    change = next((c for c in doc["open"]
                   if c["kind"] == "paired" and c["metric"] == "max_write_throughput"), None)
    assert change is not None, json.dumps(doc, indent=1)[:6000]
    assert (change["commit_before"], change["commit_after"]) == (shas[0], shas[-1])
    assert "bisect" not in [s["step"] for s in summaries[0]["steps"]]  # nothing to bisect
    (step,) = [s for s in summaries[1]["steps"] if s["step"] == "bisect"]
    assert summaries[1]["exit"] == 4 and step["code"] == 0, summaries[1]
    assert step["detail"].startswith(change["id"]) and shas[6][:12] in step["detail"]
    # Every step is in the history.
    from lsmbench.track.history import History

    (result,) = History(results / "history.sqlite").bisections()
    assert result["change_id"] == change["id"] and result["first_bad"] == shas[6]
    assert len([s for s in result["steps"] if s["decision"] != "skipped"]) <= 4
    for s in result["steps"]:
        assert s["low"] <= s["ratio"] <= s["high"]
    # One a night (nightly.to_bisect, below): the others wait for the next nights.
    others = [c["id"] for c in json.loads((results / "regressions.json").read_text())["open"]
              if c["id"] != change["id"] and c["direction"] == "regression"]
    assert ("left for the next nights" in step["detail"]) == bool(others), (step, others)
    # ... and on the history page.
    assert main(["track", "report", "--history", str(results / "history.sqlite"),
                 "--quiet"]) in (0, 4)
    page = (results / "history.html").read_text()
    assert 'id="bisections"' in page and shas[6][:12] in page

    # One campaign per commit tried: a step that could not decide at 3 pairs added 3 more to
    # them (`run --resume`: 6 points run, then 6 more with the first 6 kept), not 6 anew.
    for commit in {s["commit"] for s in result["steps"] if s["decision"] != "skipped"}:
        tried = [s["repetitions"] for s in result["steps"] if s["commit"] == commit]
        campaign = json.loads((results / f"bisect-{change['id']}" / "results"
                               / f"bisect-tiny-bisect-{commit[:12]}" / "campaign.json"
                               ).read_text())
        expected = [(False, 2 * tried[0], 0)] + [
            (True, 2 * (n - before), 2 * before) for before, n in pairwise(tried)]
        assert [(r["resume"], r["todo"], r["skipped"]) for r in campaign["runs"]] == expected


def test_a_step_of_the_testing_maximum_runs_no_running_phase():
    from lsmbench.track.bisect import step_spec

    spec = {"name": "nightly", "matrix": {"policy": ["tiering"], "repetitions": 2},
            "phases": {"testing": {"duration": "32s"},
                       "running": {"duration": "28s", "utilization": 0.8}}}
    got = step_spec(spec, "nightly-bisect-abc", 6, Path("/b/ref"), "good", "testing")
    assert got["phases"]["running"] == {"duration": "28s", "utilization": 0.8,
                                        "enabled": False}
    assert got["phases"]["testing"] == spec["phases"]["testing"]
    assert got["matrix"] == {"policy": ["tiering"], "repetitions": 6}
    assert got["pair"] == {"reference": "/b/ref", "commit": "good"}
    assert got["name"] == "nightly-bisect-abc"
    assert spec["phases"]["running"] == {"duration": "28s", "utilization": 0.8}  # untouched
    kept = step_spec(spec, "nightly-bisect-abc", 6, Path("/b/ref"), "good", "running")
    assert kept["phases"] == spec["phases"]


def test_the_nightly_job_bisects_new_regressions_paired_and_largest_first():
    from lsmbench.track.nightly import to_bisect

    opened = [
        {"id": "c-big", "campaign": "nightly", "direction": "regression", "kind": "series",
         "change": -0.30},
        {"id": "p-small", "campaign": "nightly", "direction": "regression", "kind": "paired",
         "change": -0.04},
        {"id": "p-large", "campaign": "nightly", "direction": "regression", "kind": "paired",
         "change": 0.12},  # a latency up 12 %
        {"id": "p-done", "campaign": "nightly", "direction": "regression", "kind": "paired",
         "change": -0.5},
        {"id": "p-other", "campaign": "other", "direction": "regression", "kind": "paired",
         "change": -0.5},
        {"id": "p-better", "campaign": "nightly", "direction": "improvement", "kind": "paired",
         "change": 0.5},
    ]
    assert [c["id"] for c in to_bisect(opened, {"p-done"}, "nightly")] == [
        "p-large", "p-small", "c-big"]
    assert to_bisect(opened, {"p-done", "p-large", "p-small", "c-big"}, "nightly") == []


def test_a_step_is_judged_with_the_spread_pooled_over_the_paired_nights(tmp_path):
    """nights_spread pools the change's group and metric over the history's paired nights
    (each about its own mean; other metrics and groups left out), and a step's 3 pairs judged
    with it get a narrower interval than with their own 2 degrees of freedom."""
    import math

    import numpy as np
    from lsmbench.track.bisect import nights_spread
    from lsmbench.track.changes import Change
    from lsmbench.track.history import History
    from lsmbench.track.paired import paired_ratio

    h = History(tmp_path / "h.sqlite")
    nights = [[(100.0, 97.0), (100.0, 101.0), (100.0, 99.5)],
              [(200.0, 204.0), (200.0, 198.0), (200.0, 201.0)]]
    for n, pairs in enumerate(nights, start=1):
        run = {"campaign": "nightly", "date": f"2026-10-{n:02d}T02:00:00+00:00",
               "finished": 1.7e9 + n * 86400.0, "commit": f"c{n}", "dirty": False,
               "spec_hash": "s", "testbed_key": "t", "testbed": [{}], "results_dir": f"/r/{n}"}
        paired = [{"group": g, "metric": m, "ratio": 1.0, "ci_low": 0.9, "ci_high": 1.1,
                   "n": 3, "reference_median": 1.0, "candidate_median": 1.0,
                   "reference_commit": "c0", "pairs": ps}
                  for g, m, ps in (("g", "max_write_throughput", pairs),
                                   ("g", "write_p99_ms", [(1.0, 3.0), (1.0, 0.2), (1.0, 1.0)]),
                                   ("other", "max_write_throughput", [(1.0, 2.0), (1.0, 1.0)]))]
        h.add_run(run, [], [], paired)
    change = Change.model_construct(campaign="nightly", group="g", testbed_key="t",
                                    spec_hash="s", metric="max_write_throughput")
    pool = nights_spread(h, change)
    elsewhere = change.model_copy(update={"testbed_key": "another machine"})
    assert nights_spread(h, elsewhere).dof == 0  # not its noise
    h.close()
    logs = [np.log([c / r for r, c in ps]) for ps in nights]
    squares = sum(float(np.sum((x - x.mean()) ** 2)) for x in logs)
    assert pool.dof == 4 and math.isclose(pool.squares, squares)
    step = [(50.0, 48.5), (50.0, 50.5), (50.0, 49.75)]  # spread as the nights'
    own = paired_ratio(step)
    given = pool.plus(step).given()
    assert pool.dof == 4  # plus leaves the nights' pool as it was
    assert given["log_sd_dof"] == 6.0 and math.isclose(given["log_sd"], math.sqrt(
        (squares + float(np.sum((logs[0] - logs[0].mean()) ** 2))) / 6))
    judged = paired_ratio(step, **given)
    assert judged.ratio == own.ratio and judged.high - judged.low < own.high - own.low


def test_the_page_shows_what_a_bisection_looked_for_and_the_steps_it_did_not_measure(tmp_path):
    from lsmbench.track.bisect import BisectResult, BisectStep
    from lsmbench.track.history import History

    h = History(tmp_path / "history.sqlite")
    h.add_run({"campaign": "nightly", "date": "2026-10-01T02:00:00+00:00", "finished": 1.7e9,
               "commit": "c1", "dirty": False, "spec_hash": "s", "testbed_key": "t",
               "testbed": [{}], "results_dir": "/r/1"}, [], [], [])
    steps = [BisectStep(step=1, commit=COMMITS[3], decision="not-worse", repetitions=6,
                        ratio=1.004, low=0.981, high=1.027, n=6),
             BisectStep(step=2, commit=COMMITS[4], decision="not-worse", repetitions=0,
                        same_build_as=COMMITS[3],
                        detail=f"the same build as {COMMITS[3][:12]}: nothing to measure")]
    h.add_bisection(BisectResult(
        change_id="p-feed", campaign="nightly", group="g", metric="max_write_throughput",
        good="a" * 40, bad=COMMITS[-1], commits=COMMITS, steps=steps, first_bad=COMMITS[5],
        suspects=[COMMITS[5]], conclusion=f"{COMMITS[5][:12]} is the first worse commit",
        threshold=0.064, threshold_source="the regression the nights measured",
        comparisons=1).model_dump())
    h.close()
    assert main(["track", "report", "--history", str(tmp_path / "history.sqlite"),
                 "--quiet"]) in (0, 4)
    page = (tmp_path / "history.html").read_text()
    assert "looking for a 6.4 % regression (the regression the nights measured)" in page
    row = page[page.index(f"<code>{COMMITS[4][:10]}</code>"):]
    row = row[:row.index("</tr>")]
    assert '<td class="num">-</td>' in row and "nothing to measure" in row
    assert "[0.981, 1.027]" in page
