"""Engine options against the engines' option descriptions (issue 12, part A).

Each bad option is refused by `lsmbench validate` (exit 2) with its spec path, what the option
takes and, for a typo, the closest name; rocksdb's are checked by `lsm-driver --check-options`.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
import yaml
from lsmbench import engine_options
from lsmbench.cli import main
from lsmbench.driver_checks.options import (
    DriverCannotCheck,
    check_options,
    driver_errors,
)
from lsmbench.spec import SpecError, validate_raw
from lsmbench.util.units import parse_size
from repo_paths import REPO

BASE = {"name": "c", "workload": {"inline": {"record_count": 10, "operations": {"update": 1.0}}}}


def write_spec(tmp_path: Path, **data) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({**BASE, **data}))
    return p


def validate(capsys, path: Path) -> tuple[int, str]:
    code = main(["validate", str(path)])
    out, err = capsys.readouterr()
    return code, out + err


# ---------------------------------------------------------------- the acceptance cases

CASES = [
    ({"engine": {"options": {"memtable_byts": "4M"}}},
     "engine.options.memtable_byts: unknown builtin engine option 'memtable_byts'; "
     "did you mean 'memtable_bytes'?"),
    ({"engine": {"options": {"memtable_bytes": "-4M"}}},
     "engine.options.memtable_bytes: bad value '-4M' for memtable_bytes (a byte count "
     "(optional suffix K, M or G) in [4096, 68719476736])"),
    ({"engine": {"options": {"bloom_bits_per_key": 1000}}},
     "engine.options.bloom_bits_per_key: bad value '1000' for bloom_bits_per_key (an integer "
     "in [0, "),
    ({"engine": {"options": {"merge_policy": "levling"}}},
     "engine.options.merge_policy: unknown merge_policy 'levling' (choose from: leveling, "),
    ({"engine": {"name": "leveldb", "options": {"write_bufer_size": "4M"}}},
     "engine.options.write_bufer_size: unknown leveldb engine option 'write_bufer_size'; "
     "did you mean 'write_buffer_size'?"),
    ({"phases": {"testing": {"engine_options": {"merge_scheduler": "fari"}}}},
     "phases.testing.engine_options.merge_scheduler: unknown merge_scheduler 'fari'"),
    ({"matrix": {"policy": ["leveling", "levling"]}},
     "matrix.policy[1]: unknown merge_policy 'levling'"),
    ({"matrix": {"scheduler": ["gredy"]}}, "matrix.scheduler[0]: unknown merge_scheduler"),
    ({"matrix": {"engine.options.memtable_bytes": ["4M", "4X"]}},
     "matrix.engine.options.memtable_bytes[1]: bad value '4X' for memtable_bytes"),
    ({"matrix": {"phases.running.engine_options.size_ratio": [4, "inf"]}},
     "matrix.phases.running.engine_options.size_ratio[1]: bad value 'inf' for size_ratio"),
    ({"matrix": {"memtable_byts": ["4M"]}},
     "matrix.memtable_byts: unknown builtin engine option 'memtable_byts'; did you mean "
     "'memtable_bytes'?"),
    ({"engine": {"name": "null", "options": {"get_hits": "yes"}}},
     "engine.options.get_hits: bad value 'yes' for get_hits (choose from: true, false)"),
]


@pytest.mark.parametrize("changes,expected", CASES, ids=[c[1].split(":")[0] for c in CASES])
def test_validate_refuses_bad_engine_options(capsys, tmp_path, changes, expected):
    code, text = validate(capsys, write_spec(tmp_path, **changes))
    assert code == 2, text
    assert any(line.strip().startswith(expected) for line in text.splitlines()), text


def test_merge_policy_typo_suggests_leveling():
    with pytest.raises(SpecError) as e:
        validate_raw({**BASE, "engine": {"options": {"merge_policy": "levling"}}})
    assert e.value.lines()[0].endswith("did you mean 'leveling'?")


def test_good_values_in_every_form_pass():
    opts = {"memtable_bytes": "4M", "block_bytes": 4096, "bloom_bits_per_key": 10,
            "verify_checksums": True, "l0_merge_exact": "0", "size_ratio": 3.5,
            "exploring_ratio": "1.2e1", "merge_policy": "size-tiered", "wal": "sync",
            "merge_exact_min": 1}
    loaded = validate_raw({**BASE, "engine": {"options": opts},
                           "matrix": {"scheduler": ["fair", "greedy_k"], "size_ratio": [4.0]}})
    assert loaded.spec.engine.options == opts


@pytest.mark.parametrize("value,ok", [
    ("4M", True), ("4m", True), ("65536", True), (65536, True), ("1G", True), ("64G", True),
    ("65G", False), ("4K", True), ("4095", False), ("-4M", False), ("4MiB", False),
    ("1.5M", False), ("4 M", False), ("4M\n", False), (True, False), (8192.0, True), ("", False),
])
def test_size_values_are_read_like_the_driver(value, ok):
    opt = engine_options.description("builtin").get("memtable_bytes")
    assert (engine_options.value_error(opt, value) is None) is ok


def test_parse_size_is_the_drivers_grammar():
    assert parse_size("4M") == 4 << 20 and parse_size("2k") == 2048 and parse_size(7) == 7
    for bad in ("-1", "1.5G", "4MiB", "4T", " 4", True, 1.0):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_descriptions_are_committed_for_the_described_engines():
    for engine in ("builtin", "null", "leveldb"):
        desc = engine_options.description(engine)
        assert desc is not None and desc.engine == engine and desc.options
    # rocksdb's open table is the plugin's, described by the driver once it is built.
    assert not (Path(engine_options.__file__).parent / "rocksdb.json").exists()
    # the names the docs promise (docs/reference/engine-options.md)
    assert engine_options.choices("builtin", "merge_scheduler") == (
        "single", "fair", "greedy", "greedy_k", "idle", "leveldb")
    assert len(engine_options.choices("builtin", "merge_policy")) == 9


def test_rocksdb_options_are_not_checked_without_a_driver(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LSMBENCH_DRIVER", str(tmp_path / "absent"))
    p = write_spec(tmp_path, engine={"name": "rocksdb", "options": {"anything_goes": 1}})
    code, text = validate(capsys, p)
    assert code == 0, text
    assert "warning: rocksdb engine options were not checked" in text


def test_leveldb_options_are_checked_before_anything_is_built(capsys, tmp_path, monkeypatch):
    # The leveldb plugin's committed description answers until the driver can describe it.
    monkeypatch.setenv("LSMBENCH_DRIVER", str(tmp_path / "absent"))
    p = write_spec(tmp_path, engine={"name": "leveldb", "options": {"write_buffer": "1M"}})
    code, text = validate(capsys, p)
    assert code == 2
    assert ("engine.options.write_buffer: unknown leveldb engine option 'write_buffer'; did you "
            "mean 'write_buffer_size'?") in text, text
    p = write_spec(tmp_path, engine={"name": "leveldb", "options": {"write_buffer_size": "1M"}})
    code, text = validate(capsys, p)
    assert code == 0, text
    assert "engine options were not checked" not in text


def test_a_project_plugin_not_built_beside_a_driver_says_what_builds_it(
        capsys, tmp_path, monkeypatch, driver_path):
    from lsmbench.engine_options import plugins

    monkeypatch.setenv("LSMBENCH_DRIVER", str(driver_path))
    monkeypatch.setattr(plugins, "plugin_dirs", lambda: [tmp_path / "plugins"])
    p = write_spec(tmp_path, engine={"name": "rocksdb"})
    code, text = validate(capsys, p)
    assert code == 2
    assert (f"engine.name: engine plugin 'rocksdb' is not built (no lsmbench-rocksdb.so on the "
            f"plugin path: {tmp_path / 'plugins'}): `make build` builds it when librocksdb-dev "
            "is installed (`make deps` installs it)") in text, text


# ---------------------------------------------------------------- --check-options

FAKE = """#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
if args[0] == "--check-config":  # the workload and queries: nothing to say here
    print(json.dumps({"ok": True, "errors": []}))
    sys.exit(0)
assert args[0] == "--check-options", args
engine, opts = args[1], [a for a in args[2:] if a != "--option"]
with open(sys.argv[0] + ".calls", "a") as f:
    f.write(json.dumps([engine, opts]) + "\\n")
errors = [{"name": o.split("=")[0], "message": "engine option '" + o.split("=")[0] + "': bad"}
          for o in opts if o.split("=", 1)[1].startswith("bad")]
print(json.dumps({"ok": not errors, "errors": errors}))
sys.exit(1 if errors else 0)
"""


@pytest.fixture
def fake_driver(tmp_path: Path) -> Path:
    p = tmp_path / "lsm-driver"
    p.write_text(FAKE)
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return p


def test_driver_errors_map_to_the_spec_path_that_set_the_option(tmp_path, fake_driver):
    loaded = validate_raw({
        # Options outside the rocksdb plugin's table: RocksDB's own parser (the driver) checks.
        **BASE, "engine": {"name": "rocksdb", "options": {"arena_block_size": "bad1"}},
        "matrix": {"max_subcompactions": [2, "bad2"],
                   "phases.testing.engine_options.level0_slowdown": ["bad3", 8]},
        "phases": {"running": {"engine_options": {"bottommost_compression": "bad4"}}},
    })
    errors = driver_errors(loaded, fake_driver)
    assert sorted(errors) == sorted([
        ("engine.options.arena_block_size", "engine option 'arena_block_size': bad"),
        ("matrix.max_subcompactions[1]", "engine option 'max_subcompactions': bad"),
        ("matrix.phases.testing.engine_options.level0_slowdown[0]",
         "engine option 'level0_slowdown': bad"),
        ("phases.running.engine_options.bottommost_compression",
         "engine option 'bottommost_compression': bad"),
    ])
    calls = [json.loads(x) for x in Path(str(fake_driver) + ".calls").read_text().splitlines()]
    # 4 points x 3 phases, each distinct option set asked once
    assert all(c[0] == "rocksdb" for c in calls)
    assert len(calls) == len({json.dumps(c) for c in calls})


def test_validate_uses_the_driver_for_rocksdb(capsys, tmp_path, fake_driver, monkeypatch):
    monkeypatch.setenv("LSMBENCH_DRIVER", str(fake_driver))
    # An option of the plugin's table is checked against it; any other by the driver.
    p = write_spec(tmp_path, engine={"name": "rocksdb", "options": {"write_buffer_size": "bad"}})
    code, text = validate(capsys, p)
    assert code == 2
    assert "engine.options.write_buffer_size: bad value 'bad' for write_buffer_size" in text
    p = write_spec(tmp_path, engine={"name": "rocksdb", "options": {"arena_block_size": "bad"}})
    code, text = validate(capsys, p)
    assert code == 2
    assert "engine.options.arena_block_size: engine option 'arena_block_size': bad" in text
    p = write_spec(tmp_path, engine={"name": "rocksdb", "options": {"write_buffer_size": "64M"}})
    code, text = validate(capsys, p)
    assert code == 0 and "warning" not in text, text


def test_a_driver_without_check_options_is_reported_not_believed(tmp_path):
    old = tmp_path / "old-driver"
    old.write_text("#!/bin/sh\necho \"lsm-driver: unknown argument '$1'\" >&2\nexit 2\n")
    old.chmod(0o755)
    with pytest.raises(DriverCannotCheck, match="unknown argument"):
        check_options(old, "rocksdb", {"a": "1"})


def _supports_check_options(driver: Path) -> bool:
    r = subprocess.run([str(driver), "--check-options", "builtin"], capture_output=True,
                       text=True, timeout=30, check=False)
    return r.stdout.lstrip().startswith("{")


def test_real_driver_checks_rocksdb_options(capsys, tmp_path, driver_path, monkeypatch):
    if not _supports_check_options(driver_path):
        pytest.skip(f"{driver_path} lacks --check-options (lands with issue 12's C++ side)")
    monkeypatch.setenv("LSMBENCH_DRIVER", str(driver_path))
    p = write_spec(tmp_path, engine={"name": "rocksdb",
                                     "options": {"write_bufer_size": "64M"}})
    code, text = validate(capsys, p)
    assert code == 2 and "engine.options.write_bufer_size:" in text, text
    p = write_spec(tmp_path, engine={"name": "builtin", "options": {
        "min_merge_components": 8, "max_merge_components": 4}})
    code, text = validate(capsys, p)
    assert code == 2 and "merge_components" in text, text
    p = write_spec(tmp_path, engine={"name": "builtin", "options": {"memtable_bytes": "8M"}})
    assert validate(capsys, p)[0] == 0


def test_committed_descriptions_match_the_driver(driver_path):
    """The committed JSON is what the driver describes (regenerate: make docs)."""
    r = subprocess.run([str(driver_path), "--describe-options", "builtin"], capture_output=True,
                       text=True, timeout=30, check=False)
    if r.returncode != 0 or not r.stdout.lstrip().startswith("{"):
        pytest.skip(f"{driver_path} lacks --describe-options")
    for engine in ("builtin", "null", "leveldb"):
        r = subprocess.run([str(driver_path), "--describe-options", engine],
                           capture_output=True, text=True, timeout=30, check=True)
        described = json.loads(r.stdout)
        described.pop("plugin", None)  # leveldb's: where it was loaded from, its version
        assert described == json.loads(
            (Path(engine_options.__file__).parent / f"{engine}.json").read_text()), engine


def test_descriptions_ship_as_package_data():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"engine_options/*.json"' in pyproject
    assert os.path.isfile(Path(engine_options.__file__).parent / "builtin.json")
