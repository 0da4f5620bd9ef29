"""`lsmbench report --compare`: two campaigns matched group by group by their matrix values,
each figure the group's median with the ratio, both verdicts; refused or warned about when the
groups do not match; the verdicts visible in headless Chromium at 1,280 px."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from browser import parse, png_size, run_chromium
from lsmbench.report import build_report
from test_report import FAILED_POINT, GOOD_POINTS, add_repetition, copy_fixture


def _set_params(camp: Path, edit) -> None:
    """Every stored point's matrix values (point.json "params") changed by ``edit``."""
    for pf in camp.glob("*/point.json"):
        point = json.loads(pf.read_text())
        point["params"] = edit(dict(point["params"]))
        pf.write_text(json.dumps(point))


def _scale_throughput(point_dir: Path, factor: float) -> float:
    pf = point_dir / "point.json"
    point = json.loads(pf.read_text())
    point["max_throughput"]["writes_per_s"] *= factor
    pf.write_text(json.dumps(point))
    return point["max_throughput"]["writes_per_s"]


def _cells(row: dict[str, Any]) -> dict[str, dict[str, str | None]]:
    return {a["data-key"]: a for a, _ in row["cells"] if a.get("data-key")}


def test_compare_matches_groups_by_matrix_values_with_medians_and_both_verdicts(tmp_path):
    # This campaign: the tiering group repeated (x1, x1.5, x0.5: median the recorded one,
    # verdict inconclusive); the baseline: one repetition each, tiering's throughput x2 and
    # its matrix values stored in another order (so its group id differs: only the values
    # match); the leveling group only here.
    this = copy_fixture(tmp_path / "this")
    add_repetition(this, GOOD_POINTS[0], 1, 1.5, True)
    add_repetition(this, GOOD_POINTS[0], 2, 0.5, False)
    other = copy_fixture(tmp_path / "other")
    base_tp = _scale_throughput(other / GOOD_POINTS[0], 2)
    shutil.rmtree(other / GOOD_POINTS[1])
    _set_params(other, lambda p: dict(reversed(list(p.items()))))
    files = build_report(this, tmp_path, compare_with=other)
    tables = parse(files.html.read_text()).tables["compare-table"]
    heading, rows = [t for _, t in tables[0]["cells"]], tables[1:]
    group = GOOD_POINTS[0].removesuffix(",rep=0")
    # Groups in the order of their matrix values (sizes by bytes: 1K before 1M).
    assert [r["attrs"]["data-group"] for r in rows] == [FAILED_POINT.removesuffix(",rep=0"),
                                                        group]
    rows = sorted(rows, key=lambda r: r["attrs"]["data-group"] != group)  # this group first
    # Per group, not per repetition: the median of the three over the baseline's one.
    tps = sorted(json.loads((this / GOOD_POINTS[0].replace("rep=0", f"rep={i}") / "point.json")
                            .read_text())["max_throughput"]["writes_per_s"] for i in range(3))
    cells = _cells(rows[0])
    assert float(cells["max_write_throughput-ratio"]["data-value"]) == pytest.approx(
        tps[1] / base_tp, rel=1e-12)
    assert float(cells["max_write_throughput-ratio"]["data-this"]) == pytest.approx(tps[1])
    # Both group verdicts, in the first columns (visible without scrolling at 1,280 px), and
    # one column per figure: ten columns in all, not twenty.
    assert heading[1:3] == ["verdict: this", "verdict: baseline"]
    assert cells["verdict-this"]["data-value"] == "inconclusive"
    assert cells["verdict-baseline"]["data-value"] == "sustainable"
    assert len(heading) == 4 + 6 and all(len(r["cells"]) == len(heading) for r in rows)
    html = files.html.read_text()
    assert f"Only in {this}: {GOOD_POINTS[1].removesuffix(',rep=0')}" in html
    md = files.markdown.read_text()
    assert "| group | verdict: this | verdict: baseline | runs |" in md
    line = next(ln for ln in md.splitlines() if ln.startswith(f"| {group} | inconclusive"))
    assert line.startswith(f"| {group} | inconclusive | sustainable | 3 / 1 |")
    assert f"({tps[1] / base_tp:.3g}x)" in line
    assert f"ratio = {this} / {other}" in md
    assert files.warnings == [f"1 group of {this} not in {other}, left out of the comparison: "
                              f"{GOOD_POINTS[1].removesuffix(',rep=0')}"]


def test_compare_with_another_matrix_refuses_naming_the_dimensions(tmp_path, capsys):
    from lsmbench.cli import main

    this = copy_fixture(tmp_path / "a" / "report-fixture")
    other = copy_fixture(tmp_path / "b" / "report-fixture")
    _set_params(other, lambda p: {**p, "memtable_bytes": "2M", "size_ratio": 6})
    code = main(["report", str(this), "--compare", str(other), "--out", str(tmp_path / "r")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    assert (f"no group of {this} matches a group of {other} (groups match by their matrix "
            "values)") in err
    assert f"dimension memtable_bytes is {{1K, 1M}} in {this} and {{2M}} in {other}" in err
    assert f"dimension size_ratio only in {other}" in err
    assert not (tmp_path / "r").exists()  # nothing written


def test_compare_warns_naming_the_unmatched_groups_and_compares_the_rest(tmp_path, capsys):
    from lsmbench.cli import main

    this = copy_fixture(tmp_path / "a" / "report-fixture")
    other = copy_fixture(tmp_path / "b" / "report-fixture")
    shutil.rmtree(other / GOOD_POINTS[1])
    shutil.rmtree(this / FAILED_POINT)
    code = main(["report", str(this), "--compare", str(other), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0 and out == f"report written to {this / 'report' / 'report.html'}\n"
    assert (f"warning: 1 group of {this} not in {other}, left out of the comparison: "
            f"{GOOD_POINTS[1].removesuffix(',rep=0')}") in err
    assert (f"warning: 1 group of {other} not in {this}, left out of the comparison: "
            f"{FAILED_POINT.removesuffix(',rep=0')}") in err
    rows = parse((this / "report" / "report.html").read_text()).tables["compare-table"][1:]
    assert [r["attrs"]["data-group"] for r in rows] == [GOOD_POINTS[0].removesuffix(",rep=0")]


_VERDICT_PROBE = """<script>
window.addEventListener("load", function () {
  var th = document.querySelector("#compare-table th:nth-child(3)");
  var r = th.getBoundingClientRect();
  document.body.setAttribute("data-probe-verdict", th.textContent + "|" +
    Math.round(r.right) + "|" + document.documentElement.clientWidth);
  console.log("lsmbench-probe-marker");
});
</script>"""


def test_compare_verdicts_are_visible_at_1280_px_in_chromium(tmp_path, chromium):
    this = copy_fixture(tmp_path / "this")
    other = copy_fixture(tmp_path / "other")
    files = build_report(this, tmp_path, compare_with=other)
    page = files.html.read_text().replace('id="compare"', 'id="compare" style="margin-top:0"')
    # The comparison first on the page, so that the screenshot shows it.
    start, end = page.index('<h2 id="compare"'), page.index('<h2 id="fingerprint"')
    body = page.index("<body>") + len("<body>")
    moved = tmp_path / "compare-first.html"
    moved.write_text(page[:body] + page[start:end] + page[body:start] + page[end:])
    probed = tmp_path / "probed.html"
    probed.write_text(moved.read_text().replace("</body>", _VERDICT_PROBE + "</body>"))
    r = run_chromium(["--window-size=1280,900", "--enable-logging=stderr", "--v=0", "--dump-dom",
                   probed.as_uri()], tmp_path / "profile")
    assert r.returncode == 0, r.stderr[-2000:]
    probe = parse(r.stdout).body_attrs["data-probe-verdict"]
    assert probe is not None
    text, right, width = probe.split("|")
    assert text == "verdict: baseline" and 0 < int(right) <= int(width) <= 1280, probe
    shot = tmp_path / "compare.png"
    r = run_chromium(["--window-size=1280,900", f"--screenshot={shot}", moved.as_uri()],
                  tmp_path / "shot-profile")
    assert r.returncode == 0 and png_size(shot.read_bytes()) == (1280, 900)
    print(f"screenshot: {shot}")
