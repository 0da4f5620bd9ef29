"""Tests of lsmbench.calibrate: fio's JSON parsed exactly, a real short calibration, and the
relative throttle values."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
from lsmbench.calibrate import (
    CalibrationError,
    DiskProfile,
    direct_io_supported,
    parse_fio_json,
    profile_from_fio,
    run_calibration,
)
from lsmbench.throttle import resolve_device
from lsmbench.throttle.rates import resolve_relative
from repo_paths import TESTS

DATA = TESTS / "data"
# Recorded on the development VM (virtio disk vda, ext4) with fio-3.33:
# 4 jobs x 1 s, 16 MiB file, direct=1, libaio, iodepth 16 (the job file run_calibration writes).
RECORDED = DATA / "fio_calibration_vda.json"


def _profile(**kw) -> DiskProfile:
    base = {
        "seq_write_bps": 200e6,
        "seq_read_bps": 400e6,
        "rand_write_iops": 10000.0,
        "rand_read_iops": 20000.0,
        "latency_us": {},
        "jobs": {},
        "directory": "/data",
        "device": "8:0",
        "fio_version": "fio-3.33",
        "timestamp": "2026-01-01T00:00:00+00:00",
        "runtime_s": 5,
        "size_mb": 1024,
        "ioengine": "libaio",
        "iodepth": 16,
        "direct": True,
    }
    base.update(kw)
    return DiskProfile(**base)


# -- parsing fio's JSON --------------------------------------------------------------------------


def test_parse_recorded_fio_json_exactly():
    data = json.loads(RECORDED.read_text())
    jobs = parse_fio_json(data)
    assert jobs["seq-write"]["bw_bytes"] == 1847738481
    assert jobs["seq-write"]["iops"] == 1762.140733
    assert jobs["seq-write"]["io_bytes"] == 1864368128
    assert jobs["seq-write"]["runtime_ms"] == 1009
    assert jobs["seq-read"]["bw_bytes"] == 946602499
    assert jobs["rand-write"]["iops"] == 26361.638362
    assert jobs["rand-read"]["iops"] == 39741.035857
    lat = jobs["rand-write"]["latency_us"]
    assert lat["p50"] == 268.288
    assert lat["p99"] == 4046.848
    assert lat["p99.9"] == 11993.088
    assert lat["mean"] == pytest.approx(595.760502804)
    assert lat["max"] == 28007.938
    # seq-read reads its numbers from the read side, not the (empty) write side.
    assert jobs["seq-read"]["latency_us"]["p50"] == 17170.432

    p = profile_from_fio(
        data,
        directory="/d",
        device="254:0",
        runtime_s=1,
        size_mb=16,
        ioengine="libaio",
        iodepth=16,
        direct=True,
    )
    assert p.seq_write_bps == 1847738481
    assert p.seq_read_bps == 946602499
    assert p.rand_write_iops == 26361.638362
    assert p.rand_read_iops == 39741.035857
    assert p.fio_version == "fio-3.33"
    assert p.timestamp == "2026-11-22T02:49:00+00:00"  # fio's own "timestamp", as UTC
    assert DiskProfile.from_json(p.to_json()) == p


def test_parse_rejects_failed_or_missing_jobs():
    data = json.loads(RECORDED.read_text())
    data["jobs"][2]["error"] = 5
    with pytest.raises(CalibrationError, match="rand-write failed"):
        parse_fio_json(data)
    data = json.loads(RECORDED.read_text())
    data["jobs"] = data["jobs"][:3]
    with pytest.raises(CalibrationError, match=r"lacks job.*rand-read"):
        parse_fio_json(data)


def test_profile_json_roundtrip_and_save(tmp_path):
    p = _profile(warnings=["w"], latency_us={"seq-write": {"p99": 1.5, "p50": None}})
    path = tmp_path / "testbed" / "disk-profile.json"
    p.save(path)
    assert DiskProfile.load(path) == p
    with pytest.raises(ValueError, match="lacks"):
        DiskProfile.from_json(json.dumps({"seq_write_bps": 1}))


# -- real runs -----------------------------------------------------------------------------------


@pytest.fixture
def disk_dir():
    for base in (tempfile.gettempdir(), "/var/tmp"):
        if os.path.isdir(base) and os.major(os.stat(base).st_dev) != 0:
            with tempfile.TemporaryDirectory(prefix="lsmbench-calib-", dir=base) as d:
                yield d
            return
    pytest.skip("no disk-backed temporary directory")


def test_real_short_calibration(disk_dir, fio):
    p = run_calibration(disk_dir, runtime_s=1, size_mb=16)
    print(p.to_json())
    assert p.direct is True
    assert p.seq_write_bps > 0 and p.seq_read_bps > 0
    assert p.rand_write_iops > 0 and p.rand_read_iops > 0
    for job in ("seq-write", "seq-read", "rand-write", "rand-read"):
        assert p.jobs[job]["io_bytes"] > 0
        assert p.latency_us[job]["p50"] > 0
    # 4 KiB random jobs: bandwidth = iops x 4 KiB (within fio's rounding).
    assert p.jobs["rand-read"]["bw_bytes"] == pytest.approx(p.rand_read_iops * 4096, rel=0.01)
    assert p.device == resolve_device(disk_dir)
    assert p.fio_version.startswith("fio-")
    assert os.listdir(disk_dir) == [], "the scratch file was left behind"


_RAMFS_CALIBRATION = """
import sys
from lsmbench.calibrate import direct_io_supported, run_calibration
assert not direct_io_supported(sys.argv[1]), "ramfs accepted O_DIRECT"
print(run_calibration(sys.argv[1], runtime_s=1, size_mb=8).to_json())
"""


def test_no_direct_io_falls_back_to_buffered_with_a_warning(tmp_path, fio):
    """ramfs refuses O_DIRECT (tmpfs accepts it since Linux 6.6). It is mounted in a private
    mount namespace of a child process, so nothing outside the test sees it."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to mount a ramfs privately")
    mnt = tmp_path / "ramfs"
    mnt.mkdir()
    script = 'mount -t ramfs ramfs "$1" && exec "$2" -c "$3" "$1"'
    r = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            script,
            "sh",
            str(mnt),
            sys.executable,
            _RAMFS_CALIBRATION,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    p = DiskProfile.from_json(r.stdout)
    assert p.direct is False
    assert p.device is None
    assert any("does not support direct I/O" in w for w in p.warnings)
    assert any("no block device" in w for w in p.warnings)
    assert p.seq_write_bps > 0 and p.rand_read_iops > 0
    assert os.listdir(mnt) == []


def test_direct_io_supported_on_disk(disk_dir):
    assert direct_io_supported(disk_dir)
    assert os.listdir(disk_dir) == []


def test_missing_fio_is_a_clear_error(disk_dir):
    with pytest.raises(CalibrationError, match="apt-get install fio"):
        run_calibration(disk_dir, fio="/nonexistent/fio")


def test_missing_directory(tmp_path, fio):
    with pytest.raises(CalibrationError, match="does not exist"):
        run_calibration(tmp_path / "nope")


# -- relative values -----------------------------------------------------------------------------


def test_resolve_relative_absolute_forms():
    assert resolve_relative(52428800) == 52428800
    assert resolve_relative("52428800") == 52428800
    assert resolve_relative(50, plain_unit=10**6) == 50_000_000
    assert resolve_relative("50", plain_unit=10**6) == 50_000_000
    assert resolve_relative("100MB/s") == 100_000_000
    assert resolve_relative("100 MB/s") == 100_000_000
    assert resolve_relative("100MiB/s") == 100 * 2**20
    assert resolve_relative("1.5GB/s") == 1_500_000_000
    assert resolve_relative("512KiB") == 512 * 1024
    assert resolve_relative("2kB/s") == 2000
    assert resolve_relative("7B/s") == 7


def test_resolve_relative_percentages():
    p = _profile()
    assert resolve_relative("50%", p) == 100_000_000
    assert resolve_relative("50%", p, kind="read_bps") == 200_000_000
    assert resolve_relative("25 %", p, kind="write_iops") == 2500
    assert resolve_relative("100%", p, kind="read_iops") == 20000
    assert resolve_relative("12.5%", p) == 25_000_000


def test_resolve_relative_iops_forms():
    assert resolve_relative(500, kind="write_iops") == 500
    assert resolve_relative("500 iops", kind="read_iops") == 500
    with pytest.raises(ValueError, match="operations per second"):
        resolve_relative("5MB/s", kind="write_iops")


def test_resolve_relative_errors_name_the_forms():
    for bad in ("fast", "100Mb/s", "100 MBps", "-5", "5/s", "", True, None, [1], "1e3"):
        with pytest.raises(ValueError) as info:
            resolve_relative(bad)
        msg = str(info.value)
        assert "100MB/s" in msg and "100MiB/s" in msg and "50%" in msg, msg
    with pytest.raises(ValueError, match="lsmbench calibrate"):
        resolve_relative("50%")
    for bad in ("0%", "150%"):
        with pytest.raises(ValueError, match=r"\(0, 100\]"):
            resolve_relative(bad, _profile())
    with pytest.raises(ValueError, match="positive"):
        resolve_relative(0)
    with pytest.raises(ValueError, match="unknown throttle kind"):
        resolve_relative(5, kind="write_mbps")
