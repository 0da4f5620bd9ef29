"""`lsmbench track nightly` and what installs it.

* The night itself, on a throwaway git repository with an `origin` (a bare repository) as
  --repo: bad input (exit 2, nothing written), the lock (exit 3 at once), fetch + detached
  checkout of the fetched commit, a build command that builds at that commit, a tiny campaign
  run with the fresh driver, a stop (SIGTERM) that stops the running step, and the exit-code
  rules. The build command copies this machine's lsm-driver and lsm-sim (a CMake build of the
  engine per test would take minutes on 2 cores); the default build (cmake) is what the Ansible
  role's nights run.
* The history and change points in a real InfluxDB 1.x (fixtures_influx.py), written and
  queried back, republished after an ack and a dropped change point.
* The end-to-end night (record, report, publish) needs `track record` and `track report`
  (lsmbench.track.history, lsmbench.track.report).
* The Ansible role against a node in a network namespace with its own /etc (fixtures_netns.py):
  applied twice, the second run changes nothing; the unit files it wrote pass
  `systemd-analyze verify`, and a broken one does not.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from fixtures_influx import InfluxServer
from lsmbench.cli import main
from lsmbench.track.influx_history import CHANGES_MEASUREMENT, HISTORY_MEASUREMENT
from lsmbench.track.nightlock import night_lock
from lsmbench.track.nightly import StepOutcome, final_exit_code
from repo_paths import REPO, TESTS
from track_nights import git

TRACK_FIXTURE = TESTS / "fixtures" / "track"


def commit(work: Path, name: str, text: str) -> str:
    (work / name).write_text(text)
    git(work, "add", name)
    git(work, "commit", "-q", "-m", f"{name}: {text.strip()}")
    return git(work, "rev-parse", "HEAD")


class Measured:
    """origin.git, the night's clone `repo`, and `dev`, a second clone that pushes to origin."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.origin = base / "origin.git"
        self.repo = base / "repo"
        self.dev = base / "dev"
        seed = base / "seed"
        seed.mkdir()
        git(seed, "init", "-q", "-b", "main")
        (seed / ".gitignore").write_text("/build-*/\n")
        git(seed, "add", ".gitignore")
        self.first = commit(seed, "engines.txt", "engine v1\n")
        subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(self.origin)], check=True)
        subprocess.run(["git", "clone", "-q", str(self.origin), str(self.repo)], check=True)
        subprocess.run(["git", "clone", "-q", str(self.origin), str(self.dev)], check=True)

    def push_commit(self, text: str) -> str:
        sha = commit(self.dev, "engines.txt", text)
        git(self.dev, "push", "-q", "origin", "HEAD:main")
        return sha


@pytest.fixture
def measured(tmp_path) -> Measured:
    return Measured(tmp_path)


def build_command(driver_path: Path) -> str:
    """Builds by copying this machine's binaries, and says at which commit it built."""
    sim = driver_path.with_name("lsm-sim")
    return (f'mkdir -p "$LSMBENCH_BUILD_DIR/bin" && cp {driver_path} {sim} '
            '"$LSMBENCH_BUILD_DIR/bin/" && git rev-parse HEAD > "$LSMBENCH_BUILD_DIR/built-from"')


def tiny_spec(path: Path, data_root: Path, name: str = "nightly-tiny", **extra: object) -> Path:
    spec = {"name": name,
            "engine": {"name": "builtin", "options": {"memtable_bytes": "1M"}},
            "workload": {"file": "update-uniform-1kb", "set": {"record_count": 5000}},
            "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                       "running": {"duration": "1s"}},
            "throttle": {"enabled": False},
            "testbed": {"type": "local", "data_dir": str(data_root / "data")},
            **extra}
    path.write_text(yaml.safe_dump(spec))
    return path


def nightly(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lsmbench", "track", "nightly", *args],
                          capture_output=True, text=True, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL)


def events(stdout: str) -> list[dict]:
    return [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]


def steps(stdout: str) -> dict[str, dict]:
    return {e["step"]: e for e in events(stdout) if e["event"] == "step_end"}


# ------------------------------------------------------------------------------------ rules


def test_exit_code_rules():
    def night(*codes: tuple[str, int]) -> int:
        return final_exit_code([StepOutcome(step=s, code=c, regression=(s == "report" and c == 4))
                                for s, c in codes])

    ok = [("fetch", 0), ("checkout", 0), ("build", 0), ("run", 0), ("record", 0)]
    assert night(*ok, ("report", 0), ("publish", 0)) == 0
    assert night(*ok, ("report", 4), ("publish", 0)) == 4
    # A failure wins over an open regression, whichever step failed.
    assert night(*ok[:3], ("run", 1), ("record", 0), ("report", 4)) == 1
    assert night(*ok, ("report", 4), ("publish", 1)) == 1
    assert night(*ok[:3], ("run", 3)) == 3
    assert night(("fetch", 0), ("checkout", 2)) == 2
    assert night(*ok[:3], ("run", 130)) == 130
    # The first failure is the one that counts.
    assert night(*ok[:3], ("run", 1), ("record", 70)) == 1


# ------------------------------------------------------------------------------------ bad input


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["track", "nightly", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_bad_input_exits_2_naming_it_and_writes_nothing(capsys, measured, tmp_path, data_root):
    results = tmp_path / "results"
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root)
    head = git(measured.repo, "rev-parse", "HEAD")
    common = ["--results", str(results), "--no-fetch"]
    cases = [
        ([str(tmp_path / "missing.yaml"), "--repo", str(measured.repo)], "missing.yaml: no such"),
        ([str(spec), "--repo", str(tmp_path / "nowhere")], "nowhere: no such directory"),
        ([str(spec), "--repo", str(data_root)], "not a git checkout"),
        ([str(spec), "--repo", str(measured.repo), "--ref", "no-such-branch"],
         "unknown ref 'no-such-branch'"),
        ([str(spec), "--repo", str(measured.repo), "--publish", "ftp://x"], "--publish"),
        ([str(spec), "--repo", str(measured.repo), "--testbed", "rack"],
         "not on the kept testbed rack"),
        ([str(spec), "--repo", str(measured.repo), "--reference", "no-such-tag"],
         "--reference: ") ,
        ([str(spec), "--repo", str(measured.repo), "--bisect", "--bisect-threshold", "5"],
         "--bisect-threshold 5: expected a fraction"),
    ]
    nameless = tmp_path / "nameless.yaml"
    nameless.write_text("workload: update-uniform-1kb\n")
    cases.append(([str(nameless), "--repo", str(measured.repo)], "no campaign name"))
    for args, message in cases:
        code, _out, err = run_main(capsys, *args, *common)
        assert code == 2, (args, err)
        assert message in err, (args, err)
    # A modified tracked file: the night measures commits, not a working tree.
    (measured.repo / "engines.txt").write_text("edited\n")
    code, _, err = run_main(capsys, str(spec), "--repo", str(measured.repo), *common)
    assert code == 2 and "uncommitted changes to engines.txt" in err
    assert not results.exists()
    assert git(measured.repo, "rev-parse", "HEAD") == head


def test_an_unknown_ref_after_fetching_exits_2(capsys, measured, tmp_path, data_root):
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root)
    code, _, err = run_main(capsys, str(spec), "--repo", str(measured.repo), "--ref",
                            "origin/no-such", "--results", str(tmp_path / "r"))
    assert code == 2
    assert "unknown ref 'origin/no-such'" in err
    assert not (tmp_path / "r" / "nightly-tiny").exists()


# ------------------------------------------------------------------------------------ the lock


def test_a_held_lock_exits_3_at_once(capsys, measured, tmp_path, data_root):
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root)
    lock = tmp_path / "night.lock"
    before = git(measured.repo, "rev-parse", "HEAD")
    measured.push_commit("engine v2\n")
    with night_lock(lock):
        code, _out, err = run_main(capsys, str(spec), "--repo", str(measured.repo),
                                  "--lock", str(lock), "--results", str(tmp_path / "r"))
    assert code == 3
    assert f"{lock} is held by pid {os.getpid()} on " in err
    assert "does not wait" in err
    # Nothing of the night happened: no fetch, no checkout.
    assert git(measured.repo, "rev-parse", "HEAD") == before
    assert git(measured.repo, "rev-parse", "origin/main") == before
    # Released, the lock can be taken again (and says nobody holds it).
    with night_lock(lock):
        pass
    assert lock.read_text() == ""


# ------------------------------------------------------------------------------------ a night


@pytest.mark.slow
def test_a_night_fetches_checks_out_builds_and_runs_the_fresh_driver(measured, tmp_path,
                                                                       data_root, driver_path):
    new = measured.push_commit("engine v2\n")
    results = tmp_path / "results"
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root)
    r = nightly(str(spec), "--repo", str(measured.repo), "--ref", "origin/main", "--results",
                str(results), "--build-command", build_command(driver_path), "--json")
    done = steps(r.stdout)
    assert [e["step"] for e in events(r.stdout) if e["event"] == "step_start"][:7] == \
        ["lock", "fetch", "checkout", "build", "reference", "run", "record"], r.stderr[-3000:]
    assert done["reference"]["detail"] == "unpaired (no accepted night yet)"
    for step in ("fetch", "checkout", "build", "run"):
        assert done[step]["code"] == 0, (step, r.stderr[-3000:])
    # The fetched commit, detached, is what was built and measured.
    assert git(measured.repo, "rev-parse", "HEAD") == new
    assert subprocess.run(["git", "-C", str(measured.repo), "symbolic-ref", "-q", "HEAD"],
                          check=False).returncode == 1  # detached
    build = measured.repo / "build-nightly"
    assert (build / "built-from").read_text().strip() == new
    assert done["checkout"]["detail"].startswith(new[:7])
    points = [p for p in (results / "nightly-tiny").iterdir() if (p / "point.json").is_file()]
    assert len(points) == 1
    assert json.loads((points[0] / "point.json").read_text())["state"] == "complete"
    fp = json.loads((points[0] / "fingerprint.json").read_text())
    assert fp["driver"]["path"] == str(build / "bin" / "lsm-driver")
    end = events(r.stdout)[-1]
    assert end["event"] == "nightly_end" and end["commit"] == new
    assert r.returncode == end["exit"] == final_exit_code(
        [StepOutcome(**s) for s in end["steps"]])


@pytest.mark.slow
def test_the_second_night_is_paired_with_the_first(measured, tmp_path, data_root, driver_path):
    """Night 2 runs every point with its own build and with night 1's (the last accepted
    night), built once from a worktree of that commit; the history holds their ratios."""
    results = tmp_path / "results"
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root, matrix={"repetitions": 2})
    shas = []
    for text in ("engine v2\n", "engine v3\n"):
        shas.append(measured.push_commit(text))
        r = nightly(str(spec), "--repo", str(measured.repo), "--results", str(results),
                    "--build-command", build_command(driver_path), "--json")
        assert r.returncode in (0, 4), r.stderr[-3000:]
    done = steps(r.stdout)
    assert done["reference"]["code"] == 0 and done["reference"]["detail"].startswith(shas[0][:7])
    ref_build = measured.repo / "build-nightly-reference" / shas[0][:12] / "build"
    assert (ref_build / "built-from").read_text().strip() == shas[0]
    # The worktree it was built from is gone; the night's checkout is the new commit.
    assert not (ref_build.parent / "src").exists()
    assert "build-nightly-reference" not in git(measured.repo, "worktree", "list")
    assert git(measured.repo, "rev-parse", "HEAD") == shas[1]
    camp = results / "nightly-tiny"
    spec_run = json.loads((camp / "campaign.json").read_text())["spec"]
    assert spec_run["pair"] == {"reference": str(ref_build), "commit": shas[0]}
    drivers = {}
    for d in camp.iterdir():
        if (d / "point.json").is_file():
            build = json.loads((d / "point.json").read_text())["params"]["build"]
            path = json.loads((d / "fingerprint.json").read_text())["driver"]["path"]
            drivers.setdefault(build, set()).add(path)
    assert drivers == {"reference": {str(ref_build / "bin" / "lsm-driver")},
                       "candidate": {str(measured.repo / "build-nightly" / "bin" /
                                         "lsm-driver")}}
    from lsmbench.track.history import History

    paired = History(results / "history.sqlite").paired_values()
    assert paired and {v.reference_commit for v in paired} == {shas[0]}


@pytest.mark.slow
def test_a_commit_that_does_not_build_fails_the_night_before_the_run(measured, tmp_path,
                                                                     data_root):
    results = tmp_path / "results"
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root)
    r = nightly(str(spec), "--repo", str(measured.repo), "--ref", "origin/main", "--results",
                str(results), "--build-command", "echo 'error: no engine' >&2; exit 7")
    assert r.returncode == 1, r.stderr
    assert "nightly: build: FAILED (exit 1)" in r.stderr
    assert "exited 7: commit" in r.stderr and "does not build" in r.stderr
    assert "error: no engine" in r.stderr  # the build's own output is in the log
    assert "nightly: run:" not in r.stdout + r.stderr
    assert not (results / "nightly-tiny").exists()
    lines = r.stdout.splitlines()
    assert lines[0] == f"nightly: lock: {results / '.nightly.lock'} (held until the night ends)"
    assert lines[1] == f"nightly: fetch: git fetch --all --prune in {measured.repo}"
    assert lines[2].startswith("nightly: fetch: done in ")
    assert lines[3] == f"nightly: checkout: origin/main (detached) in {measured.repo}"


@pytest.mark.slow
def test_sigterm_stops_the_running_step_and_the_night(measured, tmp_path, data_root,
                                                     driver_path):
    results = tmp_path / "results"
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root,
                     phases={"testing": {"duration": "60s"}, "running": {"duration": "60s"}})
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsmbench", "track", "nightly", str(spec), "--repo",
         str(measured.repo), "--no-fetch", "--ref", "HEAD", "--results", str(results),
         "--build-command", build_command(driver_path), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(json.loads(line))
        if seen[-1].get("event") == "step_start" and seen[-1]["step"] == "run":
            proc.send_signal(signal.SIGTERM)
            break
    rest = proc.stdout.read()
    assert proc.wait(timeout=120) == 130
    evs = seen + events(rest)
    assert evs[-1]["event"] == "nightly_end" and evs[-1]["exit"] == 130
    assert [s["step"] for s in evs[-1]["steps"]][-1] == "run"
    assert evs[-1]["steps"][-1]["code"] == 130
    # The lock went with the night (and with the run it stopped).
    with night_lock(results / ".nightly.lock"):
        pass


# ------------------------------------------------------------------------------------ InfluxDB


def influx_sink(server: InfluxServer, db: str):
    from lsmbench.sinks.influx import InfluxSink, InfluxTarget

    return InfluxSink(InfluxTarget(url=server.url, database=db, username=server.username,
                                   token=server.password))


def rows_of(server: InfluxServer, q: str, db: str) -> list[dict]:
    out = []
    for r in server.query(q, db=db)["results"]:
        for s in r.get("series", []):
            for v in s["values"]:
                out.append({**s.get("tags", {}), **dict(zip(s["columns"], v, strict=True))})
    return out


def test_history_and_change_points_in_influxdb(influxd, tmp_path):
    from lsmbench.track.influx_history import publish_history

    db = "lsmtrack"
    report = tmp_path / "report"
    shutil.copytree(TRACK_FIXTURE, report)
    sink = influx_sink(influxd, db)
    done = publish_history(sink, report, ["nightly-fixture"])
    assert (done.history_points, done.change_points) == (32, 3)

    with open(TRACK_FIXTURE / "history.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    got = rows_of(influxd, f'SELECT * FROM "{HISTORY_MEASUREMENT}" GROUP BY *', db)
    assert len(got) == len(csv_rows) == 32
    key = {(r["group"], r["metric"], r["run_id"]): r for r in got}
    for row in csv_rows:
        g = key[(row["group"], row["metric"], row["run_id"])]
        assert g["median"] == pytest.approx(float(row["median"]))
        assert (g["ci_low"], g["ci_high"]) == (pytest.approx(float(row["ci_low"])),
                                               pytest.approx(float(row["ci_high"])))
        assert g["commit"] == row["commit"] and g["testbed_key"] == row["testbed_key"]
        assert g["spec_hash"] == row["spec_hash"] and g["campaign"] == "nightly-fixture"
    # Tags are what the dashboard filters by; the per-run values are fields.
    tag_keys = rows_of(influxd, f'SHOW TAG KEYS FROM "{HISTORY_MEASUREMENT}"', db)
    assert {r["tagKey"] for r in tag_keys} == {"campaign", "group", "metric", "testbed_key",
                                              "spec_hash"}

    changes = {r["id"]: r for r in rows_of(
        influxd, f'SELECT * FROM "{CHANGES_MEASUREMENT}" GROUP BY *', db)}
    assert set(changes) == {"c-0a1b2c3d4e5f", "c-1b2c3d4e5f60", "c-2c3d4e5f6071"}
    reg = changes["c-0a1b2c3d4e5f"]
    assert reg["direction"] == "regression" and reg["acked"] is False
    assert reg["text"] == "p99_write_latency_s +45.0% between e4666a6..8dc29fc"
    assert reg["change"] == pytest.approx(0.45)
    assert reg["group"] == "policy=leveling,scheduler=greedy"
    assert changes["c-1b2c3d4e5f60"]["text"].startswith("max_write_throughput +20.0% between ")
    assert changes["c-2c3d4e5f6071"]["acked"] is True

    # Acked, and one change point dropped by the detector: republishing leaves exactly the
    # report's change points, the ack in place, nothing twice.
    doc = json.loads((report / "regressions.json").read_text())
    doc["changes"] = [c for c in doc["changes"] if c["id"] != "c-1b2c3d4e5f60"]
    for c in doc["changes"]:
        if c["id"] == "c-0a1b2c3d4e5f":
            c.update(acked=True, why="expected: the new compaction trigger")
    doc["open"], doc["acked"] = [], doc["changes"]
    (report / "regressions.json").write_text(json.dumps(doc))
    publish_history(sink, report, ["nightly-fixture"])
    changes = {r["id"]: r for r in rows_of(
        influxd, f'SELECT * FROM "{CHANGES_MEASUREMENT}" GROUP BY *', db)}
    assert set(changes) == {"c-0a1b2c3d4e5f", "c-2c3d4e5f6071"}
    assert changes["c-0a1b2c3d4e5f"]["acked"] is True
    assert changes["c-0a1b2c3d4e5f"]["text"].endswith(
        "(acked: expected: the new compaction trigger)")
    assert len(rows_of(influxd, f'SELECT * FROM "{HISTORY_MEASUREMENT}" GROUP BY *', db)) == 32


def test_bad_report_files_are_refused(tmp_path):
    from lsmbench.track.influx_history import (
        ReportFileError,
        read_history_csv,
        read_regressions,
    )

    (tmp_path / "history.csv").write_text("run_id,campaign,metric\nr1,c,m\n")
    with pytest.raises(ReportFileError, match="missing column"):
        read_history_csv(tmp_path / "history.csv")
    (tmp_path / "regressions.json").write_text(json.dumps({"schema": "other/1"}))
    with pytest.raises(ReportFileError, match="expected schema"):
        read_regressions(tmp_path / "regressions.json")
    doc = json.loads((TRACK_FIXTURE / "regressions.json").read_text())
    doc["changes"][0]["direction"] = "sideways"
    (tmp_path / "regressions.json").write_text(json.dumps(doc))
    with pytest.raises(ReportFileError, match=r"changes\.0\.direction"):
        read_regressions(tmp_path / "regressions.json")


# ------------------------------------------------------------------------------------ end to end


@pytest.mark.slow
def test_nightly_end_to_end_records_reports_and_publishes(measured, tmp_path, data_root,
                                                         driver_path, influxd):
    """Two nights on two commits, published: needs `track record` and `track report`."""
    results = tmp_path / "results"
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root)
    db = "lsmnightly"
    env_cred = f"{influxd.username}:{influxd.password}"
    os.environ["LSMB_NIGHTLY_CRED"] = env_cred
    try:
        ends = []
        for text in ("engine v2\n", "engine v3\n"):
            sha = measured.push_commit(text)
            r = nightly(str(spec), "--repo", str(measured.repo), "--results", str(results),
                        "--build-command", build_command(driver_path), "--publish",
                        f"{influxd.url}?db={db}", "--token-env", "LSMB_NIGHTLY_CRED",
                        "--json")
            end = events(r.stdout)[-1]
            assert end["commit"] == sha
            assert r.returncode in (0, 4), r.stderr[-4000:]
            done = steps(r.stdout)
            for step in ("fetch", "checkout", "build", "run", "record", "publish"):
                assert done[step]["code"] == 0, (step, r.stderr[-3000:])
            ends.append(end)
    finally:
        os.environ.pop("LSMB_NIGHTLY_CRED", None)
    report = json.loads((results / "regressions.json").read_text())
    assert report["schema"] == "lsmbench.regressions/1"
    assert (ends[-1]["exit"] == 4) == bool(report["open"])
    assert ends[-1]["open_regressions"] == len(report["open"])
    with open(results / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["commit"] for r in rows} == {e["commit"] for e in ends}
    assert (results / "history.html").is_file()
    got = rows_of(influxd, f'SELECT * FROM "{HISTORY_MEASUREMENT}" GROUP BY *', db)
    assert len(got) == len(rows)
    points = rows_of(influxd, 'SELECT count("elapsed_s") FROM "lsm_summary"', db)
    assert points and points[0]["count"] > 0


# ------------------------------------------------------------------------------------ the role


NODE_USER = "lsmbnightly"


@pytest.fixture(scope="module")
def controller():
    """One node with its own /etc; the role's variables; a playbook runner."""
    from fixtures_netns import netns_nodes
    from lsmbench.testbeds.ansible_runner import run_playbook
    from lsmbench.testbeds.inventory import ansible_inventory, entries

    base = Path(tempfile.mkdtemp(prefix="lsmbench-nightly-role-", dir="/var/tmp"))
    try:
        with netns_nodes(base, count=1, private_etc=True) as nodes:
            node = nodes.nodes[0]
            measured = base / "measured"
            measured.mkdir()
            m = Measured(measured)
            hosts = entries([node.host_entry(nodes.key_file)], "hosts", str(node.data_dir))
            inv = ansible_inventory(hosts, known_hosts=base / "known_hosts",
                                    python="/usr/bin/python3", remote_root=str(node.remote_root))
            inv["all"]["children"]["nightly"] = {"hosts": {node.name: None}}
            inventory = base / "inventory.yml"
            inventory.write_text(yaml.safe_dump(inv))
            home = node.remote_root / "nightly"
            variables = {
                "nightly_user": NODE_USER, "nightly_group": NODE_USER,
                "nightly_home": str(home), "nightly_repo_url": str(m.origin),
                "nightly_install_orchestrator": False, "nightly_install_packages": False,
                "nightly_lsmbench": str(Path(sys.executable).with_name("lsmbench")),
                "nightly_publish_url": "http://127.0.0.1:8086?db=lsmbench",
                "nightly_on_calendar": "Mon..Fri *-*-* 03:15:00",
            }

            def apply(**more: object):
                return run_playbook(REPO / "ansible" / "playbooks" / "nightly.yml",
                                    inventory, {**variables, **more},
                                    log_path=base / "ansible.log")

            yield node, home, apply, base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.netns
def test_role_applies_and_a_second_run_changes_nothing(controller):
    node, home, apply, _base = controller
    first = apply()
    assert first.rc == 0 and not first.failed_hosts(), first.output_tail
    assert first.changed > 0
    second = apply()
    assert second.rc == 0, second.output_tail
    assert second.recap[node.name]["changed"] == 0, second.output_tail
    assert second.recap[node.name]["ok"] > 10
    units = node.etc_dir / "systemd" / "system"
    service = (units / "lsmbench-nightly.service").read_text()
    assert "Type=oneshot" in service and "User=" not in service  # root: a local campaign
    assert f' --lock "{home}/nightly.lock"' in service
    assert ' --publish "http://127.0.0.1:8086?db=lsmbench"' in service
    timer = (units / "lsmbench-nightly.timer").read_text()
    assert "OnCalendar=Mon..Fri *-*-* 03:15:00" in timer and "Persistent=true" in timer
    wants = units / "timers.target.wants" / "lsmbench-nightly.timer"
    assert os.readlink(wants) == "/etc/systemd/system/lsmbench-nightly.timer"
    # The user exists on the node only; the measured repository is cloned.
    assert any(line.startswith(f"{NODE_USER}:") for line in
               (node.etc_dir / "passwd").read_text().splitlines())
    assert NODE_USER not in Path("/etc/passwd").read_text()
    assert (home / "repo" / ".git").is_dir() and (home / "results").is_dir()


@pytest.mark.slow
@pytest.mark.netns
def test_the_user_variant_and_systemd_analyze_verify(controller):
    node, home, apply, base = controller
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (Debian package systemd; make deps)")
    run = apply(nightly_run_as_root=False)
    assert run.rc == 0, run.output_tail
    units = node.etc_dir / "systemd" / "system"
    service = (units / "lsmbench-nightly.service").read_text()
    assert f"User={NODE_USER}\nGroup={NODE_USER}\n" in service
    owner = (home / "repo" / "engines.txt").stat().st_uid
    assert owner == int(next(line.split(":")[2] for line in
                             (node.etc_dir / "passwd").read_text().splitlines()
                             if line.startswith(f"{NODE_USER}:")))
    again = apply(nightly_run_as_root=False)
    assert again.recap[node.name]["changed"] == 0, again.output_tail
    # Verified where they were installed: in the node's own namespaces, its /etc, its users.
    key = base / "id_ed25519"
    ssh = ["ssh", "-i", str(key), "-o", f"UserKnownHostsFile={base / 'known_hosts'}",
           "-o", "BatchMode=yes", f"root@{node.address}"]

    def verify(*paths: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*ssh, "systemd-analyze", "verify", *paths],
                              capture_output=True, text=True, timeout=60, check=False)

    r = verify("/etc/systemd/system/lsmbench-nightly.service",
               "/etc/systemd/system/lsmbench-nightly.timer")
    assert r.returncode == 0 and r.stdout + r.stderr == "", r.stdout + r.stderr
    # The check can fail: a unit systemd refuses.
    bad = base / "broken"
    bad.mkdir()
    (bad / "lsmbench-nightly.timer").write_text(
        (units / "lsmbench-nightly.timer").read_text().replace(
            "OnCalendar=Mon..Fri *-*-* 03:15:00", "OnCalendar=every full moon"))
    shutil.copy2(units / "lsmbench-nightly.service", bad / "lsmbench-nightly.service")
    r = verify(str(bad / "lsmbench-nightly.timer"), str(bad / "lsmbench-nightly.service"))
    assert r.returncode != 0 and "every full moon" in r.stdout + r.stderr
