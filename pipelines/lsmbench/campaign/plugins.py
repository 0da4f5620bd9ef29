"""The engine plugins a campaign runs, made ready on each node of a remote testbed before its
first point: the ones its deploy built beside the driver (the lsm_engine role's
`lsm_engine_plugins`) are used in place; any other -- a spec's `engine.plugin`, or a plugin
found on this machine's plugin path -- is copied to the node. Either way the node's own
driver loads it once, so that a plugin a node cannot load (another ABI, a library the node
lacks) stops the campaign before anything runs, naming the node and the plugin. Each node's
path for each plugin goes to its facts["plugins"], which the point's run.json names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..engine_options import plugins
from ..plan import Plan
from ..testbeds import Testbed, TestbedError

# What the lsm_engine role builds beside the driver unless ansible_vars says otherwise
# (ansible/roles/lsm_engine/defaults/main.yml).
DEPLOYED_PLUGINS = ("rocksdb", "leveldb")


def campaign_plugins(plan: Plan) -> dict[str, str | None]:
    """The plugin engines the plan's points run: name -> the spec's engine.plugin, or None."""
    out: dict[str, str | None] = {}
    for point in plan.points:
        engine = plan.point(point).spec.engine
        if plugins.is_plugin_name(engine.name):
            out.setdefault(engine.name, engine.plugin)
    return out


def install_plugins(plan: Plan, testbed: Testbed, nodes: list[Any]) -> None:
    """Every plugin of the campaign installed and checked on every node (module docstring);
    TestbedError or ValueError saying which cannot be."""
    wanted = campaign_plugins(plan)
    if not wanted:
        return
    install = getattr(testbed, "install_plugin", None)
    if install is None:
        raise TestbedError(f"a {testbed.kind} testbed cannot run engine plugins")
    deployed = (getattr(testbed.spec, "ansible_vars", None) or {}).get(
        "lsm_engine_plugins", DEPLOYED_PLUGINS)
    for name, explicit in wanted.items():
        local: Path | None = None
        if explicit is not None or name not in deployed:
            local = plugins.plugin_path(name, explicit)
        for node in nodes:
            node.facts.setdefault("plugins", {})[name] = install(node, name, local)
