"""What a run is limited to, and the one error type of the throttle package."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Said by every error a user can fix: the three ways out.
FIX_HINT = (
    "run lsmbench as root (e.g. with sudo), make sure a cgroup I/O controller is mounted "
    "read-write (cgroup v2 with the io controller, or cgroup v1 blkio at /sys/fs/cgroup/blkio), "
    "or set `throttle: none` in the campaign spec to run without throttling"
)

_CPUSET_RE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


class ThrottleError(RuntimeError):
    """Throttling cannot be set up or torn down; the message says how to fix it."""


@dataclass(frozen=True)
class ThrottleLimits:
    """Limits for one run's cgroup. Every field is optional; None means unlimited.

    write_bps / read_bps: bytes per second on each throttled device.
    write_iops / read_iops: I/O operations per second on each throttled device.
    device: which block device(s) the I/O limits apply to: "MAJ:MIN", a device node such as
        "/dev/nvme0n1", or a comma-separated list of those. None: the device under the run's data
        directory (see devices.resolve_devices). A partition named here is mapped to its disk
        (the kernel throttles whole disks only); other devices are used as named.
    cpus: a cpuset list such as "0" or "0-1,3" the run's processes are pinned to.
    cpu_quota: CPU time in cores (0.5 = half a core) via the CFS quota.

    Limits apply per device: with several devices each one gets the full limit.
    """

    write_bps: int | None = None
    read_bps: int | None = None
    write_iops: int | None = None
    read_iops: int | None = None
    device: str | None = None
    cpus: str | None = None
    cpu_quota: float | None = None

    def __post_init__(self) -> None:
        for name in ("write_bps", "read_bps", "write_iops", "read_iops"):
            value = getattr(self, name)
            if value is None:
                continue
            # bool is an int: reject it explicitly, `write_bps: true` is a spec typo.
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.cpus is not None and not _CPUSET_RE.match(self.cpus):
            raise ValueError(f"cpus must be a cpuset list such as 0 or 0-1,3, got {self.cpus!r}")
        if self.cpu_quota is not None and (
            isinstance(self.cpu_quota, bool) or not self.cpu_quota > 0
        ):
            raise ValueError(f"cpu_quota must be a positive number of cores: {self.cpu_quota!r}")

    @property
    def has_io_limits(self) -> bool:
        return any(
            v is not None for v in (self.write_bps, self.read_bps, self.write_iops, self.read_iops)
        )

    @property
    def has_cpu_limits(self) -> bool:
        return self.cpus is not None or self.cpu_quota is not None
