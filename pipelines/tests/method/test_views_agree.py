"""One number, one meaning, in every view: the same figure of the same point and window reads
the same in `ls` (text and --json), summary.md, report.html, `export`'s tables, the verdict,
and `track record` / `track report`'s history.

The reference is lsmbench.method.metrics over each point's stored summary.json (docs/reports.md,
"Metrics"): each view must show that number, or the number rounded as the view rounds it. The
stored campaigns cover the shapes the store holds: fixed phases with a utilization sweep, query
threads and a failed point (tests/fixtures/report), a dataset with secondary indexes
(tests/fixtures/datasets), a campaign run here with the current driver and engine (fixed
phases, adaptive repetitions), and the same campaign interrupted. A new view or metric of a
phase is added here, not beside it.
"""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import sqlite3
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from lsmbench.cli import main
from lsmbench.method.metrics import (
    STALL_ENGINE,
    stall_time,
    stall_time_of_intervals,
    write_amplification,
)
from lsmbench.report.render import fmt
from lsmbench.results.reading import read_campaign
from repo_paths import TESTS

FIXTURES = TESTS / "fixtures"

# ---------------------------------------------------------------- the stored campaigns


@pytest.fixture(scope="module")
def fresh_store(tmp_path_factory: pytest.TempPathFactory, driver_path: Path) -> Path:
    """A campaign run now: leveling and tiering with small memtables (the engine stalls,
    briefly), at a utilization over the maximum for leveling (it stalls longer)."""
    root = tmp_path_factory.mktemp("views")
    spec = {
        "name": "views",
        "engine": {"name": "builtin", "options": {"memtable_bytes": "256K"}},
        "matrix": {"policy": ["tiering", "leveling"], "repetitions": 1},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 20000}},
        "phases": {"testing": {"duration": "4s", "warmup": "1s"},
                   "running": {"duration": "4s", "utilization": 1.1}},
        "testbed": {"type": "local", "data_dir": str(root / "data"), "driver": str(driver_path)},
    }
    path = root / "views.yaml"
    path.write_text(yaml.safe_dump(spec))
    results = root / "results"
    assert main(["run", str(path), "--quiet", "--results", str(results)]) == 0
    return results / "views"


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory: pytest.TempPathFactory, fresh_store: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stored")
    out = {
        "fixed-sweep-failed": _copy(FIXTURES / "report" / "results" / "report-fixture",
                                    root / "a" / "report-fixture"),
        "dataset": _copy(FIXTURES / "datasets" / "results" / "dataset-fixture",
                         root / "b" / "dataset-fixture"),
        "fresh": fresh_store,
    }
    interrupted = _copy(fresh_store, root / "c" / "views")
    meta = json.loads((interrupted / "campaign.json").read_text())
    meta["runs"][-1]["finished"] = None
    (interrupted / "campaign.json").write_text(json.dumps(meta))
    out["interrupted"] = interrupted
    return out


SHAPES = ("fixed-sweep-failed", "dataset", "fresh", "interrupted")

# ---------------------------------------------------------------- the views, read back


class _Cells(HTMLParser):
    """report.html's per-repetition table: {point: {data-key: data-value}}."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict[str, str]] = {}
        self._row: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("data-point") and a.get("class") in ("complete", "failed"):
            self._row = self.rows.setdefault(str(a["data-point"]), {})
        elif tag == "tr":
            self._row = None
        elif tag == "td" and self._row is not None and a.get("data-key"):
            self._row[str(a["data-key"])] = a.get("data-value") or ""


def _float(text: str | None) -> float | None:
    return float(text) if text not in (None, "", "nan") else None


def _md_table(md: str, heading: str) -> dict[str, dict[str, str]]:
    """summary.md's table whose heading row starts with `heading`: {first cell: {heading:
    cell}}."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    head = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(head, cells, strict=True))
    return rows


def _md_rows(md: str) -> dict[str, dict[str, str]]:
    """summary.md's 'Every repetition' table, by point."""
    return _md_table(md, "| point | state |")


def _md_cell(row: dict[str, str], heading: str) -> str:
    """The cell under the one heading that starts with this text."""
    (cell,) = (v for k, v in row.items() if k.startswith(heading))
    return cell


def _export_rows(out: Path) -> list[dict[str, str]]:
    with open(out / "points.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def views(campaigns: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
          ) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for shape, cdir in campaigns.items():
        work = tmp_path_factory.mktemp(f"views-{shape}")
        report = work / "report"
        assert main(["report", str(cdir), "--quiet", "--out", str(report)]) == 0
        export = work / "export"
        assert main(["export", str(cdir), "--quiet", "--format", "csv",
                     "--out", str(export)]) == 0
        cells = _Cells()
        cells.feed((report / "report.html").read_text())
        out[shape] = {"html": cells.rows, "md": _md_rows((report / "summary.md").read_text()),
                      "export": _export_rows(export), "dir": cdir, "report": report}
    return out


def _ls_json(cdir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["ls", cdir.name, "--json", "--results", str(cdir.parent)]) == 0
    return json.loads(capsys.readouterr().out)


def _reference(cdir: Path) -> dict[str, dict[str, Any]]:
    """Per complete point, the headline running phase's figures as lsmbench.method.metrics defines
    them, and the testing maximum."""
    camp = read_campaign(cdir)
    ref = {}
    for pt in camp.points:
        if pt.state != "complete" or pt.running is None:
            continue
        summary = pt.running.summary or {}
        stall = stall_time(summary)
        wa = write_amplification(summary)
        p99 = (summary.get("write_latency_us") or {}).get("p99")
        ref[pt.id] = {
            "stall": stall, "wa": wa,
            "p99_ms": p99 / 1000 if p99 is not None else None,
            "max": (pt.record.get("max_throughput") or {}).get("writes_per_s"),
            "verdict": (pt.record.get("verdict") or {}).get("verdict"),
            "record": pt.record,
        }
    return ref


def _same(a: float | None, b: float | None, what: str) -> None:
    if a is None or b is None:
        assert a is None and b is None, f"{what}: {a!r} vs {b!r}"
        return
    assert a == pytest.approx(b, rel=1e-9, abs=1e-12), what


# ---------------------------------------------------------------- the checks


@pytest.mark.parametrize("shape", SHAPES)
def test_every_view_shows_the_same_figures_of_a_point(shape: str, views, capsys) -> None:
    v = views[shape]
    ref = _reference(v["dir"])
    assert ref, f"{shape}: no complete point to compare"
    ls = {p["point"]: p for p in _ls_json(v["dir"], capsys)["points"]}
    export = {(r["point"]): r for r in v["export"] if r["headline"] == "True"}
    for pid, r in ref.items():
        stall = r["stall"].seconds if r["stall"] else None
        wa = r["wa"].value if r["wa"] else None
        where = f"{shape}/{pid}"
        # ls --json
        _same(ls[pid]["stall_s"], stall, f"{where}: ls stall_s")
        _same(ls[pid]["max_write_throughput"], r["max"], f"{where}: ls max")
        _same(ls[pid]["p99_write_latency_s"] * 1000 if ls[pid]["p99_write_latency_s"]
              is not None else None, r["p99_ms"], f"{where}: ls p99")
        assert ls[pid]["verdict"] == (r["verdict"] or ls[pid]["verdict"]), where
        # report.html (exact values in data-value)
        html = v["html"][pid]
        _same(_float(html.get("stall_s")), stall, f"{where}: report.html stall_s")
        _same(_float(html.get("write_amplification")), wa, f"{where}: report.html write amp")
        _same(_float(html.get("write_p99_ms")), r["p99_ms"], f"{where}: report.html p99")
        _same(_float(html.get("max_write_throughput")), r["max"], f"{where}: report.html max")
        # summary.md (rounded as the page rounds)
        md = v["md"][pid]
        assert _md_cell(md, "stall time") == fmt(stall), f"{where}: summary.md stall"
        assert _md_cell(md, "write amp.") == fmt(wa), f"{where}: summary.md write amp"
        assert _md_cell(md, "write p99") == fmt(r["p99_ms"]), f"{where}: summary.md p99"
        # export's points table
        row = export[pid]
        _same(_float(row["stall_s"]), stall, f"{where}: export stall_s")
        _same(_float(row["write_amplification"]), wa, f"{where}: export write amp")
        _same(_float(row["testing_max_writes_per_s"]), r["max"], f"{where}: export max")
        if r["stall"] is not None:
            assert row["stall_source"] == r["stall"].source, where


def test_the_verdict_judges_the_stall_time_the_views_show(views) -> None:
    """The stall criterion's figure is the one the tables show: the engine's stall time, over
    the same window (judged by this code: the campaign run here)."""
    ref = _reference(views["fresh"]["dir"])
    export = {r["point"]: r for r in views["fresh"]["export"] if r["headline"] == "True"}
    engine_stalled = 0
    for pid, r in ref.items():
        verdict = r["record"]["verdict"]
        stall = r["stall"]
        assert stall is not None and stall.source == STALL_ENGINE, pid
        _same(verdict["stalled_s"], stall.seconds, f"{pid}: the verdict's stalled_s")
        assert verdict.get("stall_source") == STALL_ENGINE, pid
        _same(_float(export[pid]["verdict_stalled_s"]), stall.seconds, f"{pid}: export")
        crit = next(c for c in verdict["criteria"] if c["name"] == "stalls")
        assert f"writes stalled {stall.seconds:.3g} s" in crit["reason"], crit["reason"]
        assert "the engine's stall time" in crit["reason"]
        assert (crit["ok"] is False) == (stall.seconds / stall.window_s
                                         > verdict["max_stalled_fraction"])
        engine_stalled += stall.seconds > 0
    # The campaign is built to stall (small memtables, leveling over its maximum): a suite
    # whose every stall is 0 would not tell the definitions apart.
    assert engine_stalled >= 1, {p: r["stall"] for p, r in ref.items()}


def test_the_live_rules_stall_time_is_the_summarys(views) -> None:
    """While a phase runs there is no summary.json: the live rules read the stall time from
    the intervals' engine snapshots, which must give the figure the summary gives after."""
    camp = read_campaign(views["fresh"]["dir"])
    for pt in camp.points:
        ph = pt.running
        warmup = ph.summary["window"]["warmup_s"]
        live = stall_time_of_intervals(ph.intervals, warmup)
        final = stall_time(ph.summary)
        assert live is not None and final is not None, pt.id
        assert live.seconds == pytest.approx(final.seconds, abs=1e-6), pt.id
        assert live.window_s == pytest.approx(final.window_s, rel=1e-6), pt.id
        assert live.count == final.count, pt.id


def test_the_window_write_amplification_is_the_engines_bytes_over_the_window(views) -> None:
    """The tables' write amplification is the measured window's, from the snapshots at its
    start and end, not the engine's cumulative figure at the end of the run."""
    for pid, r in _reference(views["fresh"]["dir"]).items():
        wa = r["wa"]
        assert wa is not None and wa.window == "window", pid
        summary = read_campaign(views["fresh"]["dir"]).point(pid).running.summary
        m = summary["engine_metrics"]
        start, end = m["window_start"], m["window_end"]
        written = sum(end[k] - start.get(k, 0) for k in ("bytes_flushed", "bytes_merged"))
        user = end["user_bytes"] - start.get("user_bytes", 0)
        assert wa.value == pytest.approx(written / user), pid


@pytest.mark.parametrize("shape", SHAPES)
def test_every_view_shows_the_same_group(shape: str, views, capsys) -> None:
    """A group's verdict and medians: ls --json, ls's text, summary.md's group table."""
    from lsmbench.listing import group_cells
    from lsmbench.method.groups import Group

    cdir = views[shape]["dir"]
    data = _ls_json(cdir, capsys)
    assert main(["ls", cdir.name, "--results", str(cdir.parent)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    md = _md_table((views[shape]["report"] / "summary.md").read_text(), "| group | runs |")
    for g in data["groups"]:
        group = Group.model_validate(g)
        # ls's text: the cells of the group's row, as its table lays them out
        for cell in group_cells(group, group.search is not None).values():
            assert " ".join(cell.split()) in text, (shape, group.group, cell)
        # summary.md's group row: the same verdict and medians
        row = md[group.group]
        assert row["verdict"].strip("*") == group.verdict, (shape, group.group)
        p99 = group.p99_write_latency_s.median
        assert _md_cell(row, "write p99 (").split(" [")[0] == fmt(
            p99 * 1000 if p99 is not None else None), (shape, group.group)
        stall = group.stall_s.median
        assert _md_cell(row, "stall time").split(" [")[0] == fmt(stall), (shape, group.group)


def test_a_history_of_one_night_says_its_noise_is_not_measured(views, tmp_path) -> None:
    """One night of single runs has no noise to show: the page says so, never '0.0 %'."""
    cdir = views["fresh"]["dir"]
    history = tmp_path / "history.sqlite"
    assert main(["track", "record", str(cdir), "--history", str(history), "--quiet"]) == 0
    out = tmp_path / "page"
    assert main(["track", "report", "--history", str(history), "--out", str(out),
                 "--quiet"]) in (0, 4)
    page = (out / "history.html").read_text()
    assert "noise: not measured" in page
    assert not re.search(r"noise 0\.0 %", page)


def test_the_history_records_the_figures_the_report_shows(views, tmp_path) -> None:
    """`track record` keeps each group's median of the report's figures (a group of one run:
    its run's), and `track report`'s history.csv lists the same numbers."""
    cdir = views["fresh"]["dir"]
    history = tmp_path / "history.sqlite"
    assert main(["track", "record", str(cdir), "--history", str(history), "--quiet"]) == 0
    out = tmp_path / "page"
    rc = main(["track", "report", "--history", str(history), "--out", str(out), "--quiet"])
    assert rc in (0, 4)
    ref = _reference(cdir)
    with open(out / "history.csv", newline="") as f:
        rows = {(r["group"], r["metric"]): r for r in csv.DictReader(f)}
    with sqlite3.connect(history) as db:
        assert db.execute("select count(*) from runs").fetchone()[0] == 1
    for pid, r in ref.items():
        group = re.sub(r",rep=\d+$", "", pid)
        stall = r["stall"].seconds if r["stall"] else None
        if stall is not None:
            assert float(rows[(group, "stall_s")]["median"]) == pytest.approx(stall), pid
        if r["wa"] is not None:
            assert float(rows[(group, "write_amplification")]["median"]) == pytest.approx(
                r["wa"].value), pid
        assert float(rows[(group, "write_p99_ms")]["median"]) == pytest.approx(r["p99_ms"])
        assert math.isfinite(float(rows[(group, "max_write_throughput")]["median"]))


def test_an_interrupted_campaign_says_so_and_is_no_night(views, tmp_path, capsys) -> None:
    """ls says the last run never finished; track record refuses it and writes nothing."""
    cdir = views["interrupted"]["dir"]
    assert _ls_json(cdir, capsys)["last_run_state"] == "interrupted"
    assert main(["ls", cdir.name, "--results", str(cdir.parent)]) == 0
    assert "interrupted" in capsys.readouterr().out
    history = tmp_path / "history.sqlite"
    assert main(["track", "record", str(cdir), "--history", str(history)]) == 2
    assert "has not finished" in capsys.readouterr().err
    assert not history.exists()


def test_a_window_without_user_writes_has_no_write_amplification() -> None:
    # A mix without writes (YCSB C): the window wrote no user byte, so there is no ratio, and
    # the engine's cumulative figure at the end is not one of the window either.
    counters = {"user_bytes": 5_000, "bytes_flushed": 6_000, "bytes_merged": 9_000,
                "write_amplification": 3.0}
    summary = {"engine_metrics": {"window_start": counters, "window_end": dict(counters),
                                  "end": counters}}
    assert write_amplification(summary) is None
    summary["engine_metrics"]["window_end"] = {**counters, "user_bytes": 6_000,
                                               "bytes_flushed": 7_000}
    wa = write_amplification(summary)
    assert wa is not None and wa.value == pytest.approx(1.0) and wa.window == "window"
