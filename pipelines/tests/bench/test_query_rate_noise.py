"""research/bench/query_rate_noise.py: per point, the query rate over the running phase's first
seconds and over the rest of the window, and their correlation over a group."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

from lsmbench.util.paths import project_root
from repo_paths import TESTS

SCRIPT = project_root() / "research" / "bench" / "query_rate_noise.py"
FIXTURE = (TESTS / "fixtures" / "reproduce" / "results" / "reproduce"
           / "repro-lc-schedulers")
GROUP = "policy=tiering,scheduler=fair"


def noise_cmd(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)


def _with_gets(camp: Path, rep: int, per_second: list[int]) -> None:
    """The point's running phase as one-second intervals with these gets."""
    running = camp / f"{GROUP},rep={rep}" / "running" / "timeseries.jsonl"
    first = json.loads(running.read_text().splitlines()[0])
    rows = []
    for i, gets in enumerate(per_second):
        row = {**first, "t_start_s": float(i), "t_end_s": float(i + 1), "measured": True,
               "drain": False, "queries": {"get": {"ops": gets}}}
        rows.append(json.dumps(row))
    running.write_text("\n".join(rows) + "\n")


def test_head_and_rest_per_point_and_their_correlation(tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rng = random.Random(seed)
    camp = tmp_path / "repro-lc-schedulers"
    shutil.copytree(FIXTURE, camp)
    # Three repetitions: the faster a point starts, the faster its rest (a machine's speed).
    speeds = rng.sample(range(100, 1000), 3)
    for rep, speed in enumerate(speeds):
        _with_gets(camp, rep, [speed * 2] * 2 + [speed] * 6 + [1] * 4)
    proc = noise_cmd(camp, "--seconds", 8, "--head", 2)
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if line.startswith(GROUP + " "))
    assert "(n=3)" in header and "Spearman rho 1.00" in header
    assert f"head {2 * min(speeds):,}-{2 * max(speeds):,}/s" in header
    # The seconds after --seconds (gets of 1) are not in the rest.
    assert f"rest {min(speeds):,}-{max(speeds):,}/s" in header
    assert f"  {GROUP},rep=0: first 2 s {2 * speeds[0]:,}/s, 2-8 s {speeds[0]:,}/s" \
        in proc.stdout
    # Groups without queries are left out.
    assert "policy=leveling,scheduler=fair " not in proc.stdout


def test_no_queries_or_bad_windows_exit_2(tmp_path: Path) -> None:
    proc = noise_cmd(FIXTURE)
    assert proc.returncode == 2 and "no group with 3 points that ran get queries" in proc.stderr
    proc = noise_cmd(FIXTURE, "--head", 40, "--seconds", 32)
    assert proc.returncode == 2 and "--head 40: must be above 0 and under --seconds" \
        in proc.stderr
    proc = noise_cmd(tmp_path / "nothing")
    assert proc.returncode == 2 and "no stored campaign" in proc.stderr
    assert "Traceback" not in proc.stderr
