"""A workload's `set`: a mapping overrides a mapping field by field, so a matrix dimension into a
nested field (workload.set.mixgraph.value_sigma) sets that field and keeps the file's others."""

from __future__ import annotations

import yaml
from lsmbench.cli import main
from lsmbench.plan import build_plan
from lsmbench.spec import validate_raw
from lsmbench.spec.workload import apply_workload_set
from repo_paths import REPO

PREFIX_DIST = yaml.safe_load((REPO / "workloads" / "mixgraph-prefix-dist.yaml").read_text())


def sigma_spec(values: list, dim: str = "workload.set.mixgraph.value_sigma") -> dict:
    return {"name": "sigma", "workload": "mixgraph-prefix-dist",
            "engine": {"name": "null"}, "matrix": {dim: values}}


def test_a_dimension_into_mixgraph_sets_one_field_and_keeps_the_others():
    plan = build_plan(validate_raw(sigma_spec([10, 30])))
    assert [p.params for p in plan.points] == [
        {"workload.set.mixgraph.value_sigma": 10}, {"workload.set.mixgraph.value_sigma": 30}]
    workloads = [plan.point(p).workload for p in plan.points]
    for w, sigma in zip(workloads, (10, 30), strict=True):
        assert w["mixgraph"] == {**PREFIX_DIST["mixgraph"], "value_sigma": sigma}
        # Everything else of the file is there too, unchanged.
        assert {k: v for k, v in w.items() if k != "mixgraph"} == {
            k: v for k, v in PREFIX_DIST.items() if k != "mixgraph"}
    assert len(PREFIX_DIST["mixgraph"]) > 10  # the file's mixgraph is not a one-field one
    assert PREFIX_DIST["mixgraph"]["value_sigma"] not in (10, 30)
    # The two points differ in value_sigma only, so their configurations differ.
    assert plan.point(plan.points[0]).config_hash != plan.point(plan.points[1]).config_hash


def test_set_merges_mappings_field_by_field_and_takes_mixes_whole():
    w = {"record_count": 10, "mixgraph": {"a": 1, "b": 2}, "operations": {"update": 0.5,
                                                                           "insert": 0.5},
         "value_size": 100, "arrival": {"process": "sine", "sine_a": 5, "sine_d": 10}}
    apply_workload_set(w, {"mixgraph": {"b": 3, "c": 4}, "operations": {"update": 1.0},
                           "value_size": {"min": 10, "max": 20}, "arrival": {"sine_a": 7}})
    assert w["mixgraph"] == {"a": 1, "b": 3, "c": 4}
    assert w["operations"] == {"update": 1.0}  # a mix: its shares sum to 1, given whole
    assert w["value_size"] == {"min": 10, "max": 20}  # a mapping where a number was: replaced
    assert w["arrival"] == {"process": "sine", "sine_a": 7, "sine_d": 10}
    # Another process: the arrival is taken whole, as run.json's arrival replaces a workload's.
    apply_workload_set(w, {"arrival": {"process": "constant"}, "mixgraph.a": 9})
    assert w["arrival"] == {"process": "constant"}
    assert w["mixgraph"] == {"a": 9, "b": 3, "c": 4}


def test_the_spec_set_merges_too():
    loaded = validate_raw({"name": "s", "workload": {
        "file": "mixgraph-prefix-dist", "set": {"mixgraph": {"value_sigma": 12.5}}}})
    assert loaded.workload["mixgraph"] == {**PREFIX_DIST["mixgraph"], "value_sigma": 12.5}


def test_validate_names_an_unknown_mixgraph_field_of_a_dimension(capsys, tmp_path, driver_path):
    p = tmp_path / "sigma.yaml"
    p.write_text(yaml.safe_dump(sigma_spec([10, 30], "workload.set.mixgraph.value_sgma")))
    code = main(["validate", str(p)])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "matrix.workload.set.mixgraph.value_sgma: unknown field (allowed: " in err
    assert "value_sigma" in err  # the allowed names say what was meant
    # The good name validates, the file's other mixgraph fields with it.
    p.write_text(yaml.safe_dump(sigma_spec([10, 30])))
    assert main(["validate", str(p)]) == 0, capsys.readouterr()
