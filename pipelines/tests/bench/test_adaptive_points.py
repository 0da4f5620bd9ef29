"""research/bench/adaptive_points.py: one row per stored point, how its phases ended."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from lsmbench.util.paths import project_root
from repo_paths import TESTS

SCRIPT = project_root() / "research" / "bench" / "adaptive_points.py"
FIXTURE = (TESTS / "fixtures" / "reproduce" / "results" / "reproduce"
           / "repro-lc-schedulers")


def points_cmd(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)


def test_a_row_per_point_with_how_each_phase_ended(tmp_path: Path) -> None:
    camp = tmp_path / "repro-lc-schedulers"
    shutil.copytree(FIXTURE, camp)
    # One point as an adaptive run stores it: a steady testing phase that did not attain
    # steady state, a running phase that failed early.
    point = camp / "policy=tiering,scheduler=fair,rep=0" / "point.json"
    record = json.loads(point.read_text())
    record["max_throughput"] = {"writes_per_s": 4816.4, "window_end_s": 174.4,
                                "method": "steady",
                                "steady": {"attained": False, "rounds": [{}, {}]}}
    record["verdict"] = {**record["verdict"], "verdict": "not-sustainable",
                         "window_end_s": 73.2, "failed": ["p99"],
                         "decision": {"cap_s": 180.0, "ended_early": True, "log": [
                             {"state": "continue", "at_s": 30.0, "reason": "too few merges"},
                             {"state": "fail", "at_s": 73.0, "reason": "p99 cannot pass"}]}}
    point.write_text(json.dumps(record))
    proc = points_cmd(camp)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| policy=")]
    assert len(rows) == len([d for d in FIXTURE.iterdir() if (d / "point.json").is_file()])
    row = next(r for r in rows if r.startswith("| policy=tiering,scheduler=fair,rep=0 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "4,816/s (NOT steady, 2 rounds, 174 s)"
    assert cells[3] == "73 s" and cells[5] == "not-sustainable" and cells[6] == "p99"
    assert cells[7] == "fail at 73 s: p99 cannot pass"
    # The fixture's own points ran fixed phases.
    other = next(r for r in rows if r.startswith("| policy=leveling,scheduler=fair,rep=0 |"))
    assert other.rstrip().endswith("| fixed duration |")


def test_what_is_not_a_stored_campaign_exits_2(tmp_path: Path) -> None:
    proc = points_cmd(tmp_path)
    assert proc.returncode == 2 and "not a stored campaign" in proc.stderr
    assert "Traceback" not in proc.stderr
