"""research/bench/repetition_estimates.py: each claim judged on its groups' first repetitions
and on all of them, with the repetitions each judgement says would decide it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from lsmbench.util.paths import project_root
from repo_paths import TESTS

SCRIPT = project_root() / "research" / "bench" / "repetition_estimates.py"
STORE = TESTS / "fixtures" / "reproduce" / "results" / "reproduce"


def estimates_cmd(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)


def test_first_repetitions_against_all() -> None:
    proc = estimates_cmd(STORE, "repro-lc-schedulers")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split(" ")[0] for line in lines] == [f"LC{i}" for i in range(1, 7)]
    for line in lines:
        # The fixture has 3 repetitions a group: the first 3 are all of them.
        m = re.fullmatch(r"LC\d \(repro-lc-schedulers\): with 3 each: (.+); "
                         r"with all \(up to 3\): (.+)", line)
        assert m is not None and m.group(1) == m.group(2), line
    proc = estimates_cmd(STORE, "repro-lc-schedulers", "--claims", "LC2,LC5")
    assert [line.split(" ")[0] for line in proc.stdout.splitlines()] == ["LC2", "LC5"]


def test_bad_input_exits_2(tmp_path: Path) -> None:
    proc = estimates_cmd(STORE, "repro-lc-schedulers", "--first", 2)
    assert proc.returncode == 2 and "--first 2: at least 3" in proc.stderr
    proc = estimates_cmd(STORE, "repro-lc-schedulers", "--claims", "LC2,XX9")
    assert proc.returncode == 2 and "--claims: no claim XX9" in proc.stderr
    proc = estimates_cmd(STORE, "no-such-experiment")
    assert proc.returncode == 2 and "no-such-experiment: no claim is judged on it" in proc.stderr
    proc = estimates_cmd(tmp_path, "repro-lc-schedulers")
    assert proc.returncode == 2 and "no stored campaign with points" in proc.stderr
    assert "Traceback" not in proc.stderr
