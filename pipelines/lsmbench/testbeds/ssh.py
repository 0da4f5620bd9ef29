"""The ssh testbed: existing bare-metal nodes reached over SSH (see remote.py for how).

Nodes come from ``testbed.hosts`` (one entry per data disk: address, name, port, user,
key_file by path, data_dir, device, disk ssd/hdd) or a YAML ``inventory`` file with the same
``hosts:`` list. Nothing is provisioned or destroyed: ``down`` leaves the nodes as they are.
"""

from __future__ import annotations

from pathlib import Path

from ..util.paths import project_root
from .inventory import HostEntry, entries, load_inventory_file
from .remote import RemoteTestbed


class SshTestbed(RemoteTestbed):
    kind = "ssh"

    def hosts(self) -> list[HostEntry]:
        if self.spec.hosts:
            return entries(self.spec.hosts, "testbed.hosts", self.spec.data_dir)
        path = Path(self.spec.inventory).expanduser()
        if not path.is_absolute():
            path = project_root() / path
        return load_inventory_file(path, self.spec.data_dir)
