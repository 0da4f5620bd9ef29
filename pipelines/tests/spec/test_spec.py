"""The campaign spec: good specs validate, each bad one fails with its path and message."""

from __future__ import annotations

import copy

import pytest
from lsmbench.plan import expand_matrix
from lsmbench.spec import (
    CampaignSpec,
    SpecError,
    apply_set,
    load_spec,
    validate_raw,
)
from lsmbench.testbeds import BACKENDS
from lsmbench.util import names
from repo_paths import PIPELINES, REPO

CAMPAIGNS = PIPELINES / "campaigns"

BASE = {
    "name": "t",
    "workload": {"inline": {"record_count": 1000, "value_size": 100,
                            "operations": {"update": 1.0}}},
}


def raw(**changes):
    r = copy.deepcopy(BASE)
    r.update(changes)
    return r


def errors_of(r, sets=None):
    with pytest.raises(SpecError) as e:
        validate_raw(r, sets=sets)
    return e.value.lines()


# ---------------------------------------------------------------- good specs


@pytest.mark.parametrize("path", sorted(CAMPAIGNS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_campaign_validates(path):
    loaded = load_spec(path)
    assert loaded.spec.name == path.stem
    # A replayed trace loads the keys it uses: it has no record count of its own.
    assert loaded.workload.get("record_count") is not None or "rocksdb_trace" in loaded.workload


def test_defaults_are_the_papers():
    spec = validate_raw(raw()).spec
    assert spec.phases.testing.warmup_seconds() == pytest.approx(600 / 6)
    assert spec.phases.running.utilization == 0.95
    assert spec.verdict.p99_write_latency == 1.0
    assert spec.verdict.max_backlog == 1.0
    # The whole-run criteria: 1 s of arrivals gained per 1000 s, 1 % stalled, 10 % short.
    assert (spec.verdict.max_backlog_growth, spec.verdict.max_stalled_fraction,
            spec.verdict.max_rate_shortfall) == (0.001, 0.01, 0.10)
    assert spec.throttle.enabled is False
    assert spec.testbed.type == "local"
    assert spec.engine.name == "builtin"


def test_shorthands_and_units():
    spec = validate_raw(raw(
        workload="update-uniform-1kb",
        testbed="local",
        throttle={"write_bps": "20MB/s"},
        phases={"testing": {"duration": "2m", "warmup": "20s"},
                "running": {"duration": 90, "utilizations": [0.5, 0.95]}},
    )).spec
    assert spec.workload.file == "update-uniform-1kb"
    assert spec.phases.testing.duration == 120
    assert spec.phases.testing.warmup_seconds() == 20
    assert spec.phases.running.sweep() == [0.5, 0.95]
    assert spec.throttle.enabled and spec.throttle.write_bps == "20MB/s"
    assert validate_raw(raw(throttle="none")).spec.throttle.enabled is False


def test_workload_file_is_read_and_set_applies():
    loaded = validate_raw(raw(workload={"file": "update-uniform-1kb",
                                        "set": {"record_count": 5000}}))
    assert loaded.workload["record_count"] == 5000
    assert loaded.workload["value_size"] == 1000
    assert loaded.workload_file is not None and loaded.workload_file.name == (
        "update-uniform-1kb.yaml")


def test_testbed_backends_have_one_list():
    assert tuple(BACKENDS) == names.TESTBEDS


def test_ssh_and_terraform_specs_validate_today():
    ssh = validate_raw(raw(testbed={"type": "ssh", "hosts": [{"address": "10.0.0.5",
                                                               "user": "bench"}]})).spec
    assert ssh.testbed.hosts[0].port == 22
    tf = validate_raw(raw(testbed={"type": "terraform", "module": "terraform/modules/aws-node",
                                   "variables": {"instances": 2}})).spec
    assert tf.testbed.reuse is True and tf.testbed.destroy == "never"


# ---------------------------------------------------------------- bad specs


BAD = [
    # (changes, expected line) -- each bad spec asserts its message
    ({"matrix": {"scheduler": ["single", "fair", "gredy"]}},
     "matrix.scheduler[2]: unknown merge_scheduler 'gredy' (choose from: single, fair, greedy, "
     "greedy_k, idle, leveldb)"),
    ({"matrix": {"policy": ["tiering", "tearing"]}},
     "matrix.policy[1]: unknown merge_policy 'tearing' (choose from: leveling, tiering, "
     "size-tiered, partitioned, bigtable, exploring, constant, minlatency, binomial)"),
    ({"engine": {"options": {"merge_policy": "levling"}}},
     "engine.options.merge_policy: unknown merge_policy 'levling' (choose from: leveling, tiering, "
     "size-tiered, partitioned, bigtable, exploring, constant, minlatency, binomial)"),
    ({"phases": {"testing": {"engine_options": {"merge_scheduler": "fari"}}}},
     "phases.testing.engine_options.merge_scheduler: unknown merge_scheduler 'fari' (choose from: "
     "single, fair, greedy, greedy_k, idle, leveldb)"),
    ({"matrix": {"throttle.write_bps": ["10MB/s", "20MB/s"]}},
     "matrix.throttle.write_bps: throttle.write_bps cannot vary per point: the throttle's rates "
     "are set once per campaign; vary throttle.enabled, throttle.phases, or run one campaign per "
     "rate"),
    ({"engine": {"name": "rocks"}},
     "engine.name: unknown engine 'rocks': neither compiled into lsm-driver nor a plugin "
     "lsmbench-rocks.so on the plugin path"),
    ({"engine": {"name": "Rocks!"}},
     "engine.name: unknown engine 'Rocks!' (choose from: builtin, null, rocksdb, leveldb, "
     "pebble, fjall, memkv, or an engine plugin's name"),
    ({"enigne": {}},
     "enigne: unknown key 'enigne' (allowed: name, description, engine, engines, matrix, "
     "workload, phases, verdict, throttle, sinks, testbed, tune, pair)"),
    ({"phases": {"testing": {"durtion": 5}}},
     "phases.testing.durtion: unknown key 'durtion' (allowed: duration, warmup, "
     "warmup_fraction, threads, queries, engine_options, timeout, shared_across, maximum, "
     "settle, steady)"),
    ({"phases": {"testing": {"duration": "10 parsecs"}}},
     "phases.testing.duration: bad duration '10 parsecs' (expected a number of seconds or a "
     "number with a unit: ms, s, sec, m, min, h)"),
    ({"phases": {"testing": {"duration": 10, "warmup": 10}}},
     "phases.testing: warmup (10s) must be shorter than duration (10s)"),
    ({"phases": {"running": {"utilization": 0}}},
     "phases.running.utilization: must be greater than 0 (got 0)"),
    ({"phases": {"running": {"utilizations": [0.5, 0.5]}}},
     "phases.running.utilizations: duplicate utilizations in [0.5, 0.5]"),
    ({"matrix": {"scheduler": ["single", "fair"]},
      "phases": {"testing": {"shared_across": ["schedular"]}}},
     "phases.testing.shared_across[0]: 'schedular' is not a matrix dimension (the dimensions: "
     "scheduler)"),
    ({"matrix": {"phases.testing.duration": ["1s", "2s"]},
      "phases": {"testing": {"shared_across": ["phases.testing.duration"]}}},
     "phases.testing.shared_across[0]: 'phases.testing.duration' changes the testing phase (or "
     "the tree it starts from), so points differing in it cannot share one"),
    ({"matrix": {"scheduler": ["single", "fair"]},
      "phases": {"testing": {"shared_across": ["scheduler"]}, "running": {"start": "continue"}}},
     "phases.testing.shared_across: needs phases.running.start 'snapshot' or 'reload': with "
     "'continue' each running phase starts from its own testing phase's tree"),
    ({"phases": {"running": {"arrival": {"rate": 100}}}},
     "phases.running.arrival: 'rate' is computed (utilization x the testing phase's maximum); "
     "set 'utilization' instead"),
    ({"phases": {"running": {"start": "fresh"}}},
     "phases.running.start: unknown value 'fresh' (choose from: snapshot, reload, continue)"),
    ({"verdict": {"max_stalled_fraction": 2}},
     "verdict.max_stalled_fraction: must be less than or equal to 1 (got 2)"),
    ({"verdict": {"max_backlog_growth": -0.1}},
     "verdict.max_backlog_growth: must be greater than or equal to 0 (got -0.1)"),
    ({"throttle": {"write_bps": "fast"}},
     "throttle.write_bps: bad write_bps value 'fast': use bytes per second (52428800), a rate "
     "with a unit (100MB/s, 100MiB/s, 1.5GB/s; MB = 10^6, MiB = 2^20 bytes) or a percentage of "
     "the calibrated disk ('50%')"),
    ({"throttle": {"write_bps": "150%"}},
     "throttle.write_bps: a percentage of the calibrated disk must be in (0, 100], got '150%'"),
    ({"throttle": {"phases": ["testing", "warmup"]}},
     "throttle.phases[1]: unknown value 'warmup' (choose from: load, testing, running)"),
    ({"sinks": {"influx": {"url": "http://127.0.0.1:8086", "token": "s3cret"}}},
     "sinks.influx.token: credentials never go in the spec text: set the environment variable "
     "named by 'token_env' or put the secret in the file named by 'token_file' (not 'token')"),
    ({"sinks": {"influx": {"url": "influx.local:8086"}}},
     "sinks.influx.url: expected an http:// or https:// URL, got 'influx.local:8086'"),
    ({"testbed": {"type": "kubernetes"}},
     "testbed: unknown testbed type 'kubernetes' (choose from: local, ssh, terraform)"),
    ({"testbed": {"type": "ssh"}},
     "testbed: give 'hosts' (a list of {address, user, ...}) or an 'inventory' file"),
    ({"testbed": {"type": "ssh", "hosts": [{"address": "h", "port": 70000}]}},
     "testbed.hosts[0].port: must be less than or equal to 65535 (got 70000)"),
    ({"testbed": {"type": "local", "data_dri": "/x"}},
     "testbed.data_dri: unknown key 'data_dri' (allowed: data_dir, drop_caches, fstrim, "
     "keep_data, driver, calibration)"),
    ({"workload": "no-such-workload"},
     "workload: unknown workload 'no-such-workload' (choose from: "),
    ({"workload": {"file": "update-uniform-1kb", "inline": {}}},
     "workload: give exactly one of 'file' (a workload in workloads/) or 'inline'"),
    ({"name": "my campaign"},
     "name: bad campaign name 'my campaign' (letters, digits, '.', '_', '-'; at most 80 "
     "characters)"),
    ({"matrix": {"policy": ["tiering"], "zip": [["policy", "size_ratio"]]}},
     "matrix.zip[0][1]: unknown dimension 'size_ratio' (choose from: policy)"),
    ({"matrix": {"policy": ["tiering", "leveling"], "size_ratio": [3, 5, 10],
                 "zip": [["policy", "size_ratio"]]}},
     "matrix.zip[0]: zipped dimensions need the same number of values (policy has 2, "
     "size_ratio has 3)"),
    ({"matrix": {"policy": ["tiering"], "exclude": [{"policy": "leveling"}]}},
     "matrix.exclude[0].policy: value 'leveling' is not in matrix.policy (tiering)"),
    ({"matrix": {"policy": ["tiering"], "exclude": [{"scheduler": "fair"}]}},
     "matrix.exclude[0].scheduler: unknown dimension 'scheduler' (choose from: policy)"),
    ({"matrix": {"size_ratio": [3, 3]}}, "matrix.size_ratio[1]: duplicate value 3"),
    ({"matrix": {"size_ratio": []}}, "matrix.size_ratio: a dimension needs at least one value"),
    ({"matrix": {"repetitions": 0}},
     "matrix.repetitions: expected an integer >= 1 or {min: N, max: M}, got 0"),
    ({"matrix": {"repetitions": 3, "seeds": [1, 2]}},
     "matrix.seeds: 2 seeds for 3 repetitions (give one seed per repetition)"),
    ({"matrix": {"phases.running.utilization": [0.5, 5]}},
     "matrix.phases.running.utilization[1]: must be less than or equal to 2 (got 5)"),
    ({"matrix": {"sinks.influx.url": ["http://a"]}},
     "matrix.sinks.influx.url: a dotted dimension sets a part of the spec; it must start with "
     "one of: engine, phases, workload, verdict, throttle"),
    ({"matrix": {"Size Ratio": [3]}},
     "matrix.Size Ratio: bad dimension name (an engine option name, 'policy', 'scheduler', or "
     "a dotted spec path)"),
    ({"matrix": {"rep": [1, 2]}},
     "matrix.rep: 'rep' is reserved for the repetition number (use matrix.repetitions)"),
    ({"matrix": {"size_ratio": [[3]]}}, "matrix.size_ratio[0]: expected a scalar value, got [3]"),
    # adaptive phases and repetitions
    ({"phases": {"testing": {"duration": 60, "steady": {"rounds": 1}}}},
     "phases.testing.steady.rounds: must be greater than or equal to 2 (got 1)"),
    ({"phases": {"testing": {"duration": 60, "steady": {"max_range": 0}}}},
     "phases.testing.steady.max_range: must be greater than 0 (got 0)"),
    ({"phases": {"testing": {"duration": 60, "steady": {"round": "a while"}}}},
     "phases.testing.steady.round: bad duration 'a while'"),
    ({"phases": {"testing": {"duration": 60, "steady": {"rounds": 5, "round": 20}}}},
     "phases.testing: steady: ramp (0s) + rounds (5) x round (20s) = 100s exceeds duration "
     "(60s), the phase's cap"),
    ({"phases": {"testing": {"duration": 60, "warmup": 5, "steady": {}}}},
     "phases.testing: steady and warmup exclude each other"),
    ({"phases": {"testing": {"steady": {"window": 5}}}},
     "phases.testing.steady.window: unknown key 'window' (allowed: rounds, round, "
     "deepest_merges, max_range, max_slope, ramp)"),
    ({"phases": {"testing": {"settle": "soon"}}},
     "phases.testing.settle: bad duration 'soon'"),
    ({"phases": {"load": {"settle": -1}}},
     "phases.load.settle: duration must not be negative, got -1"),
    ({"phases": {"running": {"duration": 30, "until_decided": {"min_duration": 30}}}},
     "phases.running: until_decided.min_duration (30s) must be under duration (30s)"),
    ({"phases": {"running": {"until_decided": {"deepest_merges": 0}}}},
     "phases.running.until_decided.deepest_merges: must be greater than or equal to 1 (got 0)"),
    ({"matrix": {"repetitions": {"min": 3}}},
     "matrix.repetitions.max: required (an integer >= 1)"),
    ({"matrix": {"repetitions": {"min": 4, "max": 3}}},
     "matrix.repetitions.min: min (4) must not exceed max (3)"),
    ({"matrix": {"repetitions": {"min": 1, "max": 2, "step": 1}}},
     "matrix.repetitions.step: unknown field (allowed: min, max, groups)"),
    ({"matrix": {"repetitions": {"min": "three", "max": 5}}},
     "matrix.repetitions.min: expected an integer >= 1, got 'three'"),
    ({"matrix": {"repetitions": [3, 5]}},
     "matrix.repetitions: expected an integer >= 1 or {min: N, max: M}, got [3, 5]"),
]


@pytest.mark.parametrize("changes,expected", BAD, ids=[b[1].split(":")[0] + f"#{i}"
                                                       for i, b in enumerate(BAD)])
def test_bad_spec_names_path_and_allowed_values(changes, expected):
    lines = errors_of(raw(**changes))
    assert any(line.startswith(expected) for line in lines), lines


def test_every_error_is_listed_not_just_the_first():
    lines = errors_of(raw(
        engine={"name": "x"},
        matrix={"scheduler": ["gredy"], "policy": ["tearing"]},
        phases={"testing": {"duration": -1}, "running": {"start": "x"}},
        testbed={"type": "local", "bogus": 1},
    ))
    paths = [line.split(":")[0] for line in lines]
    for p in ("engine.name", "matrix.scheduler[0]", "matrix.policy[0]",
              "phases.testing.duration", "phases.running.start", "testbed.bogus"):
        assert p in paths, lines


def test_missing_required_fields():
    lines = errors_of({})
    assert "name: required" in lines
    assert "workload: required" in lines


def test_yaml_errors_are_spec_errors(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(p)
    p.write_text("- a list\n")
    with pytest.raises(SpecError, match="expected a mapping"):
        load_spec(p)


# ---------------------------------------------------------------- --set layering


def test_set_overrides_spec_which_overrides_defaults():
    r = raw(phases={"testing": {"duration": 60}})
    spec = validate_raw(r).spec
    assert spec.phases.running.duration == 600  # default
    assert spec.phases.testing.duration == 60  # spec
    spec = validate_raw(r, sets=["phases.testing.duration=30s",
                                 "phases.running.duration=45"]).spec
    assert spec.phases.testing.duration == 30  # --set beats the spec
    assert spec.phases.running.duration == 45  # --set beats the default


def test_a_set_that_narrows_a_dimension_keeps_the_files_exclude_rules_valid():
    # The shipped schedulers spec is carved into blocks this way (its header comment).
    r = raw(matrix={"policy": ["tiering", "leveling", "size-tiered"],
                    "scheduler": ["single", "fair"],
                    "exclude": [{"policy": "size-tiered", "scheduler": "single"}]})
    loaded = validate_raw(r, sets=["matrix.policy=[tiering]"])
    assert loaded.spec.matrix["policy"] == ["tiering"]
    points, excluded = expand_matrix(loaded.spec.matrix)
    assert [p.params["scheduler"] for p in points] == ["single", "fair"]
    assert excluded == 0
    # A value neither the file nor the --set gives is still a typo.
    r["matrix"]["exclude"].append({"policy": "tierng"})
    assert errors_of(r, sets=["matrix.policy=[tiering]"]) == [
        "matrix.exclude[1].policy: value 'tierng' is not in matrix.policy (tiering)"]


def test_the_shipped_schedulers_blocks_validate_as_its_comment_carves_them():
    loaded = load_spec(CAMPAIGNS / "schedulers.yaml",
                       sets=["matrix.policy=[tiering,leveling]", "matrix.scheduler=[fair]",
                             "phases.running.enabled=false"])
    points, _ = expand_matrix(loaded.spec.matrix)
    assert sorted({p.params["policy"] for p in points}) == ["leveling", "tiering"]
    assert {p.params["scheduler"] for p in points} == {"fair"}
    assert load_spec(CAMPAIGNS / "schedulers.yaml", sets=["matrix.policy=[partitioned]"])
    # As stored (campaign.json), the narrowed spec validates alone and plans the same points.
    again = validate_raw(loaded.raw, source=CAMPAIGNS / "schedulers.yaml")
    assert [p.id for p in expand_matrix(again.spec.matrix)[0]] == [p.id for p in points]


def test_set_parses_yaml_values_and_matrix_keys():
    r = raw(matrix={"policy": ["tiering"]})
    loaded = validate_raw(r, sets=["matrix.size_ratio=[3, 5]", "matrix.policy[0]=leveling",
                                   "matrix.phases.running.utilization=[0.5, 0.9]",
                                   "engine.options.verify_checksums=false", "testbed.type=local"])
    m = loaded.spec.matrix
    assert m["size_ratio"] == [3, 5]
    assert m["policy"] == ["leveling"]
    assert m["phases.running.utilization"] == [0.5, 0.9]
    assert loaded.spec.engine.options["verify_checksums"] is False


def test_set_values_are_validated_like_spec_text():
    lines = errors_of(raw(), sets=["matrix.scheduler=[single, gredy]"])
    assert lines[0].startswith("matrix.scheduler[1]: unknown merge_scheduler 'gredy'")
    lines = errors_of(raw(), sets=["nonsense"])
    assert lines == ["--set: expected key=value, got 'nonsense'"]


def test_set_on_string_shorthand():
    r = raw(workload="update-uniform-1kb")
    loaded = validate_raw(r, sets=["workload.set.record_count=1234"])
    assert loaded.workload["record_count"] == 1234


def test_apply_set_index_out_of_range():
    r = {"matrix": {"policy": ["tiering"]}}
    with pytest.raises(ValueError, match="out of range"):
        apply_set(r, "matrix.policy[3]=leveling")


def test_adaptive_settings_and_their_defaults():
    spec = validate_raw(raw(phases={
        "testing": {"duration": "2m", "steady": {"ramp": "5s"}},
        "running": {"duration": "3m", "until_decided": {}}},
        matrix={"repetitions": {"min": 3, "max": 6}})).spec
    st = spec.phases.testing.steady
    assert (st.rounds, st.round, st.ramp, st.max_range, st.max_slope) == (5, 10.0, 5.0, 0.1, 0.05)
    assert spec.phases.testing.warmup_seconds() == 5.0  # the ramp
    assert spec.phases.running.until_decided.deepest_merges == 2
    # Every phase settles (10 minutes at most) unless told not to.
    assert spec.phases.load.settle == spec.phases.testing.settle == 600.0
    assert spec.phases.running.settle == 600.0
    off = validate_raw(raw(phases={"load": {"settle": False}, "testing": {"settle": "30s"}})).spec
    assert off.phases.load.settle == 0.0 and off.phases.testing.settle == 30.0
    from lsmbench.plan import build_plan, expand_matrix
    points, _ = expand_matrix({"policy": ["tiering"], "repetitions": {"min": 2, "max": 4}})
    assert [p.rep for p in points] == [0, 1, 2, 3]  # every repetition that may run
    plan = build_plan(validate_raw(raw(matrix={"repetitions": {"min": 2, "max": 4}})))
    assert plan.expected is not None and plan.expected.total_s < plan.estimate_s


def test_a_fixed_length_spec_plans_as_before():
    from lsmbench.plan import build_plan
    plan = build_plan(validate_raw(raw(matrix={"repetitions": 3})))
    assert plan.expected is None and len(plan.points) == 3
    assert all(p.until is None for p in plan.phases())


def test_model_rejects_unknown_keys_directly():
    with pytest.raises(Exception, match="Extra inputs"):
        CampaignSpec.model_validate({**BASE, "x": 1})


def test_every_spec_field_is_documented():
    """docs/reference/spec.md is the spec reference: every field of every model is in it."""
    from lsmbench import spec as s
    from lsmbench.spec.tune import ConfirmSpec, TuneParameter, TuneSpec

    doc = (REPO / "docs" / "reference" / "spec.md").read_text()
    from lsmbench.spec.models import SteadyState, UntilDecided
    models = [s.CampaignSpec, s.EngineSpec, s.WorkloadRef, s.Phases, s.LoadPhase,
              s.TestingPhase, SteadyState, UntilDecided, s.RunningPhase, s.RateSearchSpec,
              s.VerdictSpec, s.ThrottleSpec, s.Sinks,
              s.InfluxSinkSpec, s.LocalTestbedSpec, s.SshTestbedSpec, s.SshHost,
              s.TerraformTestbedSpec,
              TuneSpec, TuneParameter, ConfirmSpec]
    missing = [f"{m.__name__}.{f}" for m in models for f in m.model_fields
               if f"`{f}`" not in doc and f".{f}`" not in doc and f"{f}`," not in doc
               and f"`{f}," not in doc]
    assert missing == []


def test_a_workload_file_dimension_names_files_that_exist():
    lines = errors_of(raw(workload="update-uniform-1kb",
                          matrix={"workload.file": ["update-uniform-1kb", "no-such-workload"]}))
    assert lines and lines[0].startswith("matrix.workload.file[1]: unknown workload "
                                         "'no-such-workload'"), lines
