"""lsmbench tune over a testbed of three real sshd nodes in network namespaces
(fixtures_netns): one trial per node at a time, a SIGKILL of the orchestrator mid-study and
--resume, a node lost mid-trial, and nodes that are not alike refused. The trials run the
null engine (its phases are their fixed lengths, whatever the machine's 2 cores do)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
import yaml
from fixtures_netns import (
    THREE_NODE_TESTBED,
    NetnsNodes,
    null_tune_spec,
    restart_sshd,
    run_losing_node,
    small_data_disk,
)

pytestmark = [pytest.mark.slow, pytest.mark.netns]

NAME = THREE_NODE_TESTBED
TRIALS = 6


@pytest.fixture(scope="module")
def bed3(three_node_testbed):
    with three_node_testbed.environment() as nodes:
        yield nodes


def lsmbench(nodes: NetnsNodes, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "LSMBENCH_TESTBEDS": str(nodes.base / "testbeds")}
    return subprocess.run([sys.executable, "-m", "lsmbench", *args], capture_output=True,
                          text=True, timeout=timeout, check=False, env=env)


def tune_spec(nodes: NetnsNodes, name: str) -> Path:
    p = nodes.base / f"{name}.yaml"
    p.write_text(yaml.safe_dump(null_tune_spec(name, NAME, TRIALS, seed=3, testing="3s",
                                               running="1s")))
    return p


def phase_running_on(nodes: NetnsNodes, campaign: str, names: list[str],
                     since: float = 0.0) -> list[str]:
    """The nodes among `names` that run a phase of the campaign (its run.json is there,
    written after `since`: a killed run leaves its own behind)."""
    out = []
    for n in nodes.nodes:
        d = n.remote_root / "out" / campaign
        if n.name not in names or not d.is_dir():
            continue
        for p in d.iterdir():
            try:
                if (p / "run.json").stat().st_mtime > since:
                    out.append(n.name)
                    break
            except OSError:
                continue
    return out


def test_study_over_three_nodes_survives_a_kill_and_a_lost_node(bed3, tmp_path):
    spec, results = tune_spec(bed3, "spread-tune"), tmp_path / "results"
    env = {**os.environ, "LSMBENCH_TESTBEDS": str(bed3.base / "testbeds")}
    argv = [sys.executable, "-m", "lsmbench", "tune", str(spec), "--results", str(results),
            "--json", "--no-publish"]

    # 1. SIGKILL of the orchestrator while trials run on at least two nodes.
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    names = [n.name for n in bed3.nodes]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if len(phase_running_on(bed3, "spread-tune", names)) >= 2:
            break
        time.sleep(0.1)
    if proc.poll() is not None:
        pytest.fail("the study ended before two nodes ran a phase at once: "
                    + proc.communicate()[1][-3000:])
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    study_file = results / "spread-tune" / "tune.sqlite3"
    storage = f"sqlite:///{study_file}"
    killed = optuna.load_study(study_name="spread-tune", storage=storage).get_trials()
    running = [t for t in killed if t.state == optuna.trial.TrialState.RUNNING]
    assert len({t.user_attrs["node"] for t in running}) >= 2, "trials did not overlap"

    # 2. --resume, and node1's sshd killed while it runs a phase of a trial.
    resumed = time.time()
    victim = bed3.nodes[1]
    proc, stdout, stderr, lost = run_losing_node(
        bed3, [*argv, "--resume"], env, victim,
        lambda: bool(phase_running_on(bed3, "spread-tune", [victim.name], resumed)))
    assert lost, "node1 never ran a phase after the resume"
    assert proc.returncode == 0, stderr[-3000:]
    answer = json.loads(stdout.strip().splitlines()[-1])
    assert answer["trials"] == TRIALS and answer["failed"] == 0, answer
    assert answer["best"] is not None and answer["confirmed"]

    trials = optuna.load_study(study_name="spread-tune", storage=storage).get_trials()
    by_number = {t.number: t for t in trials}
    fail = optuna.trial.TrialState.FAIL
    # The trials the kill left running were failed as interrupted and run again.
    for k in running:
        assert by_number[k.number].state == fail
        assert by_number[k.number].user_attrs.get("interrupted")
        assert any(t.user_attrs.get("redo_of") == k.number for t in trials)
    # The trial on the lost node: failed (not counted), its parameters run elsewhere.
    lost_trials = [t for t in trials if t.user_attrs.get("node_failed")]
    assert [t.user_attrs["node"] for t in lost_trials] == [victim.name]
    redo = [t for t in trials if t.user_attrs.get("redo_of") == lost_trials[0].number]
    assert len(redo) == 1 and redo[0].params == lost_trials[0].params
    assert redo[0].user_attrs["node"] != victim.name
    assert redo[0].state == optuna.trial.TrialState.COMPLETE

    from lsmbench.store import Store

    points = {p.point_id: p for p in Store(results).points("spread-tune")}
    # Every counted trial has its point, complete, on the node the study says ran it.
    counted = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(counted) == TRIALS
    for t in counted:
        rec = points[t.user_attrs["point"]]
        assert rec.state == "complete" and rec.data["host"] == t.user_attrs["node"]
    # The nodes ran trials at the same time: two points on distinct nodes overlap.
    spans = [(p.data["host"], p.data["started"], p.data["finished"])
             for p in points.values() if (p.data.get("tune") or {}).get("trial") is not None]
    assert any(a[0] != b[0] and a[1] < b[2] and b[1] < a[2] for a in spans for b in spans)
    # No point of a failed trial was kept; the plan lists what is stored.
    campaign = json.loads((results / "spread-tune" / "campaign.json").read_text())
    assert sorted(p["id"] for p in campaign["plan"]["points"]) == sorted(points)
    # The confirmation runs went over the nodes too, and the answer names the nodes.
    result = json.loads((results / "spread-tune" / "tune.json").read_text())
    assert {r["node"] for r in result["rows"] if r["state"] == "complete"} <= set(names)
    assert all(points[pid].data.get("host") for c in result["confirmed"]
               for pid in c["points"])


def test_a_study_refuses_nodes_that_are_not_alike(bed3, tmp_path):
    # node2's data directory on a tmpfs: another file system, another testbed key.
    spec, results = tune_spec(bed3, "mixed-tune"), tmp_path / "results"
    with small_data_disk(bed3.nodes[2], "64m"):
        r = lsmbench(bed3, "tune", str(spec), "--results", str(results), "--no-publish")
    assert r.returncode == 3, r.stdout[-2000:] + r.stderr[-2000:]
    # (a tmpfs has no block device: its disk fields are unknown, None)
    assert "not alike" in r.stderr and "; node2 (" in r.stderr, r.stderr
    assert "node0, node1 (" in r.stderr and "filesystem None" in r.stderr
    from lsmbench.store import Store

    assert Store(results).points("mixed-tune") == []
    assert not (results / "mixed-tune" / "tune.sqlite3").exists()


def test_a_study_does_not_start_without_every_node_unless_pinned_to_one(bed3, tmp_path):
    doc = yaml.safe_load(tune_spec(bed3, "pinned-tune").read_text())
    doc["testbed"] = {"type": "named", "name": NAME, "node": "node0"}
    doc["tune"].update({"trials": 2, "confirm": {"top": 0}})
    pinned = bed3.base / "pinned-tune.yaml"
    pinned.write_text(yaml.safe_dump(doc))
    spec, results = tune_spec(bed3, "gone-tune"), tmp_path / "results"
    bed3.kill_sshd(bed3.nodes[2])
    try:
        gone = lsmbench(bed3, "tune", str(spec), "--results", str(results), "--no-publish")
        # Pinned to node0, the study does not wait for node2.
        kept = lsmbench(bed3, "tune", str(pinned), "--results", str(results), "--no-publish")
    finally:
        restart_sshd(bed3, bed3.nodes[2])
    assert gone.returncode == 3, gone.stdout[-2000:] + gone.stderr[-2000:]
    assert "node node2 did not answer at the start" in gone.stderr, gone.stderr
    from lsmbench.store import Store

    assert Store(results).points("gone-tune") == []
    # No study is left behind: the next run starts it without --resume.
    assert not (results / "gone-tune" / "tune.sqlite3").exists()

    assert kept.returncode == 0, kept.stderr[-3000:]
    points = Store(results).points("pinned-tune")
    assert len(points) == 2 and {p.data.get("host") for p in points} == {"node0"}
