"""Engine plugins end to end: the memkv example through the C ABI to a verdict, and plugins
that misbehave (engines/plugin/testdata/faulty.c) refused by `validate` with the reason, or
failing their points (not the campaign) with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from lsmbench.cli import main
from repo_paths import REPO

CAMPAIGN = REPO / "pipelines" / "campaigns" / "plugin-memkv.yaml"


def faulty(driver: Path, fault: str) -> Path:
    p = driver.resolve().parent.parent / "plugin" / "testdata" / f"faulty-{fault}.so"
    if not p.is_file():
        pytest.skip(f"{p} is not built (make build)")
    return p


def write_spec(tmp: Path, engine: dict[str, Any], data_root: Path) -> Path:
    spec = {
        "name": "plugin-test",
        "engine": engine,
        "matrix": {"engine.options.fanout": [2, 4]},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 2000}},
        "phases": {"testing": {"duration": "3s"},
                   "running": {"duration": "3s", "utilization": 0.5}},
        "throttle": "none",
        "testbed": {"type": "local", "data_dir": str(data_root)},
    }
    path = tmp / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def points(results: Path, campaign: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((results / campaign).glob("*/point.json"))]


def test_memkv_runs_both_phases_to_a_verdict(driver_path: Path, tmp_path: Path,
                                             data_root: Path) -> None:
    code = main(["run", str(CAMPAIGN), "--results", str(tmp_path), "--no-publish", "--quiet",
                 "--set", "matrix.repetitions=1", "--set", "workload.set.record_count=5000",
                 "--set", f"testbed.data_dir={data_root}",
                 "--set", "phases.testing.duration=12s", "--set", "phases.testing.steady.round=2s",
                 "--set", "phases.running.duration=10s",
                 "--set", "phases.running.until_decided.min_duration=4s"])
    assert code == 0
    done = points(tmp_path, "plugin-memkv")
    assert len(done) == 2
    for p in done:
        assert p["state"] == "complete", p["error"]
        assert p["engine"] == "memkv"
        steady = p["max_throughput"]["steady"]
        # The plugin's merge events reached the method: rounds counted merges into level 1.
        assert all(r["deepest_level"] == 1 and r["deepest_merges"] > 0 for r in steady["rounds"])
        assert p["verdict"]["verdict"] in ("sustainable", "not-sustainable", "inconclusive")
        point_dir = tmp_path / "plugin-memkv" / p["point"]
        summary = json.loads((point_dir / "running" / "summary.json").read_text())
        assert summary["engine_plugin"]["cannot_tell"] == []
        assert summary["engine_plugin"]["path"].endswith("/lsmbench-memkv.so")
        run = json.loads((point_dir / "running" / "run.json").read_text())
        assert run["engine"] == "memkv" and run["engine_plugin"] == summary["engine_plugin"]["path"]


@pytest.mark.parametrize(("engine", "path", "message"), [
    ({"name": "memkb"}, "engine.name", "did you mean 'memkv'?"),
    ({"name": "memkv", "options": {"fanot": 3}}, "engine.options.fanot",
     "did you mean 'fanout'?"),
    ({"name": "memkv", "options": {"memtable_entries": 4}}, "engine.options.memtable_entries",
     "an integer in [16, 1048576]"),
    ({"name": "faulty", "plugin": "FAULT:abi"}, "engine.plugin",
     "ABI version 99; this lsm-driver speaks 1"),
    ({"name": "faulty", "plugin": "FAULT:missing"}, "engine.plugin",
     "missing required functions: put, scan"),
    ({"name": "faulty", "plugin": "FAULT:sizes"}, "engine.plugin",
     "built against another engine_plugin.h"),
    ({"name": "faulty", "plugin": "TEXT"}, "engine.plugin", "not a loadable shared object"),
    ({"name": "faulty", "plugin": "/nonexistent/lsmbench-faulty.so"}, "engine.plugin",
     "no such file"),
    ({"name": "other", "plugin": "MEMKV"}, "engine.plugin",
     "calls itself 'memkv', not 'other'"),
    ({"name": "builtin", "plugin": "MEMKV"}, "engine",
     "'builtin' is compiled into lsm-driver"),
])
def test_validate_names_the_plugin_and_the_problem(
        driver_path: Path, tmp_path: Path, data_root: Path, capsys: pytest.CaptureFixture[str],
        engine: dict[str, Any], path: str, message: str) -> None:
    plugin = engine.get("plugin")
    if plugin == "TEXT":
        (tmp_path / "text.so").write_text("not an ELF file\n")
        engine = {**engine, "plugin": str(tmp_path / "text.so")}
    elif plugin == "MEMKV":
        engine = {**engine, "plugin": str(driver_path.resolve().parent.parent / "plugins" /
                                          "lsmbench-memkv.so")}
    elif isinstance(plugin, str) and plugin.startswith("FAULT:"):
        engine = {**engine, "plugin": str(faulty(driver_path, plugin[len("FAULT:"):]))}
    spec = write_spec(tmp_path, engine, data_root)
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"  {path}" in err and message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("fault", "reason"), [
    ("crash_put", "SIGSEGV during its put"),
    ("hang_settle", "background_work did not return within 1 s"),
    ("events_order", "): out of completion order"),
])
def test_a_misbehaving_plugin_fails_its_points_not_the_campaign(
        driver_path: Path, tmp_path: Path, data_root: Path, monkeypatch: pytest.MonkeyPatch,
        fault: str, reason: str) -> None:
    if fault == "hang_settle":  # only where a look hangs on purpose: a loaded machine's
        monkeypatch.setenv("LSMBENCH_PLUGIN_LOOK_LIMIT_S", "1")  # slow looks must not end runs
    spec = write_spec(tmp_path, {"name": "faulty", "plugin": str(faulty(driver_path, fault)),
                                 "options": {"memtable_entries": 64}}, data_root)
    assert main(["run", str(spec), "--results", str(tmp_path / "r"), "--no-publish",
                 "--quiet"]) == 1
    done = points(tmp_path / "r", "plugin-test")
    assert len(done) == 2  # the second point ran after the first failed
    for p in done:
        assert p["state"] == "failed"
        assert "engine plugin 'faulty'" in p["error"]["message"], p["error"]
        assert reason in p["error"]["message"], p["error"]


def test_tune_checks_a_plugins_options_against_its_table(
        driver_path: Path, tmp_path: Path, data_root: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, {"name": "memkv"}, data_root)
    raw = yaml.safe_load(spec.read_text())
    raw.pop("matrix")
    raw["phases"]["running"] = {"enabled": False}
    raw["tune"] = {"trials": 2, "objective": "max_write_throughput",
                   "parameters": {"fanot": {"low": 2, "high": 8},
                                  "memtable_entries": {"low": 4, "high": 64}}}
    spec.write_text(yaml.safe_dump(raw))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "tune.parameters.fanot: unknown memkv engine option 'fanot'; did you mean 'fanout'?" \
        in err, err
    assert "tune.parameters.memtable_entries" in err, err
