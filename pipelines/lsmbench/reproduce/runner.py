"""Runs the suite's experiments into RESULTS/reproduce/, each as the `lsmbench run` /
`lsmbench tune` a user would type (a child process: its own exit code, signal handling and
cleanup), or lsm-sim-validate; records how each went in reproduce.json. One after the other
on this machine, or with a kept testbed several at once, each on one of its nodes
(spread.py)."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..fingerprint import cpu_model, git_commit, host_fingerprint
from ..util.exits import EXIT_ENV, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, Terminated
from ..util.paths import project_root
from .pages import RUN_FILE, ExperimentRun, SuiteRun, write_atomic
from .simlong import SimLongError, run_long
from .simtable import SimTableError, run_validate
from .spread import Nodes, run_spread
from .suite import Experiment

if TYPE_CHECKING:
    from .evidence import CampaignEvidence
    from .more import Wanted

# The children running now (several at once with --testbed), so that an interruption that
# reached only this process (a SIGTERM) reaches them too.
_live: set[subprocess.Popen[str]] = set()
_live_lock = threading.Lock()
# What each child's exit code means, for reproduce.json (exits.py).
_EXIT_MEANING = {EXIT_FAILED: "a point failed", EXIT_USAGE: "its input was refused",
                 EXIT_ENV: "the environment refused it"}
TAIL_LINES = 3


class ChildInterrupted(KeyboardInterrupt):
    """A child `lsmbench run|tune` was interrupted (it exited 130 or by a signal)."""


def run_child(cmd: list[str]) -> tuple[int, list[str]]:
    """Runs an experiment's `lsmbench run|tune`: its stderr passes through to ours, its last
    lines kept for reproduce.json. (exit code, those lines.) Interrupted here, the child is
    waited for -- told with SIGTERM when the interruption was a SIGTERM to this process alone
    (Ctrl-C reaches it from the terminal already) --: it stops its point and writes what it
    has, which `--resume` goes on from."""
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, errors="replace")
    tail: deque[str] = deque(maxlen=TAIL_LINES)

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(line)
            sys.stderr.flush()
            if line.strip():
                tail.append(line.rstrip())

    reader = threading.Thread(target=pump, name="reproduce-child-stderr", daemon=True)
    reader.start()
    with _live_lock:
        _live.add(proc)
    try:
        proc.wait()
    except KeyboardInterrupt as e:
        if isinstance(e, Terminated):
            stop_children()  # else Ctrl-C: the terminal told the child too; once is enough
        proc.wait()
        raise
    finally:
        with _live_lock:
            _live.discard(proc)
        reader.join(timeout=5)
    if proc.returncode in (EXIT_INTERRUPTED, 128 + signal.SIGTERM) or proc.returncode < 0:
        raise ChildInterrupted
    return proc.returncode, list(tail)


def stop_children() -> None:
    """SIGTERM to every child still running (each then ends its point and exits)."""
    with _live_lock:
        live = list(_live)
    for proc in live:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)


def failure_text(code: int, tail: list[str]) -> str:
    """reproduce.json's error of a child that exited `code`: what the code means and the
    child's last words."""
    said = f": {tail[-1]}" if tail else ""
    return f"exit {code} ({_EXIT_MEANING.get(code, 'failed')}){said}"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def command(exp: Experiment, quick: bool, store: Path, testbed: str | None = None,
            node: str | None = None, resume: bool = False) -> list[str]:
    """The lsmbench command line of a run or tune experiment; with `testbed` and `node`, on
    that one node of the kept testbed; with `resume`, going on from its complete points
    (else starting over: --force)."""
    assert exp.spec is not None
    pin = ([f"testbed={testbed}", f"testbed.nodes=[{node}]"] if testbed is not None
           and node is not None else [])
    sets = [a for s in [*exp.overrides(quick), *pin] for a in ("--set", s)]
    verb = "tune" if exp.kind == "tune" else "run"
    return [sys.executable, "-m", "lsmbench", verb, str(project_root() / exp.spec),
            "--results", str(store), "--resume" if resume else "--force", "--no-publish",
            "--quiet", *sets]


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


def run_one(exp: Experiment, quick: bool, store: Path, testbed: str | None = None,
            node: str | None = None, resume: bool = False,
            claim_repetitions: int = 0, previous: ExperimentRun | None = None,
            checkpoint: Callable[[ExperimentRun], None] | None = None,
            say: Callable[[str], None] | None = None) -> ExperimentRun:
    """One experiment; a run or tune one on `node` of the kept `testbed` when given, going on
    from its complete points with `resume`; then, for a run one that succeeded, more
    repetitions of the groups its undecided claims compare, up to `claim_repetitions` each
    (more.py; 0: none). With `resume`, `previous` is the experiment's stored record: the
    plans of repetitions it made stay in the new one, and one it left interrupted goes on.
    `checkpoint` stores the record while such a plan runs, so that an interruption leaves
    the plan for `--resume`; `say` announces a plan before it starts (it can take hours)."""
    started = now()
    result = _run_one(exp, quick, store, testbed, node, resume)
    result.started = started
    plans = previous.plans if resume and previous is not None else []
    if exp.kind == "run" and result.exit_code == 0 and (claim_repetitions > 0 or plans):
        _more_repetitions(exp, quick, store, testbed, node, claim_repetitions, result, plans,
                          checkpoint or (lambda _: None), say or (lambda _: None))
    return result


def _plan_points_s(plan: dict[str, Any]) -> float:
    """The wall time of the points a plan added (its whole time in records that lack it)."""
    return float(plan.get("points_s", plan.get("seconds")) or 0.0)


def _more_repetitions(exp: Experiment, quick: bool, store: Path, testbed: str | None,
                      node: str | None, cap: int, result: ExperimentRun,
                      before: list[dict[str, Any]],
                      checkpoint: Callable[[ExperimentRun], None],
                      say: Callable[[str], None]) -> None:
    """The experiment again with --resume and matrix.repetitions.groups, when some of its
    claims want more repetitions, or when the last of the plans `before` (the stored ones)
    was interrupted (recorded in result.more, with the plans before it)."""
    import json

    from ..spec.checks import repetition_range
    from .evidence import read_evidence
    from .more import Wanted, repetitions_wanted

    earlier = list(before)
    pending = (earlier.pop() if earlier and earlier[-1].get("done") is False
               and int(earlier[-1]["repetitions"]) <= cap else None)
    # The stored points include those the plans added, which have their own figures: the
    # experiment's own time ("Ran in") is the rest.
    if result.points_s is not None:
        added = sum(_plan_points_s(p) for p in [*earlier, *([pending] if pending else [])])
        result.points_s = round(max(0.0, result.points_s - added), 1)
    ev = read_evidence(store, exp.name) if pending is not None or cap > 0 else None
    if pending is not None:
        # Going on as planned: estimating again from the part it measured would be one more
        # look at the data, and the plan's number was chosen before any of it.
        wanted: Wanted | None = Wanted(repetitions=int(pending["repetitions"]),
                                       groups=list(pending["groups"]),
                                       claims=list(pending["claims"]),
                                       balance=dict(pending.get("balance") or {}))
    else:
        wanted = repetitions_wanted(exp.name, ev, cap) if ev is not None else None
    if wanted is None:
        if earlier:  # the plans that added the kept points stay on record
            result.more = {**earlier[-1], **({"earlier": earlier[:-1]} if earlier[1:] else {})}
        return
    campaign = json.loads((store / exp.name / "campaign.json").read_text())
    rep_min, rep_max = repetition_range(campaign["spec"].get("matrix") or {})
    # Never below the spec's own max: an adaptive group may already have more than the
    # comparison's smaller side, and its repetitions stay planned.
    most = max(wanted.repetitions, rep_max)
    groups = ", ".join("'" + g.replace("'", "''") + "'" for g in wanted.groups)
    more = f"matrix.repetitions={{min: {rep_min}, max: {most}, groups: [{groups}]}}"
    cmd = [*command(exp, quick, store, testbed, node, resume=True), "--set", more]
    say(plan_outlook(exp.name, ev, wanted, most, going_on=pending is not None))
    carried_s = float(pending["seconds"]) if pending else 0.0
    carried_points_s = _plan_points_s(pending) if pending else 0.0
    start, points_before = time.monotonic(), points_wall_s(store, exp.name)

    def record(code: int | None) -> None:
        result.more = {"claims": wanted.claims, "groups": wanted.groups,
                       "repetitions": most, "exit_code": code, "done": code is not None,
                       "seconds": round(carried_s + time.monotonic() - start, 1),
                       "points_s": round(carried_points_s + points_wall_s(store, exp.name)
                                         - points_before, 1),
                       "command": "lsmbench " + shlex.join(cmd[3:]),
                       **({"balance": wanted.balance} if wanted.balance else {}),
                       **({"earlier": earlier} if earlier else {})}

    record(None)
    checkpoint(result)
    try:
        code, tail = run_child(cmd)
    except KeyboardInterrupt:
        record(None)
        checkpoint(result)
        raise
    record(code)
    if code != 0:
        result.exit_code = code
        result.error = (f"{failure_text(code, tail)}, while adding repetitions for "
                        f"{', '.join(wanted.claims)}")


def plan_outlook(name: str, ev: CampaignEvidence | None, wanted: Wanted, most: int,
                 going_on: bool) -> str:
    """What a plan is about to run: the points its groups lack (in `ev`, the experiment's
    evidence before it) and, at their complete points' median wall time so far, about how
    long they take."""
    from statistics import median

    from ..util.units import format_duration

    points, seconds, timed = 0, 0.0, True
    for gid in wanted.groups:
        group = next((g for g in ev.groups if g.group == gid), None) if ev else None
        lacking = most - (group.complete if group is not None else 0)
        if lacking <= 0:
            continue
        points += lacking
        found = [ev.points.get(p) for p in group.points] if ev and group else []
        walls = [float(w) for pt in found
                 if pt is not None and pt.ok and (w := pt.record.get("wall_s"))]
        if walls:
            seconds += lacking * median(walls)
        else:
            timed = False
    pace = f", ~{format_duration(seconds)} at their points' median time so far" if timed \
        else ""
    how = "going on with the interrupted plan" if going_on else "more repetitions"
    return (f"reproduce: {name}: {how} for {', '.join(wanted.claims)}: up to {most} of "
            f"{len(wanted.groups)} group(s), {points} point(s) to run{pace}")


def points_wall_s(store: Path, name: str) -> float:
    """The wall time of an experiment's stored points, summed (each point's wall_s)."""
    from ..store import Store

    return sum(float(r.data.get("wall_s") or 0.0) for r in Store(store).points(name))


def _run_one(exp: Experiment, quick: bool, store: Path, testbed: str | None,
             node: str | None, resume: bool) -> ExperimentRun:
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
    cmd = command(exp, quick, store, testbed, node, resume)
    shown = "lsmbench " + shlex.join(cmd[3:])
    code, tail = run_child(cmd)
    return ExperimentRun(name=exp.name, command=shown, exit_code=code,
                         seconds=time.monotonic() - start,
                         error=None if code == 0 else
                         f"{failure_text(code, tail)}; see `lsmbench ls {exp.name} --results "
                         f"{store}`",
                         resumed=resume,
                         points_s=round(points_wall_s(store, exp.name), 1) if resume else None)


def more_text(result: ExperimentRun) -> str:
    """', then up to 9 repetitions of 2 groups for LC12 (310 s)', or ''."""
    m = result.more
    if not m:
        return ""
    return (f", then up to {m['repetitions']} repetitions of {len(m['groups'])} group(s) for "
            f"{', '.join(m['claims'])} ({m['seconds']:.0f} s"
            f"{', interrupted' if result.plan_pending else ''})")


def new_run(quick: bool) -> SuiteRun:
    """A suite run starting now, on this machine's commit and host."""
    project = git_commit()
    host = host_fingerprint()
    return SuiteRun(variant="quick" if quick else "full", started=now(),
                    commit=project.get("commit"), dirty=project.get("dirty"),
                    host={"cpu": cpu_model(), "cores": host.get("cpu_count"),
                          "kernel": host.get("kernel")})


def run_suite(exps: list[Experiment], quick: bool, store: Path,
              say: Callable[[str], None] = print, into: SuiteRun | None = None,
              nodes: Nodes | None = None,
              estimates: dict[str, float | None] | None = None,
              resume: bool = False, ends: bool = False,
              claim_repetitions: int = 0) -> SuiteRun:
    """Runs `exps` into `store`, writing reproduce.json after each one: a new suite run, or,
    with `into` (the stored one, `--experiment`), that run with these experiments replaced.
    With `nodes` (a kept testbed, up: spread.open_nodes) the run and tune experiments run
    there at once, each on one node, longest first by `estimates`. With `resume` each run or
    tune experiment goes on from its complete points; `ends`: `into` ends with these (a
    whole suite resumed, not `--experiment`); `claim_repetitions`: run_one's."""
    commit = git_commit().get("commit")
    run = into if into is not None else new_run(quick)
    if nodes is not None:
        record = nodes.record()
        if run.testbed is not None and run.testbed.get("name") == nodes.name:
            record["nodes"] = {**run.testbed.get("nodes", {}), **record["nodes"]}
        run.testbed = record
    store.mkdir(parents=True, exist_ok=True)

    lock = threading.Lock()  # with a testbed, the nodes' threads keep their records

    def keep(result: ExperimentRun) -> None:
        with lock:
            result.finished = now()
            result.commit = commit
            run.experiments[result.name] = result
            write_atomic(store / RUN_FILE, run.model_dump_json(indent=2).encode())

    # With `resume`, the stored records (taken before any is replaced): their plans of
    # repetitions stay, and an interrupted one goes on.
    previous = dict(run.experiments) if resume else {}
    if nodes is not None:
        write_atomic(store / RUN_FILE, run.model_dump_json(indent=2).encode())
        try:
            run_spread(exps, nodes,
                       lambda e, node: run_one(e, quick, store, nodes.name if node else None,
                                               node, resume, claim_repetitions,
                                               previous.get(e.name), keep, say),
                       keep, say, estimates or {})
        except KeyboardInterrupt as e:
            # Here, not in the threads that wait for the nodes' children: they end with them.
            if isinstance(e, Terminated):
                stop_children()
            raise
    else:
        for i, exp in enumerate(exps, 1):
            say(f"reproduce: [{i}/{len(exps)}] {exp.name} ({exp.paper}): {exp.title}")
            result = run_one(exp, quick, store, resume=resume,
                             claim_repetitions=claim_repetitions,
                             previous=previous.get(exp.name), checkpoint=keep, say=say)
            keep(result)
            say(f"reproduce: [{i}/{len(exps)}] {exp.name}: exit {result.exit_code} in "
                f"{result.own_s:.0f} s{more_text(result)}")
    if into is None or ends:
        run.ended = now()
    write_atomic(store / RUN_FILE, run.model_dump_json(indent=2).encode())
    return run
