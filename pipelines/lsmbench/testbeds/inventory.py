"""The nodes of a remote testbed: one entry per data disk, from the spec, a YAML inventory file
or Terraform outputs, and the Ansible inventory generated from them.

An entry says how to reach the node (address, port, user, key file *by path*), where its data
directory is, the kind of disk under it (``ssd``/``hdd``) and the device when known. A node
with two data disks is two entries with different names and data directories: the scheduler
runs one experiment per entry at a time, so two experiments never share a disk.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from .base import TestbedError
from .state import private_tmp

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
DISK_KINDS = ("ssd", "hdd")


@dataclass(frozen=True)
class HostEntry:
    name: str
    address: str
    port: int = 22
    user: str | None = None
    key_file: str | None = None  # a path; the key itself never enters a spec or inventory
    data_dir: str = "/var/tmp/lsmbench"
    device: str = "auto"
    disk: str = "ssd"
    remote_root: str | None = None  # None: the testbed's

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _entry(raw: Any, where: str, default_data_dir: str, defaults: dict[str, Any]) -> HostEntry:
    if hasattr(raw, "model_dump"):
        raw = raw.model_dump()
    if not isinstance(raw, dict):
        raise TestbedError(f"{where}: expected a mapping with at least 'address', got {raw!r}")
    allowed = {"name", "address", "port", "user", "key_file", "data_dir", "device", "disk",
               "remote_root"}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise TestbedError(f"{where}: unknown key(s) {', '.join(unknown)} "
                           f"(allowed: {', '.join(sorted(allowed))})")
    if not raw.get("address"):
        raise TestbedError(f"{where}: 'address' is required")
    disk = raw.get("disk") or "ssd"
    if disk not in DISK_KINDS:
        raise TestbedError(f"{where}.disk: unknown disk kind {disk!r} (choose from: ssd, hdd)")
    try:
        port = int(22 if raw.get("port") is None else raw["port"])
    except (TypeError, ValueError):
        raise TestbedError(f"{where}.port: expected a number, got {raw.get('port')!r}") from None
    if not 1 <= port <= 65535:
        raise TestbedError(f"{where}.port: must be in 1..65535, got {port}")
    name = str(raw.get("name") or raw["address"])
    if not _NAME_RE.match(name):
        raise TestbedError(f"{where}.name: bad node name {name!r} (letters, digits, '.', '_', "
                           "'-'; give 'name' when the address is not such a name)")
    return HostEntry(
        name=name,
        address=str(raw["address"]),
        port=port,
        user=raw.get("user") or defaults.get("user"),
        key_file=raw.get("key_file") or defaults.get("key_file"),
        data_dir=str(raw.get("data_dir") or default_data_dir),
        device=str(raw.get("device") or "auto"),
        disk=disk,
        remote_root=raw.get("remote_root") or None,
    )


def entries(raws: Iterable[Any], where: str, default_data_dir: str,
            **defaults: Any) -> list[HostEntry]:
    out: list[HostEntry] = []
    seen: set[str] = set()
    for i, raw in enumerate(raws):
        e = _entry(raw, f"{where}[{i}]", default_data_dir, defaults)
        if e.name in seen:
            raise TestbedError(f"{where}[{i}].name: {e.name!r} is used twice (a node with two "
                               "data disks needs a distinct name per disk)")
        seen.add(e.name)
        same = next((o for o in out if (o.address, o.port, o.data_dir) ==
                     (e.address, e.port, e.data_dir)), None)
        if same is not None:
            raise TestbedError(f"{where}[{i}]: {e.name!r} and {same.name!r} are the same data "
                               f"directory {e.data_dir} on {e.address}: one entry per data disk "
                               "(two experiments must never share a disk)")
        out.append(e)
    if not out:
        raise TestbedError(f"{where}: no nodes")
    return out


def load_inventory_file(path: Path, default_data_dir: str) -> list[HostEntry]:
    """A YAML (or JSON) file: ``hosts: [{address, name, port, user, key_file, data_dir,
    device, disk}, ...]``."""
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as e:
        raise TestbedError(f"inventory {path}: {e.strerror}") from e
    except yaml.YAMLError as e:
        raise TestbedError(f"inventory {path}: not valid YAML: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("hosts"), list):
        raise TestbedError(f"inventory {path}: expected a mapping with a 'hosts' list")
    return entries(doc["hosts"], f"{path}: hosts", default_data_dir)


def ansible_inventory(hosts: list[HostEntry], *, known_hosts: Path, python: str,
                      remote_root: str, become: bool = False) -> dict[str, Any]:
    """The Ansible inventory (YAML structure): group ``lsmbench_nodes`` plus one group per
    disk kind; host keys checked against the testbed's own known_hosts."""
    ssh_args = (f"-o UserKnownHostsFile={known_hosts} -o GlobalKnownHostsFile=/dev/null "
                "-o HashKnownHosts=no -o StrictHostKeyChecking=accept-new")
    all_hosts: dict[str, Any] = {}
    for h in hosts:
        v: dict[str, Any] = {
            "ansible_host": h.address,
            "ansible_port": h.port,
            "ansible_python_interpreter": python,
            "ansible_ssh_common_args": ssh_args,
            "lsmbench_data_dir": h.data_dir,
            "lsmbench_disk": h.disk,
            "lsmbench_device": h.device,
            "lsmbench_remote_root": h.remote_root or remote_root,
        }
        if become:
            v["ansible_become"] = True
        if h.user:
            v["ansible_user"] = h.user
        if h.key_file:
            v["ansible_ssh_private_key_file"] = str(Path(h.key_file).expanduser())
        all_hosts[h.name] = v
    groups: dict[str, Any] = {"lsmbench_nodes": {"hosts": {n: None for n in all_hosts}}}
    for kind in DISK_KINDS:
        names = [h.name for h in hosts if h.disk == kind]
        if names:
            groups[kind] = {"hosts": {n: None for n in names}}
    return {"all": {"hosts": all_hosts, "children": groups}}


def write_yaml(path: Path, doc: Any, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = private_tmp(path)
    tmp.write_text(yaml.safe_dump(json.loads(json.dumps(doc)), sort_keys=False))
    tmp.chmod(mode)
    tmp.replace(path)
