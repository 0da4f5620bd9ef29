"""The testbed interface: where points run and how the driver is started there.

A testbed backend is chosen by the spec's ``testbed.type`` short name
(:data:`lsmbench.testbeds.BACKENDS`). The pipeline talks to it only through
this interface, so ``local`` (this machine), ``ssh`` (bare-metal nodes) and
``terraform`` (cloud nodes, kept for reuse) differ only in how they reach a
node:

    up()             provision or check the nodes; returns them (idempotent:
                     a kept testbed is reused, not rebuilt)
    deploy(nodes)    put the engine and lsm-driver on each node
    prepare_data_dir / snapshot / remove_dir
                     fresh data directories on the node's data disk
    run_driver       one phase: run.json -> the node -> outputs in a local
                     directory, inside the node's cgroup throttle
    fingerprint      the node's environment
    calibrate        fio on the node's data disk
    down(success)    release what up() made, as the spec's policy says
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar


class TestbedError(RuntimeError):
    """A testbed cannot do what was asked; the message says how to fix it."""


class DefinitionError(TestbedError):
    """A testbed definition the user gave is not one (bad input: exit 2, not 3)."""


class TestbedNotImplemented(TestbedError):
    """A backend that the spec accepts but this version cannot run yet."""


@dataclass
class Node:
    """One machine that runs points."""

    name: str
    data_root: str  # directory on the data disk under which points get fresh dirs
    address: str | None = None  # None: this machine
    driver: str | None = None  # path of lsm-driver on the node
    device: str = "auto"  # throttled device ("auto": the disk under data_root)
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class PhaseRun:
    """How one driver run went (its measurements are in the output directory)."""

    exit_code: int | None
    wall_s: float
    timed_out: bool = False
    cancelled: bool = False
    io_counters: dict[str, dict[str, int]] | None = None
    throttled: bool = False
    cgroup_backend: str | None = None
    log_tail: str = ""
    pid: int | None = None  # the driver's (where a core dump may be named after it)
    ended_early: bool = False  # a Monitor asked the driver to end the phase


# Called about once a second while a driver runs, with the seconds elapsed.
Tick = Callable[[float], None]
# Called about once a second while a driver runs, with the time-series intervals (parsed
# timeseries.jsonl lines) the driver wrote since the previous call, in order; returning True
# asks the driver to end the phase now, as if its duration had elapsed (SIGUSR1: the driver
# stops the arrivals, drains as asked and exits 0 with its outputs complete). An adaptive
# phase's stopping rule (lsmbench.method.adaptive) is one.
Monitor = Callable[[list[dict[str, Any]]], bool]


class Testbed(abc.ABC):
    kind: ClassVar[str] = ""
    # Points run on several nodes in parallel (testbeds.distribute), each node with its own
    # throttle limits; a local testbed runs them one after the other on this machine.
    distributed: ClassVar[bool] = False

    def __init__(self, spec: Any, *, campaign: str, log: logging.Logger | None = None) -> None:
        self.spec = spec
        self.campaign = campaign
        self.log = log or logging.getLogger(f"lsmbench.testbed.{self.kind}")
        # (host, status, task) while a deploy runs, for testbeds that deploy per host.
        self.on_event: Callable[[str, str, str], None] | None = None

    def describe(self) -> str:
        return self.kind

    @abc.abstractmethod
    def up(self) -> list[Node]: ...

    def deploy(self, nodes: list[Node]) -> None:  # noqa: B027 - optional step
        """Put the driver on the nodes (nothing to do where it is already built)."""

    @abc.abstractmethod
    def prepare_data_dir(self, node: Node, key: str) -> str:
        """A fresh, empty data directory for `key` (a point) on the node's data disk;
        drops the page cache and trims the disk when the spec asks to."""

    @abc.abstractmethod
    def snapshot(self, node: Node, src: str, dst: str) -> None:
        """dst becomes a copy of the data directory src (dst is replaced)."""

    @abc.abstractmethod
    def remove_dir(self, node: Node, path: str) -> None: ...

    @abc.abstractmethod
    def run_driver(
        self,
        node: Node,
        run_doc: dict[str, Any],
        out_dir: Path,
        *,
        limits: Any = None,
        cgroup_name: str = "lsmbench",
        timeout_s: float | None = None,
        tick: Tick | None = None,
        monitor: Monitor | None = None,
        driver: str | None = None,
    ) -> PhaseRun:
        """Runs one phase; run.json, the three outputs and driver.log end up in out_dir.
        ``driver``: another lsm-driver than the node's (pair:'s reference build).
        ``monitor`` sees the intervals as they come and may end the phase early (Monitor)."""

    @abc.abstractmethod
    def fingerprint(self, node: Node, data_dir: str, options_hash: str, *,
                    driver: str | None = None) -> dict[str, Any]:
        """The machine, the disk and the driver a point runs with (``driver``: as in
        run_driver)."""

    def calibrate(self, node: Node, runtime_s: float, size_mb: int = 1024) -> Any:
        raise TestbedNotImplemented(f"calibration on the {self.kind} testbed is not available")

    def down(self, success: bool) -> None:  # noqa: B027 - optional step
        """Release what up() made (a no-op for kept or local testbeds)."""
