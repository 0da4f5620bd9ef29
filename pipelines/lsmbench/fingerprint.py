"""The environment a point ran in: host, kernel, CPU, disk, project commit, options hash.

Collected on the machine that runs the driver (the local testbed: this one).
Everything is best effort: a field that cannot be read is null, never an error.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .util.digest import canonical_hash
from .util.paths import project_root


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_model() -> str | None:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Hardware", "cpu model"):
            return value.strip()
    return platform.processor() or None


def memory_bytes() -> int | None:
    text = _read("/proc/meminfo") or ""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def os_release() -> str | None:
    text = _read("/etc/os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return None


def disk_info(path: str | Path) -> dict[str, Any]:
    """The block device under path and its disk: name, model, rotational, size, its I/O
    scheduler (``io_scheduler``; fingerprints before 2026-11-27 call it ``scheduler``, a word
    that elsewhere means the merge scheduler)."""
    info: dict[str, Any] = {"path": str(path)}
    try:
        st = os.stat(path)
    except OSError:
        return info
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    info["device"] = f"{major}:{minor}"
    sysdir = Path(f"/sys/dev/block/{major}:{minor}")
    if not sysdir.exists():
        info["filesystem_without_device"] = True
        return info
    real = sysdir.resolve()
    disk = real.parent if (real / "partition").exists() else real
    info["name"] = real.name
    info["disk"] = disk.name
    info["model"] = _read(disk / "device" / "model")
    info["vendor"] = _read(disk / "device" / "vendor")
    rot = _read(disk / "queue" / "rotational")
    info["rotational"] = rot == "1" if rot is not None else None
    size = _read(disk / "size")
    info["size_bytes"] = int(size) * 512 if size and size.isdigit() else None
    info["io_scheduler"] = _read(disk / "queue" / "scheduler")
    info["filesystem"] = _filesystem(path)
    return info


def _filesystem(path: str | Path) -> str | None:
    """The fs type of the mount holding path (longest matching mount point)."""
    text = _read("/proc/self/mounts") or ""
    best, fstype = "", None
    p = str(Path(path).resolve())
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (p == mnt or p.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, fstype = mnt, parts[2]
    return fstype


def git_commit(root: Path | None = None) -> dict[str, Any]:
    root = root or project_root()
    out: dict[str, Any] = {"commit": None, "dirty": None}
    try:
        out["commit"] = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
            timeout=10, check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
        out["dirty"] = bool(status.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def file_sha256(path: Path | None) -> str | None:
    if path is None:
        return None
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


_HOST_CACHE: dict[str, Any] = {}


def host_fingerprint() -> dict[str, Any]:
    """The parts that do not change within a campaign (computed once per process)."""
    if not _HOST_CACHE:
        _HOST_CACHE.update({
            "hostname": socket.gethostname(),
            "kernel": platform.release(),
            "os": os_release(),
            "arch": platform.machine(),
            "cpu_model": cpu_model(),
            "cpu_count": os.cpu_count(),
            "memory_bytes": memory_bytes(),
            "python": sys.version.split()[0],
            "lsmbench": __version__,
            "project": git_commit(),
        })
    return dict(_HOST_CACHE)


def fingerprint(data_dir: str | Path, options_hash: str, driver: Path | None,
                driver_sha: str | None = None) -> dict[str, Any]:
    fp = host_fingerprint()
    fp["disk"] = disk_info(data_dir)
    fp["options_hash"] = options_hash
    fp["driver"] = {"path": str(driver) if driver else None,
                    "sha256": driver_sha if driver_sha is not None else file_sha256(driver)}
    return fp


def _selected_scheduler(text: Any) -> str | None:  # the disk's I/O scheduler
    """'mq-deadline [none]' -> 'none' (the kernel marks the one in use)."""
    if not isinstance(text, str):
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text.strip() or None


def testbed_identity(fingerprint: dict[str, Any], throttle: Any) -> dict[str, Any]:
    """What makes two nights comparable: the hardware, the kernel, the disk and its I/O
    scheduler, the filesystem, and the throttle. Not the host name (a renamed machine is the
    same testbed) and not the project commit (that is what is tracked)."""
    disk = fingerprint.get("disk") or {}
    return {
        "cpu_model": fingerprint.get("cpu_model"),
        "cpu_count": fingerprint.get("cpu_count"),
        "memory_bytes": fingerprint.get("memory_bytes"),
        "arch": fingerprint.get("arch"),
        "kernel": fingerprint.get("kernel"),
        "os": fingerprint.get("os"),
        "disk_model": disk.get("model"),
        "disk_rotational": disk.get("rotational"),
        # The disk's I/O scheduler ("scheduler" in fingerprints before 2026-11-27); the key
        # keeps its name so that testbed keys, hashes of this mapping, stay what they were.
        "disk_scheduler": _selected_scheduler(disk.get("io_scheduler", disk.get("scheduler"))),
        "filesystem": disk.get("filesystem"),
        "throttle": throttle,
    }


def distinct_identities(identities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each identity once, in the order of their hashes (a run's nodes that are alike count
    once)."""
    distinct = {canonical_hash(i): i for i in identities}
    return [distinct[k] for k in sorted(distinct)]


def testbed_key(identities: list[dict[str, Any]]) -> str:
    """The key of a testbed made of nodes with these identities (testbed_identity)."""
    return canonical_hash(distinct_identities(identities))


def differing_fields(identities: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The identity fields on which the nodes (name: testbed_identity) differ: field ->
    node -> value."""
    fields = sorted({k for ident in identities.values() for k in ident})
    out = {}
    for f in fields:
        values = {n: ident.get(f) for n, ident in identities.items()}
        if len({canonical_hash({"v": v}) for v in values.values()}) > 1:
            out[f] = values
    return out


def unlike_nodes(identities: dict[str, dict[str, Any]]) -> str | None:
    """None when the nodes (name: testbed_identity) share one testbed key; else which nodes
    differ in what, e.g. "node0, node1 (filesystem ext4); node2 (filesystem tmpfs)"."""
    differ = differing_fields(identities)
    if not differ:
        return None
    by_key: dict[str, list[str]] = {}
    for name, identity in identities.items():
        by_key.setdefault(canonical_hash(identity), []).append(name)
    return "; ".join(
        f"{', '.join(names)} ("
        + ", ".join(f"{f} {values[names[0]]}" for f, values in differ.items()) + ")"
        for names in by_key.values())
