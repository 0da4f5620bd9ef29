"""research/bench/predictor_validation.py compare: each stored group's measured maximum beside
today's prediction of the stored spec. Runs the real lsm-sim."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest
from bench_scripts import load_bench_script
from repo_paths import TESTS

PAPERS = TESTS / "fixtures" / "papers" / "results" / "papers-fixture"


def test_compare_puts_each_groups_measured_maximum_beside_its_prediction(
        tmp_path: Path, sim_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pv = load_bench_script("predictor_validation")
    shutil.copytree(PAPERS, tmp_path / "papers-fixture")
    rows = pv.compare(tmp_path, sim=sim_path)
    measured = {}
    for d in (tmp_path / "papers-fixture").iterdir():
        if (d / "point.json").is_file():
            record = json.loads((d / "point.json").read_text())
            measured.setdefault(d.name.rsplit(",rep=", 1)[0], []).append(
                record["max_throughput"]["writes_per_s"])
    assert sorted(r["group"] for r in rows) == sorted(measured)
    for r in rows:
        assert r["measured"] == pytest.approx(statistics.median(measured[r["group"]]))
        assert r["predicted"] > 0
        assert r["ratio"] == pytest.approx(r["measured"] / r["predicted"])
        # The fixture's running phases arrive in bursts: the verdict is outside the range.
        assert "arrivals in bursts" in r["verdict_outside"]
    # Policies differ in what they predict: the rows are not one number copied.
    assert len({round(r["predicted"]) for r in rows}) > 1
    assert pv.compare(tmp_path, only=["no-such-campaign"], sim=sim_path) == []
    pv._print(rows)
    out = capsys.readouterr().out
    assert out.count("| papers-fixture |") == len(rows)
