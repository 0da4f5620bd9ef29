"""Builds of commits kept for the nightly job's references and bisection: commits whose
engines/ trees are the same share one cmake build; a user's build command keeps one per
commit (it may read any file). A real git repository; the build steps are a runner that
makes the driver file (what cmake would), counting how often it is asked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from lsmbench.track.builds import BuildFailed, build_commit, build_key
from lsmbench.track.gitrepo import GitRepo
from test_track_nightly import commit, git


@pytest.fixture
def repo(tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    work = tmp_path / "repo"
    work.mkdir()
    git(work, "init", "-q")
    (work / "engines").mkdir()
    shas = {"first": commit(work, "engines/db.cc", "int v = 1;\n")}
    shas["docs"] = commit(work, "README.md", "docs only\n")
    shas["pipelines"] = commit(work, "runner.py", "print('the orchestrator changed')\n")
    shas["engine"] = commit(work, "engines/db.cc", "int v = 2;\n")
    shas["reverted"] = commit(work, "engines/db.cc", "int v = 1;\n")
    return GitRepo.open(work), shas


class CountingRunner:
    """Each build's steps: the last one writes bin/lsm-driver, as cmake --build would."""

    def __init__(self) -> None:
        self.sources: list[str] = []

    def __call__(self, argv: Sequence[str], cwd: Path, build_dir: Path) -> int:
        if argv[0] == "cmake" and argv[1] == "-S":
            self.sources.append((cwd / "engines" / "db.cc").read_text())
            return 0
        driver = build_dir / "bin" / "lsm-driver"
        driver.parent.mkdir(parents=True, exist_ok=True)
        driver.write_text("#!/bin/sh\n")
        driver.chmod(0o755)
        return 0


def test_commits_with_the_same_engines_tree_share_one_build(repo, tmp_path):
    git_repo, shas = repo
    run, builds = CountingRunner(), tmp_path / "builds"
    first, built = build_commit(run, git_repo, shas["first"], builds, None)
    assert built and run.sources == ["int v = 1;\n"]
    for name in ("docs", "pipelines", "reverted"):  # engines/ as it was at "first"
        again, built = build_commit(run, git_repo, shas[name], builds, None)
        assert (again, built) == (first, False), name
    changed, built = build_commit(run, git_repo, shas["engine"], builds, None)
    assert built and changed != first
    assert run.sources == ["int v = 1;\n", "int v = 2;\n"]  # built from the commit's own tree
    assert first.parent.name.startswith("engines-")
    assert first.parent.name == build_key(git_repo, shas["docs"], None)


def test_a_user_build_command_keeps_a_build_per_commit(repo, tmp_path):
    git_repo, shas = repo
    assert build_key(git_repo, shas["first"], "make") == shas["first"][:12]
    assert build_key(git_repo, shas["docs"], "make") == shas["docs"][:12]
    assert build_key(git_repo, shas["first"], None) != build_key(git_repo, shas["engine"], None)


def test_a_commit_without_engines_is_keyed_by_itself_and_fails_its_build(tmp_path):
    work = tmp_path / "bare"
    work.mkdir()
    git(work, "init", "-q")
    sha = commit(work, "README.md", "nothing to build\n")
    git_repo = GitRepo.open(work)
    assert build_key(git_repo, sha, None) == sha[:12]

    def no_driver(argv: Sequence[str], cwd: Path, build_dir: Path) -> int:
        return 0

    with pytest.raises(BuildFailed, match="made no"):
        build_commit(no_driver, git_repo, sha, tmp_path / "builds", None)
