"""Which block device(s) a directory's I/O reaches, as the kernel's "MAJ:MIN" numbers.

The kernel throttles whole disks only (writing a partition's number into blkio.throttle.* or
io.max fails), so resolution walks sysfs:

- a partition (its sysfs directory has a `partition` file) maps to its parent disk, the
  directory above it;
- a stacked device (device-mapper `dm-N`, md RAID) with entries under `slaves/` maps to the
  disks underneath, recursively, so LVM over a partition ends at the physical disk. With several
  underlying disks (striped LVM, RAID) all are returned; the limits then apply to each of them,
  which is documented on ThrottleLimits;
- anything else with a `dev` file is a whole disk and is returned as is.

A filesystem without a block device (tmpfs, overlay, NFS, and btrfs, whose st_dev is an
anonymous major-0 number) cannot be resolved: the error says to name the device explicitly or to
run with `throttle: none`.
"""

from __future__ import annotations

import os
import stat

from lsmbench.throttle.limits import ThrottleError

SYSFS = "/sys"


def _devnum(major: int, minor: int) -> str:
    return f"{major}:{minor}"


def _read_dev(path: str) -> str:
    with open(os.path.join(path, "dev")) as f:
        return f.read().strip()


def _resolve_sysdir(sysdir: str, seen: set[str]) -> list[str]:
    """Whole-disk MAJ:MIN numbers beneath one /sys/devices/.../block/X directory."""
    real = os.path.realpath(sysdir)
    if real in seen:  # a cycle would be a kernel bug, but never loop forever on it
        return []
    seen.add(real)
    if os.path.exists(os.path.join(real, "partition")):
        return _resolve_sysdir(os.path.dirname(real), seen)
    slaves_dir = os.path.join(real, "slaves")
    slaves = sorted(os.listdir(slaves_dir)) if os.path.isdir(slaves_dir) else []
    if slaves:
        out: list[str] = []
        for name in slaves:
            for dev in _resolve_sysdir(os.path.join(slaves_dir, name), seen):
                if dev not in out:
                    out.append(dev)
        return out
    return [_read_dev(real)]


def resolve_devnum(major: int, minor: int, *, sysfs: str = SYSFS) -> tuple[str, ...]:
    """The whole disk(s) that carry block device MAJ:MIN (see the module docstring)."""
    if major == 0:
        raise ThrottleError(
            f"the filesystem has no block device (device number 0:{minor}: tmpfs, overlay, NFS, "
            "btrfs or another virtual filesystem), so its I/O cannot be throttled by device: "
            "put the data directory on a disk-backed filesystem, name the device explicitly "
            "(throttle device: MAJ:MIN or /dev/NAME), or set `throttle: none`"
        )
    sysdir = os.path.join(sysfs, "dev", "block", _devnum(major, minor))
    if not os.path.exists(sysdir):
        raise ThrottleError(
            f"block device {_devnum(major, minor)} is not in {sysfs}/dev/block (is sysfs "
            "mounted?); name the device explicitly or set `throttle: none`"
        )
    return tuple(_resolve_sysdir(sysdir, set()))


def resolve_devices(path: str | os.PathLike[str], *, sysfs: str = SYSFS) -> tuple[str, ...]:
    """All whole disks under the filesystem holding `path` (which must exist)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ThrottleError(f"cannot stat data directory {os.fspath(path)!r}: {e}") from e
    try:
        return resolve_devnum(os.major(st.st_dev), os.minor(st.st_dev), sysfs=sysfs)
    except ThrottleError as e:
        raise ThrottleError(f"data directory {os.fspath(path)!r}: {e}") from None


def resolve_device(path: str | os.PathLike[str], *, sysfs: str = SYSFS) -> str:
    """The one whole disk under `path` as "MAJ:MIN".

    Raises ThrottleError when the filesystem spans several disks: the caller must then choose
    (name the device(s) in the spec) or use resolve_devices to throttle each of them.
    """
    devices = resolve_devices(path, sysfs=sysfs)
    if len(devices) != 1:
        raise ThrottleError(
            f"{os.fspath(path)!r} lies on several disks ({', '.join(devices)}); name the device(s) "
            "to throttle explicitly in the spec (device: MAJ:MIN[,MAJ:MIN...])"
        )
    return devices[0]


def parse_device_spec(spec: str, *, sysfs: str = SYSFS) -> tuple[str, ...]:
    """Devices named in a spec: "MAJ:MIN", "/dev/NAME", or a comma-separated list of those.

    A partition is mapped to its disk (the kernel would reject it); every other device is kept
    as named, so a user can deliberately throttle a device-mapper volume itself.
    """
    out: list[str] = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item.startswith("/"):
            try:
                st = os.stat(item)
            except FileNotFoundError:
                raise ThrottleError(f"throttle device {item!r} does not exist") from None
            except OSError as e:
                raise ThrottleError(f"throttle device {item!r}: {e.strerror or e}") from e
            except ValueError as e:  # a NUL in the path
                raise ThrottleError(f"throttle device {item!r}: {e}") from e
            if not stat.S_ISBLK(st.st_mode):
                raise ThrottleError(f"throttle device {item!r} is not a block device")
            major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
        else:
            parts = item.split(":")
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise ThrottleError(
                    f"throttle device {item!r} must be MAJ:MIN (e.g. 8:0) or a /dev path"
                )
            major, minor = int(parts[0]), int(parts[1])
        sysdir = os.path.join(sysfs, "dev", "block", _devnum(major, minor))
        if os.path.exists(os.path.join(sysdir, "partition")):
            devs: tuple[str, ...] = resolve_devnum(major, minor, sysfs=sysfs)
        elif os.path.exists(sysdir):
            devs = (_devnum(major, minor),)
        else:
            raise ThrottleError(f"throttle device {item!r} ({major}:{minor}) does not exist")
        for d in devs:
            if d not in out:
                out.append(d)
    if not out:
        raise ThrottleError(f"throttle device {spec!r} names no device")
    return tuple(out)
