"""Tracking an engine from its own repository: a git repository that holds only an engine
plugin (the memkv example), built per commit by a build command of its own, measured night
after night by this lsmbench's driver, and a regression in it bisected to its commit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from repo_paths import REPO
from track_nights import git

MEMKV = REPO / "engines" / "plugin" / "examples" / "memkv" / "memkv.c"
INCLUDE = REPO / "engines" / "plugin" / "include"
# The regression: from this commit on, every put spins ~20 us before it writes.
SLOW_PUT = """static lsmbench_code put(lsmbench_engine *db, const char *key, size_t key_size,
                         const char *value, size_t value_size, lsmbench_message *message) {
  (void)message;
  int64_t until = now_ns() + 20000;
  while (now_ns() < until) {
  }
  return write_entry(db, key, key_size, value, value_size);
}"""


def plugin_repo(root: Path, commits: int, slow_from: int) -> list[str]:
    """A repository of the plugin alone: commit i changes a version line, and from commit
    slow_from on put is slow."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    source = MEMKV.read_text()
    fast_put = source[source.index("static lsmbench_code put("):source.index(
        "static lsmbench_code del(")].rstrip()
    assert "write_entry(db, key, key_size, value, value_size);" in fast_put
    shas = []
    for i in range(commits):
        text = source.replace('.version = "1.0"', f'.version = "1.{i}"')
        if i >= slow_from:
            text = text.replace(fast_put, SLOW_PUT)
        (root / "toykv.c").write_text(text)
        git(root, "add", "toykv.c")
        git(root, "commit", "-q", "-m", f"toykv {i}")
        shas.append(git(root, "rev-parse", "HEAD"))
    return shas


def build_command(driver: Path) -> str:
    """The plugin repository's build: its plugin into the build's plugins/, this machine's
    lsm-driver and lsm-sim linked beside it (the driver that measures every commit)."""
    driver = driver.resolve()
    return (f'mkdir -p "$LSMBENCH_BUILD_DIR/bin" "$LSMBENCH_BUILD_DIR/plugins" && '
            f'cc -std=c99 -O2 -shared -fPIC -I {INCLUDE} toykv.c -lpthread '
            f'-o "$LSMBENCH_BUILD_DIR/plugins/lsmbench-memkv.so" && '
            f'ln -sf {driver} "$LSMBENCH_BUILD_DIR/bin/lsm-driver" && '
            f'ln -sf {driver.with_name("lsm-sim")} "$LSMBENCH_BUILD_DIR/bin/lsm-sim"')


@pytest.mark.slow
def test_nightly_and_bisect_track_a_plugin_from_its_own_repository(
        tmp_path: Path, data_root: Path, driver_path: Path) -> None:
    shas = plugin_repo(tmp_path / "toykv", commits=6, slow_from=3)
    spec = tmp_path / "toykv.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "toykv-nightly", "matrix": {"repetitions": 3},
        "engine": {"name": "memkv", "options": {"memtable_entries": 256}},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 2000}},
        "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                   "running": {"enabled": False}},
        "throttle": "none",
        "testbed": {"type": "local", "data_dir": str(data_root / "data")}}))
    results = tmp_path / "results"
    env = {k: v for k, v in os.environ.items() if k not in ("LSMBENCH_PLUGIN_PATH",)}

    def night(ref: str) -> dict:
        r = subprocess.run([sys.executable, "-m", "lsmbench", "track", "nightly", str(spec),
                            "--repo", str(tmp_path / "toykv"), "--ref", ref, "--no-fetch",
                            "--results", str(results), "--build-command",
                            build_command(driver_path), "--json", "--bisect",
                            "--bisect-threshold", "0.5"],
                           capture_output=True, text=True, timeout=900, check=False, env=env)
        assert r.returncode in (0, 4), r.stderr[-3000:]
        end = json.loads(r.stdout.splitlines()[-1])
        assert end["event"] == "nightly_end"
        return end

    first, second = night(shas[0]), night(shas[-1])
    assert first["exit"] == 0
    # The second night is paired against the first's commit: each point ran both builds,
    # each with its own commit's plugin.
    run_dir = next(p for p in (results).rglob("point.json") if "build=reference" in str(p))
    summary = json.loads((run_dir.parent / "testing" / "summary.json").read_text())
    assert f"/{shas[0][:12]}" in summary["engine_plugin"]["path"], summary["engine_plugin"]
    assert summary["engine_plugin"]["version"] == "1.0"
    doc = json.loads((results / "regressions.json").read_text())
    change = next(c for c in doc["open"]
                  if c["kind"] == "paired" and c["metric"] == "max_write_throughput")
    assert (change["commit_before"], change["commit_after"]) == (shas[0], shas[-1])
    (step,) = [s for s in second["steps"] if s["step"] == "bisect"]
    assert second["exit"] == 4 and step["code"] == 0, second
    assert shas[3][:12] in step["detail"], step
