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

from .base import PlannedTestbed

_LATER = (
    "the terraform testbed is designed but not implemented in this version (it arrives with the "
    "cloud issue); run this campaign with `testbed: local` (e.g. `--set testbed.type=local`)"
)


class TerraformTestbed(PlannedTestbed):
    not_yet = _LATER
    kind = "terraform"

    def describe(self) -> str:
        return f"terraform ({self.spec.module}, workspace {self.spec.workspace})"

