"""Where the project's files are: the repository root, workloads/, the driver, lsm-sim."""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The repository root: $LSMBENCH_HOME, else the checkout this package sits in, else cwd."""
    env = os.environ.get("LSMBENCH_HOME")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "pipelines").is_dir():
            return parent
    return Path.cwd().resolve()


def workloads_dir() -> Path:
    return project_root() / "workloads"


def default_results_dir() -> Path:
    env = os.environ.get("LSMBENCH_RESULTS")
    return Path(env).resolve() if env else project_root() / "results"


def build_candidates(name: str) -> list[Path]:
    """Where a built binary of the project is looked for, in order: $LSMBENCH_BUILD_DIR/bin
    (set by the Makefile), build/bin, then any build-*/bin."""
    root = project_root()
    found = []
    if os.environ.get("LSMBENCH_BUILD_DIR"):
        found.append(Path(os.environ["LSMBENCH_BUILD_DIR"]) / "bin" / name)
    found.append(root / "build" / "bin" / name)
    found += sorted(root.glob(f"build-*/bin/{name}"))
    return found


def driver_candidates() -> list[Path]:
    """Where a built lsm-driver is looked for (build_candidates)."""
    return build_candidates("lsm-driver")


def find_driver(explicit: str | None = None) -> Path | None:
    """The lsm-driver binary to use: the explicit path, $LSMBENCH_DRIVER, or a build dir
    (driver_candidates)."""
    for cand in (explicit, os.environ.get("LSMBENCH_DRIVER")):
        if cand:
            p = Path(cand)
            if not p.is_absolute():
                p = project_root() / p
            return p if p.is_file() else None
    for p in driver_candidates():
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def build_driver(build: str) -> Path | None:
    """The lsm-driver of a build given as a build directory (its bin/lsm-driver) or as the
    binary itself; relative to the project root, as testbed.driver. None when there is no
    executable one."""
    p = Path(build)
    if not p.is_absolute():
        p = project_root() / p
    if p.is_dir():
        p = p / "bin" / "lsm-driver"
    return p if p.is_file() and os.access(p, os.X_OK) else None


def find_sim() -> Path | None:
    """The lsm-sim binary (the merge-policy simulator): $LSMBENCH_SIM, or a build dir
    (build_candidates); None when it is not built."""
    env = os.environ.get("LSMBENCH_SIM")
    if env:
        p = Path(env)
        return p if p.is_file() else None
    for p in build_candidates("lsm-sim"):
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None
