"""pair: every point with a reference engine build and with the build under test, their
repetitions interleaved (ABBA) on one node (docs/campaign-specs.md, "pair")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from lsmbench.cli import main
from lsmbench.plan import build_plan
from lsmbench.spec import load_spec


def write_spec(tmp_path: Path, reference: Path | str, **changes: Any) -> Path:
    doc: dict[str, Any] = {
        "name": "paired",
        "engine": {"options": {"memtable_bytes": "1M", "wal": "off"}},
        "matrix": {"policy": ["tiering", "leveling"], "repetitions": 3},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 5000}},
        "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                   "running": {"duration": "1s"}},
        "testbed": {"type": "local", "data_dir": str(tmp_path / "data")},
        "pair": {"reference": str(reference)},
    }
    doc.update(changes)
    p = tmp_path / "paired.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


@pytest.fixture
def reference(tmp_path: Path, driver_path: Path) -> Path:
    """A reference build directory holding a copy of the built driver (an A/A pair whose
    builds are told apart by their paths)."""
    d = tmp_path / "reference-build"
    (d / "bin").mkdir(parents=True)
    shutil.copy2(driver_path, d / "bin" / "lsm-driver")
    return d


def test_every_point_runs_with_both_builds_in_abba_order(tmp_path, reference):
    plan = build_plan(load_spec(write_spec(tmp_path, reference)))
    assert len(plan.points) == 2 * 2 * 3
    assert plan.dimensions["build"] == ["reference", "candidate"]
    for policy in ("tiering", "leveling"):
        own = [p for p in plan.points if p.params["policy"] == policy]
        # The two builds of a repetition are adjacent in the plan, with the same seed...
        firsts = []
        for rep in range(3):
            pair = [p for p in own if p.rep == rep]
            assert [p.params["build"] for p in pair] in (["reference", "candidate"],
                                                         ["candidate", "reference"])
            assert pair[1].index == pair[0].index + 1 and pair[0].seed == pair[1].seed
            firsts.append(pair[0].params["build"])
        # ... and the first of a pair alternates: A B, B A, A B.
        assert firsts[0] != firsts[1] and firsts[2] == firsts[0]
        # The build is no engine option: both run the same options, with their own hash.
        a, b = own[0], own[1]
        ra, rb = plan.resolved[a.id], plan.resolved[b.id]
        assert ra.engine_options == rb.engine_options
        assert "build" not in ra.engine_options["testing"]
        assert ra.config_hash != rb.config_hash
    assert plan.driver_for(next(p for p in plan.points if p.params["build"] == "reference")) \
        == str(reference / "bin" / "lsm-driver")
    assert plan.driver_for(next(p for p in plan.points if p.params["build"] == "candidate")) \
        is None


def test_the_start_of_each_group_is_drawn_with_the_seed(tmp_path, reference):
    starts = set()
    for seed in range(8):
        spec = write_spec(tmp_path, reference,
                          pair={"reference": str(reference), "seed": seed})
        plan = build_plan(load_spec(spec))
        starts.add(tuple(p.params["build"] for p in plan.points if p.rep == 0))
        again = build_plan(load_spec(spec))
        assert [p.id for p in again.points] == [p.id for p in plan.points]  # reproducible
    assert len(starts) > 1  # not always the same build first


@pytest.mark.parametrize("changes,path,words", [
    ({"pair": {"reference": "/nonexistent/build"}}, "pair.reference", "no executable lsm-driver"),
    ({"matrix": {"repetitions": {"min": 2, "max": 4}}}, "matrix.repetitions", "unpaired"),
    ({"matrix": {"build": ["a", "b"], "repetitions": 2}}, "matrix.build", "pair: adds"),
    ({"testbed": {"type": "ssh", "hosts": [{"address": "h", "data_dir": "/d"}]}}, "pair",
     "local testbed"),
])
def test_bad_pairings_exit_2_naming_the_field(capsys, tmp_path, reference, changes, path, words):
    code = main(["validate", str(write_spec(tmp_path, reference, **changes))])
    err = capsys.readouterr().err
    assert code == 2
    assert any(line.strip().startswith(f"{path}:") and words in line
               for line in err.splitlines()), err


@pytest.mark.slow
def test_a_paired_campaign_runs_each_build_with_its_own_driver(tmp_path, reference,
                                                                driver_path, data_root):
    spec = write_spec(tmp_path, reference, matrix={"policy": ["tiering"], "repetitions": 2},
                      testbed={"type": "local", "data_dir": str(data_root / "data")})
    results = tmp_path / "results"
    assert main(["run", str(spec), "--results", str(results), "--quiet"]) == 0
    camp = results / "paired"
    meta = json.loads((camp / "campaign.json").read_text())
    order = [p["params"]["build"] for p in meta["plan"]["points"]]
    assert sorted(order) == ["candidate", "candidate", "reference", "reference"]
    drivers = {}
    for d in sorted(p for p in camp.iterdir() if (p / "point.json").is_file()):
        record = json.loads((d / "point.json").read_text())
        assert record["state"] == "complete", record.get("error")
        build = record["params"]["build"]
        fingerprint = json.loads((d / "fingerprint.json").read_text())
        drivers.setdefault(build, set()).add(fingerprint["driver"]["path"])
        # Every phase of the point ran that driver (its run.json is the driver's input; the
        # log names the binary the testbed started).
        assert (d / "testing" / "summary.json").is_file()
    assert drivers == {"reference": {str(reference / "bin" / "lsm-driver")},
                       "candidate": {str(driver_path)}}
    # Recorded, the run holds per metric the candidate's ratio to the reference over the 2
    # pairs (an A/A pair: the same binary, copied).
    history = tmp_path / "history.sqlite"
    assert main(["track", "record", str(camp), "--history", str(history), "--commit",
                 "c0ffee", "--quiet"]) == 0
    from lsmbench.track.history import History

    paired = {v.metric: v for v in History(history).paired_values()}
    tp = paired["max_write_throughput"]
    assert tp.group == "policy=tiering" and tp.n == 2
    assert tp.ci_low <= tp.ratio <= tp.ci_high
    assert tp.reference_median is not None and tp.candidate_median is not None
