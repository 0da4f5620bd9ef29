"""A testbed's key_file that names no file on this machine is bad input: `lsmbench validate`
and `lsmbench testbed up` refuse it with exit 2, naming the field and the file, before any
node is contacted and without saving the definition."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from lsmbench.cli import main


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def campaign(tmp_path: Path, testbed: dict) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({"name": "c", "workload": "update-uniform-1kb",
                                 "testbed": testbed}))
    return p


def ssh_hosts(*key_files: str) -> list[dict]:
    return [{"name": f"n{i}", "address": f"192.0.2.{10 + i}", "user": "bench", "key_file": k}
            for i, k in enumerate(key_files)]


def test_validate_names_the_missing_key_file(tmp_path, capsys):
    key = tmp_path / "id_ed25519"
    key.write_text("not really a key\n")
    missing = tmp_path / "nope" / "id_ed25519"
    spec = campaign(tmp_path, {"type": "ssh", "hosts": ssh_hosts(str(key), str(missing))})
    code, _, err = cli(capsys, "validate", str(spec))
    assert code == 2, err
    assert f"testbed.hosts[1].key_file: {missing}: no such file" in err
    assert "hosts[0]" not in err  # the key that is there is fine
    assert "Traceback" not in err

    # A path with ~ is shown as given and as resolved.
    spec = campaign(tmp_path, {"type": "terraform", "module": "terraform/modules/static",
                               "key_file": "~/.lsmbench-test-no-such-key"})
    code, _, err = cli(capsys, "validate", str(spec))
    assert code == 2
    resolved = Path("~/.lsmbench-test-no-such-key").expanduser()
    assert (f"testbed.key_file: ~/.lsmbench-test-no-such-key ({resolved}): no such file"
            in err)

    spec = campaign(tmp_path, {"type": "ssh", "hosts": ssh_hosts(str(tmp_path))})
    code, _, err = cli(capsys, "validate", str(spec))
    assert code == 2 and f"testbed.hosts[0].key_file: {tmp_path}: is not a file" in err

    spec = campaign(tmp_path, {"type": "ssh", "hosts": ssh_hosts(str(key))})
    code, _, err = cli(capsys, "validate", str(spec))
    assert code == 0, err


@pytest.mark.parametrize("inventory", [False, True])
def test_testbed_up_names_the_missing_key_file_and_saves_nothing(tmp_path, capsys, monkeypatch,
                                                                 inventory):
    monkeypatch.setenv("LSMBENCH_TESTBEDS", str(tmp_path / "testbeds"))
    missing = tmp_path / "gone"
    definition: dict = {"type": "ssh"}
    if inventory:
        nodes = tmp_path / "nodes.yml"
        nodes.write_text(yaml.safe_dump({"hosts": ssh_hosts(str(missing))}))
        definition["inventory"] = str(nodes)
        where = f"{nodes}: hosts[0].key_file"
    else:
        definition["hosts"] = ssh_hosts(str(missing))
        where = "hosts[0].key_file"
    f = tmp_path / "rack.yml"
    f.write_text(yaml.safe_dump(definition))
    code, _, err = cli(capsys, "testbed", "up", "rack", "--file", str(f))
    assert code == 2, err  # bad input, not the environment: no node was tried
    assert f"{where}: {missing}: no such file" in err and "SSH private key" in err
    assert "unreachable" not in err and "Traceback" not in err
    assert not (tmp_path / "testbeds" / "rack" / "testbed.yml").exists()
