"""The generated reference pages, docs/reference/cli.md and spec.md, are what the code makes
now: a new command, option or spec field fails here until the pages are regenerated
(`python -m lsmbench.cli.reference`, or `make docs`). engine-options.md has its driver test."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from lsmbench.cli import build_parser
from lsmbench.cli.reference import REGENERATE, cli_page, main
from lsmbench.spec.models import CampaignSpec
from lsmbench.spec.reference import spec_page
from pydantic import Field

REFERENCE = Path(__file__).resolve().parents[3] / "docs" / "reference"


def command(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices[name]


@pytest.mark.parametrize("name, make", [("cli.md", cli_page), ("spec.md", spec_page)])
def test_the_committed_page_is_current(name, make) -> None:
    committed = (REFERENCE / name).read_text()
    assert committed == make(), f"docs/reference/{name} is stale: regenerate it with {REGENERATE}"


def test_a_new_option_changes_the_cli_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LSMBENCH_RESULTS", raising=False)
    parser = build_parser()
    command(parser, "run").add_argument("--new-knob", type=int, default=3, metavar="N",
                                        help="a knob no page lists")
    page = cli_page(parser)
    assert page != cli_page()
    run = page.split("\n## `run`\n")[1].split("\n## ")[0]
    assert "| `--new-knob` | `N` | `3` | a knob no page lists |" in run
    assert "[--new-knob N]" in run  # the usage too


def test_a_new_spec_field_changes_the_spec_page() -> None:
    class Grown(CampaignSpec):
        new_knob: int = Field(default=3, ge=1, description="A knob no page lists.")

    page = spec_page(Grown)
    assert page != spec_page()
    assert "| `new_knob` | integer | `3` | at least 1 | A knob no page lists. |" in page


def test_an_option_or_a_field_without_a_description_is_refused() -> None:
    parser = build_parser()
    command(parser, "ls").add_argument("--silent", action="store_true")
    with pytest.raises(ValueError, match="lsmbench ls --silent: no help"):
        cli_page(parser)

    class Undescribed(CampaignSpec):
        quiet_knob: int = 1

    with pytest.raises(ValueError, match=r"Undescribed\.quiet_knob has no Field\(description"):
        spec_page(Undescribed)


def test_the_cli_page_depends_on_no_terminal_and_no_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = cli_page()
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("LSMBENCH_RESULTS", "/elsewhere/results")
    assert cli_page() == before
    assert "/elsewhere" not in before and str(REFERENCE.parents[1]) not in before


def test_check_names_a_stale_page_and_the_command(tmp_path: Path, capsys) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    assert main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "spec.md").write_text("an older page\n")
    capsys.readouterr()
    assert main(["--out", str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'spec.md'} is stale: regenerate it with {REGENERATE}" in err
    assert "cli.md" not in err
