"""The local testbed: this machine, its data disk, lsm-driver from the build directory."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from .. import fingerprint as fp
from ..util.paths import driver_candidates, find_driver
from .base import Monitor, Node, PhaseRun, Testbed, TestbedError, Tick

# The node helper runs on remote nodes on its own (standard library only); the
# local testbed follows and stops its driver the same way.
from .node_helper import TimeseriesFollower, end_phase, terminate


def _pdeathsig_prefix() -> list[str]:
    """Makes the driver die with lsmbench, so a killed campaign leaves no orphan writing."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL"] if setpriv else []


_PREFIX: list[str] | None = None


def _tail(path: Path, n: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


class LocalTestbed(Testbed):
    kind = "local"

    def __init__(self, spec: Any, *, campaign: str, log: Any = None) -> None:
        super().__init__(spec, campaign=campaign, log=log)
        self._driver_sha: str | None = None
        self._driver_path: Path | None = None

    def describe(self) -> str:
        return f"local (data dir {self.spec.data_dir})"

    # -- nodes ----------------------------------------------------------------------------

    def up(self) -> list[Node]:
        root = Path(self.spec.data_dir).expanduser()
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TestbedError(
                f"cannot create the data directory {root}: {e.strerror}; set testbed.data_dir "
                "to a writable directory on the disk to measure"
            ) from e
        if not os.access(root, os.W_OK):
            raise TestbedError(f"data directory {root} is not writable")
        return [Node(name="local", data_root=str(root), driver=None)]

    def deploy(self, nodes: list[Node]) -> None:
        driver = find_driver(self.spec.driver)
        if driver is None:
            looked = [self.spec.driver] if self.spec.driver else [
                str(p) for p in driver_candidates()]
            raise TestbedError(
                "lsm-driver not found (looked at: " + ", ".join(looked) + "); build it with "
                "`make build` or set testbed.driver / $LSMBENCH_DRIVER to its path"
            )
        self._driver_path = driver
        self._driver_sha = fp.file_sha256(driver)
        for n in nodes:
            n.driver = str(driver)

    # -- data directories -----------------------------------------------------------------

    def prepare_data_dir(self, node: Node, key: str) -> str:
        safe = re.sub(r"[^A-Za-z0-9._=,@-]+", "_", key)[:200]
        d = Path(node.data_root) / self.campaign / safe
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        if self.spec.drop_caches:
            self._drop_caches()
        if self.spec.fstrim:
            self._fstrim(d)
        return str(d)

    def _drop_caches(self) -> None:
        os.sync()
        try:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
        except OSError as e:
            self.log.warning("could not drop the page cache (%s); run as root to do so", e)

    def _fstrim(self, path: Path) -> None:
        if not shutil.which("fstrim"):
            self.log.warning("fstrim is not installed; the disk is not trimmed")
            return
        mount = _mount_point(path)
        r = subprocess.run(["fstrim", "-v", mount], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            self.log.warning("fstrim %s failed: %s", mount, (r.stderr or r.stdout).strip())
        else:
            self.log.info("%s", r.stdout.strip())

    def snapshot(self, node: Node, src: str, dst: str) -> None:
        self.remove_dir(node, dst)
        r = subprocess.run(["cp", "-a", "--reflink=auto", src, dst], capture_output=True,
                           text=True, check=False)
        if r.returncode != 0:
            raise TestbedError(f"could not copy {src} to {dst}: {r.stderr.strip()}")

    def remove_dir(self, node: Node, path: str) -> None:
        p = Path(path)
        if p.exists():
            shutil.rmtree(p)

    # -- the driver -----------------------------------------------------------------------

    def run_driver(
        self,
        node: Node,
        run_doc: dict[str, Any],
        out_dir: Path,
        *,
        limits: Any = None,
        cgroup_name: str = "lsmbench",
        timeout_s: float | None = None,
        tick: Tick | None = None,
        monitor: Monitor | None = None,
        driver: str | None = None,
    ) -> PhaseRun:
        global _PREFIX
        driver = driver or node.driver
        if driver is None:
            raise TestbedError("the testbed is not deployed (no driver)")
        # Absolute: the paths in the driver's errors are compared with the store's (faults.py).
        out_dir = out_dir.absolute()
        out_dir.mkdir(parents=True, exist_ok=True)
        run_path = out_dir / "run.json"
        run_path.write_text(json.dumps(run_doc, indent=2) + "\n")
        if _PREFIX is None:
            _PREFIX = _pdeathsig_prefix()
        argv = [*_PREFIX, driver, "--config", str(run_path), "--out", str(out_dir)]
        log_path = out_dir / "driver.log"
        with open(log_path, "wb") as log:
            if limits is not None:
                from ..throttle import RunCgroup  # imported only when used

                with RunCgroup(cgroup_name, limits, data_dir=run_doc.get("dir")) as cg:
                    proc = cg.popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
                    run = self._wait(proc, timeout_s, tick, monitor, out_dir)
                    with contextlib.suppress(Exception):
                        run.io_counters = cg.io_counters()
                    run.throttled = limits.has_io_limits
                    run.cgroup_backend = cg.backend
            else:
                proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
                run = self._wait(proc, timeout_s, tick, monitor, out_dir)
        run.log_tail = _tail(log_path)
        return run

    def _wait(self, proc: subprocess.Popen[Any], timeout_s: float | None,
              tick: Tick | None, monitor: Monitor | None = None,
              out_dir: Path | None = None) -> PhaseRun:
        start = time.monotonic()
        timed_out = ended = False
        follower = TimeseriesFollower(out_dir) if monitor is not None and out_dir else None
        try:
            while True:
                try:
                    code = proc.wait(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    pass
                elapsed = time.monotonic() - start
                if tick is not None:
                    tick(elapsed)
                if follower is not None and not ended and monitor is not None:
                    fresh = follower.new_intervals()
                    if fresh and monitor(fresh):
                        ended = True
                        end_phase(proc)
                if timeout_s is not None and elapsed > timeout_s and not timed_out:
                    timed_out = True
                    self.log.error("driver exceeded its %.0fs timeout; stopping it", timeout_s)
                    code = terminate(proc)
                    break
        except BaseException:
            # Cancelled (Ctrl-C, SIGTERM): let the driver write its outputs, then go.
            terminate(proc)
            raise
        return PhaseRun(exit_code=code, wall_s=time.monotonic() - start, timed_out=timed_out,
                        pid=proc.pid, ended_early=ended)

    # -- environment ----------------------------------------------------------------------

    def fingerprint(self, node: Node, data_dir: str, options_hash: str, *,
                    driver: str | None = None) -> dict[str, Any]:
        if driver is not None and driver != node.driver:
            return fp.fingerprint(data_dir, options_hash, Path(driver), None)
        return fp.fingerprint(data_dir, options_hash,
                              Path(node.driver) if node.driver else None, self._driver_sha)

    def calibrate(self, node: Node, runtime_s: float, size_mb: int = 1024) -> Any:
        from ..calibrate import run_calibration

        d = Path(node.data_root) / ".calibration"
        d.mkdir(parents=True, exist_ok=True)
        try:
            return run_calibration(str(d), runtime_s, size_mb)
        finally:
            shutil.rmtree(d, ignore_errors=True)


def _mount_point(path: Path) -> str:
    p = path.resolve()
    while not os.path.ismount(p) and p != p.parent:
        p = p.parent
    return str(p)
