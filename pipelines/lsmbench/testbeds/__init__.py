"""Testbed backends, chosen by the spec's ``testbed.type`` short name; ``testbed: NAME`` is a
kept testbed whose definition and state are under testbeds/NAME/ (state.py)."""

from __future__ import annotations

import logging
from typing import Any

from .base import DefinitionError, Node, PhaseRun, Testbed, TestbedError, TestbedNotImplemented
from .local import LocalTestbed
from .ssh import SshTestbed
from .state import TestbedState
from .terraform import TerraformTestbed

BACKENDS: dict[str, type[Testbed]] = {
    "local": LocalTestbed,
    "ssh": SshTestbed,
    "terraform": TerraformTestbed,
}


def definition_spec(doc: Any, where: str) -> Any:
    """A testbed definition (a spec's ``testbed`` section) validated like one."""
    from pydantic import TypeAdapter, ValidationError

    from ..spec import Testbed as TestbedModel
    from ..spec import testbed_shorthand

    try:
        spec = TypeAdapter(TestbedModel).validate_python(testbed_shorthand(doc))
    except ValidationError as e:
        lines = [f"{where}: {'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                 for err in e.errors()]
        raise DefinitionError("\n".join(lines)) from None
    if spec.type == "named":
        raise DefinitionError(f"{where}: a testbed definition cannot name another testbed")
    return spec


def open_named(name: str, *, campaign: str = "", log: logging.Logger | None = None,
               definition: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None,
               nodes: list[str] | None = None) -> Testbed:
    """The kept testbed NAME (its definition from testbeds/NAME/testbed.yml unless given);
    with `nodes`, only those of its nodes (``up`` refuses a name the testbed does not have)."""
    state = TestbedState(name)
    doc = definition if definition is not None else state.read_definition()
    spec = definition_spec(doc, str(state.definition_path))
    if overrides:
        spec = spec.model_copy(update=overrides)
    cls = BACKENDS[spec.type]
    if spec.type == "local":
        if nodes is not None:
            raise TestbedError(f"testbed {name} is this machine (type local): it has no "
                               "nodes to choose from (testbed.nodes)")
        return cls(spec, campaign=campaign or name, log=log)
    tb = cls(spec, campaign=campaign or name, log=log, state=state)  # type: ignore[call-arg]
    tb.only_nodes = nodes  # type: ignore[attr-defined]
    return tb


def open_testbed(spec: Any, *, campaign: str, log: logging.Logger | None = None) -> Testbed:
    """The backend for a validated ``testbed`` section."""
    if spec.type == "named":
        return open_named(spec.name, campaign=campaign, log=log,
                          overrides={"disk": spec.disk, "keep_data": spec.keep_data},
                          nodes=spec.nodes)
    try:
        cls = BACKENDS[spec.type]
    except KeyError:
        raise TestbedError(
            f"unknown testbed {spec.type!r} (choose from: {', '.join(BACKENDS)})"
        ) from None
    return cls(spec, campaign=campaign, log=log)


__all__ = [
    "BACKENDS",
    "DefinitionError",
    "LocalTestbed",
    "Node",
    "PhaseRun",
    "SshTestbed",
    "TerraformTestbed",
    "Testbed",
    "TestbedError",
    "TestbedNotImplemented",
    "TestbedState",
    "open_named",
    "open_testbed",
]
