"""A kept testbed's state under ``testbeds/NAME/`` (git-ignored).

    testbed.yml        the definition (the spec's ``testbed`` section), written by the first
                       ``lsmbench testbed up NAME --file ...``; later commands read it
    inventory.yml      the generated Ansible inventory
    known_hosts        the nodes' SSH host keys (first contact recorded; a change is an error)
    deployed.json      per node: the content hash of what was deployed, and when
    faults.json        per node: the last fault a campaign met there (its disk ran out, ...),
                       shown by `lsmbench testbed status` until a point completes there again
    calibration/       per node: the fio disk profile (throttle percentages)
    terraform/         Terraform's working directory and local state (terraform testbeds)
    sources/           the engine source archive shipped to the nodes, by content hash
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from ..util.paths import project_root
from .base import TestbedError

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
# What the node helper needs of lsmbench (all stdlib-only modules).
HELPER_MODULES = ("__init__.py", "util/__init__.py", "util/paths.py", "util/digest.py",
                  "fingerprint.py", "calibrate.py", "throttle/__init__.py", "throttle/cgroup.py",
                  "throttle/devices.py", "throttle/layout.py", "throttle/limits.py")
_SKIP_DIRS = {"build", ".git", "__pycache__"}


def private_tmp(path: Path) -> Path:
    """A temporary name beside `path` of this process and thread alone: several campaigns
    on one kept testbed at once (`lsmbench reproduce --testbed`) each write its state files,
    and a shared temporary name would have one rename the other's file away."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def engines_dir() -> Path:
    """The engine sources to deploy: $LSMBENCH_ENGINES (a frozen copy, e.g. in tests), else
    the checkout's engines/."""
    env = os.environ.get("LSMBENCH_ENGINES")
    return Path(env).resolve() if env else project_root() / "engines"


def testbeds_root() -> Path:
    env = os.environ.get("LSMBENCH_TESTBEDS")
    return Path(env).resolve() if env else project_root() / "testbeds"


class NodeFault(BaseModel):
    """The last fault of a node's own (faults.py kinds) that a campaign met."""

    kind: str
    message: str
    campaign: str
    point: str
    at: float


class TestbedState:
    def __init__(self, name: str, root: Path | None = None) -> None:
        if not _NAME_RE.match(name):
            raise TestbedError(f"bad testbed name {name!r} (letters, digits, '.', '_', '-')")
        self.name = name
        self.dir = (root or testbeds_root()) / name

    # -- files -----------------------------------------------------------------------------

    @property
    def definition_path(self) -> Path:
        return self.dir / "testbed.yml"

    @property
    def inventory_path(self) -> Path:
        return self.dir / "inventory.yml"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def deployed_path(self) -> Path:
        return self.dir / "deployed.json"

    @property
    def terraform_dir(self) -> Path:
        return self.dir / "terraform"

    def calibration_path(self, node: str) -> Path:
        return self.dir / "calibration" / f"{node}.json"

    def exists(self) -> bool:
        return self.definition_path.is_file()

    def ensure(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o700)  # known_hosts, inventories and generated credentials

    def read_definition(self) -> dict[str, Any]:
        if not self.definition_path.is_file():
            raise TestbedError(
                f"no testbed {self.name!r} ({self.definition_path} does not exist): bring it up "
                f"first with `lsmbench testbed up {self.name} --file TESTBED.yml`")
        doc = yaml.safe_load(self.definition_path.read_text())
        if not isinstance(doc, dict):
            raise TestbedError(f"{self.definition_path}: expected a mapping")
        return doc

    def write_definition(self, doc: dict[str, Any]) -> None:
        self.ensure()
        tmp = private_tmp(self.definition_path)
        tmp.write_text(yaml.safe_dump(doc, sort_keys=False))
        tmp.replace(self.definition_path)

    def deployed(self) -> dict[str, Any]:
        try:
            return json.loads(self.deployed_path.read_text())
        except (OSError, ValueError):
            return {}

    def record_deployed(self, nodes: list[str], content_hash: str) -> None:
        self.ensure()
        with self.locked():
            doc = self.deployed()
            for n in nodes:
                doc[n] = {"content_hash": content_hash, "at": time.time()}
            tmp = private_tmp(self.deployed_path)
            tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
            tmp.replace(self.deployed_path)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The state's read-modify-write files (deployed.json, faults.json) one writer at a
        time: a blocking flock on testbeds/NAME/.state.lock, across processes and threads."""
        fd = os.open(self.dir / ".state.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def forget_deployed(self) -> None:
        self.deployed_path.unlink(missing_ok=True)

    @property
    def faults_path(self) -> Path:
        return self.dir / "faults.json"

    def faults(self) -> dict[str, NodeFault]:
        try:
            doc = json.loads(self.faults_path.read_text())
            return {node: NodeFault.model_validate(f) for node, f in doc.items()}
        except (OSError, ValueError):
            return {}

    def _write_faults(self, faults: dict[str, NodeFault]) -> None:
        self.ensure()
        tmp = private_tmp(self.faults_path)
        tmp.write_text(json.dumps({n: f.model_dump() for n, f in faults.items()}, indent=2,
                                  sort_keys=True) + "\n")
        tmp.replace(self.faults_path)

    def record_fault(self, node: str, fault: NodeFault) -> None:
        self.ensure()
        with self.locked():
            self._write_faults({**self.faults(), node: fault})

    def clear_fault(self, node: str) -> None:
        if node not in self.faults():
            return
        with self.locked():
            faults = self.faults()
            if faults.pop(node, None) is not None:
                self._write_faults(faults)


# -- what is shipped -------------------------------------------------------------------------


def _engine_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS
                             and not d.startswith("build"))
        out += [Path(dirpath) / f for f in sorted(filenames) if not f.endswith(".pyc")]
    return out


def helper_files() -> list[tuple[str, Path]]:
    """(path on the node under lib/, local file) of the node helper and its modules."""
    pkg = Path(__file__).resolve().parents[1]
    out = [("lsmbench_node.py", Path(__file__).with_name("node_helper.py"))]
    out += [(f"lsmbench/{m}", pkg / m) for m in HELPER_MODULES]
    return out


def content_hash(engines: Path | None = None) -> str:
    """The hash of everything deployed: engine sources and the node helper."""
    engines = engines or engines_dir()
    h = hashlib.sha256()
    for f in _engine_files(engines):
        h.update(str(f.relative_to(engines)).encode() + b"\0" + f.read_bytes() + b"\0")
    for rel, f in helper_files():
        h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _archive(path: Path, members: list[tuple[str, Path]]) -> Path:
    """A reproducible tar.gz (sorted members, zero mtimes); kept once made (the name carries
    the content hash); older archives of the same kind are removed."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        for name, f in members:
            data = f.read_bytes()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if os.access(f, os.X_OK) else 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    tmp = private_tmp(path)
    tmp.write_bytes(buf.getvalue())
    tmp.replace(path)
    kind = path.name.split("-", 1)[0]
    for old in path.parent.glob(f"{kind}-*.tar.gz"):
        if old != path:
            old.unlink(missing_ok=True)
    return path


def source_archive(dest_dir: Path, chash: str, engines: Path | None = None) -> Path:
    """engines/ as shipped to the nodes (the lsm_engine role builds it there)."""
    engines = engines or engines_dir()
    return _archive(dest_dir / f"engines-{chash}.tar.gz",
                    [(f"engines/{f.relative_to(engines)}", f) for f in _engine_files(engines)])


def helper_archive(dest_dir: Path, chash: str) -> Path:
    """The node helper and its modules, unpacked under REMOTE_ROOT/lib by cgroup_throttle."""
    return _archive(dest_dir / f"helper-{chash}.tar.gz", helper_files())
