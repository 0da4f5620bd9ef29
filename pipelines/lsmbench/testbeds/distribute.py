"""Spreading a campaign's points over a testbed's nodes.

* A point runs only on a node whose disk kind it asks for (``any`` matches every node), and
  only on its node when it is pinned to one (``testbed.node``): a pinned point is retried on
  that node only.
* One experiment per disk at a time: each node entry (one data disk) has one worker thread,
  so two points never share a disk; the nodes work in parallel.
* A point whose node fails (``node_failed``: unreachable, driver killed, its disk full) goes
  back to the queue for another node, up to ``retries`` times; an unreachable node, or one
  whose disk ran out (``retire``), gets no more points.
  When no usable node is left for a point, it is recorded as failed (``no_node``).

The runner callback does the work and says how it went; this module only decides where and
when, so it is tested without any network.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Attempt:
    node: str
    error: str | None = None
    stage: str | None = None
    node_failed: bool = False  # the node, not the point, is to blame: retry elsewhere
    unreachable: bool = False  # and the node is gone: no more points for it
    retire: bool = False  # the node is there but unfit (its disk ran out): no more points

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "error": self.error, "stage": self.stage,
                "node_failed": self.node_failed, "unreachable": self.unreachable,
                "retire": self.retire}


@dataclass
class Job:
    point: Any
    disk: str  # "any", "ssd", "hdd"
    attempts: list[Attempt] = field(default_factory=list)
    node: str | None = None  # the node it is pinned to (testbed.node), None: any


# runner(job, node, last_try) -> Attempt. When last_try is False and the attempt comes back
# with node_failed, the job is retried elsewhere (the runner must not have committed it).
Runner = Callable[[Job, Any, bool], Attempt]
# no_node(job, reason): record a job that cannot run anywhere.
NoNode = Callable[[Job, str], None]


def node_disk(node: Any) -> str:
    return str(node.facts.get("disk", "ssd"))


def fits(job: Job, node: Any) -> bool:
    if job.node is not None and job.node != node.name:
        return False
    return job.disk == "any" or job.disk == node_disk(node)


def distribute(jobs: list[Job], nodes: list[Any], retries: int, runner: Runner,
               no_node: NoNode) -> None:
    """Runs every job once to completion (or failure); returns when all are settled."""
    cond = threading.Condition()
    queue: list[Job] = list(jobs)
    alive = {n.name for n in nodes}
    busy: set[str] = set()
    pending = len(jobs)

    def unplaceable(job: Job) -> str | None:
        if any(n.name in alive and fits(job, n) for n in nodes):
            return None
        if job.node is not None:
            known = {n.name for n in nodes}
            if job.node not in known:
                return (f"node {job.node} (testbed.node) is not a node of the testbed "
                        f"(its nodes: {', '.join(sorted(known)) or 'none'})")
            if job.node not in alive:
                return (f"node {job.node} (testbed.node) is not usable (unreachable, or out "
                        "of disk space); a pinned point runs on no other node")
            return f"node {job.node} (testbed.node) has no {job.disk} disk"
        kinds = sorted({node_disk(n) for n in nodes if n.name in alive})
        return (f"no usable node with a {job.disk} disk (usable: "
                f"{', '.join(kinds) or 'none'})")

    def take(node: Any) -> tuple[Job, bool] | None:
        """The next job for this node (caller holds the lock); None: nothing for it now."""
        for i, job in enumerate(queue):
            if not fits(job, node):
                continue
            tried = {a.node for a in job.attempts}
            others_untried = [n for n in nodes if n.name in alive and n.name not in tried
                              and n.name != node.name and fits(job, n)]
            if node.name in tried and others_untried:
                continue  # leave a retry to a node that has not failed it yet
            queue.pop(i)
            last = len(job.attempts) >= retries
            return job, last
        return None

    def settle_orphans() -> None:
        nonlocal pending
        for job in list(queue):
            reason = unplaceable(job)
            if reason is not None:
                queue.remove(job)
                pending -= 1
                no_node(job, reason)

    def worker(node: Any) -> None:
        nonlocal pending
        while True:
            with cond:
                while True:
                    if pending == 0 or node.name not in alive:
                        cond.notify_all()
                        return
                    got = take(node)
                    if got is not None:
                        break
                    if not any(fits(j, node) for j in queue) and not busy:
                        # Nothing fits this node and nobody can hand work back: done.
                        settle_orphans()
                        if not any(fits(j, node) for j in queue):
                            cond.notify_all()
                            return
                    cond.wait(timeout=1.0)
                job, last = got
                busy.add(node.name)
            try:
                attempt = runner(job, node, last)
            except BaseException:
                with cond:
                    busy.discard(node.name)
                    pending = 0
                    cond.notify_all()
                raise
            with cond:
                busy.discard(node.name)
                job.attempts.append(attempt)
                if attempt.unreachable or attempt.retire:
                    alive.discard(node.name)
                if attempt.node_failed and not last:
                    queue.insert(0, job)
                else:
                    pending -= 1
                settle_orphans()
                cond.notify_all()

    errors: list[BaseException] = []

    def guarded(t_target: Callable[[], None]) -> None:
        try:
            t_target()
        except BaseException as e:  # re-raised in the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(lambda n=n: worker(n),),
                                name=f"node-{n.name}", daemon=True) for n in nodes]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.5)
    except BaseException:
        with cond:
            pending = 0
            cond.notify_all()
        raise
    with cond:
        settle_orphans()
        for job in list(queue):  # every node died with work left
            queue.remove(job)
            no_node(job, "no usable node left (unreachable, or out of disk space)")
    if errors:
        raise errors[0]
