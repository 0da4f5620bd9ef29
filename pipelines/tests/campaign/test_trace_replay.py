"""A RocksDB query trace recorded by db_bench replays through lsm-driver into the bundled engine
and RocksDB (pipelines/campaigns/trace-replay.yaml, with the trace shipped in
workloads/traces/), and each reaches a two-phase verdict; a replay sends exactly the trace's
operations."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from lsmbench.cli import main
from repo_paths import REPO

CAMPAIGN = REPO / "pipelines" / "campaigns" / "trace-replay.yaml"
TRACE = REPO / "workloads" / "traces" / "mixgraph-prefix-dist-50k.trace"


def driver(driver_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(driver_path), *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_a_replay_sends_the_traces_operations(driver_path: Path, tmp_path: Path) -> None:
    summary = json.loads(driver(driver_path, "--trace-summary", str(TRACE)).stdout)
    ops = summary["ops"]
    run = {"engine": "builtin", "dir": str(tmp_path / "db"), "phase": "testing",
           "duration_s": 600, "threads": 2, "progress_s": 0,
           "workload": {"rocksdb_trace": str(TRACE), "record_count": 0}}
    (tmp_path / "run.json").write_text(json.dumps(run))
    r = driver(driver_path, "--config", str(tmp_path / "run.json"), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    sent = json.loads((tmp_path / "out" / "summary.json").read_text())["ops"]
    # Every op of the trace, once, as the driver's types: puts as updates, gets as reads,
    # seeks as scans; the phase ends with the trace.
    assert sent.get("update", 0) == ops["put"] + ops["merge"]
    assert sent.get("read", 0) == ops["get"] + ops["multiget"]
    assert sent.get("scan", 0) == ops["seek"] + ops["seek_for_prev"]
    assert sent.get("delete", 0) == ops["delete"] + ops["single_delete"]
    assert sent["total"] == ops["total"] - ops["delete_range"]


def points(results: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text())
            for p in sorted((results / "trace-replay").glob("*/point.json"))]


def test_the_trace_reaches_a_verdict_on_two_engines(driver_path: Path, tmp_path: Path,
                                                    data_root: Path) -> None:
    code = main(["run", str(CAMPAIGN), "--results", str(tmp_path), "--no-publish", "--quiet",
                 "--set", "matrix.engine=[leveling,rocksdb]",
                 "--set", f"testbed.data_dir={data_root}",
                 "--set", "throttle.enabled=false",
                 "--set", "phases.load.settle=60s",
                 "--set", "phases.testing.duration=16s", "--set", "phases.testing.steady.round=2s",
                 "--set", "phases.running.duration=10s",
                 "--set", "phases.running.until_decided.min_duration=4s"])
    assert code == 0
    done = points(tmp_path)
    assert sorted(p["engine"] for p in done) == ["builtin", "rocksdb"]
    for p in done:
        assert p["state"] == "complete", p["error"]
        assert p["max_throughput"]["writes_per_s"] > 0
        verdict = p["verdict"]
        assert verdict["verdict"] in ("sustainable", "not-sustainable", "inconclusive")
        # 14 % of the trace's requests are writes: the arrivals are requests, seven per write.
        assert 0.1 < verdict["write_share"] < 0.2, verdict
        assert any("requests/s arrive for" in r for r in verdict["reasons"]), verdict["reasons"]
        point_dir = tmp_path / "trace-replay" / p["point"]
        run = json.loads((point_dir / "running" / "run.json").read_text())
        assert run["arrival"]["process"] == "replay"
        assert run["workload"]["rocksdb_trace"] == str(TRACE.resolve())
