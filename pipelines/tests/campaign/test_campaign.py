"""End to end with the real lsm-driver: a throttled campaign, a failing point, kill + resume.

Marked slow: each test runs the driver for real for tens of seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from lsmbench.driverio import DriverOutputs
from lsmbench.method.verdict import (
    judge,
    max_throughput,
    max_throughput_of_testing,
    running_coverage,
    running_figures,
)
from lsmbench.store import TMP_DIR, Store

pytestmark = pytest.mark.slow

MiB = 1 << 20


def write_spec(path: Path, data_root: Path, **over) -> Path:
    spec = {
        "name": "e2e",
        "engine": {"name": "builtin", "options": {"memtable_bytes": "1M"}},
        "matrix": {"policy": ["tiering", "leveling"]},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 20000}},
        "phases": {"testing": {"duration": "5s", "warmup": "1s"},
                   "running": {"duration": "3s"}},
        "testbed": {"type": "local", "data_dir": str(data_root / "data")},
    }
    for k, v in over.items():
        spec[k] = v
    path.write_text(yaml.safe_dump(spec))
    return path


def lsmbench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsmbench", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def throttle_available(data_root: Path) -> str | None:
    try:
        from lsmbench.throttle import ThrottleError, ThrottleLimits, check_throttle_available
    except ImportError as e:
        return f"throttle module missing: {e}"
    try:
        check_throttle_available(ThrottleLimits(write_bps=16 * MiB), data_dir=data_root)
    except ThrottleError as e:
        return str(e)
    return None


def test_throttled_campaign_end_to_end(tmp_path, data_root, driver_path):
    why = throttle_available(data_root)
    if why:
        pytest.skip(f"cgroup throttling unavailable here: {why}")
    spec = write_spec(tmp_path / "e2e.yaml", data_root,
                      throttle={"write_bps": "16MiB/s", "phases": ["testing", "running"]})
    results = tmp_path / "results"
    r = lsmbench("run", str(spec), "--json", "--results", str(results),
                 "--set", f"testbed.driver={driver_path}")
    assert r.returncode == 0, r.stderr + r.stdout
    ev = events(r.stdout)
    assert ev[0]["event"] == "campaign_start" and ev[0]["todo"] == 2
    ends = [e for e in ev if e["event"] == "point_end"]
    assert [e["state"] for e in ends] == ["complete", "complete"]
    summary = ev[-1]
    assert summary["event"] == "campaign_end" and summary["complete"] == 2
    assert summary["failed"] == 0 and summary["overhead_pct"] < 20

    store = Store(results)
    recs = store.points("e2e")
    assert sorted(r.point_id for r in recs) == ["policy=leveling,rep=0", "policy=tiering,rep=0"]
    for rec in recs:
        d = rec.path
        for f in ("point.json", "spec.json", "fingerprint.json", "pipeline.log"):
            assert (d / f).is_file(), f
        for ph in ("load", "testing", "running"):
            for f in ("run.json", "timeseries.jsonl", "summary.json", "histograms.json",
                      "driver.log"):
                assert (d / ph / f).is_file(), f"{ph}/{f}"
        p = rec.data
        # The figures in point.json are recomputable from the stored outputs.
        testing = DriverOutputs.read(d / "testing")
        mt = max_throughput_of_testing(testing.intervals, 1.0)
        assert p["max_throughput"]["writes_per_s"] == pytest.approx(mt.writes_per_s)
        # The builtin engine tells its flushes: the maximum is the rate over whole memtable
        # cycles (the default), the interval count recorded beside it.
        assert mt.method == "cycles" and mt.cycles is not None and mt.cycles >= 3
        assert mt.interval_writes_per_s == pytest.approx(
            max_throughput(testing.intervals, 1.0).writes_per_s)
        assert p["max_throughput"]["cycle_writes_per_s"] == pytest.approx(mt.cycle_writes_per_s)
        assert mt.window_start_s >= 1.0
        run_doc = json.loads((d / "running" / "run.json").read_text())
        assert run_doc["phase"] == "running"
        assert run_doc["arrival"]["rate"] == pytest.approx(0.95 * mt.writes_per_s, abs=1e-3)
        assert run_doc["engine_options"]["merge_policy"] == p["params"]["policy"]
        running = DriverOutputs.read(d / "running")
        fig = running_figures(0.95, run_doc["arrival"]["rate"], running.intervals,
                              running.summary, running.histograms)
        v = judge(fig, 1.0, 1.0,
                  coverage=running_coverage(testing.intervals, running.intervals, fig))
        assert p["verdict"]["sustainable"] is v.sustainable
        assert p["verdict"]["p99_write_latency_s"] == pytest.approx(v.p99_write_latency_s)
        assert p["verdict"]["final_queue_length"] == v.final_queue_length
        # The throttle was real: the cgroup's own counters stay under the limit.
        for ph in ("testing", "running"):
            info = p["phases"][ph]
            assert info["throttled"] is True and info["cgroup_backend"] in ("v1", "v2")
            written = sum(c["write_bytes"] for c in info["io_counters"].values())
            assert written > 0
            assert written / info["wall_s"] <= 16 * MiB * 1.15, (ph, written, info["wall_s"])
        assert p["phases"]["load"]["throttled"] is False
        # The environment fingerprint.
        fp = json.loads((d / "fingerprint.json").read_text())
        for k in ("hostname", "kernel", "cpu_model", "disk", "project", "options_hash"):
            assert fp.get(k) is not None, k
        assert fp["options_hash"] == p["config_hash"]
        assert fp["disk"]["device"]
    # Data directories are removed after each point.
    assert not any((data_root / "data" / "e2e").iterdir())

    # ls shows the campaign; a second run without --resume refuses; --resume skips all.
    ls = lsmbench("ls", "--json", "--results", str(results))
    camp = json.loads(ls.stdout)["campaigns"]
    assert camp == [{**camp[0], "campaign": "e2e", "complete": 2, "failed": 0, "planned": 2}]
    again = lsmbench("run", str(spec), "--results", str(results),
                     "--set", f"testbed.driver={driver_path}")
    assert again.returncode == 3 and "--resume" in again.stderr
    resumed = lsmbench("run", str(spec), "--json", "--resume", "--results", str(results),
                       "--set", f"testbed.driver={driver_path}")
    assert resumed.returncode == 0, resumed.stderr
    ev = events(resumed.stdout)
    assert [e["event"] for e in ev if e["event"].startswith("point")] == ["point_skipped"] * 2
    # Nothing ran: no orchestration overhead (it was 100 % of nothing).
    end = next(e for e in ev if e["event"] == "campaign_end")
    assert end["driver_s"] == 0 and end["overhead_pct"] is None


def test_failing_point_is_recorded_and_campaign_goes_on(tmp_path, data_root, driver_path):
    # A workload value the driver rejects is bad input: validate (and run) refuse the spec
    # before anything runs, naming the dimension (lsm-driver --check-config).
    bad = write_spec(tmp_path / "bad.yaml", data_root, name="bad",
                     matrix={"workload.set.value_size": [1000, "lots"]},
                     workload={"file": "update-uniform-1kb", "set": {"record_count": 5000}})
    r = lsmbench("run", str(bad), "--quiet", "--results", str(tmp_path / "bad-results"),
                 "--set", f"testbed.driver={driver_path}")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "matrix.workload.set.value_size: " in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "bad-results" / "bad").exists()

    # So is a warm-up that leaves no whole interval to measure (the driver's rule, asked
    # before anything runs: lsm-driver --check-config).
    short = write_spec(tmp_path / "short.yaml", data_root, name="short",
                       phases={"testing": {"duration": "1s", "warmup": "0.9s"},
                               "running": {"duration": "1s"}})
    r = lsmbench("validate", str(short), "--set", f"testbed.driver={driver_path}")
    assert r.returncode == 2 and "phases.testing.warmup: rounded up to whole intervals" in \
        r.stderr, r.stderr

    # A point that fails while it runs (its testing phase outlives its timeout): recorded
    # as failed, with the stage and the reason, and the campaign goes on.
    spec = write_spec(tmp_path / "fail.yaml", data_root,
                      name="fail",
                      matrix={"phases.testing.timeout": ["60s", "1s"]},
                      phases={"testing": {"duration": "3s", "warmup": "0.9s"},
                              "running": {"duration": "1s"}},
                      workload={"file": "update-uniform-1kb", "set": {"record_count": 5000}})
    results = tmp_path / "results"
    r = lsmbench("run", str(spec), "--quiet", "--results", str(results),
                 "--set", f"testbed.driver={driver_path}")
    assert r.returncode == 1, r.stdout + r.stderr  # a point failed
    assert "1 complete, 1 failed" in r.stdout
    store = Store(results)
    rec = store.point("fail", "timeout=1s,rep=0")
    assert rec is not None and rec.state == "failed"
    err = rec.data["error"]
    assert err["stage"] == "testing" and "exceeded its 1s timeout" in err["message"]
    ok = store.point("fail", "timeout=60s,rep=0")
    assert ok is not None and ok.state == "complete"
    assert "FAILED timeout=1s,rep=0: testing: lsm-driver exceeded its 1s timeout" in r.stderr


def _drivers_of(path: Path) -> list[int]:
    """Pids of processes whose command line mentions path (the campaign's results)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(path) in cmd and "lsm-driver" in cmd:
            pids.append(int(d.name))
    return pids


def test_kill_during_a_point_then_resume(tmp_path, data_root, driver_path):
    spec = write_spec(tmp_path / "kill.yaml", data_root, name="kill",
                      matrix={"policy": ["tiering", "leveling", "size-tiered"]},
                      phases={"testing": {"duration": "3s", "warmup": "0.5s"},
                              "running": {"duration": "2s"}})
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsmbench", "run", str(spec), "--json", "--results",
         str(results), "--set", f"testbed.driver={driver_path}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    completed = []
    killed_in = None
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 240
        for line in proc.stdout:
            ev = json.loads(line)
            if ev["event"] == "point_end":
                completed.append(ev["point"])
            if completed and ev["event"] == "phase_start" and ev["phase"] == "testing":
                time.sleep(1.0)  # in the middle of the second point's testing phase
                killed_in = ev["point"]
                proc.send_signal(signal.SIGKILL)
                break
            assert time.monotonic() < deadline
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert completed == ["policy=tiering,rep=0"] and killed_in == "policy=leveling,rep=0"

    # Nothing that looks complete besides the finished point; the half point is in .tmp.
    cdir = results / "kill"
    visible = sorted(p.name for p in cdir.iterdir() if not p.name.startswith("."))
    assert visible == ["campaign.json", "policy=tiering,rep=0"]
    for p in cdir.rglob("point.json"):
        if json.loads(p.read_text()).get("state") == "complete":
            assert TMP_DIR not in p.parts, p
    assert [p.name.split(".")[0] for p in (cdir / TMP_DIR).iterdir()] == ["policy=leveling,rep=0"]
    # The driver died with lsmbench (no orphan still writing).
    deadline = time.monotonic() + 5
    while _drivers_of(cdir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _drivers_of(cdir) == []

    r = lsmbench("run", str(spec), "--json", "--resume", "--results", str(results),
                 "--set", f"testbed.driver={driver_path}")
    assert r.returncode == 0, r.stderr
    ev = events(r.stdout)
    assert [(e["event"], e["point"]) for e in ev if e["event"].startswith("point_")
            and e["event"] != "point_start"] == [
        ("point_skipped", "policy=tiering,rep=0"),
        ("point_end", "policy=leveling,rep=0"),
        ("point_end", "policy=size-tiered,rep=0"),
    ]
    assert any(e["event"] == "message" and "unfinished" in e["text"] for e in ev)
    recs = Store(results).points("kill")
    assert [(r.point_id, r.state) for r in recs] == [
        ("policy=leveling,rep=0", "complete"), ("policy=size-tiered,rep=0", "complete"),
        ("policy=tiering,rep=0", "complete")]
    assert list((cdir / TMP_DIR).iterdir()) == []
    assert os.listdir(data_root / "data" / "kill") == []


def test_utilization_sweep_and_start_modes(tmp_path, data_root, driver_path):
    spec = write_spec(tmp_path / "sweep.yaml", data_root, name="sweep",
                      matrix={"phases.running.start": ["reload", "continue"]},
                      workload={"file": "update-uniform-1kb", "set": {"record_count": 5000}},
                      phases={"testing": {"duration": "3s", "warmup": "1s"},
                              "running": {"duration": "2s", "utilization": 0.9,
                                          "utilizations": [0.5, 0.9]}})
    results = tmp_path / "results"
    r = lsmbench("run", str(spec), "--quiet", "--results", str(results),
                 "--set", f"testbed.driver={driver_path}")
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(results)
    reload = store.point("sweep", "start=reload,rep=0")
    cont = store.point("sweep", "start=continue,rep=0")
    assert reload is not None and cont is not None
    assert sorted(reload.data["phases"]) == ["load", "reload@0.5", "reload@0.9", "running@0.5",
                                             "running@0.9", "testing"]
    assert sorted(cont.data["phases"]) == ["load", "running@0.5", "running@0.9", "testing"]
    for rec in (reload, cont):
        mt = rec.data["max_throughput"]["writes_per_s"]
        rates = [json.loads((rec.path / f"running@{u}" / "run.json").read_text())
                 ["arrival"]["rate"] for u in ("0.5", "0.9")]
        assert rates == [pytest.approx(0.5 * mt, abs=1e-3), pytest.approx(0.9 * mt, abs=1e-3)]
        assert [v["utilization"] for v in rec.data["verdicts"]] == [0.5, 0.9]
        head = rec.data["verdict"]
        assert head["utilization"] == 0.9 and head["phase"] == "running@0.9"
        ok = [v["utilization"] for v in rec.data["verdicts"] if v["sustainable"]]
        assert head["max_sustainable_utilization"] == (max(ok) if ok else None)


def test_shared_testing_phase_and_its_resume(tmp_path, data_root, driver_path):
    spec = write_spec(tmp_path / "shared.yaml", data_root, name="shared",
                      matrix={"scheduler": ["single", "fair", "greedy"]},
                      workload={"file": "update-uniform-1kb", "set": {"record_count": 5000}},
                      phases={"load": {"engine_options": {"merge_scheduler": "single"}},
                              "testing": {"duration": "3s", "warmup": "1s",
                                          "engine_options": {"merge_scheduler": "fair"},
                                          "shared_across": ["scheduler"]},
                              "running": {"duration": "2s"}})
    results = tmp_path / "results"
    args = ["run", str(spec), "--quiet", "--results", str(results),
            "--set", f"testbed.driver={driver_path}"]
    r = lsmbench(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(results)
    ids = [f"scheduler={s},rep=0" for s in ("single", "fair", "greedy")]
    leader, *followers = [store.point("shared", i) for i in ids]
    mt = leader.data["max_throughput"]
    assert "shared_from" not in mt and (leader.path / "testing" / "summary.json").is_file()

    def rate(rec) -> float:
        return json.loads((rec.path / "running" / "run.json").read_text())["arrival"]["rate"]

    def coverage(rec) -> dict:
        return next(c for c in rec.data["verdict"]["criteria"] if c["name"] == "window_coverage")

    # The followers judge their running window against the leader's testing phase: the same
    # deepest level, not "not checked" for want of a testing phase of their own.
    assert coverage(leader)["ok"] is not None, coverage(leader)
    for rec in followers:
        assert coverage(rec)["ok"] is not None, coverage(rec)
        assert rec.data["verdict"]["coverage"]["deepest_level"] == \
            leader.data["verdict"]["coverage"]["deepest_level"]

    for rec in followers:
        assert rec.data["state"] == "complete"
        assert rec.data["max_throughput"]["shared_from"] == ids[0]
        assert rec.data["max_throughput"]["writes_per_s"] == mt["writes_per_s"]
        assert not (rec.path / "testing").exists() and "testing" not in rec.data["phases"]
        assert rate(rec) == pytest.approx(rate(leader), abs=1e-3)
    assert rate(leader) == pytest.approx(0.95 * mt["writes_per_s"], abs=1e-3)

    # Resume after losing a follower: the completed leader's maximum is reused.
    import shutil

    shutil.rmtree(followers[1].path)
    r = lsmbench(*args, "--resume")
    assert r.returncode == 0, r.stdout + r.stderr
    again = Store(results).point("shared", ids[2])
    assert again.data["max_throughput"]["shared_from"] == ids[0]
    assert not (again.path / "testing").exists()
    assert rate(again) == pytest.approx(rate(leader), abs=1e-3)


def test_search_for_the_maximum_sustainable_rate(tmp_path, data_root, driver_path):
    """phases.running.search through the real pipeline: every step is stored as a running@U
    phase from the same loaded tree (the same insert_start; with start: reload, a reload@U
    each), the headline is the search's answer, and the report renders its figure."""
    from lsmbench.report import build_report

    # high = 2 x max is normally not sustained (the achieved rate falls short): 2-3 steps; a
    # starved testing phase (too low a maximum) may let it pass, and then the search stops at
    # once -- both are right answers, checked below.
    search = {"low": 0.5, "high": 2.0, "tolerance": 0.2, "max_steps": 3}
    spec = write_spec(tmp_path / "search.yaml", data_root, name="search",
                      matrix={"phases.running.start": ["snapshot", "reload"]},
                      workload={"file": "update-uniform-1kb", "set": {"record_count": 5000}},
                      phases={"testing": {"duration": "3s", "warmup": "1s"},
                              "running": {"duration": "2s", "search": search}})
    results = tmp_path / "results"
    r = lsmbench("run", str(spec), "--quiet", "--results", str(results),
                 "--set", f"testbed.driver={driver_path}")
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(results)
    for start in ("snapshot", "reload"):
        rec = store.point("search", f"start={start},rep=0")
        assert rec is not None and rec.data["state"] == "complete", rec and rec.data["error"]
        s, mt = rec.data["search"], rec.data["max_throughput"]["writes_per_s"]
        steps = s["steps"]
        assert 1 <= len(steps) <= 3 and steps[0]["utilization"] == 2.0
        if len(steps) == 1:
            assert steps[0]["verdict"] == "sustainable" and s["stopped"] == "high-sustainable"
        assert s["schema"] == "lsmbench.search/1" and s["max_throughput"] == mt
        dirs = [f"running@{st['utilization']:g}" for st in steps]
        assert [st["phase"] for st in steps] == dirs
        want = ["load", "testing", *dirs]
        if start == "reload":
            want += [d.replace("running@", "reload@") for d in dirs]
        assert sorted(rec.data["phases"]) == sorted(want)
        starts = set()
        for st, d in zip(steps, dirs, strict=True):
            run_doc = json.loads((rec.path / d / "run.json").read_text())
            assert run_doc["arrival"]["rate"] == pytest.approx(st["utilization"] * mt, abs=1e-3)
            assert st["rate"] == pytest.approx(run_doc["arrival"]["rate"], abs=1e-3)
            starts.add(run_doc["insert_start"])
            v = json.loads((rec.path / d / "verdict.json").read_text())
            assert (v["verdict"], v["failed"]) == (st["verdict"], st["failed"])
        # Every step starts from the loaded tree: inserts continue after the loaded records.
        assert starts == {5000}
        assert [v["phase"] for v in rec.data["verdicts"]] == dirs
        ok = [st["utilization"] for st in steps if st["verdict"] == "sustainable"]
        assert s["utilization"] == (max(ok) if ok else None)
        head = rec.data["verdict"]
        assert head["utilization"] == (max(ok) if ok else steps[-1]["utilization"])
        assert head["max_sustainable_utilization"] == s["utilization"]
        if s["utilization"] is None:
            assert steps[-1]["utilization"] == 0.5 and s["stopped"] == "low-not-sustainable"
    files = build_report(Path("search"), results)
    assert "search" in files.figures
    html = files.html.read_text()
    assert 'id="search-table"' in html and "start=reload,rep=0" in html
    assert "Maximum sustainable rate" in files.markdown.read_text()


def test_adaptive_phases_and_repetitions_end_to_end(tmp_path, data_root, driver_path):
    """Settle after the load, a testing phase until steady, running phases until decided and
    repetitions {min, max}: what each decided is in the store, recomputable from the stored
    series, and a phase that ended before its cap says so. Nothing here depends on the
    machine's speed: whichever way a rule decides, the records must agree with the series."""
    from lsmbench.method import adaptive
    from lsmbench.spec.models import SteadyState

    spec = write_spec(
        tmp_path / "adaptive.yaml", data_root,
        name="adaptive",
        matrix={"policy": ["tiering", "leveling"], "repetitions": {"min": 1, "max": 2}},
        phases={"load": {"settle": "60s"},
                "testing": {"duration": "20s", "steady": {"rounds": 3, "round": "2s"}},
                "running": {"duration": "15s", "until_decided": {"deepest_merges": 1}}})
    results = tmp_path / "results"
    plan = lsmbench("plan", str(spec), "--results", str(results))
    assert plan.returncode == 0, plan.stderr
    assert "expected, at most" in plan.stdout and "repetitions: 1 to 2" in plan.stdout
    r = lsmbench("run", str(spec), "--json", "--results", str(results),
                 "--set", f"testbed.driver={driver_path}")
    assert r.returncode == 0, r.stderr + r.stdout
    summary = events(r.stdout)[-1]
    reps = summary["repetitions"]
    assert reps["min"] == 1 and reps["max"] == 2
    store = Store(results)
    recs = {rec.point_id: rec for rec in store.points("adaptive")}
    # A second repetition ran exactly for the groups the first left undecided.
    for policy in ("tiering", "leveling"):
        group = f"policy={policy}"
        assert (f"{group},rep=1" in recs) == (reps["added"].get(group, 0) == 1)
    assert reps["not_needed"] == 2 - sum(reps["added"].values())
    for rec in recs.values():
        p, d = rec.data, rec.path
        settle = p["phases"]["load"]["settle"]
        assert settle["supported"] is True and settle["limit_s"] == 60
        assert settle["idle"] is (not settle["timed_out"])
        steady = p["max_throughput"]["steady"]
        testing = DriverOutputs.read(d / "testing")
        again = adaptive.steady_state(testing.intervals, SteadyState(**steady["rule"]))
        assert again.attained is steady["attained"]
        assert p["max_throughput"]["writes_per_s"] == pytest.approx(
            again.writes_per_s if again.writes_per_s is not None
            else max_throughput_of_testing(testing.intervals, 0.0).writes_per_s)
        info = p["phases"]["testing"]
        assert info["cap_s"] == 20
        if info["ended_early"]:  # (a window that became steady at the cap ends there)
            assert steady["attained"]
        if steady["attained"]:
            assert p["max_throughput"]["method"] == "steady"
            # It ended there, or its window closed in the last intervals, which the driver
            # writes as it exits at the cap, after the monitor's last look.
            assert info["ended_early"] or again.end_s >= 20 - 2.0, (again.end_s, info)
        decision = p["verdict"]["decision"]
        log = decision["log"]
        assert decision["cap_s"] == 15 and log
        running = p["phases"]["running"]
        assert decision["ended_early"] is running["ended_early"]
        if running["ended_early"]:
            assert log[-1]["state"] in ("pass", "fail")
            assert any("of its 15 s cap" in why for why in p["verdict"]["reasons"])
            if log[-1]["state"] == "fail":
                assert p["verdict"]["verdict"] == "not-sustainable"
        else:
            assert any("ran to its 15 s cap" in why for why in p["verdict"]["reasons"])
    ls = lsmbench("ls", "adaptive", "--results", str(results), "--json")
    assert ls.returncode == 0
