"""Real cgroup I/O (and CPU) throttling of one benchmark run.

- limits.ThrottleLimits: what to limit; limits.ThrottleError: every failure, saying how to fix it.
- devices.resolve_device(s): the whole disk(s) under a data directory, through partitions and
  device-mapper/md.
- layout.detect_cgroup_backend / CgroupLayout: cgroup v2 `io` if usable, else v1 `blkio`.
- cgroup.RunCgroup: the run's cgroup (context manager), popen inside it, its own I/O counters.

Read cgroup.py's docstring for what v1 blkio does and does not throttle (buffered writeback).
"""

from lsmbench.throttle.cgroup import (
    RunCgroup,
    cgroup_name,
    check_throttle_available,
    parse_v1_blkio_stat,
    parse_v2_io_stat,
    popen_in_cgroup,
)
from lsmbench.throttle.devices import (
    parse_device_spec,
    resolve_device,
    resolve_devices,
    resolve_devnum,
)
from lsmbench.throttle.layout import CgroupLayout, detect_cgroup_backend
from lsmbench.throttle.limits import FIX_HINT, ThrottleError, ThrottleLimits

__all__ = [
    "FIX_HINT",
    "CgroupLayout",
    "RunCgroup",
    "ThrottleError",
    "ThrottleLimits",
    "cgroup_name",
    "check_throttle_available",
    "detect_cgroup_backend",
    "parse_device_spec",
    "parse_v1_blkio_stat",
    "parse_v2_io_stat",
    "popen_in_cgroup",
    "resolve_device",
    "resolve_devices",
    "resolve_devnum",
]
