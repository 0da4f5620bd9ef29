"""How much a point puts on the data disk, estimated before it runs, and whether the testbed's
data disk holds it (`lsmbench plan`; docs/faults.md).

A point's peak data is its tree at its biggest: the loaded records, plus the records the
testing and running phases insert, times SPACE_FACTOR (a merge writes its output before it
deletes its inputs: a full merge briefly holds the tree twice), plus the copy of the loaded
tree that ``running.start: snapshot`` keeps. Inserts are bounded by the disk's sequential
write bandwidth from the calibration profile (no engine ingests faster than its disk
writes); without a profile they are not counted, and the plan says so.

The data disk: for a local testbed the free space of the filesystem under ``data_dir``
(statvfs, now); for a remote one each node's calibrated filesystem size
(``lsmbench testbed calibrate``). Each point's directory is removed after it (unless
``keep_data``), so the largest point must fit; with ``keep_data`` all of them must.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .calibrate import DiskProfile
from .engine_options import record_sizes
from .faults import filesystem_space, human_bytes
from .plan import Plan

SPACE_FACTOR = 2.0
# Keys, values and per-record bookkeeping (sequence number, block index, checksum).
RECORD_OVERHEAD_BYTES = 16


class PointData(BaseModel):
    point: str
    bytes: int


class DataDisk(BaseModel):
    """A data disk a point may run on: what the plan compares the estimate with."""

    where: str  # "local /var/tmp/lsmbench" or "node n1"
    available_bytes: int | None  # None: unknown
    basis: str  # "free now" or "calibrated size"


class DataSizeReport(BaseModel):
    points: list[PointData]
    disks: list[DataDisk]
    notes: list[str]
    warnings: list[str]


def record_bytes(workload: dict[str, Any]) -> int:
    """A record's bytes on disk: its key and (mean) value as the driver writes them, and the
    engine's per-record overhead."""
    key, value = record_sizes(workload)
    return key + round(value) + RECORD_OVERHEAD_BYTES


def insert_fraction(workload: dict[str, Any]) -> float:
    ops = workload.get("operations") or {}
    total = sum(float(v) for v in ops.values() if isinstance(v, int | float))
    return float(ops.get("insert", 0.0)) / total if total > 0 else 0.0


def point_bytes(plan: Plan, point: Any, write_bps: float | None) -> int:
    resolved = plan.point(point)
    spec, workload = resolved.spec, resolved.workload
    per_record = record_bytes(workload)
    loaded = 0
    if spec.phases.load.enabled:
        loaded = int(workload.get("record_count") or 0) * per_record
    inserted = 0.0
    running = spec.phases.running
    if write_bps:
        seconds = spec.phases.testing.duration
        if running.enabled:
            seconds += (running.duration + running.drain) * running.runs()
        inserted = insert_fraction(workload) * seconds * write_bps
    snapshot = loaded if running.enabled and running.start == "snapshot" else 0
    return int((loaded + inserted) * SPACE_FACTOR + snapshot)


def _disks(plan: Plan, results: Path) -> tuple[list[DataDisk], float | None, list[str]]:
    """The data disks, the slowest calibrated write bandwidth (for inserts), notes."""
    tb = plan.spec.testbed
    notes: list[str] = []
    if tb.type == "local":
        space = filesystem_space(Path(tb.data_dir).expanduser())
        disks = [DataDisk(where=f"local {tb.data_dir}", basis="free now",
                          available_bytes=space[0] if space else None)]
        profile = _local_profile(tb, results)
        return disks, profile.seq_write_bps if profile else None, notes
    if tb.type != "named":
        notes.append("data disk size: known for a kept testbed once calibrated (`lsmbench "
                     "testbed calibrate NAME`), not for an ad-hoc one")
        return [], None, notes
    from .testbeds.state import TestbedState

    state = TestbedState(tb.name)
    disks = []
    bandwidths = []
    for path in sorted((state.dir / "calibration").glob("*.json")):
        try:
            profile = DiskProfile.load(path)
        except (OSError, ValueError):
            continue
        disks.append(DataDisk(where=f"node {path.stem}", basis="calibrated size",
                              available_bytes=profile.capacity_bytes))
        bandwidths.append(profile.seq_write_bps)
    if not disks:
        notes.append(f"data disk size: testbed {tb.name} has no calibration (`lsmbench testbed "
                     f"calibrate {tb.name}` records each node's)")
    return disks, max(bandwidths) if bandwidths else None, notes


def _local_profile(tb: Any, results: Path) -> DiskProfile | None:
    """This machine's calibration, where `lsmbench run` looks for it."""
    path = Path(tb.calibration) if tb.calibration else \
        results / ".calibration" / f"{socket.gethostname()}.json"
    try:
        return DiskProfile.load(path)
    except (OSError, ValueError):
        return None


def check_data_size(plan: Plan, results: Path) -> DataSizeReport:
    """Each point's estimated peak data, and a warning per data disk too small for it
    (`results`: the store, whose .calibration/ a local testbed's profile is in)."""
    disks, bps, notes = _disks(plan, results)
    points = [PointData(point=p.id, bytes=point_bytes(plan, p, bps)) for p in plan.points]
    if bps is None and any(insert_fraction(plan.point(p).workload) > 0 for p in plan.points):
        notes.append("data size: the testing and running phases' inserts are not counted "
                     "(no calibrated write bandwidth bounds them: `lsmbench calibrate`)")
    warnings: list[str] = []
    if not points:
        return DataSizeReport(points=points, disks=disks, notes=notes, warnings=warnings)
    largest = max(points, key=lambda p: p.bytes)
    keep = bool(getattr(plan.spec.testbed, "keep_data", False))
    need = sum(p.bytes for p in points) if keep else largest.bytes
    what = (f"all {len(points)} points' data (testbed.keep_data keeps each)" if keep
            else f"the largest point's data ({largest.point})")
    notes.append(f"data size: ~{human_bytes(largest.bytes)} at most per point"
                 + (f", ~{human_bytes(need)} kept in all" if keep else ""))
    for disk in disks:
        if disk.available_bytes is not None and disk.available_bytes < need:
            warnings.append(
                f"data disk too small: {what} is estimated at ~{human_bytes(need)}, but the "
                f"data disk of {disk.where} has {human_bytes(disk.available_bytes)} "
                f"({disk.basis}); the point would fail with its data directory out of space "
                f"(a larger testbed.data_dir, or a smaller workload.record_count)")
    return DataSizeReport(points=points, disks=disks, notes=notes, warnings=warnings)
