"""`engines`: engines side by side, each with options of its own, picked per point by the
matrix dimension `engine` (docs/campaign-specs.md, "engines")."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from lsmbench.cli import main
from lsmbench.plan import build_plan
from lsmbench.spec import SpecError, load_spec, validate_raw
from repo_paths import REPO

BASE = {"name": "c", "workload": {"inline": {"record_count": 10, "operations": {"update": 1.0}}}}

TWO = {
    "engines": {
        "lev": {"name": "builtin", "options": {"merge_policy": "leveling", "size_ratio": 4}},
        "tier": {"name": "builtin", "options": {"merge_policy": "tiering"}},
        "nothing": {"name": "null", "options": {"service_time_us": 5}},
    },
    "matrix": {"engine": ["lev", "tier", "nothing"], "repetitions": 2},
    "phases": {"testing": {"engine_options": {}}},
}


def errors_of(raw: dict) -> list[str]:
    with pytest.raises(SpecError) as e:
        validate_raw({**BASE, **raw})
    return [f"{p}: {m}" for p, m in e.value.errors]


def test_each_point_runs_its_own_engine_with_its_own_options(tmp_path: Path):
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({**BASE, **TWO}))
    plan = build_plan(load_spec(p))
    ids = [pt.id for pt in plan.points]
    assert ids == ["engine=lev,rep=0", "engine=lev,rep=1", "engine=tier,rep=0",
                   "engine=tier,rep=1", "engine=nothing,rep=0", "engine=nothing,rep=1"]
    by_id = {pt.id: plan.point(pt) for pt in plan.points}
    lev, tier, nothing = (by_id[f"engine={k},rep=0"] for k in ("lev", "tier", "nothing"))
    assert lev.spec.engine.name == tier.spec.engine.name == "builtin"
    assert nothing.spec.engine.name == "null"
    assert lev.engine_options["testing"] == {"merge_policy": "leveling", "size_ratio": "4"}
    assert tier.engine_options["running"] == {"merge_policy": "tiering"}
    assert nothing.engine_options["load"] == {"service_time_us": "5"}
    # The entry decides the measurements: each engine's points resume by their own hash.
    assert len({lev.config_hash, tier.config_hash, nothing.config_hash}) == 3
    assert nothing.config["engine"] == "null"


def test_an_entry_is_checked_against_its_own_engine_only():
    # size_ratio is builtin's, not null's: only the entry that sets it is checked for it.
    validate_raw({**BASE, **TWO})
    bad = {**TWO, "engines": {**TWO["engines"],
                              "nothing": {"name": "null", "options": {"size_ratio": 4}}}}
    assert errors_of(bad) == [
        "engines.nothing.options.size_ratio: unknown null engine option 'size_ratio' (the "
        "options: get_hits, pause_at_ms, pause_every_ms, pause_ms, service_time_us, "
        "value_bytes)"]
    # A phase's options and a dimension's go to every engine the campaign runs.
    assert errors_of({**TWO, "phases": {"testing": {"engine_options": {"size_ratio": 4}}}})[0] \
        .startswith("phases.testing.engine_options.size_ratio: unknown null engine option")


@pytest.mark.parametrize(("raw", "expected"), [
    ({**TWO, "matrix": {"engine": ["lev", "tire"]}},
     "matrix.engine[1]: unknown engine 'tire' (choose from the names of engines: lev, tier, "
     "nothing)"),
    ({**TWO, "matrix": {"size_ratio": [2, 3]}},
     "engines: needs the matrix dimension `engine`, listing the engines to run (of: lev, tier, "
     "nothing)"),
    ({"matrix": {"engine": ["a"]}},
     "matrix.engine: names entries of `engines`, and the spec has none (to vary the engine "
     "alone: matrix `engine.name`)"),
    ({**TWO, "engine": {"name": "builtin"}},
     "engine: a campaign with `engines` runs each point's entry of it: leave out `engine`"),
    ({**TWO, "matrix": {"engine": ["lev"], "engine.options.size_ratio": [2, 3]}},
     "matrix.engine.options.size_ratio: with `engines`, set the engine's name and options in "
     "each of its entries"),
    ({**TWO, "engines": {"a b": {"name": "null"}}, "matrix": {"engine": ["a b"]}},
     "engines.a b: bad name (letters, digits, '.', '_', '-'; at most 40 characters: it goes "
     "into point ids)"),
    ({**TWO, "engines": {"lev": {"name": "buitin"}}, "matrix": {"engine": ["lev"]}},
     "engines.lev.name: unknown engine 'buitin'"),
])
def test_bad_engines_name_the_path(raw, expected):
    assert any(e.startswith(expected) for e in errors_of(raw)), errors_of(raw)


def test_the_engines_campaign_validates_and_plans(capsys):
    spec = REPO / "pipelines" / "campaigns" / "engines.yaml"
    assert main(["validate", str(spec)]) == 0, capsys.readouterr().err
    assert "15 points" in capsys.readouterr().out
    assert main(["plan", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "engine rocksdb (rocksdb): write_buffer_size=2M" in out
    assert "engine leveling (builtin): merge_policy=leveling" in out
