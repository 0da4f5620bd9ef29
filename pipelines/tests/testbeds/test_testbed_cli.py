"""`lsmbench testbed` and remote-testbed errors without a network: what is missing or wrong is
named, with how to fix it, and nothing half-made is left looking complete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lsmbench.testbeds import TestbedError as TbError
from lsmbench.testbeds import open_named
from lsmbench.testbeds.inventory import entries, load_inventory_file
from repo_paths import PIPELINES, REPO


def lsmbench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LSMBENCH_TESTBEDS": str(tmp_path / "testbeds")}
    return subprocess.run([sys.executable, "-m", "lsmbench", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def test_up_without_a_definition_says_how(tmp_path):
    r = lsmbench(tmp_path, "testbed", "up", "nowhere")
    assert r.returncode == 3
    assert "lsmbench testbed up nowhere --file" in r.stderr


def test_bad_definition_names_the_field_and_saves_nothing(tmp_path):
    f = tmp_path / "bad.yml"
    f.write_text(yaml.safe_dump({"type": "ssh", "hosts": [{"address": "h", "disk": "tape"}]}))
    r = lsmbench(tmp_path, "testbed", "up", "bad", "--file", str(f))
    assert r.returncode == 2  # bad input, not the environment
    assert "hosts.0.disk" in r.stderr and "'ssd' or 'hdd'" in r.stderr
    assert not (tmp_path / "testbeds" / "bad" / "testbed.yml").exists()


def test_down_refuses_without_yes(tmp_path):
    d = tmp_path / "testbeds" / "rack"
    d.mkdir(parents=True)
    (d / "testbed.yml").write_text(yaml.safe_dump({"type": "ssh",
                                                   "hosts": [{"address": "127.0.0.1"}]}))
    r = lsmbench(tmp_path, "testbed", "down", "rack")
    assert r.returncode == 2 and "--yes" in r.stderr and "--dry-run" in r.stderr
    r = lsmbench(tmp_path, "testbed", "down", "rack", "--dry-run")
    assert r.returncode == 0 and "would remove /var/lib/lsmbench on 127.0.0.1" in r.stdout


def test_campaign_on_unreachable_nodes_fails_early(tmp_path):
    spec = {"name": "nope", "workload": "update-uniform-1kb",
            "testbed": {"type": "ssh", "hosts": [{"address": "127.0.0.1", "port": 1,
                                                  "name": "closed"}]}}
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(spec))
    r = lsmbench(tmp_path, "run", str(p), "--results", str(tmp_path / "r"))
    assert r.returncode == 3
    assert "no node is reachable" in r.stderr and "node closed unreachable" in r.stderr
    assert not (tmp_path / "r" / "nope").exists() or not any(
        (tmp_path / "r" / "nope").glob("*/point.json"))


def test_campaign_naming_an_unknown_testbed_says_how(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({"name": "n", "workload": "update-uniform-1kb",
                                 "testbed": "ghost"}))
    r = lsmbench(tmp_path, "run", str(p), "--results", str(tmp_path / "r"))
    assert r.returncode == 3 and "lsmbench testbed up ghost --file" in r.stderr


def test_inventory_entries_are_checked():
    with pytest.raises(TbError, match=r"hosts\[1\]\.name: 'a' is used twice"):
        entries([{"address": "x", "name": "a"}, {"address": "y", "name": "a"}], "hosts", "/d")
    with pytest.raises(TbError, match=r"hosts\[1\]: 'b' and 'a' are the same data directory"):
        entries([{"address": "x", "name": "a"}, {"address": "x", "name": "b"}], "hosts", "/d")
    with pytest.raises(TbError, match=r"hosts\[0\]: unknown key\(s\) password"):
        entries([{"address": "x", "password": "hunter2"}], "hosts", "/d")
    with pytest.raises(TbError, match=r"hosts\[0\]\.port: must be in 1..65535"):
        entries([{"address": "x", "port": 0}], "hosts", "/d")
    e = entries([{"address": "10.1.1.1"}], "hosts", "/data", user="ops", key_file="/k")[0]
    assert (e.name, e.port, e.user, e.key_file, e.data_dir, e.disk) == (
        "10.1.1.1", 22, "ops", "/k", "/data", "ssd")


def test_inventory_file(tmp_path):
    f = tmp_path / "nodes.yml"
    f.write_text(yaml.safe_dump({"hosts": [{"address": "10.0.0.1", "disk": "hdd"}]}))
    assert load_inventory_file(f, "/d")[0].disk == "hdd"
    f.write_text("hosts: {not: a list}")
    with pytest.raises(TbError, match="expected a mapping with a 'hosts' list"):
        load_inventory_file(f, "/d")


def test_named_definition_cannot_name_another(tmp_path, monkeypatch):
    monkeypatch.setenv("LSMBENCH_TESTBEDS", str(tmp_path))
    with pytest.raises(TbError, match="cannot name another testbed"):
        open_named("x", definition="other")  # type: ignore[arg-type]


def test_node_helper_runs_a_phase_and_reports(tmp_path, driver_path):
    """The node helper alone (what runs on a node): run.json on stdin, ticks, a result line,
    outputs in --out."""
    helper = PIPELINES / "lsmbench" / "testbeds" / "node_helper.py"
    from lsmbench.driverio import build_run_json

    doc = build_run_json(engine="builtin", engine_options={}, data_dir=str(tmp_path / "db"),
                         phase="load", workload={**yaml.safe_load(
                             (REPO / "workloads" /
                              "update-uniform-1kb.yaml").read_text()), "record_count": 2000},
                         seed=1, label="t", duration_s=0, warmup_s=0)
    r = subprocess.run([sys.executable, str(helper), "run", "--out", str(tmp_path / "out"),
                        "--driver", str(driver_path)], input=json.dumps(doc), text=True,
                       capture_output=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    result = [ln for ln in r.stdout.splitlines() if ln.startswith("result ")]
    assert len(result) == 1
    res = json.loads(result[0][7:])
    assert res["exit_code"] == 0 and res["timed_out"] is False
    assert (tmp_path / "out" / "run.json").is_file()
    assert (tmp_path / "out" / "summary.json").is_file()
    r = subprocess.run([sys.executable, str(helper), "prepare", "--root", str(tmp_path / "d"),
                        "--campaign", "c", "--key", "p/1 x"], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0 and json.loads(r.stdout)["path"] == str(tmp_path / "d/c/p_1_x")


class FakeRemote:
    """What campaign.remote_limits needs of a remote testbed."""

    def __init__(self, root: Path, ok: bool = True) -> None:
        from lsmbench.testbeds.state import TestbedState

        self.state = TestbedState("fake", root)
        self.ok = ok
        self.checked: list[tuple[str, object]] = []

    def check_throttle(self, node, limits):
        self.checked.append((node.name, limits))
        return {"ok": True} if self.ok else {"ok": False, "error": "no io controller"}


def _profile(seq_write_bps: float):
    from lsmbench.calibrate import DiskProfile

    return DiskProfile(seq_write_bps=seq_write_bps, seq_read_bps=1e9, rand_write_iops=1e4,
                       rand_read_iops=1e4, latency_us={}, jobs={}, directory="/d", device=None,
                       fio_version="fio-3", timestamp="2026-01-01T00:00:00Z", runtime_s=1,
                       size_mb=16, ioengine="libaio", iodepth=16, direct=True)


def test_relative_throttle_uses_each_nodes_own_calibration(tmp_path):
    from lsmbench.campaign import CampaignError, remote_limits
    from lsmbench.plan import build_plan
    from lsmbench.progress import QuietReporter
    from lsmbench.spec import validate_raw
    from lsmbench.store import Store
    from lsmbench.testbeds import Node

    raw = {"name": "rel", "workload": "update-uniform-1kb", "throttle": {"write_bps": "50%"},
           "testbed": {"type": "ssh", "hosts": [{"address": "a"}, {"address": "b"}]}}
    plan = build_plan(validate_raw(raw))
    nodes = [Node(name="a", data_root="/d", device="/dev/sdb"), Node(name="b", data_root="/d")]
    tb = FakeRemote(tmp_path)
    with pytest.raises(CampaignError, match=r"node a has no calibration.*lsmbench testbed "
                                            r"calibrate fake"):
        remote_limits(plan, Store(tmp_path / "r"), tb, nodes, QuietReporter())
    _profile(400e6).save(tb.state.calibration_path("a"))
    _profile(100e6).save(tb.state.calibration_path("b"))
    limits = remote_limits(plan, Store(tmp_path / "r"), tb, nodes, QuietReporter())
    assert limits["a"].write_bps == 200_000_000 and limits["a"].device == "/dev/sdb"
    assert limits["b"].write_bps == 50_000_000 and limits["b"].device is None
    assert [n for n, _ in tb.checked] == ["a", "b"]
    with pytest.raises(CampaignError, match="throttle on node a: no io controller"):
        remote_limits(plan, Store(tmp_path / "r"), FakeRemote(tmp_path, ok=False), nodes,
                      QuietReporter())
