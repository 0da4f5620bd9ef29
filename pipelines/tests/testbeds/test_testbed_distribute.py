"""Distribution of points over nodes (no network): disk kinds, one experiment per disk,
retries on another node, lost nodes, points no node can take."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field

import pytest
from lsmbench.testbeds.distribute import Attempt, Job, distribute


@dataclass
class FakeNode:
    name: str
    disk: str = "ssd"
    facts: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.facts = {"disk": self.disk}


class Recorder:
    def __init__(self, fail: dict | None = None, delay: float = 0.01) -> None:
        self.lock = threading.Lock()
        self.running: set[str] = set()
        self.max_parallel = 0
        self.runs: list[tuple[str, str]] = []
        self.fail = fail or {}  # (point, node) -> "crash" | "gone"
        self.delay = delay
        self.settled: dict[str, tuple[str, str | None]] = {}

    def runner(self, job: Job, node: FakeNode, last: bool) -> Attempt:
        with self.lock:
            assert node.name not in self.running, "two experiments on one disk"
            self.running.add(node.name)
            self.max_parallel = max(self.max_parallel, len(self.running))
            self.runs.append((job.point, node.name))
        time.sleep(self.delay)
        with self.lock:
            self.running.discard(node.name)
        kind = self.fail.get((job.point, node.name))
        a = Attempt(node=node.name)
        if kind:
            a.error, a.node_failed, a.unreachable = f"{kind} on {node.name}", True, kind == "gone"
        if not (a.node_failed and not last):
            with self.lock:
                assert job.point not in self.settled, "a point settled twice"
                self.settled[job.point] = (node.name, a.error)
        return a

    def no_node(self, job: Job, reason: str) -> None:
        with self.lock:
            self.settled[job.point] = ("-", reason)


def test_points_go_to_nodes_of_their_disk_kind_in_parallel():
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rnd = random.Random(seed)
    nodes = [FakeNode("s1"), FakeNode("s2"), FakeNode("h1", "hdd")]
    jobs = [Job(point=f"p{i}", disk=rnd.choice(["ssd", "hdd", "any"])) for i in range(30)]
    rec = Recorder()
    distribute(jobs, nodes, 1, rec.runner, rec.no_node)
    assert set(rec.settled) == {j.point for j in jobs}
    kinds = {n.name: n.disk for n in nodes}
    for j in jobs:
        node, err = rec.settled[j.point]
        assert err is None
        assert j.disk == "any" or kinds[node] == j.disk
    assert rec.max_parallel >= 2  # nodes work at the same time
    assert len(rec.runs) == len(jobs)


def test_a_point_whose_node_dies_runs_on_another_and_the_node_gets_no_more():
    nodes = [FakeNode("a"), FakeNode("b")]
    jobs = [Job(point=f"p{i}", disk="ssd") for i in range(6)]
    rec = Recorder(fail={("p0", "a"): "gone", ("p1", "a"): "gone"})
    distribute(jobs, nodes, 1, rec.runner, rec.no_node)
    assert set(rec.settled) == {j.point for j in jobs}
    a_runs = [p for p, n in rec.runs if n == "a"]
    assert len(a_runs) == 1  # a died on its first point and got nothing after
    lost = a_runs[0]
    assert rec.settled[lost] == ("b", None)
    job = next(j for j in jobs if j.point == lost)
    assert [x.node for x in job.attempts] == ["a", "b"] and job.attempts[0].unreachable


def test_retries_are_bounded_and_the_last_failure_is_recorded():
    nodes = [FakeNode("a"), FakeNode("b"), FakeNode("c")]
    jobs = [Job(point="p0", disk="any")]
    rec = Recorder(fail={("p0", n): "crash" for n in "abc"})
    distribute(jobs, nodes, 2, rec.runner, rec.no_node)
    tried = [n for _, n in rec.runs]
    assert len(tried) == 3 and len(set(tried)) == 3  # first try + two retries, 3 nodes
    node, err = rec.settled["p0"]
    assert err == f"crash on {node}"


def test_a_crash_retry_prefers_a_node_that_has_not_failed_the_point():
    nodes = [FakeNode("a"), FakeNode("b")]
    jobs = [Job(point="p0", disk="ssd")]
    rec = Recorder(fail={("p0", "a"): "crash", ("p0", "b"): "crash"})
    distribute(jobs, nodes, 1, rec.runner, rec.no_node)
    assert sorted(n for _, n in rec.runs) == ["a", "b"]


def test_points_no_node_can_take_are_recorded_not_lost():
    nodes = [FakeNode("s1")]
    jobs = [Job(point="p0", disk="hdd"), Job(point="p1", disk="ssd")]
    rec = Recorder()
    distribute(jobs, nodes, 1, rec.runner, rec.no_node)
    assert rec.settled["p1"] == ("s1", None)
    assert rec.settled["p0"][0] == "-" and "no usable node with a hdd disk" in \
        rec.settled["p0"][1]


def test_all_nodes_lost_settles_the_rest():
    nodes = [FakeNode("a"), FakeNode("b")]
    jobs = [Job(point=f"p{i}", disk="ssd") for i in range(5)]
    fail = {(f"p{i}", n): "gone" for i in range(5) for n in "ab"}
    rec = Recorder(fail=fail)
    distribute(jobs, nodes, 3, rec.runner, rec.no_node)
    assert set(rec.settled) == {j.point for j in jobs}
    assert len(rec.runs) == 2  # each node died on its first point
    assert sum(1 for n, _ in rec.settled.values() if n == "-") >= 3


def test_an_interrupt_in_a_runner_propagates():
    nodes = [FakeNode("a")]
    jobs = [Job(point="p0", disk="ssd")]

    def boom(job, node, last):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        distribute(jobs, nodes, 1, boom, lambda j, r: None)


def test_pinned_points_run_on_their_node_only_and_are_not_retried_elsewhere():
    """testbed.node: every point on its node (a night's matrix over the nodes); a pinned point
    whose node is lost fails rather than run on another machine; a pin to a node the testbed
    does not have names it."""
    nodes = [FakeNode("n0"), FakeNode("n1"), FakeNode("n2")]
    jobs = [Job(point=f"g{g}-{n.name}-r{r}", disk="any", node=n.name)
            for g in range(2) for n in nodes for r in range(2)]
    jobs.append(Job(point="elsewhere", disk="any", node="n9"))
    rec = Recorder(fail={("g0-n1-r0", "n1"): "gone"})
    distribute(jobs, nodes, 1, rec.runner, rec.no_node)
    for point, node in rec.runs:
        assert point.split("-")[1] == node, (point, node)
    # Lost with n1: not retried on n0 or n2 (it ran once), nor are n1's other points.
    assert [p for p, _ in rec.runs].count("g0-n1-r0") == 1
    for point in ("g0-n1-r0", "g0-n1-r1", "g1-n1-r0", "g1-n1-r1"):
        where, why = rec.settled[point]
        assert where == "-" and "node n1 (testbed.node) is not usable" in why
    assert rec.settled["elsewhere"][0] == "-"
    assert "node n9 (testbed.node) is not a node of the testbed" in rec.settled["elsewhere"][1]
    assert all(rec.settled[f"g{g}-{n}-r{r}"][0] == n for g in range(2) for n in ("n0", "n2")
               for r in range(2))
