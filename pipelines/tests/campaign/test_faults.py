"""Faults during a campaign, with real filesystems and real processes (docs/faults.md):
the data disk full, the results disk full, a driver killed by a signal.

Marked slow: each test runs lsm-driver for real. The small filesystems are a sized tmpfs
and a loop-mounted ext4 image (fixtures_smallfs), so these tests need root.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures_smallfs import ext4_image, fill, tmpfs
from lsmbench.faults import (
    DATA_DISK_FULL,
    KILLED_BY_SIGNAL,
    RESULTS_DISK_FULL,
    FaultContext,
    diagnose_driver,
    last_lines,
)
from lsmbench.store import TMP_DIR, Store

pytestmark = [pytest.mark.slow, pytest.mark.root]  # real filesystems, mounted

# Records of 1 KiB: the big point's 80 MB do not fit the 48 MiB data disk; the small point's
# tree (about 20 MiB at its peak, with the versions its updates leave) does.
BIG, SMALL = 80000, 2000
DATA_DISK = 48


def write_spec(path: Path, data_dir: Path, **over: object) -> Path:
    spec = {
        "name": path.stem,
        "engine": {"name": "builtin", "options": {"memtable_bytes": "1M"}},
        "matrix": {"policy": ["tiering", "leveling"]},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": SMALL}},
        "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                   "running": {"duration": "1s"}},
        "testbed": {"type": "local", "data_dir": str(data_dir)},
        **over,
    }
    path.write_text(yaml.safe_dump(spec))
    return path


def lsmbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsmbench", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def run_acting_on(args: list[str], act: Callable[[dict], bool],
                  **popen: Any) -> tuple[int, str, bool]:
    """Runs `lsmbench ARGS` (with --json), calling act with each event until it returns True
    (it did what the test does mid-campaign); (exit code, stderr, whether act did it)."""
    proc = subprocess.Popen([sys.executable, "-m", "lsmbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)
    acted = False
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if act(json.loads(line)):
                acted = True
                break
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:  # a hung campaign must not outlive the test
            proc.kill()
            proc.wait()
    return proc.returncode, stderr, acted


def visible_points(cdir: Path) -> dict[str, str]:
    """The point directories a reader of the store sees, with their state."""
    return {p.parent.name: json.loads(p.read_text())["state"]
            for p in cdir.glob("*/point.json") if not p.parent.name.startswith(".")}


def test_data_disk_full_fails_the_point_keeps_its_outputs_and_goes_on(tmp_path, driver_path):
    with tmpfs(tmp_path / "data", f"{DATA_DISK}m") as data:
        spec = write_spec(tmp_path / "datafull.yaml", data,
                          matrix={"workload.set.record_count": [BIG, SMALL]})
        results = tmp_path / "results"
        # The plan sees it coming: the big point's data is larger than the data disk.
        plan = lsmbench("plan", str(spec), "--json", "--results", str(results))
        assert plan.returncode == 0, plan.stderr
        doc = json.loads(plan.stdout)
        big_id, small_id = (f"record_count={n},rep=0" for n in (BIG, SMALL))
        assert doc["data_bytes"][big_id] > DATA_DISK << 20 > doc["data_bytes"][small_id]
        assert any("data disk too small" in w and big_id in w for w in doc["warnings"])

        r = lsmbench("run", str(spec), "--json", "--results", str(results),
                     "--set", f"testbed.driver={driver_path}")
        assert r.returncode == 1, r.stderr  # a point failed; the campaign went on
        assert "Traceback" not in r.stderr
        store = Store(results)
        big = store.point("datafull", big_id)
        assert big is not None and big.state == "failed"
        err = big.data["error"]
        assert err["fault"] == DATA_DISK_FULL and err["stage"] == "load"
        assert f"the engine's data directory {data}/datafull/" in err["message"]
        assert "ran out of space" in err["message"]
        assert f"free of {DATA_DISK}.0 MiB" in err["message"]
        assert "No space left on device" in err["message"]  # the driver's own last lines
        # The driver's outputs so far are kept in the failed point's directory.
        for f in ("run.json", "driver.log", "summary.json"):
            assert (big.path / "load" / f).is_file(), f
        assert "No space left on device" in (big.path / "load" / "driver.log").read_text()
        small = store.point("datafull", small_id)
        assert small is not None and small.state == "complete"
        # The data directories were cleaned: the disk is empty again.
        assert list((data / "datafull").iterdir()) == []
        ends = [e for e in events(r.stdout) if e["event"] == "point_end"]
        assert [(e["point"], e["state"]) for e in ends] == [(big_id, "failed"),
                                                           (small_id, "complete")]


def test_results_disk_full_stops_the_campaign_and_resume_finishes_it(tmp_path, data_root,
                                                                     driver_path):
    with ext4_image(tmp_path / "results", 16) as results:
        spec = write_spec(tmp_path / "resfull.yaml", data_root / "data")
        args = ["run", str(spec), "--json", "--results", str(results),
                "--set", f"testbed.driver={driver_path}"]
        filler = results / "filler"

        def fill_after_the_first_point(ev: dict) -> bool:
            if ev["event"] != "point_end":
                return False
            fill(filler)  # the first point is in; nothing more fits
            return True

        code, stderr, filled = run_acting_on(args, fill_after_the_first_point)
        assert filled, "the first point never ended"
        assert code == 3, stderr
        assert "Traceback" not in stderr
        assert f"the results store {results} ran out of space" in stderr
        assert "lsmbench run SPEC --resume" in stderr
        # Nothing looks complete that is not: the first point only, whole.
        cdir = results / "resfull"
        assert visible_points(cdir) == {"policy=tiering,rep=0": "complete"}
        assert list((cdir / TMP_DIR).iterdir()) == []  # the unfinished point was discarded
        done = cdir / "policy=tiering,rep=0"
        for f in ("spec.json", "pipeline.log", "testing/summary.json", "running/summary.json"):
            assert (done / f).is_file(), f

        filler.unlink()
        r = lsmbench(*args, "--resume")
        assert r.returncode == 0, r.stderr
        ev = events(r.stdout)
        assert [(e["event"], e["point"]) for e in ev if e["event"] in ("point_skipped",
                                                                       "point_end")] == [
            ("point_skipped", "policy=tiering,rep=0"), ("point_end", "policy=leveling,rep=0")]
        assert visible_points(cdir) == {"policy=tiering,rep=0": "complete",
                                        "policy=leveling,rep=0": "complete"}
        runs = json.loads((cdir / "campaign.json").read_text())["runs"]
        assert "ran out of space" in runs[0]["stopped"] and runs[1]["complete"] == 1


def _driver_pid(out_dir: Path, deadline_s: float = 120.0) -> int:
    """The pid of the lsm-driver writing to out_dir, once it runs."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                argv = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"lsm-driver") and str(out_dir).encode() in argv:
                return int(d.name)
        time.sleep(0.05)
    raise AssertionError(f"no lsm-driver for {out_dir} within {deadline_s}s")


def _no_core_files() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def test_driver_killed_by_a_signal_is_named_and_resume_redoes_it(tmp_path, data_root,
                                                                 driver_path):
    spec = write_spec(tmp_path / "killed.yaml", data_root / "data")
    results = tmp_path / "results"
    args = ["run", str(spec), "--json", "--results", str(results),
            "--set", f"testbed.driver={driver_path}"]
    # No core file lands in the working directory: the hint then says how to get one.

    def abort_the_first_testing_phase(ev: dict) -> bool:
        if ev["event"] != "phase_start" or ev["phase"] != "testing":
            return False
        tmp = results / "killed" / TMP_DIR
        out = next(tmp.glob("policy=tiering,rep=0.*")) / "testing"
        os.kill(_driver_pid(out), signal.SIGABRT)  # as an engine's abort() would
        return True

    code, stderr, aborted = run_acting_on(args, abort_the_first_testing_phase, cwd=tmp_path,
                                          preexec_fn=_no_core_files)
    assert aborted and code == 1, stderr
    rec = Store(results).point("killed", "policy=tiering,rep=0")
    assert rec is not None and rec.state == "failed"
    err = rec.data["error"]
    assert (err["fault"], err["stage"], err["exit_code"]) == (KILLED_BY_SIGNAL, "testing",
                                                             -signal.SIGABRT)
    msg = err["message"]
    assert "lsm-driver was killed by SIGABRT (signal 6): aborted" in msg
    if Path("/proc/sys/kernel/core_pattern").read_text().startswith("|"):
        assert "core handler" in msg or "coredumpctl" in msg
    else:
        assert "no core dump was written" in msg and "ulimit -c unlimited" in msg
    # The last lines of the driver's log, as kept in the failed point's directory.
    tail = last_lines((rec.path / "testing" / "driver.log").read_text())
    assert all(line in msg for line in tail) and (tail or "driver.log is empty" in msg)
    assert Store(results).point("killed", "policy=leveling,rep=0").state == "complete"

    r = lsmbench(*args, "--resume")
    assert r.returncode == 0, r.stderr
    ends = [e["point"] for e in events(r.stdout) if e["event"] == "point_end"]
    assert ends == ["policy=tiering,rep=0"]
    assert Store(results).point("killed", "policy=tiering,rep=0").state == "complete"


def test_a_process_killed_outright_is_told_apart_from_bad_input(tmp_path):
    """SIGKILL (the OOM killer's) of a real process, and an exit that is the point's own."""
    proc = subprocess.Popen(["sleep", "60"])
    proc.kill()
    code = proc.wait()
    where = FaultContext(data_dir=str(tmp_path / "data" / "p"), data_root=str(tmp_path / "data"),
                         out_dir=tmp_path / "out", store_root=tmp_path / "results")
    fault = diagnose_driver(code, "line one\nline two\n", where, proc.pid)
    assert fault is not None and fault.kind == KILLED_BY_SIGNAL and fault.node_local
    assert "killed by SIGKILL (signal 9)" in fault.message and "OOM killer" in fault.message
    assert fault.message.endswith("driver.log ends:\n    line one\n    line two")
    assert diagnose_driver(2, "lsm-driver: workload.value_size: not a number", where) is None
    # ENOSPC on a path of the results store is the store's, not the data disk's.
    full = diagnose_driver(1, f"lsm-driver: writing outputs: IO error: {tmp_path}/results/"
                              "x/timeseries.jsonl.partial: No space left on device", where)
    assert full is not None and full.kind == RESULTS_DISK_FULL and not full.node_local
    data = diagnose_driver(1, f"lsm-driver: engine error: IO error: write {tmp_path}/data/p/"
                              "000007.wal: No space left on device", where)
    assert data is not None and data.kind == DATA_DISK_FULL and data.node_local
