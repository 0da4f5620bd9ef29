"""Runs the suite's experiments one after the other into RESULTS/reproduce/, each as the
`lsmbench run` / `lsmbench tune` a user would type (a child process: its own exit code,
signal handling and cleanup), or lsm-sim-validate; records how each went in reproduce.json."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ..fingerprint import cpu_model, git_commit, host_fingerprint
from ..paths import project_root
from .pages import RUN_FILE, ExperimentRun, SuiteRun, write_atomic
from .simlong import SimLongError, run_long
from .simtable import SimTableError, run_validate
from .suite import Experiment


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def command(exp: Experiment, quick: bool, store: Path) -> list[str]:
    """The lsmbench command line of a run or tune experiment."""
    assert exp.spec is not None
    sets = [a for s in exp.overrides(quick) for a in ("--set", s)]
    verb = "tune" if exp.kind == "tune" else "run"
    return [sys.executable, "-m", "lsmbench", verb, str(project_root() / exp.spec),
            "--results", str(store), "--force", "--no-publish", "--quiet", *sets]


def _simulated(exp: Experiment, shown: str, start: float, run: Callable[[], object],
               failure: type[Exception]) -> ExperimentRun:
    """A simulator experiment's record: exit 1 with the reason when `run` raises `failure`."""
    try:
        run()
    except failure as e:
        return ExperimentRun(name=exp.name, command=shown, exit_code=1,
                             seconds=time.monotonic() - start, error=str(e))
    return ExperimentRun(name=exp.name, command=shown, exit_code=0,
                         seconds=time.monotonic() - start)


def run_one(exp: Experiment, quick: bool, store: Path) -> ExperimentRun:
    start = time.monotonic()
    if exp.kind == "sim-validate":
        args = exp.args(quick)
        return _simulated(exp, "lsm-sim-validate " + " ".join(args), start,
                          lambda: run_validate(store / exp.name, args), SimTableError)
    if exp.kind == "sim":
        shown = "lsm-sim over " + ", ".join(f"k={k} n={n:,}" for k, n in exp.sim_runs)
        return _simulated(exp, shown, start,
                          lambda: run_long(store / exp.name, exp.name, exp.sim_runs),
                          SimLongError)
    cmd = command(exp, quick, store)
    shown = "lsmbench " + shlex.join(cmd[3:])
    proc = subprocess.run(cmd, check=False)
    if proc.returncode == 130 or proc.returncode < 0:
        raise KeyboardInterrupt
    return ExperimentRun(name=exp.name, command=shown, exit_code=proc.returncode,
                         seconds=time.monotonic() - start,
                         error=None if proc.returncode == 0 else
                         f"exit {proc.returncode} (1: a point failed; see `lsmbench ls "
                         f"{exp.name} --results {store}`)")


def run_suite(exps: list[Experiment], quick: bool, store: Path,
              say: Callable[[str], None] = print, into: SuiteRun | None = None) -> SuiteRun:
    """Runs `exps` into `store`, writing reproduce.json after each one: a new suite run, or,
    with `into` (the stored one, `--experiment`), that run with these experiments replaced."""
    project = git_commit()
    if into is None:
        host = host_fingerprint()
        run = SuiteRun(variant="quick" if quick else "full", started=now(),
                       commit=project.get("commit"), dirty=project.get("dirty"),
                       host={"cpu": cpu_model(), "cores": host.get("cpu_count"),
                             "kernel": host.get("kernel")})
    else:
        run = into
    store.mkdir(parents=True, exist_ok=True)
    for i, exp in enumerate(exps, 1):
        say(f"reproduce: [{i}/{len(exps)}] {exp.name} ({exp.paper}): {exp.title}")
        result = run_one(exp, quick, store)
        result.finished = now()
        result.commit = project.get("commit")
        run.experiments[exp.name] = result
        say(f"reproduce: [{i}/{len(exps)}] {exp.name}: exit {result.exit_code} in "
            f"{result.seconds:.0f} s")
        write_atomic(store / RUN_FILE, run.model_dump_json(indent=2).encode())
    if into is None:
        run.ended = now()
    write_atomic(store / RUN_FILE, run.model_dump_json(indent=2).encode())
    return run
