"""Test nodes across a real network: sshd instances in network namespaces.

Each node is a network namespace with a veth pair (its own /30 subnet, the controller's end in
the root namespace), an sshd of its own (own host key, own authorized_keys, listening only on
the node's address), its own home (bind-mounted over root's, in a private mount namespace)
and its own data and remote-root directories. The namespaces share this
machine's filesystem and CPU, so what differs between nodes is the network path and the
directories -- enough to test reaching, deploying, distributing and losing nodes.

The fixture needs root, /usr/sbin/sshd, ip and ssh; without them the tests are skipped with
the reason. Everything is torn down afterwards, also when a test fails.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

SSHD = "/usr/sbin/sshd"


@dataclass
class SshNode:
    name: str
    netns: str
    address: str
    host_dir: Path
    data_dir: Path
    remote_root: Path
    proc: subprocess.Popen[bytes] | None = None
    # A copy of /etc mounted over /etc in the node's mount namespace (private_etc): what a role
    # does to users, groups and unit files stays on the node, as on a separate machine.
    etc_dir: Path | None = None

    @property
    def home_dir(self) -> Path:
        return self.host_dir.parent / "home"

    def host_entry(self, key_file: Path, disk: str = "ssd") -> dict[str, object]:
        return {"name": self.name, "address": self.address, "user": "root",
                "key_file": str(key_file), "data_dir": str(self.data_dir),
                "remote_root": str(self.remote_root), "disk": disk}


@dataclass
class NetnsNodes:
    base: Path
    key_file: Path
    nodes: list[SshNode] = field(default_factory=list)

    def kill_sshd(self, node: SshNode) -> None:
        """Kills the node's sshd and every session it started (the node drops off the
        network as far as SSH goes; processes it ran see their connection vanish)."""
        if node.proc is None:
            return
        for pid in [*_descendants(node.proc.pid), node.proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        node.proc.wait(timeout=10)
        node.proc = None


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def _run(*argv: str) -> None:
    r = subprocess.run(argv, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")


def netns_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, sshd)"
    for tool in (SSHD, shutil.which("ip"), shutil.which("ssh"), shutil.which("ssh-keygen"),
                 shutil.which("unshare")):
        if not tool or not os.path.exists(tool):
            return ("needs openssh-server (/usr/sbin/sshd), openssh-client, iproute2 and "
                    "util-linux (unshare)")
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, check=False)
    if r.returncode != 0:
        return "ip netns does not work here"
    return None


def _wait_port(address: str, port: int = 22, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((address, port), timeout=1.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _start_sshd(node: SshNode, authorized_keys: Path) -> None:
    node.host_dir.mkdir(parents=True, exist_ok=True)
    hostkey = node.host_dir / "ssh_host_ed25519_key"
    if not hostkey.exists():
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hostkey))
    cfg = node.host_dir / "sshd_config"
    cfg.write_text(
        f"Port 22\nListenAddress {node.address}\nHostKey {hostkey}\n"
        f"AuthorizedKeysFile {authorized_keys}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        f"StrictModes no\nPidFile {node.host_dir / 'sshd.pid'}\nLogLevel ERROR\n"
        "Subsystem sftp internal-sftp\nMaxStartups 100\nMaxSessions 50\n")
    log = open(node.host_dir / "sshd.log", "ab")  # noqa: SIM115 - owned by the process
    # Each node gets a home of its own, bind-mounted over root's home in a private mount
    # namespace, as a separate machine would have. Sessions then never run this machine's
    # ~/.bashrc: a session killed mid-`pyenv rehash` (as the lost-node test does) leaves a
    # stale lock there that makes every later login on this machine wait 60 s for it.
    node.home_dir.mkdir(parents=True, exist_ok=True)
    home = pwd.getpwuid(0).pw_dir
    binds = [str(node.home_dir), home]
    if node.etc_dir is not None:
        binds += [str(node.etc_dir), "/etc"]
    # sh mounts this machine's cgroup hierarchies again (`ip netns exec` gives the namespace a
    # /sys of its own, without them: a node could not throttle its phases), then each
    # (source, target) pair of its arguments, then execs sshd.
    script = (_cgroup_mounts_script() +
              'while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done; '
              'shift; exec "$@"')
    node.proc = subprocess.Popen(
        ["ip", "netns", "exec", node.netns, "unshare", "--mount", "--propagation", "private",
         "--", "sh", "-c", script, "sh", *binds, "--", SSHD, "-D", "-e", "-f", str(cfg)],
        stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    _wait_port(node.address)


def _cgroup_mounts_script() -> str:
    """Shell commands that mount, under /sys/fs/cgroup, the cgroup file systems this machine
    has there, with their options: a v1 hierarchy mounted again with the same controllers is
    the same hierarchy, so a node's cgroups are this machine's, as a separate machine's own
    would be to it."""
    cmds = []
    with open("/proc/self/mounts") as f:
        for line in f:
            source, target, fstype, options = line.split()[:4]
            if not target.startswith("/sys/fs/cgroup"):
                continue
            if fstype == "tmpfs" and target == "/sys/fs/cgroup":
                cmds.append("mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup")
            elif fstype in ("cgroup", "cgroup2"):
                wanted = [o for o in options.split(",") if o not in ("rw", "relatime")]
                opts = f"-o {','.join(wanted)} " if wanted else ""
                cmds.append(f"mkdir -p {target} && mount -t {fstype} {opts}{source} {target}")
    return "".join(f"{c} || exit 1; " for c in cmds)


def restart_sshd(nodes: NetnsNodes, node: SshNode) -> None:
    _start_sshd(node, nodes.base / "authorized_keys")


def remove_stale_namespaces() -> None:
    """Namespaces of an earlier test process that was killed before its cleanup (their name
    carries its pid): their processes (that run's sshd) are stopped, then they are deleted,
    which removes their veth pairs too."""
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    for line in r.stdout.splitlines():
        m = re.match(r"^(lsmb(\d+)(?:k\d+)?n\d+)\b", line)
        if not m or os.path.exists(f"/proc/{m.group(2)}"):
            continue
        pids = subprocess.run(["ip", "netns", "pids", m.group(1)], capture_output=True,
                              text=True, check=False).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", m.group(1)], capture_output=True, check=False)


_node_sets = itertools.count()
_node_subnets = itertools.count()


@contextlib.contextmanager
def netns_nodes(base: Path, count: int = 2, private_etc: bool = False) -> Iterator[NetnsNodes]:
    """`count` nodes under `base`; with private_etc each gets its own copy of /etc."""
    reason = netns_unavailable()
    if reason:
        pytest.skip(reason)
    remove_stale_namespaces()
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    key = base / "id_ed25519"
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "lsmbench-test", "-f", str(key))
    (base / "authorized_keys").write_text((base / "id_ed25519.pub").read_text())
    pid = os.getpid()
    # Several sets of nodes may be up at once in one process (a session's shared testbed
    # beside a module's own): each set gets its number, each node its own /30.
    k = next(_node_sets)
    tag = f"{pid % 100000}k{k}"  # veth names have at most 15 characters
    subnet = 100 + pid % 150
    nodes = NetnsNodes(base=base, key_file=key)
    created_ns: list[str] = []
    created_links: list[str] = []
    try:
        for i in range(count):
            ns = f"lsmb{pid}k{k}n{i}"
            host_if, node_if = f"lb{tag}h{i}", f"lb{tag}n{i}"
            j = next(_node_subnets) % 64  # the /30s of one /24
            host_ip, node_ip = f"10.231.{subnet}.{4 * j + 1}", f"10.231.{subnet}.{4 * j + 2}"
            _run("ip", "netns", "add", ns)
            created_ns.append(ns)
            _run("ip", "link", "add", host_if, "type", "veth", "peer", "name", node_if)
            created_links.append(host_if)
            _run("ip", "link", "set", node_if, "netns", ns)
            _run("ip", "addr", "add", f"{host_ip}/30", "dev", host_if)
            _run("ip", "link", "set", host_if, "up")
            _run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{node_ip}/30", "dev", node_if)
            _run("ip", "netns", "exec", ns, "ip", "link", "set", node_if, "up")
            _run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            d = base / f"node{i}"
            node = SshNode(name=f"node{i}", netns=ns, address=node_ip, host_dir=d / "sshd",
                           data_dir=d / "data", remote_root=d / "root")
            node.data_dir.mkdir(parents=True)
            if private_etc:
                node.etc_dir = d / "etc"
                _run("cp", "-a", "/etc", str(node.etc_dir))
            _start_sshd(node, base / "authorized_keys")
            nodes.nodes.append(node)
        yield nodes
    finally:
        for node in nodes.nodes:
            with contextlib.suppress(Exception):
                nodes.kill_sshd(node)
        for link in created_links:
            subprocess.run(["ip", "link", "del", link], capture_output=True, check=False)
        for ns in created_ns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


def write_ssh_testbed(nodes: NetnsNodes, driver_path: Path) -> Path:
    """testbed.yml for an ssh testbed of `nodes`, deployed by Ansible from a build cache seeded
    with this machine's lsm-driver (the nodes share its CPUs: a CMake build per node would take
    minutes), from a frozen copy of engines/ (the cache is keyed by the sources' hash, which
    must not move when engines/ is edited meanwhile; $LSMBENCH_ENGINES points at the copy until
    the caller pops it)."""
    from lsmbench.testbeds.state import content_hash

    base = nodes.base
    shutil.copytree(Path(__file__).resolve().parents[2] / "engines", base / "engines",
                    ignore=shutil.ignore_patterns("build*", "__pycache__"))
    os.environ["LSMBENCH_ENGINES"] = str(base / "engines")
    seed_build_cache(base / "cache" / content_hash(), driver_path)
    definition = {
        "type": "ssh",
        "hosts": [n.host_entry(nodes.key_file) for n in nodes.nodes],
        "ansible_vars": {"lsm_engine_build_cache": str(base / "cache"),
                         "common_install_packages": False,
                         "lsm_engine_install_build_deps": False},
    }
    path = base / "testbed.yml"
    path.write_text(yaml.safe_dump(definition))
    return path


def seed_build_cache(entry: Path, driver_path: Path) -> None:
    """A build cache entry of the lsm_engine role (ENTRY/bin/lsm-driver, ENTRY/plugins/) made
    of this machine's build: its driver, and the project plugins the role deploys beside it."""
    (entry / "bin").mkdir(parents=True)
    (entry / "plugins").mkdir()
    shutil.copy2(driver_path, entry / "bin" / "lsm-driver")
    for name in ("rocksdb", "leveldb"):
        shutil.copy2(driver_path.parent.parent / "plugins" / f"lsmbench-{name}.so",
                     entry / "plugins")


@contextlib.contextmanager
def small_data_disk(node: SshNode, size: str) -> Iterator[None]:
    """A tmpfs of `size` over the node's data directory, in the node's own mount namespace
    (its sshd's): the node's data disk is small (and of another file system), the
    controller's view is untouched."""
    assert node.proc is not None
    enter = ["nsenter", "--target", str(node.proc.pid), "--mount", "--"]
    subprocess.run([*enter, "mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                    str(node.data_dir)], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run([*enter, "umount", "-l", str(node.data_dir)], capture_output=True,
                       check=False)


@dataclass
class DeployedTestbed:
    """Nodes with a kept ssh testbed brought up on them (`lsmbench testbed up NAME`): its
    state under `testbeds` ($LSMBENCH_TESTBEDS), deployed from the frozen engines copy
    ($LSMBENCH_ENGINES) that write_ssh_testbed made."""

    nodes: NetnsNodes
    name: str
    testbeds: Path
    engines: Path

    @contextlib.contextmanager
    def environment(self) -> Iterator[NetnsNodes]:
        """$LSMBENCH_TESTBEDS and $LSMBENCH_ENGINES pointing at this testbed's, restored
        afterwards (other modules use the defaults, or testbeds of their own)."""
        values = {"LSMBENCH_TESTBEDS": str(self.testbeds), "LSMBENCH_ENGINES": str(self.engines)}
        saved = {k: os.environ.get(k) for k in values}
        os.environ.update(values)
        try:
            yield self.nodes
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


THREE_NODE_TESTBED = "bed3"


def null_tune_spec(name: str, testbed: str, trials: int, seed: int, testing: str,
                   running: str) -> dict[str, object]:
    """A tune study on the null engine: each trial takes its phases' fixed lengths whatever
    the machine's shared cores do (one node's study against three's is the orchestration's
    difference)."""
    return {
        "name": name,
        "engine": {"name": "null"},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 2000}},
        "phases": {"testing": {"duration": testing, "warmup": "0.5s"},
                   "running": {"duration": running}},
        "testbed": testbed,
        "tune": {"trials": trials, "seed": seed, "objective": "max_write_throughput",
                 "prune": False,
                 "parameters": {"service_time_us": {"low": 5, "high": 200, "log": True}},
                 "confirm": {"top": 1, "repetitions": 2}},
    }


@pytest.fixture(scope="session")
def three_node_testbed(driver_path: Path) -> Iterator[DeployedTestbed]:
    """Three nodes and the testbed bed3 on them, brought up once for every module that
    needs a deployed three-node testbed (lsmbench tune's and reproduce's): a deployment
    takes ~20 s of Ansible. Tests that change a node (kill its sshd, mount a small disk on
    its data directory) put it back before they end."""
    base = Path(tempfile.mkdtemp(prefix="lsmbench-bed3-", dir="/var/tmp"))
    saved = os.environ.get("LSMBENCH_ENGINES")
    try:
        with netns_nodes(base, count=3) as nodes:
            definition = write_ssh_testbed(nodes, driver_path)
            bed = DeployedTestbed(nodes=nodes, name=THREE_NODE_TESTBED,
                                  testbeds=base / "testbeds", engines=base / "engines")
            with bed.environment():
                r = subprocess.run([sys.executable, "-m", "lsmbench", "testbed", "up", bed.name,
                                    "--file", str(definition), "--json"], capture_output=True,
                                   text=True, timeout=600, check=False)
            assert r.returncode == 0, r.stderr[-3000:]
            yield bed
    finally:
        if saved is None:
            os.environ.pop("LSMBENCH_ENGINES", None)
        else:
            os.environ["LSMBENCH_ENGINES"] = saved
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def bench_nodes(prefix: str, count: int = 3) -> Iterator[tuple[NetnsNodes, Path, dict[str, str]]]:
    """For the bench scripts: `count` nodes under a scratch directory, the ssh testbed
    definition for them (write_ssh_testbed with this machine's lsm-driver) and the environment
    whose $LSMBENCH_TESTBEDS is the scratch one; everything removed afterwards, also on
    SIGTERM. SystemExit(2) when lsm-driver is not built."""
    from lsmbench.util.paths import find_driver

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    driver = find_driver()
    if driver is None:
        print("lsm-driver is not built: run `make build`", file=sys.stderr)
        raise SystemExit(2)
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    try:
        with netns_nodes(base, count=count) as nodes:
            definition = write_ssh_testbed(nodes, driver)
            yield nodes, definition, {**os.environ, "LSMBENCH_TESTBEDS": str(base / "testbeds")}
    finally:
        os.environ.pop("LSMBENCH_ENGINES", None)
        shutil.rmtree(base, ignore_errors=True)


def run_losing_node(nodes: NetnsNodes, argv: list[str], env: dict[str, str], victim: SshNode,
                    busy: Callable[[], bool]) -> tuple[subprocess.Popen[str], str, str, bool]:
    """Runs `argv` and kills the victim node's sshd (and its sessions) half a second after
    `busy()` says a phase runs there; that sshd is restarted when the command ends (or is
    killed after 600 s: a hung run must not outlive the test and its nodes). (the process,
    its stdout, its stderr, whether the node was lost)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    lost = threading.Event()

    def kill_when_busy() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if busy():
                time.sleep(0.5)
                nodes.kill_sshd(victim)
                lost.set()
                return
            time.sleep(0.1)

    t = threading.Thread(target=kill_when_busy)
    t.start()
    try:
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        t.join()
        if lost.is_set():  # (a second sshd beside a live one would outlive the test)
            restart_sshd(nodes, victim)
    return proc, stdout, stderr, lost.is_set()
