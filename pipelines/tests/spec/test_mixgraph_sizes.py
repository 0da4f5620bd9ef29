"""A mixgraph workload's records are no longer one size: the estimates (data size, bytes per
flush, lsm-sim's inputs, the report's MiB/s) take the mean the driver's generator writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from lsmbench.engine_options import mixgraph_mean_value_size, record_sizes, write_share

PREFIX_DIST = {"mix_get_ratio": 0.85, "mix_put_ratio": 0.14, "mix_seek_ratio": 0.01,
               "keyrange_num": 30, "keyrange_dist_a": 14.18, "keyrange_dist_b": -2.917,
               "keyrange_dist_c": 0.0164, "keyrange_dist_d": -0.08082,
               "key_dist_a": 0.002312, "key_dist_b": 0.3467}


def test_the_mean_follows_db_benchs_rules() -> None:
    # db_bench's defaults: a mean near 36 bytes, far from the 1,000 of a fixed-size workload.
    mean = mixgraph_mean_value_size({})
    assert 30 < mean < 40
    # Every size is raised to 10 bytes at least: a distribution below that averages 10.
    assert mixgraph_mean_value_size({"value_sigma": 0.001, "value_k": 0.0}) == 10.0
    # Above mix_max_value_size a size is taken modulo it: a huge location wraps around.
    wrapped = mixgraph_mean_value_size({"value_theta": 1500, "value_sigma": 0.001,
                                        "value_k": 0.0, "mix_max_value_size": 1024})
    assert wrapped == pytest.approx(1501 % 1024, abs=1)
    assert record_sizes({"key_size": 48, "mixgraph": {}}) == (48, mean)
    assert record_sizes({"key_size": 16, "value_size": {"min": 100, "max": 300}}) == (16, 200.0)


def test_python_and_the_driver_agree(driver_path: Path, tmp_path: Path) -> None:
    for mixgraph in ({}, PREFIX_DIST, {"value_k": -0.3, "value_sigma": 300, "value_theta": 20},
                     {"value_k": 0.9, "value_sigma": 50, "mix_max_value_size": 4096}):
        run = {"engine": "null", "phase": "testing", "duration_s": 1,
               "workload": {"record_count": 1000, "mixgraph": mixgraph}}
        (tmp_path / "run.json").write_text(json.dumps(run))
        out = subprocess.run([str(driver_path), "--describe-workload", str(tmp_path / "run.json")],
                             capture_output=True, text=True, check=True)
        described = json.loads(out.stdout)
        assert described["mean_value_size"] == pytest.approx(
            mixgraph_mean_value_size(mixgraph), rel=1e-9), mixgraph


def test_write_share_is_the_mixs_writes() -> None:
    # The running phase's arrivals are requests of the whole mix: a mix with reads must arrive
    # faster by its requests per write for its writes to arrive at utilization x the maximum.
    assert write_share({"operations": {"update": 1.0}}) == 1.0
    assert write_share({}) == 1.0  # the driver's default mix: updates
    assert write_share({"operations": {"read": 0.5, "update": 0.5}}) == 0.5
    assert write_share({"operations": {"insert": 0.05, "scan": 0.95}}) == pytest.approx(0.05)
    assert write_share({"operations": {"read": 1.0}}) == 0.0
    assert write_share({"mixgraph": PREFIX_DIST}) == 0.14


@pytest.mark.parametrize(("field", "value", "says"), [
    ("value_k", 1.5, "workload.mixgraph.value_k: must be < 1: a Generalized Pareto with shape "
                     "k >= 1 has no finite mean"),
    ("mix_put_ratio", 0.5, "workload.mixgraph.mix_get_ratio: mix_get_ratio + mix_put_ratio + "
                           "mix_seek_ratio must sum to 1"),
    ("key_dist_b", -0.3, "workload.mixgraph.key_dist_b: must be >= 0"),
    ("value_sigma", -1, "workload.mixgraph.value_sigma: must be > 0"),
])
def test_impossible_mixgraph_parameters_exit_2(driver_path: Path, tmp_path: Path, field: str,
                                               value: float, says: str) -> None:
    run = {"engine": "null", "phase": "testing", "duration_s": 1,
           "workload": {"record_count": 1000, "mixgraph": {**PREFIX_DIST, field: value}}}
    (tmp_path / "run.json").write_text(json.dumps(run))
    r = subprocess.run([str(driver_path), "--config", str(tmp_path / "run.json"), "--out",
                        str(tmp_path / "out")], capture_output=True, text=True, check=False)
    assert r.returncode == 2
    assert says in r.stderr, r.stderr
    assert not (tmp_path / "out" / "summary.json").exists()
