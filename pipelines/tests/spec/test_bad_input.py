"""No input ends in a traceback (issue 12, part B): every command given a file that is not a
spec -- binary, huge, a directory, a symlink loop, an anchor bomb, deep nesting -- exits 2 with
'PATH: message'; mutated specs (Hypothesis) only ever exit 0 or 2."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsmbench.cli import main
from repo_paths import PIPELINES

QUICKSTART = PIPELINES / "campaigns" / "quickstart.yaml"


def _bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "name: bomb\nworkload: update-uniform-1kb\n" + "\n".join(lines) + "\n"


def _make(kind: str, d: Path) -> tuple[Path, str]:
    """A bad file and what its message says."""
    p = d / f"{kind}.yaml"
    if kind == "binary":
        p.write_bytes(bytes(range(256)) * 8)
        return p, "not a text file"
    if kind == "huge":
        with open(p, "wb") as f:
            f.truncate(64 << 20)  # sparse: no disk used
        return p, "larger than"
    if kind == "directory":
        p.mkdir()
        return p, "a directory"
    if kind == "symlink-loop":
        os.symlink(d / "loop-b", p)
        os.symlink(p, d / "loop-b")
        return p, "symbolic links"
    if kind == "anchor-bomb":
        p.write_text(_bomb())
        return p, "expands to more than"
    if kind == "deep":
        p.write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
        return p, "nested"
    if kind == "nul":
        p.write_text("name: a\x00b\n")
        return p, "not valid YAML"
    if kind == "self-alias":
        p.write_text("name: &n [*n]\n")
        return p, "contains it"
    if kind == "missing":
        return d / "absent.yaml", "No such file"
    raise AssertionError(kind)


KINDS = ["binary", "huge", "directory", "symlink-loop", "anchor-bomb", "deep", "nul",
         "self-alias", "missing"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", ["validate", "plan", "run", "calibrate", "testbed-up"])
def test_every_command_refuses_a_bad_file_with_its_path(capsys, tmp_path, kind, command,
                                                        monkeypatch):
    monkeypatch.setenv("LSMBENCH_TESTBEDS", str(tmp_path / "testbeds"))
    path, says = _make(kind, tmp_path)
    args = {"validate": ["validate", str(path)],
            "plan": ["plan", str(path)],
            "run": ["run", str(path), "--results", str(tmp_path / "results")],
            "calibrate": ["calibrate", "--testbed", str(path)],
            "testbed-up": ["testbed", "up", "tb", "--file", str(path)]}[command]
    if command == "calibrate" and kind in ("directory", "missing", "symlink-loop"):
        says = "--testbed takes 'local' or a campaign spec file"  # not a file: not a spec
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert says in err, err
    assert "Traceback" not in err
    if command != "calibrate" or says != "--testbed takes 'local' or a campaign spec file":
        assert f"{path}: " in err, err
    assert not (tmp_path / "results").exists()


def test_publish_and_report_refuse_a_file_that_is_no_results(capsys, tmp_path):
    path, _ = _make("binary", tmp_path)
    assert main(["publish", str(path), "--to", "http://127.0.0.1:9"]) == 2
    assert f"{path}: not a directory" in capsys.readouterr().err
    assert main(["report", str(path), "--results", str(tmp_path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


# ---------------------------------------------------------------- mutated specs

BASE = yaml.safe_load(QUICKSTART.read_text())

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["4M", "-4M", "levling", "fair", "1e999", "50%", "100MB/s", "30s",
                     "local", "ssh", "update-uniform-1kb", "matrix.policy", "running@0.5"]),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.one_of(st.text(max_size=10), st.integers()),
                                               children, max_size=4)),
    max_leaves=12,
)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


PATHS = [p for p in _paths(BASE) if p]


@st.composite
def mutated_specs(draw):
    doc = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        path = draw(st.sampled_from(PATHS))
        node = doc
        try:
            for part in path[:-1]:
                node = node[part]
            action = draw(st.sampled_from(["replace", "delete", "add"]))
            if action == "delete" and isinstance(node, dict):
                node.pop(path[-1], None)
            elif action == "add" and isinstance(node, dict):
                node[draw(st.text(min_size=1, max_size=10))] = draw(values)
            else:
                node[path[-1]] = draw(values)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the way there
    return doc


@settings(derandomize=True, max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(doc=mutated_specs())
def test_mutated_specs_exit_0_or_2(tmp_path_factory, doc):
    d = tmp_path_factory.mktemp("mut")
    p = d / "c.yaml"
    p.write_text(yaml.safe_dump(doc, allow_unicode=True))
    code = main(["validate", "--quiet", str(p)])
    assert code in (0, 2)  # 70 would be an uncaught exception (cli.main's safety net)


TEXT = QUICKSTART.read_text()


@st.composite
def mutated_texts(draw):
    data = bytearray(TEXT.encode())
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        action = draw(st.sampled_from(["insert", "delete", "flip"]))
        if action == "insert":
            data[at:at] = draw(st.sampled_from([b"&a ", b"*a", b"- ", b": ", b"{", b"[", b"\t",
                                                b"\n  ", b"!!binary ", b"\xff", b"%YAML 1.1\n",
                                                b"? ", b"<<: *a\n", b"'"]))
        elif action == "delete" and at < len(data):
            del data[at:at + draw(st.integers(min_value=1, max_value=20))]
        elif at < len(data):
            data[at] = draw(st.integers(min_value=0, max_value=255))
    return bytes(data)


@settings(derandomize=True, max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=mutated_texts())
def test_mutated_spec_text_exits_0_or_2(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("txt") / "c.yaml"
    p.write_bytes(data)
    code = main(["validate", "--quiet", str(p)])
    assert code in (0, 2)


def test_a_mapping_with_int_and_str_keys_is_a_field_error(tmp_path, capsys, driver_path):
    # Found by test_mutated_specs_exit_0_or_2: the driver check's run.json key could not sort
    # {"": null, 0: null} and validate ended in an internal error (exit 70).
    doc = copy.deepcopy(BASE)
    doc["workload"]["set"]["record_count"] = {"": None, 0: None}
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(doc))
    assert main(["validate", str(p)]) == 2
    assert "workload.set.record_count" in capsys.readouterr().err


def test_a_results_store_that_is_a_file_or_read_only_is_exit_3(tmp_path, capsys):
    import subprocess

    a_file = tmp_path / "a-file"
    a_file.write_text("a user's file")
    stores = [a_file]
    ro = tmp_path / "ro"
    ro.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)],
        capture_output=True, check=False).returncode == 0
    if mounted:
        stores.append(ro)  # root passes permission bits: a read-only filesystem stops even root
    try:
        for store in stores:
            for cmd in (["run", str(QUICKSTART)], ["reproduce", "--experiment", "repro-mao-sim"]):
                code = main([*cmd, "--results", str(store)])
                err = capsys.readouterr().err
                assert code == 3, (cmd, store, err)
                assert f"results store {store}" in err and "internal error" not in err
        assert a_file.read_text() == "a user's file"
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)], check=False)
    assert mounted or os.geteuid() != 0, "root could not mount a read-only tmpfs"


def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path, capsys):
    p = tmp_path / "dup.yaml"
    p.write_text("name: a\nworkload: update-uniform-1kb\nphases:\n  running:\n    duration: 10s\n"
                 "    duration: 20s\n")
    for cmd in ("validate", "plan"):
        assert main([cmd, str(p)]) == 2
        err = capsys.readouterr().err
        assert "line 6: the key 'duration' is given twice in one mapping (first on line 5)" in err
    # a key that only looks the same (an int and a string) is two keys
    p.write_text("name: a\nworkload:\n  file: update-uniform-1kb\n  set: {1: 2, '1': 3}\n")
    main(["validate", str(p)])
    assert "given twice" not in capsys.readouterr().err


def test_the_points_are_counted_before_any_is_made(tmp_path, capsys):
    doc = copy.deepcopy(BASE)
    doc["matrix"]["repetitions"] = 1_000_000_000
    p = tmp_path / "big.yaml"
    p.write_text(yaml.safe_dump(doc))
    for cmd in ("validate", "plan"):
        assert main([cmd, str(p)]) == 2  # a MemoryError (exit 70) when they were enumerated
        err = capsys.readouterr().err
        assert ("matrix: 4,000,000,000 points (policy (2) x scheduler (2) x 1,000,000,000 "
                "repetitions), over the limit of 100,000") in err
    # 10,000 points still validate; --max-points lowers or raises the limit
    doc["matrix"]["repetitions"] = 2_500
    p.write_text(yaml.safe_dump(doc))
    assert main(["validate", "--quiet", str(p)]) == 0, capsys.readouterr().err
    assert main(["validate", "--max-points", "9999", str(p)]) == 2
    assert "10,000 points" in capsys.readouterr().err
    # --max-points raises it (a spec wrong elsewhere, so that nothing enumerates 120,000)
    doc["matrix"]["repetitions"] = 30_000
    doc["verdict"]["p99_write_latency"] = "soon"
    p.write_text(yaml.safe_dump(doc))
    assert main(["validate", str(p)]) == 2
    assert "120,000 points" in capsys.readouterr().err
    assert main(["validate", "--max-points", "120000", str(p)]) == 2
    err = capsys.readouterr().err
    assert "verdict.p99_write_latency" in err and "over the limit" not in err


@pytest.mark.parametrize("spec", sorted(
    [*(QUICKSTART.parent.glob("*.yaml")), *(QUICKSTART.parent.glob("reproduce/*.yaml"))]),
    ids=lambda p: p.name)
def test_plan_refuses_exactly_what_validate_refuses(spec, tmp_path, capsys, driver_path):
    docs = [yaml.safe_load(spec.read_text())]
    bad = copy.deepcopy(docs[0])
    bad.setdefault("workload", {})
    if isinstance(bad["workload"], dict):
        bad["workload"].setdefault("set", {})["record_count"] = -5
    docs.append(bad)
    for i, doc in enumerate(docs):
        p = tmp_path / f"{i}.yaml"
        p.write_text(yaml.safe_dump(doc))
        codes = [main([cmd, "--quiet", str(p)]) for cmd in ("validate", "plan")]
        capsys.readouterr()
        assert codes[0] == codes[1], (spec.name, i, codes)
        assert codes[0] == (0 if i == 0 else 2), (spec.name, i, codes)


def test_without_the_driver_validate_says_what_it_did_not_check(tmp_path, capsys, monkeypatch):
    """No lsm-driver built: the workload's values are the driver's to check, so validate
    passes a spec the driver would refuse, says so, and never ends in an internal error
    (a mapping of mixed key types once did, in the points' configuration hash)."""
    import lsmbench.util.paths as paths

    monkeypatch.setattr(paths, "find_driver", lambda *a, **k: None)
    doc = copy.deepcopy(BASE)
    doc["workload"]["set"]["record_count"] = {"": None, 0: None}
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(doc))
    assert main(["validate", str(p)]) == 0
    err = capsys.readouterr().err
    assert "the workload and queries were not checked: lsm-driver is not built" in err
