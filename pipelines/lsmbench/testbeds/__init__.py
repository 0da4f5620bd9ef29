"""Testbed backends, chosen by the spec's ``testbed.type`` short name."""

from __future__ import annotations

import logging
from typing import Any

from .base import Node, PhaseRun, Testbed, TestbedError, TestbedNotImplemented
from .local import LocalTestbed
from .ssh import SshTestbed
from .terraform import TerraformTestbed

BACKENDS: dict[str, type[Testbed]] = {
    "local": LocalTestbed,
    "ssh": SshTestbed,
    "terraform": TerraformTestbed,
}


def open_testbed(spec: Any, *, campaign: str, log: logging.Logger | None = None) -> Testbed:
    """The backend for a validated ``testbed`` section."""
    try:
        cls = BACKENDS[spec.type]
    except KeyError:
        raise TestbedError(
            f"unknown testbed {spec.type!r} (choose from: {', '.join(BACKENDS)})"
        ) from None
    return cls(spec, campaign=campaign, log=log)


__all__ = [
    "BACKENDS",
    "LocalTestbed",
    "Node",
    "PhaseRun",
    "SshTestbed",
    "TerraformTestbed",
    "Testbed",
    "TestbedError",
    "TestbedNotImplemented",
    "open_testbed",
]
