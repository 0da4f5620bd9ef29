"""Matrix expansion: cross product, zip, exclude, repetitions, seeds; point ids; the plan."""

from __future__ import annotations

import time

import pytest
import yaml
from lsmbench.plan import build_plan, expand_matrix
from lsmbench.points import (
    MAX_ID_LEN,
    phase_engine_options,
    point_id,
    point_spec,
    point_workload,
)
from lsmbench.spec import validate_raw

WL = {"inline": {"record_count": 1000, "value_size": 100, "operations": {"update": 1.0}}}


def load(matrix, **extra):
    return validate_raw({"name": "m", "workload": WL, "matrix": matrix, **extra})


def test_cross_product_in_matrix_order():
    points, excluded = expand_matrix({"policy": ["tiering", "leveling"], "size_ratio": [3, 5, 10]})
    assert excluded == 0
    assert [(p.params["policy"], p.params["size_ratio"]) for p in points] == [
        ("tiering", 3), ("tiering", 5), ("tiering", 10),
        ("leveling", 3), ("leveling", 5), ("leveling", 10),
    ]
    assert [p.index for p in points] == list(range(6))


def test_zip_advances_dimensions_together():
    points, _ = expand_matrix({
        "policy": ["tiering", "leveling"], "size_ratio": [3, 10],
        "scheduler": ["fair", "greedy"], "zip": [["policy", "size_ratio"]],
    })
    combos = [(p.params["policy"], p.params["size_ratio"], p.params["scheduler"]) for p in points]
    assert combos == [("tiering", 3, "fair"), ("tiering", 3, "greedy"),
                      ("leveling", 10, "fair"), ("leveling", 10, "greedy")]


def test_flat_zip_group_is_one_group():
    points, _ = expand_matrix({"a": [1, 2], "b": [3, 4], "zip": ["a", "b"]})
    assert [(p.params["a"], p.params["b"]) for p in points] == [(1, 3), (2, 4)]


def test_exclude_rules_match_every_key_and_lists():
    matrix = {
        "policy": ["tiering", "leveling", "size-tiered"],
        "scheduler": ["fair", "greedy"],
        "exclude": [{"policy": "leveling", "scheduler": "greedy"},
                    {"policy": ["size-tiered"]}],
    }
    points, excluded = expand_matrix(matrix)
    combos = {(p.params["policy"], p.params["scheduler"]) for p in points}
    assert combos == {("tiering", "fair"), ("tiering", "greedy"), ("leveling", "fair")}
    assert excluded == 3


def test_repetitions_and_seeds():
    points, _ = expand_matrix({"policy": ["tiering"], "repetitions": 3})
    assert [(p.rep, p.seed) for p in points] == [(0, 1), (1, 2), (2, 3)]
    points, _ = expand_matrix({"policy": ["tiering"], "seeds": [42, 7]})
    assert [(p.rep, p.seed) for p in points] == [(0, 42), (1, 7)]
    points, excluded = expand_matrix({"a": [1, 2], "repetitions": 2, "exclude": [{"a": 2}]})
    assert len(points) == 2 and excluded == 2


def test_empty_matrix_is_one_point():
    points, _ = expand_matrix({})
    assert len(points) == 1
    assert points[0].id == "rep=0"


def test_point_ids_readable_stable_unique():
    pid = point_id({"policy": "tiering", "size_ratio": 3}, 0)
    assert pid == "policy=tiering,size_ratio=3,rep=0"
    assert point_id({"phases.running.utilization": 0.5}, 1) == "utilization=0.5,rep=1"
    assert point_id({"x": "a/b c"}, 0) == "x=a-b-c,rep=0"
    assert point_id({"r": 3.0}, 0) == "r=3,rep=0"
    # Same last part twice: keep the full names so ids stay unambiguous.
    pid = point_id({"phases.testing.threads": 1, "phases.running.threads": 2}, 0)
    assert pid == "phases.testing.threads=1,phases.running.threads=2,rep=0"
    long = {f"option_number_{i}": "value" * 3 for i in range(10)}
    a = point_id(long, 0)
    b = point_id({**long, "option_number_9": "other"}, 0)
    assert len(a) <= MAX_ID_LEN and len(b) <= MAX_ID_LEN
    assert a != b and "~" in a
    assert point_id(long, 0) == a  # stable


def test_ids_unique_over_a_big_matrix():
    points, _ = expand_matrix({f"d{i}": list(range(4)) for i in range(5)} | {"repetitions": 2})
    assert len(points) == 4**5 * 2
    assert len({p.id for p in points}) == len(points)


def test_engine_option_precedence():
    loaded = load(
        {"policy": ["tiering"], "scheduler": ["greedy"], "size_ratio": [4]},
        engine={"options": {"merge_policy": "leveling", "memtable_bytes": "4M",
                            "verify_checksums": False}},
        phases={"testing": {"engine_options": {"merge_scheduler": "fair",
                                               "merge_exact_min": True}}},
    )
    p = expand_matrix(loaded.spec.matrix)[0][0]
    testing = phase_engine_options(loaded.spec, p, "testing")
    running = phase_engine_options(loaded.spec, p, "running")
    # engine.options < matrix < phase overrides; values as the driver's strings
    assert testing == {"memtable_bytes": "4M", "merge_exact_min": "true",
                       "merge_policy": "tiering", "merge_scheduler": "fair",
                       "size_ratio": "4", "verify_checksums": "false"}
    assert running["merge_scheduler"] == "greedy"
    assert "merge_exact_min" not in running


def test_dotted_dimensions_set_the_point_spec_and_workload():
    loaded = load({"phases.running.utilization": [0.5, 0.9],
                   "workload.inline.value_size": [100, 1000],
                   "engine.options.size_ratio": [3]})
    points, _ = expand_matrix(loaded.spec.matrix)
    assert len(points) == 4
    p = points[3]
    assert point_spec(loaded, p).phases.running.utilization == 0.9
    assert point_workload(loaded, p)["value_size"] == 1000
    assert point_workload(loaded, points[0])["value_size"] == 100
    assert phase_engine_options(loaded.spec, p, "running")["size_ratio"] == "3"
    assert loaded.spec.phases.running.utilization == 0.95  # the campaign spec is untouched


def test_plan_phases_and_estimate():
    loaded = load({"policy": ["tiering", "leveling"]},
                  phases={"testing": {"duration": 60},
                          "running": {"duration": 30, "utilizations": [0.5, 0.95]}})
    plan = build_plan(loaded)
    assert [ph.name for ph in plan.phases()] == ["load", "testing", "running@0.5",
                                                "running@0.95"]
    # 1000 records at the assumed load rate + 60 + 2 x 30 + overhead
    assert plan.estimate_point_s == pytest.approx(1000 / 50_000 + 120 + 2.0)
    assert plan.estimate_s == pytest.approx(2 * plan.estimate_point_s)
    assert build_plan(loaded, history_load_s=10).estimate_point_s == pytest.approx(132)


def test_plan_of_a_search_estimates_max_steps_running_phases():
    from lsmbench.plan import describe

    search = {"low": 0.5, "high": 1.0, "tolerance": 0.02, "max_steps": 5}
    loaded = load({}, phases={"testing": {"duration": 60},
                              "running": {"duration": 30, "search": search}})
    plan = build_plan(loaded)
    assert [(ph.name, ph.duration_s, ph.runs) for ph in plan.phases()] == [
        ("load", None, 1), ("testing", 60, 1), ("search", 150, 5)]
    assert plan.estimate_point_s == pytest.approx(1000 / 50_000 + 60 + 5 * 30 + 2.0)
    doc = plan.to_json()
    assert doc["search"] == search and doc["phases"][-1]["runs"] == 5
    text = "\n".join(describe(plan))
    assert "search (<= 5 running phases of 30s: 2m30s)" in text
    assert "the highest sustainable utilization in [0.5, 1] x max, to within 0.02" in text
    # The default search can take 7 steps: 5 may stop it early, and the plan says so.
    assert "max_steps 5 may stop the search before its tolerance: it can take 7 steps" in text
    reload = build_plan(load({}, phases={"running": {"duration": 30, "start": "reload",
                                                     "search": search}}))
    # Each step reloads: five loads besides the first.
    assert reload.estimate_point_s == pytest.approx(6 * 1000 / 50_000 + 600 + 150 + 2.0)


def test_plan_of_1000_points_under_one_second():
    matrix = {"policy": ["tiering", "leveling"], "size_ratio": [2, 3, 4, 5, 6, 8, 10, 12, 16, 20],
              "memtable_bytes": ["1M", "2M", "4M", "8M", "16M"], "repetitions": 10}
    t0 = time.perf_counter()
    loaded = load(matrix)
    plan = build_plan(loaded)
    doc = plan.to_json()
    elapsed = time.perf_counter() - t0
    assert len(plan.points) == 1000 and len(doc["points"]) == 1000
    assert elapsed < 1.0, f"planning 1000 points took {elapsed:.3f}s"


def test_shared_testing_groups_and_their_checks():
    from lsmbench.point_pipeline import shared_testing_mismatches

    matrix = {"policy": ["tiering", "leveling"], "scheduler": ["single", "fair", "greedy"],
              "repetitions": 2}
    phases = {"testing": {"duration": "60s", "shared_across": ["scheduler"]}}
    # The scheduler would change the loaded tree and the testing phase too: refused,
    # naming the difference.
    plan = build_plan(load(matrix, phases=phases))
    errors = shared_testing_mismatches(plan)
    assert errors and "load options: merge_scheduler='single' vs 'fair'" in errors[0], errors
    assert "policy=tiering,scheduler=single,rep=0" in errors[0]
    phases["load"] = {"engine_options": {"merge_scheduler": "single"}}
    errors = shared_testing_mismatches(build_plan(load(matrix, phases=phases)))
    assert errors and "testing options: merge_scheduler='single' vs 'fair'" in errors[0], errors

    # With both fixed, points that differ only in the scheduler (same policy, same
    # repetition) share the first one's testing phase.
    phases["testing"]["engine_options"] = {"merge_scheduler": "fair"}
    plan = build_plan(load(matrix, phases=phases))
    assert shared_testing_mismatches(plan) == []
    leaders = plan.testing_leaders()
    assert len(set(leaders.values())) == 4  # 2 policies x 2 repetitions
    for p in plan.points:
        leader = next(q for q in plan.points if q.id == leaders[p.id])
        assert (leader.params["policy"], leader.rep) == (p.params["policy"], p.rep)
        assert leader.params["scheduler"] == "single"
    assert any("4 testing phases for 12 points" in n for n in plan.notes)
    unshared = build_plan(load(matrix, phases={"testing": {"duration": "60s"}}))
    assert unshared.testing_leaders() == {p.id: p.id for p in unshared.points}
    assert unshared.estimate_s - plan.estimate_s == pytest.approx(8 * 60)


def test_validate_refuses_a_sharing_the_resolved_options_break(tmp_path, capsys):
    """`lsmbench validate` (and so run, plan) refuses points that would share a testing phase
    although a dimension changes their load options -- before anything runs, exit 2 and the
    spec path; the run used to find it only when it started."""
    from lsmbench.cli import main

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "share", "engine": {"name": "builtin"}, "workload": "update-uniform-1kb",
        "matrix": {"scheduler": ["single", "idle"], "idle_mode": ["rate", "after_burst"],
                   "exclude": [{"scheduler": "single", "idle_mode": "after_burst"}]},
        "phases": {"load": {"engine_options": {"merge_scheduler": "single"}},
                   "testing": {"duration": "8s", "shared_across": ["scheduler", "idle_mode"],
                               "engine_options": {"merge_scheduler": "idle"}}}},
        sort_keys=False))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "phases.testing.shared_across: scheduler=single,idle_mode=rate,rep=0 and " \
           "scheduler=idle,idle_mode=after_burst,rep=0 would share" in err
    assert "idle_mode='rate' vs 'after_burst'" in err
