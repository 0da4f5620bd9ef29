"""Engine builds of commits, for the nightly job and bisection: the build command (cmake, or the
user's), and a commit built from a temporary worktree into a directory of its own, kept so that
the next night or step reuses it. The cmake build reads nothing outside engines/, so commits
whose engines/ trees are the same share one build (build_key): an A/A night's reference, or a
bisection step over a commit that changed only docs or pipelines, builds nothing."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ..util.exits import EXIT_ENV, EXIT_FAILED
from .gitrepo import GitError, GitRepo

# The targets a campaign needs: the driver runs the phases, lsm-sim predicts the merge cycle
# the running phase must cover (cyclecheck).
BUILD_TARGETS = ("lsm-driver", "lsm-sim")

# Runs one command of a build to its end: (argv, working directory, $LSMBENCH_BUILD_DIR) ->
# its exit code (OSError when it cannot start).
Runner = Callable[[Sequence[str], Path, Path], int]


class BuildFailed(Exception):
    """A build that did not make a driver: ``code`` 1 (the commit does not build) or 3 (the
    tools or git failed)."""

    def __init__(self, code: int, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def build_commands(source: Path, build_dir: Path, build_command: str | None) -> list[list[str]]:
    """cmake (Release, the two targets) of source/engines into build_dir, or the user's command
    (run with sh -c in source, $LSMBENCH_BUILD_DIR set)."""
    if build_command:
        return [["/bin/sh", "-c", build_command]]
    return [
        ["cmake", "-S", str(source / "engines"), "-B", str(build_dir), "-G", "Ninja",
         "-DCMAKE_BUILD_TYPE=Release", "-DLSM_BUILD_TESTS=OFF"],
        ["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 1),
         "--target", *BUILD_TARGETS],
    ]


def driver_of(build_dir: Path) -> Path | None:
    driver = build_dir / "bin" / "lsm-driver"
    return driver if driver.is_file() and os.access(driver, os.X_OK) else None


def build_into(run: Runner, source: Path, build_dir: Path, build_command: str | None,
               commit: str | None) -> Path:
    """Builds the checkout at source into build_dir; the driver (BuildFailed otherwise)."""
    for argv in build_commands(source, build_dir, build_command):
        try:
            code = run(argv, source, build_dir)
        except OSError as e:  # cmake or sh missing
            raise BuildFailed(EXIT_ENV, f"{argv[0]}: {e.strerror}") from None
        if code != 0:
            raise BuildFailed(EXIT_FAILED, f"`{' '.join(argv)}` exited {code}: commit "
                                           f"{(commit or '?')[:12]} does not build")
    driver = driver_of(build_dir)
    if driver is None:
        raise BuildFailed(EXIT_FAILED, f"the build made no {build_dir / 'bin' / 'lsm-driver'}")
    return driver


def build_key(repo: GitRepo, sha: str, build_command: str | None) -> str:
    """The name of the directory a commit's build is kept in: with the cmake build, the hash
    of its engines/ tree (``engines-<12 hex>``), the same for every commit that left engines/
    as it was; with a user's build command, which may read any file, the commit's own
    (``<12 hex>``)."""
    tree = None if build_command else repo.tree(sha, "engines")
    return f"engines-{tree[:12]}" if tree else sha[:12]


def build_commit(run: Runner, repo: GitRepo, sha: str, builds: Path,
                 build_command: str | None) -> tuple[Path, bool]:
    """The build of commit sha in builds/<build_key>/build, made from a worktree of repo at
    .../src (removed after) unless that directory already holds one: (its build directory,
    whether it was built now). The repository's own checkout is left where it is."""
    home = builds / build_key(repo, sha, build_command)
    build_dir = home / "build"
    if driver_of(build_dir) is not None:
        return build_dir, False
    source = home / "src"
    try:
        repo.add_worktree(source, sha)
        try:
            build_into(run, source, build_dir, build_command, sha)
        finally:
            repo.remove_worktree(source)
    except GitError as e:
        raise BuildFailed(EXIT_ENV, str(e)) from None
    return build_dir, True
