"""A cgroup created for one run, limiting its processes' I/O and CPU, removed after the run.

    limits = ThrottleLimits(write_bps=50 << 20)
    with RunCgroup("camp-p3-r1", limits, data_dir="/data/run") as cg:
        proc = cg.popen(["build/bin/lsm-driver", "--config", "run.json", "--out", out])
        proc.wait()
        counters = cg.io_counters()    # {"254:0": {"write_bytes": ..., ...}}

Layout. v2: <root>/lsmbench/<name> with io.max, cpu.max and cpuset.cpus; the io (and cpu,
cpuset) controllers are enabled in the root's and lsmbench's cgroup.subtree_control. v1: one
directory lsmbench/<name> in each hierarchy used: blkio always (its counters are wanted even
without a limit), cpuset when `cpus` is set, cpu when `cpu_quota` is set.

Starting a process inside. `popen`/`wrap_argv` start the program through `/bin/sh -c 'echo $$ >
.../cgroup.procs && exec "$@"'`: the shell joins the cgroup and then execs the program under the
same pid, so not one I/O of the program happens outside the cgroup. This is safe in a
multi-threaded parent, unlike subprocess's preexec_fn (offered too, as `preexec_fn()`, for
callers that know they have no threads). `add_pid` moves an already running process.

What cgroup v1 blkio throttles (measured on this machine's kernel 6.18, virtio disk, see the
tests): I/O the process submits itself is throttled and counted -- O_DIRECT reads and writes,
buffered reads that miss the page cache, and buffered writes that the process itself flushes
with fsync/fdatasync (the flush runs in the caller's context). Buffered writes that the kernel's
flusher threads write back (dirty pages never fsynced, or older than
vm.dirty_expire_centisecs) are neither throttled nor counted: v1 has no cgroup writeback, so
that I/O is charged to the root cgroup. An engine that fsyncs each table file and its log is
throttled; one that leaves writeback to the kernel is not. cgroup v2 with both the io and memory
controllers attributes writeback to the cgroup that dirtied the pages.
Measured at a 10 MiB/s write limit: O_DIRECT 1 MiB writes 9.6 MiB/s (unthrottled 490 MiB/s);
buffered writes + fdatasync every 1 or 8 MiB 9.9 / 9.6 MiB/s, 100 % charged to the cgroup;
buffered writes never synced by the writer: 600 MiB/s into the page cache, 0 bytes charged.

Teardown waits for the cgroup's processes to exit (`grace_s`), kills what is left -- they are the
run's own processes --, then removes the directories (retrying briefly: the kernel may still be
releasing the last task).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any

from lsmbench.throttle.devices import SYSFS, parse_device_spec, resolve_devices
from lsmbench.throttle.layout import CgroupLayout
from lsmbench.throttle.limits import FIX_HINT, ThrottleError, ThrottleLimits

log = logging.getLogger(__name__)

PARENT = "lsmbench"
CPU_PERIOD_US = 100_000
_NO_BACKEND = "no cgroup controller that can throttle I/O is available: "
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9_.-]")

# v1 per-device limit files, keyed by ThrottleLimits field.
_V1_LIMIT_FILES = {
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
}
# v2 io.max keys, keyed by ThrottleLimits field.
_V2_IO_KEYS = {"read_bps": "rbps", "write_bps": "wbps", "read_iops": "riops", "write_iops": "wiops"}
_V2_STAT_KEYS = {
    "rbytes": "read_bytes",
    "wbytes": "write_bytes",
    "rios": "read_ios",
    "wios": "write_ios",
}


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def cgroup_name(name: str) -> str:
    """A safe directory name from a run name: characters other than letters, digits, '_', '.'
    and '-' become '-', leading punctuation is dropped, at most 200 characters."""
    safe = _NAME_BAD_CHARS.sub("-", name).lstrip("._-")[:200]
    if not safe:
        raise ValueError(f"bad cgroup name {name!r}: it needs a letter or a digit")
    return safe


def _counter_row() -> dict[str, int]:
    return {"read_bytes": 0, "write_bytes": 0, "read_ios": 0, "write_ios": 0}


def parse_v1_blkio_stat(text: str, kind: str) -> dict[str, dict[str, int]]:
    """Parse blkio.throttle.io_service_bytes (kind "bytes") or io_serviced (kind "ios")."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in ("Read", "Write"):
            continue  # "Total N" and the Sync/Async/Discard/Total rows per device
        row = out.setdefault(parts[0], _counter_row())
        row[f"{parts[1].lower()}_{kind}"] = int(parts[2])
    return out


def parse_v2_io_stat(text: str) -> dict[str, dict[str, int]]:
    """Parse a v2 io.stat: 'MAJ:MIN rbytes=.. wbytes=.. rios=.. wios=.. dbytes=.. dios=..'."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        row = out.setdefault(parts[0], _counter_row())
        for item in parts[1:]:
            key, _, value = item.partition("=")
            if key in _V2_STAT_KEYS and value.isdigit():
                row[_V2_STAT_KEYS[key]] = int(value)
    return out


class RunCgroup:
    """The cgroup of one run (a context manager; see the module docstring).

    name: the run's cgroup name, unique among running runs (made safe by cgroup_name()).
    limits: what to limit. I/O limits need a device: limits.device, or else the disk(s) under
        data_dir (devices.resolve_devices).
    layout: where the controllers are mounted; discovered from /proc/self/mounts by default.
    plain_dirs: for tests only -- the layout's mount points are ordinary directories standing in
        for cgroupfs, so interface files are created on write and deleted before rmdir.
    """

    def __init__(
        self,
        name: str,
        limits: ThrottleLimits,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        layout: CgroupLayout | None = None,
        parent: str = PARENT,
        sysfs: str = SYSFS,
        plain_dirs: bool = False,
    ) -> None:
        self.name = cgroup_name(name)
        self.limits = limits
        self.parent = parent
        self.layout = layout if layout is not None else CgroupLayout.discover()
        self.plain_dirs = plain_dirs
        self.devices: tuple[str, ...] = ()
        if limits.device:
            self.devices = parse_device_spec(limits.device, sysfs=sysfs)
        elif data_dir is not None:
            try:
                self.devices = resolve_devices(data_dir, sysfs=sysfs)
            except ThrottleError:
                if limits.has_io_limits:
                    raise
        if limits.has_io_limits and not self.devices:
            raise ThrottleError(
                "I/O limits need a device: name it (throttle device: MAJ:MIN or /dev/NAME) or "
                "give the run's data directory"
            )
        # controller key ("unified" for v2, else the v1 controller) -> the run's directory
        self.dirs: dict[str, str] = {}
        self._created: list[str] = []  # the run's directories we made, in creation order
        # The parent directories (lsmbench/) used; shared with concurrent runs, removed when empty.
        self._parents: list[str] = []
        self._closed = False

    # -- setup ---------------------------------------------------------------------------------

    def __enter__(self) -> RunCgroup:
        self.create()
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            self.close()
        except ThrottleError:
            if exc_type is None:
                raise
            log.exception("while removing cgroup %s after an error", self.name)

    @property
    def backend(self) -> str:
        if self.layout.backend is None:
            raise ThrottleError(_NO_BACKEND + FIX_HINT)
        return self.layout.backend

    def create(self) -> None:
        """Make the cgroup directories and write the limits (undone on any error)."""
        try:
            if self.backend == "v2":
                self._create_v2()
            else:
                self._create_v1()
        except BaseException:
            self._remove_dirs()
            raise

    def _create_v1(self) -> None:
        wanted = ["blkio"]
        if self.limits.cpus is not None:
            wanted.append("cpuset")
        if self.limits.cpu_quota is not None:
            wanted.append("cpu")
        for ctrl in wanted:
            if ctrl not in self.layout.v1:
                raise ThrottleError(f"the cgroup v1 {ctrl} controller is not mounted: " + FIX_HINT)
        by_mount: dict[str, str] = {}  # co-mounted controllers share one directory
        for ctrl in wanted:
            mount = self.layout.v1[ctrl]
            if mount not in by_mount:
                if os.path.exists(os.path.join(mount, "cpuset.cpus")):
                    by_mount[mount] = self._make_dirs(mount, self._init_cpuset)
                    run = by_mount[mount]
                    self._init_cpuset(run)
                else:
                    by_mount[mount] = self._make_dirs(mount, lambda parent: None)
            self.dirs[ctrl] = by_mount[mount]
        blkio = self.dirs["blkio"]
        for field, fname in _V1_LIMIT_FILES.items():
            value = getattr(self.limits, field)
            if value is None:
                continue
            for dev in self.devices:
                self._write(os.path.join(blkio, fname), f"{dev} {value}")
                if f"{dev} {value}" not in _read(os.path.join(blkio, fname)).splitlines():
                    raise ThrottleError(f"the kernel did not keep {field}={value} for {dev}")
        if self.limits.cpus is not None:
            self._write(os.path.join(self.dirs["cpuset"], "cpuset.cpus"), self.limits.cpus)
        if self.limits.cpu_quota is not None:
            cpu = self.dirs["cpu"]
            self._write(os.path.join(cpu, "cpu.cfs_period_us"), str(CPU_PERIOD_US))
            self._write(os.path.join(cpu, "cpu.cfs_quota_us"), str(self._quota_us()))

    def _create_v2(self) -> None:
        root = self.layout.v2_root
        assert root is not None
        ctrls = ["io"]
        if self.limits.cpu_quota is not None:
            ctrls.append("cpu")
        if self.limits.cpus is not None:
            ctrls.append("cpuset")
        available = _read_words(os.path.join(root, "cgroup.controllers"))
        for ctrl in ctrls:
            if ctrl not in available:
                raise ThrottleError(
                    f"the cgroup v2 {ctrl} controller is not available in {root}: " + FIX_HINT
                )
        self._enable_v2(root, ctrls)
        run = self._make_dirs(root, lambda parent: self._enable_v2(parent, ctrls))
        self.dirs["unified"] = run
        io = [
            f"{key}={getattr(self.limits, field)}"
            for field, key in _V2_IO_KEYS.items()
            if getattr(self.limits, field) is not None
        ]
        if io:
            for dev in self.devices:
                self._write(os.path.join(run, "io.max"), f"{dev} {' '.join(io)}")
            kept = _read(os.path.join(run, "io.max"))
            for dev in self.devices:
                line = next((ln for ln in kept.splitlines() if ln.startswith(dev + " ")), "")
                if not all(item in line.split() for item in io):
                    raise ThrottleError(f"the kernel did not keep io.max {' '.join(io)} for {dev}")
        if self.limits.cpu_quota is not None:
            self._write(os.path.join(run, "cpu.max"), f"{self._quota_us()} {CPU_PERIOD_US}")
        if self.limits.cpus is not None:
            self._write(os.path.join(run, "cpuset.cpus"), self.limits.cpus)

    def _enable_v2(self, cgroup_dir: str, ctrls: Sequence[str]) -> None:
        control = os.path.join(cgroup_dir, "cgroup.subtree_control")
        enabled = _read_words(control) if os.path.exists(control) else []
        for ctrl in ctrls:
            if ctrl not in enabled:
                self._write(control, f"+{ctrl}", append=self.plain_dirs)

    def _quota_us(self) -> int:
        assert self.limits.cpu_quota is not None
        return max(1000, round(self.limits.cpu_quota * CPU_PERIOD_US))

    def _make_dirs(self, mount: str, prepare_parent: Callable[[str], None]) -> str:
        """mkdir <mount>/<parent>/<name>; prepare_parent configures the parent first."""
        parent = os.path.join(mount, self.parent)
        self._parents.append(parent)
        # A concurrent run may remove an empty parent between our mkdirs: retry a few times.
        for _ in range(5):
            if not os.path.isdir(parent):
                with contextlib.suppress(FileExistsError):
                    self._mkdir(parent, shared=True)
            prepare_parent(parent)
            run = os.path.join(parent, self.name)
            try:
                self._claim(run)
            except FileNotFoundError:
                continue
            return run
        raise ThrottleError(f"could not create cgroup {self.name} under {parent}")

    def _init_cpuset(self, cgroup_dir: str) -> None:
        # v1 cpuset: a cgroup needs cpus and mems before its tasks or children can use it; a
        # fresh one starts empty, so it copies those of the cgroup above it.
        above = os.path.dirname(cgroup_dir)
        for f in ("cpuset.cpus", "cpuset.mems"):
            p = os.path.join(cgroup_dir, f)
            if not (os.path.exists(p) and _read(p).strip()):
                self._write(p, _read(os.path.join(above, f)).strip())

    def _claim(self, run: str) -> None:
        """mkdir the run's cgroup; a leftover of a crashed run with no processes is replaced."""
        if os.path.isdir(run):
            pids = _pids_in(run)
            if pids:
                raise ThrottleError(
                    f"cgroup {run} already exists and holds processes {sorted(pids)}: another run "
                    "with the same name is going on; choose another run name"
                )
            log.warning("removing leftover cgroup %s", run)
            self._rmdir(run)
        self._mkdir(run)

    def _mkdir(self, path: str, *, shared: bool = False) -> None:
        try:
            os.mkdir(path)
        except (FileNotFoundError, FileExistsError):
            raise
        except OSError as e:
            raise ThrottleError(f"cannot create cgroup {path}: {e.strerror}; " + FIX_HINT) from e
        if not shared:
            self._created.append(path)

    def _write(self, path: str, value: str, *, append: bool = False) -> None:
        flags = os.O_WRONLY
        if self.plain_dirs:
            flags |= os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
        data = (value + "\n" if self.plain_dirs else value).encode()
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError as e:
            raise ThrottleError(
                f"cgroup file {path} does not exist (controller not enabled for this cgroup?)"
            ) from e
        except OSError as e:
            raise ThrottleError(f"cannot open {path}: {e.strerror}; " + FIX_HINT) from e
        try:
            os.write(fd, data)
        except OSError as e:
            hint = FIX_HINT
            if e.errno in (errno.EINVAL, errno.ENODEV):
                hint = "the kernel rejected the value (is the device a whole disk, is it present?)"
            raise ThrottleError(f"cannot write {value!r} to {path}: {e.strerror}; {hint}") from e
        finally:
            os.close(fd)

    # -- processes -----------------------------------------------------------------------------

    @property
    def procs_files(self) -> list[str]:
        """The cgroup.procs file of each hierarchy the run's processes must join."""
        seen: list[str] = []
        for d in self.dirs.values():
            p = os.path.join(d, "cgroup.procs")
            if p not in seen:
                seen.append(p)
        return seen

    def add_pid(self, pid: int) -> None:
        """Move a running process (with all its threads) into the cgroup."""
        for p in self.procs_files:
            self._write(p, str(pid))

    def wrap_argv(self, argv: Sequence[str]) -> list[str]:
        """argv that runs `argv` inside the cgroup, under the same pid (see module docstring)."""
        if not self.dirs:
            raise ThrottleError(f"cgroup {self.name} is not created (use it as a context manager)")
        joins = " && ".join(f"echo $$ > {shlex.quote(p)}" for p in self.procs_files)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "lsmbench-cgexec", *argv]

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """subprocess.Popen(argv, **kwargs) with the child inside the cgroup from its first
        instruction. A missing program raises FileNotFoundError, as Popen would."""
        argv = [os.fspath(a) for a in argv]
        if not argv:
            raise ValueError("empty argv")
        if shutil.which(argv[0], path=(kwargs.get("env") or os.environ).get("PATH")) is None:
            raise FileNotFoundError(errno.ENOENT, "program not found", argv[0])
        return subprocess.Popen(self.wrap_argv(argv), **kwargs)

    def preexec_fn(self) -> Callable[[], None]:
        """A subprocess preexec_fn joining the cgroup. Only for parents without threads."""
        files = tuple(self.procs_files)

        def join() -> None:
            pid = str(os.getpid()).encode()
            for f in files:
                fd = os.open(f, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)

        return join

    def pids(self) -> set[int]:
        out: set[int] = set()
        for d in self.dirs.values():
            out |= _pids_in(d)
        return out

    # -- counters ------------------------------------------------------------------------------

    def io_counters(self) -> dict[str, dict[str, int]]:
        """device -> {read_bytes, write_bytes, read_ios, write_ios} since the cgroup was made,
        from the cgroup's own counters (v1: blkio.throttle.io_service_bytes_recursive and
        io_serviced_recursive; v2: io.stat). I/O the kernel charged elsewhere (v1 writeback)
        is not in them."""
        if "unified" in self.dirs:
            return parse_v2_io_stat(_read(os.path.join(self.dirs["unified"], "io.stat")))
        blkio = self.dirs["blkio"]
        out: dict[str, dict[str, int]] = {}
        for stem, kind in (("io_service_bytes", "bytes"), ("io_serviced", "ios")):
            path = os.path.join(blkio, f"blkio.throttle.{stem}_recursive")
            if not os.path.exists(path):
                path = os.path.join(blkio, f"blkio.throttle.{stem}")
            for dev, row in parse_v1_blkio_stat(_read(path), kind).items():
                merged = out.setdefault(dev, _counter_row())
                for key in (f"read_{kind}", f"write_{kind}"):
                    merged[key] = row[key]
        return out

    def cpu_stats(self) -> dict[str, int]:
        """The cgroup's cpu.stat (v1: nr_periods, nr_throttled, throttled_time ns; v2:
        usage_usec, nr_throttled, throttled_usec, ...); empty without a CPU limit on v1."""
        d = self.dirs.get("unified") or self.dirs.get("cpu")
        if d is None:
            return {}
        out: dict[str, int] = {}
        for line in _read(os.path.join(d, "cpu.stat")).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                out[parts[0]] = int(parts[1])
        return out

    # -- teardown ------------------------------------------------------------------------------

    def close(self, grace_s: float = 5.0) -> None:
        """Wait for the run's processes, kill stragglers, remove the cgroup directories."""
        if self._closed:
            return
        self._closed = True
        if not self.plain_dirs and self.dirs:
            self._drain(grace_s)
        self._remove_dirs()

    def _drain(self, grace_s: float) -> None:
        deadline = time.monotonic() + grace_s
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        stragglers = self.pids()
        if not stragglers:
            return
        log.warning("killing processes left in cgroup %s: %s", self.name, sorted(stragglers))
        for _ in range(40):
            for pid in stragglers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
            stragglers = self.pids()
            if not stragglers:
                return
        raise ThrottleError(f"processes {sorted(stragglers)} do not leave cgroup {self.name}")

    def _remove_dirs(self) -> None:
        failures: list[str] = []
        for path in reversed(self._created):
            try:
                self._rmdir(path)
            except OSError as e:
                failures.append(f"{path}: {e.strerror}")
        self._created.clear()
        for path in self._parents:
            # Another run may be using it (EBUSY/ENOTEMPTY): then it stays, silently.
            with contextlib.suppress(OSError):
                self._rmdir(path, retries=0)
        self._parents.clear()
        if failures:
            raise ThrottleError("could not remove cgroup directories: " + "; ".join(failures))

    def _rmdir(self, path: str, retries: int = 40) -> None:
        if self.plain_dirs:
            for f in os.listdir(path):
                if os.path.isfile(os.path.join(path, f)):
                    os.unlink(os.path.join(path, f))
        for attempt in range(retries + 1):
            try:
                os.rmdir(path)
                return
            except FileNotFoundError:
                return
            except OSError as e:
                if e.errno not in (errno.EBUSY, errno.ENOTEMPTY) or attempt == retries:
                    raise
                time.sleep(0.05)


def _read_words(path: str) -> list[str]:
    try:
        return _read(path).split()
    except OSError:
        return []


def _pids_in(cgroup_dir: str) -> set[int]:
    try:
        text = _read(os.path.join(cgroup_dir, "cgroup.procs"))
    except OSError:
        return set()
    return {int(w) for w in text.split() if w.isdigit()}


def popen_in_cgroup(cgroup: RunCgroup, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """Start argv inside `cgroup` (see RunCgroup.popen)."""
    return cgroup.popen(argv, **kwargs)


def check_throttle_available(
    limits: ThrottleLimits,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    layout: CgroupLayout | None = None,
    sysfs: str = SYSFS,
) -> CgroupLayout:
    """Fail early, before a campaign starts, if `limits` cannot be applied here.

    Checks the backend, the devices and that the cgroup hierarchy is writable; creates nothing.
    Returns the layout to pass on to RunCgroup.
    """
    layout = layout if layout is not None else CgroupLayout.discover()
    if layout.backend is None:
        raise ThrottleError(_NO_BACKEND + FIX_HINT)
    RunCgroup("preflight", limits, data_dir=data_dir, layout=layout, sysfs=sysfs)
    roots = [layout.v2_root] if layout.backend == "v2" else [layout.v1.get("blkio")]
    if layout.backend == "v1":
        if limits.cpus is not None:
            roots.append(layout.v1.get("cpuset"))
        if limits.cpu_quota is not None:
            roots.append(layout.v1.get("cpu"))
    for root in roots:
        if root is None or not os.access(root, os.W_OK):
            who = "not root" if os.geteuid() != 0 else "root"
            raise ThrottleError(f"cgroup hierarchy {root} is not writable ({who}): " + FIX_HINT)
    return layout
