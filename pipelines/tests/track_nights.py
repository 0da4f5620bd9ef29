"""Nights for the tracking tests: copies of the stored report fixture (a real campaign run:
two complete points and a failed one) with their figures scaled, their commit, end time and
testbed changed, as if the campaign had been run night after night."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "report" / "results" / "report-fixture"
GROUPS = ("policy=leveling,memtable_bytes=1M", "policy=tiering,memtable_bytes=1M")
DAY = 86400.0


def git(cwd: Path, *args: str) -> str:
    """git -C cwd ARGS as a test's author; its output, stripped (the assertion names the
    command on a failure)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    r = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                       check=False, env=env)
    assert r.returncode == 0, f"git {' '.join(args)}: {r.stderr}"
    return r.stdout.strip()


def _edit_json(path: Path, edit: Any) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def make_night(dest: Path, night: int, *, throughput_scale: float = 1.0,
               commit: str | None = None, kernel: str | None = None,
               spec_edit: Any = None) -> Path:
    """The fixture as campaign run `night` (ending `night` days after the fixture's run) in
    dest/report-fixture; the testing maximum of every point times throughput_scale."""
    camp = dest / FIXTURE.name
    shutil.copytree(FIXTURE, camp)
    base_end = json.loads((FIXTURE / "campaign.json").read_text())["runs"][-1]["finished"]
    end = base_end + night * DAY
    commit = commit or f"{night:04x}" + "c0ffee" * 6

    def campaign(d: dict[str, Any]) -> None:
        d["runs"][-1]["finished"] = end
        if spec_edit is not None:
            spec_edit(d["spec"])

    _edit_json(camp / "campaign.json", campaign)
    for pt in camp.iterdir():
        if not (pt / "point.json").is_file():
            continue

        def point(d: dict[str, Any]) -> None:
            d["finished"] = end - 1.0
            if d.get("max_throughput"):
                d["max_throughput"]["writes_per_s"] *= throughput_scale

        def fingerprint(d: dict[str, Any]) -> None:
            d["project"] = {"commit": commit, "dirty": False}
            if kernel is not None:
                d["kernel"] = kernel

        _edit_json(pt / "point.json", point)
        if (pt / "fingerprint.json").is_file():
            _edit_json(pt / "fingerprint.json", fingerprint)
    return camp


def adaptive_night(tmp_path: Path, reps: dict[str, int]) -> Path:
    """The fixture as an adaptive campaign (matrix.repetitions {min: 2, max: 3}, 3 planned
    repetitions per group) whose groups stored `reps[group]` repetitions (copies of rep 0)."""
    camp = make_night(tmp_path, 1)
    doc = json.loads((camp / "campaign.json").read_text())
    doc["spec"]["matrix"]["repetitions"] = {"min": 2, "max": 3}
    first = doc["plan"]["points"]
    doc["plan"]["points"] = [{**p, "id": p["id"].replace("rep=0", f"rep={r}"), "rep": r}
                             for r in range(3) for p in first]
    (camp / "campaign.json").write_text(json.dumps(doc))
    for group, n in reps.items():
        src = camp / f"{group},rep=0"
        for r in range(1, n):
            dst = camp / f"{group},rep={r}"
            shutil.copytree(src, dst)
            rec = json.loads((dst / "point.json").read_text())
            rec.update(point=dst.name, rep=r)
            (dst / "point.json").write_text(json.dumps(rec))
    return camp
