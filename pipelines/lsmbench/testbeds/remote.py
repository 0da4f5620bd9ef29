"""What the ssh and terraform testbeds share: nodes reached over SSH, deployed by Ansible,
driven through the node helper (node_helper.py, shipped to REMOTE_ROOT/lib/lsmbench_node.py).

* ``up``: the inventory (from the spec, a file or Terraform outputs) becomes nodes; each is
  contacted once (its host key is recorded in the testbed's known_hosts on first contact, a
  changed key is an error); unreachable nodes are dropped with a warning while one is left.
* ``deploy``: ansible-playbook (ansible/playbooks/deploy.yml: roles common, lsm_engine,
  cgroup_throttle) when what was deployed (content hash of engines/ and the helper, recorded
  in deployed.json) differs from what is here; otherwise nothing (a kept testbed is reused).
* ``run_driver``: run.json goes to the node on stdin, the helper runs lsm-driver inside the
  node's cgroup throttle, the outputs come back with tar over ssh into the point's directory.
  With a monitor the helper also streams the time series (``run --follow``: ``interval``
  lines); when the monitor says so, ``lsmbench_node.py end`` over a second connection asks
  the helper to end the phase (SIGUSR1 to the driver).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import shlex
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .. import fingerprint as fp
from ..util.paths import project_root
from .ansible_runner import PlaybookResult, run_playbook
from .base import Monitor, Node, PhaseRun, Testbed, TestbedError, Tick
from .inventory import HostEntry, ansible_inventory, write_yaml
from .node_helper import END_MARKER
from .sshconn import HostKeyChanged, NodeUnreachable, SshTarget
from .state import TestbedState, content_hash, helper_archive, source_archive


@functools.lru_cache(maxsize=4)
def _content(path: Path, mtime_ns: int) -> tuple[bytes, str]:
    """A plugin file's bytes and sha256, read once for all the nodes it goes to (mtime_ns:
    a file rewritten meanwhile is read again)."""
    data = path.read_bytes()
    return data, hashlib.sha256(data).hexdigest()


class RemoteTestbed(Testbed):
    """A testbed of SSH nodes; subclasses say where the inventory comes from."""

    distributed = True

    def __init__(self, spec: Any, *, campaign: str, log: Any = None,
                 state: TestbedState | None = None) -> None:
        super().__init__(spec, campaign=campaign, log=log)
        self.state = state or TestbedState(f"campaign.{campaign}")
        self.remote_root = str(spec.remote_root).rstrip("/")
        if not self.remote_root.startswith("/"):
            raise TestbedError(f"testbed.remote_root must be an absolute path on the nodes, "
                               f"got {spec.remote_root!r}")
        self.targets: dict[str, SshTarget] = {}
        self.entries: dict[str, HostEntry] = {}
        self.last_playbook: PlaybookResult | None = None
        # Only these nodes (a named testbed's `nodes`); None: all of them.
        self.only_nodes: list[str] | None = None

    # -- the inventory ----------------------------------------------------------------------

    def hosts(self) -> list[HostEntry]:
        raise NotImplementedError

    def root_of(self, h: HostEntry) -> str:
        root = (h.remote_root or self.remote_root).rstrip("/")
        if not root.startswith("/"):
            raise TestbedError(f"node {h.name}: remote_root must be an absolute path, got {root!r}")
        return root

    def _helper(self, node: Node | HostEntry, *args: str) -> list[str]:
        root = node.facts["remote_root"] if isinstance(node, Node) else self.root_of(node)
        return [*self.sudo, self.spec.python, f"{root}/lib/lsmbench_node.py", *args]

    @property
    def sudo(self) -> list[str]:
        return ["sudo", "-n"] if getattr(self.spec, "become", False) else []

    def _node(self, h: HostEntry) -> Node:
        root = self.root_of(h)
        return Node(name=h.name, data_root=h.data_dir, address=h.address,
                    driver=f"{root}/bin/lsm-driver", device=h.device,
                    facts={"disk": h.disk, "address": h.address, "port": h.port,
                           "remote_root": root})

    def target(self, node: Node) -> SshTarget:
        return self.targets[node.name]

    def write_inventory(self, hosts: list[HostEntry]) -> Path:
        self.state.ensure()
        inv = ansible_inventory(hosts, known_hosts=self.state.known_hosts,
                                python=self.spec.python, remote_root=self.remote_root,
                                become=bool(getattr(self.spec, "become", False)))
        write_yaml(self.state.inventory_path, inv, mode=0o600)
        return self.state.inventory_path

    def chosen(self, hosts: list[HostEntry]) -> list[HostEntry]:
        """The hosts `only_nodes` names (all without it); a name the testbed lacks is an
        error naming the nodes it has."""
        if self.only_nodes is None:
            return hosts
        names = [h.name for h in hosts]
        unknown = [n for n in self.only_nodes if n not in names]
        if unknown:
            raise TestbedError(f"testbed {self.state.name} has no node {', '.join(unknown)} "
                               f"(its nodes: {', '.join(names)})")
        return [h for h in hosts if h.name in self.only_nodes]

    def up(self) -> list[Node]:
        # The inventory lists every node (what `testbed status` and Ansible read), whichever
        # of them this run uses.
        every = self.hosts()
        hosts = self.chosen(every)
        self.write_inventory(every)
        self.entries = {h.name: h for h in hosts}
        self.targets = {h.name: SshTarget(h, self.state.known_hosts) for h in hosts}

        def contact(h: HostEntry) -> NodeUnreachable | None:
            try:
                self.targets[h.name].wait_reachable()
                return None
            except NodeUnreachable as e:
                return e

        with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
            errors = dict(zip([h.name for h in hosts], pool.map(contact, hosts), strict=True))
        bad = {n: e for n, e in errors.items() if e is not None}
        changed = [str(e) for e in bad.values() if isinstance(e, HostKeyChanged)]
        if changed:  # never run on a node that may not be ours
            raise TestbedError("; ".join(changed))
        if len(bad) == len(hosts):
            raise TestbedError("no node is reachable: " + "; ".join(map(str, bad.values())))
        for e in bad.values():
            self.log.warning("%s; running without it", e)
        return [self._node(h) for h in hosts if h.name not in bad]

    # -- deployment -------------------------------------------------------------------------

    def needs_deploy(self, nodes: list[Node]) -> list[Node]:
        want = content_hash()
        done = self.state.deployed()
        return [n for n in nodes if done.get(n.name, {}).get("content_hash") != want]

    def deploy(self, nodes: list[Node], *, force: bool = False, check: bool = False) -> None:
        todo = nodes if force else self.needs_deploy(nodes)
        if not todo:
            self.log.info("testbed %s: deployed content unchanged; not redeploying",
                          self.state.name)
            return
        chash = content_hash()
        archive = source_archive(self.state.dir / "sources", chash)
        playbook = Path(self.spec.playbook)
        if not playbook.is_absolute():
            playbook = project_root() / playbook
        extra = {
            "lsmbench_content_hash": chash,
            "lsm_engine_source_archive": str(archive),
            "lsm_engine_source_hash": chash,
            "cgroup_throttle_helper_archive": str(helper_archive(self.state.dir / "sources",
                                                                  chash)),
            "cgroup_throttle_helper_hash": chash,
            **self.spec.ansible_vars,
        }
        result = run_playbook(playbook, self.state.inventory_path, extra,
                              limit=[n.name for n in todo], check=check,
                              on_event=self.on_event, log_path=self.state.dir / "ansible.log")
        self.last_playbook = result
        if result.rc != 0:
            raise TestbedError(
                f"ansible-playbook {playbook.name} failed (exit {result.rc}; hosts: "
                f"{', '.join(result.failed_hosts()) or 'see log'}); full log: "
                f"{self.state.dir / 'ansible.log'}\n{result.output_tail[-2000:]}")
        if not check:
            self.state.record_deployed([n.name for n in todo], chash)

    # -- engine plugins ---------------------------------------------------------------------

    def install_plugin(self, node: Node, name: str, local: Path | None) -> str:
        """The engine plugin `name` ready on the node, checked there by the node's own driver
        (`--describe-options`: the ABI version, the struct sizes, the functions, the option
        table, the libraries it needs on that machine); its path on the node. `local`: a
        plugin file of this machine, copied to ROOT/plugins/campaign/SHA256/ (one copy per
        content); None: the one the deploy built beside the driver (ROOT/plugins/)."""
        root = node.facts["remote_root"]
        t = self.target(node)
        if local is None:
            path = f"{root}/plugins/lsmbench-{name}.so"
        else:
            data, digest = _content(local, local.stat().st_mtime_ns)
            folder = f"{root}/plugins/campaign/{digest[:16]}"
            path = f"{folder}/lsmbench-{name}.so"
            d, f, part = (shlex.quote(x) for x in (folder, path, path + ".part"))
            # Copied unless the node holds these very bytes (a copy is renamed into place
            # whole, so a file there is never half of one).
            script = (f"set -e; mkdir -p {d}; sha256sum {f} 2>/dev/null | grep -q '^{digest} ' "
                      f"|| {{ cat > {part} && mv {part} {f}; }}")
            t.run([*self.sudo, "sh", "-c", script], input=data, timeout=300)
        r = t.run([*self.sudo, f"{root}/bin/lsm-driver", "--describe-options", path],
                  check=False, timeout=60)
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").strip().splitlines()
            why = err[-1].removeprefix("lsm-driver: ") if err else f"exit {r.returncode}"
            raise TestbedError(f"node {node.name}: its lsm-driver cannot load the engine plugin "
                               f"'{name}' ({path}): {why}")
        return path

    # -- data directories -------------------------------------------------------------------

    def prepare_data_dir(self, node: Node, key: str) -> str:
        args = self._helper(node, "prepare", "--root", node.data_root, "--campaign", self.campaign,
                            "--key", key)
        if self.spec.drop_caches:
            args.append("--drop-caches")
        if self.spec.fstrim:
            args.append("--fstrim")
        doc = json.loads(self.target(node).run(args).stdout)
        for w in doc.get("warnings", []):
            self.log.warning("%s: %s", node.name, w)
        return str(doc["path"])

    def snapshot(self, node: Node, src: str, dst: str) -> None:
        self.target(node).run(self._helper(node, "snapshot", src, dst), timeout=3600)

    def remove_dir(self, node: Node, path: str) -> None:
        self.target(node).run(self._helper(node, "remove", path), timeout=600)

    # -- the driver -------------------------------------------------------------------------

    def run_driver(self, node: Node, run_doc: dict[str, Any], out_dir: Path, *,
                   limits: Any = None, cgroup_name: str = "lsmbench",
                   timeout_s: float | None = None, tick: Tick | None = None,
                   monitor: Monitor | None = None, driver: str | None = None) -> PhaseRun:
        if node.driver is None:
            raise TestbedError("the testbed is not deployed (no driver)")
        if driver is not None and driver != node.driver:  # pair: is refused for remote specs
            raise TestbedError("a remote node runs only the driver deployed on it")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "run.json").write_text(json.dumps(run_doc, indent=2) + "\n")
        remote_out = f"{node.facts['remote_root']}/out/{self.campaign}/{uuid.uuid4().hex}"
        args = self._helper(node, "run", "--out", remote_out, "--driver", node.driver,
                            "--cgroup", cgroup_name)
        if limits is not None:
            args += ["--limits", json.dumps(dataclasses.asdict(limits))]
        if timeout_s is not None:
            args += ["--timeout", f"{timeout_s:.0f}"]
        if monitor is not None:
            args.append("--follow")
        result: dict[str, Any] = {}
        t = self.target(node)
        # The monitor's request to end the phase: `lsmbench_node.py end` over a second SSH
        # connection, from a thread of its own (the stream's lines keep being read meanwhile).
        ender: threading.Thread | None = None

        def request_end() -> None:
            try:
                r = t.run(self._helper(node, "end", "--out", remote_out), timeout=60)
                doc = json.loads(r.stdout or b"{}")
                if not doc.get("requested"):
                    self.log.info("%s: the phase was not ended early: %s", node.name,
                                  doc.get("reason", "?"))
            except Exception as e:  # never fatal: the phase then runs its full time
                self.log.warning("%s: could not ask the driver to end the phase early (%s); "
                                 "it runs its full duration", node.name, e)

        def on_line(line: str) -> None:
            nonlocal ender
            if line.startswith("interval "):
                if monitor is None or ender is not None:
                    return
                try:
                    doc = json.loads(line[9:])
                except ValueError:
                    return
                if isinstance(doc, dict) and monitor([doc]):
                    ender = threading.Thread(target=request_end, daemon=True,
                                             name=f"end-phase-{node.name}")
                    ender.start()
            elif line.startswith("tick ") and tick is not None:
                with contextlib.suppress(ValueError):
                    tick(float(line[5:]))
            elif line.startswith("result "):
                result.update(json.loads(line[7:]))

        code, err, _ = t.stream(args, input=(json.dumps(run_doc, indent=2) + "\n").encode(),
                                on_line=on_line)
        if ender is not None:
            # Done before the outputs are fetched, so a late request cannot land among them
            # (and its marker, if the driver had already exited, is removed below).
            ender.join(timeout=90)
        if code != 0 or not result:
            raise TestbedError(f"node {node.name}: the node helper failed (exit {code}): "
                               f"{err.strip()[-800:]}")
        t.fetch_dir(remote_out, out_dir, sudo=self.sudo)
        # A request that came after the driver had exited left its marker behind.
        (out_dir / END_MARKER).unlink(missing_ok=True)
        log_tail = ""
        with contextlib.suppress(OSError):
            log_tail = (out_dir / "driver.log").read_text(errors="replace")[-4000:]
        return PhaseRun(exit_code=result.get("exit_code"), wall_s=float(result["wall_s"]),
                        timed_out=bool(result.get("timed_out")),
                        io_counters=result.get("io_counters"),
                        throttled=bool(result.get("throttled")),
                        cgroup_backend=result.get("cgroup_backend"), log_tail=log_tail,
                        ended_early=bool(result.get("ended_early")))

    # -- environment ------------------------------------------------------------------------

    def fingerprint(self, node: Node, data_dir: str, options_hash: str, *,
                    driver: str | None = None) -> dict[str, Any]:
        out = json.loads(self.target(node).run(self._helper(
            node, "fingerprint", "--data-dir", data_dir, "--hash", options_hash,
            "--driver", node.driver or "")).stdout)
        out["project"] = fp.git_commit()
        out["node"] = {"name": node.name, **node.facts, "testbed": self.state.name}
        return out

    def check_throttle(self, node: Node, limits: Any) -> dict[str, Any] | None:
        doc = json.loads(self.target(node).run(self._helper(
            node, "check", "--data-dir", node.data_root,
            "--limits", json.dumps(dataclasses.asdict(limits)))).stdout)
        return doc.get("throttle")

    def calibrate(self, node: Node, runtime_s: float, size_mb: int = 1024) -> Any:
        from ..calibrate import DiskProfile

        r = self.target(node).run(self._helper(
            node, "calibrate", "--dir", f"{node.data_root}/.calibration", "--runtime",
            str(runtime_s), "--size-mb", str(size_mb)), timeout=runtime_s * 8 + 600)
        return DiskProfile.from_json(r.stdout.decode())

    def status(self) -> list[dict[str, Any]]:
        """Per node: reachable?, deployed hash, helper answering?, the data disk's free space,
        and the last fault a campaign met there (state.NodeFault), if any."""
        hosts = self.hosts()
        done = self.state.deployed()
        want = content_hash()
        faults = self.state.faults()

        def one(h: HostEntry) -> dict[str, Any]:
            t = SshTarget(h, self.state.known_hosts)
            row: dict[str, Any] = {"node": h.name, "address": f"{h.address}:{h.port}",
                                   "disk": h.disk, "data_dir": h.data_dir,
                                   "deployed": done.get(h.name, {}).get("content_hash"),
                                   "current": done.get(h.name, {}).get("content_hash") == want,
                                   "fault": (faults[h.name].model_dump() if h.name in faults
                                             else None)}
            try:
                r = t.run(self._helper(h, "check", "--data-dir", h.data_dir), check=False,
                          timeout=30)
                row["reachable"] = True
                row["helper"] = r.returncode == 0
                if r.returncode == 0:
                    facts = json.loads(r.stdout)
                    row["data_free_bytes"] = facts.get("data_free_bytes")
                    row["data_total_bytes"] = facts.get("data_total_bytes")
            except NodeUnreachable as e:
                row["reachable"] = False
                row["error"] = str(e)
            return row

        with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
            return list(pool.map(one, hosts))

    def describe(self) -> str:
        try:
            names = ", ".join(f"{h.name} ({h.disk})" for h in self.hosts())
        except TestbedError as e:
            names = str(e)
        return f"{self.kind} testbed {self.state.name}: {names}"


