"""lsmbench tune: the tune: section's checks, the domains, pruning, and a tiny study run for
real -- killed mid-trial and resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import optuna
import pytest
import yaml
from lsmbench.campaign import RunOptions
from lsmbench.method.groups import Repetition
from lsmbench.progress import Reporter
from lsmbench.results.tuning import STUDY_FILE
from lsmbench.spec import SpecError, validate_raw
from lsmbench.spec.tune import parse_bound
from lsmbench.spec.tune_domains import default_value, resolve_domains
from lsmbench.store import Store
from lsmbench.tune.metrics import metric_value, violations
from lsmbench.tune.study import Tuner

SEARCH = {"low": 0.5, "high": 1.0, "tolerance": 0.25, "max_steps": 2}


def spec_doc(data_dir: str = "/var/tmp/lsmbench-tune-test", **tune) -> dict:
    return {
        "name": "tiny-tune",
        "engine": {"name": "builtin", "options": {"memtable_bytes": "1M"}},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 3000}},
        "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                   "running": {"duration": "2s", "search": SEARCH}},
        "testbed": {"type": "local", "data_dir": data_dir},
        "tune": {"trials": 3, "seed": 7, "objective": "max_sustainable_rate",
                 "constraints": {"sustainable": True},
                 "parameters": {"memtable_bytes": {"low": "512K", "high": "4M"},
                                "merge_policy": {"choices": ["tiering", "leveling"]}},
                 "confirm": {"top": 1, "repetitions": 2}, **tune},
    }


def errors_of(doc: dict) -> dict[str, str]:
    with pytest.raises(SpecError) as e:
        validate_raw(doc)
    return dict(e.value.errors)


# ---------------------------------------------------------------- the tune: section


def test_bad_tune_sections_name_their_paths():
    doc = spec_doc()
    doc["tune"]["parameters"] = {
        "memtable_byts": {"low": "1M", "high": "4M"},          # unknown parameter
        "memory_components": {"low": 4, "high": 2},            # empty domain
        "size_ratio": {"low": 0, "high": 10, "log": True},     # log scale with 0
        "merge_scheduler": {"choices": ["fair", "gredy"]},     # a bad choice
        "phases.running.utilization": {},                      # no domain to take
    }
    errs = errors_of(doc)
    assert "did you mean 'memtable_bytes'" in errs["tune.parameters.memtable_byts"]
    assert "empty domain" in errs["tune.parameters.memory_components"]
    assert "log scale needs low > 0" in errs["tune.parameters.size_ratio.log"]
    assert "did you mean 'greedy'" in errs["tune.parameters.merge_scheduler.choices[1]"]
    assert "give its domain" in errs["tune.parameters.phases.running.utilization"]

    doc = spec_doc(constraints={"p42": "<= 1", "p99_write_latency": "100ms"})
    errs = errors_of(doc)
    assert "unknown metric 'p42'" in errs["tune.constraints.p42"]
    assert "expected '<= VALUE'" in errs["tune.constraints.p99_write_latency"]

    doc = spec_doc()
    doc["tune"]["parameters"]["merge_policy"] = {"choices": []}
    assert "empty domain" in errors_of(doc)["tune.parameters.merge_policy"]

    doc = spec_doc()
    doc["matrix"] = {"policy": ["tiering"]}
    del doc["phases"]["running"]["search"]
    errs = errors_of(doc)
    assert "tune.parameters" in errs["matrix.policy"]
    assert "needs phases.running.search" in errs["tune.objective"]


def test_bad_tune_section_from_the_command_line(tmp_path):
    doc = spec_doc()
    doc["tune"]["parameters"]["size_ratio"] = {"low": 0, "high": 10, "log": True}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    for cmd in ("tune", "validate"):
        r = subprocess.run([sys.executable, "-m", "lsmbench", cmd, str(path), "--results",
                            str(tmp_path / "results")], capture_output=True, text=True,
                           check=False, timeout=120)
        assert r.returncode == 2, r.stderr
        assert "tune.parameters.size_ratio.log: a log scale needs low > 0" in r.stderr
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "results").exists()  # nothing written
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(spec_doc()))
    r = subprocess.run([sys.executable, "-m", "lsmbench", "run", str(good)],
                       capture_output=True, text=True, check=False, timeout=120)
    assert r.returncode == 2 and "lsmbench tune" in r.stderr
    # plan describes the study: trials and confirmation runs, domains, the sampler.
    r = subprocess.run([sys.executable, "-m", "lsmbench", "plan", str(good)],
                       capture_output=True, text=True, check=False, timeout=120,
                       env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    assert "study tiny-tune (lsmbench tune): 3 trials + up to 4 confirmation runs" in r.stdout
    assert "parameter memtable_bytes: [524,288, 4,194,304] bytes int, log" in r.stdout
    assert "parameter merge_policy: {tiering, leveling}" in r.stdout


def test_domains_come_from_the_engine_unless_given():
    doc = spec_doc()
    doc["tune"]["parameters"] = {"memtable_bytes": {}, "policy": {}, "l0_trigger": {},
                                 "size_ratio": {"low": 2, "high": 10.5},
                                 "phases.running.duration": {"low": 1, "high": 3}}
    spec = validate_raw(doc).spec
    doms, errors = resolve_domains(spec)
    assert errors == []
    mb = doms["memtable_bytes"]
    assert (mb.kind, mb.low, mb.high, mb.log) == ("int", 4096, 64 << 30, True)
    assert doms["policy"].kind == "categorical" and "partitioned" in doms["policy"].choices
    assert (doms["l0_trigger"].kind, doms["l0_trigger"].low, doms["l0_trigger"].log) == \
        ("int", 1, False)
    assert doms["size_ratio"].kind == "float"
    assert doms["phases.running.duration"].kind == "int"
    # The spec's own values: engine.options first, then the engine's default, then the path.
    assert default_value(spec, mb) == 1 << 20
    assert default_value(spec, doms["policy"]) == "tiering"
    assert default_value(spec, doms["l0_trigger"]) == 4
    assert default_value(spec, doms["phases.running.duration"]) == 2.0


def test_constraint_values_are_optunas_sign_convention():
    rep = Repetition(point="p", group="g", state="complete", verdict="sustainable",
                     sustainable=True, p99_write_latency_s=0.2, searched=True,
                     max_sustainable_rate=None, max_write_throughput=1000.0)
    bounds = [parse_bound("sustainable", True), parse_bound("p99_write_latency", "<= 100ms"),
              parse_bound("max_write_throughput", ">= 500")]
    assert violations(rep, bounds) == pytest.approx([0.0, 1.0, -1.0])
    assert metric_value(rep, "max_sustainable_rate") == 0.0  # searched, found none
    failed = rep.model_copy(update={"state": "failed"})
    assert violations(failed, bounds) == [1.0, 1.0, 1.0]  # not measured: violated


def test_a_trial_that_cannot_beat_the_best_skips_its_running_phases(tmp_path):
    loaded = validate_raw(spec_doc(str(tmp_path / "data")))
    tuner = Tuner(loaded, Store(tmp_path / "results"), Reporter(), RunOptions())
    study = optuna.create_study(direction="maximize")
    decide_first = tuner._after_testing(study, study.ask())
    assert decide_first(5000.0) is None  # nothing to beat yet
    done = study.ask()
    done.set_user_attr("constraints", [0.0])
    study.tell(done, 4000.0)
    infeasible = study.ask()
    infeasible.set_user_attr("constraints", [1.0])
    study.tell(infeasible, 9000.0)  # higher, but not sustainable: not the one to beat
    trial = study.ask()
    decide = tuner._after_testing(study, trial)
    # high = 1.0: a search can at best reach the testing maximum.
    choice = decide(3999.0)
    assert choice is not None and choice.skip and "4,000 writes/s, trial 1" in choice.skip
    # The testing maximum is the trial's intermediate value (step 0).
    assert study.trials[trial.number].intermediate_values == {0: 3999.0}
    assert tuner._after_testing(study, study.ask())(4001.0) is None
    tuner.tune = tuner.tune.model_copy(update={"prune": False})
    assert tuner._after_testing(study, study.ask())(10.0) is None
    # The pruned trial is told as Optuna's PRUNED: its row shows the testing maximum, not an
    # objective value (Optuna copies the intermediate value into a pruned trial's value).
    study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    row = next(r for r in tuner._rows(study) if r.number == trial.number)
    assert (row.state, row.values, row.max_write_throughput) == ("pruned", None, 3999.0)
    assert study.trials[trial.number].value == 3999.0


# ---------------------------------------------------------------- a study, for real


@pytest.mark.slow
def test_tiny_study_killed_mid_trial_resumes_and_answers(tmp_path, data_root, driver_path):
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(spec_doc(str(data_root / "data"))))
    results = tmp_path / "results"
    cmd = [sys.executable, "-m", "lsmbench", "tune", str(spec), "--results", str(results),
           "--set", f"testbed.driver={driver_path}"]
    # Killed (SIGKILL) while the second trial runs its testing phase.
    proc = subprocess.Popen([*cmd, "--json"], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    starts = 0
    deadline = time.monotonic() + 300
    for line in proc.stdout:
        ev = json.loads(line) if line.startswith("{") else {}
        starts += ev.get("event") == "point_start"
        if starts == 2 and ev.get("event") == "phase_start" and ev.get("phase") == "testing":
            os.killpg(proc.pid, signal.SIGKILL)
            break
        assert time.monotonic() < deadline, "the second trial never started"
    proc.wait(timeout=60)
    store = Store(results)
    first = {r.point_id: r.data["started"] for r in store.points("tiny-tune")}
    assert len(first) == 1  # the first trial's point; the second died in .tmp/
    study = optuna.load_study(study_name="tiny-tune",
                              storage=f"sqlite:///{results / 'tiny-tune' / STUDY_FILE}")
    states = [t.state for t in study.trials]
    assert states == [optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.RUNNING]
    assert study.trials[0].user_attrs.get("defaults") is True
    assert study.trials[0].params == {"memtable_bytes": 1 << 20, "merge_policy": "tiering"}
    killed_params = study.trials[1].params

    r = subprocess.run([*cmd, "--resume", "--json"], capture_output=True, text=True,
                       check=False, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    answer = json.loads(r.stdout.strip().splitlines()[-1])
    assert answer["trials"] == 3
    best = answer["best"]
    assert set(best["params"]) == {"memtable_bytes", "merge_policy"}
    assert isinstance(best["sustainable"], bool) and best["value"] is not None

    study = optuna.load_study(study_name="tiny-tune",
                              storage=f"sqlite:///{results / 'tiny-tune' / STUDY_FILE}")
    trials = study.trials
    assert trials[1].state == optuna.trial.TrialState.FAIL
    assert trials[1].user_attrs.get("interrupted") is True
    redo = trials[2]
    assert redo.params == killed_params and redo.user_attrs.get("redo_of") == 1
    finished = [t for t in trials if t.state in (optuna.trial.TrialState.COMPLETE,
                                                  optuna.trial.TrialState.PRUNED)]
    assert len(finished) == 3
    # The first trial's point was kept, not run again.
    points = {r.point_id: r for r in store.points("tiny-tune")}
    for pid, started in first.items():
        assert points[pid].data["started"] == started
    # Every finished trial is a stored point naming its trial; the confirmations are points
    # too: the best configuration's, 2 fresh repetitions, judged on them alone.
    for t in finished:
        rec = points[t.user_attrs["point"]]
        assert rec.data["tune"] == {"trial": t.number} and rec.data["params"] == t.params
    confirm = [r for r in points.values() if (r.data.get("tune") or {}).get("confirm")]
    tune_json = json.loads((results / "tiny-tune" / "tune.json").read_text())
    best_conf = next(c for c in tune_json["confirmed"] if c["params"] == best["params"])
    assert best_conf["repetitions"] == 2
    assert sorted(best_conf["points"]) == sorted(
        r.point_id for r in confirm if r.data["params"] == best["params"])
    values = [r.data["search"]["rate"] or 0.0 for r in confirm
              if r.data["params"] == best["params"]]
    assert best["value"] == pytest.approx(min(values))  # 2 runs: the worse one
    # The spec's own configuration is confirmed too, for the comparison.
    assert any(c["defaults"] for c in tune_json["confirmed"])

    # ls and the report work on the study's points; the report's trial table is the study.
    r = subprocess.run([sys.executable, "-m", "lsmbench", "ls", "tiny-tune", "--json",
                        "--results", str(results)], capture_output=True, text=True,
                       check=False, timeout=120)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "lsmbench", "report", "tiny-tune", "--results",
                        str(results), "--out", str(tmp_path / "report")], capture_output=True,
                       text=True, check=False, timeout=300)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "report" / "report.html").read_text()
    assert 'id="tune-trials"' in html and 'data-figure="tune-history"' in html
    for t in trials:
        assert f'data-trial="{t.number}"' in html
    md = (tmp_path / "report" / "summary.md").read_text()
    assert "**Tuning**" in md and f"{answer['trials']} trials" in md


def test_two_objectives_give_a_pareto_front(tmp_path):
    """Throughput against p99: the answer is on the front, the report draws it, and neither
    pruning nor confirmation applies."""
    from lsmbench.report.tuning_figures import tune_figures

    doc = spec_doc(str(tmp_path / "data"),
                   objective=["max_write_throughput", "p99_write_latency"], constraints={})
    del doc["phases"]["running"]["search"]
    tuner = Tuner(validate_raw(doc), Store(tmp_path / "results"), Reporter(), RunOptions())
    assert tuner.directions == ["maximize", "minimize"]
    study = optuna.create_study(directions=tuner.directions)
    measured = [(1000.0, 0.010), (2000.0, 0.050), (1500.0, 0.100), (900.0, 0.020),
                (2500.0, 0.400)]
    for tp, p99 in measured:
        t = study.ask()
        t.suggest_int("memtable_bytes", 1 << 19, 1 << 22, log=True)
        t.suggest_categorical("merge_policy", ["tiering", "leveling"])
        study.tell(t, [tp, p99])
    assert tuner._after_testing(study, study.ask())(1.0) is None  # no pruning
    assert tuner._confirm(study, session=None) == []  # no confirmation
    result = tuner.result(study, [])
    # Dominated: (1500, 0.1) by (2000, 0.05); (900, 0.02) by (1000, 0.01).
    assert sorted(result.pareto) == [0, 1, 4]
    assert result.best is not None and result.best.value == 2500.0  # the front's best first
    assert "Pareto" in result.best.basis
    figs = {f.id: f for f in tune_figures(result)}
    assert set(figs) == {"tune-history", "tune-pareto"} and "front (3)" in figs[
        "tune-pareto"].caption


def test_a_study_on_a_testbed_that_does_not_exist_leaves_nothing(tmp_path, monkeypatch, capsys):
    from lsmbench.cli import main

    monkeypatch.setenv("LSMBENCH_TESTBEDS", str(tmp_path / "testbeds"))
    doc = spec_doc()
    doc["testbed"] = "nosuchbed"
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(doc))
    results = tmp_path / "results"
    assert main(["tune", str(spec), "--results", str(results), "--no-publish"]) == 3
    assert "no testbed 'nosuchbed'" in capsys.readouterr().err
    assert not (results / "tiny-tune" / STUDY_FILE).exists()
    assert Store(results).points("tiny-tune") == []


# ---------------------------------------------------------------- the spec's own values, resolved


def _leveling_doc(**parameters) -> dict:
    doc = spec_doc()
    doc["engine"]["options"]["merge_policy"] = "leveling"
    doc["tune"]["parameters"] = parameters
    return doc


def test_the_spec_own_zero_size_ratio_is_the_policy_default_inside_an_integer_domain():
    # size_ratio: 0 means the policy's default (10 for leveling); the integer ends make an
    # integer domain, shown as one and sampled with suggest_int.
    spec = validate_raw(_leveling_doc(size_ratio={"low": 2, "high": 12})).spec
    dom = resolve_domains(spec)[0]["size_ratio"]
    assert dom.kind == "int" and dom.describe() == "[2, 12] int"
    assert default_value(spec, dom) == 10 and dom.contains(10)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    drawn = [dom.suggest(study.ask()) for _ in range(20)]
    assert all(type(v) is int and 2 <= v <= 12 for v in drawn)
    # Other policies' defaults; a real range (2.0) stays real.
    for policy, own in (("tiering", 3), ("partitioned", 10)):
        doc = _leveling_doc(size_ratio={"low": 2, "high": 12})
        doc["engine"]["options"]["merge_policy"] = policy
        spec = validate_raw(doc).spec
        assert default_value(spec, resolve_domains(spec)[0]["size_ratio"]) == own
    spec = validate_raw(_leveling_doc(size_ratio={"low": 2.0, "high": 12})).spec
    real = resolve_domains(spec)[0]["size_ratio"]
    assert real.kind == "float" and default_value(spec, real) == 10.0
    # The per-level constraint's 0 is the policy's too: 2 for leveling.
    spec = validate_raw(_leveling_doc(max_components_per_level={"low": 1, "high": 8})).spec
    assert default_value(spec, resolve_domains(spec)[0]["max_components_per_level"]) == 2


def test_the_policy_defaults_are_the_engines():
    """policy_defaults mirrors engines/lsm/policy/policies.h: the numbers read from the
    header."""
    import re

    from lsmbench.engine_options import policy_defaults
    from lsmbench.util.paths import project_root

    header = (project_root() / "engines" / "lsm" / "policy" / "policies.h").read_text()
    consts = {m[1]: float(m[2]) for m in re.finditer(
        r"constexpr double k(\w+)DefaultRatio = ([0-9.]+);", header)}
    assert consts == {"Leveling": 10, "Tiering": 3, "SizeTiered": 1.2}
    expected = {"leveling": consts["Leveling"], "partitioned": consts["Leveling"],
                "tiering": consts["Tiering"], "size-tiered": consts["SizeTiered"]}
    assert expected == policy_defaults.SIZE_RATIO


def _first_trial(tmp_path, doc: dict) -> tuple[dict, bool, list[str]]:
    """The first trial a fresh study asks for: its parameters, whether it is labelled the
    spec's own, and the warnings said."""
    said: list[str] = []

    class Said(Reporter):
        def message(self, text: str, level: str = "info") -> None:
            said.append(f"{level}: {text}")

    tuner = Tuner(validate_raw(doc), Store(tmp_path / "results"), Said(), RunOptions())
    study = optuna.create_study(direction="maximize")
    tuner._enqueue_defaults(study)
    trial = study.ask()
    params = {name: dom.suggest(trial) for name, dom in tuner.domains.items()}
    return params, bool(study.trials[0].user_attrs.get("defaults")), said


def test_trial_0_is_exactly_the_spec_own_or_is_not_labelled_so(tmp_path):
    params, own, said = _first_trial(tmp_path, _leveling_doc(
        size_ratio={"low": 2, "high": 12}, memory_components={"low": 2, "high": 4}))
    assert params == {"size_ratio": 10, "memory_components": 2} and own and said == []
    # The spec's own size ratio (tiering: 3) outside [4, 12]: sampled, so not the spec's own.
    doc = _leveling_doc(size_ratio={"low": 4, "high": 12}, memory_components={"low": 2,
                                                                             "high": 4})
    doc["engine"]["options"]["merge_policy"] = "tiering"
    params, own, said = _first_trial(tmp_path, doc)
    assert not own and params["memory_components"] == 2 and 4 <= params["size_ratio"] <= 12
    assert said == ["warning: the spec's own size_ratio (3) is outside its domain [4, 12] int: "
                    "the first trial samples it and is not the spec's own configuration"]


def test_a_plugin_is_tuned_over_its_own_option_table(tmp_path, data_root, driver_path):
    """An engine plugin's options are tuned like the bundled engine's: each domain from the
    plugin's table (memkv's memtable_entries: an integer in [16, 2^20]), each trial a point
    of the plugin with the suggested value."""
    doc = spec_doc(str(data_root / "data"), trials=2, objective="max_write_throughput",
                   constraints={}, confirm={"top": 0},
                   parameters={"memtable_entries": {}})
    doc["engine"] = {"name": "memkv", "options": {"memtable_entries": 64}}
    doc["phases"] = {"testing": {"duration": "2s", "warmup": "0.5s"},
                     "running": {"enabled": False}}
    doms, errors = resolve_domains(validate_raw(doc).spec)
    assert errors == []
    dom = doms["memtable_entries"]
    assert (dom.kind, dom.low, dom.high) == ("int", 16, 1 << 20)
    spec = tmp_path / "plugin-tune.yaml"
    spec.write_text(yaml.safe_dump(doc))
    results = tmp_path / "results"
    r = subprocess.run([sys.executable, "-m", "lsmbench", "tune", str(spec), "--results",
                        str(results), "--set", f"testbed.driver={driver_path}", "--json"],
                       capture_output=True, text=True, check=False, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    answer = json.loads(r.stdout.strip().splitlines()[-1])
    assert answer["trials"] == 2 and answer["best"]["value"] > 0
    points = [p for p in Store(results).points("tiny-tune")
              if "trial" in (p.data.get("tune") or {})]
    assert len(points) == 2
    for p in points:
        assert p.data["engine"] == "memkv"
        value = int(p.data["params"]["memtable_entries"])
        assert 16 <= value <= 1 << 20
        options = json.loads((p.path / "testing" / "run.json").read_text())["engine_options"]
        assert options["memtable_entries"] == str(value)
    # Trial 0 is the spec's own configuration, as for the bundled engine.
    assert any(int(p.data["params"]["memtable_entries"]) == 64 for p in points)
