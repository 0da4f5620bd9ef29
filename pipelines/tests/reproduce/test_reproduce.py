"""`lsmbench reproduce`: the suite's specs, lsm-sim-validate's table and series,
the long simulations, the pages from a recorded store (fixtures/reproduce), re-running one
experiment, and bad input."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from lsmbench.reproduce import pages
from lsmbench.reproduce.claims import all_claims
from lsmbench.reproduce.evidence import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_RUN,
    REPRODUCED,
    fmt_seconds,
    param,
    query_rate,
    read_evidence,
)
from lsmbench.reproduce.simfigure import series_k
from lsmbench.reproduce.simlong import POLICIES, SimLongError, read_long, run_long
from lsmbench.reproduce.simtable import (
    SeriesRow,
    SimRow,
    SimTable,
    SimTableError,
    find_validate,
    parse,
    read_table,
    run_validate,
)
from lsmbench.reproduce.suite import PAPERS, SUITE, experiments
from repo_paths import TESTS

DATASETS = TESTS / "fixtures" / "datasets" / "results"


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
    # Both sides over time (Fig. 6): every 1st flush by default at 120 flushes / 100, the
    # last row of each run being the table's final figures.
    stored = read_table(tmp_path, "repro-mao-sim")
    assert stored is not None
    for r in table.rows:
        runs = [s for s in stored.series if (s.policy, s.k) == (r.policy, r.k)]
        assert [s.flushes for s in runs] == list(range(1, 121))
        assert runs[-1].engine_write_amp == pytest.approx(r.engine_write_amp, abs=1e-4)
        assert runs[-1].sim_write_amp == pytest.approx(r.sim_write_amp, abs=1e-4)
        assert all(1 <= s.engine_sstables <= 4 for s in runs)


def _series(policy: str, engine: list[float], sim: list[float], k: int = 7) -> list[SeriesRow]:
    return [SeriesRow(policy=policy, k=k, flushes=10 * (i + 1), engine_write_amp=e,
                      sim_write_amp=m, engine_sstables=3, sim_sstables=3)
            for i, (e, m) in enumerate(zip(engine, sim, strict=True))]


def test_tracking_over_time_takes_the_largest_difference_at_any_flush():
    """M7 (Fig. 6): the static policies must stay within 5 % of the simulator at every
    point, not just at the end."""
    by_id = {c.id: c for c in all_claims()}
    row = SimRow(policy="binomial", k=7, flushes=30, engine_write_amp=3.0, sim_write_amp=3.0,
                 write_amp_diff_pct=0, engine_avg_sstables=3, sim_avg_sstables=3,
                 avg_sstables_diff=0, agree="yes")
    close = [1.0, 2.0, 3.0]
    series = (_series("minlatency", close, close) + _series("bigtable", close, close)
              + _series("exploring", [1.0, 2.3, 3.0], close))
    ok = SimTable(name="t", rows=[row], series=series + _series("binomial", close, close))
    found = by_id["M7"].judge({"repro-mao-sim": ok})
    assert found.status == REPRODUCED and "exploring 15.0 %" in found.ours
    # 6 % apart at the middle flush only: the end agrees, the claim does not hold.
    bad = SimTable(name="t", rows=[row],
                   series=series + _series("binomial", [1.0, 2.12, 3.0], close))
    assert by_id["M7"].judge({"repro-mao-sim": bad}).status == NOT_REPRODUCED
    # The k drawn and judged is the paper's 7 when it ran, else the nearest.
    assert series_k(SimTable(name="t", rows=[row], series=_series("binomial", close, close, 6)
                             + _series("binomial", close, close, 8))) == 6
    none = SimTable(name="t", rows=[row])
    assert by_id["M7"].judge({"repro-mao-sim": none}).status == INCONCLUSIVE


def test_long_simulations_with_the_real_simulator(tmp_path, sim_path):
    """Fig. 8's experiment at a small scale: every policy through lsm-sim, rows spaced on a
    log scale with 16 x 4^k among them, the growth exponent fitted from there; the growth
    claim's status follows from the exponents the store holds."""
    run_long(tmp_path / "long", "long", [(3, 10_000), (6, 2_000)])
    sims = read_long(tmp_path, "long")
    assert sims is not None and sims.ks == [3, 6]
    assert {r.policy for r in sims.runs} == set(POLICIES)
    for r in sims.runs:
        flushes = [p.flushes for p in r.points]
        assert flushes == sorted(set(flushes)) and flushes[-1] == r.flushes
        assert 16 * 4 ** r.k in flushes or 16 * 4 ** r.k >= r.flushes
        assert all(p.write_amp >= 1 for p in r.points)
    k3 = {r.policy: r for r in sims.runs if r.k == 3}
    for r in k3.values():  # 10,000 / 1,024 flushes: enough span to fit
        a, b = r.at(16 * 64), r.points[-1]
        assert a is not None
        assert r.growth_exponent() == pytest.approx(
            math.log(b.write_amp / a.write_amp) / math.log(b.flushes / a.flushes))
    assert all(r.growth_exponent() is None for r in sims.runs if r.k == 6)  # too short
    exps = {p: k3[p].growth_exponent() for p in ("minlatency", "binomial", "bigtable",
                                                  "exploring")}
    laws_hold = (all(abs(exps[p] - 1 / 3) < abs(exps[p] - 1) for p in ("minlatency", "binomial"))
                 and all(abs(exps[p] - 1) < abs(exps[p] - 1 / 3) for p in ("bigtable",
                                                                            "exploring")))
    by_id = {c.id: c for c in all_claims()}
    found = by_id["M8"].judge({"repro-mao-long": sims})
    assert found.status == (REPRODUCED if laws_hold else NOT_REPRODUCED)
    assert f"minlatency {exps['minlatency']:.3f}" in found.ours
    # M9 reads Fig. 8's runs (k 6 here): its status from the final write amplifications.
    final = {r.policy: r.points[-1].write_amp for r in sims.runs if r.k == 6}
    lowest = max(final["minlatency"], final["binomial"]) < min(final["bigtable"],
                                                                final["exploring"])
    assert by_id["M9"].judge({"repro-mao-long": sims}).status == (
        REPRODUCED if lowest else NOT_REPRODUCED)
    (tmp_path / "long" / "sim.json").write_text("{}")
    with pytest.raises(SimLongError, match="not the long simulations' result"):
        read_long(tmp_path, "long")


def test_sim_table_refuses_what_is_not_its_csv():
    with pytest.raises(SimTableError, match="no rows"):
        parse("policy,k\n", "x")
    with pytest.raises(SimTableError, match="not lsm-sim-validate's CSV"):
        parse("policy,k,flushes\nbinomial,four,10\n", "x")


# ---------------------------------------------------------------- pages


def test_pages_from_a_recorded_store(store, tmp_path, lsmbench):
    out = tmp_path / "pages"
    proc = lsmbench("reproduce", "--pages-only", "--results", str(store), "--out", str(out),
                    "--json")
    assert proc.returncode == 0, proc.stderr
    said = json.loads(proc.stdout)
    assert said["pages"] == [str(out / f"{p}.md") for p in PAPERS]
    assert said["experiments"] == {"repro-lc-schedulers": 0, "repro-mao-sim": 0,
                                   "repro-mao-long": 0, "repro-mao-updates": 0}
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


def test_out_replaces_only_what_reproduce_wrote(store, tmp_path, lsmbench):
    """A page or figure of the user's at a name reproduce writes is refused before anything
    runs (exit 2, kept); the user's other files stay; reproduce's own files are replaced."""
    out = tmp_path / "pages"
    (out / "img" / "mao").mkdir(parents=True)
    (out / "img" / "mao" / "mine.png").write_bytes(b"my figure")
    (out / "notes.md").write_text("keep me")
    proc = lsmbench("reproduce", "--pages-only", "--results", str(store), "--out", str(out))
    assert proc.returncode == 2 and "img/mao/mine.png" in proc.stderr
    assert "Traceback" not in proc.stderr and not (out / "mao.md").exists()
    (out / "img" / "mao" / "mine.png").unlink()
    (out / "luo-carey.md").write_text("my notes on the paper")
    proc = lsmbench("reproduce", "--pages-only", "--results", str(store), "--out", str(out))
    assert proc.returncode == 2 and "luo-carey.md" in proc.stderr
    assert (out / "luo-carey.md").read_text() == "my notes on the paper"
    (out / "luo-carey.md").unlink()
    for _ in range(2):
        proc = lsmbench("reproduce", "--pages-only", "--results", str(store), "--out", str(out))
        assert proc.returncode == 0, proc.stderr
    assert (out / "notes.md").read_text() == "keep me"
    assert "Variant **quick**" in (out / "luo-carey.md").read_text()


def test_a_page_draws_only_the_figures_it_shows(store):
    """The pages ask the report for their figures by id: the same figures, byte for byte, as
    drawing all of them and keeping those, without drawing the rest."""
    from lsmbench.report.catalog import all_figures

    ev = read_evidence(store / "reproduce", "repro-lc-schedulers")
    assert ev is not None
    every = all_figures(ev.campaign.points)
    wanted = ["latency", "components", "vs-size_ratio"]
    some = all_figures(ev.campaign.points, only=wanted)
    assert [(f.id, f.png) for f in some] == [(f.id, f.png) for f in every if f.id in wanted]
    assert {f.id for f in some} == {"latency", "components"}  # no size ratio in this campaign
    assert all_figures(ev.campaign.points, only=[]) == []


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


def test_secondary_index_claims_read_the_sweep_and_the_query_rates():
    """Sec. 7's claims on the recorded dataset campaign (fixtures/datasets: eager and lazy, a
    0.7/0.95 sweep, secondary queries, one repetition, the greedy scheduler only): the p99 of
    each swept utilization is that running phase's own (its summary.json), and claims that need
    a scheduler the campaign did not vary, or three repetitions, are inconclusive, not
    decided."""
    from lsmbench.reproduce.claims import luo_carey
    ev = read_evidence(DATASETS, "dataset-fixture")
    assert ev is not None and len(ev.groups) == 2
    for pid, pt in ev.points.items():
        for u in (0.7, 0.95):
            summary = json.loads((pt.path / f"running@{u}" / "summary.json").read_text())
            want = summary["write_latency_us"]["p99"] / 1e6
            got = luo_carey._p99_at(u)(pt)
            assert got is not None and math.isclose(got, want, rel_tol=1e-3), (pid, u)
        assert luo_carey._p99_at(0.5)(pt) is None
        rate = query_rate("secondary")(pt)
        assert rate is not None and rate > 0, pid
    by_id = {c.id: c for c in all_claims()}
    evidence = {"secondary-indexes": ev, "secondary-indexes-sweep": ev,
                "secondary-indexes-queries": ev}
    for cid in ("LC29", "LC30", "LC32", "LC33", "LC34", "LC35"):
        assert by_id[cid].judge(evidence).status == INCONCLUSIVE, cid
    # The sweep's two ends, as measured, and one run is no evidence.
    pt = next(iter(ev.points.values()))
    sweep = luo_carey._sweep(ev, secondary_maintenance=pt.params["secondary_maintenance"])
    assert sweep.status == INCONCLUSIVE and "fewer than 3 repetitions" in sweep.why
    for u in (0.7, 0.95):
        assert f"{u:.0%} {fmt_seconds(luo_carey._p99_at(u)(pt))}" in sweep.ours


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


def test_the_over_time_and_long_run_figures_plot_the_store(store):
    """Mao et al.'s Figs. 6 and 8 from the recorded store: Fig. 6's curves are the stored
    series of one k (the paper's 7, else the nearest: 8 of 4 and 8 here) on both sides; Fig. 8
    has a panel per run of the paper's k (6 here; 3 is no panel) with every policy's points."""
    from lsmbench.reproduce.simfigure import (
        long_figure,
        over_time_figure,
        series_by_policy,
    )

    table = read_table(store / "reproduce", "repro-mao-sim")
    assert table is not None and table.series
    k = series_k(table)
    assert k == 8
    runs = series_by_policy(table, k)
    assert set(runs) == {r.policy for r in table.rows}
    for policy, rows in runs.items():
        final = table.row(policy, k)
        assert final is not None and rows[-1].flushes == final.flushes
        assert rows[-1].engine_write_amp == pytest.approx(final.engine_write_amp, abs=1e-4)
    fig = over_time_figure(table)
    assert fig is not None and fig.id == "sim-over-time" and fig.png.startswith(b"\x89PNG")
    assert "Fig. 6" in fig.caption and f"k = {k}" in fig.title

    sims = read_long(store / "reproduce", "repro-mao-long")
    assert sims is not None
    fig = long_figure(sims)
    assert fig is not None and fig.id == "sim-long" and "Fig. 8" in fig.caption
    assert f"All {len(sims.runs)} runs took" in fig.caption
    assert over_time_figure(SimTable(name="t", rows=table.rows)) is None  # no series kept


def test_the_updates_figure_and_claims_follow_the_store(store):
    """Mao et al.'s Fig. 4 from the recorded store (k 4, 100 flushes, without and with 70 %
    updates): the figure's two panels are the two settings' stored series, and M10-M12's
    statuses follow from the table by their rules, recomputed here from its numbers. A table
    without updates (the older repro-mao-sim, stored before the column existed) draws no such
    figure and its rows read as appends."""
    from lsmbench.reproduce.simfigure import series_by_policy, updates_figure

    table = read_table(store / "reproduce", "repro-mao-updates")
    assert table is not None and table.update_fractions == [0.0, 0.7]
    for f in table.update_fractions:
        runs = series_by_policy(table, 4, f)
        assert set(runs) == {"bigtable", "exploring", "minlatency", "binomial"}
        for policy, rows in runs.items():
            final = table.row(policy, 4, f)
            assert final is not None and rows[-1].flushes == final.flushes == 100
            assert rows[-1].engine_write_amp == pytest.approx(final.engine_write_amp, abs=1e-4)
    fig = updates_figure(table)
    assert fig is not None and fig.id == "sim-updates" and fig.png.startswith(b"\x89PNG")
    assert "Fig. 4" in fig.caption and "70%" in fig.caption

    pairs = {r.policy: (table.row(r.policy, 4).engine_write_amp, r.engine_write_amp)
             for r in table.rows if r.update_fraction == 0.7}
    by_id = {c.id: c for c in all_claims()}
    evidence = {"repro-mao-updates": table}
    lower = all(b < a for a, b in pairs.values())
    assert by_id["M10"].judge(evidence).status == (REPRODUCED if lower else NOT_REPRODUCED)
    same = sorted(pairs, key=lambda p: pairs[p][0]) == sorted(pairs, key=lambda p: pairs[p][1])
    m11 = by_id["M11"].judge(evidence)
    assert m11.status == (REPRODUCED if same else NOT_REPRODUCED)
    assert same or "trade places" in m11.why
    bounded = all(r.engine_write_amp <= r.sim_write_amp for r in table.rows
                  if r.update_fraction > 0)
    assert by_id["M12"].judge(evidence).status == (REPRODUCED if bounded else NOT_REPRODUCED)

    appends = read_table(store / "reproduce", "repro-mao-sim")
    assert appends is not None and appends.update_fractions == [0.0]
    assert updates_figure(appends) is None
    assert by_id["M10"].judge({"repro-mao-updates": appends}).status == INCONCLUSIVE


def test_one_experiment_again_into_the_stored_run(store, tmp_path, lsmbench, sim_path):
    """`--experiment` runs only what it names, keeps every other experiment's record and
    result, stamps the re-run with its commit, and writes only its paper's page."""
    before = pages.read_run(store / "reproduce")
    assert before is not None
    out = tmp_path / "pages"
    proc = lsmbench("reproduce", "--quick", "--experiment", "repro-mao-long", "--results",
                    str(store), "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    said = json.loads(proc.stdout)
    assert said["pages"] == [str(out / "mao.md")]
    after = pages.read_run(store / "reproduce")
    assert after is not None and after.started == before.started
    assert set(after.experiments) == set(before.experiments)
    for name in ("repro-lc-schedulers", "repro-mao-sim"):
        assert after.experiments[name] == before.experiments[name]
    rerun = after.experiments["repro-mao-long"]
    assert rerun.exit_code == 0 and rerun.finished and rerun.commit
    sims = read_long(store / "reproduce", "repro-mao-long")
    assert sims is not None and [(r.k, r.flushes) for r in sims.runs[::len(POLICIES)]] == [
        (k, n) for k, n in next(e for e in SUITE if e.name == "repro-mao-long").sim_runs]
    text = (out / "mao.md").read_text()
    if rerun.commit != after.commit:
        assert "re-run alone (`--experiment`)" in text
    # The stored run is the quick variant: re-running one of its experiments as the full one
    # would mix the variants on one page.
    proc = lsmbench("reproduce", "--experiment", "repro-mao-long", "--results", str(store))
    assert proc.returncode == 2 and "is the quick variant" in proc.stderr
    proc = lsmbench("reproduce", "--experiment", "repro-nope", "--results", str(store))
    assert proc.returncode == 2 and "--experiment: unknown repro-nope" in proc.stderr
    proc = lsmbench("reproduce", "--experiment", "repro-mao-long", "--paper", "pramanik",
                    "--results", str(store))
    assert proc.returncode == 2 and "is not all of --paper" in proc.stderr
    proc = lsmbench("reproduce", "--experiment", "repro-mao-long", "--pages-only",
                    "--results", str(store))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert pages.read_run(store / "reproduce") == after  # refused calls changed nothing


def test_a_run_built_up_by_experiments_says_its_whole_span_and_commits():
    """A full variant kept in sittings: the record's own start, end and commit are its first
    invocation's; the page's header must span every experiment on it."""
    def exp(name, commit, started, finished):
        return pages.ExperimentRun(name=name, command="-", exit_code=0, seconds=1.0,
                                   commit=commit, started=started, finished=finished)

    run = pages.SuiteRun(variant="full", started="2026-11-28T19:45:00Z",
                         ended="2026-11-28T20:21:03Z", commit="aaa", experiments={
                             "one": exp("one", "aaa", None, "2026-11-28T20:21:00Z"),
                             "two": exp("two", "ccc", "2026-11-29T08:49:24Z",
                                        "2026-11-29T09:48:09Z"),
                             "three": exp("three", "bbb", "2026-11-29T07:41:00Z",
                                          "2026-11-29T08:04:00Z")})
    parts = pages.run_in_parts(run, ["one", "two", "three"])
    assert parts is not None
    assert (parts.started, parts.ended) == ("2026-11-28T19:45:00Z", "2026-11-29T09:48:09Z")
    assert parts.commits == ["aaa", "bbb", "ccc"]  # the record's, then by when they ended
    # The experiments of one invocation: the record says it all, also while it runs.
    assert pages.run_in_parts(run, ["one"]) is None
    assert pages.run_in_parts(run.model_copy(update={"ended": None}), ["one"]) is None


def test_full_only_experiments_and_results_the_run_did_not_make(store, tmp_path, lsmbench):
    """--quick leaves out the full-only experiments and their pages say why; a result in the
    store that the recorded suite run did not make (an older run's) is not evidence."""
    full_only = [e for e in SUITE if e.full_only]
    assert full_only and all(e.paper == "luo-carey" for e in full_only)
    proc = lsmbench("reproduce", "--quick", "--experiment", full_only[0].name, "--results",
                    str(store))
    assert proc.returncode == 2 and "the full variant only" in proc.stderr
    run_file = store / "reproduce" / pages.RUN_FILE
    recorded = json.loads(run_file.read_text())
    del recorded["experiments"]["repro-mao-long"]  # its results stay in the store
    run_file.write_text(json.dumps(recorded))
    out = tmp_path / "pages"
    proc = lsmbench("reproduce", "--pages-only", "--results", str(store), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lc = (out / "luo-carey.md").read_text()
    for e in full_only:
        section = lc.split(f"## {e.title}", 1)[1].split("\n## ", 1)[0]
        assert "Not run: the full variant only" in section
    for c in all_claims():
        if c.experiment in {e.name for e in full_only} | {"repro-mao-long"}:
            page = (out / f"{c.paper}.md").read_text()
            row = next(line for line in page.splitlines() if line.startswith(f"| {c.id} |"))
            assert f"**{NOT_RUN}**" in row, row


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


def _null_experiments(base: Path) -> tuple[Any, ...]:
    """Two experiments on the null engine with fixed phases of seconds: rs-one of two
    repetitions, rs-two of one."""
    from lsmbench.reproduce.suite import Experiment

    exps = []
    for name, reps in (("rs-one", 2), ("rs-two", 1)):
        spec = {"name": name, "engine": {"name": "null"},
                "matrix": {"repetitions": reps},
                "workload": {"file": "update-uniform-1kb", "set": {"record_count": 2000}},
                "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                           "running": {"duration": "1s"}},
                "throttle": "none"}
        path = base / f"{name}.yaml"
        path.write_text(yaml.safe_dump(spec))
        exps.append(Experiment(name=name, paper="luo-carey", title=f"Experiment {name}",
                               spec=str(path), setup="a test's"))
    return tuple(exps)


@pytest.mark.slow
def test_an_interrupted_suite_goes_on_from_its_complete_points(tmp_path, lsmbench,
                                                               monkeypatch, driver_path):
    """--resume: an experiment the stored run finished is not run again; one an interruption
    cut short keeps its complete points and runs only the rest; the record says it resumed,
    with its points' time."""
    from lsmbench.reproduce import cli as reproduce_cli
    from lsmbench.reproduce import suite
    from lsmbench.store import Store

    exps = _null_experiments(tmp_path)
    monkeypatch.setattr(suite, "SUITE", exps)
    monkeypatch.setattr(reproduce_cli, "SUITE", exps)
    results, out = tmp_path / "results", tmp_path / "pages"
    args = ("reproduce", "--paper", "luo-carey", "--results", str(results), "--out", str(out))
    proc = lsmbench(*args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    store = results / "reproduce"
    first = pages.read_run(store)
    assert first is not None and first.ended is not None
    # As an interruption during rs-one's second point leaves the store: its first point
    # complete, the second gone, rs-one not recorded, the suite run not ended.
    kept, cut = sorted(Store(store).points("rs-one"), key=lambda p: p.data["rep"])
    shutil.rmtree(cut.path)
    record = json.loads((store / pages.RUN_FILE).read_text())
    del record["experiments"]["rs-one"]
    record["ended"] = None
    (store / pages.RUN_FILE).write_text(json.dumps(record))

    proc = lsmbench(*args, "--resume")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "finished before, not run again: rs-two" in proc.stdout
    after = pages.read_run(store)
    assert after is not None and after.ended is not None and after.started == first.started
    assert after.experiments["rs-two"] == first.experiments["rs-two"]
    resumed = after.experiments["rs-one"]
    assert resumed.exit_code == 0 and resumed.resumed and "--resume" in resumed.command
    points = {p.data["rep"]: p for p in Store(store).points("rs-one")}
    assert sorted(points) == [0, 1] and all(p.state == "complete" for p in points.values())
    assert points[0].data["started"] == kept.data["started"]  # not run again
    assert points[1].data["started"] > kept.data["finished"]
    assert resumed.points_s == pytest.approx(
        sum(p.data["wall_s"] for p in points.values()), abs=0.2)
    assert resumed.took_s >= resumed.seconds
    section = (out / "luo-carey.md").read_text().split("## Experiment rs-one", 1)[1]
    assert "(resumed with `--resume`: its points" in section.split("\n## ", 1)[0]

    # Bad input: nothing runs, nothing changes.
    proc = lsmbench(*args, "--resume", "--pages-only")
    assert proc.returncode == 2 and "--resume runs experiments" in proc.stderr
    proc = lsmbench(*args, "--resume", "--quick")
    assert proc.returncode == 2 and "--resume: the suite run stored" in proc.stderr
    assert pages.read_run(store) == after


def test_a_page_whose_experiments_ran_on_two_machines_names_each(store, tmp_path, lsmbench):
    """A store assembled over sittings on different machines: the page says so, and each
    section names the machine its points' fingerprints give (not the run record's one)."""
    points = sorted((store / "reproduce" / "repro-lc-schedulers").glob("*/fingerprint.json"))
    assert len(points) >= 2
    cpus = set()
    for f in points:
        cpus.add(json.loads(f.read_text())["cpu_model"])
    assert len(cpus) == 1  # the fixture: one machine
    other = json.loads(points[0].read_text())
    (cpu,) = cpus
    out = tmp_path / "pages"
    assert lsmbench("reproduce", "--pages-only", "--results", str(store), "--out",
                    str(out)).returncode == 0
    one = (out / "luo-carey.md").read_text()
    assert "machines, which each section names" not in one
    # Half the points from another machine.
    for f in points[: len(points) // 2]:
        f.write_text(json.dumps({**other, "cpu_model": "Other CPU"}))
    assert lsmbench("reproduce", "--pages-only", "--results", str(store), "--out",
                    str(out)).returncode == 0
    two = (out / "luo-carey.md").read_text()
    assert "on 2 machines, which each section names" in two
    assert f"{cpu} (" in two and "Other CPU (" in two
