"""Tracking a campaign that runs on several nodes, without a network: a run per node (its node in
its testbed key, identical machines apart), one series per node, and the nodes' change points
reported once per change with the nodes that saw it (`lsmbench.track.changes.merge_node_changes`);
`track ack` of such a change acknowledges every node's. The night over real sshd nodes is in
test_track_nightly_nodes.py."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from lsmbench.cli import main
from lsmbench.fingerprint import testbed_identity as identity_of
from lsmbench.track.changes import Change, find_changes, merge_node_changes
from lsmbench.track.history import History, node_identity
from lsmbench.track.record import campaign_runs, record, record_runs
from lsmbench.util.digest import canonical_hash
from track_nights import DAY, GROUPS, make_night

NODES = ("node0", "node1", "node2")
NIGHTS = 16
STEP_AT = 8  # 0-based: the first night of the new level
METRIC = "max_write_throughput"
FINGERPRINT = {"cpu_model": "Same CPU", "cpu_count": 8, "memory_bytes": 1 << 34,
               "arch": "x86_64", "kernel": "6.1.0", "os": "Debian 12",
               "disk": {"model": "Same NVMe", "rotational": False, "filesystem": "ext4",
                        "io_scheduler": "[none]"}}


def add_nights(h: History, steps: dict[str, tuple[int, float]], nights: int = NIGHTS,
               seed: int = 3, campaign: str = "nodes") -> None:
    """`nights` campaign runs on the three identical nodes, each recorded as a run per node;
    steps: node -> (first night of the new level, factor)."""
    # Noise that alternates night by night (no run of slow nights for the detector's
    # autocorrelation guard to read as a wandering machine), a phase of its own per node.
    wiggle = (1.01, 0.99, 1.004, 0.996, 1.007, 0.993)
    for night in range(nights):
        finished = 1_800_000_000.0 + night * DAY
        runs = []
        for k, node in enumerate(NODES):
            at, factor = steps.get(node, (nights, 1.0))
            level = 10_000.0 * (factor if night >= at else 1.0)
            median = level * wiggle[(night + seed * k) % len(wiggle)]
            testbed = [node_identity(identity_of(FINGERPRINT, None), node)]
            run = {"campaign": campaign, "date": f"2027-01-{night + 1:02d}T02:00:00+00:00",
                   "finished": finished, "commit": f"{night:02d}" * 20, "dirty": False,
                   "spec_hash": "spec1", "testbed_key": canonical_hash(testbed),
                   "testbed": testbed, "results_dir": "/r", "node": node}
            values = [{"group": "g", "metric": METRIC, "median": median,
                       "ci_low": median * 0.99, "ci_high": median * 1.01, "n": 3}]
            verdicts = [{"group": "g", "verdict": "sustainable", "repetitions": 3,
                         "agree": {"sustainable": 3}}]
            runs.append((run, values, verdicts, []))
        h.add_runs(runs)


def regressions(h: History) -> list[Change]:
    return [c for c in find_changes(h).changes if c.direction == "regression"]


# ------------------------------------------------------------------------ keys and records


def test_identical_nodes_have_keys_of_their_own_and_a_single_node_keeps_its_key():
    one = identity_of(FINGERPRINT, None)
    keys = {canonical_hash([node_identity(one, n)]) for n in NODES}
    assert len(keys) == 3  # the same machine model three times: three series
    # A single-node run's key is the identity without a name, as before per-node runs.
    assert canonical_hash([one]) not in keys
    assert "node" not in one


def per_node_campaign(dest: Path, night: int, nodes: tuple[str, ...] = NODES) -> Path:
    """The report fixture as if every point had run on each node (matrix testbed.node, the
    node as point.json's host, fingerprint.json's node)."""
    camp = make_night(dest, night)
    for pt in [p for p in camp.iterdir() if (p / "point.json").is_file()]:
        for node in nodes:
            copy = camp / f"{pt.name}-{node}"
            shutil.copytree(pt, copy)
            rec = json.loads((copy / "point.json").read_text())
            rec["host"] = node
            rec["params"] = {**rec["params"], "testbed.node": node}
            (copy / "point.json").write_text(json.dumps(rec))
            fp_path = copy / "fingerprint.json"
            if fp_path.is_file():
                fp = json.loads(fp_path.read_text())
                fp["node"] = {"name": node}
                fp_path.write_text(json.dumps(fp))
        shutil.rmtree(pt)
    return camp


def test_a_campaign_on_three_nodes_is_three_runs_of_the_same_groups(tmp_path):
    camp = per_node_campaign(tmp_path / "a", 1)
    got = campaign_runs(camp)
    assert [g.run["node"] for g in got] == list(NODES)
    assert len({g.run["testbed_key"] for g in got}) == 3
    assert all(g.run["testbed"][0]["node"] == g.run["node"] for g in got)
    # The node dimension is in the run, not in the groups: each node has the same groups.
    for g in got:
        assert {v["group"] for v in g.values} == set(GROUPS)
        assert all("node" not in v["group"] for v in g.values)
    # One campaign run: the nodes' runs share its end time.
    assert len({g.run["finished"] for g in got}) == 1


def test_recording_per_node_runs_keeps_the_old_runs_and_adds_nothing_twice(tmp_path):
    hist = tmp_path / "h.sqlite"
    h = History(hist)
    old_id, added = record(h, make_night(tmp_path / "single", 1))
    assert added and h.version == 1  # single-node runs leave a history at schema 1
    old_key = h.runs()[0].testbed_key
    camp = per_node_campaign(tmp_path / "nodes", 2)
    got = record_runs(h, camp)
    assert [a for _, a in got] == [True, True, True]
    assert h.version == 2
    runs = h.runs()
    assert (runs[0].run_id, runs[0].node, runs[0].testbed_key) == (old_id, None, old_key)
    assert [r.node for r in runs[1:]] == list(NODES)
    assert record_runs(h, camp) == [(i, False) for i, _ in got]
    assert len(h.runs()) == 4
    h.close()
    # The file says schema 2 (an lsmbench from before per-node runs refuses it rather than
    # read the nodes' runs as nights of one series).
    with sqlite3.connect(hist) as db:
        assert db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("2",)
    # The old run's values and verdicts survived the rebuild of the runs table.
    again = History(hist, create=False)
    assert any(v.run_id == old_id for v in again.values())
    assert any(v.run_id == old_id for v in again.verdicts())


def test_a_node_whose_points_all_failed_has_no_run_and_the_others_keep_their_keys(tmp_path):
    keys = {g.run["node"]: g.run["testbed_key"]
            for g in campaign_runs(per_node_campaign(tmp_path / "a", 1))}
    camp = per_node_campaign(tmp_path / "b", 2)
    for pt in camp.glob("*-node2"):
        rec = json.loads((pt / "point.json").read_text())
        rec["state"] = "failed"
        (pt / "point.json").write_text(json.dumps(rec))
    got = campaign_runs(camp)
    assert {g.run["node"]: g.run["testbed_key"] for g in got} == {
        "node0": keys["node0"], "node1": keys["node1"]}


def test_a_failed_record_of_several_nodes_writes_none_of_them(tmp_path):
    hist = tmp_path / "h.sqlite"
    h = History(hist)
    camp = per_node_campaign(tmp_path / "nodes", 1)
    # node2's run cannot be inserted (a run of this campaign, end time and node exists):
    # the transaction leaves node0's and node1's out too.
    runs = campaign_runs(camp)
    h.add_runs([(runs[2].run, runs[2].values, runs[2].verdicts, [])])
    with pytest.raises(sqlite3.IntegrityError):
        h.add_runs([(g.run, g.values, g.verdicts, []) for g in runs])
    assert [r.node for r in h.runs()] == ["node2"]


# ------------------------------------------------------------------------ changes per node


def test_a_regression_every_node_saw_is_reported_once_with_the_nodes(tmp_path):
    h = History(tmp_path / "h.sqlite")
    add_nights(h, {n: (STEP_AT, 0.85) for n in NODES})
    analysis = find_changes(h)
    assert sorted(s.node for s in analysis.series) == list(NODES)  # a series per node
    own = [c for c in analysis.series_changes if c.direction == "regression"]
    assert sorted(c.node for c in own) == list(NODES)
    found = regressions(h)
    assert len(found) == 1
    c = found[0]
    assert c.nodes == list(NODES) and c.status == "open" and c.node is None
    assert sorted(m.node for m in c.per_node) == list(NODES)
    assert {m.id for m in c.per_node}.isdisjoint({c.id})
    assert c.commit_after == f"{STEP_AT:02d}" * 20
    assert c.change == pytest.approx(-0.15, abs=0.03)


def test_a_regression_on_one_node_is_reported_with_that_node_only(tmp_path):
    h = History(tmp_path / "h.sqlite")
    add_nights(h, {"node1": (STEP_AT, 0.85)})
    found = regressions(h)
    assert [(c.nodes, c.status) for c in found] == [(["node1"], "open")]
    assert found[0].id == found[0].per_node[0].id  # a single node's change keeps its own id


def test_regressions_nights_apart_on_two_nodes_are_two_changes(tmp_path):
    h = History(tmp_path / "h.sqlite")
    add_nights(h, {"node0": (5, 0.85), "node2": (11, 0.85)}, nights=17)
    found = sorted(regressions(h), key=lambda c: c.nodes)
    assert [c.nodes for c in found] == [["node0"], ["node2"]]


def test_acking_a_change_of_several_nodes_acks_each_nodes_own(tmp_path, capsys):
    hist = tmp_path / "h.sqlite"
    h = History(hist)
    add_nights(h, {n: (STEP_AT, 0.85) for n in NODES})
    c = regressions(h)[0]
    h.close()
    code = main(["track", "report", "--history", str(hist), "--out", str(tmp_path / "r")])
    assert code == 4
    out = capsys.readouterr().out
    assert f"REGRESSION {c.id}" in out and "on 3 node(s): node0, node1, node2" in out
    assert main(["track", "ack", c.id, "--history", str(hist), "--why", "new disk model"]) == 0
    h = History(hist, create=False)
    assert {a.change_id for a in h.acks()} == {m.id for m in c.per_node}
    after = regressions(h)
    assert [(x.id, x.status, x.acked, x.nodes) for x in after] == [
        (c.id, "acked", True, list(NODES))]
    h.close()
    assert main(["track", "report", "--history", str(hist), "--out", str(tmp_path / "r")]) == 0


def test_the_report_shows_the_nodes_side_by_side_and_lists_the_nodes(tmp_path):
    hist = tmp_path / "h.sqlite"
    h = History(hist)
    add_nights(h, {n: (STEP_AT, 0.85) for n in ("node0", "node2")})
    h.close()
    out = tmp_path / "r"
    assert main(["track", "report", "--history", str(hist), "--out", str(out), "-q"]) == 4
    data = json.loads((out / "regressions.json").read_text())
    assert [c["nodes"] for c in data["open"]] == [["node0", "node2"]]
    assert [m["node"] for m in data["open"][0]["per_node"]] == ["node0", "node2"]
    html = (out / "history.html").read_text()
    # One panel for the metric, the three nodes' lines in it.
    assert html.count('data-nodes="node0,node1,node2"') == 1
    assert html.count(f'data-metric="{METRIC}"') == 1
    assert "<td class=\"nodes\">node0, node2</td>" in html
    with open(out / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == NIGHTS * 3
    assert {r["node"] for r in rows} == set(NODES)


# ------------------------------------------------------------------------ the merge rule


def change(node: str | None, run_id: int, *, metric: str = METRIC, direction: str = "regression",
           status: str = "open", acked: bool = False) -> Change:
    return Change(id=f"c-{node}-{run_id}-{metric}-{direction}", campaign="c", group="g",
                  metric=metric, direction=direction, change=-0.1, before=1.0, after=0.9,
                  index=3, run_id=run_id, commit_before="a", commit_after="b",
                  date=f"d{run_id}", p_value=0.001, testbed_key=f"k-{node}", spec_hash="s",
                  status=status, acked=acked, node=node, nodes=[node] if node else [])


def test_merge_rule():
    nights = {i: i for i in range(100)}
    # Within ACK_SLACK (2) nights of the first: one change; one night later still, another.
    got = merge_node_changes([change("a", 10), change("b", 12), change("c", 13)], nights)
    assert sorted(c.nodes for c in got) == [["a", "b"], ["c"]]
    # A node is in a change once: its second change is another.
    got = merge_node_changes([change("a", 10), change("a", 11)], nights)
    assert [c.nodes for c in got] == [["a"], ["a"]]
    # Another metric or direction is another change.
    got = merge_node_changes([change("a", 10), change("b", 10, metric="write_p99_ms"),
                              change("c", 10, direction="improvement", status="improvement")],
                             nights)
    assert len(got) == 3
    # Open while any node's is; acked when every node's is; its figures the first node's.
    got = merge_node_changes([change("b", 11, status="acked", acked=True), change("a", 10)],
                             nights)
    assert [(c.nodes, c.status, c.acked, c.run_id) for c in got] == [
        (["a", "b"], "open", False, 10)]
    got = merge_node_changes([change("a", 10, status="acked", acked=True),
                              change("b", 10, status="recovered")], nights)
    assert [(c.status, c.acked) for c in got] == [("acked", False)]
    # Nodes' runs of one campaign run share a night: their run ids do not matter.
    got = merge_node_changes([change("a", 50), change("b", 90)], {50: 7, 90: 7})
    assert [c.nodes for c in got] == [["a", "b"]]
    # A single-node series' change is reported as it is.
    single = change(None, 10)
    assert merge_node_changes([single], nights) == [single]


# ------------------------------------------------------------------------ the night's input


def test_a_night_on_a_testbed_that_does_not_exist_exits_2_naming_it(tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.setenv("LSMBENCH_TESTBEDS", str(tmp_path / "testbeds"))
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: nightly-rack\nengine: {name: \"null\"}\ntestbed: rack\n")
    results = tmp_path / "results"
    code = main(["track", "nightly", str(spec), "--testbed", "rack", "--results", str(results),
                 "--no-fetch"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--testbed rack: no testbed 'rack'" in err and "lsmbench testbed up rack" in err
    assert not results.exists() and not (tmp_path / "testbeds").exists()
