"""The Ansible side: every playbook passes ansible-playbook --syntax-check and ansible-lint
(production profile); every role has the standard layout; the generated inventory is valid."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from repo_paths import REPO

ANSIBLE = REPO / "ansible"
PLAYBOOKS = sorted((ANSIBLE / "playbooks").glob("*.yml"))
ROLES = ["common", "lsm_engine", "fio_calibrate", "cgroup_throttle", "run_phase", "influxdb",
         "grafana", "nightly"]


def tool(name: str) -> str | None:
    here = Path(sys.executable).with_name(name)
    return str(here) if here.is_file() else shutil.which(name)


def env() -> dict[str, str]:
    return {**os.environ, "ANSIBLE_CONFIG": str(ANSIBLE / "ansible.cfg"),
            "ANSIBLE_NOCOLOR": "1"}


def test_there_are_playbooks():
    assert {p.name for p in PLAYBOOKS} >= {"deploy.yml", "calibrate.yml", "run_phase.yml",
                                           "monitoring.yml", "site.yml", "nightly.yml"}


@pytest.mark.parametrize("playbook", PLAYBOOKS, ids=lambda p: p.name)
def test_playbook_syntax(playbook, tmp_path):
    exe = tool("ansible-playbook")
    if exe is None:
        pytest.skip("ansible-playbook is not installed (pip install -e .[dev])")
    inv = tmp_path / "inventory.yml"
    inv.write_text(yaml.safe_dump({"all": {"children": {"lsmbench_nodes": {"hosts": {"n1": {}}},
                                                         "monitoring": {"hosts": {"m1": {}}},
                                                         "nightly": {"hosts": {"c1": {}}}}}}))
    r = subprocess.run([exe, "--syntax-check", "-i", str(inv), str(playbook)],
                       capture_output=True, text=True, env=env(), cwd=ANSIBLE, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ansible_lint_production_profile():
    exe = tool("ansible-lint")
    if exe is None:
        pytest.skip("ansible-lint is not installed (pip install -e .[dev])")
    r = subprocess.run([exe, "--offline", "-q", *[str(p) for p in PLAYBOOKS]],
                       capture_output=True, text=True, env=env(), cwd=ANSIBLE, check=False)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]


@pytest.mark.parametrize("role", ROLES)
def test_role_layout(role):
    d = ANSIBLE / "roles" / role
    for f in ("defaults/main.yml", "meta/main.yml", "meta/argument_specs.yml",
              "tasks/main.yml", "tasks/preflight.yml", "tasks/install.yml",
              "tasks/configure.yml", "handlers/main.yml"):
        assert (d / f).is_file(), f"{role}: {f} missing"
    defaults = yaml.safe_load((d / "defaults/main.yml").read_text()) or {}
    assert all(k.startswith(f"{role}_") for k in defaults), f"{role}: unprefixed defaults"
    spec = yaml.safe_load((d / "meta/argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    # Every default is a documented, typed option.
    assert set(defaults) <= set(options), set(defaults) - set(options)
    assert all("type" in o and "description" in o for o in options.values())
    for tasks in (d / "tasks").glob("*.yml"):
        for task in _tasks(yaml.safe_load(tasks.read_text()) or []):
            modules = [k for k in task if "." in k and k.split(".")[0] == "ansible"]
            assert modules or "block" in task, f"{tasks.name}: {task.get('name')}: not FQCN"


def _tasks(items):
    for t in items:
        yield t
        yield from _tasks(t.get("block", []))


def test_generated_inventory_checks_host_keys(tmp_path):
    from lsmbench.testbeds.inventory import ansible_inventory, entries

    hosts = entries([{"address": "10.0.0.5", "name": "a", "disk": "hdd", "user": "bench",
                      "key_file": "~/.ssh/id_ed25519"}, {"address": "10.0.0.6"}],
                    "hosts", "/data")
    inv = ansible_inventory(hosts, known_hosts=tmp_path / "known_hosts", python="/usr/bin/python3",
                            remote_root="/opt/lsmbench")
    a = inv["all"]["hosts"]["a"]
    assert a["ansible_host"] == "10.0.0.5" and a["ansible_user"] == "bench"
    assert "StrictHostKeyChecking=accept-new" in a["ansible_ssh_common_args"]
    assert f"UserKnownHostsFile={tmp_path / 'known_hosts'}" in a["ansible_ssh_common_args"]
    assert a["ansible_ssh_private_key_file"].endswith("/.ssh/id_ed25519")
    assert "~" not in a["ansible_ssh_private_key_file"]
    assert set(inv["all"]["children"]["hdd"]["hosts"]) == {"a"}
    assert set(inv["all"]["children"]["ssd"]["hosts"]) == {"10.0.0.6"}
    assert inv["all"]["hosts"]["10.0.0.6"]["lsmbench_data_dir"] == "/data"
