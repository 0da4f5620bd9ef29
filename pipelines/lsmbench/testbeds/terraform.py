"""The terraform testbed: cloud nodes provisioned by Terraform and kept for reuse
(arrives in a later issue).

Design (the spec accepts it today, so campaigns can be written and planned):

* ``up`` runs ``terraform init/apply`` on ``testbed.module`` in the named
  ``workspace`` with ``variables``; with ``reuse: true`` an applied workspace
  whose outputs still answer is reused as is (no re-provisioning);
* the module's outputs (node addresses, data disks) become an inventory
  directly -- no hand-written inventory, no hard-coded devices -- and the
  rest is the ssh testbed (deploy with Ansible, run, copy outputs back);
* ``down`` destroys according to ``destroy``: never (default: keep the
  testbed for later campaigns), on-success, or always.
"""

from __future__ import annotations

from typing import Any

from .base import Node, PhaseRun, Testbed, TestbedNotImplemented

_LATER = (
    "the terraform testbed is designed but not implemented in this version (it arrives with the "
    "cloud issue); run this campaign with `testbed: local` (e.g. `--set testbed.type=local`)"
)


class TerraformTestbed(Testbed):
    kind = "terraform"

    def describe(self) -> str:
        return f"terraform ({self.spec.module}, workspace {self.spec.workspace})"

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
