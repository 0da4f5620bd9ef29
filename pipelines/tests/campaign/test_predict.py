"""lsmbench plan --predict (predict.py): lsm-sim's testing maximum and 95 % verdict per point
before anything runs, kept in campaign.json by lsmbench run and shown by the report beside
what was measured. Runs the real lsm-sim (make build)."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from lsmbench import cli as cli_module
from lsmbench import predict
from lsmbench.cli import main
from lsmbench.report import build_report
from repo_paths import TESTS

PAPERS = TESTS / "fixtures" / "papers" / "results" / "papers-fixture"


def spec(tmp_path: Path, name: str = "pred", **engine: str) -> Path:
    options = {"memtable_bytes": "1M", "wal": "off", "io_budget_bytes_per_sec": "16M", **engine}
    doc: dict[str, Any] = {
        "name": name,
        "engine": {"name": "builtin", "options": {k: v for k, v in options.items() if v}},
        "matrix": {"merge_policy": ["leveling", "tiering"], "size_ratio": [4],
                   "repetitions": 2},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 20000}},
        "phases": {"testing": {"duration": "60s"}, "running": {"duration": "60s"}},
        "testbed": {"type": "local", "data_dir": str(tmp_path / "data")},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def predictions(capsys, path: Path) -> dict[str, dict[str, Any]]:
    code = main(["plan", str(path), "--predict", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)["predictions"]


@pytest.fixture(autouse=True)
def _sim(sim_path: Path) -> None:
    """Every test here runs lsm-sim (plan --predict)."""


def test_plan_predicts_each_point_and_repetitions_agree(tmp_path, capsys):
    preds = predictions(capsys, spec(tmp_path))
    assert len(preds) == 4
    for policy in ("leveling", "tiering"):
        a, b = (preds[f"merge_policy={policy},size_ratio=4,rep={r}"] for r in (0, 1))
        assert a == b
        assert a["max_writes_per_s"] > 0 and a["bandwidth"] == 16 << 20
        assert isinstance(a["sustainable"], bool) and a["max_wait_s"] >= 0
        assert 0 <= a["stalled_share"] <= 1 and a["basis"] == ""
    # The text form: a table and what it assumes
    assert main(["plan", str(spec(tmp_path)), "--predict"]) == 0
    out = capsys.readouterr().out
    assert "lsm-sim's prediction" in out and "outside the validated range" in out
    assert "Validation of the time model" in out


def test_the_prediction_follows_the_bandwidth(tmp_path, capsys):
    # Everything in the model is bytes over bandwidth (the writer assumed a fixed multiple of
    # it): half the budget for twice as long sees the same flushes (the tree grows alike) in
    # twice the time.
    slow = spec(tmp_path, "one", io_budget_bytes_per_sec="8M")
    doc = yaml.safe_load(slow.read_text())
    doc["phases"] = {"testing": {"duration": "120s"}, "running": {"duration": "120s"}}
    slow.write_text(yaml.safe_dump(doc))
    one = predictions(capsys, slow)
    two = predictions(capsys, spec(tmp_path, "two", io_budget_bytes_per_sec="16M"))
    for point, p in one.items():
        assert two[point]["max_writes_per_s"] == pytest.approx(2 * p["max_writes_per_s"],
                                                               rel=0.01)


def test_a_throttle_stands_for_the_budget_and_carries_the_log_it_writes_back(
        tmp_path, capsys, monkeypatch):
    def throttled(name: str, wal: str) -> dict[str, dict[str, Any]]:
        path = spec(tmp_path, name, io_budget_bytes_per_sec="", wal=wal)
        doc = yaml.safe_load(path.read_text())
        doc["throttle"] = {"write_bps": "16MiB/s", "phases": ["testing", "running"]}
        path.write_text(yaml.safe_dump(doc))
        return predictions(capsys, path)

    off, synced = throttled("off", "off"), throttled("synced", "sync")
    budget = predictions(capsys, spec(tmp_path))
    # An async log file is deleted at its flush, long before the kernel's dirty expiry (30 s
    # by default): its pages are never written back, so it costs the throttle nothing.
    expire = tmp_path / "dirty_expire_centisecs"
    expire.write_text("3000\n")
    monkeypatch.setattr(predict, "DIRTY_EXPIRE", expire)
    unsynced = throttled("unsynced", "async")
    # A kernel that writes dirty pages back within 10 ms does write the log.
    expire.write_text("1\n")
    written = throttled("written", "async")
    for point, p in off.items():
        assert p["max_writes_per_s"] == pytest.approx(budget[point]["max_writes_per_s"])
        assert unsynced[point]["max_writes_per_s"] == pytest.approx(p["max_writes_per_s"])
        assert "is not charged" in unsynced[point]["modelled"]
        # The log's bytes share the throttle: less is left for flushes and merges
        assert synced[point]["max_writes_per_s"] < 0.95 * p["max_writes_per_s"]
        assert "sync: each write fsyncs it" in synced[point]["modelled"]
        assert written[point]["max_writes_per_s"] < 0.95 * p["max_writes_per_s"]
        assert "past the kernel's 0.01 s dirty expiry" in written[point]["modelled"]


def _edited(path: Path, edit: Any) -> Path:
    doc = yaml.safe_load(path.read_text())
    edit(doc)
    path.write_text(yaml.safe_dump(doc))
    return path


def test_updates_of_loaded_keys_merge_less_than_inserts(tmp_path, capsys):
    # The key-space model: every write updates one of the 20k loaded records, so merges keep
    # one entry per key and the tree stays the data's size; inserts of new keys grow it.
    updates = predictions(capsys, spec(tmp_path, "upd"))
    inserts = predictions(capsys, _edited(spec(tmp_path, "ins"), lambda d: d["workload"].update(
        {"file": "insert-only-1kb"})))
    for point, p in updates.items():
        assert "updates of" in p["modelled"] and "new keys" in inserts[point]["modelled"]
        assert p["max_writes_per_s"] > 1.05 * inserts[point]["max_writes_per_s"], point
        assert p["utilization"] == 0.95 and p["arrival"] == "constant"
        # Validated for leveling (the schedulers campaign); tiering measured 1.19x off.
        assert ("tiering's updates of loaded keys" in p["outside"]) == ("tiering" in point)
        assert "updates of loaded keys" not in inserts[point]["outside"]


def test_the_maximum_is_the_rate_over_the_phases_window_not_over_the_flushes_simulated(
        tmp_path, capsys, monkeypatch):
    # lsm-sim runs as many flushes as the budget could write in the phase, which takes longer
    # than the phase once merges share the budget. Inserts deepen the tree, so the rate of
    # all of them is lower than the phase's: only the window the engine measures counts.
    path = _edited(spec(tmp_path, "win"), lambda d: d["workload"].update(
        {"file": "insert-only-1kb"}))
    phase = predictions(capsys, path)
    flushes = predict._flushes
    monkeypatch.setattr(predict, "_flushes", lambda s, per_s: 3 * flushes(s, per_s))
    longer = predictions(capsys, path)
    for point, p in phase.items():
        assert longer[point]["max_writes_per_s"] == pytest.approx(p["max_writes_per_s"])
    # ... and the window is the phase's: a later start of it sees a deeper, slower tree.
    late = predictions(capsys, _edited(path, lambda d: d["phases"]["testing"].update(
        {"warmup": "45s"})))
    assert any(late[point]["max_writes_per_s"] != pytest.approx(p["max_writes_per_s"])
               for point, p in phase.items())


def test_the_window_holds_the_checkpoints_inside_it():
    rows = [{"flushes": f, "time_s": 2.0 * f, "stall_s": 0.5 * f, "bytes_flushed": 10 * f,
             "bytes_written": 30 * f} for f in range(1, 41)]
    window = predict._testing_window(rows, 10.0, 60.0)
    assert window.flushes_per_s == pytest.approx(0.5)  # flushes 5..30 over 10..60 s
    assert window.stalled_share == pytest.approx(0.25)
    assert window.write_amp == pytest.approx(3.0)
    # A window holding fewer than two checkpoints: the whole run, from its start.
    assert predict._testing_window(rows, 10.5, 11.0).flushes_per_s == pytest.approx(0.5)


def test_inserts_into_an_empty_store_under_the_budget_are_inside_the_validated_range(
        tmp_path, capsys):
    def empty(doc: dict[str, Any]) -> None:
        doc["workload"]["file"] = "insert-only-1kb"
        doc["phases"]["load"] = {"enabled": False}
    path = _edited(spec(tmp_path, "val"), empty)
    assert all(p["outside"] == "" for p in predictions(capsys, path).values())
    assert main(["plan", str(path), "--predict"]) == 0
    out = capsys.readouterr().out
    assert "yes at 95%" in out or "no at 95%" in out
    assert "outside the validated range" not in out


def test_a_point_outside_the_validated_range_says_why_instead_of_a_number(tmp_path, capsys):
    path = _edited(spec(tmp_path, "burst"), lambda d: d["phases"]["running"].update(
        {"utilization": 1.5, "arrival": {"process": "bursts", "burst_s": 5, "idle_s": 5}}))
    preds = predictions(capsys, path)
    for p in preds.values():
        assert p["utilization"] == 1.5 and p["arrival"] == "bursts"
        # The arrivals and the rate are the running phase's: its verdict is outside the
        # range, the testing phase's maximum (a closed loop) is not.
        assert "arrivals in bursts" in p["verdict_outside"]
        assert "1.5x the maximum" in p["verdict_outside"]
        assert "arrivals" not in p["outside"]
        assert p["max_writes_per_s"] > 0  # kept in the JSON, not shown as trustworthy
    assert main(["plan", str(path), "--predict"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the verdict is outside the validated range for 2 points" in out
    assert "outside the validated range for 2 points" in out  # tiering's updates
    assert "lsm-sim's running phase has constant arrivals" in out
    zipf = predictions(capsys, _edited(spec(tmp_path, "zipf"), lambda d: d["workload"].update(
        {"file": "update-zipf-1kb"})))
    assert all("zipfian updates" in p["outside"] for p in zipf.values())


def test_no_prediction_says_why(tmp_path, capsys):
    none = predictions(capsys, spec(tmp_path, "none", io_budget_bytes_per_sec=""))
    assert all(p["max_writes_per_s"] is None and "io_budget_bytes_per_sec" in p["basis"]
               for p in none.values())
    path = spec(tmp_path, "pct", io_budget_bytes_per_sec="")
    doc = yaml.safe_load(path.read_text())
    doc["throttle"] = {"write_bps": "50%"}
    # A share needs a calibration to mean anything (validate refuses it without one).
    doc["testbed"]["calibration"] = str(TESTS / "data" /
                                        "fio_calibration_vda.json")
    path.write_text(yaml.safe_dump(doc))
    assert all("relative to the calibrated disk" in p["basis"]
               for p in predictions(capsys, path).values())
    path = spec(tmp_path, "other")
    doc = yaml.safe_load(path.read_text())
    doc["engine"] = {"name": "null"}
    doc["matrix"] = {"repetitions": 2}
    path.write_text(yaml.safe_dump(doc))
    assert all("builtin" in p["basis"] for p in predictions(capsys, path).values())
    assert main(["plan", str(path), "--predict"]) == 0
    assert "no prediction for 2 points" in capsys.readouterr().out


def test_a_broken_simulator_gives_reasons_not_a_traceback(tmp_path, capsys, monkeypatch):
    for name, body in (("garbage", "echo not json"), ("failing", "echo boom >&2; exit 1"),
                       ("instant", "echo '{\"flushes\": 3}'")):
        fake = tmp_path / name
        fake.write_text(f"#!/bin/sh\n{body}\n")
        fake.chmod(0o755)
        monkeypatch.setenv("LSMBENCH_SIM", str(fake))
        preds = predictions(capsys, spec(tmp_path, name))
        reasons = {p["basis"] for p in preds.values()}
        assert all(p["max_writes_per_s"] is None for p in preds.values())
        assert len(reasons) == 1 and ("lsm-sim" in reasons.pop()), (name, preds)


def test_run_keeps_the_predictions_in_the_plan(tmp_path, monkeypatch):
    seen = {}

    def fake_run(plan: Any, *_: Any, **__: Any) -> dict[str, int]:
        seen["plan"] = plan.to_json()
        return {"failed": 0}

    monkeypatch.setattr("lsmbench.campaign.run_campaign", fake_run)
    assert cli_module.main(["run", str(spec(tmp_path)), "--results", str(tmp_path / "r"),
                            "--quiet"]) == 0
    preds = seen["plan"]["predictions"]
    assert len(preds) == 4 and all(p["max_writes_per_s"] > 0 for p in preds.values())


def test_the_report_shows_the_prediction_beside_the_measurement(tmp_path):
    camp = tmp_path / "papers-fixture"
    shutil.copytree(PAPERS, camp)
    meta = json.loads((camp / "campaign.json").read_text())
    points = sorted(p.name for p in camp.iterdir() if (p / "point.json").is_file())
    # A prediction for all but one point (a point without one has no row)
    meta["plan"]["predictions"] = {
        p: {"max_writes_per_s": 10000.0 + i, "utilization": 0.95, "sustainable": i % 2 == 0,
            "basis": ""} for i, p in enumerate(points[:-1])}
    (camp / "campaign.json").write_text(json.dumps(meta))
    files = build_report(camp, camp.parent)
    page = html.unescape(files.html.read_text())
    assert "Predicted and measured" in page
    table = page[page.index('id="predicted-table"'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr data-point=") == len(points) - 1
    for i, p in enumerate(points[:-1]):
        measured = json.loads((camp / p / "point.json").read_text())["max_throughput"][
            "writes_per_s"]
        row = table[table.index(f'<tr data-point="{p}">'):]
        row = row[:row.index("</tr>")]
        assert f'data-value="{10000.0 + i!r}"' in row
        ratio = float(row.split('data-value="')[4].split('"')[0])
        assert ratio == pytest.approx(measured / (10000.0 + i))
        assert ("yes at 0.95" if i % 2 == 0 else "no at 0.95") in row
    md = files.markdown.read_text()
    assert "Predicted (lsm-sim, before the run" in md


def _report_with_predictions(tmp_path: Path, prediction: Any) -> tuple[Any, list[str], str]:
    """The papers fixture's report with `prediction(i)` as the i-th point's prediction: its
    files, its points in order, and the html of its predicted table."""
    camp = tmp_path / "papers-fixture"
    shutil.copytree(PAPERS, camp)
    meta = json.loads((camp / "campaign.json").read_text())
    points = sorted(p.name for p in camp.iterdir() if (p / "point.json").is_file())
    meta["plan"]["predictions"] = {p: prediction(i) for i, p in enumerate(points)}
    (camp / "campaign.json").write_text(json.dumps(meta))
    files = build_report(camp, camp.parent)
    page = html.unescape(files.html.read_text())
    table = page[page.index('id="predicted-table"'):]
    return files, points, table[:table.index("</table>")]


def _row(table: str, point: str) -> str:
    row = table[table.index(f'<tr data-point="{point}">'):]
    return row[:row.index("</tr>")]


def test_the_report_shows_a_point_outside_the_validated_range_with_its_reason(tmp_path):
    why = "arrivals in bursts (lsm-sim's running phase has constant arrivals)"
    files, points, table = _report_with_predictions(tmp_path, lambda i: {
        "max_writes_per_s": 12345.0, "utilization": 1.5, "sustainable": True,
        "arrival": "bursts", "outside": why if i == 0 else "", "basis": ""})
    outside = _row(table, points[0])
    assert f"outside the validated range: {why}" in outside
    assert "12345" not in outside and "12,345" not in outside  # no number that looks trusted
    inside = _row(table, points[1])
    assert "yes at 1.50, bursts" in inside or "yes at 1.5, bursts" in inside
    md = files.markdown.read_text()
    assert f"outside the validated range: {why}" in md
    assert md.count("12,345") == len(points) - 1


def test_the_report_shows_a_verdict_outside_the_validated_range_beside_its_maximum(tmp_path):
    why = "tiering's running phase under a cgroup write limit"
    files, points, table = _report_with_predictions(tmp_path, lambda i: {
        "max_writes_per_s": 12345.0, "utilization": 0.95, "sustainable": True,
        "verdict_outside": why if i == 0 else "", "basis": ""})
    row = _row(table, points[0])
    assert "12,345" in row and f"outside the validated range: {why}" in row
    assert "yes at" not in row
    md_rows = [line for line in files.markdown.read_text().splitlines()
               if line.startswith(f"| {points[0]} |") and "12,345" in line]
    assert md_rows and f"outside the validated range: {why}" in md_rows[0]
    assert "yes at" not in md_rows[0]


def test_a_verdict_under_a_cgroup_limit_is_outside_the_validated_range(tmp_path, capsys):
    path = spec(tmp_path, "thr", io_budget_bytes_per_sec="")
    path = _edited(path, lambda d: d.update(
        {"throttle": {"write_bps": "16MiB/s", "phases": ["testing", "running"]}}))
    preds = predictions(capsys, path)
    for point, p in preds.items():
        assert p["outside"] == "" and p["max_writes_per_s"] > 0
        policy = "tiering" if "tiering" in point else "leveling"
        assert f"{policy}'s running phase under a cgroup write limit" in p["verdict_outside"]
    assert main(["plan", str(path), "--predict"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # one line per reason: each policy's two points
    assert out.count("the verdict is outside the validated range for 2 points") == 2, out


def test_a_mix_with_reads_is_outside_the_range_and_one_without_writes_has_no_prediction(
        tmp_path, capsys):
    # lsm-sim simulates the writes alone: a mix with reads is labelled, and a mix without
    # writes (YCSB C, whose maximum counts requests) gets no number at all.
    path = _edited(spec(tmp_path), lambda d: d.update(
        matrix={"workload.file": ["ycsb-a", "ycsb-c"]},
        workload={"file": "ycsb-a", "set": {"record_count": 20000}}))
    preds = predictions(capsys, path)
    a, c = preds["file=ycsb-a,rep=0"], preds["file=ycsb-c,rep=0"]
    assert "a mix of 50% writes" in a["outside"]
    assert c["max_writes_per_s"] is None
    assert c["basis"].startswith("a mix without writes")
