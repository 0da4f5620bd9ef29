"""`lsmbench reproduce --testbed NAME`: the suite's experiments spread over a kept testbed's
nodes, several at once, each experiment on one node.

* Each run or tune experiment is pinned to ONE node (its child `lsmbench run|tune` gets
  ``--set testbed=NAME --set testbed.nodes=[NODE]``): its points, and so its groups'
  intervals, compare like with like; the nodes work in parallel, one experiment each.
  Where and when is testbeds.distribute's: one worker per node, a node that failed an
  experiment (unreachable afterwards) hands it to another node, up to the testbed's
  ``retries``.
* The simulator experiments (sim-validate, sim) need no node: they run on this machine, one
  after another, beside the nodes.
* Before anything runs every node must answer (else exit 3 naming it: nothing is written);
  the testbed is deployed once here (the experiments' runs then find it current), and each
  node's fingerprint gives its testbed key (fingerprint.testbed_key, as the nightly
  history's but without a throttle: each experiment's spec has its own, alike on every
  node). Nodes whose keys differ are allowed -- each experiment runs on one node -- and the
  differing fields are said and recorded (reproduce.json: the testbed's nodes with their
  keys, each experiment's node).
* The estimate: each experiment's time as `lsmbench plan` estimates it (the expected time of
  adaptive phases, the store's earlier phases when there are some), packed onto the nodes
  longest first -- the order the experiments are handed out in -- beside their sum on one
  machine.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fingerprint import differing_fields, testbed_identity, testbed_key
from ..util.exits import EXIT_ENV, EXIT_USAGE
from ..util.paths import project_root
from ..util.units import format_duration
from .pages import ExperimentRun, SuiteRun
from .suite import Experiment

LOCAL_KINDS = ("sim-validate", "sim")  # no node needed: they run on this machine


class SpreadError(Exception):
    """Refused before anything ran; `exit_code` is 2 (bad input) or 3 (the environment)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Nodes:
    """A kept testbed, up and deployed, with each node's testbed key."""

    name: str
    testbed: Any  # testbeds.RemoteTestbed
    nodes: list[Any]  # testbeds.Node, in the definition's order
    identities: dict[str, dict[str, Any]] = field(default_factory=dict)

    def key(self, node: str) -> str:
        return testbed_key([self.identities[node]])

    def differing(self) -> dict[str, dict[str, Any]]:
        """The identity fields on which the nodes differ: field -> node -> value."""
        return differing_fields(self.identities)

    def record(self) -> dict[str, Any]:
        """What reproduce.json keeps of the testbed."""
        return {"name": self.name,
                "nodes": {n.name: {"address": n.facts.get("address"),
                                   "disk": n.facts.get("disk"), "key": self.key(n.name),
                                   "identity": self.identities[n.name]} for n in self.nodes},
                "differing": sorted(self.differing())}


def open_nodes(name: str, warn: Callable[[str], None]) -> Nodes:
    """The kept testbed NAME with every node reachable, deployed and fingerprinted; a
    SpreadError (nothing run, nothing written) otherwise. `warn` is told when the nodes'
    testbed keys differ (allowed: each experiment runs on one node)."""
    from ..testbeds import TestbedError, open_named
    from ..testbeds.sshconn import NodeUnreachable

    try:
        tb = open_named(name, campaign="reproduce")
    except TestbedError as e:
        raise SpreadError(f"--testbed {name}: {e}", EXIT_USAGE) from None
    if not tb.distributed:
        raise SpreadError(f"--testbed {name}: a {tb.kind} testbed is this machine: run without "
                          "--testbed (the experiments then run here one after another)",
                          EXIT_USAGE)
    try:
        every = tb.hosts()
        nodes = tb.up()
    except TestbedError as e:
        raise SpreadError(f"--testbed {name}: {e}", EXIT_ENV) from None
    lost = [h for h in every if h.name not in {n.name for n in nodes}]
    if lost:
        raise SpreadError(
            f"--testbed {name}: {', '.join(f'node {h.name} ({h.address}:{h.port})' for h in lost)}"
            f" {'is' if len(lost) == 1 else 'are'} not reachable over SSH; bring "
            f"{'it' if len(lost) == 1 else 'them'} back (`lsmbench testbed status {name}`) or "
            f"take {'it' if len(lost) == 1 else 'them'} out of {tb.state.definition_path}",
            EXIT_ENV)
    try:
        tb.deploy(nodes)
    except TestbedError as e:
        raise SpreadError(f"--testbed {name}: {e}", EXIT_ENV) from None

    def fingerprint(node: Any) -> dict[str, Any]:
        try:
            return testbed_identity(tb.fingerprint(node, node.data_root, "", driver=node.driver),
                                    None)
        except (NodeUnreachable, TestbedError, OSError, ValueError) as e:
            raise SpreadError(f"--testbed {name}: node {node.name}: its fingerprint: {e}",
                              EXIT_ENV) from None

    with ThreadPoolExecutor(max_workers=min(16, len(nodes))) as pool:
        identities = dict(zip([n.name for n in nodes], pool.map(fingerprint, nodes),
                              strict=True))
    out = Nodes(name, tb, nodes, identities)
    diff = out.differing()
    if diff:
        warn(f"reproduce: the nodes of testbed {name} differ in "
            + "; ".join(f"{f} ({', '.join(f'{n}: {v}' for n, v in vals.items())})"
                        for f, vals in diff.items())
            + ": each experiment runs on one node, which its page names")
    return out


def reachable(nodes: Nodes, node: Any) -> bool:
    """Whether the node still answers over SSH (after an experiment failed there)."""
    from ..testbeds.sshconn import NodeUnreachable

    try:
        nodes.testbed.target(node).wait_reachable(attempts=2)
        return True
    except NodeUnreachable:
        return False
    except Exception:  # it answered, however badly
        return True


# ---------------------------------------------------------------- the estimate


def estimate_s(exp: Experiment, quick: bool, store: Path,
               stored: SuiteRun | None = None) -> float | None:
    """An experiment's time as `lsmbench plan` estimates it: the expected time of a campaign
    with adaptive phases (else its planned time), a study's trials and confirmation runs; a
    simulator experiment's as its last run of the same variant took (None: not known)."""
    if exp.kind in LOCAL_KINDS or exp.spec is None:
        variant = "quick" if quick else "full"
        if stored is not None and stored.variant == variant and exp.name in stored.experiments:
            return stored.experiments[exp.name].seconds
        return None
    from ..plan import build_plan, tune_runs
    from ..spec import SpecError, load_spec
    from ..store import Store

    try:
        loaded = load_spec(project_root() / exp.spec, exp.overrides(quick))
    except (SpecError, OSError):
        return None  # the run itself says what is wrong with it
    history = Store(store)
    plan = build_plan(loaded, history.mean_load_s(exp.name), history.mean_phase_s(exp.name))
    if loaded.spec.tune is not None:
        return tune_runs(plan) * plan.estimate_point_s
    return plan.expected.total_s if plan.expected is not None else plan.estimate_s


def longest_first(exps: list[Experiment], estimates: dict[str, float | None]
                  ) -> list[Experiment]:
    """The order experiments are handed to the nodes: longest estimate first, unknown last."""
    return sorted(exps, key=lambda e: -(estimates.get(e.name) or 0.0))


def pack(estimates: list[float], nodes: int) -> float:
    """The wall time of these times on `nodes` workers, each next one (longest first) to the
    worker free first -- what distribute does with the experiments in that order."""
    free = [0.0] * max(1, nodes)
    for t in sorted(estimates, reverse=True):
        heapq.heappush(free, heapq.heappop(free) + t)
    return max(free)


def describe_estimate(name: str, node_names: list[str], exps: list[Experiment],
                      estimates: dict[str, float | None]) -> list[str]:
    """The plan-style lines printed before a spread run."""
    remote = [e for e in exps if e.kind not in LOCAL_KINDS]
    local = [e for e in exps if e.kind in LOCAL_KINDS]
    known = [estimates[e.name] or 0.0 for e in remote]
    local_s = sum(estimates[e.name] or 0.0 for e in local)
    one = sum(known) + local_s
    wall = max(pack(known, len(node_names)), local_s)
    lines = [f"reproduce: {len(exps)} experiments, ~{format_duration(wall)} estimated on "
             f"testbed {name}'s {len(node_names)} nodes ({', '.join(node_names)}), "
             f"~{format_duration(one)} one after another on one machine"]
    for e in longest_first(remote, estimates):
        t = estimates[e.name]
        lines.append(f"  {e.name}: {'?' if t is None else '~' + format_duration(t)} "
                     f"on one node")
    for e in local:
        t = estimates[e.name]
        shown = "? (no earlier run)" if t is None else "~" + format_duration(t)
        lines.append(f"  {e.name}: {shown} on this machine (simulator)")
    unknown = [e.name for e in exps if estimates[e.name] is None]
    if unknown:
        lines.append(f"  not estimated, counted as 0: {', '.join(unknown)}")
    return lines


# ---------------------------------------------------------------- the run


RunOne = Callable[[Experiment, str | None], ExperimentRun]  # (experiment, node or None)


def run_spread(exps: list[Experiment], nodes: Nodes, run_one: RunOne,
               record: Callable[[ExperimentRun], None], say: Callable[[str], None],
               estimates: dict[str, float | None]) -> None:
    """Runs the experiments: the simulator ones here in a thread of their own, the others
    over the nodes (testbeds.distribute), longest first. `record` stores each result (it is
    called from several threads, one call at a time)."""
    from ..testbeds.distribute import Attempt, Job, distribute

    lock = threading.Lock()
    total = len(exps)
    done = [0]

    def store(result: ExperimentRun) -> None:
        with lock:
            done[0] += 1
            record(result)
            where = f" on {result.node}" if result.node else " here"
            say(f"reproduce: [{done[0]}/{total}] {result.name}: exit {result.exit_code} in "
                f"{result.seconds:.0f} s{where}")

    local = [e for e in exps if e.kind in LOCAL_KINDS]
    remote = longest_first([e for e in exps if e.kind not in LOCAL_KINDS], estimates)
    local_error: list[BaseException] = []

    def run_local() -> None:
        try:
            for e in local:
                say(f"reproduce: {e.name} ({e.paper}) here: {e.title}")
                store(run_one(e, None))
        except BaseException as e:  # re-raised by the caller's thread
            local_error.append(e)

    sims = threading.Thread(target=run_local, name="reproduce-local", daemon=True)
    sims.start()
    key = {n.name: nodes.key(n.name) for n in nodes.nodes}

    def runner(job: Job, node: Any, last: bool) -> Attempt:
        exp: Experiment = job.point
        say(f"reproduce: {exp.name} ({exp.paper}) on {node.name}: {exp.title}")
        result = run_one(exp, node.name)
        result.node, result.node_key = node.name, key[node.name]
        result.attempts = [a.to_json() for a in job.attempts]
        if result.exit_code != 0 and not reachable(nodes, node):
            # The node, not the experiment: another node takes it (while retries are left),
            # and this one gets no more.
            error = f"node {node.name} unreachable after the experiment failed there"
            if not last:
                say(f"reproduce: {exp.name}: {error}; again on another node")
                return Attempt(node=node.name, error=error, node_failed=True, unreachable=True)
            result.error = f"{result.error}; {error}"
            store(result)
            return Attempt(node=node.name, error=result.error, node_failed=True,
                           unreachable=True)
        store(result)
        return Attempt(node=node.name, error=result.error)

    def no_node(job: Job, reason: str) -> None:
        exp: Experiment = job.point
        store(ExperimentRun(name=exp.name, command="", exit_code=1, seconds=0.0,
                            error=f"not run: {reason}",
                            attempts=[a.to_json() for a in job.attempts]))

    retries = int(getattr(nodes.testbed.spec, "retries", 1))
    jobs = [Job(point=e, disk="any") for e in remote]
    try:
        distribute(jobs, nodes.nodes, retries, runner, no_node)
    finally:
        while sims.is_alive():
            sims.join(timeout=0.5)
    if local_error:
        raise local_error[0]
