"""`lsmbench track nightly SPEC`: one night of performance tracking (docs/tracking.md, "The
nightly job").

    lock -> fetch -> checkout -> build -> reference -> testbed up -> run -> record -> report
    -> publish -> bisect (--bisect)

Paired nights. The night's commit is measured against a reference build in the same campaign
run (spec ``pair:``: every point with both builds, their repetitions interleaved on the same
node), so that the testbed's noise that night cancels in their ratio (lsmbench.track.paired).
The reference is --reference: by default the last *accepted* night's commit -- one whose every
paired ratio was "not-worse", or worse with the regression acknowledged; an undecided night
keeps the reference (changes.accepted_commit): a regression keeps showing against the commit
before it until someone acknowledges it. It is
built once per commit from a temporary worktree of REPO into BUILD_DIR-reference/<sha>, and
kept. The first night (no accepted night yet) and --reference none run unpaired.

Which code judges which. A night measures the *engine* of the fetched commit: it is built from
REPO/engines into the build directory, the campaign runs that driver (LSMBENCH_BUILD_DIR) and a
kept testbed is given those sources (LSMBENCH_ENGINES). The orchestrator -- spec handling, the
two-phase method, verdicts, the history and its detector -- is the one running this command,
whatever the commit changes under pipelines/: a change point should be the engine's doing, not
a change in how it was measured. So the orchestrator is installed apart from REPO (the Ansible
role makes it a pinned checkout the job cannot write). When REPO *is* the orchestrator's own
editable checkout (the default --repo), checking out the commit moves both, and the night says
so in a warning.

Steps as child processes. Every step after the checkout is a child process (git, cmake, or
`python -m lsmbench ...` of this same interpreter and package): each keeps the exit-code
contract of its command (run: 1 a point failed, 3 the environment; report: 4 an open
regression), its own signal handling and cleanup (run's store lock and cgroups), and its memory
(matplotlib, the store) ends with it; a crash in one is that step's failure with its code, not
a traceback through the night. record and report are called by their documented command lines,
which is also what keeps this module independent of their Python API. In-process: the lock,
the argument checks, the git plumbing, and writing the history and change points to InfluxDB
(this package's own code over the sink).

A testbed of several nodes (--testbed NAME). Each node is a series of its own (a node's
numbers are its machine's; track.record records a run per node): every node must answer when
the night starts (`testbed status` before `testbed up`: an unreachable node fails the testbed
step, exit 3, before anything is deployed, run or recorded), and the run gets the matrix dimension
``testbed.node`` over the nodes (unless the spec has its own), so that every group's
repetitions run on every node and each node's series has every group's median each night.

With --bisect, a regression the report holds open that no bisection has taken up yet is
bisected at the end of the night (`lsmbench track bisect`, on this machine, the lock still
held): one a night, paired ones first, then the largest; the others wait for the next nights.
A bisection that ends without naming a commit (undecided, or only skipped commits) is said in
the step, not a failure of the night; one that cannot run (exit 2 or 3) is.

Exit codes: 0 a good night; 4 the report has an open regression; the first failed step's code
otherwise, which wins over 4 (1: a point failed, the commit does not build, publishing failed;
3: the environment -- the lock is held, fetch, testbed, a node unreachable; 130: interrupted);
2: bad input (a missing or unreadable spec, REPO not a git checkout or with uncommitted
changes, an unknown ref, a bad --publish URL, a --testbed that does not exist or that the
spec does not run on), found before anything is written.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..util.exits import (
    EXIT_ENV,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_USAGE,
)
from ..util.names import NODE_DIMENSION
from ..util.paths import project_root
from .builds import BUILD_TARGETS, BuildFailed, build_commit, build_into
from .gitrepo import GitError, GitRepo, UnknownRef
from .nightlock import LockHeld, night_lock

# Environment variables that would make the run use another binary than the fresh build.
_BINARY_OVERRIDES = ("LSMBENCH_DRIVER", "LSMBENCH_SIM")
# How long a step gets to stop after SIGTERM before it is killed.
STOP_GRACE_S = 60.0
REFERENCE_ACCEPTED = "accepted"
REFERENCE_NONE = "none"


class UsageError(ValueError):
    """Bad input: exit 2, nothing written."""


class StepOutcome(BaseModel):
    step: str
    code: int  # the exit code this step gives the night (0 for success)
    detail: str = ""
    seconds: float = 0.0
    regression: bool = False  # report only: exit 4, an open regression


class NightSummary(BaseModel):
    exit: int
    campaign: str | None = None
    ref: str | None = None
    commit: str | None = None
    open_regressions: int | None = None
    # each open regression: id, campaign, group, metric, change, and the nodes that saw it
    # (a campaign on several nodes; one entry for a regression every node saw)
    regressions: list[dict[str, Any]] = []
    report_dir: str | None = None
    steps: list[StepOutcome] = []


def final_exit_code(outcomes: Sequence[StepOutcome]) -> int:
    """The first failed step's code; else 4 when the report found an open regression; else 0."""
    for o in outcomes:
        if o.code != EXIT_OK and not o.regression:
            return o.code
    return EXIT_REGRESSION if any(o.regression for o in outcomes) else EXIT_OK


# ------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True)
class NightPlan:
    """The night's inputs, checked (plan_night)."""

    spec: Path
    campaign: str
    repo: GitRepo
    ref: str
    fetch: bool
    build_dir: Path
    build_command: str | None
    testbed: str | None
    # the spec sets testbed.node itself (a matrix dimension): the night adds none
    spec_sets_node: bool
    results: Path
    history: Path
    report_dir: Path
    lock: Path
    publish_url: str | None
    token_env: str | None
    token_file: str | None
    # --bisect: a new open regression is bisected after the report, with this threshold
    # (None: track bisect's default, the regression as the nights measured it)
    bisect: bool
    bisect_threshold: float | None
    # --reference: "accepted", "none", or a ref resolved once the repository is fetched
    reference: str
    # REPO is the orchestrator's own checkout: the checkout changes the judge too.
    orchestrator_moves: bool

    @property
    def campaign_dir(self) -> Path:
        return self.results / self.campaign

    @property
    def reference_builds(self) -> Path:
        """Where reference builds are kept, one directory per engines/ tree (builds.build_key)."""
        return self.build_dir.with_name(self.build_dir.name + "-reference")


def plan_night(args: argparse.Namespace) -> NightPlan:
    """Checks every input that can be checked without writing anything; UsageError says
    which one is wrong."""
    from ..spec import SpecError
    from ..spec.load import read_yaml

    spec = Path(args.spec).absolute()
    if not spec.is_file():
        raise UsageError(f"{args.spec}: no such spec file")
    try:
        raw = read_yaml(spec)
    except SpecError as e:
        raise UsageError(f"{args.spec}: " + "; ".join(m for _, m in e.errors)) from None
    campaign = raw.get("name")
    if not isinstance(campaign, str) or not campaign.strip():
        raise UsageError(f"{args.spec}: the spec has no campaign name (name: ...)")
    if args.testbed:
        spec_testbed = raw.get("testbed")
        if spec_testbed != args.testbed:
            shown = spec_testbed if isinstance(spec_testbed, str) else "its own testbed section"
            raise UsageError(f"--testbed {args.testbed}: the spec {args.spec} runs on "
                             f"{shown or 'local'}, not on the kept testbed {args.testbed} "
                             f"(say `testbed: {args.testbed}` in the spec)")
        _check_testbed(args.testbed)
    matrix = raw.get("matrix")
    try:
        repo = GitRepo.open(Path(args.repo).absolute() if args.repo else project_root())
        modified = repo.modified_files()
    except GitError as e:  # NotACheckout, or git failing on it
        raise UsageError(f"--repo: {e}") from None
    if modified:
        shown = ", ".join(modified[:5]) + (", ..." if len(modified) > 5 else "")
        raise UsageError(f"--repo {repo.root}: uncommitted changes to {shown}: the night "
                         "measures commits, not a modified tree (commit or stash them)")
    ref = args.ref
    if args.no_fetch:
        try:
            repo.resolve(ref)
        except UnknownRef as e:
            raise UsageError(f"--ref: {e}") from None
    elif not ref or ref.startswith("-"):
        raise UsageError(f"--ref: {ref!r} is not a ref")
    reference = args.reference or REFERENCE_ACCEPTED
    if reference not in (REFERENCE_ACCEPTED, REFERENCE_NONE) and args.no_fetch:
        try:
            repo.resolve(reference)
        except UnknownRef as e:
            raise UsageError(f"--reference: {e}") from None
    elif reference.startswith("-"):
        raise UsageError(f"--reference: {reference!r} is not a ref")
    if args.publish:
        _check_publish(args)
    if args.bisect_threshold is not None and not 0 < args.bisect_threshold < 1:
        raise UsageError(f"--bisect-threshold {args.bisect_threshold:g}: expected a fraction "
                         "between 0 and 1 (0.05: 5 %)")
    results = Path(args.results).absolute()
    history = Path(args.history).absolute() if args.history else results / "history.sqlite"
    build_dir = (Path(args.build_dir).absolute() if args.build_dir
                 else repo.root / "build-nightly")
    return NightPlan(
        spec=spec, campaign=campaign, repo=repo, ref=ref, fetch=not args.no_fetch,
        build_dir=build_dir, build_command=args.build_command, testbed=args.testbed,
        spec_sets_node=isinstance(matrix, dict) and NODE_DIMENSION in matrix,
        results=results, history=history, report_dir=history.parent,
        lock=Path(args.lock).absolute() if args.lock else results / ".nightly.lock",
        publish_url=args.publish, token_env=args.token_env, token_file=args.token_file,
        bisect=args.bisect, bisect_threshold=args.bisect_threshold,
        reference=reference,
        orchestrator_moves=_same_dir(repo.root, project_root()),
    )


def _check_testbed(name: str) -> None:
    """A kept testbed NAME exists (brought up once with its definition)."""
    from ..testbeds.state import TestbedState

    try:
        state = TestbedState(name)
        known = state.definition_path.is_file()
    except (OSError, ValueError) as e:
        raise UsageError(f"--testbed {name}: {e}") from None
    if not known:
        raise UsageError(f"--testbed {name}: no testbed {name!r} ({state.definition_path} does "
                         f"not exist): bring it up once with `lsmbench testbed up {name} "
                         "--file TESTBED.yml`")


def _check_publish(args: argparse.Namespace) -> None:
    from ..publish import sink_from_url
    from ..sinks import check_section

    try:
        check_section(sink_from_url(args.publish, None, token_env=args.token_env,
                                    token_file=args.token_file))
    except Exception as e:  # pydantic's and the target's own checks: both say what is wrong
        raise UsageError(f"--publish {args.publish!r}: {e}") from None
    if args.token_file and not os.access(args.token_file, os.R_OK):
        raise UsageError(f"--token-file {args.token_file}: not readable")


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


# ------------------------------------------------------------------------------------ output


class NightOutput:
    """Plain lines for the journal (one per step start and end, `nightly: ...`), or JSON
    events on stdout with --json (the steps' own output then goes to stderr)."""

    def __init__(self, as_json: bool, quiet: bool) -> None:
        self.as_json = as_json
        self.quiet = quiet

    def _emit(self, event: str, **fields: Any) -> None:
        print(json.dumps({"event": event, "time": round(time.time(), 3), **fields},
                         default=str), flush=True)

    def step_start(self, step: str, what: str) -> None:
        if self.as_json:
            self._emit("step_start", step=step, what=what)
        elif not self.quiet:
            print(f"nightly: {step}: {what}", flush=True)

    def step_end(self, outcome: StepOutcome) -> None:
        if self.as_json:
            self._emit("step_end", **outcome.model_dump())
            return
        ok = outcome.code == EXIT_OK or outcome.regression
        if ok and self.quiet:
            return
        word = "done" if ok else f"FAILED (exit {outcome.code})"
        line = f"nightly: {outcome.step}: {word} in {outcome.seconds:.1f}s"
        if outcome.detail:
            line += f": {outcome.detail}"
        print(line, file=sys.stdout if ok else sys.stderr, flush=True)

    def warning(self, text: str) -> None:
        if self.as_json:
            self._emit("warning", text=text)
        else:
            print(f"nightly: warning: {text}", file=sys.stderr, flush=True)

    def error(self, text: str) -> None:
        if self.as_json:
            self._emit("error", text=text)
        print(f"lsmbench track nightly: {text}", file=sys.stderr, flush=True)

    def end(self, summary: NightSummary) -> None:
        if self.as_json:
            self._emit("nightly_end", **summary.model_dump())
            return
        parts = [f"nightly: exit {summary.exit}"]
        if summary.commit:
            parts.append(f"commit {summary.commit[:12]} ({summary.ref})")
        if summary.campaign:
            parts.append(f"campaign {summary.campaign}")
        failed = [s.step for s in summary.steps if s.code != EXIT_OK and not s.regression]
        if failed:
            parts.append(f"failed step: {failed[0]}")
        if summary.open_regressions is not None:
            seen = [f"{r['id']} on {', '.join(r['nodes'])}" for r in summary.regressions
                    if r.get("nodes")]
            parts.append(f"{summary.open_regressions} open regression(s)"
                         + (f" ({'; '.join(seen)})" if seen else ""))
        if summary.report_dir and any(s.step == "report" for s in summary.steps):
            parts.append(f"report {summary.report_dir}/history.html")
        print("; ".join(parts), file=sys.stdout if summary.exit in (0, 4) else sys.stderr,
              flush=True)


# ------------------------------------------------------------------------------------ steps


class StepFailed(Exception):
    """Ends a step with an exit code and a reason."""

    def __init__(self, code: int, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass
class Night:
    plan: NightPlan
    out: NightOutput
    lock_fd: int
    outcomes: list[StepOutcome] = field(default_factory=list)
    commit: str | None = None
    # The reference build this night is paired with (None: unpaired).
    reference_commit: str | None = None
    reference_dir: Path | None = None
    # The testbed's nodes, all reachable (testbed step); a night on several gets testbed.node.
    nodes: list[str] = field(default_factory=list)

    # -- running things ---------------------------------------------------------------------

    def child_env(self, build_dir: Path | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _BINARY_OVERRIDES}
        env["LSMBENCH_BUILD_DIR"] = str(build_dir or self.plan.build_dir)
        env["LSMBENCH_ENGINES"] = str(self.plan.repo.root / "engines")
        return env

    def child(self, argv: Sequence[str], *, cwd: Path | None = None,
              build_dir: Path | None = None, capture: list[str] | None = None) -> int:
        """Runs one command of a step to its end; its output goes where ours goes (to stderr
        with --json, so that stdout stays JSON, and with --quiet, so that stdout holds the
        night's one final line), or, with ``capture``, its stdout is appended there.
        SIGTERM/Ctrl-C stop it first, then the night."""
        sys.stdout.flush()
        # SIGTERM/SIGINT wait while the child starts: a stop that came in between would leave
        # it running without this night, which could no longer stop it. The child unblocks
        # them before it execs (the night has no threads, so preexec_fn is safe here).
        stops = {signal.SIGTERM, signal.SIGINT}
        signal.pthread_sigmask(signal.SIG_BLOCK, stops)
        try:
            out: Any = (subprocess.PIPE if capture is not None
                        else sys.stderr.fileno() if self.out.as_json or self.out.quiet
                        else None)
            proc = subprocess.Popen(list(argv), cwd=cwd, env=self.child_env(build_dir),
                                    stdin=subprocess.DEVNULL, stdout=out,
                                    text=capture is not None,
                                    pass_fds=(self.lock_fd,),
                                    preexec_fn=lambda: signal.pthread_sigmask(
                                        signal.SIG_UNBLOCK, stops))
        except BaseException:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
            raise
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
            if capture is not None:
                capture.append(proc.communicate()[0] or "")
            return proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise

    def lsmbench(self, *args: str) -> int:
        quiet = ["--quiet"] if self.out.quiet or self.out.as_json else []
        return self.child([sys.executable, "-m", "lsmbench", *args, *quiet])

    def step(self, name: str, what: str, body: Callable[[], str | StepOutcome]) -> StepOutcome:
        t0 = time.monotonic()
        try:
            # Inside the try: a stop that comes once the step is announced is the step's.
            self.out.step_start(name, what)
            result = body()
        except KeyboardInterrupt:
            self.outcomes.append(StepOutcome(step=name, code=EXIT_INTERRUPTED,
                                             detail="interrupted",
                                             seconds=round(time.monotonic() - t0, 1)))
            self.out.step_end(self.outcomes[-1])
            raise
        except StepFailed as e:
            outcome = StepOutcome(step=name, code=e.code, detail=e.detail)
        else:
            outcome = (result if isinstance(result, StepOutcome)
                       else StepOutcome(step=name, code=EXIT_OK, detail=result))
        outcome.seconds = round(time.monotonic() - t0, 1)
        self.outcomes.append(outcome)
        self.out.step_end(outcome)
        return outcome

    # -- the steps -----------------------------------------------------------------------------

    def fetch(self) -> str:
        try:
            self.plan.repo.fetch()
        except GitError as e:
            raise StepFailed(EXIT_ENV, str(e)) from None
        return ""

    def checkout(self) -> str:
        repo = self.plan.repo
        try:
            sha = repo.resolve(self.plan.ref)
        except UnknownRef as e:
            raise StepFailed(EXIT_USAGE, str(e)) from None
        if self.plan.orchestrator_moves:
            self.out.warning(
                f"{repo.root} is the orchestrator's own checkout: checking out "
                f"{sha[:12]} changes the code that measures it too (install the orchestrator "
                "apart from the measured checkout: docs/tracking.md, \"The nightly job\")")
        try:
            repo.checkout(sha)
            if repo.head() != sha:
                raise GitError(f"{repo.root}: HEAD is not {sha} after the checkout")
            self.commit = sha
            return repo.describe(sha)
        except GitError as e:
            raise StepFailed(EXIT_ENV, str(e)) from None

    def run_build_step(self, argv: Sequence[str], cwd: Path, build_dir: Path) -> int:
        return self.child(argv, cwd=cwd, build_dir=build_dir)

    def build(self) -> str:
        p = self.plan
        try:
            return str(build_into(self.run_build_step, p.repo.root, p.build_dir,
                                  p.build_command, self.commit))
        except BuildFailed as e:
            raise StepFailed(e.code, e.detail) from None

    def reference_sha(self) -> str | None:
        """The commit this night is measured against, or None for an unpaired night."""
        p = self.plan
        if p.reference == REFERENCE_NONE:
            return None
        if p.reference == REFERENCE_ACCEPTED:
            if not p.history.is_file():
                return None
            from .changes import accepted_commit
            from .history import HistoryError, open_history

            try:
                with open_history(p.history, create=False) as h:
                    return accepted_commit(h, p.campaign)
            except HistoryError as e:
                raise StepFailed(EXIT_USAGE, f"--reference accepted: {e}") from None
        try:
            return p.repo.resolve(p.reference)
        except UnknownRef as e:
            raise StepFailed(EXIT_USAGE, f"--reference: {e}") from None

    def reference(self) -> str:
        sha = self.reference_sha()
        if sha is None:
            why = ("--reference none" if self.plan.reference == REFERENCE_NONE
                   else "no accepted night yet")
            return f"unpaired ({why})"
        try:
            build_dir, built = build_commit(self.run_build_step, self.plan.repo, sha,
                                            self.plan.reference_builds,
                                            self.plan.build_command)
        except BuildFailed as e:
            raise StepFailed(e.code, e.detail) from None
        made = f"built into {build_dir}" if built else f"built before, {build_dir}"
        self.reference_commit, self.reference_dir = sha, build_dir
        same = " (the night's own commit: an A/A night)" if sha == self.commit else ""
        return f"{self.plan.repo.describe(sha)}{same}; {made}"

    def testbed_up(self) -> str:
        """`testbed status` first: every node must answer -- `up` goes on without an
        unreachable node, but a night without one would leave a gap in that node's series
        and fail the points pinned to it -- so an unreachable node fails the step (exit 3),
        naming it, before anything is deployed, run or recorded. Then `testbed up` (deploys
        the commit's engine where it changed). A testbed whose nodes are known only once it
        is up (terraform, before its first apply) is asked again after `up`."""
        name = self.plan.testbed
        assert name
        rows = self.testbed_nodes(name)
        code = self.lsmbench("testbed", "up", name)
        if code != 0:
            raise StepFailed(code, f"lsmbench testbed up {name} exited {code}")
        if not rows:
            rows = self.testbed_nodes(name)
        self.nodes = [str(r["node"]) for r in rows]
        if len(self.nodes) > 1 and not self.plan.spec_sets_node:
            return (f"{len(self.nodes)} nodes ({', '.join(self.nodes)}): every point runs on "
                    f"each ({NODE_DIMENSION}), a series per node")
        return f"{len(self.nodes)} node(s)" if self.nodes else ""

    def testbed_nodes(self, name: str) -> list[dict[str, Any]]:
        """`lsmbench testbed status NAME --json`'s nodes; StepFailed (exit 3) naming every
        node that does not answer."""
        got: list[str] = []
        code = self.child([sys.executable, "-m", "lsmbench", "testbed", "status", name,
                           "--json"], capture=got)
        try:
            status = json.loads(got[0].strip().splitlines()[-1])
            rows = (status.get("nodes") or []) if status.get("kind") != "local" else []
        except (IndexError, ValueError, AttributeError):
            raise StepFailed(code or EXIT_ENV, f"lsmbench testbed status {name} exited {code} "
                                               "without its JSON") from None
        down = [r for r in rows if not r.get("reachable")]
        if down:
            raise StepFailed(EXIT_ENV, "; ".join(
                f"node {r.get('node')} ({r.get('address')}) of testbed {name} is unreachable: "
                f"{r.get('error') or 'no answer'}" for r in down)
                + " (a night needs every node: each is a series of its own)")
        if code != 0:
            raise StepFailed(code, f"lsmbench testbed status {name} exited {code}")
        return rows

    def run(self) -> StepOutcome:
        p = self.plan
        pairing = []
        if self.reference_dir is not None and self.reference_commit is not None:
            pairing = ["--set", f"pair.reference={self.reference_dir}",
                       "--set", f"pair.commit={self.reference_commit}"]
        nodes = []
        if len(self.nodes) > 1 and not p.spec_sets_node:
            # Every group's repetitions on every node: each node's series is complete.
            nodes = ["--set", f"matrix.{NODE_DIMENSION}={json.dumps(self.nodes)}"]
        code = self.lsmbench("run", str(p.spec), "--force", "--results", str(p.results),
                             *pairing, *nodes)
        if code == 0:
            return StepOutcome(step="run", code=EXIT_OK, detail=str(p.campaign_dir))
        why = {EXIT_FAILED: "a point failed", EXIT_ENV: "the environment cannot run it",
               EXIT_USAGE: "the spec was refused"}.get(code, "")
        return StepOutcome(step="run", code=code,
                           detail=f"lsmbench run exited {code}" + (f": {why}" if why else ""))

    def record(self) -> str:
        p = self.plan
        assert self.commit
        code = self.lsmbench("track", "record", str(p.campaign_dir), "--history", str(p.history),
                             "--commit", self.commit, "--results", str(p.results))
        if code != 0:
            raise StepFailed(code, f"lsmbench track record exited {code}")
        return f"commit {self.commit[:12]} into {p.history}"

    def report(self) -> StepOutcome:
        p = self.plan
        code = self.lsmbench("track", "report", "--history", str(p.history), "--out",
                             str(p.report_dir), "--campaign", p.campaign, "--results",
                             str(p.results))
        if code == EXIT_REGRESSION:
            return StepOutcome(step="report", code=EXIT_REGRESSION, regression=True,
                               detail="an open regression")
        if code != 0:
            raise StepFailed(code, f"lsmbench track report exited {code}")
        return StepOutcome(step="report", code=EXIT_OK, detail=str(p.report_dir))

    def publish(self) -> str:
        p = self.plan
        assert p.publish_url
        # --all: points the spec's own sink already published (to wherever it says) are sent
        # here too; re-sending overwrites, it never duplicates.
        args = ["publish", str(p.campaign_dir), "--to", p.publish_url, "--all"]
        if p.token_env:
            args += ["--token-env", p.token_env]
        if p.token_file:
            args += ["--token-file", p.token_file]
        points_code = self.lsmbench(*args)
        try:
            done = publish_history_to(p)
        except Exception as e:  # the sink's PublishError, a bad report file: this step failed
            raise StepFailed(EXIT_FAILED, f"history and change points: {e}") from None
        if points_code != 0:
            raise StepFailed(EXIT_FAILED, f"lsmbench publish exited {points_code} (the history "
                                          f"and {done.change_points} change points were sent)")
        return (f"points, {done.history_points} history rows and {done.change_points} change "
                f"points to {p.publish_url}")

    # -- the night ---------------------------------------------------------------------------

    def go(self) -> None:
        p = self.plan
        if p.fetch and self.step("fetch", f"git fetch --all --prune in {p.repo.root}",
                                 self.fetch).code:
            return
        if self.step("checkout", f"{p.ref} (detached) in {p.repo.root}", self.checkout).code:
            return
        build_what = (p.build_command if p.build_command
                      else f"cmake Release, targets {' '.join(BUILD_TARGETS)}")
        if self.step("build", f"{build_what} into {p.build_dir}", self.build).code:
            return
        if p.reference != REFERENCE_NONE and p.testbed:
            self.out.warning(f"--testbed {p.testbed}: paired nights run on a local testbed only "
                             "(the nodes run the driver deployed on them); this night is "
                             "unpaired")
        elif p.reference != REFERENCE_NONE and self.step(
                "reference", f"the build to measure against ({p.reference})",
                self.reference).code:
            return
        if p.testbed and self.step("testbed", f"every node of {p.testbed} reachable; lsmbench "
                                              f"testbed up {p.testbed}", self.testbed_up).code:
            return
        ran = self.step("run", f"lsmbench run {p.spec} --force (campaign {p.campaign})",
                        self.run)
        # With a failed point the others still count: they are recorded; anything else
        # (the environment, a refused spec, an interruption) ends the night here.
        if ran.code not in (EXIT_OK, EXIT_FAILED):
            return
        if self.step("record", f"lsmbench track record {p.campaign_dir}", self.record).code:
            return
        reported = self.step("report", f"lsmbench track report --campaign {p.campaign}",
                             self.report)
        if reported.code and not reported.regression:
            return
        if p.publish_url:
            self.step("publish", f"points, history and change points to {p.publish_url}",
                      self.publish)
        if p.bisect and reported.regression:
            if p.testbed:
                self.out.warning(f"--bisect: a bisection runs on this machine, not on the "
                                 f"nodes of {p.testbed}: not started (lsmbench track bisect "
                                 "on a node does it there)")
            else:
                self.step("bisect", "a new open regression, if any: lsmbench track bisect",
                          self.bisect)

    def bisect(self) -> str:
        p = self.plan
        from .history import HistoryError, open_history

        try:
            with open_history(p.history, create=False) as h:
                taken = {b["change_id"] for b in h.bisections()}
        except HistoryError as e:
            raise StepFailed(EXIT_ENV, str(e)) from None
        new = to_bisect(_open_changes(p.report_dir) or [], taken, p.campaign)
        if not new:
            return "every open regression was bisected on an earlier night"
        change_id = str(new[0]["id"])
        args = ["track", "bisect", change_id, "--history", str(p.history), "--repo",
                str(p.repo.root)]
        if p.bisect_threshold is not None:
            args += ["--threshold", str(p.bisect_threshold)]
        if p.build_command:
            args += ["--build-command", p.build_command]
        code = self.lsmbench(*args)
        later = f"; left for the next nights: {', '.join(str(c['id']) for c in new[1:])}" \
            if len(new) > 1 else ""
        if code not in (EXIT_OK, EXIT_FAILED):
            raise StepFailed(code, f"lsmbench track bisect {change_id} exited {code}{later}")
        try:
            with open_history(p.history, create=False) as h:
                done = [b for b in h.bisections() if b["change_id"] == change_id]
        except HistoryError as e:
            raise StepFailed(EXIT_ENV, str(e)) from None
        what = done[-1]["conclusion"] if done else f"exit {code}, nothing kept"
        return f"{change_id}: {what}{later}"


def publish_history_to(plan: NightPlan) -> Any:
    """The report's history and change points to --publish (influx_history)."""
    from ..publish import sink_from_url
    from ..sinks import open_sink
    from .influx_history import publish_history

    assert plan.publish_url
    base = _stored_sink(plan)
    sink_spec = sink_from_url(plan.publish_url, base, token_env=plan.token_env,
                              token_file=plan.token_file)
    return publish_history(open_sink(sink_spec), plan.report_dir, [plan.campaign])


def _stored_sink(plan: NightPlan) -> Any:
    """The campaign's own sink section (user, token_env, ...), as `lsmbench publish` uses."""
    from ..publish import stored_section
    from ..store import Store

    return stored_section((Store(plan.results).read_campaign(plan.campaign) or {}).get("spec")
                          or {})


def to_bisect(opened: Sequence[dict[str, Any]], taken: set[str], campaign: str
              ) -> list[dict[str, Any]]:
    """The campaign's open regressions no bisection has taken up, the one to bisect first:
    paired ones first (a ratio against a known-good build is what a step measures), then the
    largest change."""
    new = [c for c in opened
           if c.get("campaign") == campaign and c.get("direction") == "regression"
           and c.get("id") not in taken]
    return sorted(new, key=lambda c: (c.get("kind") != "paired",
                                      -abs(float(c.get("change") or 0.0))))


def _open_changes(report_dir: Path) -> list[dict[str, Any]] | None:
    """regressions.json's open changes as the report wrote them (None: unreadable)."""
    try:
        data = json.loads((report_dir / "regressions.json").read_text())
        opened = data["open"]
        return opened if all(isinstance(c, dict) for c in opened) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _open_regressions(report_dir: Path) -> tuple[int | None, list[dict[str, Any]]]:
    """The report's open regressions: how many, and each one's id, series and nodes."""
    opened = _open_changes(report_dir)
    if opened is None:
        return None, []
    return len(opened), [{k: c.get(k) for k in ("id", "campaign", "group", "metric", "change")}
                         | {"nodes": c.get("nodes") or []} for c in opened]


# ------------------------------------------------------------------------------------ command


def cmd_nightly(args: argparse.Namespace) -> int:
    out = NightOutput(as_json=args.json, quiet=args.quiet)
    try:
        plan = plan_night(args)
    except UsageError as e:
        out.error(str(e))
        return EXIT_USAGE
    for name in _BINARY_OVERRIDES:
        if os.environ.get(name):
            out.warning(f"${name} is ignored: the night runs the binaries it builds")
    summary = NightSummary(exit=EXIT_OK, campaign=plan.campaign, ref=plan.ref,
                           report_dir=str(plan.report_dir))
    try:
        with night_lock(plan.lock) as fd:
            out.step_start("lock", f"{plan.lock} (held until the night ends)")
            night = Night(plan, out, fd)
            try:
                night.go()
                summary.exit = final_exit_code(night.outcomes)
            except KeyboardInterrupt:
                summary.exit = EXIT_INTERRUPTED
                out.error("interrupted; the step that was running was stopped")
            summary.commit = night.commit
            summary.steps = night.outcomes
            if any(s.step == "report" for s in night.outcomes):
                summary.open_regressions, summary.regressions = _open_regressions(
                    plan.report_dir)
    except LockHeld as e:
        why = f"{e}: another night is running; this one does not wait for it"
        out.error(why)
        summary.exit = EXIT_ENV
        summary.steps = [StepOutcome(step="lock", code=EXIT_ENV, detail=why)]
    out.end(summary)
    return summary.exit
