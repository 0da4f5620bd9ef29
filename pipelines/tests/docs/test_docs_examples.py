"""The docs a fresh clone follows say what the code does: every full spec shown in docs/ (and
research/) is valid, the quickstart shown in docs/campaign-specs.md is the quickstart that runs, and
every `lsmbench validate|plan|run SPEC [--set ...]` command shown in the docs and the README
validates as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from lsmbench.cli import main
from lsmbench.spec import validate_raw
from repo_paths import REPO

# research/ too: its pages' commands name the campaigns they measured, which must still validate.
DOCS = [*sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "research").rglob("*.md")),
        REPO / "README.md"]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SPEC_COMMAND = re.compile(r"lsmbench (validate|plan|run) (\S+\.yaml)((?: --set \S+)*)")


def blocks(path: Path, lang: str | None = None) -> list[str]:
    return [body for tag, body in FENCE.findall(path.read_text())
            if lang is None or tag == lang]


def shown_specs() -> list[tuple[str, dict]]:
    """Every YAML block in the docs that is a whole campaign spec (a name, an engine and a
    workload), with where it is."""
    out = []
    for path in DOCS:
        for i, body in enumerate(blocks(path, "yaml")):
            try:
                data = yaml.safe_load(body)
            except yaml.YAMLError:
                continue
            if isinstance(data, dict) and {"name", "engine", "workload"} <= data.keys():
                out.append((f"{path.relative_to(REPO)} block {i}", data))
    return out


def shown_commands() -> list[tuple[str, list[str]]]:
    """Every `lsmbench validate|plan|run SPEC [--set K=V ...]` in a code block of the docs
    whose SPEC is a file of the repository."""
    out = []
    for path in DOCS:
        for body in blocks(path):
            for line in body.splitlines():
                for m in SPEC_COMMAND.finditer(line):
                    if not (REPO / m.group(2)).is_file():
                        continue  # my.yaml, SPEC: placeholders
                    sets = shlex.split(m.group(3))[1::2]
                    out.append((f"{path.relative_to(REPO)}: {m.group(0)}",
                                [str(REPO / m.group(2))] + [a for s in sets
                                                            for a in ("--set", s)]))
    return out


# Commands the docs show that validate refuses on purpose, each with why; they must keep failing
# (a fix turns this test red until the entry goes).
REFUSED_ON_PURPOSE = {
    "pipelines/tests/fixtures/report/campaign.yaml":
        "recorded before validate checked engine options: its 1K-memtable point, the report "
        "fixture's failed point, is now refused up front (docs/reports.md says so)",
}


def test_the_docs_show_specs_and_commands_to_check() -> None:
    # The checks below would pass vacuously if the patterns stopped matching.
    assert len(shown_specs()) >= 1
    assert len(shown_commands()) >= 3


@pytest.mark.parametrize(("where", "data"), shown_specs(), ids=lambda v: str(v)[:60])
def test_every_spec_shown_is_valid(where: str, data: dict) -> None:
    validate_raw(data)  # raises, naming every error, when it is not


def test_the_quickstart_shown_is_the_one_that_runs() -> None:
    shown = [data for _, data in shown_specs() if data["name"] == "quickstart"]
    assert shown, "docs/campaign-specs.md no longer shows the quickstart"
    real = yaml.safe_load((REPO / "pipelines" / "campaigns" / "quickstart.yaml").read_text())
    for data in shown:
        assert data == real


@pytest.mark.parametrize(("where", "argv"), shown_commands(), ids=lambda v: str(v)[:80])
def test_every_command_shown_validates(where: str, argv: list[str], capsys) -> None:
    spec = str(Path(argv[0]).relative_to(REPO))
    code = main(["validate", *argv])
    if spec in REFUSED_ON_PURPOSE:
        assert code == 2, f"{spec} validates now: drop it from REFUSED_ON_PURPOSE"
    else:
        assert code == 0, capsys.readouterr().err


# The pages a reader follows step by step: every lsmbench command in their shell blocks is one
# the parser takes as written (a renamed option or command turns this red).
GUIDES = [REPO / "docs" / "tutorial.md", *sorted((REPO / "docs" / "how-to").glob("*.md"))]
LSMBENCH_LINE = re.compile(r"^(?:\S+=\S+ )*(?:\.venv/bin/)?lsmbench (.*)$")


def guide_commands() -> list[tuple[str, list[str]]]:
    out = []
    for path in GUIDES:
        for body in blocks(path, "sh"):
            lines = body.replace("\\\n", " ").splitlines()
            for line in lines:
                m = LSMBENCH_LINE.match(line.split("  #")[0].strip())
                if m:
                    out.append((f"{path.relative_to(REPO)}: {m.group(0)}", shlex.split(m.group(1))))
    return out


def test_the_guides_show_commands() -> None:
    assert (REPO / "docs" / "tutorial.md").is_file()
    assert len(guide_commands()) >= 8


@pytest.mark.parametrize(("where", "argv"), guide_commands(), ids=lambda v: str(v)[:80])
def test_every_command_in_the_guides_parses(where: str, argv: list[str]) -> None:
    from lsmbench.cli import build_parser

    try:
        build_parser().parse_args(argv)
    except SystemExit as e:
        pytest.fail(f"{where}: the parser refuses it (exit {e.code})")
