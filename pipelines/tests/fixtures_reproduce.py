"""The fixtures the reproduce tests share: `lsmbench` in this process, and a copy of the
recorded suite run (fixtures/reproduce/README.md)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from lsmbench.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "reproduce" / "results" / "reproduce"
REPORT_FIXTURE = Path(__file__).parent / "fixtures" / "report" / "results"


@pytest.fixture()
def lsmbench(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
             ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`lsmbench ARGS` in this process (a CLI test's cost is its work, not an interpreter)."""
    monkeypatch.chdir(ROOT)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)
    return run


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    dst = tmp_path / "results" / "reproduce"
    shutil.copytree(FIXTURE, dst)
    return tmp_path / "results"
