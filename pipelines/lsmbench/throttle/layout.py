"""Where the cgroup controllers are mounted, and which backend throttles I/O here.

Machines come in three shapes: pure cgroup v2 (/sys/fs/cgroup is cgroup2), hybrid (v1
controllers under /sys/fs/cgroup/<name> plus a cgroup2 mount at /sys/fs/cgroup/unified that
usually carries no controllers), and pure v1. The mount table is read instead of assuming paths.

v2 is preferred when its unified hierarchy offers the `io` controller and it can be enabled for
children (already in cgroup.subtree_control, or that file is writable); otherwise v1 `blkio`
when it is mounted. A controller is only ever attached to one hierarchy, so on a hybrid machine
where blkio is mounted as v1, `io` is absent from the v2 cgroup.controllers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

Backend = Literal["v1", "v2"]

MOUNTS = "/proc/self/mounts"
_V1_CONTROLLERS = ("blkio", "cpu", "cpuset", "cpuacct")


def _unescape_mount_field(s: str) -> str:
    # /proc/mounts escapes space, tab, newline and backslash as octal.
    return (
        s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
    )


@dataclass(frozen=True)
class CgroupLayout:
    """The cgroup mount points a RunCgroup works in.

    backend: "v2" or "v1", or None if neither can throttle I/O here.
    v2_root: the cgroup2 mount point (None without one).
    v1: controller name -> mount point of its v1 hierarchy (co-mounted controllers share one).
    Tests build one by hand with temporary directories standing in for the mounts.
    """

    backend: Backend | None
    v2_root: str | None = None
    v1: dict[str, str] = field(default_factory=dict)

    @classmethod
    def discover(cls, mounts_file: str = MOUNTS) -> CgroupLayout:
        v2_root: str | None = None
        v1: dict[str, str] = {}
        try:
            with open(mounts_file) as f:
                lines = f.read().splitlines()
        except OSError:
            lines = []
        for line in lines:
            parts = line.split()
            if len(parts) < 4:
                continue
            mountpoint, fstype, opts = _unescape_mount_field(parts[1]), parts[2], parts[3]
            if fstype == "cgroup2" and v2_root is None:
                v2_root = mountpoint
            elif fstype == "cgroup":
                for opt in opts.split(","):
                    if opt in _V1_CONTROLLERS and opt not in v1:
                        v1[opt] = mountpoint
        backend: Backend | None = None
        if v2_root is not None and _v2_io_usable(v2_root):
            backend = "v2"
        elif "blkio" in v1:
            backend = "v1"
        return cls(backend=backend, v2_root=v2_root, v1=v1)


def _read_words(path: str) -> list[str]:
    try:
        with open(path) as f:
            return f.read().split()
    except OSError:
        return []


def _v2_io_usable(root: str) -> bool:
    if "io" not in _read_words(os.path.join(root, "cgroup.controllers")):
        return False
    subtree = os.path.join(root, "cgroup.subtree_control")
    return "io" in _read_words(subtree) or os.access(subtree, os.W_OK)


def detect_cgroup_backend(mounts_file: str = MOUNTS) -> Backend | None:
    """ "v2", "v1" or None: which cgroup version would throttle I/O on this machine."""
    return CgroupLayout.discover(mounts_file).backend
