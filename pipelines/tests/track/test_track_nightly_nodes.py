"""`lsmbench track nightly --testbed` on three sshd nodes in network namespaces
(fixtures_netns.py): one night records a run per node -- three series per metric -- and one
report; a night with a node down exits 3 naming it and adds nothing to the history.

The nodes are this machine three times over (same CPU, kernel, disk): identical testbed
identities, which is what the node's name in a per-node run's key is for. The measured
repository holds a copy of engines/ so that the night deploys exactly what the build cache
was seeded with (this machine's lsm-driver under the sources' content hash: a CMake build per
node would take minutes on 2 cores). The campaign runs the `null` engine with fixed phases
(2 s testing, 1 s running), 2 repetitions. Root needed (skipped otherwise, with the reason).
65 s on this 2-core machine under nice (105 s with other tests running beside it): the first
deploy to three nodes and the six points are most of it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from fixtures_netns import netns_nodes, restart_sshd, seed_build_cache
from repo_paths import REPO
from test_track_nightly import git

pytestmark = [pytest.mark.slow, pytest.mark.netns]

NAME = "nightbed"


@pytest.fixture(scope="module")
def night(driver_path):
    base = Path(tempfile.mkdtemp(prefix="lsmbench-nightnodes-", dir="/var/tmp"))
    try:
        with netns_nodes(base, count=3) as nodes:
            from lsmbench.testbeds.state import TestbedState, content_hash

            repo = base / "repo"
            repo.mkdir()
            shutil.copytree(REPO / "engines", repo / "engines",
                            ignore=shutil.ignore_patterns("build*", "__pycache__"))
            (repo / ".gitignore").write_text("/build-*/\n")
            git(repo, "init", "-q", "-b", "main")
            git(repo, "add", ".")
            git(repo, "commit", "-q", "-m", "engine")
            seed_build_cache(base / "cache" / content_hash(repo / "engines"), driver_path)
            os.environ["LSMBENCH_TESTBEDS"] = str(base / "testbeds")
            # The testbed as `testbed up NAME --file` leaves it before its first deploy: the
            # night's testbed step deploys it.
            TestbedState(NAME).write_definition({
                "type": "ssh",
                "hosts": [n.host_entry(nodes.key_file) for n in nodes.nodes],
                "ansible_vars": {"lsm_engine_build_cache": str(base / "cache"),
                                 "common_install_packages": False,
                                 "lsm_engine_install_build_deps": False},
            })
            spec = {"name": "nightnodes",
                    "engine": {"name": "null"},
                    "workload": {"file": "update-uniform-1kb", "set": {"record_count": 2000}},
                    "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                               "running": {"duration": "1s"}},
                    "matrix": {"repetitions": 2},
                    "testbed": NAME}
            (base / "spec.yaml").write_text(yaml.safe_dump(spec))
            yield nodes, repo
    finally:
        os.environ.pop("LSMBENCH_TESTBEDS", None)
        shutil.rmtree(base, ignore_errors=True)


def run_night(nodes, repo: Path, driver_path: Path) -> subprocess.CompletedProcess[str]:
    sim = driver_path.with_name("lsm-sim")
    build = (f'mkdir -p "$LSMBENCH_BUILD_DIR/bin" && cp {driver_path} {sim} '
             '"$LSMBENCH_BUILD_DIR/bin/"')
    return subprocess.run(
        [sys.executable, "-m", "lsmbench", "track", "nightly", str(nodes.base / "spec.yaml"),
         "--testbed", NAME, "--repo", str(repo), "--no-fetch", "--ref", "HEAD",
         "--results", str(nodes.base / "results"), "--build-command", build, "--json"],
        capture_output=True, text=True, timeout=300, check=False, stdin=subprocess.DEVNULL)


def events(stdout: str) -> list[dict]:
    return [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]


def test_a_night_on_three_nodes_records_a_series_per_node_and_one_report(night, driver_path):
    nodes, repo = night
    r = run_night(nodes, repo, driver_path)
    ev = events(r.stdout)
    done = {e["step"]: e for e in ev if e["event"] == "step_end"}
    assert r.returncode in (0, 4), r.stderr[-4000:]
    for step in ("checkout", "build", "testbed", "run", "record", "report"):
        assert done[step]["code"] == 0 or done[step]["regression"], (step, r.stderr[-3000:])
    assert "reference" not in done  # a testbed night is unpaired (a warning says so)
    assert "3 nodes (node0, node1, node2)" in done["testbed"]["detail"]
    # Every group's repetitions ran on every node: 2 repetitions x 3 nodes, each where pinned.
    from lsmbench.store import Store

    points = Store(nodes.base / "results").points("nightnodes")
    assert sorted((p.data["params"]["testbed.node"], p.data["host"]) for p in points) == \
        sorted((n, n) for n in ("node0", "node1", "node2") for _ in range(2))
    assert all(p.state == "complete" for p in points)
    from lsmbench.track.changes import build_series
    from lsmbench.track.history import History

    h = History(nodes.base / "results" / "history.sqlite", create=False)
    runs = h.runs()
    assert [r.node for r in runs] == ["node0", "node1", "node2"]
    assert len({r.testbed_key for r in runs}) == 3  # identical machines, three keys
    assert len({r.finished for r in runs}) == 1  # one campaign run
    series = build_series(h)
    by_metric: dict[str, list[str | None]] = {}
    for s in series:
        assert s.group == "all"  # the node dimension is in the run, not in the group
        by_metric.setdefault(s.metric, []).append(s.node)
    assert by_metric["max_write_throughput"] == ["node0", "node1", "node2"]
    assert all(v == ["node0", "node1", "node2"] for v in by_metric.values())
    assert all(v.n == 2 for v in h.values())  # each node's median over its 2 repetitions
    h.close()
    # One report: one panel per metric, the three nodes in it.
    html = (nodes.base / "results" / "history.html").read_text()
    assert html.count('data-nodes="node0,node1,node2"') == len(by_metric)
    report = json.loads((nodes.base / "results" / "regressions.json").read_text())
    assert report["open"] == []  # one night: nothing to detect yet
    assert ev[-1]["event"] == "nightly_end" and ev[-1]["open_regressions"] == 0


def test_a_node_down_at_the_start_exits_3_naming_it_and_records_nothing(night, driver_path):
    nodes, repo = night
    hist = nodes.base / "results" / "history.sqlite"
    before = hist.read_bytes() if hist.exists() else None
    victim = nodes.nodes[2]
    nodes.kill_sshd(victim)
    try:
        r = run_night(nodes, repo, driver_path)
    finally:
        restart_sshd(nodes, victim)
    assert r.returncode == 3, r.stderr[-3000:]
    done = {e["step"]: e for e in events(r.stdout) if e["event"] == "step_end"}
    assert done["testbed"]["code"] == 3
    assert "node node2" in done["testbed"]["detail"] and "unreachable" in \
        done["testbed"]["detail"]
    assert "run" not in done and "record" not in done
    assert (hist.read_bytes() if hist.exists() else None) == before
