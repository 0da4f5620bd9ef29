"""lsmbench.workload_shape.record on hand-made phase directories: each part from its source, the
parts an old store's files hold, and a record that says why a part is missing instead of
failing or leaving half a file. The record of real phases: test_shapes_in_results.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from lsmbench.results import read_campaign
from lsmbench.workload_shape import record
from lsmbench.workload_shape.record import (
    SCHEMA,
    SHAPE_FILE,
    completed_mix,
    generation_doc,
    phase_shape,
    rate_over_time,
    stored_shape,
    write_phase_shape,
)
from repo_paths import TESTS

SUMMARY = {
    "ops": {"update": 600, "read": 400, "total": 1000, "writes": 600},
    "ops_total": {"update": 900, "read": 600, "total": 1500, "writes": 900},
    "queries": {"threads": 1, "get": {"ops": 70, "throughput": 35.0}},
    "throughput": {"mean": 500.0},
    "interval_s": 1.0,
    "open_loop": {"arrival": {"process": "sine", "rate": 520.0}, "intended_rate": 520.0},
}


def interval(i: int, total: float, intended: float | None = None, **kw) -> dict:
    iv = {"interval": i, "t_start_s": float(i), "t_end_s": i + 1.0, "measured": i > 0,
          "throughput": {"total": total, "writes": total / 2}}
    if intended is not None:
        iv["queue"] = {"length": 0, "intended_rate": intended}
    iv.update(kw)
    return iv


def phase_dir(tmp_path: Path, summary: dict | None = SUMMARY, intervals: list | None = None,
              run: dict | None = None) -> Path:
    d = tmp_path / "running"
    d.mkdir()
    if summary is not None:
        (d / "summary.json").write_text(json.dumps(summary))
    lines = intervals if intervals is not None else [interval(0, 400, 450), interval(1, 600, 650)]
    (d / "timeseries.jsonl").write_text("".join(json.dumps(iv) + "\n" for iv in lines))
    if run is not None:
        (d / "run.json").write_text(json.dumps(run))
    return d


def test_the_completed_mix_is_the_drivers_counts_of_the_window():
    done = completed_mix(SUMMARY)
    assert done == {"window": "measured", "requests": 1000, "ops": {"update": 600, "read": 400},
                    "op_mix": {"update": 0.6, "read": 0.4}, "queries": {"get": 70}}
    # No operation in the window (a load): the whole phase's.
    load = {"ops": {"total": 0, "writes": 0}, "ops_total": {"insert": 50, "total": 50,
                                                             "writes": 50}}
    assert completed_mix(load) == {"window": "whole phase", "requests": 50, "ops": {"insert": 50},
                                   "op_mix": {"insert": 1.0}, "queries": {}}
    assert completed_mix(None) is None
    assert completed_mix({"ops": {"total": 0}}) is None


def test_the_rate_per_interval_without_the_drain():
    ivs = [interval(0, 100, 200), interval(1, 300, 320), interval(2, 5, None, drain=True)]
    rate = rate_over_time(ivs, SUMMARY)
    assert rate == {"unit": "requests/s", "interval_s": 1.0, "t_end_s": [1.0, 2.0],
                    "achieved": [100.0, 300.0], "intended": [200.0, 320.0],
                    "measured_from_s": 1.0, "mean_achieved": 500.0, "mean_intended": 520.0,
                    "arrival": {"process": "sine", "rate": 520.0}}
    # A closed loop: no intended rate, no arrival; the mean from the intervals without one.
    closed = rate_over_time([interval(0, 100), interval(1, 300)], {"interval_s": 1.0})
    assert closed["intended"] is None and closed["arrival"] is None
    assert closed["mean_achieved"] == 200.0 and closed["mean_intended"] is None
    assert rate_over_time([], SUMMARY) is None


def test_the_driver_generates_without_the_phases_engine():
    run = {"engine": "rocksdb", "engine_plugin": "/node/only/lsmbench-rocksdb.so",
           "engine_options": {"write_buffer_size": "64M"}, "dir": "/data/p", "phase": "running",
           "workload": {"record_count": 5}, "arrival": {"rate": 5.0}, "seed": 3,
           "queries": {"threads": 1}, "settle_s": 30.0, "insert_start": 5}
    doc = generation_doc(run)
    assert doc == {"engine": "builtin", "dir": "/data/p", "phase": "running",
                   "workload": {"record_count": 5}, "arrival": {"rate": 5.0}, "seed": 3,
                   "insert_start": 5}


def test_without_a_driver_the_record_says_why(tmp_path):
    d = phase_dir(tmp_path, run={"phase": "running"})
    s = phase_shape(d, None)
    assert s["schema"] == SCHEMA and s["phase"] == "running" and s["kind"] == "running"
    assert s["completed"]["op_mix"] == {"update": 0.6, "read": 0.4}
    assert s["rate"]["achieved"] == [400.0, 600.0] and s["sample"] is None
    assert s["problems"] == ["lsm-driver is not built on this machine (make build): no sample "
                             "of the op stream"]
    # Nothing at all to read: every part is null, each with its reason.
    empty = tmp_path / "empty"
    empty.mkdir()
    s = phase_shape(empty, None)
    assert (s["completed"], s["sample"], s["rate"]) == (None, None, None)
    assert len(s["problems"]) == 3 and "no run.json" in s["problems"][2]


def fake_driver(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "fake-driver"
    p.write_text(f"#!/bin/sh\n{body}\n")
    p.chmod(0o755)
    return p


def test_a_driver_that_fails_or_hangs_is_a_problem_not_a_failure(tmp_path):
    d = phase_dir(tmp_path, run={"phase": "running", "workload": {}})
    failing = fake_driver(tmp_path, "echo 'lsm-driver: workload.x: unknown field' >&2; exit 2")
    s = write_phase_shape(d, failing)
    assert s["sample"] is None and s["completed"] is not None
    assert s["problems"] == ["no sample of the op stream: lsm-driver --generate-ops exited 2: "
                             "lsm-driver: workload.x: unknown field"]
    assert json.loads((d / SHAPE_FILE).read_text()) == s
    garbage = fake_driver(tmp_path, "echo not an op stream")
    s = write_phase_shape(d, garbage)
    assert "line 1 is not '# lsmbench op stream v1: ...'" in s["problems"][0]
    hanging = fake_driver(tmp_path, "exec sleep 30")
    s = write_phase_shape(d, hanging, timeout_s=0.5)
    assert s["problems"] == ["no sample of the op stream: lsm-driver --generate-ops took more "
                             "than 0.5 s"]
    assert sorted(p.name for p in d.iterdir()) == sorted([SHAPE_FILE, "run.json", "summary.json",
                                                          "timeseries.jsonl"])


def test_an_unexpected_error_is_recorded_and_a_failed_write_leaves_nothing(tmp_path,
                                                                         monkeypatch):
    d = phase_dir(tmp_path)

    def broken(*args, **kwargs):
        raise KeyError("surprise")

    monkeypatch.setattr(record, "phase_shape", broken)
    s = write_phase_shape(d, None)
    assert s["problems"] == ["could not be computed: KeyError: 'surprise'"]
    assert s["completed"] is None and json.loads((d / SHAPE_FILE).read_text()) == s
    monkeypatch.undo()
    (d / SHAPE_FILE).unlink()

    def full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError, match="No space left"):
        write_phase_shape(d, None)
    assert sorted(p.name for p in d.iterdir()) == ["summary.json", "timeseries.jsonl"]


def test_an_old_store_gets_the_parts_its_files_hold_when_read(tmp_path):
    fixture = TESTS / "fixtures" / "report" / "results" / "report-fixture"
    camp = tmp_path / "report-fixture"
    shutil.copytree(fixture, camp)
    point = "policy=tiering,memtable_bytes=1M,rep=0"
    # One phase with a record of another schema: read as none too.
    (camp / point / "testing" / SHAPE_FILE).write_text(json.dumps({"schema": "other/9"}))
    pt = read_campaign(camp).point(point)
    assert pt is not None
    for ph in pt.phases.values():
        s = ph.shape
        assert s == stored_shape(ph.name, ph.kind, ph.summary, ph.intervals)
        assert s["computed"] == "when read" and s["sample"] is None
        assert "stored without workload_shape.json" in s["problems"][0]
        ops = {k: v for k, v in ph.summary["ops"].items() if k not in ("total", "writes")}
        if sum(ops.values()):
            assert s["completed"]["ops"] == ops
        assert s["rate"]["t_end_s"] == [round(iv["t_end_s"], 3) for iv in ph.intervals
                                        if not iv.get("drain")]
    assert pt.phases["testing"].shape["completed"]["op_mix"] == {"update": 1.0}
    assert not any(camp.rglob(SHAPE_FILE + ".*"))  # reading wrote nothing
    # A stored record is read as it is.
    (camp / point / "testing" / SHAPE_FILE).write_text(json.dumps(
        {"schema": SCHEMA, "phase": "testing", "completed": None, "problems": ["x"]}))
    assert read_campaign(camp).point(point).phases["testing"].shape["problems"] == ["x"]


def test_the_command_writes_the_missing_records_of_a_campaign(tmp_path, driver_path, capsys):
    fixture = TESTS / "fixtures" / "report" / "results" / "report-fixture"
    camp = tmp_path / "report-fixture"
    shutil.copytree(fixture, camp)
    (camp / ".tmp" / "half.123" / "testing").mkdir(parents=True)  # a point being written
    (camp / ".tmp" / "half.123" / "testing" / "run.json").write_text("{}")
    assert record.main([str(camp), "--driver", str(driver_path)]) == 0
    out = capsys.readouterr().out
    written = sorted(camp.rglob(SHAPE_FILE))
    phases = sorted(p.parent / SHAPE_FILE for p in camp.glob("*/*/summary.json"))
    assert written == phases and f"{len(phases)} record(s) written" in out
    for path in written:
        s = json.loads(path.read_text())
        assert s["computed"] == "with the phase"
        if s["completed"] is not None:
            assert s["sample"] is not None, (path, s["problems"])
            assert s["sample"]["ops"] == min(s["sample"]["sent"], record.SAMPLE_LIMIT)
    # Again: nothing left to write.
    assert record.main([str(camp), "--driver", str(driver_path)]) == 0
    assert "0 record(s) written" in capsys.readouterr().out


def test_the_command_refuses_a_path_that_is_no_directory(driver_path, tmp_path, capsys):
    assert record.main([str(tmp_path / "nowhere"), "--driver", str(driver_path)]) == 2
    assert "not a directory" in capsys.readouterr().err
