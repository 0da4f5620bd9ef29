"""Datasets (a primary index and secondary indexes, Luo & Carey Sec. 7) through the orchestrator:
bad input refused by path before anything runs, and a small campaign whose phases write records
with secondary fields and run secondary queries."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lsmbench.cli import main
from lsmbench.report import build_report
from lsmbench.report.datasets import PAPER_FIGURES, tree_components
from lsmbench.report.load import read_campaign
from lsmbench.store import Store
from repo_paths import TESTS

pytestmark = pytest.mark.slow

FIXTURE = TESTS / "fixtures" / "datasets" / "results" / "dataset-fixture"


def write_spec(path: Path, data_root: Path, **over) -> Path:
    spec = {
        "name": "ds",
        "engine": {"name": "builtin",
                   "options": {"memtable_bytes": "1M", "merge_policy": "tiering",
                               "merge_scheduler": "greedy"}},
        "matrix": {"engine.options.secondary_maintenance": ["eager", "lazy"]},
        "workload": {"file": "update-uniform-1kb",
                     "set": {"record_count": 5000, "value_size": 200, "secondary_fields": 2}},
        "phases": {"testing": {"duration": "3s", "warmup": "1s", "threads": 2},
                   "running": {"duration": "2s", "threads": 2,
                               "queries": {"threads": 1, "operations": {"secondary": 1},
                                           "field": 1, "selectivity": 10}}},
        "testbed": {"type": "local", "data_dir": str(data_root / "data")},
    }
    spec.update(over)
    path.write_text(yaml.safe_dump(spec))
    return path


def lsmbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsmbench", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def validate_errors(capsys, spec: Path, driver: Path) -> dict[str, str]:
    code = main(["validate", str(spec), "--json", "--set", f"testbed.driver={driver}"])
    out, _ = capsys.readouterr()
    assert code == 2, out
    return {e["path"]: e["message"] for e in json.loads(out)["errors"]}


def test_bad_dataset_input_is_refused_by_path(capsys, tmp_path, data_root, driver_path):
    running = {"duration": "2s", "threads": 2,
               "queries": {"threads": 1, "operations": {"secondary": 1}, "field": 2}}
    spec = write_spec(tmp_path / "a.yaml", data_root, phases={"running": running})
    errors = validate_errors(capsys, spec, driver_path)
    assert errors == {"phases.running.queries.field":
                      "the workload defines 2 secondary fields (0..1), not 2"}

    running["queries"] = {"threads": 1, "operations": {"secondary": 1}, "selectivity": 5001}
    spec = write_spec(tmp_path / "b.yaml", data_root, phases={"running": running})
    errors = validate_errors(capsys, spec, driver_path)
    assert list(errors) == ["phases.running.queries.selectivity"]
    assert "a range of 5001 values is wider than the 5000" in errors[
        "phases.running.queries.selectivity"]

    # An engine without secondary indexes refuses records with secondary fields.
    spec = write_spec(tmp_path / "c.yaml", data_root, engine={"name": "null"}, matrix={})
    errors = validate_errors(capsys, spec, driver_path)
    assert "workload.set.secondary_fields" in errors
    assert "engine 'null' keeps no secondary indexes" in errors["workload.set.secondary_fields"]

    # Eager maintenance needs writers like any workload: 0 writer threads is refused.
    running = {"duration": "2s", "threads": 0}
    spec = write_spec(tmp_path / "d.yaml", data_root, phases={"running": running})
    errors = validate_errors(capsys, spec, driver_path)
    assert list(errors) == ["phases.running.threads"]


def test_dataset_campaign_writes_records_and_runs_secondary_queries(tmp_path, data_root,
                                                                    driver_path):
    spec = write_spec(tmp_path / "ds.yaml", data_root)
    results = tmp_path / "results"
    r = lsmbench("run", str(spec), "--quiet", "--results", str(results),
                 "--set", f"testbed.driver={driver_path}")
    assert r.returncode in (0, 3), r.stdout + r.stderr  # 3: nothing sustainable
    store = Store(results)
    stale_share = {}
    for maintenance in ("eager", "lazy"):
        rec = store.point("ds", f"secondary_maintenance={maintenance},rep=0")
        assert rec is not None and rec.state == "complete", rec and rec.data.get("error")
        (running_dir,) = [d for d in rec.path.iterdir() if d.name.startswith("running")]
        summary = json.loads((running_dir / "summary.json").read_text())
        secondary = summary["queries"]["secondary"]
        assert secondary["ops"] > 0 and secondary["latency_us"]["p50"] is not None
        end = summary["engine_metrics"]["end"]
        # Every record is in the primary index and in both secondary indexes.
        assert end["records_put"] == end["primary.puts"] > 0
        assert end["queries"] >= secondary["ops"]
        assert end["flush_rounds"] >= 1
        # A flush round switches every tree's memtable at once and the trees flush side by
        # side: the final snapshot, taken during a round, can see some trees' flushes done and
        # others not yet (one apart at most; trees flushing on their own would drift apart).
        flushes = [end[f"{tree}.flushes"] for tree in ("primary", "secondary0", "secondary1")]
        assert min(flushes) >= 1 and max(flushes) - min(flushes) <= 1, flushes
        if maintenance == "eager":
            assert end["maintenance_lookups"] == end["records_put"] + end["records_deleted"]
            assert end["antimatter_entries"] > 0
        else:
            assert end["maintenance_lookups"] == end["antimatter_entries"] == 0
        stale_share[maintenance] = end["stale_entries_skipped"] / end["query_candidates"]
        # The per-interval series carry the per-tree metrics too.
        first = json.loads((running_dir / "timeseries.jsonl").read_text().splitlines()[0])
        assert "secondary1.disk_components" in first["engine"]
    print("stale share of candidates:", stale_share)
    # Lazy maintenance leaves every moved record's old entries behind; under eager only an
    # update racing a query can (each field value matches ~1 record, so most candidates a lazy
    # index returns after the load's and the phases' updates are stale).
    assert stale_share["lazy"] > 0.3, stale_share
    assert stale_share["eager"] < stale_share["lazy"] / 3, stale_share


def test_report_draws_the_dataset_figures_from_a_recorded_campaign(tmp_path):
    camp = tmp_path / "dataset-fixture"
    shutil.copytree(FIXTURE, camp)
    files = build_report(camp, camp.parent)
    # Figs. 25-29's counterparts: write throughput over time, latency percentiles, p99 against
    # the utilization, secondary-query throughput over time; and each index's components.
    assert {"throughput", "latency", "sweep", "queries", "dataset"} <= set(files.figures)
    page = html.unescape(files.html.read_text())
    for ref in PAPER_FIGURES.values():
        assert f"The counterpart of {ref}." in page
    assert "secondary queries" in page  # the query figure's panel is the secondary type
    # The dataset figure draws the store's numbers: each index's components per interval.
    campaign = read_campaign(camp)
    assert {pt.params["secondary_maintenance"] for pt in campaign.points} == {"eager", "lazy"}
    for pt in campaign.points:
        running = pt.running
        assert running is not None and running.name == "running@0.95"
        lines = [json.loads(line) for line in
                 (pt.path / running.name / "timeseries.jsonl").read_text().splitlines()]
        for tree in ("primary", "secondary0", "secondary1"):
            xs, ys = tree_components(running, tree)
            want = [(iv["t_end_s"], iv["engine"][f"{tree}.disk_components"])
                    for iv in lines if not iv.get("drain")]
            assert list(zip(xs, ys, strict=True)) == want and want
