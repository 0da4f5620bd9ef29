"""The Pebble plugin (engines/plugin/pebble) end to end: its option table and rules through
lsm-driver, and a two-phase campaign on disk (pipelines/campaigns/plugin-pebble.yaml) whose
testing rounds count Pebble's compactions into the deepest level -- events that reach the
method only through the plugin's take_events."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsmbench.cli import main
from repo_paths import REPO

CAMPAIGN = REPO / "pipelines" / "campaigns" / "plugin-pebble.yaml"
PLUGIN = "lsmbench-pebble.so"


@pytest.fixture
def pebble_plugin(driver_path: Path) -> Path:
    """lsmbench-pebble.so beside the driver's build (its plugins/), or on the plugin path."""
    dirs = [driver_path.parent.parent / "plugins", driver_path.resolve().parent.parent / "plugins"]
    dirs += [Path(d) for d in os.environ.get("LSMBENCH_PLUGIN_PATH", "").split(":") if d]
    for d in dirs:
        if (d / PLUGIN).is_file():
            return d / PLUGIN
    pytest.skip(f"{PLUGIN} is not built (engines/plugin/pebble/build.sh BUILD_DIR, or the "
                "CMake target lsmbench_pebble, which needs Go); looked in "
                + ", ".join(str(d) for d in dirs))


def driver(driver_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(driver_path), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def test_describe_options_lists_pebbles_knobs(driver_path: Path, pebble_plugin: Path) -> None:
    r = driver(driver_path, "--describe-options", str(pebble_plugin))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["engine"] == "pebble"
    options = {o["name"]: o for o in out["options"]}
    for name in ("memtable_size", "memtable_stop_writes_threshold", "l0_compaction_threshold",
                 "l0_stop_writes_threshold", "lbase_max_bytes", "max_concurrent_compactions",
                 "level_multiplier", "block_size", "compression", "disable_wal", "sync",
                 "bytes_per_sync", "cache_size"):
        assert name in options, sorted(options)
    assert options["memtable_size"]["default"] == 4 << 20
    assert options["l0_stop_writes_threshold"]["default"] == 12
    plugin = out["plugin"]
    assert plugin["cannot_tell"] == []
    assert plugin["version"].startswith("pebble v2.1.7")
    assert '"cannot_tell": []' in r.stdout


def test_check_options_refuses_stop_below_compaction(driver_path: Path,
                                                     pebble_plugin: Path) -> None:
    r = driver(driver_path, "--check-options", str(pebble_plugin),
               "--option", "l0_stop_writes_threshold=1", "--option", "l0_compaction_threshold=4")
    assert r.returncode != 0
    text = r.stdout + r.stderr
    assert "l0_stop_writes_threshold" in text and "l0_compaction_threshold" in text, text
    ok = driver(driver_path, "--check-options", str(pebble_plugin),
                "--option", "l0_stop_writes_threshold=8", "--option", "l0_compaction_threshold=4")
    assert ok.returncode == 0, ok.stdout + ok.stderr


def points(results: Path, campaign: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((results / campaign).glob("*/point.json"))]


def test_pebble_runs_both_phases_to_a_verdict(driver_path: Path, pebble_plugin: Path,
                                              tmp_path: Path, data_root: Path) -> None:
    code = main(["run", str(CAMPAIGN), "--results", str(tmp_path), "--no-publish", "--quiet",
                 "--set", f"engine.plugin={pebble_plugin.resolve()}",
                 "--set", f"testbed.data_dir={data_root}",
                 "--set", "phases.testing.duration=20s", "--set", "phases.testing.steady.round=2s",
                 "--set", "phases.running.duration=12s",
                 "--set", "phases.running.until_decided.min_duration=4s"])
    assert code == 0
    done = points(tmp_path, "plugin-pebble")
    assert len(done) == 2
    for p in done:
        assert p["state"] == "complete", p["error"]
        assert p["engine"] == "pebble"
        steady = p["max_throughput"]["steady"]
        # Pebble's CompactionEnd events reached the method: with ~20 MB below lbase_max_bytes
        # the base level is L6, and every round counted compactions into it.
        assert steady["rounds"], steady
        assert all(r["deepest_level"] == 6 and r["deepest_merges"] > 0
                   for r in steady["rounds"]), steady["rounds"]
        assert p["max_throughput"]["writes_per_s"] > 0
        assert p["verdict"]["verdict"] in ("sustainable", "not-sustainable", "inconclusive")
        point_dir = tmp_path / "plugin-pebble" / p["point"]
        summary = json.loads((point_dir / "running" / "summary.json").read_text())
        assert summary["engine_plugin"]["cannot_tell"] == []
        assert summary["engine_plugin"]["path"] == str(pebble_plugin.resolve())
        # Flushes (FlushEnd) and per-level components (Metrics) reached the time series too.
        kinds, levels = set(), set()
        for line in (point_dir / "testing" / "timeseries.jsonl").read_text().splitlines():
            iv = json.loads(line)
            kinds |= {e["kind"] for e in iv.get("events") or []}
            levels |= {k for k, v in (iv.get("engine") or {}).items()
                       if k.startswith("disk_components.L") and v}
        assert {"flush", "merge"} <= kinds, kinds
        assert "disk_components.L6" in levels, levels


def test_a_load_past_the_last_levels_target_settles(driver_path: Path, pebble_plugin: Path,
                                                    tmp_path: Path) -> None:
    """~20 MB through 1 MiB memtables over a 2 MiB base level: the last level outgrows its
    target, so its score (its fill factor) passes 1, and Pebble's picker never compacts the
    last level by score. The settle must see the tree idle, not wait for that level."""
    doc = {"engine": "pebble", "engine_plugin": str(pebble_plugin), "dir": str(tmp_path / "db"),
           "phase": "load", "threads": 1, "progress_s": 0, "settle_s": 120,
           "engine_options": {"memtable_size": "1048576", "lbase_max_bytes": "2097152",
                              "target_file_size": "1048576"},
           "workload": {"record_count": 20000, "key_size": 16, "value_size": 1000}}
    (tmp_path / "run.json").write_text(json.dumps(doc))
    r = subprocess.run([str(driver_path), "--config", str(tmp_path / "run.json"), "--out",
                        str(tmp_path / "out"), "--quiet"], capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    settle = json.loads((tmp_path / "out" / "summary.json").read_text())["settle"]
    assert settle["supported"] and settle["idle"], settle
    assert not settle["timed_out"], settle
