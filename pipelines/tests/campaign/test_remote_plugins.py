"""Which plugins a remote campaign installs on its nodes, and how (campaign/plugins.py): the
ones the deploy built beside the driver in place, any other copied from this machine; a
node's refusal stops the campaign. The real copy and check over ssh: test_testbed_ssh.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from lsmbench.campaign.plugins import campaign_plugins, install_plugins
from lsmbench.plan import build_plan
from lsmbench.spec import load_spec
from lsmbench.testbeds import TestbedError as NodeRefused

SPEC = {
    "name": "remote-plugins",
    "engines": {"rocks": {"name": "rocksdb"}, "mem": {"name": "memkv"},
                "own": {"name": "builtin"}},
    "matrix": {"engine": ["rocks", "mem", "own"]},
    "workload": {"file": "update-uniform-1kb", "set": {"record_count": 100}},
}


class FakeTestbed:
    kind = "ssh"

    def __init__(self, ansible_vars: dict[str, Any], refuse: str | None = None) -> None:
        self.spec = SimpleNamespace(ansible_vars=ansible_vars)
        self.calls: list[tuple[str, str, Path | None]] = []
        self.refuse = refuse

    def install_plugin(self, node: Any, name: str, local: Path | None) -> str:
        self.calls.append((node.name, name, local))
        if name == self.refuse:
            raise NodeRefused(f"node {node.name}: its lsm-driver cannot load the engine "
                               f"plugin '{name}'")
        return f"/root-of-{node.name}/{name}.so" if local else f"/deployed/{name}.so"


def plan_of(tmp_path: Path) -> Any:
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(SPEC))
    return build_plan(load_spec(p))


def test_deployed_plugins_are_used_in_place_and_others_copied(tmp_path, driver_path):
    plan = plan_of(tmp_path)
    assert campaign_plugins(plan) == {"rocksdb": None, "memkv": None}  # builtin compiled in
    nodes = [SimpleNamespace(name=n, facts={}) for n in ("a", "b")]
    tb = FakeTestbed({})
    install_plugins(plan, tb, nodes)
    copied = {(node, name) for node, name, local in tb.calls if local is not None}
    in_place = {(node, name) for node, name, local in tb.calls if local is None}
    assert in_place == {("a", "rocksdb"), ("b", "rocksdb")}
    assert copied == {("a", "memkv"), ("b", "memkv")}
    memkv = next(local for _, name, local in tb.calls if name == "memkv")
    assert memkv is not None and memkv.name == "lsmbench-memkv.so" and memkv.is_file()
    assert nodes[1].facts["plugins"] == {"rocksdb": "/deployed/rocksdb.so",
                                         "memkv": "/root-of-b/memkv.so"}
    # A deploy told to build no plugins: rocksdb is copied too.
    tb = FakeTestbed({"lsm_engine_plugins": []})
    install_plugins(plan, tb, nodes)
    assert all(local is not None for _, _, local in tb.calls)


def test_a_node_that_cannot_load_a_plugin_stops_the_install(tmp_path, driver_path):
    nodes = [SimpleNamespace(name="a", facts={})]
    with pytest.raises(NodeRefused, match="node a: its lsm-driver cannot load the engine "
                                           "plugin 'memkv'"):
        install_plugins(plan_of(tmp_path), FakeTestbed({}, refuse="memkv"), nodes)
