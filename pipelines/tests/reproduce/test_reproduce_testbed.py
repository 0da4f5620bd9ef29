"""`lsmbench reproduce --testbed NAME`: experiments at once on a kept testbed's nodes, each
pinned to one node, over real sshd nodes in network namespaces (fixtures_netns, as
test_testbed_ssh.py); the estimate's packing, the nodes' keys, the spec's `testbed.nodes`, and
bad input (a testbed that does not exist, a node unreachable at the start).

The suite is a made-up one (monkeypatched, as test_reproduce.py's tests pick experiments):
three experiments of one or two points on the `null` engine with fixed phases of seconds, and,
when lsm-sim is built, one tiny simulator experiment that runs here beside them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fixtures_netns import THREE_NODE_TESTBED, NetnsNodes, restart_sshd, small_data_disk
from lsmbench.cli import main
from lsmbench.fingerprint import differing_fields
from lsmbench.reproduce import cli as reproduce_cli
from lsmbench.reproduce import suite
from lsmbench.reproduce.pages import read_run
from lsmbench.reproduce.spread import pack
from lsmbench.reproduce.suite import Experiment
from repo_paths import REPO

NAME = THREE_NODE_TESTBED
EXPERIMENTS = ("tb-one", "tb-two", "tb-three")


# ---------------------------------------------------------------- without a network


def test_longest_first_packing():
    assert pack([], 3) == 0
    assert pack([10, 10, 10], 3) == 10
    assert pack([10, 10, 10], 1) == 30
    # Longest first: 7 | 5 | 4+3 -> 7 (handed out in the given order: 3+7 | 4 | 5 -> 10).
    assert pack([3, 4, 5, 7], 3) == 7
    # What distribute does with them in that order, not the best packing (5+5 | 4+3+3).
    assert pack([5, 5, 4, 3, 3], 2) == 11


def test_nodes_whose_keys_differ_are_named_field_by_field():
    same = {"kernel": "6.1", "cpu_count": 2, "disk_model": "x"}
    ids = {"node0": same, "node1": {**same, "kernel": "6.12"}, "node2": dict(same)}
    assert differing_fields(ids) == {"kernel": {"node0": "6.1", "node1": "6.12",
                                                "node2": "6.1"}}
    assert differing_fields({"node0": same, "node1": dict(same)}) == {}


def test_a_named_testbed_restricted_to_nodes():
    """`testbed.nodes` names some of a named testbed's nodes; a one-node one may share a
    testing phase across a dimension (one machine measured it), two nodes may not."""
    from lsmbench.spec import SpecError, load_spec

    root = REPO
    spec = root / "pipelines" / "campaigns" / "reproduce" / "lc-schedulers.yaml"
    loaded = load_spec(spec, ["testbed=rack", "testbed.nodes=[n1]"])
    assert loaded.spec.testbed.type == "named" and loaded.spec.testbed.nodes == ["n1"]
    assert loaded.spec.phases.testing.shared_across
    with pytest.raises(SpecError) as e:
        load_spec(spec, ["testbed=rack", "testbed.nodes=[n1,n2]"])
    assert "phases.testing.shared_across" in str(e.value)
    for bad, why in (("[]", "empty list of nodes"), ("[n1,n1]", "node n1 named twice")):
        with pytest.raises(SpecError) as e:
            load_spec(spec, ["testbed=rack", f"testbed.nodes={bad}"])
        assert why in str(e.value)


def _fake_nodes(*names: str):
    from types import SimpleNamespace

    from lsmbench.reproduce import spread

    return spread.Nodes("bed", SimpleNamespace(spec=SimpleNamespace(retries=1)),
                        [SimpleNamespace(name=n, facts={"disk": "ssd"}) for n in names],
                        {n: {"kernel": n} for n in names})


def test_an_experiment_whose_node_went_away_runs_again_on_another(monkeypatch):
    """A failed experiment whose node no longer answers goes to another node (distribute's
    retry); the record names the node it finally ran on and the one that failed it. A
    failure on a node that still answers is the experiment's own: not retried. The nodes
    are handed the experiments longest first."""
    from lsmbench.reproduce import spread
    from lsmbench.reproduce.pages import ExperimentRun

    gone: set[str] = set()
    monkeypatch.setattr(spread, "reachable", lambda _nodes, node: node.name not in gone)
    ran: list[tuple[str, str | None]] = []

    def run_one(exp: Experiment, node: str | None) -> ExperimentRun:
        ran.append((exp.name, node))
        code = 0
        if exp.name == "broken" or (exp.name == "lost" and not gone):
            code = 1
            if exp.name == "lost":
                gone.add(str(node))  # its node drops off with it
        return ExperimentRun(name=exp.name, command="c", exit_code=code, seconds=1.0,
                             error="exit 1" if code else None)

    def spread_over(nodes, exps, estimates):
        kept: dict[str, ExperimentRun] = {}
        spread.run_spread(exps, nodes, run_one, lambda r: kept.__setitem__(r.name, r),
                          lambda _: None, estimates)
        return kept

    def exp(name: str) -> Experiment:
        return Experiment(name=name, paper="luo-carey", title="t", spec="x.yaml", setup="")

    nodes = _fake_nodes("a", "b")
    lost = spread_over(nodes, [exp("lost")], {"lost": 1.0})["lost"]
    first = ran[0][1]
    assert first in gone and lost.exit_code == 0 and lost.node not in (first, None)
    assert lost.node_key == nodes.key(str(lost.node))
    assert [a["node"] for a in lost.attempts] == [first] and lost.attempts[0]["unreachable"]

    ran.clear()
    gone.clear()
    kept = spread_over(_fake_nodes("a"), [exp("broken"), exp("ok")],
                       {"broken": 10.0, "ok": 20.0})
    assert ran == [("ok", "a"), ("broken", "a")]
    assert (kept["broken"].exit_code, kept["broken"].attempts) == (1, [])


# ---------------------------------------------------------------- over sshd nodes


@pytest.fixture(scope="module")
def bed(three_node_testbed):
    """The session's deployed three-node testbed (fixtures_netns.three_node_testbed)."""
    with three_node_testbed.environment() as nodes:
        yield nodes


def tiny_suite(base: Path) -> tuple[Experiment, ...]:
    """Three experiments on the null engine (2 s testing, 1 s running), one point each but
    tb-one's two, which share a testing phase (phases.testing.shared_across); and a simulator
    one when lsm-sim is built."""
    from lsmbench.util.paths import find_sim

    exps = []
    for name in EXPERIMENTS:
        spec = {"name": name,
                "engine": {"name": "null"},
                "matrix": {"repetitions": 1},
                "workload": {"file": "update-uniform-1kb", "set": {"record_count": 2000}},
                "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                           "running": {"duration": "1s"}},
                "throttle": "none"}  # node2's tmpfs has no block device to throttle
        if name == "tb-one":  # two points sharing one testing phase: one node allows it
            spec["matrix"] = {"phases.running.utilization": [0.5, 0.9]}
            spec["phases"]["testing"]["shared_across"] = ["phases.running.utilization"]
        path = base / f"{name}.yaml"
        path.write_text(yaml.safe_dump(spec))
        exps.append(Experiment(name=name, paper="luo-carey", title=f"Experiment {name}",
                               spec=str(path), setup="a test's"))
    if find_sim() is not None:
        exps.append(Experiment(name="tb-sim", paper="luo-carey", kind="sim",
                               title="A simulator experiment", sim_runs=[(4, 200)],
                               setup="a test's"))
    return tuple(exps)


@pytest.fixture()
def reproduce(bed: NetnsNodes, monkeypatch, capsys):
    """`lsmbench reproduce ARGS` in this process, over the made-up suite."""
    exps = tiny_suite(bed.base)
    monkeypatch.setattr(suite, "SUITE", exps)
    monkeypatch.setattr(reproduce_cli, "SUITE", exps)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["reproduce", "--paper", "luo-carey", *args])
        out, err = capsys.readouterr()
        return code, out, err
    return run


@pytest.mark.slow
def test_experiments_run_at_once_each_on_one_node(bed, reproduce, tmp_path):
    results, out = tmp_path / "results", tmp_path / "pages"
    # node2's data directory on a tmpfs, the others' on this machine's disk: its testbed key
    # differs from theirs in the disk's fields, as a node with another disk would.
    with small_data_disk(bed.nodes[2], "256m"):
        code, stdout, stderr = reproduce("--testbed", NAME, "--results", str(results),
                                         "--out", str(out))
    assert code == 0, stderr[-3000:] + stdout[-3000:]
    # The estimate came first: the experiments packed onto the three nodes, and their sum.
    first = stdout.splitlines()[0]
    assert f"estimated on testbed {NAME}'s 3 nodes (node0, node1, node2)" in first, stdout
    assert "one after another on one machine" in first
    for name in EXPERIMENTS:
        assert f"  {name}: ~" in stdout

    from lsmbench.store import Store

    store = Store(results / "reproduce")
    run = read_run(results / "reproduce")
    assert run is not None and run.ended is not None and run.testbed is not None
    assert run.testbed["name"] == NAME
    assert sorted(run.testbed["nodes"]) == ["node0", "node1", "node2"]
    # node2's data directory on a tmpfs: its key differs from node0's and node1's, in the
    # disk's fields; said on stderr, recorded, and allowed (each experiment is on one node).
    keys = {n: v["key"] for n, v in run.testbed["nodes"].items()}
    assert keys["node0"] == keys["node1"] != keys["node2"]
    assert "filesystem" in run.testbed["differing"]
    assert "cpu_model" not in run.testbed["differing"]
    assert f"the nodes of testbed {NAME} differ in" in stderr and "filesystem (" in stderr
    spans = {}
    for name in EXPERIMENTS:
        rec = run.experiments[name]
        assert rec.exit_code == 0, rec.error
        assert f"--set testbed={NAME} --set 'testbed.nodes=[" in rec.command
        points = store.points(name)
        assert len(points) == (2 if name == "tb-one" else 1)
        assert all(p.state == "complete" for p in points)
        # Pinned: every point of the experiment on the node reproduce.json names.
        assert {p.data["host"] for p in points} == {rec.node}
        assert rec.node_key == run.testbed["nodes"][rec.node]["key"]
        spans[name] = (min(p.data["started"] for p in points),
                       max(p.data["finished"] for p in points), rec.node)
    # tb-one's two points on its one node, the second at the first's testing maximum.
    leader, follower = sorted(store.points("tb-one"), key=lambda p: p.data["index"])
    assert "shared_from" not in leader.data["max_throughput"]
    assert follower.data["max_throughput"]["shared_from"] == leader.data["point"]
    assert not (follower.path / "testing").exists()
    # Distinct nodes, and the experiments' stored points overlap in time.
    assert len({s[2] for s in spans.values()}) == len(EXPERIMENTS)
    overlapping = [(a, b) for a in EXPERIMENTS for b in EXPERIMENTS if a < b
                   and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]]
    assert overlapping, spans
    if "tb-sim" in run.experiments:  # the simulator experiment ran here, on no node
        assert run.experiments["tb-sim"].exit_code == 0
        assert run.experiments["tb-sim"].node is None
    # The page: the same claims table, the testbed and each experiment's node.
    page = (out / "luo-carey.md").read_text()
    assert "## Claims" in page and "| # | claim | source |" in page
    assert f"on testbed **{NAME}**" in page
    assert "The nodes differ in " in page and "filesystem" in page
    for name in EXPERIMENTS:
        section = page.split(f"## Experiment {name}", 1)[1].split("\n## ", 1)[0]
        assert f"on node {run.experiments[name].node} (testbed key" in section
        assert "| group | complete |" in section


@pytest.mark.slow
def test_bad_testbeds_exit_before_anything_is_written(bed, reproduce, tmp_path):
    results, out = tmp_path / "results", tmp_path / "pages"
    code, _, err = reproduce("--testbed", "nope", "--results", str(results), "--out", str(out))
    assert code == 2 and "no testbed 'nope'" in err, err
    code, _, err = reproduce("--testbed", NAME, "--pages-only", "--results", str(results))
    assert code == 2 and "--pages-only runs none" in err
    # A node that does not answer at the start: exit 3 naming it; no suite run recorded, no
    # page written.
    victim = bed.nodes[2]
    bed.kill_sshd(victim)
    try:
        code, stdout, err = reproduce("--testbed", NAME, "--results", str(results), "--out",
                                      str(out))
    finally:
        restart_sshd(bed, victim)
    assert code == 3, err
    assert f"node {victim.name} ({victim.address}:22) is not reachable" in err, err
    assert "Traceback" not in err and "estimated" not in stdout
    assert not (results / "reproduce" / "reproduce.json").exists()
    assert not out.exists() or not any(out.iterdir())
    # A node the testbed does not have, as a campaign would name it.
    from lsmbench.testbeds import TestbedError, open_named

    tb = open_named(NAME, campaign="x", nodes=["node7"])
    with pytest.raises(TestbedError) as e:
        tb.up()
    assert "has no node node7 (its nodes: node0, node1, node2)" in str(e.value)
