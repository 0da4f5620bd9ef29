"""`lsmbench report` on a recorded campaign (pipelines/tests/fixtures/report/results/, made by
running fixtures/report/campaign.yaml with lsm-driver): every figure present, every table number
equal to the store's, escaping of spec values, a failed point rendered failed, --compare ratios,
and the HTML opened in a real headless Chromium (no console errors, figures of non-zero size,
a screenshot)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from browser import CHROMIUM, chromium_dom, parse, png_size, run_chromium
from lsmbench.report import build_report
from lsmbench.report.figures import flushes_figure, query_figure, sweep_figure
from lsmbench.report.load import StoredPhase, StoredPoint, read_campaign
from lsmbench.report.render import md_escape
from lsmbench.report.series import windowed
from repo_paths import TESTS

FIXTURE = TESTS / "fixtures" / "report" / "results" / "report-fixture"
ALL_FIGURES = ["throughput", "components", "latency", "queries", "flushes", "sweep",
               "rate"]  # the last in the Workload section
FAILED_POINT = "policy=tiering,memtable_bytes=1K,rep=0"
GOOD_POINTS = ["policy=tiering,memtable_bytes=1M,rep=0", "policy=leveling,memtable_bytes=1M,rep=0"]


def copy_fixture(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest)
    return dest


# -- parsing the rendered HTML ------------------------------------------------------------------


# -- the expected numbers, straight from the store's files ----------------------------------------


def expected_row(point_dir: Path) -> dict[str, float | None]:
    point = json.loads((point_dir / "point.json").read_text())
    if point["state"] != "complete":
        return {}
    run_dir = point_dir / point["verdict"]["phase"]
    summary = json.loads((run_dir / "summary.json").read_text())
    intervals = [json.loads(x) for x in (run_dir / "timeseries.jsonl").read_text().splitlines()]
    comps = [iv["engine"]["disk_components"] for iv in intervals
             if iv["measured"] and not iv.get("drain")]
    wl, pl = summary["write_latency_us"], summary["write_processing_latency_us"]
    return {
        "max_write_throughput": point["max_throughput"]["writes_per_s"],
        "write_p50_ms": wl["p50"] / 1000, "write_p99_ms": wl["p99"] / 1000,
        "write_p999_ms": wl["p999"] / 1000,
        "proc_p50_ms": pl["p50"] / 1000, "proc_p99_ms": pl["p99"] / 1000,
        "proc_p999_ms": pl["p999"] / 1000,
        "stall_count": summary["stalls"]["engine_stall_count"],
        "stall_s": summary["stalls"]["engine_stall_micros"] / 1e6,
        "write_amplification": summary["engine_metrics"]["end"]["write_amplification"],
        "avg_components": sum(comps) / len(comps),
        "max_components": max(comps),
        # The JSON's word, as every view shows it.
        "verdict": point["verdict"].get("verdict") or (
            "sustainable" if point["verdict"]["sustainable"] else "not-sustainable"),
    }


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    camp = copy_fixture(tmp_path_factory.mktemp("store") / "report-fixture")
    files = build_report(camp, camp.parent)
    return camp, files


# -- the report's content -----------------------------------------------------------------------


def test_every_figure_is_present_and_embedded(report):
    camp, files = report
    assert files.html == camp / "report" / "report.html"
    assert files.figures == ALL_FIGURES
    html = files.html.read_text()
    page = parse(html)
    figs = [img for img in page.images if (img.get("src") or "").startswith("data:image/png")]
    assert len(figs) == len(ALL_FIGURES)
    import base64

    for img in figs:
        w, h = png_size(base64.b64decode(img["src"].split(",", 1)[1]))
        assert w > 300 and h > 200
    for fid in ALL_FIGURES:
        assert f'data-figure="{fid}"' in html
        w, h = png_size((files.dir / "figures" / f"{fid}.png").read_bytes())
        assert w > 0 and h > 0
    # Self-contained: nothing is fetched, and the page forbids fetching anything.
    assert "http://" not in html.split("<body>", 1)[1] and "https://" not in html
    assert "default-src 'none'" in html
    # Every figure says what it covers; the throughput window fell back to the interval and
    # says so (the fixture's phases are shorter than 3 x 30 s).
    assert "shorter than 3 windows of 30 s" in html


def test_table_numbers_equal_the_store(report):
    camp, files = report
    rows = parse(files.html.read_text()).tables["summary-table"][1:]
    assert [r["attrs"]["data-point"] for r in rows] == [GOOD_POINTS[0], FAILED_POINT,
                                                       GOOD_POINTS[1]]
    for row in rows:
        expected = expected_row(camp / row["attrs"]["data-point"])
        got = {a["data-key"]: a["data-value"] for a, _ in row["cells"] if "data-key" in a}
        if not expected:
            assert all(v == "" for v in got.values()), got  # a failed point has no numbers
            continue
        assert set(got) == set(expected)
        for key, value in expected.items():
            if key == "verdict":
                assert got[key] == value
                continue
            assert float(got[key]) == pytest.approx(value, rel=1e-12), key
        shown = {a["data-key"]: text for a, text in row["cells"] if "data-key" in a}
        assert shown["verdict"] == expected["verdict"]
        assert shown["max_write_throughput"] == f"{expected['max_write_throughput']:,.0f}"
        assert shown["stall_count"] == f"{expected['stall_count']:,.0f}"
    md = files.markdown.read_text()
    for pid in GOOD_POINTS:
        exp = expected_row(camp / pid)
        line = next(x for x in md.splitlines() if x.startswith(f"| {pid} |"))
        assert f"| {exp['max_write_throughput']:,.0f} |" in line
        assert f"| {exp['write_p99_ms']:.3g} |" in line


def test_the_workload_section_of_points_stored_without_shape_records(report):
    """The fixture predates workload_shape.json: the section shows what its files hold (the op
    mix the driver completed, the rate) and says that the op stream's sample is missing."""
    camp, files = report
    rows = parse(files.html.read_text()).tables["workload-table"][1:]
    shown = {(r["attrs"]["data-group"], r["attrs"]["data-phase"]):
             {a.get("data-key", str(i)): text for i, (a, text) in enumerate(r["cells"])}
             for r in rows}
    expected = set()
    for pid in GOOD_POINTS:
        point = json.loads((camp / pid / "point.json").read_text())
        group = pid.removesuffix(",rep=0")
        for phase in ("testing", point["verdict"]["phase"]):
            expected.add((group, phase))
            summary = json.loads((camp / pid / phase / "summary.json").read_text())
            cells = shown[(group, phase)]
            queries = [f"{k} {q['ops']:,}" for k, q in (summary.get("queries") or {}).items()
                       if isinstance(q, dict) and q.get("ops")]
            assert cells["op_mix"] == "update\u00a0100.0\u00a0%" + (
                f"; query threads: {', '.join(queries)}" if queries else "")
            assert cells["requests"] == f"{summary['ops']['total']:,}"
            assert cells["rate_mean"] == f"{summary['throughput']['mean']:,.0f}"
            assert cells["top_1pct_key_share"] == cells["value_size_p50"] == "\u2013"
            assert "stored without workload_shape.json" in cells["notes"]
    assert set(shown) == expected  # the failed point has no row
    assert "Workload (what each group's workload sent" in files.markdown.read_text()


def test_failed_point_is_rendered_failed_with_its_error(report):
    camp, files = report
    error = json.loads((camp / FAILED_POINT / "point.json").read_text())["error"]["message"]
    tables = parse(files.html.read_text()).tables
    row = next(r for r in tables["summary-table"] if r["attrs"].get("data-point") == FAILED_POINT)
    assert "failed" in row["attrs"]["class"].split()
    assert row["cells"][1][1] == "failed"
    failed = tables["failed-table"][1:]
    assert len(failed) == 1 and failed[0]["cells"][0][1] == FAILED_POINT
    assert failed[0]["cells"][1][1] == f"load: {error}"
    md = files.markdown.read_text()
    assert f"| {FAILED_POINT} | failed |" in md
    assert "memtable_bytes&#x27;" not in md and "bad value '1K'" in md


def test_fingerprint_and_resolved_spec_at_the_end(report):
    camp, files = report
    html = files.html.read_text()
    fp = json.loads((camp / GOOD_POINTS[0] / "fingerprint.json").read_text())
    tables = parse(html).tables
    common = {r["cells"][0][1]: r["cells"][1][1] for r in tables["fingerprint-table"][1:]}
    assert common["kernel"] == fp["kernel"]
    assert common["project.commit"] == fp["project"]["commit"]
    assert html.index('id="fingerprint"') > html.index('id="fig-sweep"')
    assert "utilizations:" in html and "- 0.5" in html  # the campaign spec, as YAML
    assert html.count("resolved configuration (spec.json)") == 3


def test_spec_values_are_escaped(tmp_path):
    camp = copy_fixture(tmp_path / "evil")
    bad_name = '<script>alert("name")</script>'
    bad_value = '<img src=x onerror="document.title=1">'
    meta = json.loads((camp / "campaign.json").read_text())
    meta["campaign"] = bad_name
    meta["spec"]["name"] = bad_name
    meta["spec"]["description"] = "</pre><script>alert(2)</script>"
    meta["spec"]["engine"]["options"]["wal"] = bad_value
    (camp / "campaign.json").write_text(json.dumps(meta))
    point_file = camp / GOOD_POINTS[0] / "point.json"
    point = json.loads(point_file.read_text())
    point["params"]["policy"] = bad_value
    point_file.write_text(json.dumps(point))
    failed_file = camp / FAILED_POINT / "point.json"
    failed = json.loads(failed_file.read_text())
    failed["error"]["message"] = "boom | <b>bold</b>\nsecond line"
    failed_file.write_text(json.dumps(failed))

    files = build_report(camp, tmp_path)
    html = files.html.read_text()
    for raw in (bad_name, bad_value, "<script>alert(2)", "<b>bold</b>"):
        assert raw not in html
    assert "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;" in html
    assert html.count("<script>") == 1  # the report's own table sort, nothing else
    page = parse(html)
    assert page.tables["summary-table"][1:][0]["cells"][0][1] == GOOD_POINTS[0]
    md = files.markdown.read_text()
    assert "<script>" not in md and "<b>" not in md and "&lt;script&gt;" in md
    assert "boom \\| &lt;b&gt;bold&lt;/b&gt; second line" in md  # one table-safe line
    if Path(CHROMIUM).exists():  # the page as a browser builds it, too
        dom, console = chromium_dom(files.html, tmp_path / "chromium-evil")
        assert console == []
        # In the DOM: the name is the heading's text, and no element was injected.
        body = parse(dom)
        probe = body.body_attrs
        assert probe["data-probe-name"] == bad_name
        assert probe["data-probe-counts"] == f"2 scripts, {len(ALL_FIGURES)} images"


def test_damaged_point_is_reported_not_fatal(tmp_path):
    camp = copy_fixture(tmp_path / "damaged")
    (camp / GOOD_POINTS[1] / "running@0.9" / "summary.json").write_text('{"torn": ')
    files = build_report(camp, tmp_path)
    rows = parse(files.html.read_text()).tables["failed-table"][1:]
    assert [r["cells"][0][1] for r in rows] == [FAILED_POINT, GOOD_POINTS[1]]
    assert "running@0.9/summary.json: unreadable JSON" in rows[1]["cells"][1][1]
    assert files.figures == ALL_FIGURES  # the other point still has every figure


def test_md_escape():
    assert md_escape("a|b<c>&`d`\ne") == "a\\|b&lt;c&gt;&amp;\\`d\\` e"
    assert md_escape(None) == "" and md_escape(3.5) == 3.5


def test_cli_writes_atomically_and_prints_the_path(tmp_path, monkeypatch, capsys):
    from lsmbench.cli import main

    camp = copy_fixture(tmp_path / "store" / "report-fixture")
    monkeypatch.setenv("LSMBENCH_RESULTS", str(tmp_path / "store"))

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["report", *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, err = run("report-fixture", "--window", "2")  # a campaign name in the store
    assert code == 0, err
    html = camp / "report" / "report.html"
    assert out.splitlines()[-1] == f"report written to {html}"
    assert "mean over a 2 s window" in html.read_text()
    (camp / "report" / "stale.txt").write_text("from an older report")
    code, out, _ = run(str(camp), "--json")
    assert code == 0 and json.loads(out)["html"] == str(html)
    assert not (camp / "report" / "stale.txt").exists()  # replaced as a whole
    assert [p.name for p in camp.iterdir() if p.name.startswith(".report")] == []
    for bad, msg in ((str(tmp_path / "nope"), "no such campaign directory"),
                     (str(tmp_path / "store"), "campaigns in it: report-fixture")):
        code, _, err = run(bad)
        assert code == 2 and msg in err
    code, _, err = run(str(camp), "--window", "0")
    assert code == 2 and "window" in err
    # The installed entry point runs the same command.
    r = subprocess.run([sys.executable, "-m", "lsmbench", "report", "--help"],
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and "--compare OTHER" in r.stdout


def test_out_never_deletes_what_a_report_did_not_write(tmp_path, monkeypatch, capsys):
    from lsmbench.cli import main

    camp = copy_fixture(tmp_path / "store" / "report-fixture")
    monkeypatch.setenv("LSMBENCH_RESULTS", str(tmp_path / "store"))
    users = tmp_path / "mine"
    (users / "sub").mkdir(parents=True)
    (users / "notes.txt").write_text("a user's notes")
    (users / "sub" / "data.csv").write_text("1,2\n")
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("a user's file")
    for out, msg in ((users, "holds files a report did not write (notes.txt, sub)"),
                     (a_file, "not a directory")):
        code = main(["report", str(camp), "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and str(out) in err and msg in err, err
    assert (users / "notes.txt").read_text() == "a user's notes"
    assert (users / "sub" / "data.csv").read_text() == "1,2\n"
    assert a_file.read_text() == "a user's file"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    # an empty directory, a report written before the marker, and a report of ours: replaced
    legacy = tmp_path / "legacy"
    (legacy / "figures").mkdir(parents=True)
    (legacy / "report.html").write_text("old")
    (legacy / "summary.md").write_text("old")
    for out in (tmp_path / "empty", legacy, legacy):
        out.mkdir(exist_ok=True)
        assert main(["report", str(camp), "--out", str(out)]) == 0, capsys.readouterr().err
        assert (out / ".lsmbench-report").exists() and (out / "report.html").read_text() != "old"
    capsys.readouterr()


# -- figures that appear only when the data has them --------------------------------------------


def _point(pid: str, phases: dict[str, StoredPhase], verdicts: list[dict[str, Any]] | None = None
           ) -> StoredPoint:
    record = {"state": "complete", "params": {"policy": pid}, "verdicts": verdicts or [],
              "verdict": (verdicts or [None])[-1]}
    return StoredPoint(pid, Path(pid), record, None, None, phases)


def test_figures_are_skipped_without_their_data():
    ivs = [{"t_start_s": i, "t_end_s": i + 1, "ops": {"writes": 10}, "engine": {}}
           for i in range(4)]
    pt = _point("a", {"running": StoredPhase("running", ivs, {}, None)},
                [{"utilization": 0.9, "p99_write_latency_s": 0.1, "sustainable": True}])
    assert query_figure([pt]) is None
    assert flushes_figure([pt]) is None
    assert sweep_figure([pt]) is None
    for i, iv in enumerate(ivs):
        iv["queries"] = {"get": {"ops": 5}}
        iv["engine"] = {"flushes": i + 1, "write_amplification": 1.5, "disk_components": 2}
    pt.record["verdicts"].append({"utilization": 0.5, "p99_write_latency_s": 0.01,
                                  "sustainable": True})
    assert query_figure([pt]) is not None
    assert flushes_figure([pt]) is not None
    assert sweep_figure([pt]) is not None


def test_a_search_gets_its_table_column_and_figure(tmp_path):
    from lsmbench.method.search import StepVerdict, run_search
    from lsmbench.report.figures import search_figure
    from lsmbench.spec import RateSearchSpec

    camp = copy_fixture(tmp_path / "report-fixture")
    pid = GOOD_POINTS[0]
    path = camp / pid / "point.json"
    point = json.loads(path.read_text())
    mt = point["max_throughput"]["writes_per_s"]

    def step(u: float) -> StepVerdict:
        if u <= 0.8:
            return StepVerdict(verdict="sustainable")
        return StepVerdict(verdict="inconclusive" if u < 0.9 else "not-sustainable",
                           failed=[] if u < 0.9 else ["p99"], reason="why <b>not</b>")

    search = run_search(RateSearchSpec(), step, mt).to_json()
    point["search"] = search
    path.write_text(json.dumps(point))
    files = build_report(camp, camp.parent)
    assert files.figures[-2:] == ["search", "rate"]  # the rate: the Workload section's
    html = files.html.read_text()
    tables = parse(html).tables
    (row,) = tables["search-table"][1:]
    cells = [text for _, text in row["cells"]]
    assert row["attrs"]["data-point"] == pid
    assert cells[1] == f"{search['rate']:,.0f}" and cells[2] == f"{search['utilization']:.3g}"
    assert cells[3] == (f"[{search['bracket']['sustainable']:.3g}, "
                        f"{search['bracket']['unsustainable']:.3g}] upper end inconclusive")
    assert cells[4] == f"{len(search['steps'])} of 8" and cells[6] == search["summary"]
    # The column, in the repetitions' table and per group, only when a point searched.
    summary = {r["attrs"]["data-point"]: r for r in tables["summary-table"][1:]}
    got = {a["data-key"]: a["data-value"] for a, _ in summary[pid]["cells"] if "data-key" in a}
    assert float(got["max_sustainable_rate"]) == pytest.approx(search["rate"])
    assert "<b>not</b>" not in html  # reasons are text
    md = files.markdown.read_text()
    assert f"| {pid} | {search['rate']:,.0f} | {search['utilization']:.3g} |" in md
    points = read_campaign(camp).points
    assert search_figure(points) is not None
    assert search_figure([pt for pt in points if pt.id != pid]) is None


def test_windowed_throughput():
    ivs = [{"t_start_s": i, "t_end_s": i + 1, "ops": {"writes": w}}
           for i, w in enumerate([10, 20, 30, 40, 50])]
    xs, ys = windowed(ivs, 2.0, lambda iv: iv["ops"]["writes"])
    assert xs == [2, 4, 5]
    assert ys == [15.0, 35.0, 50.0]  # the last window is short: its own length counts


# -- headless Chromium --------------------------------------------------------------------------

def test_report_in_headless_chromium(report, tmp_path, chromium):
    _, files = report
    dom, console = chromium_dom(files.html, tmp_path / "dom")
    assert console == [], "\n".join(console)
    sizes = [s for s in parse(dom).images if s.get("data-probe-size")]
    assert len(sizes) == len(ALL_FIGURES)
    for img in sizes:
        nw, nh, w, h = (int(x) for x in img["data-probe-size"].split("x"))
        assert nw > 0 and nh > 0 and w > 0 and h > 0, img["data-probe-size"]
    assert 'data-probe-sorted="ascending"' in dom  # the inline sort ran without errors

    shot = tmp_path / "report.png"
    r = run_chromium(["--window-size=1280,2400", f"--screenshot={shot}", files.html.as_uri()],
                  tmp_path / "shot-profile")
    assert r.returncode == 0, r.stderr[-2000:]
    assert png_size(shot.read_bytes()) == (1280, 2400)
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one


def test_chromium_check_sees_console_errors(report, tmp_path, chromium):
    """The console check can fail: a page with a script error is caught."""
    _, files = report
    broken = tmp_path / "broken.html"
    broken.write_text(files.html.read_text().replace(
        "</body>", "<script>undefinedFunction();</script></body>"))
    _, console = chromium_dom(broken, tmp_path / "broken")
    assert any("undefinedFunction is not defined" in ln for ln in console)


# -- repetitions: one group, one line with a band -------------------------------------------------


def add_repetition(camp: Path, pid: str, rep: int, scale: float, sustainable: bool) -> str:
    """A copy of a recorded point as repetition `rep`: its writes (testing and running) and its
    maximum throughput scaled by `scale`, its headline verdict set to `sustainable`."""
    new_id = pid.replace("rep=0", f"rep={rep}")
    shutil.copytree(camp / pid, camp / new_id)
    d = camp / new_id
    point = json.loads((d / "point.json").read_text())
    point.update(point=new_id, rep=rep, index=point["index"] + 10 * rep)
    point["max_throughput"]["writes_per_s"] *= scale
    point["verdict"]["sustainable"] = sustainable
    point["verdict"]["p99_write_latency_s"] *= scale
    (d / "point.json").write_text(json.dumps(point))
    for phase in ("testing", point["verdict"]["phase"]):
        ts = d / phase / "timeseries.jsonl"
        ivs = [json.loads(x) for x in ts.read_text().splitlines()]
        for iv in ivs:
            iv["ops"]["writes"] *= scale
        ts.write_text("".join(json.dumps(iv) + "\n" for iv in ivs))
    return new_id


@pytest.fixture(scope="module")
def repeated(tmp_path_factory):
    """The fixture with the tiering point repeated three times, one repetition unsustainable."""
    camp = copy_fixture(tmp_path_factory.mktemp("rep") / "report-fixture")
    pid = GOOD_POINTS[0]
    add_repetition(camp, pid, 1, 1.5, True)
    add_repetition(camp, pid, 2, 0.5, False)
    return camp, build_report(camp, camp.parent)


def test_group_table_has_median_ci_verdict_and_agreement(repeated):
    camp, files = repeated
    html = files.html.read_text()
    rows = parse(html).tables["group-table"][1:]
    group = GOOD_POINTS[0].replace(",rep=0", "")
    # The matrix's order, sizes by their bytes: memtable_bytes 1K before 1M.
    assert [r["attrs"]["data-group"] for r in rows] == [
        FAILED_POINT.replace(",rep=0", ""), group, GOOD_POINTS[1].replace(",rep=0", "")]
    row = rows[1]
    cells = {a["data-key"]: (a, text) for a, text in row["cells"] if "data-key" in a}
    tps = sorted(json.loads((camp / GOOD_POINTS[0].replace("rep=0", f"rep={i}") / "point.json")
                            .read_text())["max_throughput"]["writes_per_s"] for i in range(3))
    a, text = cells["max_write_throughput"]
    assert float(a["data-value"]) == pytest.approx(tps[1], rel=1e-12)  # the median
    assert float(a["data-ci-low"]) == pytest.approx(tps[0], rel=1e-12)  # 3 runs: min..max
    assert float(a["data-ci-high"]) == pytest.approx(tps[2], rel=1e-12)
    assert f"[{tps[0]:,.0f}\u2013{tps[2]:,.0f} (75%)]" in text
    assert cells["verdict"][1] == "inconclusive"
    assert cells["agree"][1] == "2 sustainable, 1 not-sustainable of 3"
    assert cells["runs"][1] == "3"
    assert "2 of 3 repetitions sustainable" in row["cells"][-1][1]
    # The single-repetition group has a median but no interval.
    single = {a["data-key"]: a for a, _ in rows[2]["cells"] if "data-key" in a}
    assert single["max_write_throughput"]["data-ci-low"] == ""
    # Every repetition stays reachable, below, in a collapsed details section.
    reps = [r["attrs"]["data-point"] for r in parse(html).tables["summary-table"][1:]]
    assert len(reps) == 5 and GOOD_POINTS[0].replace("rep=0", "rep=2") in reps
    assert '<details id="repetitions">' in html
    md = files.markdown.read_text()
    line = next(x for x in md.splitlines() if x.startswith(f"| {group} |"))
    assert "*inconclusive*" in line and "| 2 sustainable, 1 not-sustainable of 3 |" in line
    assert f"{tps[1]:,.0f} [{tps[0]:,.0f}\u2013{tps[2]:,.0f} (75%)]" in line
    assert "<details><summary>Every repetition (5 points)</summary>" in md
    # Each repetition's own verdict, in the JSON's words (never "NO").
    rep2 = next(x for x in md.splitlines()
                if x.startswith(f"| {GOOD_POINTS[0].replace('rep=0', 'rep=2')} |"))
    assert rep2.endswith("| **not-sustainable** |") and "NO" not in md


def test_an_inconclusive_repetition_says_inconclusive_in_every_view(tmp_path):
    """Not "NO" (the summary's and the report's rows once said so while the JSON said
    inconclusive): the JSON's word in the repetition rows, and counted in the agreement."""
    camp = copy_fixture(tmp_path / "report-fixture")
    pid = GOOD_POINTS[1]
    point = json.loads((camp / pid / "point.json").read_text())
    point["verdict"].update(verdict="inconclusive", sustainable=False, reasons=[
        *point["verdict"]["reasons"], "inconclusive: backlog_growth not computed"])
    (camp / pid / "point.json").write_text(json.dumps(point))
    files = build_report(camp, camp.parent)
    tables = parse(files.html.read_text()).tables
    row = next(r for r in tables["summary-table"][1:] if r["attrs"]["data-point"] == pid)
    verdict = next((a, text) for a, text in row["cells"] if a.get("data-key") == "verdict")
    assert verdict == ({"data-key": "verdict", "data-value": "inconclusive"}, "inconclusive")
    group = next(r for r in tables["group-table"][1:]
                 if r["attrs"]["data-group"] == pid.replace(",rep=0", ""))
    cells = {a["data-key"]: text for a, text in group["cells"] if "data-key" in a}
    assert cells["verdict"] == "inconclusive" and cells["agree"] == "1 inconclusive of 1"
    assert "1 of 1 repetition inconclusive: backlog_growth not computed" in group["cells"][-1][1]
    md = files.markdown.read_text().splitlines()
    assert next(x for x in md if x.startswith(f"| {pid} |")).endswith("| *inconclusive* |")
    group_line = next(x for x in md if x.startswith(f"| {pid.replace(',rep=0', '')} |"))
    assert "| *inconclusive* | 1 inconclusive of 1 |" in group_line
    # The group with only a failed point: no verdict to count.
    failed = next(x for x in md if x.startswith(f"| {FAILED_POINT.replace(',rep=0', '')} |"))
    assert "| *inconclusive* | \u2013 |" in failed


def test_a_group_is_one_line_with_a_min_max_band():
    from lsmbench.report.plotting import Style, band, draw_group
    from lsmbench.report.series import plot_groups
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure as MplFigure

    a = ([1.0, 2.0, 3.0], [10.0, 20.0, 30.0])
    b = ([1.01, 2.0, 3.02], [14.0, 16.0, 50.0])
    c = ([1.0, 1.99], [12.0, 18.0])
    xs, med, lo, hi = band([a, b, c], 1.0)
    assert med == [12.0, 18.0, 40.0] and lo == [10.0, 16.0, 30.0] and hi == [14.0, 20.0, 50.0]
    assert xs[0] == pytest.approx(1.0033333, rel=1e-6) and len(xs) == 3
    ax = MplFigure().subplots()
    st = Style("#0072B2", "-", "o")
    assert draw_group(ax, [a, b, c], 1.0, st, "g (3 runs)")
    assert len(ax.lines) == 1 and list(ax.lines[0].get_ydata()) == med
    assert len(ax.collections) == 1 and isinstance(ax.collections[0], PolyCollection)  # band
    ax1 = MplFigure().subplots()
    assert draw_group(ax1, [a], 1.0, st, "g")  # one repetition: its line, no band
    assert len(ax1.lines) == 1 and len(ax1.collections) == 0
    assert not draw_group(ax1, [([], [])], 1.0, st, "g")
    pts = [_point("a", {}), _point("b", {}), _point("a", {})]
    for i, p in enumerate(pts):
        p.record["rep"] = i
    assert [(g.label, len(g.points)) for g in plot_groups(pts)] == [
        ("policy=a (2 runs)", 2), ("policy=b", 1)]


def test_repeated_report_in_headless_chromium_with_a_screenshot(repeated, tmp_path, chromium):
    _, files = repeated
    dom, console = chromium_dom(files.html, tmp_path / "dom")
    assert console == [], "\n".join(console)
    assert 'data-probe-sorted="ascending"' in dom
    shot = tmp_path / "repeated.png"
    r = run_chromium(["--window-size=1400,2000", f"--screenshot={shot}", files.html.as_uri()],
                  tmp_path / "shot-profile")
    assert r.returncode == 0, r.stderr[-2000:]
    assert png_size(shot.read_bytes()) == (1400, 2000) and shot.stat().st_size > 50_000
    print(f"screenshot: {shot}")


def test_merge_cycle_figure_draws_the_engine_merge_events():
    from lsmbench.report.merges import merges_figure

    def merge(start: float, end: float, level: int) -> dict:
        return {"kind": "merge", "start_s": start, "end_s": end, "output_level": level,
                "input_bytes": 1 << 20, "moved": False}

    def phase(name: str, evts: list[dict]) -> StoredPhase:
        ivs = [{"t_start_s": float(i), "t_end_s": float(i + 1), "measured": i >= 2,
                "events": [e for e in evts if i <= e["end_s"] < i + 1]} for i in range(10)]
        return StoredPhase(name, ivs, {}, None)

    with_events = _point("a", {"testing": phase("testing", [merge(1, 3, 1), merge(2, 8, 2)]),
                               "running": phase("running", [merge(1, 2, 1)])})
    fig = merges_figure([with_events])
    assert fig is not None and fig.id == "merges" and fig.png.startswith(b"\x89PNG")
    assert "inconclusive" in fig.caption
    without = _point("b", {"running": phase("running", [])})
    assert merges_figure([without]) is None


def test_level_sizes_show_a_level_growing_while_a_merge_waits():
    """The merges figure's dotted lines: each level's size per interval from the engine's
    disk_bytes.L<i>, and the merges waiting; a level the engine stops reporting is NaN."""
    from lsmbench.report.merges import level_sizes, merges_figure

    ivs = []
    for i in range(6):
        eng = {"disk_bytes.L0": 1e6, "disk_bytes.L1": (10 + 20 * i) * 1e6,
               "merges_pending": 1.0 if i >= 2 else 0.0}
        if i < 3:
            eng["disk_bytes.L2"] = 100e6
        ivs.append({"t_start_s": float(i), "t_end_s": float(i + 1), "measured": True,
                    "engine": eng, "events": [{"kind": "merge", "start_s": 0.1, "end_s": 0.5,
                                               "output_level": 1, "moved": False}]
                    if i == 0 else []})
    ph = StoredPhase("running", ivs, {}, None)
    times, sizes, waiting = level_sizes(ph)
    assert times == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert sorted(sizes) == [1, 2]  # level 0 is flushed components, not a level size
    assert sizes[1] == [10.0, 30.0, 50.0, 70.0, 90.0, 110.0]
    assert sizes[2][:3] == [100.0] * 3 and all(math.isnan(v) for v in sizes[2][3:])
    assert waiting == [0, 0, 1, 1, 1, 1]
    fig = merges_figure([_point("g", {"running": ph})])
    assert fig is not None and "starved" in fig.caption
    assert level_sizes(StoredPhase("x", [{"t_end_s": 1.0, "engine": {}}], {}, None)) == (
        [], {}, [])


def test_level_spans_show_which_level_waits_while_which_runs():
    """The merges figure's hatched spans: per output level, the intervals whose end found a
    merge into it waiting (merges_pending.L<i>), adjacent intervals merged into one span."""
    from lsmbench.report.merges import level_spans, merges_figure

    # Greedy serving level 1 while the merge into level 2 waits from 1 s to 5 s, then runs.
    pending2 = [0, 1, 1, 1, 1, 0]
    running1 = [1, 1, 0, 1, 1, 0]
    ivs = [{"t_start_s": float(i), "t_end_s": float(i + 1), "measured": True,
            "engine": {"merges_pending.L1": 0.0, "merges_pending.L2": float(pending2[i]),
                       "merges_running.L1": float(running1[i]),
                       "merges_running.L2": float(i == 5)},
            "events": [{"kind": "merge", "start_s": 5.0, "end_s": 5.9, "output_level": 2,
                        "moved": False}] if i == 5 else []}
           for i in range(6)]
    ph = StoredPhase("running", ivs, {}, None)
    assert level_spans(ph, "merges_pending") == {2: [(1.0, 5.0)]}
    assert level_spans(ph, "merges_running") == {1: [(0.0, 2.0), (3.0, 5.0)], 2: [(5.0, 6.0)]}
    assert level_spans(StoredPhase("x", [{"t_end_s": 1.0, "engine": {"merges_pending": 2}}],
                                   {}, None), "merges_pending") == {}
    fig = merges_figure([_point("g", {"running": ph})])
    assert fig is not None and "waiting" in fig.caption


def test_latency_ccdfs_of_a_group_are_one_median_line_with_a_band():
    from lsmbench.report.figures import ccdf_band, ccdf_from_buckets

    # Three repetitions' histograms (bucket bounds in ns): 100 writes each, the slowest
    # bucket holding 0, 1 and 3 of them.
    def hist(slow: int) -> list[list[float]]:
        return [[0, 1e6, 100 - slow - 10], [1e6, 1e7, 10], [1e7, 1e9, slow]]

    curves = [ccdf_from_buckets(hist(k)) for k in (0, 1, 3)]
    xs, med, lo, hi = ccdf_band(curves)
    # The first repetition's curve ends at 1 ms (nothing slower than 10 ms): 0 beyond it.
    assert xs == [1.0, 10.0]
    # At 1 ms: 10, 11 and 13 of 100 slower; at 10 ms: 0, 1 and 3.
    assert med[0] == pytest.approx(0.11) and lo[0] == pytest.approx(0.10)
    assert hi[0] == pytest.approx(0.13)
    assert med[1] == pytest.approx(0.01) and lo[1] == 0.0 and hi[1] == pytest.approx(0.03)
