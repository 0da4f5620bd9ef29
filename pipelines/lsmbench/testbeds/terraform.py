"""The terraform testbed: nodes provisioned by a Terraform module and kept for reuse.

Working directory ``testbeds/NAME/terraform/``: a generated root module (``main.tf.json``)
calls ``testbed.module`` with ``testbed.variables`` and passes its ``inventory`` output
through; Terraform's state stays there (local backend). ``up`` runs init + apply (or, with
``reuse`` and an applied state, just reads the outputs); the ``inventory`` output (a list of
{name, address, port, user, key_file, data_dir, device, disk}) becomes the nodes directly --
no third-party inventory plugin -- and the rest is the ssh testbed. ``down`` destroys as
``destroy`` says (never, on-success, always); ``lsmbench testbed down NAME --yes`` any time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..util.paths import project_root
from .base import TestbedError
from .inventory import HostEntry, entries
from .remote import RemoteTestbed


def terraform_bin() -> str:
    found = os.environ.get("LSMBENCH_TERRAFORM") or shutil.which("terraform")
    if not found:
        raise TestbedError("terraform is not installed (https://developer.hashicorp.com/"
                           "terraform/install); the terraform testbed needs it on the controller")
    return found


class TerraformTestbed(RemoteTestbed):
    kind = "terraform"

    def __init__(self, spec: Any, *, campaign: str, log: Any = None, state: Any = None) -> None:
        super().__init__(spec, campaign=campaign, log=log, state=state)
        self._hosts: list[HostEntry] | None = None

    @property
    def workdir(self) -> Path:
        return self.state.terraform_dir

    def module_dir(self) -> Path:
        p = Path(self.spec.module).expanduser()
        if not p.is_absolute():
            p = project_root() / p
        if not (p.is_dir() and any(p.glob("*.tf"))):
            raise TestbedError(f"testbed.module: {p} is not a Terraform module directory")
        return p

    def _tf(self, *args: str, capture: bool = True, check: bool = True) -> str:
        argv = [terraform_bin(), f"-chdir={self.workdir}", *args]
        env = {**os.environ, "TF_IN_AUTOMATION": "1", "TF_INPUT": "0"}
        r = subprocess.run(argv, capture_output=capture, text=True, env=env, check=False)
        if check and r.returncode != 0:
            raise TestbedError(f"terraform {args[0]} failed (exit {r.returncode}): "
                               f"{(r.stderr or r.stdout or '').strip()[-2000:]}")
        return r.stdout or ""

    def _init(self) -> None:
        self._tf("init", "-input=false")
        if self.spec.workspace != "default":
            self._tf("workspace", "select", "-or-create", self.spec.workspace)

    def write_root_module(self) -> None:
        self.state.ensure()
        self.workdir.mkdir(parents=True, exist_ok=True)
        root = {
            "module": {"testbed": {"source": str(self.module_dir()), **self.spec.variables}},
            "output": {"inventory": {"value": "${module.testbed.inventory}"}},
        }
        (self.workdir / "main.tf.json").write_text(json.dumps(root, indent=2) + "\n")

    def applied(self) -> bool:
        st = self.workdir / "terraform.tfstate"
        if self.spec.workspace != "default":
            st = self.workdir / "terraform.tfstate.d" / self.spec.workspace / "terraform.tfstate"
        if not st.is_file():
            return False
        try:
            return bool(json.loads(st.read_text()).get("resources"))
        except ValueError:
            return False

    def provision(self) -> bool:
        """init + apply unless an applied state may be reused; True when apply ran."""
        self.write_root_module()
        if self.spec.reuse and self.applied():
            self._init()
            plan = subprocess.run(
                [terraform_bin(), f"-chdir={self.workdir}", "plan", "-input=false",
                 "-detailed-exitcode", "-lock=false"], capture_output=True, text=True,
                check=False)
            if plan.returncode == 0:
                return False
        self._init()
        self._tf("apply", "-auto-approve", "-input=false")
        self._hosts = None
        return True

    def outputs(self) -> Any:
        if not self.applied():
            raise TestbedError(f"testbed {self.state.name} is not provisioned (no Terraform "
                               f"state in {self.workdir}): run `lsmbench testbed up "
                               f"{self.state.name}`")
        text = self._tf("output", "-json", "inventory")
        return json.loads(text)

    def hosts(self) -> list[HostEntry]:
        if self._hosts is None:
            inv = self.outputs()
            if not isinstance(inv, list):
                raise TestbedError("the module's `inventory` output must be a list of hosts")
            raws = [{k: v for k, v in h.items() if v is not None} for h in inv]
            self._hosts = entries(raws, f"{self.spec.module}: output inventory",
                                  self.spec.data_dir, user=self.spec.ssh_user,
                                  key_file=self.spec.key_file)
        return self._hosts

    def up(self) -> list[Any]:
        if not self.applied():
            self.provision()
        return super().up()

    def destroy(self, dry_run: bool = False) -> str:
        if not (self.workdir / "main.tf.json").is_file():
            return "nothing to destroy"
        self._init()
        if dry_run:
            return self._tf("plan", "-destroy", "-input=false", "-no-color")
        out = self._tf("destroy", "-auto-approve", "-input=false", "-no-color")
        self.state.forget_deployed()
        self._hosts = None
        return out

    def down(self, success: bool) -> None:
        if getattr(self, "only_nodes", None) is not None:
            # A campaign on some of the nodes (testbed.nodes) shares the testbed with others
            # (`lsmbench reproduce --testbed`): it is not this campaign's to destroy.
            self.log.info("testbed %s kept: this campaign ran on some of its nodes only",
                          self.state.name)
            return
        if self.spec.destroy == "always" or (self.spec.destroy == "on-success" and success):
            self.log.info("destroying testbed %s (destroy: %s)", self.state.name,
                          self.spec.destroy)
            self.destroy()
