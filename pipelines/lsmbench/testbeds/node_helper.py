"""The node side of a remote testbed: one small program the controller calls over SSH.

Shipped by the Ansible role ``cgroup_throttle`` to ``REMOTE_ROOT/lib/lsmbench_node.py`` next to
a copy of lsmbench's stdlib-only modules (``lsmbench/throttle``, ``fingerprint``,
``calibrate``, ``paths``), so the node throttles a phase with exactly the code the local
testbed uses. It needs nothing but Python 3 on the node.

    lsmbench_node.py check --data-dir D [--limits JSON]      facts + throttle check, as JSON
    lsmbench_node.py prepare --root R --campaign C --key K [--drop-caches] [--fstrim]
    lsmbench_node.py snapshot SRC DST | remove PATH
    lsmbench_node.py run --out O --driver D [--limits JSON] [--cgroup N] [--timeout S]
                         [--follow]
        run.json on stdin; prints "tick <seconds>" about once a second while the driver runs,
        then "result <json>" (exit_code, wall_s, timed_out, ended_early, ...). The ticks
        double as a liveness check: when the controller goes away, the next tick cannot be
        written and the driver is stopped (SIGTERM, then SIGKILL), so a lost controller leaves
        no orphan writing to the disk. With --follow it also prints each time-series interval
        the driver completes, as "interval <json>" (a timeseries.jsonl line), in order.
    lsmbench_node.py end --out O
        asks the `run` of O to end its phase now, as if its duration had elapsed: it leaves
        the marker O/.lsmbench-end-phase, which that run looks for while its driver runs (a few
        times a second with --follow, else once a second) and answers with SIGUSR1 to the driver
        (result ended_early: true). Idempotent; once the driver has exited (its summary.json
        written) it does nothing ("requested": false, "the phase has ended"), so no marker
        outlives the run; never creates O (a run already fetched and removed is left alone).
    lsmbench_node.py fingerprint --data-dir D --hash H --driver P
    lsmbench_node.py calibrate --dir D --runtime S --size-mb N

Every answer is one JSON document (or tick lines then one ``result`` line) on stdout; errors
go to stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# After a timeout or a cancel the driver gets SIGTERM and this long to write
# its outputs (marked interrupted) before SIGKILL.
TERM_GRACE_S = 15.0
EXIT_ERROR = 2
# `end` leaves this in the run's output directory; `run` then ends the phase (SIGUSR1).
END_MARKER = ".lsmbench-end-phase"
# How often `run --follow` looks for new intervals and the end marker.
FOLLOW_POLL_S = 0.25


class _ControllerGone(Exception):
    pass


def _emit(line: str) -> None:
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError) as e:
        raise _ControllerGone() from e


def _limits(text: str | None) -> Any:
    if not text:
        return None
    from lsmbench.throttle import ThrottleLimits

    return ThrottleLimits(**json.loads(text))


def _safe(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=,@-]+", "_", key)[:200]


def cmd_check(a: argparse.Namespace) -> dict[str, Any]:
    root = Path(a.data_dir)
    root.mkdir(parents=True, exist_ok=True)
    if not os.access(root, os.W_OK):
        raise RuntimeError(f"data directory {root} is not writable")
    space = os.statvfs(root)
    out: dict[str, Any] = {"hostname": os.uname().nodename, "python": sys.version.split()[0],
                           "data_dir": str(root), "throttle": None,
                           "data_free_bytes": space.f_bavail * space.f_frsize,
                           "data_total_bytes": space.f_blocks * space.f_frsize}
    limits = _limits(a.limits)
    if limits is not None:
        from lsmbench.throttle import ThrottleError, check_throttle_available

        try:
            layout = check_throttle_available(limits, data_dir=str(root))
            out["throttle"] = {"ok": True, "backend": layout.backend}
        except ThrottleError as e:
            out["throttle"] = {"ok": False, "error": str(e)}
    return out


def cmd_prepare(a: argparse.Namespace) -> dict[str, Any]:
    d = Path(a.root) / a.campaign / _safe(a.key)
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    warnings = []
    if a.drop_caches:
        os.sync()
        try:
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
        except OSError as e:
            warnings.append(f"could not drop the page cache ({e})")
    if a.fstrim:
        mount = d.resolve()
        while not os.path.ismount(mount) and mount != mount.parent:
            mount = mount.parent
        r = subprocess.run(["fstrim", "-v", str(mount)], capture_output=True, text=True,
                           check=False)
        if r.returncode != 0:
            warnings.append(f"fstrim {mount} failed: {(r.stderr or r.stdout).strip()}")
    return {"path": str(d), "warnings": warnings}


def cmd_snapshot(a: argparse.Namespace) -> dict[str, Any]:
    if os.path.exists(a.dst):
        shutil.rmtree(a.dst)
    r = subprocess.run(["cp", "-a", "--reflink=auto", a.src, a.dst], capture_output=True,
                       text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"could not copy {a.src} to {a.dst}: {r.stderr.strip()}")
    return {"path": a.dst}


def cmd_remove(a: argparse.Namespace) -> dict[str, Any]:
    if os.path.exists(a.path):
        shutil.rmtree(a.path)
    return {"removed": a.path}


class TimeseriesFollower:
    """The driver's time series as it grows: the whole lines appended to
    OUT/timeseries.jsonl.partial since the last call (the driver writes a line at a time and
    renames the file to timeseries.jsonl when it ends; both are followed)."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.offset = 0
        self._rest = b""

    def new_intervals(self) -> list[dict[str, Any]]:
        data = b""
        for name in ("timeseries.jsonl.partial", "timeseries.jsonl"):
            try:
                with open(self.out_dir / name, "rb") as f:
                    f.seek(self.offset)
                    data = f.read()
                break
            except OSError:
                continue
        self.offset += len(data)
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        out = []
        for line in lines:
            with contextlib.suppress(ValueError):
                doc = json.loads(line)
                if isinstance(doc, dict):
                    out.append(doc)
        return out


def end_phase(proc: subprocess.Popen[Any]) -> None:
    """Asks the driver to end its phase now, as if its duration had elapsed (SIGUSR1)."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGUSR1)


def terminate(proc: subprocess.Popen[Any]) -> int | None:
    """SIGTERM, then SIGKILL after TERM_GRACE_S; the exit code."""
    if proc.poll() is not None:
        return proc.returncode
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        return proc.wait()


def _wait(proc: subprocess.Popen[Any], timeout_s: float | None, out: Path,
          follow: bool = False) -> dict[str, Any]:
    start = last_tick = time.monotonic()
    timed_out = ended = False
    follower = TimeseriesFollower(out) if follow else None
    marker = out / END_MARKER
    poll_s = FOLLOW_POLL_S if follow else 1.0
    try:
        while True:
            try:
                code = proc.wait(timeout=poll_s)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            elapsed = now - start
            if follower is not None:
                for doc in follower.new_intervals():
                    _emit("interval " + json.dumps(doc, separators=(",", ":")))
            if not ended and marker.exists():
                ended = True
                end_phase(proc)
            if now - last_tick >= 1.0 - poll_s / 2:
                last_tick = now
                _emit(f"tick {elapsed:.1f}")
            if timeout_s is not None and elapsed > timeout_s:
                timed_out = True
                code = terminate(proc)
                break
    except BaseException:
        terminate(proc)
        raise
    return {"exit_code": code, "wall_s": time.monotonic() - start, "timed_out": timed_out,
            "ended_early": ended}


def cmd_run(a: argparse.Namespace) -> None:
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    run_path = out / "run.json"
    run_doc = sys.stdin.read()
    run_path.write_text(run_doc)
    data_dir = json.loads(run_doc).get("dir")
    argv = [a.driver, "--config", str(run_path), "--out", str(out)]
    limits = _limits(a.limits)
    # A closed stdout (controller gone) must not kill us before the driver is stopped.
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with open(out / "driver.log", "wb") as log:
        try:
            if limits is not None:
                from lsmbench.throttle import RunCgroup

                with RunCgroup(a.cgroup, limits, data_dir=data_dir) as cg:
                    proc = cg.popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
                    res = _wait(proc, a.timeout, out, a.follow)
                    with contextlib.suppress(Exception):
                        res["io_counters"] = cg.io_counters()
                    res["throttled"] = limits.has_io_limits
                    res["cgroup_backend"] = cg.backend
            else:
                proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
                res = _wait(proc, a.timeout, out, a.follow)
        except _ControllerGone:
            return
    with contextlib.suppress(OSError), _run_lock(out):
        (out / END_MARKER).unlink()
    _emit("result " + json.dumps(res))


@contextlib.contextmanager
def _run_lock(out: Path) -> Any:
    """An exclusive lock on the run's run.json: the run's removal of the end marker and an
    `end` request's check-and-create never interleave, so no request leaves a marker behind
    once the run is over."""
    import fcntl

    fd = os.open(out / "run.json", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def cmd_end(a: argparse.Namespace) -> dict[str, Any]:
    """Leaves the end marker in a run's existing output directory (see the module docstring).
    The directory is opened first and the marker made relative to it, so a run directory
    removed meanwhile (fetched) is never made again: the request then does nothing."""
    try:
        dfd = os.open(a.out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return {"requested": False, "reason": f"no run directory {a.out}"}
    import fcntl

    try:
        try:
            lock = os.open("run.json", os.O_RDONLY, dir_fd=dfd)
        except OSError as e:
            return {"requested": False, "reason": f"{a.out} is no run's directory (now): "
                    f"{e.strerror}"}
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # (see _run_lock)
            # The driver writes summary.json as it exits: the phase is over, nothing to end.
            with contextlib.suppress(FileNotFoundError):
                os.stat("summary.json", dir_fd=dfd)
                return {"requested": False, "reason": "the phase has ended"}
            os.close(os.open(END_MARKER, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=dfd))
        finally:
            os.close(lock)
    finally:
        os.close(dfd)
    return {"requested": True, "out": a.out}


def cmd_fingerprint(a: argparse.Namespace) -> dict[str, Any]:
    from lsmbench import fingerprint as fp

    driver = Path(a.driver) if a.driver else None
    out = fp.fingerprint(a.data_dir, a.hash, driver)
    out.pop("project", None)  # the controller records the project's commit
    return out


def cmd_calibrate(a: argparse.Namespace) -> dict[str, Any]:
    from lsmbench.calibrate import run_calibration

    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    try:
        profile = run_calibration(str(d), a.runtime, a.size_mb)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return json.loads(profile.to_json())


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lsmbench_node.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("check")
    s.add_argument("--data-dir", required=True)
    s.add_argument("--limits")
    s = sub.add_parser("prepare")
    s.add_argument("--root", required=True)
    s.add_argument("--campaign", required=True)
    s.add_argument("--key", required=True)
    s.add_argument("--drop-caches", action="store_true")
    s.add_argument("--fstrim", action="store_true")
    s = sub.add_parser("snapshot")
    s.add_argument("src")
    s.add_argument("dst")
    s = sub.add_parser("remove")
    s.add_argument("path")
    s = sub.add_parser("run")
    s.add_argument("--out", required=True)
    s.add_argument("--driver", required=True)
    s.add_argument("--limits")
    s.add_argument("--cgroup", default="lsmbench")
    s.add_argument("--timeout", type=float)
    s.add_argument("--follow", action="store_true")
    s = sub.add_parser("end")
    s.add_argument("--out", required=True)
    s = sub.add_parser("fingerprint")
    s.add_argument("--data-dir", required=True)
    s.add_argument("--hash", required=True)
    s.add_argument("--driver")
    s = sub.add_parser("calibrate")
    s.add_argument("--dir", required=True)
    s.add_argument("--runtime", type=float, default=5.0)
    s.add_argument("--size-mb", type=int, default=1024)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    try:
        if a.cmd == "run":
            cmd_run(a)
            return 0
        fn = {"check": cmd_check, "prepare": cmd_prepare, "snapshot": cmd_snapshot,
              "remove": cmd_remove, "end": cmd_end, "fingerprint": cmd_fingerprint,
              "calibrate": cmd_calibrate}[a.cmd]
        print(json.dumps(fn(a)))
        return 0
    except Exception as e:
        print(f"lsmbench_node {a.cmd}: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
