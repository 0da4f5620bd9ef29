"""Disk calibration with fio, and throttle values relative to the calibrated disk.

`run_calibration(directory)` runs four time-bounded fio jobs one after the other (stonewall) on a
scratch file in the data directory -- sequential write and read with 1 MiB blocks, random write
and read with 4 KiB blocks, direct I/O, libaio at a fixed queue depth -- and parses fio's JSON
output (never its text) into a DiskProfile, stored with the testbed as JSON.

A spec may then give a throttle relative to the profile: `write_mbps: 50%` means half the
calibrated sequential write bandwidth (see lsmbench.throttle.rates).

Direct I/O: a filesystem that refuses O_DIRECT (tmpfs) is calibrated with buffered I/O instead,
and the profile says so in `direct: false` and in `warnings` -- its numbers then measure the page
cache, not a disk.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lsmbench.throttle import ThrottleError, resolve_device

# (job name, fio rw mode, block size, the direction fio reports it under)
JOBS: tuple[tuple[str, str, str, str], ...] = (
    ("seq-write", "write", "1M", "write"),
    ("seq-read", "read", "1M", "read"),
    ("rand-write", "randwrite", "4k", "write"),
    ("rand-read", "randread", "4k", "read"),
)
_PERCENTILES = {"p50": "50.000000", "p99": "99.000000", "p99.9": "99.900000"}


class CalibrationError(RuntimeError):
    """fio is missing, failed, or wrote output that cannot be read."""


@dataclass
class DiskProfile:
    """What one disk (under one data directory) can do, as measured by fio.

    Bandwidths in bytes/s, IOPS in operations/s. latency_us: per job, fio's completion latency
    (clat) in microseconds: mean, p50, p99, p99.9, max. jobs: per job, the raw bw_bytes, iops,
    io_bytes and runtime_ms. timestamp: when fio ran, ISO 8601 UTC.
    """

    seq_write_bps: float
    seq_read_bps: float
    rand_write_iops: float
    rand_read_iops: float
    latency_us: dict[str, dict[str, float | None]]
    jobs: dict[str, dict[str, float]]
    directory: str
    device: str | None
    fio_version: str
    timestamp: str
    runtime_s: float
    size_mb: int
    ioengine: str
    iodepth: int
    direct: bool
    warnings: list[str] = field(default_factory=list)
    # The size of the calibrated filesystem (statvfs): `lsmbench plan` compares each point's
    # data with it. None in profiles written before it was recorded.
    capacity_bytes: int | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> DiskProfile:
        data = json.loads(text)
        names = {f for f in cls.__dataclass_fields__}
        missing = names - set(data) - {"warnings", "capacity_bytes"}
        if missing:
            raise ValueError(f"disk profile lacks {', '.join(sorted(missing))}")
        return cls(**{k: v for k, v in data.items() if k in names})

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically (temporary file + rename)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(self.to_json() + "\n")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> DiskProfile:
        return cls.from_json(Path(path).read_text())


def direct_io_supported(directory: str | os.PathLike[str]) -> bool:
    """Whether the filesystem under `directory` accepts O_DIRECT (tmpfs does not)."""
    fd, probe = tempfile.mkstemp(prefix=".lsmbench-odirect-", dir=directory)
    os.close(fd)
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_DIRECT)
    except OSError:
        return False
    else:
        os.close(fd)
        return True
    finally:
        os.unlink(probe)


def _job_file(
    path: str, runtime_s: float, size_mb: int, direct: bool, engine: str, depth: int
) -> str:
    lines = [
        "[global]",
        f"filename={path}",
        f"size={size_mb}M",
        f"direct={1 if direct else 0}",
        f"ioengine={engine}",
        f"iodepth={depth}",
        "time_based=1",
        f"runtime={max(1, math.ceil(runtime_s))}",
        "randrepeat=0",
        "norandommap=1",
        "group_reporting=1",
        "",
    ]
    for name, rw, bs, _ in JOBS:
        lines += [f"[{name}]", "stonewall", f"rw={rw}", f"bs={bs}", ""]
    return "\n".join(lines)


def _load_fio_json(text: str) -> dict[str, Any]:
    # fio may put notes ("note: both iodepth >= 1 and synchronous I/O engine ...") before the
    # JSON document even with --output-format=json: start at the first line opening an object.
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("{"):
            try:
                data = json.loads("\n".join(lines[i:]))
            except json.JSONDecodeError as e:
                raise CalibrationError(f"fio wrote JSON that does not parse: {e}") from e
            if not isinstance(data, dict) or "jobs" not in data:
                raise CalibrationError("fio's JSON output has no 'jobs'")
            return data
    raise CalibrationError("fio wrote no JSON output")


def parse_fio_json(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per job name: bw_bytes, iops, io_bytes, runtime_ms and clat latencies (us) of the
    direction the job measures, from fio's --output-format=json document."""
    directions = {name: d for name, _, _, d in JOBS}
    out: dict[str, dict[str, Any]] = {}
    for job in data.get("jobs", []):
        name = job.get("jobname")
        if name not in directions:
            continue
        if job.get("error"):
            raise CalibrationError(f"fio job {name} failed with error {job['error']}")
        side = job[directions[name]]
        clat = side.get("clat_ns", {})
        pct = clat.get("percentile") or {}
        latency: dict[str, float | None] = {
            "mean": clat["mean"] / 1000 if "mean" in clat else None,
            "max": clat["max"] / 1000 if "max" in clat else None,
        }
        for label, key in _PERCENTILES.items():
            latency[label] = pct[key] / 1000 if key in pct else None
        out[name] = {
            "bw_bytes": float(side["bw_bytes"]),
            "iops": float(side["iops"]),
            "io_bytes": float(side["io_bytes"]),
            "runtime_ms": float(side["runtime"]),
            "latency_us": latency,
        }
    missing = [name for name, *_ in JOBS if name not in out]
    if missing:
        raise CalibrationError(f"fio output lacks job(s) {', '.join(missing)}")
    return out


def profile_from_fio(
    data: dict[str, Any],
    *,
    directory: str,
    device: str | None,
    runtime_s: float,
    size_mb: int,
    ioengine: str,
    iodepth: int,
    direct: bool,
    warnings: list[str] | None = None,
) -> DiskProfile:
    jobs = parse_fio_json(data)
    ts = data.get("timestamp")
    when = datetime.fromtimestamp(ts, tz=UTC) if isinstance(ts, int | float) else datetime.now(UTC)
    return DiskProfile(
        seq_write_bps=jobs["seq-write"]["bw_bytes"],
        seq_read_bps=jobs["seq-read"]["bw_bytes"],
        rand_write_iops=jobs["rand-write"]["iops"],
        rand_read_iops=jobs["rand-read"]["iops"],
        latency_us={name: j["latency_us"] for name, j in jobs.items()},
        jobs={name: {k: v for k, v in j.items() if k != "latency_us"} for name, j in jobs.items()},
        directory=directory,
        device=device,
        fio_version=str(data.get("fio version", "unknown")),
        timestamp=when.isoformat(timespec="seconds"),
        runtime_s=runtime_s,
        size_mb=size_mb,
        ioengine=ioengine,
        iodepth=iodepth,
        direct=direct,
        warnings=list(warnings or []),
    )


def _engine_available(fio: str, engine: str) -> bool:
    try:
        r = subprocess.run([fio, "--enghelp"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return engine in r.stdout.split()


def run_calibration(
    directory: str | os.PathLike[str],
    runtime_s: float = 5,
    size_mb: int = 1024,
    fio: str = "fio",
    *,
    ioengine: str = "libaio",
    iodepth: int = 16,
) -> DiskProfile:
    """Calibrate the disk under `directory` (see the module docstring).

    runtime_s: seconds per job (fio's minimum is 1); the four jobs run one after the other.
    size_mb: the scratch file's size; bigger than the disk's cache gives truer numbers.
    The scratch file is removed afterwards; the directory must exist and be writable.
    """
    directory = os.fspath(directory)
    exe = shutil.which(fio)
    if exe is None:
        raise CalibrationError(
            f"fio not found ({fio!r}): install it (Debian/Ubuntu: apt-get install fio) or give "
            "its path"
        )
    if not os.path.isdir(directory):
        raise CalibrationError(f"calibration directory {directory!r} does not exist")
    warnings: list[str] = []
    direct = direct_io_supported(directory)
    if not direct:
        warnings.append(
            f"the filesystem of {directory} does not support direct I/O (O_DIRECT); calibrated "
            "with buffered I/O, so the numbers measure the page cache, not a disk"
        )
    if ioengine == "libaio" and not _engine_available(exe, "libaio"):
        warnings.append("fio lacks the libaio engine; used psync (queue depth 1)")
        ioengine, iodepth = "psync", 1
    try:
        device: str | None = resolve_device(directory)
    except ThrottleError as e:
        device = None
        warnings.append(f"no block device for {directory}: {e}")

    with tempfile.TemporaryDirectory(prefix=".lsmbench-calibrate-", dir=directory) as work:
        data_file = os.path.join(work, "fio.dat")
        job_path = os.path.join(work, "calibrate.fio")
        out_path = os.path.join(work, "out.json")
        Path(job_path).write_text(
            _job_file(data_file, runtime_s, size_mb, direct, ioengine, iodepth)
        )
        timeout = 4 * max(1, math.ceil(runtime_s)) + 300  # + laying out the file
        try:
            r = subprocess.run(
                [exe, "--output-format=json", f"--output={out_path}", job_path],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as e:
            raise CalibrationError(f"fio did not finish within {timeout}s") from e
        text = ""
        with contextlib.suppress(OSError):
            text = Path(out_path).read_text()
        if r.returncode != 0:
            detail = (r.stderr or r.stdout or text).strip()[-2000:]
            raise CalibrationError(f"fio failed (exit {r.returncode}): {detail}")
        data = _load_fio_json(text)
    space = os.statvfs(directory)
    profile = profile_from_fio(
        data,
        directory=directory,
        device=device,
        runtime_s=runtime_s,
        size_mb=size_mb,
        ioengine=ioengine,
        iodepth=iodepth,
        direct=direct,
        warnings=warnings,
    )
    profile.capacity_bytes = space.f_blocks * space.f_frsize
    return profile
