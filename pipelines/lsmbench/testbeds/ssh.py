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

from .base import PlannedTestbed

_LATER = (
    "the ssh testbed is designed but not implemented in this version (it arrives with the "
    "multi-node issue); run this campaign with `testbed: local` (e.g. `--set testbed.type=local`)"
)


class SshTestbed(PlannedTestbed):
    not_yet = _LATER
    kind = "ssh"

    def describe(self) -> str:
        hosts = ", ".join(h.address for h in self.spec.hosts) or f"inventory {self.spec.inventory}"
        return f"ssh ({hosts})"

