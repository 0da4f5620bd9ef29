"""`lsmbench reproduce`: the judging rule, the suite's specs, lsm-sim-validate's table, the pages
from a recorded store (fixtures/reproduce), and bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from lsmbench.cli import main
from lsmbench.reproduce import pages
from lsmbench.reproduce.claims import all_claims
from lsmbench.reproduce.evidence import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_RUN,
    REPRODUCED,
    Finding,
    all_of,
    compare,
    fmt_plain,
    param,
    read_evidence,
    similar,
)
from lsmbench.reproduce.simtable import SimTableError, find_validate, parse, run_validate
from lsmbench.reproduce.suite import PAPERS, SUITE, experiments
from lsmbench.stats import median_ci

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "reproduce" / "results" / "reproduce"


@pytest.fixture()
def lsmbench(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
             ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`lsmbench ARGS` in this process (a CLI test's cost is its work, not an interpreter)."""
    monkeypatch.chdir(ROOT)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)
    return run


# ---------------------------------------------------------------- the rule


def test_compare_needs_apart_intervals_in_the_claimed_direction():
    high, low = median_ci([10, 11, 12]), median_ci([5, 6, 7])
    assert compare(high, low, "a", "b", higher=True, fmt=fmt_plain, what="x").status == \
        REPRODUCED
    assert compare(low, high, "a", "b", higher=True, fmt=fmt_plain, what="x").status == \
        NOT_REPRODUCED
    assert compare(low, high, "a", "b", higher=False, fmt=fmt_plain, what="x").status == \
        REPRODUCED
    overlapping = median_ci([6, 9, 13])
    f = compare(high, overlapping, "a", "b", higher=True, fmt=fmt_plain, what="x")
    assert f.status == INCONCLUSIVE and "overlap" in f.why
    # Two runs: no interval, so no status however far apart the medians are.
    f = compare(median_ci([100, 101]), median_ci([1, 2]), "a", "b", higher=True,
                fmt=fmt_plain, what="x")
    assert f.status == INCONCLUSIVE and "fewer than 3 repetitions" in f.why
    assert "(n=2)" in f.ours


def test_similar_and_all_of():
    a, b, far = median_ci([5, 6, 8]), median_ci([7, 9, 10]), median_ci([20, 21, 22])
    assert similar(a, b, "a", "b", fmt=fmt_plain, what="x").status == REPRODUCED
    assert similar(a, far, "a", "b", fmt=fmt_plain, what="x").status == NOT_REPRODUCED
    yes = Finding(status=REPRODUCED, ours="1", why="w1")
    no = Finding(status=NOT_REPRODUCED, ours="2", why="w2")
    maybe = Finding(status=INCONCLUSIVE, ours="3", why="w3")
    assert all_of([yes, yes]).status == REPRODUCED
    assert all_of([yes, maybe]).status == INCONCLUSIVE
    assert all_of([maybe, no]).status == NOT_REPRODUCED
    assert all_of([yes, no]).ours == "1; 2"


def test_a_dimension_is_found_by_its_alias_or_its_last_part():
    params = {"merge_policy": "leveling", "phases.running.queries.operations.get": 1}
    assert param(params, "policy") == "leveling"
    assert param(params, "get") == 1
    assert param({"policy": "tiering"}, "merge_policy") == "tiering"
    assert param(params, "scheduler") is None


# ---------------------------------------------------------------- the suite


def test_every_claim_names_an_experiment_of_its_paper():
    names = {e.name: e.paper for e in SUITE}
    ids = [c.id for c in all_claims()]
    assert len(ids) == len(set(ids))
    for c in all_claims():
        assert c.paper in PAPERS
        assert names.get(c.experiment) == c.paper, c.id
    assert {c.paper for c in all_claims()} == set(PAPERS)


@pytest.mark.parametrize("quick", [True, False], ids=["quick", "full"])
def test_every_spec_of_the_suite_validates(quick, lsmbench):
    """Both variants of every run/tune experiment pass `lsmbench validate` (the driver checks
    each point's configuration), so a renamed option or a bad override fails here, not an hour
    into a reproduction."""
    for exp in SUITE:
        if exp.spec is None:
            continue
        sets = [a for s in exp.overrides(quick) for a in ("--set", s)]
        proc = lsmbench("validate", exp.spec, *sets)
        assert proc.returncode == 0, f"{exp.name}: {proc.stdout}{proc.stderr}"


def test_experiments_select_by_paper():
    assert {e.paper for e in experiments(["mao"])} == {"mao"}
    assert len(experiments(None)) == len(SUITE)


# ---------------------------------------------------------------- lsm-sim-validate


def test_sim_table_from_the_real_validator(tmp_path):
    if find_validate() is None:
        pytest.skip("lsm-sim-validate is not built")
    path = run_validate(tmp_path / "repro-mao-sim",
                        ["--flushes", "120", "--ks", "4", "--policies", "binomial,bigtable"])
    table = parse(path.read_text(), str(path))
    assert {(r.policy, r.k) for r in table.rows} == {("binomial", 4), ("bigtable", 4)}
    assert all(r.flushes == 120 and r.engine_write_amp > 1 for r in table.rows)
    assert not list(tmp_path.rglob(".*.tmp"))  # no temporary file left


def test_sim_table_refuses_what_is_not_its_csv():
    with pytest.raises(SimTableError, match="no rows"):
        parse("policy,k\n", "x")
    with pytest.raises(SimTableError, match="not lsm-sim-validate's CSV"):
        parse("policy,k,flushes\nbinomial,four,10\n", "x")


# ---------------------------------------------------------------- pages


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    dst = tmp_path / "results" / "reproduce"
    shutil.copytree(FIXTURE, dst)
    return tmp_path / "results"


def test_pages_from_a_recorded_store(store, tmp_path, lsmbench):
    out = tmp_path / "pages"
    proc = lsmbench("reproduce", "--pages-only", "--results", str(store), "--out", str(out),
                    "--json")
    assert proc.returncode == 0, proc.stderr
    said = json.loads(proc.stdout)
    assert said["pages"] == [str(out / f"{p}.md") for p in PAPERS]
    assert said["experiments"] == {"repro-lc-schedulers": 0, "repro-mao-sim": 0}
    evidence = pages.load_evidence(store / "reproduce", list(SUITE))
    for paper in PAPERS:
        text = (out / f"{paper}.md").read_text()
        claims = [c for c in all_claims() if c.paper == paper]
        for c in claims:
            f = c.judge(evidence)  # type: ignore[arg-type]
            row = next(line for line in text.splitlines() if line.startswith(f"| {c.id} |"))
            assert f"**{f.status}**" in row, (c.id, row)
        # Every figure the page names is there.
        for ref in (line.split("](", 1)[1].rstrip(")") for line in text.splitlines()
                    if line.startswith("![")):
            assert (out / ref).is_file(), ref
    lc = (out / "luo-carey.md").read_text()
    assert "Variant **quick**" in lc and "![" in lc


def test_claims_on_the_recorded_schedulers_campaign(store):
    """The recorded campaign (fixtures/reproduce/README.md) holds tiering and leveling x
    single, fair, greedy with 3 repetitions: each LC1-LC6 claim's status follows from its
    groups by the rule, recomputed here from the store's own numbers."""
    ev = read_evidence(store / "reproduce", "repro-lc-schedulers")
    assert ev is not None and len(ev.groups) == 6
    evidence = {"repro-lc-schedulers": ev}
    by_id = {c.id: c for c in all_claims()}
    greedy = ev.one(policy="leveling", scheduler="greedy")
    fair = ev.one(policy="leveling", scheduler="fair")
    assert greedy is not None and fair is not None
    g, f = greedy.p99_write_latency_s, fair.p99_write_latency_s
    assert g.ci_low is not None and f.ci_low is not None
    expected = (REPRODUCED if g.ci_high < f.ci_low else
                NOT_REPRODUCED if g.ci_low > f.ci_high else INCONCLUSIVE)  # type: ignore[operator]
    assert by_id["LC6"].judge(evidence).status == expected
    single = ev.one(policy="tiering", scheduler="single")
    assert single is not None
    lc1 = by_id["LC1"].judge(evidence)
    assert lc1.status == {"not-sustainable": REPRODUCED, "sustainable": NOT_REPRODUCED,
                          "inconclusive": INCONCLUSIVE}[single.verdict]
    # A claim of an experiment that did not run says so.
    assert by_id["LC7"].judge(evidence).status == NOT_RUN


# ---------------------------------------------------------------- bad input


def test_bad_input_exits_2_with_a_reason(tmp_path, lsmbench):
    proc = lsmbench("reproduce", "--paper", "knuth", "--results", str(tmp_path))
    assert proc.returncode == 2 and "--paper: unknown knuth" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = lsmbench("reproduce", "--pages-only", "--results", str(tmp_path))
    assert proc.returncode == 2 and "no readable reproduce.json" in proc.stderr
    afile = tmp_path / "f"
    afile.write_text("x")
    proc = lsmbench("reproduce", "--pages-only", "--results", str(tmp_path), "--out", str(afile))
    assert proc.returncode == 2 and "not a directory" in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_a_damaged_run_record_is_refused(store, lsmbench):
    (store / "reproduce" / pages.RUN_FILE).write_text(json.dumps({"variant": 3}))
    proc = lsmbench("reproduce", "--pages-only", "--results", str(store))
    assert proc.returncode == 2 and "no readable reproduce.json" in proc.stderr


def test_the_sim_agreement_figure_plots_the_table(store):
    """Mao et al.'s Fig. 7 on the page: a point per policy and k, (lsm-sim WA, engine WA) as
    the stored table has them, CONSTANT left out; R^2 per policy from those points."""
    from lsmbench.reproduce.simfigure import agreement_figure, agreement_series, r_squared
    from lsmbench.reproduce.simtable import read_table

    table = read_table(store / "reproduce", "repro-mao-sim")
    assert table is not None
    series = agreement_series(table)
    assert "constant" not in series
    for r in table.rows:
        if r.policy != "constant":
            assert (r.sim_write_amp, r.engine_write_amp) in series[r.policy]
    assert sum(len(v) for v in series.values()) == sum(1 for r in table.rows
                                                       if r.policy != "constant")
    assert r_squared([(1.0, 2.0), (2.0, 4.0), (3.0, 6.0)]) == pytest.approx(1.0)
    assert r_squared([(1.0, 2.0), (2.0, 4.0)]) is None  # two points: no fit to speak of
    fig = agreement_figure(table)
    assert fig is not None and fig.id == "sim-agreement" and fig.png.startswith(b"\x89PNG")
    assert "Fig. 7" in fig.caption


def test_a_tune_experiment_shows_its_confirmed_configurations(store, tmp_path):
    """A tune study's section lists its confirmed configurations (fresh repetitions), the
    answer marked, from tune.json; PV4 compares the answer's with the defaults' intervals."""
    study = store / "reproduce" / "tune-leveldb-closed-loop"
    shutil.copytree(store / "reproduce" / "repro-lc-schedulers", study)  # any stored points
    tune = {"best": {"params": {"write_buffer_size": 8 << 20, "max_file_size": 16 << 20}},
            "confirmed": [
                {"params": {"write_buffer_size": 8 << 20, "max_file_size": 16 << 20},
                 "median": 300.0, "ci_low": 290.0, "ci_high": 310.0, "repetitions": 3},
                {"params": {"write_buffer_size": 4 << 20, "max_file_size": 2 << 20},
                 "defaults": True, "median": 200.0, "ci_low": 195.0, "ci_high": 305.0,
                 "repetitions": 3}]}
    (study / "tune.json").write_text(json.dumps(tune))
    exps = [e for e in SUITE if e.paper == "pramanik"]
    evidence = pages.load_evidence(store / "reproduce", exps)
    sec = pages.section(exps[1], evidence, None, tmp_path)
    assert sec.columns == pages.CONFIRMED_COLUMNS
    assert [r[2] for r in sec.groups] == ["yes", ""]
    assert sec.groups[1][0].endswith("(the defaults)") and "(n=3)" in sec.groups[0][1]
    by_id = {c.id: c for c in all_claims()}
    assert by_id["PV4"].judge(evidence).status == INCONCLUSIVE  # 290-310 overlaps 195-305
    assert by_id["PV5"].judge(evidence).status == REPRODUCED  # 16 MiB > twice 2 MiB
