"""The ssh testbed across a real network: sshd nodes in network namespaces (fixtures_netns).

One module-wide pair of nodes: `lsmbench testbed up` (Ansible deploys the engine from a
build cache seeded with this machine's lsm-driver -- the nodes share its 2 CPUs, a CMake
build per node would take minutes -- and the node helper), a second `up` that changes
nothing, a campaign spread over both nodes, a node whose sshd dies mid-campaign, a node whose
data disk runs out, a changed host key, and `down`. Runs as root (CI); skipped with the
reason elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from fixtures_netns import (
    NetnsNodes,
    netns_nodes,
    restart_sshd,
    run_losing_node,
    small_data_disk,
    write_ssh_testbed,
)
from repo_paths import REPO

pytestmark = [pytest.mark.slow, pytest.mark.netns]

NAME = "nsbed"


@pytest.fixture(scope="module")
def bed(driver_path):
    base = Path(tempfile.mkdtemp(prefix="lsmbench-netns-", dir="/var/tmp"))
    try:
        with netns_nodes(base, count=2) as nodes:
            write_ssh_testbed(nodes, driver_path)
            yield nodes
    finally:
        os.environ.pop("LSMBENCH_ENGINES", None)
        shutil.rmtree(base, ignore_errors=True)


def lsmbench(nodes: NetnsNodes, *args: str, timeout: float = 600,
             **env_extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LSMBENCH_TESTBEDS": str(nodes.base / "testbeds"), **env_extra}
    return subprocess.run([sys.executable, "-m", "lsmbench", *args], capture_output=True,
                          text=True, timeout=timeout, check=False, env=env)


def state_dir(nodes: NetnsNodes) -> Path:
    return nodes.base / "testbeds" / NAME


def up(nodes: NetnsNodes) -> dict:
    r = lsmbench(nodes, "testbed", "up", NAME, "--file", str(nodes.base / "testbed.yml"),
                 "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def campaign_spec(nodes: NetnsNodes, name: str, points: int, testing_s: str = "2s",
                  **extra: object) -> Path:
    spec = {**extra,
        "name": name,
        "engine": {"name": "builtin", "options": {"memtable_bytes": "1M"}},
        "matrix": {"size_ratio": list(range(2, 2 + points))},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 5000}},
        "phases": {"testing": {"duration": testing_s, "warmup": "0.5s"},
                   "running": {"duration": "1s"}},
        "testbed": NAME,
    }
    p = nodes.base / f"{name}.yaml"
    p.write_text(yaml.safe_dump(spec))
    return p


def events(stdout: str) -> list[dict]:
    return [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]


# ------------------------------------------------------------------------------------ tests


def test_check_mode_reports_changes_and_makes_none(bed):
    r = lsmbench(bed, "testbed", "up", NAME, "--file", str(bed.base / "testbed.yml"), "--check",
                 "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert all(x["failed"] == 0 and x["changed"] > 0 for x in out["recap"].values())
    assert not any(n.remote_root.exists() for n in bed.nodes)
    assert not (state_dir(bed) / "deployed.json").exists()
    assert not (state_dir(bed) / "testbed.yml").exists()


def test_up_contacts_every_node_and_deploys(bed):
    out = up(bed)
    assert sorted(n["name"] for n in out["nodes"]) == ["node0", "node1"]
    assert set(out["recap"]) == {"node0", "node1"}
    assert all(r["failed"] == 0 and r["unreachable"] == 0 for r in out["recap"].values())
    sd = state_dir(bed)
    # First contact recorded each node's host key in the testbed's own known_hosts.
    known = (sd / "known_hosts").read_text()
    for n in bed.nodes:
        assert n.address in known
    assert (sd / "inventory.yml").stat().st_mode & 0o077 == 0
    inv = yaml.safe_load((sd / "inventory.yml").read_text())
    assert set(inv["all"]["children"]["ssd"]["hosts"]) == {"node0", "node1"}
    deployed = json.loads((sd / "deployed.json").read_text())
    from lsmbench.testbeds.state import content_hash

    assert {d["content_hash"] for d in deployed.values()} == {content_hash()}
    for n in bed.nodes:
        driver = n.remote_root / "bin" / "lsm-driver"
        assert driver.is_file() and os.access(driver, os.X_OK)
        assert (n.remote_root / "bin" / "lsm-driver.source-hash").read_text().strip() == \
            content_hash()
        assert (n.remote_root / "lib" / "lsmbench_node.py").is_file()
        assert (n.remote_root / "lib" / "lsmbench" / "throttle" / "cgroup.py").is_file()
        # The project's plugins beside it, where the node's driver finds them by name.
        assert sorted(p.name for p in (n.remote_root / "plugins").iterdir()) == [
            "lsmbench-leveldb.so", "lsmbench-rocksdb.so"]


def test_second_up_changes_nothing(bed):
    out = up(bed)
    assert out["changed"] == 0, out["recap"]
    assert all(r["changed"] == 0 and r["ok"] > 0 for r in out["recap"].values())


def test_status_reports_reachable_and_current(bed):
    r = lsmbench(bed, "testbed", "status", NAME, "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["nodes"]
    deployed = json.loads((state_dir(bed) / "deployed.json").read_text())
    assert [(x["node"], x["reachable"], x["current"], x["helper"]) for x in rows] == [
        ("node0", True, True, True), ("node1", True, True, True)]
    assert [x["deployed"] for x in rows] == [deployed["node0"]["content_hash"],
                                             deployed["node1"]["content_hash"]]


def test_monitor_ends_a_running_phase_early_over_ssh(bed, tmp_path, monkeypatch):
    """An adaptive phase's stopping rule on a node: the helper streams the driver's intervals
    (`run --follow`), the monitor sees them in order and says stop after two, `end` over a
    second connection has the driver end its 30 s phase as if the time were up (SIGUSR1),
    and the outputs come back complete."""
    monkeypatch.setenv("LSMBENCH_TESTBEDS", str(bed.base / "testbeds"))
    from lsmbench.driverio import build_run_json
    from lsmbench.testbeds import open_named

    tb = open_named(NAME, campaign="early")
    node = tb.up()[0]
    assert tb.needs_deploy([node]) == []  # the helper deployed by `up` is this one
    workload = yaml.safe_load((REPO / "workloads" /
                               "update-uniform-1kb.yaml").read_text())
    doc = build_run_json(engine="null", engine_options={}, data_dir="", phase="running",
                         workload={**workload, "record_count": 1000}, seed=1, label="early",
                         duration_s=30, arrival={"process": "constant", "rate": 2000})
    seen: list[dict] = []

    def monitor(fresh: list[dict]) -> bool:
        seen.extend(fresh)
        return len(seen) >= 2

    out = tmp_path / "running"
    t0 = time.monotonic()
    run = tb.run_driver(node, doc, out, monitor=monitor, timeout_s=120)
    wall = time.monotonic() - t0
    assert run.ended_early is True, run.log_tail
    assert (run.exit_code, run.timed_out) == (0, False), run.log_tail
    assert wall < 25
    index = [d["interval"] for d in seen]
    assert len(index) >= 2 and index == list(range(len(index)))
    assert all(d["phase"] == "running" for d in seen)
    # Complete outputs: the time series renamed (its first lines those the monitor saw), the
    # summary and histograms written, the driver's log; no end marker among them.
    assert sorted(p.name for p in out.iterdir()) == [
        "driver.log", "histograms.json", "run.json", "summary.json", "timeseries.jsonl"]
    lines = [json.loads(x) for x in (out / "timeseries.jsonl").read_text().splitlines()]
    assert lines[:len(seen)] == seen
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["status"], summary["interrupted"], summary["exit_code"]) == ("ok", False, 0)
    # The node's copy was moved here.
    assert list((bed.nodes[0].remote_root / "out" / "early").iterdir()) == []


def test_campaign_spreads_over_both_nodes(bed, tmp_path, influxd):
    sink = {"influx": {"url": influxd.url, "database": "tbtest", "username": "admin",
                       "token_env": "LSMBENCH_TEST_INFLUX_PASSWORD", "retries": 1}}
    # Throttled on the nodes as on this machine: a node has cgroups of its own (here: this
    # machine's hierarchies, mounted in the node's namespace as a separate machine has them).
    spec = campaign_spec(bed, "spread", points=4, sinks=sink,
                         throttle={"write_bps": "64MB/s", "phases": ["testing"]})
    results = tmp_path / "results"
    r = lsmbench(bed, "run", str(spec), "--json", "--results", str(results),
                 LSMBENCH_TEST_INFLUX_PASSWORD=influxd.password)
    assert r.returncode == 0, r.stderr[-3000:] + r.stdout[-2000:]
    summary = events(r.stdout)[-1]
    assert summary["event"] == "campaign_end"
    assert (summary["complete"], summary["failed"]) == (4, 0)
    assert summary["node_failures"] == []
    from lsmbench.store import Store

    points = Store(results).points("spread")
    assert len(points) == 4
    hosts = {p.data["host"] for p in points}
    assert hosts == {"node0", "node1"}
    for p in points:
        assert p.state == "complete"
        for phase in ("load", "testing", "running"):
            d = p.path / phase
            for f in ("run.json", "summary.json", "driver.log"):
                assert (d / f).is_file(), f"{d / f} missing"
        fp = json.loads((p.path / "fingerprint.json").read_text())
        assert fp["node"]["name"] == p.data["host"]
        assert p.data["max_throughput"]["writes_per_s"] > 0
        testing = p.data["phases"]["testing"]
        assert testing["throttled"] is True and testing["cgroup_backend"] in ("v1", "v2")
        assert p.data["phases"]["running"]["throttled"] is False
    # Published like any point, the node as the host tag.
    assert all(p.data["published"] is True for p in points)
    tags = influxd.query('SHOW TAG VALUES FROM lsm_summary WITH KEY = "host"', db="tbtest")
    assert sorted(v[1] for v in tags["results"][0]["series"][0]["values"]) == ["node0", "node1"]
    # Nothing left behind on the nodes: phase outputs were moved, data dirs removed.
    for n in bed.nodes:
        assert list((n.remote_root / "out" / "spread").iterdir()) == []
        assert not any((n.data_dir / "spread").iterdir())


def run_plugin_campaign(bed: NetnsNodes, results: Path, name: str, engine: dict,
                        matrix: dict) -> list:
    """A two-point campaign of an engine plugin over the nodes, run to its end; its points."""
    spec = campaign_spec(bed, name, points=0)
    doc = yaml.safe_load(spec.read_text())
    doc["engine"], doc["matrix"] = engine, matrix
    spec.write_text(yaml.safe_dump(doc))
    r = lsmbench(bed, "run", str(spec), "--json", "--results", str(results))
    assert r.returncode == 0, r.stderr[-3000:] + r.stdout[-2000:]
    summary = events(r.stdout)[-1]
    assert (summary["complete"], summary["failed"]) == (2, 0), summary
    from lsmbench.store import Store

    return list(Store(results).points(name))


def test_rocksdb_runs_on_the_nodes_from_the_plugin_deployed_there(bed, tmp_path):
    done = run_plugin_campaign(
        bed, tmp_path / "results", "rocks",
        {"name": "rocksdb", "options": {"write_buffer_size": "256K"}},
        {"max_background_jobs": [1, 2]})
    roots = {n.name: n.remote_root for n in bed.nodes}
    for p in done:
        testing = p.path / "testing"
        # The plugin the deploy built on the node, not a file of this machine.
        node_plugin = str(roots[p.data["host"]] / "plugins" / "lsmbench-rocksdb.so")
        assert json.loads((testing / "run.json").read_text())["engine_plugin"] == node_plugin
        loaded = json.loads((testing / "summary.json").read_text())["engine_plugin"]
        assert loaded["path"] == node_plugin
        assert p.data["max_throughput"]["writes_per_s"] > 0


def test_a_plugin_of_this_machine_is_copied_to_the_nodes_and_runs_there(bed, tmp_path,
                                                                        driver_path):
    import hashlib

    local = driver_path.parent.parent / "plugins" / "lsmbench-memkv.so"
    assert local.is_file(), f"{local}: the example plugin is built with the driver"
    done = run_plugin_campaign(
        bed, tmp_path / "results", "memkv",
        {"name": "memkv", "options": {"memtable_entries": 64}},
        {"engine.options.memtable_entries": [64, 128]})
    digest = hashlib.sha256(local.read_bytes()).hexdigest()[:16]
    for n in bed.nodes:  # on every node, checked there, though a point ran on only one
        copy = n.remote_root / "plugins" / "campaign" / digest / "lsmbench-memkv.so"
        assert copy.read_bytes() == local.read_bytes()
    roots = {n.name: n.remote_root for n in bed.nodes}
    for p in done:
        loaded = json.loads((p.path / "testing" / "summary.json").read_text())["engine_plugin"]
        assert loaded["path"] == str(roots[p.data["host"]] / "plugins" / "campaign" / digest
                                     / "lsmbench-memkv.so")


def test_node_lost_mid_campaign_point_finishes_elsewhere(bed, tmp_path):
    spec = campaign_spec(bed, "lossy", points=3, testing_s="6s")
    results = tmp_path / "results"
    env = {**os.environ, "LSMBENCH_TESTBEDS": str(bed.base / "testbeds")}
    victim = bed.nodes[1]
    out_dir = victim.remote_root / "out" / "lossy"
    proc, stdout, stderr, killed = run_losing_node(
        bed, [sys.executable, "-m", "lsmbench", "run", str(spec), "--json", "--results",
              str(results)], env, victim,
        lambda: out_dir.is_dir() and any((d / "run.json").is_file()
                                         for d in out_dir.iterdir()))
    assert killed, "node1 never ran a phase"
    ev = events(stdout)
    summary = ev[-1]
    assert summary["event"] == "campaign_end", stderr[-3000:]
    # Every point completed -- the lost one on node0 -- and the failure names node1.
    assert (summary["complete"], summary["failed"]) == (3, 0), stderr[-3000:]
    assert proc.returncode == 0
    assert [f["node"] for f in summary["node_failures"]] == ["node1"]
    from lsmbench.store import Store

    points = Store(results).points("lossy")
    retried = [p for p in points if p.data.get("attempts")]
    assert len(retried) == 1
    att = retried[0].data["attempts"]
    assert att[0]["node"] == "node1" and att[0]["node_failed"] and att[0]["unreachable"]
    assert retried[0].data["host"] == "node0"
    # The helper on node1 saw its controller go and stopped the driver: no orphan writes on.
    driver = str(victim.remote_root / "bin" / "lsm-driver")
    deadline = time.monotonic() + 30
    while _running(driver) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _running(driver)


def _running(exe: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] == exe.encode():
                    return True
            except OSError:
                pass
    return False


def test_node_data_disk_full_retries_elsewhere_and_marks_the_node(bed, tmp_path):
    """node0's data disk is 16 MiB: a point of 40 MB fails there (node-local: it runs again
    on node1), node0 gets no more points and `testbed status` marks it; a point that fails
    for its own input is not retried anywhere."""
    if shutil.which("nsenter") is None:
        pytest.skip("needs nsenter (util-linux)")
    spec = {
        "name": "nodefull",
        "engine": {"name": "builtin", "options": {"memtable_bytes": "1M"}},
        # The bad point last: node0 takes the big one first (its worker starts first). Its
        # warm-up, rounded up to whole intervals, leaves no measured window. The controller
        # here has no lsm-driver of its own (LSMBENCH_DRIVER below: only the nodes have one),
        # so validate cannot ask a driver about it; the node's driver refuses it when the
        # testing phase starts (exit 2, bad input).
        "matrix": {"workload.set.record_count": [40000, 40001],
                   "phases.testing.warmup": ["0.5s", "1.4s"],
                   "zip": ["workload.set.record_count", "phases.testing.warmup"]},
        "workload": {"file": "update-uniform-1kb"},
        "phases": {"testing": {"duration": "1.5s", "warmup": "0.5s"},
                   "running": {"duration": "1s"}},
        "testbed": NAME,
    }
    path = bed.base / "nodefull.yaml"
    path.write_text(yaml.safe_dump(spec))
    results = tmp_path / "results"
    victim = bed.nodes[0]
    with small_data_disk(victim, "16m"):
        r = lsmbench(bed, "run", str(path), "--json", "--results", str(results),
                     LSMBENCH_DRIVER=str(bed.base / "no-driver-on-the-controller"))
        status = lsmbench(bed, "testbed", "status", NAME, "--json")
        status_text = lsmbench(bed, "testbed", "status", NAME)
        # Cleaned after the fault (seen from inside the node: the tmpfs is the node's only).
        left = subprocess.run(["nsenter", "--target", str(victim.proc.pid), "--mount", "--",
                               "ls", "-A", str(victim.data_dir / "nodefull")],
                              capture_output=True, text=True, check=True).stdout
        assert left == ""
    assert r.returncode == 1, r.stderr[-3000:]  # the bad-input point failed
    ev = events(r.stdout)
    summary = ev[-1]
    assert (summary["complete"], summary["failed"]) == (1, 1), r.stderr[-3000:]
    assert [f["node"] for f in summary["node_failures"]] == ["node0"]
    assert "ran out of space" in summary["node_failures"][0]["error"]
    from lsmbench.store import Store

    store = Store(results)
    stored = list(store.points("nodefull"))
    big = next((p for p in stored if p.state == "complete"), None)
    assert big is not None and big.state == "complete" and big.data["host"] == "node1"
    first = big.data["attempts"][0]
    assert (first["node"], first["node_failed"], first["retire"]) == ("node0", True, True)
    assert f"the engine's data directory {victim.data_dir}/nodefull/" in first["error"]
    assert "on node node0 ran out of space" in first["error"]
    assert any(e["event"] == "message" and "node node0 failed" in e["text"]
               and "no more points" in e["text"] for e in ev)
    bad = next((p for p in stored if p.state == "failed"), None)
    assert bad is not None and bad.state == "failed" and bad.data["attempts"] == []
    assert bad.data["error"]["node_failed"] is False and bad.data["error"]["fault"] is None
    # `testbed status` marks node0 with the fault and shows its small data disk.
    assert status.returncode == 0, status.stderr
    rows = {row["node"]: row for row in json.loads(status.stdout)["nodes"]}
    assert rows["node0"]["fault"]["kind"] == "data-disk-full"
    assert rows["node0"]["fault"]["campaign"] == "nodefull"
    assert rows["node0"]["data_total_bytes"] == 16 << 20
    assert rows["node1"]["fault"] is None
    assert "FAULT data-disk-full" in status_text.stdout and "16.0 MiB" in status_text.stdout


def test_changed_host_key_is_refused(bed):
    victim = bed.nodes[0]
    bed.kill_sshd(victim)
    for f in victim.host_dir.glob("ssh_host_ed25519_key*"):
        f.unlink()
    restart_sshd(bed, victim)  # a new host key: as if someone else answered at that address
    r = lsmbench(bed, "testbed", "up", NAME)
    assert r.returncode == 3
    assert "host key differs" in r.stderr and "known_hosts" in r.stderr
    # Put the recorded key right again for what follows.
    kh = state_dir(bed) / "known_hosts"
    kh.write_text("".join(ln for ln in kh.read_text().splitlines(keepends=True)
                          if victim.address not in ln))


@pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not installed")
def test_terraform_static_module_inventory_reaches_the_nodes(bed):
    """modules/static's output becomes the inventory: up = apply + contact + deploy."""
    hosts = [n.host_entry(bed.key_file) for n in bed.nodes]
    definition = yaml.safe_load((bed.base / "testbed.yml").read_text())
    definition.update({"type": "terraform", "module": "terraform/modules/static",
                       "variables": {"hosts": hosts}})
    del definition["hosts"]
    f = bed.base / "tf.yml"
    f.write_text(yaml.safe_dump(definition))
    rc = bed.base / "terraformrc"
    rc.write_text("")
    env = {**os.environ, "LSMBENCH_TESTBEDS": str(bed.base / "testbeds"),
           "TF_CLI_CONFIG_FILE": str(rc)}
    r = subprocess.run([sys.executable, "-m", "lsmbench", "testbed", "up", "tfnodes", "--file",
                        str(f), "--json"], capture_output=True, text=True, env=env,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["kind"] == "terraform" and out["provisioned"] is True
    assert sorted(n["name"] for n in out["nodes"]) == ["node0", "node1"]
    # Same content already on the nodes (deployed by the ssh testbed): nothing changes.
    assert all(x["changed"] == 0 and x["failed"] == 0 for x in out["recap"].values())
    state = bed.base / "testbeds" / "tfnodes" / "terraform" / "terraform.tfstate"
    assert json.loads(state.read_text())["resources"]


def test_down_needs_yes_and_dry_run_changes_nothing(bed):
    r = lsmbench(bed, "testbed", "down", NAME)
    assert r.returncode == 2 and "--yes" in r.stderr
    r = lsmbench(bed, "testbed", "down", NAME, "--dry-run")
    assert r.returncode == 0 and "would remove" in r.stdout
    assert all((n.remote_root / "bin" / "lsm-driver").is_file() for n in bed.nodes)
    r = lsmbench(bed, "testbed", "down", NAME, "--yes")
    assert r.returncode == 0, r.stderr
    assert not any(n.remote_root.exists() for n in bed.nodes)
    assert not (state_dir(bed) / "deployed.json").exists()
