"""The driver's mixgraph holds to db_bench's own on a small run: the same parameters through the
real db_bench (its query trace read by lsm-driver --trace-ops) and through the driver's
generator, every statistic within the tolerance lsmbench.workload_shape.dbbench states.
docs/results/mixgraph.md is the same comparison at a million keys. The rate over time under a
sine load is compared there only: db_bench's rate is what its rate limiter achieves on a
machine, a timing that a loaded machine can break (the driver's own sine is exact: the
arrival tests of engines/driver/arrival_test.cc hold it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from lsmbench.workload_shape import dbbench as dbb
from repo_paths import REPO


def _db_bench() -> str:
    path = shutil.which("db_bench")
    if path is None:
        pytest.skip("db_bench is not installed (make deps installs rocksdb-tools)")
    return path


def _preset(name: str) -> dict:
    return yaml.safe_load((REPO / "workloads" / f"mixgraph-{name}.yaml").read_text())["mixgraph"]


def _failed(checks: list[dbb.Check]) -> list[str]:
    return [f"{c.statistic}: db_bench {c.db_bench:.5g}, driver {c.driver:.5g}, tolerance "
            f"{c.tolerance:.3g}" for c in checks if not c.ok]


@pytest.mark.parametrize("preset", ["prefix-dist", "all-random"])
def test_the_driver_draws_what_db_bench_draws(preset: str, driver_path: Path,
                                              tmp_path: Path) -> None:
    checks, report = dbb.compare_mixgraph(_db_bench(), str(driver_path), tmp_path,
                                          _preset(preset), num=300_000, reads=200_000)
    assert not _failed(checks), _failed(checks)
    names = {c.statistic for c in checks}
    # Every statistic of the comparison was made, and db_bench ran what was asked.
    assert {"share of read", "share of update", "share of scan", "top 1 % keys' share of "
            "accesses", "value sizes: Kolmogorov-Smirnov p-value", "mean scan length",
            "outside the loaded keys"} <= names
    assert len([n for n in names if n.startswith("range ")]) == (30 if preset == "prefix-dist"
                                                                  else 10)
    assert report.gets + report.puts + report.seeks == 200_000


def test_a_wrong_generator_is_caught(driver_path: Path, tmp_path: Path) -> None:
    # The checks can fail: other key-range weights and another value-size law, against
    # db_bench's prefix_dist, break the range shares and the KS test.
    mixgraph = _preset("prefix-dist")
    wrong = {**mixgraph, "keyrange_dist_b": -1.5, "value_sigma": 30.0}
    db = tmp_path / "db"
    trace, _ = dbb.run_db_bench(_db_bench(), db, mixgraph, num=300_000, reads=100_000,
                                key_size=16, seed=1)
    a = dbb.trace_stream(str(driver_path), trace, tmp_path / "db.csv")
    run = dbb.run_json(tmp_path / "run.json", wrong, num=300_000, key_size=16, prefix="user",
                       seed=1)
    b = dbb.driver_stream(str(driver_path), run, 100_000, tmp_path / "drv.csv")
    ranges = dbb.key_range_checks(a, b, num=300_000, ranges=30, prefix_len=4)
    assert any(not c.ok for c in ranges)
    assert not dbb.value_size_checks(a, b)[0].ok
