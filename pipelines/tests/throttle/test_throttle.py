"""Tests of lsmbench.throttle: device resolution, backend detection, the run cgroup.

The real tests (marked by `needs_v1`/`needs_v2`) create cgroups on this machine and measure the
cgroup's own counters; they need root and a mounted controller and are skipped otherwise, with
the reason. The rest run anywhere, with temporary directories standing in for sysfs and cgroupfs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from lsmbench.throttle import (
    FIX_HINT,
    CgroupLayout,
    RunCgroup,
    ThrottleError,
    ThrottleLimits,
    check_throttle_available,
    detect_cgroup_backend,
    parse_device_spec,
    parse_v1_blkio_stat,
    parse_v2_io_stat,
    resolve_device,
    resolve_devices,
    resolve_devnum,
)
from repo_paths import PIPELINES, REPO

MiB = 1 << 20
LAYOUT = CgroupLayout.discover()
IS_ROOT = os.geteuid() == 0
needs_v1 = pytest.mark.skipif(
    not (IS_ROOT and "blkio" in LAYOUT.v1 and os.access(LAYOUT.v1["blkio"], os.W_OK)),
    reason="needs root and a writable cgroup v1 blkio hierarchy",
)
needs_v2 = pytest.mark.skipif(
    not (IS_ROOT and LAYOUT.backend == "v2"),
    reason=(
        "needs root and cgroup v2 with the io controller; here the v2 hierarchy "
        f"({LAYOUT.v2_root}) offers no io controller (blkio is bound to v1)"
    ),
)


# -- limits --------------------------------------------------------------------------------------


def test_limits_validate_values():
    assert ThrottleLimits(write_bps=1).has_io_limits
    assert not ThrottleLimits(cpus="0").has_io_limits
    assert ThrottleLimits(cpu_quota=0.5).has_cpu_limits
    for bad in (
        {"write_bps": 0},
        {"read_iops": -3},
        {"write_bps": True},
        {"write_bps": 1.5},
        {"cpus": "0-"},
        {"cpus": "a"},
        {"cpu_quota": 0},
    ):
        with pytest.raises(ValueError):
            ThrottleLimits(**bad)


# -- device resolution against a fake sysfs ------------------------------------------------------


def _fake_sysfs(root: Path) -> Path:
    """sysfs with disk vda (254:0) + partition vda1 (254:1), disk vdb (254:16),
    dm-0 (253:0) on vda1, dm-1 (253:1) striped over vda1 and vdb, dm-2 (253:2) on dm-0."""
    devices = root / "devices"
    vda = devices / "pci0" / "virtio1" / "block" / "vda"
    vdb = devices / "pci0" / "virtio2" / "block" / "vdb"
    vda1 = vda / "vda1"
    for d, num in ((vda, "254:0"), (vdb, "254:16"), (vda1, "254:1")):
        d.mkdir(parents=True)
        (d / "dev").write_text(num + "\n")
    (vda1 / "partition").write_text("1\n")
    dms = {}
    for i in range(3):
        dm = devices / "virtual" / "block" / f"dm-{i}"
        (dm / "slaves").mkdir(parents=True)
        (dm / "dev").write_text(f"253:{i}\n")
        dms[i] = dm
    (dms[0] / "slaves" / "vda1").symlink_to(vda1)
    (dms[1] / "slaves" / "vda1").symlink_to(vda1)
    (dms[1] / "slaves" / "vdb").symlink_to(vdb)
    (dms[2] / "slaves" / "dm-0").symlink_to(dms[0])
    block = root / "dev" / "block"
    block.mkdir(parents=True)
    for num, target in (
        ("254:0", vda),
        ("254:1", vda1),
        ("254:16", vdb),
        ("253:0", dms[0]),
        ("253:1", dms[1]),
        ("253:2", dms[2]),
    ):
        (block / num).symlink_to(os.path.relpath(target, block))
    return root


@pytest.fixture
def sysfs(tmp_path):
    return str(_fake_sysfs(tmp_path / "sys"))


def test_resolve_whole_disk(sysfs):
    assert resolve_devnum(254, 0, sysfs=sysfs) == ("254:0",)
    assert resolve_devnum(254, 16, sysfs=sysfs) == ("254:16",)


def test_resolve_partition_maps_to_parent_disk(sysfs):
    assert resolve_devnum(254, 1, sysfs=sysfs) == ("254:0",)


def test_resolve_device_mapper_through_slaves(sysfs):
    assert resolve_devnum(253, 0, sysfs=sysfs) == ("254:0",)  # LVM on a partition
    assert resolve_devnum(253, 2, sysfs=sysfs) == ("254:0",)  # dm on dm on a partition
    assert resolve_devnum(253, 1, sysfs=sysfs) == ("254:0", "254:16")  # striped


def test_resolve_virtual_and_missing_devices_fail_clearly(sysfs):
    with pytest.raises(ThrottleError, match=r"no block device.*throttle: none"):
        resolve_devnum(0, 45, sysfs=sysfs)
    with pytest.raises(ThrottleError, match="not in"):
        resolve_devnum(8, 0, sysfs=sysfs)


def test_parse_device_spec(sysfs):
    assert parse_device_spec("254:0", sysfs=sysfs) == ("254:0",)
    assert parse_device_spec("254:1", sysfs=sysfs) == ("254:0",)  # partition -> disk
    assert parse_device_spec("253:1", sysfs=sysfs) == ("253:1",)  # dm kept as named
    assert parse_device_spec("254:0, 254:16,254:1", sysfs=sysfs) == ("254:0", "254:16")
    for bad in ("sda", "8:", "1:2:3", ""):
        with pytest.raises(ThrottleError):
            parse_device_spec(bad, sysfs=sysfs)
    with pytest.raises(ThrottleError, match="does not exist"):
        parse_device_spec("9:9", sysfs=sysfs)
    with pytest.raises(ThrottleError, match="not a block device"):
        parse_device_spec("/dev/null", sysfs=sysfs)


# -- device resolution on this machine -----------------------------------------------------------


def _on_block_device(path: str) -> bool:
    return os.major(os.stat(path).st_dev) != 0


@pytest.fixture
def disk_dir():
    """A temporary directory on a disk-backed filesystem (not tmpfs), removed afterwards."""
    for base in (tempfile.gettempdir(), "/var/tmp", str(REPO)):
        if os.path.isdir(base) and _on_block_device(base):
            with tempfile.TemporaryDirectory(prefix="lsmbench-throttle-", dir=base) as d:
                yield d
            return
    pytest.skip("no disk-backed directory for a temporary file (/tmp, /var/tmp are virtual)")


def test_resolve_device_of_real_data_dir(disk_dir):
    dev = resolve_device(disk_dir)
    major, minor = (int(x) for x in dev.split(":"))
    sysdir = Path("/sys/dev/block") / dev
    assert sysdir.exists()
    assert not (sysdir / "partition").exists(), "a partition was returned, not its disk"
    assert not any((sysdir / "slaves").glob("*")), "a stacked device was returned"
    st_dev = os.stat(disk_dir).st_dev
    if not (
        Path("/sys/dev/block") / f"{os.major(st_dev)}:{os.minor(st_dev)}" / "partition"
    ).exists():
        assert (major, minor) == (os.major(st_dev), os.minor(st_dev))
    assert resolve_devices(disk_dir) == (dev,)


def _virtual_dir() -> str:
    with open("/proc/self/mounts") as f:
        for line in f:
            parts = line.split()
            if parts[2] == "tmpfs" and os.path.isdir(parts[1]) and os.access(parts[1], os.R_OK):
                return parts[1]
    return "/proc"


def test_resolve_device_on_tmpfs_fails_clearly():
    path = _virtual_dir()
    with pytest.raises(ThrottleError) as info:
        resolve_device(path)
    msg = str(info.value)
    assert path in msg
    assert "no block device" in msg
    assert "throttle: none" in msg
    assert "name the device explicitly" in msg


# -- backend detection ---------------------------------------------------------------------------


def _mounts(tmp_path: Path, lines: list[str]) -> str:
    p = tmp_path / "mounts"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def test_detect_hybrid_without_v2_io_is_v1(tmp_path):
    unified = tmp_path / "unified"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("hugetlb\n")
    mounts = _mounts(
        tmp_path,
        [
            "tmpfs /sys/fs/cgroup tmpfs rw 0 0",
            "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0",
            "cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0",
            f"cgroup2 {unified} cgroup2 rw,relatime 0 0",
        ],
    )
    layout = CgroupLayout.discover(mounts)
    assert layout.backend == "v1"
    assert layout.v1 == {
        "cpu": "/sys/fs/cgroup/cpu,cpuacct",
        "cpuacct": "/sys/fs/cgroup/cpu,cpuacct",
        "blkio": "/sys/fs/cgroup/blkio",
    }
    assert detect_cgroup_backend(mounts) == "v1"


def test_detect_v2_with_io(tmp_path):
    root = tmp_path / "cg"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("cpu memory\n")
    mounts = _mounts(tmp_path, [f"cgroup2 {root} cgroup2 rw,nsdelegate 0 0"])
    assert detect_cgroup_backend(mounts) == "v2"
    (root / "cgroup.controllers").write_text("cpuset cpu memory pids\n")
    assert detect_cgroup_backend(mounts) is None
    assert detect_cgroup_backend(str(tmp_path / "missing")) is None


def test_detect_this_machine():
    backend = detect_cgroup_backend()
    with open("/proc/self/mounts") as f:
        mounts = f.read()
    if " cgroup2 " not in mounts and " cgroup " not in mounts:
        assert backend is None
    elif "blkio" in LAYOUT.v1:
        assert backend in ("v1", "v2")
    print("backend on this machine:", backend, LAYOUT)


# -- counter parsers -----------------------------------------------------------------------------


def test_parse_v1_counters():
    text = (
        "254:0 Read 212992\n254:0 Write 41943040\n254:0 Sync 42156032\n254:0 Async 0\n"
        "254:0 Discard 0\n254:0 Total 42156032\n8:16 Write 7\nTotal 42156039\n"
    )
    assert parse_v1_blkio_stat(text, "bytes") == {
        "254:0": {"read_bytes": 212992, "write_bytes": 41943040, "read_ios": 0, "write_ios": 0},
        "8:16": {"read_bytes": 0, "write_bytes": 7, "read_ios": 0, "write_ios": 0},
    }


def test_parse_v2_counters():
    text = "254:0 rbytes=4096 wbytes=1048576 rios=1 wios=256 dbytes=0 dios=0\n8:0 rbytes=1\n"
    assert parse_v2_io_stat(text) == {
        "254:0": {"read_bytes": 4096, "write_bytes": 1048576, "read_ios": 1, "write_ios": 256},
        "8:0": {"read_bytes": 1, "write_bytes": 0, "read_ios": 0, "write_ios": 0},
    }


# -- the cgroup files written, against temporary directories standing in for cgroupfs ----------


def test_v2_files_written(tmp_path, sysfs):
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory\n")
    (root / "cgroup.subtree_control").write_text("memory\n")
    limits = ThrottleLimits(
        write_bps=50 * MiB, read_iops=300, device="254:1", cpus="0-1", cpu_quota=1.5
    )
    layout = CgroupLayout(backend="v2", v2_root=str(root))
    cg = RunCgroup("camp-p1", limits, layout=layout, sysfs=sysfs, plain_dirs=True)
    with cg:
        run = root / "lsmbench" / "camp-p1"
        assert cg.dirs == {"unified": str(run)}
        assert (root / "cgroup.subtree_control").read_text().split() == [
            "memory",
            "+io",
            "+cpu",
            "+cpuset",
        ]
        assert (root / "lsmbench" / "cgroup.subtree_control").read_text().split() == [
            "+io",
            "+cpu",
            "+cpuset",
        ]
        # The partition named in the spec became its disk; only the given keys are set.
        assert (run / "io.max").read_text() == f"254:0 wbps={50 * MiB} riops=300\n"
        assert (run / "cpu.max").read_text() == "150000 100000\n"
        assert (run / "cpuset.cpus").read_text() == "0-1\n"
        argv = cg.wrap_argv(["lsm-driver", "--out", "a b"])
        assert argv[:2] == ["/bin/sh", "-c"]
        assert argv[2] == f'echo $$ > {run}/cgroup.procs && exec "$@"'
        assert argv[4:] == ["lsm-driver", "--out", "a b"]
        (run / "io.stat").write_text("254:0 rbytes=1 wbytes=2 rios=3 wios=4\n")
        assert cg.io_counters()["254:0"]["write_bytes"] == 2
    assert not (root / "lsmbench").exists()


def test_v1_files_written(tmp_path, sysfs):
    mounts = {}
    for ctrl in ("blkio", "cpu", "cpuset"):
        mounts[ctrl] = tmp_path / ctrl
        mounts[ctrl].mkdir()
    (mounts["cpuset"] / "cpuset.cpus").write_text("0-3\n")
    (mounts["cpuset"] / "cpuset.mems").write_text("0\n")
    limits = ThrottleLimits(
        write_bps=10 * MiB,
        read_bps=20 * MiB,
        write_iops=100,
        device="254:0,254:16",
        cpus="2",
        cpu_quota=0.25,
    )
    layout = CgroupLayout(backend="v1", v1={k: str(v) for k, v in mounts.items()})
    with RunCgroup("r1", limits, layout=layout, sysfs=sysfs, plain_dirs=True) as cg:
        blkio = mounts["blkio"] / "lsmbench" / "r1"
        # Two devices: each gets its line; plain files keep only the last write.
        assert (blkio / "blkio.throttle.write_bps_device").read_text() == f"254:16 {10 * MiB}\n"
        assert (blkio / "blkio.throttle.read_bps_device").read_text() == f"254:16 {20 * MiB}\n"
        assert (blkio / "blkio.throttle.write_iops_device").read_text() == "254:16 100\n"
        assert not (blkio / "blkio.throttle.read_iops_device").exists()
        cpu = mounts["cpu"] / "lsmbench" / "r1"
        assert (cpu / "cpu.cfs_period_us").read_text() == "100000\n"
        assert (cpu / "cpu.cfs_quota_us").read_text() == "25000\n"
        cpuset = mounts["cpuset"] / "lsmbench" / "r1"
        assert (mounts["cpuset"] / "lsmbench" / "cpuset.cpus").read_text() == "0-3\n"
        assert (cpuset / "cpuset.mems").read_text() == "0\n"
        assert (cpuset / "cpuset.cpus").read_text() == "2\n"
        assert len(cg.procs_files) == 3
    for ctrl in mounts:
        assert not (mounts[ctrl] / "lsmbench").exists()


def test_v1_two_devices_get_one_line_each(tmp_path, sysfs):
    (tmp_path / "blkio").mkdir()
    limits = ThrottleLimits(write_bps=5 * MiB, device="254:0,254:16")
    layout = CgroupLayout(backend="v1", v1={"blkio": str(tmp_path / "blkio")})
    cg = RunCgroup("r2", limits, layout=layout, sysfs=sysfs, plain_dirs=True)
    writes: list[tuple[str, str]] = []
    real_write = cg._write

    def recording(path, value, **kw):
        writes.append((os.path.basename(path), value))
        real_write(path, value, **kw)

    cg._write = recording
    with cg:
        pass
    # Each value goes to the kernel in a write of its own (it parses one rule per write).
    assert writes == [
        ("blkio.throttle.write_bps_device", f"254:0 {5 * MiB}"),
        ("blkio.throttle.write_bps_device", f"254:16 {5 * MiB}"),
    ]
    assert not (tmp_path / "blkio" / "lsmbench").exists()


def test_no_backend_says_how_to_fix(sysfs):
    layout = CgroupLayout(backend=None)
    with (
        pytest.raises(ThrottleError) as info,
        RunCgroup("x", ThrottleLimits(write_bps=MiB, device="254:0"), layout=layout, sysfs=sysfs),
    ):
        pass
    assert FIX_HINT in str(info.value)
    assert "throttle: none" in str(info.value)
    with pytest.raises(ThrottleError, match="throttle: none"):
        check_throttle_available(ThrottleLimits(write_bps=MiB), layout=layout)


def test_io_limits_need_a_device(tmp_path):
    layout = CgroupLayout(backend="v1", v1={"blkio": str(tmp_path)})
    with pytest.raises(ThrottleError, match="need a device"):
        RunCgroup("x", ThrottleLimits(write_bps=MiB), layout=layout)
    with pytest.raises(ThrottleError, match="no block device"):
        RunCgroup("x", ThrottleLimits(write_bps=MiB), layout=layout, data_dir=_virtual_dir())


def test_cgroup_names_are_made_safe():
    layout = CgroupLayout(backend="v1")
    assert RunCgroup("camp 1/p3.running@0.9", ThrottleLimits(), layout=layout).name == (
        "camp-1-p3.running-0.9"
    )
    assert RunCgroup("../x", ThrottleLimits(), layout=layout).name == "x"
    for bad in ("", "..", "/", "-"):
        with pytest.raises(ValueError):
            RunCgroup(bad, ThrottleLimits(), layout=layout)


@pytest.mark.skipif(not IS_ROOT, reason="needs root to switch to an unprivileged user")
@needs_v1
def test_not_root_gets_a_clear_error():
    code = (
        "from lsmbench.throttle import RunCgroup, ThrottleLimits, ThrottleError\n"
        "try:\n"
        "    with RunCgroup('lsmbench-test-nonroot', ThrottleLimits(write_bps=1 << 20),"
        " data_dir='/'):\n"
        "        pass\n"
        "except ThrottleError as e:\n"
        "    print(e)\n"
    )
    # The test's own interpreter may live where the unprivileged user cannot read (pyenv
    # under /root): use the system one; lsmbench.throttle needs only the standard library.
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        pytest.skip("no system python3 an unprivileged user can run")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PIPELINES)}
    r = subprocess.run(
        [python, "-c", code],
        user=65534,
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "run lsmbench as root" in r.stdout
    assert "throttle: none" in r.stdout


# -- real throttling on this machine (cgroup v1 blkio) -------------------------------------------


def _dd_write(cg: RunCgroup, path: str, total_mib: int, extra: tuple[str, ...]) -> float:
    """Run dd inside the cgroup; returns elapsed seconds."""
    start = time.monotonic()
    proc = cg.popen(
        ["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={total_mib}", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, err = proc.communicate(timeout=120)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, err
    return elapsed


def _written(cg: RunCgroup, dev: str) -> int:
    return cg.io_counters().get(dev, {}).get("write_bytes", 0)


@needs_v1
def test_v1_direct_write_rate_holds_the_limit(disk_dir):
    limit = 10 * MiB
    total = 50
    dev = resolve_device(disk_dir)
    with RunCgroup(
        f"lsmbench-test-w{os.getpid()}", ThrottleLimits(write_bps=limit), data_dir=disk_dir
    ) as cg:
        assert cg.devices == (dev,)
        elapsed = _dd_write(cg, os.path.join(disk_dir, "f"), total, ("oflag=direct",))
        written = _written(cg, dev)
    rate = written / elapsed
    print(
        f"throttled O_DIRECT: {written} B in {elapsed:.2f}s = {rate / MiB:.2f} MiB/s "
        f"(limit {limit / MiB:.0f} MiB/s)"
    )
    assert written >= total * MiB, "the cgroup did not count the writes"
    assert rate <= 1.05 * limit

    with RunCgroup(f"lsmbench-test-u{os.getpid()}", ThrottleLimits(), data_dir=disk_dir) as cg:
        elapsed = _dd_write(cg, os.path.join(disk_dir, "g"), total, ("oflag=direct",))
        written = _written(cg, dev)
    rate = written / elapsed
    print(f"unthrottled O_DIRECT: {rate / MiB:.1f} MiB/s")
    assert written >= total * MiB
    assert rate > limit


@needs_v1
def test_v1_buffered_write_with_fsync_is_throttled(disk_dir):
    """The engine's pattern (buffered writes, fsync per file): the fsync flushes in the
    writer's context, so the cgroup is charged and throttled."""
    limit = 10 * MiB
    total = 30
    dev = resolve_device(disk_dir)
    with RunCgroup(
        f"lsmbench-test-f{os.getpid()}", ThrottleLimits(write_bps=limit), data_dir=disk_dir
    ) as cg:
        elapsed = _dd_write(cg, os.path.join(disk_dir, "f"), total, ("conv=fsync",))
        written = _written(cg, dev)
    rate = written / elapsed
    print(f"throttled buffered+fsync: {rate / MiB:.2f} MiB/s")
    assert written >= total * MiB
    assert rate <= 1.05 * limit


@needs_v1
def test_v1_kernel_writeback_escapes_the_cgroup(disk_dir):
    """Documents the v1 limitation: dirty pages written back by the kernel's flusher (here
    forced by a `sync` from outside the cgroup) are charged to the root cgroup, not throttled."""
    if LAYOUT.backend != "v1":
        pytest.skip("v1-specific behaviour")
    dev = resolve_device(disk_dir)
    with RunCgroup(
        f"lsmbench-test-b{os.getpid()}", ThrottleLimits(write_bps=10 * MiB), data_dir=disk_dir
    ) as cg:
        elapsed = _dd_write(cg, os.path.join(disk_dir, "f"), 30, ())
        os.sync()
        written = _written(cg, dev)
    print(f"buffered, no fsync: dd took {elapsed:.2f}s, the cgroup was charged {written} B")
    assert written < 3 * MiB
    assert elapsed < 3.0, "30 MiB into the page cache should not be held to 10 MiB/s"


@needs_v1
def test_v1_direct_read_rate_holds_the_limit(disk_dir):
    path = os.path.join(disk_dir, "r")
    with open(path, "wb") as f:
        f.write(os.urandom(MiB) * 20)
        os.fsync(f.fileno())
    limit = 8 * MiB
    dev = resolve_device(disk_dir)
    with RunCgroup(
        f"lsmbench-test-r{os.getpid()}", ThrottleLimits(read_bps=limit), data_dir=disk_dir
    ) as cg:
        start = time.monotonic()
        proc = cg.popen(
            ["dd", f"if={path}", "of=/dev/null", "bs=1M", "iflag=direct"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert proc.wait(timeout=60) == 0
        elapsed = time.monotonic() - start
        read = cg.io_counters()[dev]["read_bytes"]
    print(f"throttled O_DIRECT read: {read / elapsed / MiB:.2f} MiB/s")
    assert read >= 20 * MiB
    assert read / elapsed <= 1.05 * limit


@needs_v1
def test_v1_write_iops_limit(disk_dir):
    limit = 100
    dev = resolve_device(disk_dir)
    with RunCgroup(
        f"lsmbench-test-i{os.getpid()}", ThrottleLimits(write_iops=limit), data_dir=disk_dir
    ) as cg:
        start = time.monotonic()
        proc = cg.popen(
            [
                "dd",
                "if=/dev/zero",
                f"of={os.path.join(disk_dir, 'i')}",
                "bs=4k",
                "count=300",
                "oflag=direct",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert proc.wait(timeout=60) == 0
        elapsed = time.monotonic() - start
        ios = cg.io_counters()[dev]["write_ios"]
    print(f"throttled 4 KiB O_DIRECT writes: {ios / elapsed:.1f} IOPS")
    assert ios >= 300
    assert ios / elapsed <= 1.05 * limit


@needs_v1
def test_v1_cpuset_pins_the_run():
    if "cpuset" not in LAYOUT.v1:
        pytest.skip("cpuset controller not mounted")
    with RunCgroup(f"lsmbench-test-c{os.getpid()}", ThrottleLimits(cpus="0")) as cg:
        out = cg.popen(
            ["grep", "Cpus_allowed_list", "/proc/self/status"], stdout=subprocess.PIPE, text=True
        ).communicate(timeout=30)[0]
    assert out.split() == ["Cpus_allowed_list:", "0"]


@needs_v1
def test_v1_cpu_quota_limits_cpu_time():
    if "cpu" not in LAYOUT.v1:
        pytest.skip("cpu controller not mounted")
    quota = 0.2
    wall = 1.5
    busy = f"import time\nt = time.monotonic()\nwhile time.monotonic() - t < {wall}: pass\n"
    with RunCgroup(f"lsmbench-test-q{os.getpid()}", ThrottleLimits(cpu_quota=quota)) as cg:
        proc = cg.popen([sys.executable, "-c", busy])
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        stats = cg.cpu_stats()
    cpu = usage.ru_utime + usage.ru_stime
    print(f"cpu_quota {quota}: {cpu:.2f}s CPU in {wall}s wall, cpu.stat {stats}")
    assert proc.returncode == 0
    assert stats["nr_throttled"] > 0
    assert cpu <= quota * wall * 1.3 + 0.1


@needs_v1
def test_teardown_kills_stragglers_and_removes_dirs():
    cg = RunCgroup(f"lsmbench-test-k{os.getpid()}", ThrottleLimits(cpu_quota=1.0))
    with cg:
        proc = cg.popen(["sleep", "60"])
        deadline = time.monotonic() + 5
        while proc.pid not in cg.pids() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.pid in cg.pids()
        dirs = list(cg.dirs.values())
        cg.close(grace_s=0.2)
    assert proc.wait(timeout=5) == -9
    for d in dirs:
        assert not os.path.exists(d)


@needs_v1
def test_leftover_cgroup_is_replaced_and_busy_one_refused():
    name = f"lsmbench-test-l{os.getpid()}"
    leftover = os.path.join(LAYOUT.v1["blkio"], "lsmbench", name)
    os.makedirs(leftover)
    try:
        with RunCgroup(name, ThrottleLimits()) as cg:
            proc = cg.popen(["sleep", "30"])
            time.sleep(0.2)
            with pytest.raises(ThrottleError, match="holds processes"):
                RunCgroup(name, ThrottleLimits()).create()
            proc.kill()
            proc.wait()
    finally:
        if os.path.isdir(leftover):
            os.rmdir(leftover)
    assert not os.path.exists(leftover)


@needs_v1
def test_popen_missing_program():
    with (
        RunCgroup(f"lsmbench-test-m{os.getpid()}", ThrottleLimits()) as cg,
        pytest.raises(FileNotFoundError),
    ):
        cg.popen(["/nonexistent/lsm-driver"])


@needs_v1
def test_preexec_fn_and_add_pid_join_the_cgroup():
    with RunCgroup(f"lsmbench-test-p{os.getpid()}", ThrottleLimits()) as cg:
        a = subprocess.Popen(["sleep", "30"], preexec_fn=cg.preexec_fn())
        b = subprocess.Popen(["sleep", "30"])
        cg.add_pid(b.pid)
        assert {a.pid, b.pid} <= cg.pids()
        for p in (a, b):
            p.kill()
            p.wait()


@needs_v2
def test_v2_direct_write_rate_holds_the_limit(disk_dir):
    limit = 10 * MiB
    dev = resolve_device(disk_dir)
    with RunCgroup(
        f"lsmbench-test-v2{os.getpid()}", ThrottleLimits(write_bps=limit), data_dir=disk_dir
    ) as cg:
        elapsed = _dd_write(cg, os.path.join(disk_dir, "f"), 50, ("oflag=direct",))
        written = _written(cg, dev)
    assert written >= 50 * MiB
    assert written / elapsed <= 1.05 * limit
