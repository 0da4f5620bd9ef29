"""`lsmbench export` and `lsmbench.results.load` on the recorded quickstart-in-miniature campaign
(pipelines/tests/fixtures/report/results/, the report tests' fixture): Parquet and CSV files that
DuckDB and pandas read, with the row counts the store's files imply (counted here from the JSON,
not through lsmbench), the same frames from the Python API, empty tables with their columns, bad
input as exit 2 naming the path, and no half-written file when a write fails.

The fixture predates the driver's flush and merge events, so a copy of it gets events in one
phase's time series, in the driver's format (engines/driver/README.md), for the merges table."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest
from lsmbench.cli import main
from lsmbench.outputs import MARKER
from lsmbench.results import TABLES, load
from repo_paths import TESTS

FIXTURE = TESTS / "fixtures" / "report" / "results" / "report-fixture"
FAILED_POINT = "policy=tiering,memtable_bytes=1K,rep=0"
EVENT_POINT = "policy=tiering,memtable_bytes=1M,rep=0"


def _merge(start: float, end: float, level: int, nbytes: int) -> dict[str, Any]:
    return {"kind": "merge", "start_s": start, "end_s": end, "output_level": level,
            "output_bytes": nbytes - 100, "entries": nbytes // 1000, "deepest_input_level":
            level - 1, "inputs": 3, "input_bytes": nbytes, "moved": False}


def _flush(t: float) -> dict[str, Any]:
    return {"kind": "flush", "start_s": t, "end_s": t + 0.05, "sealed_s": t, "output_level": 0,
            "output_bytes": 1 << 20, "entries": 1000}


def add_events(phase_dir: Path) -> None:
    """Flushes and merges in each interval of a phase, as the builtin engine tells them."""
    path = phase_dir / "timeseries.jsonl"
    lines = []
    for i, line in enumerate(path.read_text().splitlines()):
        iv = json.loads(line)
        t = float(iv["t_start_s"])
        iv["events"] = [_flush(t + 0.1), _merge(t - 0.5, t + 0.2, 1, 3_000_000 + i)]
        if i % 2:
            iv["events"].append(_merge(t - 2.0, t + 0.6, 2, 9_000_000 + i))
        lines.append(json.dumps(iv))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("store")
    camp = root / "report-fixture"
    shutil.copytree(FIXTURE, camp)
    add_events(camp / EVENT_POINT / "testing")
    return camp


# -- what the store's files imply, read without lsmbench ------------------------------------------


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _intervals(phase_dir: Path) -> list[dict[str, Any]]:
    path = phase_dir / "timeseries.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _point_dirs(camp: Path) -> list[Path]:
    return sorted(p for p in camp.iterdir() if (p / "point.json").is_file())


def _phase_dirs(point_dir: Path) -> list[Path]:
    """Phase directories holding driver output (a failed phase may hold only its run.json)."""
    return sorted(p for p in point_dir.iterdir() if p.is_dir() and (
        (p / "summary.json").exists() or (p / "timeseries.jsonl").exists()))


def expected_counts(camp: Path) -> dict[str, int]:
    points = timeseries = histograms = merges = 0
    for pd_ in _point_dirs(camp):
        phases = set(_json(pd_ / "point.json").get("phases") or {})
        phases |= {p.name for p in _phase_dirs(pd_)}
        points += max(1, len(phases))  # a point that reached no phase is still one row
        for ph in _phase_dirs(pd_):
            ivs = _intervals(ph)
            timeseries += len(ivs)
            merges += sum(1 for iv in ivs for e in iv.get("events", []) if e["kind"] == "merge")
            if (ph / "histograms.json").exists():
                hists = _json(ph / "histograms.json")["histograms"]
                histograms += sum(len(h["buckets"]) for h in hists.values())
    return {"points": points, "timeseries": timeseries, "histograms": histograms,
            "merges": merges}


# -- exporting ------------------------------------------------------------------------------------


def export(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["export", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def parquet(store, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("parquet")
    assert main(["export", str(store), "--out", str(out)]) == 0
    return out


def test_the_fixture_has_rows_in_every_table(store):
    counts = expected_counts(store)
    assert counts["points"] == 9  # 2 points x 4 phases, and the failed point's load
    assert counts["timeseries"] > 0 and counts["histograms"] > 1000 and counts["merges"] > 0


def test_the_shape_columns_of_points_stored_without_shape_records(store):
    """The fixture predates workload_shape.json: the driver's counts and the rate are there,
    the op stream's sample is NULL, and shape_problems says why."""
    points = load(store).points
    done = points[points["state"] == "complete"]
    assert len(done) == 8
    for row in done.to_dict("records"):
        summary = _json(store / row["point"] / row["phase"] / "summary.json")
        window = {k: v for k, v in summary["ops"].items() if k not in ("total", "writes")}
        counts = window if sum(window.values()) else {
            k: v for k, v in summary["ops_total"].items() if k not in ("total", "writes")}
        ops = "insert" if row["phase_kind"] in ("load", "reload") else "update"
        assert set(counts) == {ops}
        assert row["shape_requests"] == counts[ops]
        assert row[f"shape_op_share_{ops}"] == 1.0
        assert row["shape_op_share_read"] == row["shape_op_share_scan"] == 0.0
        assert row["shape_op_share_rmw"] == 0.0
        assert row["shape_rate_mean"] == pytest.approx(summary["throughput"]["mean"])
        for column in ("shape_sample_ops", "shape_top_1pct_key_share", "shape_value_size_p50",
                       "shape_distinct_keys"):
            assert pd.isna(row[column]), column
        assert "stored without workload_shape.json" in row["shape_problems"]
    assert str(points["shape_value_size_p99"].dtype) == "float64"


def duckdb_rows(path: Path) -> int:
    """The rows DuckDB reads from an exported file (Parquet or CSV)."""
    reader = "read_parquet" if path.suffix == ".parquet" else "read_csv"
    (n,) = duckdb.connect().execute(f"SELECT count(*) FROM {reader}('{path}')").fetchone()
    return n


def test_parquet_row_counts_are_those_the_store_implies(store, parquet):
    counts = expected_counts(store)
    for name in TABLES:
        path = parquet / f"{name}.parquet"
        assert duckdb_rows(path) == counts[name], name
        assert len(pd.read_parquet(path)) == counts[name], name
    tables = sorted(f"{t}.parquet" for t in TABLES)
    assert sorted(p.name for p in parquet.iterdir()) == sorted([*tables, MARKER])
    # The marker lists what export wrote, and nothing else.
    assert json.loads((parquet / MARKER).read_text()) == {"files": dict.fromkeys(tables, "export")}


def test_points_table_holds_each_phase_with_its_verdict(store, parquet):
    con = duckdb.connect()
    rows = con.execute(f"SELECT * FROM read_parquet('{parquet / 'points.parquet'}')").df()
    by_key = {(r.point, r.phase): r for r in rows.itertuples()}
    for pd_ in _point_dirs(store):
        point = _json(pd_ / "point.json")
        mine = rows[rows.point == pd_.name]
        assert set(mine.policy) == {point["params"]["policy"]}
        assert set(mine.memtable_bytes) == {point["params"]["memtable_bytes"]}
        assert set(mine.state) == {point["state"]} and set(mine.rep) == {point["rep"]}
        assert set(mine.group) == {pd_.name.replace(",rep=0", "")}
        if point["state"] != "complete":
            continue
        assert set(mine.testing_max_writes_per_s) == {point["max_throughput"]["writes_per_s"]}
        assert list(mine[mine.headline].phase) == [point["verdict"]["phase"]]
        for ph in _phase_dirs(pd_):
            row = by_key[(pd_.name, ph.name)]
            summary = _json(ph / "summary.json")
            assert row.write_latency_us_p99 == summary["write_latency_us"]["p99"]
            assert row.engine_metrics_end_flushes == summary["engine_metrics"]["end"]["flushes"]
            assert row.phase_status == summary["status"]
            if (ph / "verdict.json").exists():
                v = _json(ph / "verdict.json")
                word = v.get("verdict") or ("sustainable" if v["sustainable"]
                                            else "not-sustainable")
                assert (row.verdict, row.utilization) == (word, v["utilization"])
                assert row.verdict_reasons == "; ".join(v["reasons"])
                assert row.failed_criteria == ",".join(v.get("failed", []))
                assert row.verdict_p99_write_latency_s == v["p99_write_latency_s"]
            else:
                assert row.verdict is None or pd.isna(row.verdict)
    (failed,) = rows[rows.point == FAILED_POINT].itertuples()
    assert failed.phase == "load" and failed.phase_exit_code == 2
    assert "bad value '1K'" in failed.error


def test_timeseries_histograms_and_merges_match_the_files(store, parquet):
    con = duckdb.connect()
    con.execute(f"CREATE VIEW ts AS SELECT * FROM read_parquet('{parquet / 'timeseries.parquet'}')")
    con.execute(f"CREATE VIEW h AS SELECT * FROM read_parquet('{parquet / 'histograms.parquet'}')")
    con.execute(f"CREATE VIEW m AS SELECT * FROM read_parquet('{parquet / 'merges.parquet'}')")
    for pd_ in _point_dirs(store):
        for ph in _phase_dirs(pd_):
            ivs = _intervals(ph)
            got = con.execute("SELECT t, ops_writes, engine_disk_components FROM ts "
                              "WHERE point = ? AND phase = ? ORDER BY interval",
                              [pd_.name, ph.name]).fetchall()
            assert got == [(iv["t_end_s"], iv["ops"]["writes"], iv["engine"]["disk_components"])
                           for iv in ivs]
            if (ph / "histograms.json").exists():
                for kind, hist in _json(ph / "histograms.json")["histograms"].items():
                    (total, low) = con.execute(
                        "SELECT sum(count), min(low_ns) FROM h WHERE point = ? AND phase = ? "
                        "AND kind = ?", [pd_.name, ph.name, kind]).fetchone()
                    assert (total, low) == (hist["count"], hist["buckets"][0][0]), kind
            merges = sorted((e["output_level"], e["input_bytes"], e["start_s"], e["end_s"])
                            for iv in ivs for e in iv.get("events", []) if e["kind"] == "merge")
            assert con.execute("SELECT level, input_bytes, start_s, end_s FROM m WHERE "
                               "point = ? AND phase = ? ORDER BY ALL",
                               [pd_.name, ph.name]).fetchall() == merges


def _is_numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def _comparable(col: pd.Series, numeric: bool) -> list[Any]:
    """A column's values for comparing a CSV read back with the frame: numbers as floats (NaN
    for missing), everything else as text ('' for missing)."""
    if numeric:
        return [math.nan if pd.isna(v) else float(v) for v in col]
    return ["" if pd.isna(v) else str(v) for v in col]


def test_csv_has_the_same_tables(store, parquet, tmp_path, capsys):
    out = tmp_path / "csv"
    code, stdout, err = export(capsys, str(store), "--format", "csv", "--out", str(out))
    assert code == 0, err
    assert stdout.splitlines()[-1] == f"export written to {out}"
    counts = expected_counts(store)
    for name in TABLES:
        path = out / f"{name}.csv"
        assert duckdb_rows(path) == counts[name], name
        csv, frame = pd.read_csv(path), pd.read_parquet(parquet / f"{name}.parquet")
        assert list(csv.columns) == list(frame.columns), name
        for column in frame.columns:
            numeric = _is_numeric(frame[column])
            a, b = _comparable(csv[column], numeric), _comparable(frame[column], numeric)
            if numeric:
                np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=f"{name}.{column}")
            else:
                assert a == b, f"{name}.{column}"


def test_load_gives_the_frames_that_were_written(store, parquet, monkeypatch):
    results = load(store)
    assert results.campaign == "report-fixture" and results.path == store
    for name, frame in results.tables().items():
        pd.testing.assert_frame_equal(pd.read_parquet(parquet / f"{name}.parquet"), frame)
    # A campaign's name in a store, as on the command line.
    monkeypatch.setenv("LSMBENCH_RESULTS", str(store.parent))
    by_name = load("report-fixture")
    pd.testing.assert_frame_equal(by_name.points, results.points)


def test_cli_takes_a_campaign_name_and_reports_json(store, tmp_path, capsys):
    out = tmp_path / "by-name"
    code, stdout, err = export(capsys, "report-fixture", "--results", str(store.parent),
                               "--out", str(out), "--json")
    assert code == 0, err
    doc = json.loads(stdout)
    counts = expected_counts(store)
    assert doc["campaign"] == "report-fixture" and doc["format"] == "parquet"
    assert {name: t["rows"] for name, t in doc["tables"].items()} == counts
    assert all(Path(t["path"]).parent == out for t in doc["tables"].values())


def test_the_report_reads_the_store_through_the_same_reader():
    import lsmbench.report.load as report_load
    import lsmbench.results as results

    assert report_load.read_campaign is results.read_campaign
    assert report_load.StoredPoint is results.StoredPoint
    assert report_load.ReportError is results.ResultsError


def test_empty_tables_are_written_with_their_columns(tmp_path, capsys):
    camp = tmp_path / "empty"
    camp.mkdir()
    (camp / "campaign.json").write_text(json.dumps({"campaign": "empty", "runs": []}))
    code, _, err = export(capsys, str(camp))
    assert code == 0, err
    con = duckdb.connect()
    for name in TABLES:
        path = camp / "export" / f"{name}.parquet"
        assert con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchone() == (0,)
        assert len(pd.read_parquet(path).columns) >= 7, name
    desc = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{camp}/export/merges.parquet')")
    types = {name: kind for name, kind, *_ in desc.fetchall()}
    assert types["level"] == "BIGINT" and types["start_s"] == "DOUBLE"
    assert types["moved"] == "BOOLEAN" and types["point"] == "VARCHAR"


def test_bad_input_exits_2_naming_the_path(store, tmp_path, capsys):
    nope = tmp_path / "nope"
    code, _, err = export(capsys, str(nope))
    assert code == 2 and str(nope) in err and "Traceback" not in err
    code, _, err = export(capsys, str(store.parent))  # the store, not one of its campaigns
    assert code == 2 and str(store.parent) in err and "campaigns in it: report-fixture" in err
    not_dir = tmp_path / "file"
    not_dir.write_text("")
    code, _, err = export(capsys, str(store), "--out", str(not_dir))
    assert code == 2 and str(not_dir) in err
    bad_hist = tmp_path / "badhist"
    shutil.copytree(store, bad_hist)
    hist = bad_hist / EVENT_POINT / "running@0.9" / "histograms.json"
    hist.write_text(json.dumps({**_json(hist), "unit": "us"}))
    code, _, err = export(capsys, str(bad_hist), "--out", str(tmp_path / "o"))
    assert code == 2 and str(hist) in err and "unit" in err
    assert not (tmp_path / "o").exists()
    # A real process: the exit code and one line, no traceback.
    r = subprocess.run([sys.executable, "-m", "lsmbench", "export", str(nope)],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 2 and str(nope) in r.stderr and "Traceback" not in r.stderr


def test_a_failed_write_leaves_the_old_files_and_no_partial_one(store, tmp_path, capsys,
                                                               monkeypatch):
    out = tmp_path / "out"
    assert export(capsys, str(store), "--out", str(out))[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = pd.DataFrame.to_parquet

    def disk_full_at_timeseries(df: pd.DataFrame, path: Any, *args: Any, **kw: Any) -> None:
        if "timeseries" in str(path):
            Path(path).write_bytes(b"PAR1 half a file")
            raise OSError(28, "No space left on device")
        real(df, path, *args, **kw)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", disk_full_at_timeseries)
    code, _, err = export(capsys, str(store), "--out", str(out))
    assert code == 3 and str(out) in err and "No space left" in err
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert after.keys() == before.keys()  # no temporary file left
    assert after["timeseries.parquet"] == before["timeseries.parquet"]
    assert len(pd.read_parquet(out / "timeseries.parquet")) == expected_counts(store)["timeseries"]


def test_out_replaces_only_what_export_wrote(store, tmp_path, capsys):
    """--out into a directory that holds a user's file of a table's name is refused, exit 2,
    naming it, the file kept; other files of the user are left alone; a second export into
    a directory export wrote replaces its own files."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "points.parquet").write_bytes(b"my own data")
    code, _, err = export(capsys, str(store), "--out", str(mine))
    assert code == 2 and "points.parquet" in err and str(mine) in err
    assert "Traceback" not in err
    assert (mine / "points.parquet").read_bytes() == b"my own data"
    assert sorted(p.name for p in mine.iterdir()) == ["points.parquet"]

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("keep me")
    for _ in range(2):
        code, _, err = export(capsys, str(store), "--out", str(shared))
        assert code == 0, err
    assert (shared / "notes.txt").read_text() == "keep me"
    assert len(pd.read_parquet(shared / "points.parquet")) == expected_counts(store)["points"]
    # The CSV names are not the Parquet ones: a user's CSV of that name is refused too.
    (shared / "merges.csv").write_text("mine")
    code, _, err = export(capsys, str(store), "--out", str(shared), "--format", "csv")
    assert code == 2 and "merges.csv" in err and (shared / "merges.csv").read_text() == "mine"
