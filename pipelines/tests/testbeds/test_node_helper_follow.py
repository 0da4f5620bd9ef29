"""The node helper's live time series and early end (`run --follow`, `end`), with a fake
driver instead of lsm-driver: a Python script that appends an interval line to
OUT/timeseries.jsonl.partial every 0.2 s (each in two writes, so half lines are seen) and, on
SIGUSR1, ends as the driver does -- the file renamed to timeseries.jsonl, a summary, exit 0.
Then RemoteTestbed.run_driver with a monitor over a target that runs the commands here
instead of over SSH (the controller's side: the `end` request from its own thread)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from repo_paths import PIPELINES

HELPER = PIPELINES / "lsmbench" / "testbeds" / "node_helper.py"

FAKE_DRIVER = r'''
import json, os, signal, sys, time
out = sys.argv[sys.argv.index("--out") + 1]
cfg = json.load(open(sys.argv[sys.argv.index("--config") + 1]))
ended = False
def usr1(*_):
    global ended
    ended = True
def term(*_):
    open(os.path.join(out, "terminated"), "w").close()
    sys.exit(3)
signal.signal(signal.SIGUSR1, usr1)
signal.signal(signal.SIGTERM, term)
part = os.path.join(out, "timeseries.jsonl.partial")
start = time.monotonic()
i = 0
with open(part, "w") as f:
    while not ended and time.monotonic() - start < cfg["duration_s"]:
        time.sleep(0.2)
        line = json.dumps({"schema": "lsm-driver/interval/1", "interval": i,
                           "t_end_s": time.monotonic() - start}) + "\n"
        f.write(line[:10]); f.flush(); time.sleep(0.02)
        f.write(line[10:]); f.flush()
        i += 1
os.rename(part, os.path.join(out, "timeseries.jsonl"))
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump({"status": "ok", "ended_by_signal": ended, "intervals": i}, f)
'''


@pytest.fixture
def fake_driver(tmp_path: Path) -> Path:
    p = tmp_path / "fake-driver"
    p.write_text(f"#!{sys.executable}\n{FAKE_DRIVER}")
    p.chmod(0o755)
    return p


def helper(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(HELPER), *args], capture_output=True, text=True,
                          timeout=60, check=False, **kw)


def start_run(out: Path, driver: Path, duration_s: float, *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, str(HELPER), "run", "--out", str(out), "--driver",
                             str(driver), *extra], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"dir": "", "duration_s": duration_s}))
    proc.stdin.close()
    return proc


def test_follow_streams_intervals_and_end_ends_the_phase(tmp_path, fake_driver):
    out = tmp_path / "out"
    t0 = time.monotonic()
    proc = start_run(out, fake_driver, 30, "--follow")
    assert proc.stdout is not None
    lines: list[str] = []
    requested = None
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if sum(x.startswith("interval ") for x in lines) == 2 and requested is None:
                requested = helper("end", "--out", str(out))
                assert requested.returncode == 0, requested.stderr
                assert json.loads(requested.stdout)["requested"] is True
                # Twice is the same as once; or, if the phase has ended meanwhile (a
                # loaded machine), nothing: no marker is left behind either way (below).
                again = json.loads(helper("end", "--out", str(out)).stdout)
                assert again["requested"] is True or \
                    again["reason"] == "the phase has ended", again
        assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    wall = time.monotonic() - t0
    assert wall < 25, lines  # the phase's 30 s were cut short
    intervals = [json.loads(x[9:]) for x in lines if x.startswith("interval ")]
    assert len(intervals) >= 2
    assert [d["interval"] for d in intervals] == list(range(len(intervals)))
    results = [json.loads(x[7:]) for x in lines if x.startswith("result ")]
    assert len(results) == 1 and lines[-1].startswith("result ")
    res = results[0]
    assert (res["exit_code"], res["timed_out"], res["ended_early"]) == (0, False, True)
    # The driver was asked (SIGUSR1), not stopped (SIGTERM); its outputs are complete and the
    # marker is gone.
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ended_by_signal"] is True
    assert not (out / "terminated").exists()
    assert not (out / "timeseries.jsonl.partial").exists()
    done = [json.loads(x) for x in (out / "timeseries.jsonl").read_text().splitlines()]
    assert len(done) == summary["intervals"] >= len(intervals)
    assert done[:len(intervals)] == intervals
    assert sorted(p.name for p in out.iterdir()) == [
        "driver.log", "run.json", "summary.json", "timeseries.jsonl"]


def test_run_without_follow_prints_no_intervals(tmp_path, fake_driver):
    out = tmp_path / "out"
    r = helper("run", "--out", str(out), "--driver", str(fake_driver),
               input=json.dumps({"dir": "", "duration_s": 1.5}))
    assert r.returncode == 0, r.stderr
    kinds = {ln.split(" ", 1)[0] for ln in r.stdout.splitlines()}
    assert kinds == {"tick", "result"}
    res = json.loads(r.stdout.splitlines()[-1][7:])
    assert (res["exit_code"], res["ended_early"]) == (0, False)
    assert json.loads((out / "summary.json").read_text())["ended_by_signal"] is False


def test_end_is_harmless_where_there_is_no_running_phase(tmp_path, fake_driver):
    # No such directory (a run already fetched and removed): nothing is made.
    gone = tmp_path / "gone"
    r = helper("end", "--out", str(gone))
    assert r.returncode == 0 and json.loads(r.stdout)["requested"] is False
    assert not gone.exists()
    # A directory that is no run's: left alone.
    other = tmp_path / "other"
    other.mkdir()
    r = helper("end", "--out", str(other))
    assert r.returncode == 0 and json.loads(r.stdout)["requested"] is False
    assert list(other.iterdir()) == []
    # After the driver has exited: the request is refused and leaves nothing behind.
    out = tmp_path / "out"
    r = helper("run", "--out", str(out), "--driver", str(fake_driver), "--follow",
               input=json.dumps({"dir": "", "duration_s": 0.5}))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1][7:])["ended_early"] is False
    r = helper("end", "--out", str(out))
    assert r.returncode == 0
    assert json.loads(r.stdout) == {"requested": False, "reason": "the phase has ended"}
    assert sorted(p.name for p in out.iterdir()) == [
        "driver.log", "run.json", "summary.json", "timeseries.jsonl"]
    assert json.loads((out / "summary.json").read_text())["ended_by_signal"] is False


def test_follow_controller_gone_stops_the_driver(tmp_path, fake_driver):
    """The liveness check holds with --follow: once the controller's end of the pipe is
    closed, the next line cannot be written and the driver is stopped (SIGTERM)."""
    out = tmp_path / "out"
    proc = start_run(out, fake_driver, 30, "--follow")
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith(("interval ", "tick "))
    proc.stdout.close()
    assert proc.wait(timeout=30) == 0
    assert (out / "terminated").exists()


# -- the controller's side ------------------------------------------------------------------


class LocalTarget:
    """An SshTarget that runs the node's commands here (argv as is, no ssh)."""

    name = "n0"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def run(self, remote, *, timeout=120, check=True, **_kw):
        self.calls.append(list(remote))
        r = subprocess.run(list(remote), capture_output=True, timeout=timeout, check=False)
        assert not check or r.returncode == 0, r.stderr
        return r

    def stream(self, remote, *, input, on_line):
        from lsmbench.testbeds.sshconn import SshTarget

        self.calls.append(list(remote))
        # The real reading loop, with the command run here instead of through ssh.
        target = SshTarget.__new__(SshTarget)
        target.argv = lambda cmd: ["/bin/sh", "-c", cmd]  # type: ignore[method-assign]
        target.host = SimpleNamespace(name="n0")
        return SshTarget.stream(target, remote, input=input, on_line=on_line)

    def fetch_dir(self, remote_dir, local_dir, *, remove=True, sudo=()):
        shutil.copytree(remote_dir, local_dir, dirs_exist_ok=True)
        if remove:
            shutil.rmtree(remote_dir)


def remote_bed(tmp_path: Path, driver: Path):
    from lsmbench.testbeds.base import Node
    from lsmbench.testbeds.ssh import SshTestbed
    from lsmbench.testbeds.state import TestbedState

    root = tmp_path / "root"
    (root / "lib").mkdir(parents=True)
    shutil.copy2(HELPER, root / "lib" / "lsmbench_node.py")
    spec = SimpleNamespace(remote_root=str(root), python=sys.executable, become=False)
    tb = SshTestbed(spec, campaign="c", state=TestbedState("t", tmp_path / "testbeds"))
    target = LocalTarget()
    tb.targets = {"n0": target}  # type: ignore[dict-item]
    node = Node(name="n0", data_root=str(tmp_path / "data"), driver=str(driver),
                facts={"remote_root": str(root)})
    return tb, node, target


def test_remote_run_driver_monitor_ends_the_phase(tmp_path, fake_driver):
    tb, node, target = remote_bed(tmp_path, fake_driver)
    seen: list[dict] = []

    def monitor(fresh: list[dict]) -> bool:
        seen.extend(fresh)
        return len(seen) >= 2

    run = tb.run_driver(node, {"dir": "", "duration_s": 30}, tmp_path / "point",
                        monitor=monitor, timeout_s=120)
    assert run.ended_early is True and run.exit_code == 0 and not run.timed_out
    assert run.wall_s < 10
    assert "--follow" in target.calls[0]
    # Asked once, with a second command naming the same output directory.
    ends = [c for c in target.calls if "end" in c]
    assert len(ends) == 1
    out_arg = target.calls[0][target.calls[0].index("--out") + 1]
    assert ends[0][ends[0].index("--out") + 1] == out_arg
    # The monitor is not called again once it said stop.
    assert len(seen) == 2 and [d["interval"] for d in seen] == [0, 1]
    out = tmp_path / "point"
    assert sorted(p.name for p in out.iterdir()) == [
        "driver.log", "run.json", "summary.json", "timeseries.jsonl"]
    assert json.loads((out / "summary.json").read_text())["ended_by_signal"] is True
    assert not Path(out_arg).exists()


def test_remote_run_driver_without_monitor_is_unchanged(tmp_path, fake_driver):
    tb, node, target = remote_bed(tmp_path, fake_driver)
    run = tb.run_driver(node, {"dir": "", "duration_s": 0.6}, tmp_path / "point",
                        cgroup_name="cg", timeout_s=60)
    assert run.ended_early is False and run.exit_code == 0
    assert len(target.calls) == 1
    argv = target.calls[0]
    out_arg = argv[argv.index("--out") + 1]
    assert argv == [sys.executable, f"{tmp_path}/root/lib/lsmbench_node.py", "run", "--out",
                    out_arg, "--driver", str(fake_driver), "--cgroup", "cg", "--timeout", "60"]


def test_remote_end_request_after_the_driver_exited_leaves_nothing(tmp_path, fake_driver):
    """A monitor that says stop only after the driver has exited by itself: the request
    reaches the node (the run's directory is still there) but ends nothing, and its marker
    does not reach the fetched outputs."""
    tb, node, target = remote_bed(tmp_path, fake_driver)

    def slow_monitor(fresh: list[dict]) -> bool:
        time.sleep(2.0)  # the driver (1 s) ends meanwhile
        return True

    run = tb.run_driver(node, {"dir": "", "duration_s": 1.0}, tmp_path / "point",
                        monitor=slow_monitor)
    assert (run.exit_code, run.ended_early) == (0, False)
    assert len([c for c in target.calls if "end" in c]) == 1
    out = tmp_path / "point"
    assert sorted(p.name for p in out.iterdir()) == [
        "driver.log", "run.json", "summary.json", "timeseries.jsonl"]
    assert json.loads((out / "summary.json").read_text())["ended_by_signal"] is False
