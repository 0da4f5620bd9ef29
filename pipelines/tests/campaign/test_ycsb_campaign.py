"""YCSB's core workloads A-F (pipelines/campaigns/ycsb.yaml) each through both phases on the
bundled engine to a verdict: the driver sends each workload's operations (a read-modify-write
is a get and a put, counted as a write), and C, which writes nothing, is measured in requests
(method/requests.py) with every record saying so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsmbench.cli import main
from repo_paths import REPO
from ycsb_definitions import YCSB_MIX

CAMPAIGN = REPO / "pipelines" / "campaigns" / "ycsb.yaml"


def _points(results: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for p in sorted((results / "ycsb").glob("*/point.json")):
        record = json.loads(p.read_text())
        out[record["params"]["workload.file"]] = record
    return out


def _summary(results: Path, record: dict[str, Any], phase: str) -> dict[str, Any]:
    return json.loads((results / "ycsb" / record["point"] / phase / "summary.json").read_text())


def test_a_to_f_reach_a_verdict(driver_path: Path, tmp_path: Path, data_root: Path) -> None:
    code = main(["run", str(CAMPAIGN), "--results", str(tmp_path), "--no-publish", "--quiet",
                 "--set", "matrix.repetitions=1", "--set", "workload.set.record_count=3000",
                 "--set", f"testbed.data_dir={data_root}", "--set", "throttle.enabled=false",
                 "--set", "phases.load.settle=30s",
                 "--set", "phases.testing.duration=6s",
                 "--set", "phases.testing.steady.round=1500ms",
                 "--set", "phases.running.duration=6s",
                 "--set", "phases.running.until_decided.min_duration=3s"])
    assert code == 0
    points = _points(tmp_path)
    assert sorted(points) == [f"ycsb-{w}" for w in "abcdef"]
    for name, record in points.items():
        assert record["state"] == "complete", (name, record.get("error"))
        assert record["verdict"]["verdict"] in ("sustainable", "not-sustainable", "inconclusive")
        assert record["max_throughput"]["writes_per_s"] > 0
        sent = _summary(tmp_path, record, "running")["ops"]
        # The running phase sent the workload's operations and no other.
        mix = YCSB_MIX[name.removeprefix("ycsb-")]
        assert {op for op in sent if op not in ("total", "writes") and sent[op] > 0} == set(mix)
        assert sent["writes"] == sum(sent.get(op, 0) for op in ("insert", "update", "rmw"))

    # F: each read-modify-write is a write of the method's.
    f = points["ycsb-f"]
    assert _summary(tmp_path, f, "running")["ops"]["rmw"] > 0
    assert "unit" not in f["max_throughput"]

    # C writes nothing: the maximum is its requests', and every view says so.
    c = points["ycsb-c"]
    testing = _summary(tmp_path, c, "testing")
    assert testing["ops"]["writes"] == 0 and testing["ops"]["read"] > 0
    assert c["max_throughput"]["unit"] == "requests"
    rates = (c["max_throughput"]["per_interval_min"], c["max_throughput"]["per_interval_max"])
    assert rates[0] <= c["max_throughput"]["writes_per_s"] <= rates[1] * 1.0001
    assert c["max_throughput"]["writes_per_s"] > 0.5 * testing["throughput"]["mean"]
    # Nothing merges: the steady rounds are of time alone, and they closed.
    rounds = c["max_throughput"]["steady"]["rounds"]
    assert rounds and all(r["deepest_merges"] == 0 for r in rounds)
    verdict = json.loads((tmp_path / "ycsb" / c["point"] / "running" / "verdict.json")
                         .read_text())
    assert verdict["unit"] == "requests"
    p99 = next(x for x in verdict["criteria"] if x["name"] == "p99")
    assert p99["reason"].startswith("p99 request latency")
    assert p99["value"] is not None
    assert any("the mix has no writes" in r for r in verdict["reasons"])
