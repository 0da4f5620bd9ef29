"""The ssh testbed: bare-metal nodes reached over SSH (arrives in a later issue).

Design (the spec accepts it today, so campaigns can be written and planned):

* nodes come from ``testbed.hosts`` ({address, user, port, key_file,
  data_dir, device}) or an Ansible ``inventory`` file;
* ``up`` checks each node over SSH (reachable, data_dir writable, cgroup
  I/O controller present) and gathers its facts;
* ``deploy`` runs ``testbed.playbook`` (ansible/) to build the engine and
  lsm-driver on each node under ``remote_root`` and to calibrate its disk;
* ``run_driver`` copies run.json to the node, starts the driver there
  inside the node's cgroup throttle, and copies the outputs back into the
  point's directory in the local store (the source of truth);
* points run one at a time per data disk; several nodes run in parallel.
"""

from __future__ import annotations

from typing import Any

from .base import Node, PhaseRun, Testbed, TestbedNotImplemented

_LATER = (
    "the ssh testbed is designed but not implemented in this version (it arrives with the "
    "multi-node issue); run this campaign with `testbed: local` (e.g. `--set testbed.type=local`)"
)


class SshTestbed(Testbed):
    kind = "ssh"

    def describe(self) -> str:
        hosts = ", ".join(h.address for h in self.spec.hosts) or f"inventory {self.spec.inventory}"
        return f"ssh ({hosts})"

    def up(self) -> list[Node]:
        raise TestbedNotImplemented(_LATER)

    def prepare_data_dir(self, node: Node, key: str) -> str:
        raise TestbedNotImplemented(_LATER)

    def snapshot(self, node: Node, src: str, dst: str) -> None:
        raise TestbedNotImplemented(_LATER)

    def remove_dir(self, node: Node, path: str) -> None:
        raise TestbedNotImplemented(_LATER)

    def run_driver(self, node: Node, run_doc: dict[str, Any], out_dir: Any, **kw: Any) -> PhaseRun:
        raise TestbedNotImplemented(_LATER)

    def fingerprint(self, node: Node, data_dir: str, options_hash: str) -> dict[str, Any]:
        raise TestbedNotImplemented(_LATER)
