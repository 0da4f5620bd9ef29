"""fjall (engines/plugin/rust, a Rust LSM engine from crates.io) through the C ABI: its
option table as the driver reads it, a bad value refused by name, and a tiny two-phase
campaign on disk under a write throttle to a verdict. fjall cannot tell flush and merge
events (no listener), so its `cannot_tell` is exactly ["events"]."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsmbench.cli import main
from repo_paths import REPO

CAMPAIGN = REPO / "pipelines" / "campaigns" / "plugin-fjall.yaml"

OPTIONS = ["max_memtable_size", "block_size", "l0_threshold", "table_target_size",
           "level_ratio", "compression", "journal_compression", "journal_persist", "cache_size",
           "max_journaling_size", "worker_threads"]


@pytest.fixture
def fjall(driver_path: Path) -> Path:
    # The build directory beside the driver (as found, then with its links resolved).
    for build in (driver_path.parent.parent, driver_path.resolve().parent.parent):
        p = build / "plugins" / "lsmbench-fjall.so"
        if p.is_file():
            return p
    pytest.skip(f"{p} is not built (make build, with cargo on the PATH or in ~/.cargo/bin)")


def driver(driver_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(driver_path), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def test_describe_options_lists_the_table_and_what_it_cannot_tell(
        driver_path: Path, fjall: Path) -> None:
    r = driver(driver_path, "--describe-options", str(fjall))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["engine"] == "fjall"
    assert d["plugin"]["cannot_tell"] == ["events"]
    assert d["plugin"]["version"] == "fjall 3.1.13 (lsmbench plugin 1)"
    assert d["plugin"]["options_open"] is False
    by_name = {o["name"]: o for o in d["options"]}
    assert list(by_name) == OPTIONS
    # fjall 3.1.13's own defaults.
    assert by_name["max_memtable_size"]["default"] == 64 * 1024 * 1024
    assert by_name["block_size"]["default"] == 4096
    assert by_name["l0_threshold"]["default"] == 4
    assert by_name["cache_size"]["default"] == 32 * 1024 * 1024
    assert by_name["journal_persist"]["choices"] == ["buffer", "none", "sync_data", "sync_all"]
    assert by_name["worker_threads"].get("default") is None  # fjall: the cores, at most 4


@pytest.mark.parametrize(("options", "name", "message"), [
    (["block_size=12"], "block_size", "in [1024, 1048576]"),
    (["compression=zstd"], "compression", "zstd"),
    # A rule between options: the plugin's check_options.
    (["max_memtable_size=1G", "max_journaling_size=64M"], "",
     "max_memtable_size (1073741824) is larger than max_journaling_size"),
])
def test_a_bad_option_is_refused_naming_it(driver_path: Path, fjall: Path,
                                           options: list[str], name: str, message: str) -> None:
    args = ["--check-options", str(fjall)]
    for o in options:
        args += ["--option", o]
    r = driver(driver_path, *args)
    assert r.returncode != 0
    d = json.loads(r.stdout)
    assert d["ok"] is False
    (err,) = d["errors"]
    assert err["name"] == name and message in err["message"], err
    assert "engine plugin 'fjall'" in err["message"]


def points(results: Path, campaign: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((results / campaign).glob("*/point.json"))]


def test_fjall_runs_both_phases_to_a_verdict(driver_path: Path, fjall: Path, tmp_path: Path,
                                             data_root: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LSMBENCH_PLUGIN_PATH", str(fjall.parent))
    code = main(["run", str(CAMPAIGN), "--results", str(tmp_path), "--no-publish", "--quiet",
                 "--set", f"testbed.data_dir={data_root}",
                 "--set", "phases.testing.duration=20s", "--set", "phases.testing.steady.round=3s",
                 "--set", "phases.running.duration=15s",
                 "--set", "phases.running.until_decided.min_duration=5s"])
    assert code == 0
    done = points(tmp_path, "plugin-fjall")
    assert len(done) == 2
    for p in done:
        assert p["state"] == "complete", p["error"]
        assert p["engine"] == "fjall"
        mt = p["max_throughput"]
        assert mt["method"] == "steady" and mt["writes_per_s"] > 0
        # No events: rounds are whole intervals, none counts a merge.
        assert mt["steady"]["rounds"]
        assert all(r["deepest_merges"] == 0 for r in mt["steady"]["rounds"])
        assert p["verdict"]["verdict"] in ("sustainable", "not-sustainable", "inconclusive")
        point_dir = tmp_path / "plugin-fjall" / p["point"]
        summary = json.loads((point_dir / "running" / "summary.json").read_text())
        assert summary["engine_plugin"]["cannot_tell"] == ["events"]
        assert summary["engine_plugin"]["path"].endswith("/lsmbench-fjall.so")
        # The metrics reached the series: tables per level (fjall's seven levels).
        series = [json.loads(line)["engine"] for line in
                  (point_dir / "testing" / "timeseries.jsonl").read_text().splitlines()]
        last = series[-1]
        levels = [last[f"disk_components.L{i}"] for i in range(7)]
        assert sum(levels) == last["disk_components"] > 0
        # The active memtable's bytes. Not bounded by max_memtable_size: fjall rotates a full
        # memtable by a message to the worker pool that also runs its merges, and under the
        # throttle it was seen at ~40 MB (1 MiB set). A sample taken just after a rotation
        # reads 0, so the series as a whole must show bytes, not its last sample.
        assert max(s["memory_bytes"] for s in series) > 0
