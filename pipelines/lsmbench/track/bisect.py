"""`lsmbench track bisect CHANGE_ID`: the commit that made a regression (docs/tracking.md,
"Bisection").

The change names a commit range: the last good commit (the run before a series' change point,
or a paired regression's reference) and the first bad one. Each step builds a commit of the
range and runs the change's campaign, restricted to the change's group, as a paired A/B
comparison against the range's first commit (spec ``pair:``, both builds interleaved on this
machine), and bisects on the paired ratio of the change's metric
(lsmbench.track.paired.classify, the interval with the spread pooled over the history's paired
nights and the step's pairs, as the nightly detector judges a night): "worse" moves the bad end
down, "not-worse" the good end up.
A step whose interval straddles the boundary adds as many pairs again (the ones it has are
kept: the step's campaign goes on with ``lsmbench run --resume``), up to ``--max-repetitions``,
then stops and says so instead of guessing. A commit that does not build
is skipped, as ``git bisect skip`` does: the next untested commit nearest the middle is tried,
and when only skipped commits are left between the ends the answer is that range.

A commit whose build is one already judged -- the same engines/ tree as the good commit, the
bad one or a commit a step measured (builds.build_key) -- takes that judgement without a run:
its step would run the same binaries again, and an A/A comparison at a 5 % boundary is the
most expensive a bisection has (the interval must clear the boundary on the good side,
research/nightly-tracking.md). A range of docs and pipelines commits around one
engine change is named without measuring anything.

The boundary: halfway between 1 and the regression as the nights measured it against the
range's good commit (:func:`regression_size`, their pairs pooled), the point as far from
"like the good commit" as from "like the bad one"; ``--threshold`` sets it instead, and is
the fallback when no night measured the regression against the good commit (a series
change, or ``--range`` with another good commit).

:func:`bisect_commits` is the search over any comparison (pure); :func:`cmd_bisect` builds,
runs and records. Every step is kept in the history (``bisect_steps``) and printed.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from ..util.exits import EXIT_ENV, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from ..util.paths import project_root
from .builds import BuildFailed, build_commit, build_key
from .changes import Change, find_changes
from .gitrepo import GitError, GitRepo, UnknownRef
from .history import (
    DEFAULT_THRESHOLD,
    METRIC_BY_NAME,
    History,
    HistoryError,
    PairedValue,
    history_path,
    open_history,
)
from .paired import PairedRatio, PooledSpread, classify, paired_ratio, worse_boundary

Decision = Literal["worse", "not-worse", "undecided", "skipped"]
DEFAULT_REPETITIONS = 3
DEFAULT_MAX_REPETITIONS = 24


class BisectStep(BaseModel):
    """One comparison of a commit against the range's first."""

    step: int
    commit: str
    decision: Decision
    repetitions: int  # pairs asked for
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    n: int | None = None  # pairs measured
    detail: str = ""
    # the commit whose build (and judgement) this one shares: nothing was measured
    same_build_as: str | None = None


class BisectResult(BaseModel):
    change_id: str
    campaign: str
    group: str
    metric: str
    good: str
    bad: str
    commits: list[str]  # the range after good, oldest first; the last is bad
    steps: list[BisectStep]
    first_bad: str | None  # the commit that made it, when one is named
    # the commits it is among when skips or an undecided step left more than one
    suspects: list[str]
    conclusion: str
    threshold: float | None = None  # the regression looked for (the boundary is halfway)
    threshold_source: str = ""  # where that figure came from
    comparisons: int | None = None  # commits measured (paired comparisons run)


class Comparison(BaseModel):
    """What a step measured: the paired ratio, or why there is none."""

    ratio: PairedRatio | None = None
    skipped: str | None = None  # the commit does not build (or its run failed): why


Compare = Callable[[str, int], Comparison]


def _next_index(lo: int, hi: int, skipped: set[int]) -> int | None:
    """The untested index strictly between lo and hi nearest their middle (ties: the lower)."""
    mid = (lo + hi) // 2
    for offset in range(hi - lo):
        for i in (mid - offset, mid + offset):
            if lo < i < hi and i not in skipped:
                return i
    return None


def bisect_commits(commits: Sequence[str], compare: Compare, *, better: str, threshold: float,
                   repetitions: int = DEFAULT_REPETITIONS,
                   max_repetitions: int = DEFAULT_MAX_REPETITIONS,
                   on_step: Callable[[BisectStep], None] | None = None,
                   build_of: Callable[[str], str] | None = None, good: str | None = None,
                   ) -> tuple[list[BisectStep], int | None, list[str], str]:
    """Bisects ``commits`` (oldest first; the good commit before them is the reference, the
    last of them is known bad): (the steps, the index of the first bad commit or None, the
    suspects, the conclusion in words). ``build_of``: a commit's build (commits with one
    build share a judgement: the good commit's is not-worse, the last commit's worse)."""
    lo, hi = -1, len(commits) - 1  # commits[lo] good (-1: the reference), commits[hi] bad
    skipped: set[int] = set()
    steps: list[BisectStep] = []
    judged: dict[str, tuple[Decision, str]] = {}  # build -> (its judgement, the commit judged)
    if build_of is not None:
        if good is not None:
            judged[build_of(good)] = ("not-worse", good)
            if build_of(commits[-1]) in judged:
                return [], None, list(commits), (
                    f"no engine change to bisect: the good commit {good[:12]} and the bad one "
                    f"{commits[-1][:12]} have the same build (the same engines/ tree), so what "
                    "changed was not the engine -- the testbed, the orchestrator, or noise")
        judged[build_of(commits[-1])] = ("worse", commits[-1])

    def record(step: BisectStep) -> None:
        steps.append(step)
        if on_step is not None:
            on_step(step)

    while True:
        i = _next_index(lo, hi, skipped)
        if i is None:
            break
        build = build_of(commits[i]) if build_of is not None else None
        if build is not None and build in judged:
            known, judged_at = judged[build]
            why = "which does not build" if known == "skipped" else "nothing to measure"
            record(BisectStep(step=len(steps) + 1, commit=commits[i], decision=known,
                              repetitions=0, same_build_as=judged_at,
                              detail=f"the same build as {judged_at[:12]}: {why}"))
            if known == "worse":
                hi = i
            elif known == "not-worse":
                lo = i
            else:
                skipped.add(i)
            continue
        reps = repetitions
        while True:
            got = compare(commits[i], reps)
            if got.ratio is None:
                record(BisectStep(step=len(steps) + 1, commit=commits[i], decision="skipped",
                                  repetitions=reps, detail=got.skipped or "no ratio"))
                skipped.add(i)
                if build is not None:
                    judged[build] = ("skipped", commits[i])
                break
            r = got.ratio
            decision = classify(r, better, threshold)  # type: ignore[arg-type]
            record(BisectStep(step=len(steps) + 1, commit=commits[i], decision=decision,
                              repetitions=reps, ratio=r.ratio, low=r.low, high=r.high, n=r.n))
            if decision != "undecided" and build is not None:
                judged[build] = (decision, commits[i])
            if decision == "worse":
                hi = i
            elif decision == "not-worse":
                lo = i
            elif reps * 2 <= max_repetitions:
                reps *= 2
                continue
            else:
                suspects = list(commits[lo + 1:hi + 1])
                return steps, None, suspects, (
                    f"undecided at {commits[i][:12]}: its ratio's interval "
                    f"[{r.low:.3f}, {r.high:.3f}] straddles the boundary after {r.n} pairs "
                    f"(--max-repetitions {max_repetitions}); the regression is among "
                    f"{len(suspects)} commit(s) from {suspects[0][:12]} to {suspects[-1][:12]}")
            break
    suspects = [c for k, c in enumerate(commits) if lo < k <= hi]
    if len(suspects) == 1:
        return steps, hi, suspects, f"{commits[hi][:12]} is the first worse commit"
    return steps, None, suspects, (
        f"the first worse commit is among {len(suspects)}: {', '.join(c[:12] for c in suspects)}"
        " (the others between do not build)")


# ---------------------------------------------------------------- building and running


class BisectError(ValueError):
    """Bad input (exit 2): the message names it."""


def _change(h: History, change_id: str) -> Change:
    changes = {c.id: c for c in find_changes(h).changes}
    change = changes.get(change_id)
    if change is None:
        raise BisectError(f"no change with id {change_id!r} in {h.path} (lsmbench track "
                          f"report lists them; known: {', '.join(sorted(changes)) or 'none'})")
    if change.direction != "regression":
        raise BisectError(f"{change_id} is an improvement: bisection looks for a regression")
    if not change.commit_before or not change.commit_after:
        raise BisectError(f"{change_id}: its runs do not say which commits they measured")
    return change


def _series_nights(h: History, change: Change) -> list[PairedValue]:
    """The paired nights of the change's series: its campaign, group and metric, on the same
    testbed (its noise) with the same spec (its segment), each with its pairs."""
    runs = {r.run_id: r for r in h.runs(change.campaign)}
    return [v for v in h.paired_values(change.campaign)
            if (v.group, v.metric, runs[v.run_id].testbed_key, runs[v.run_id].spec_hash) == (
                change.group, change.metric, change.testbed_key, change.spec_hash) and v.pairs]


def nights_spread(h: History, change: Change) -> PooledSpread:
    """The spread of a pair's log ratio of the change's group and metric, pooled over the
    history's paired nights of its campaign (empty without any: a change of an unpaired
    series). The nightly detector judges a night with it; a step's 3 pairs alone give a t
    with 2 degrees of freedom, an interval no 5 % boundary fits in."""
    pool = PooledSpread()
    for v in _series_nights(h, change):
        if len(v.pairs or []) >= 2:
            pool.add(v.pairs or [])
    return pool


def regression_size(h: History, change: Change, good: str, better: str) -> tuple[float, int] | None:
    """The regression as the nights measured it against ``good``'s build: (its size, relative,
    in the worse direction; the pairs behind it), the geometric mean of every pair of the
    change's series measured at or after the change's first night against that commit. None
    when no night did (a series change, another good commit) or they point the better way."""
    pairs = [pair for v in _series_nights(h, change)
             if v.run_id >= change.run_id and v.reference_commit == good
             for pair in v.pairs or []]
    if len(pairs) < 2:
        return None
    ratio = paired_ratio(pairs).ratio
    size = 1.0 - ratio if better == "higher" else ratio - 1.0
    return (size, len(pairs)) if 0.0 < size < 1.0 else None


def _campaign_spec(h: History, change: Change) -> dict[str, Any]:
    """The change's campaign spec as it was run (campaign.json of the change's run), its matrix
    restricted to the change's group, without its own pairing."""
    run = next(r for r in h.runs() if r.run_id == change.run_id)
    meta_path = Path(run.results_dir) / "campaign.json"
    try:
        spec = json.loads(meta_path.read_text())["spec"]
    except (OSError, ValueError, KeyError) as e:
        raise BisectError(f"{meta_path}: the change's campaign is not readable ({e})") from None
    spec.pop("pair", None)
    matrix = spec.get("matrix") or {}
    wanted = dict(part.split("=", 1) for part in change.group.split(",") if "=" in part)
    from ..points import short_names, slug

    names = short_names({k: None for k in matrix if not isinstance(matrix[k], dict)})
    for dim, short in names.items():
        values = matrix.get(dim)
        if short in wanted and isinstance(values, list):
            matrix[dim] = [v for v in values if slug(v) == wanted[short]] or values
    spec["matrix"] = matrix
    return spec


def step_spec(spec: dict[str, Any], name: str, repetitions: int, reference: Path, good: str,
              phase: str) -> dict[str, Any]:
    """A step's campaign: the change's, paired with the good commit's build, ``repetitions``
    pairs; without its running phase when the metric is the testing phase's (``phase``):
    nothing after the testing phase decides the step, and the running phase is about half of a
    point's measuring (nightly.yaml: 28 s of 60)."""
    out = {**spec, "name": name, "matrix": {**spec["matrix"], "repetitions": repetitions},
           "pair": {"reference": str(reference), "commit": good}}
    if phase == "testing":
        phases = spec.get("phases") or {}
        out["phases"] = {**phases, "running": {**(phases.get("running") or {}), "enabled": False}}
    return out


def commit_range(repo: GitRepo, good: str, bad: str) -> list[str]:
    """The commits after good up to bad, oldest first (the ancestry path: merges' side
    branches that do not lead to bad are left out)."""
    try:
        out = repo.rev_list(f"{good}..{bad}", ancestry_path=True)
    except GitError as e:
        raise BisectError(str(e)) from None
    commits = list(reversed(out))
    if not commits or commits[-1] != repo.resolve(bad):
        raise BisectError(f"{bad[:12]} does not descend from {good[:12]}: no range to bisect")
    return commits


def check_settings(threshold: float | None, repetitions: int, max_repetitions: int,
                   range_: str | None = None) -> str | None:
    """What is wrong with a bisection's settings (None: nothing), naming the option."""
    if range_ is not None and (range_.count("..") != 1 or range_.startswith("..")
                               or range_.endswith("..") or "..." in range_):
        return f"--range {range_}: expected GOOD..BAD (two commits or tags)"
    if threshold is not None and not 0 < threshold < 1:
        return f"--threshold {threshold:g}: expected a fraction between 0 and 1 (0.05: 5 %)"
    if repetitions < 2:
        return f"--repetitions {repetitions}: a paired ratio needs 2 pairs or more"
    if max_repetitions < repetitions:
        return (f"--max-repetitions {max_repetitions}: expected at least --repetitions "
                f"({repetitions})")
    return None


def cmd_bisect(args: argparse.Namespace) -> int:
    path = history_path(args)
    wrong = check_settings(args.threshold, args.repetitions, args.max_repetitions, args.range)
    if wrong:
        print(f"lsmbench track bisect: {wrong}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with open_history(path, create=False) as h:
            change = _change(h, args.change_id)
            spec = _campaign_spec(h, change)
            nights = nights_spread(h, change)
            repo = GitRepo.open(Path(args.repo).absolute() if args.repo else project_root())
            ends = args.range.split("..") if args.range else [change.commit_before,
                                                               change.commit_after]
            try:
                good, bad = repo.resolve(ends[0]), repo.resolve(ends[1])
            except UnknownRef as e:
                raise BisectError(f"--repo {repo.root}: {e}") from None
            metric = METRIC_BY_NAME[change.metric]
            measured = regression_size(h, change, good, metric.better)
        commits = commit_range(repo, good, bad)
    except (BisectError, HistoryError, GitError) as e:
        print(f"lsmbench track bisect: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.threshold is not None:
        threshold, source = args.threshold, "--threshold"
    elif measured is not None:
        threshold, source = measured[0], (f"the regression the nights measured against "
                                          f"{good[:12]} ({measured[1]} pairs)")
    else:
        threshold, source = DEFAULT_THRESHOLD, (f"the default: no night measured the "
                                                f"regression against {good[:12]}")
    work = Path(args.work).absolute() if args.work else path.parent / f"bisect-{change.id}"
    builds = work / "builds"
    quiet = args.quiet or args.json

    def say(text: str) -> None:
        if not quiet:
            print(text, flush=True)

    def run(argv: Sequence[str], cwd: Path, build_dir: Path) -> int:
        import os

        env = {**os.environ, "LSMBENCH_BUILD_DIR": str(build_dir)}
        env.pop("LSMBENCH_DRIVER", None)
        # The steps' own output goes to file descriptor 2, stdout stays this command's (--json).
        return subprocess.run(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              stdout=2, check=False).returncode

    def build(sha: str) -> Path:
        build_dir, _ = build_commit(run, repo, sha, builds, args.build_command)
        return build_dir

    try:
        reference = build(good)
    except BuildFailed as e:
        print(f"lsmbench track bisect: the range's first commit {good[:12]} does not build: "
              f"{e.detail}", file=sys.stderr)
        return EXIT_FAILED if e.code == EXIT_FAILED else EXIT_ENV
    say(f"bisecting {change.id}: {change.metric} of {change.group} ({change.campaign}), "
        f"{len(commits)} commit(s) after {good[:12]} up to {bad[:12]}, each against "
        f"{good[:12]}; looking for a {threshold:.1%} regression ({source}): a commit is worse "
        f"when its interval is past {worse_boundary(metric.better, threshold):.3f}")

    def compare(sha: str, repetitions: int) -> Comparison:
        from .record import campaign_run

        try:
            candidate = build(sha)
        except BuildFailed as e:
            if e.code == EXIT_ENV:  # git or the tools, not the commit: nothing would build
                raise
            return Comparison(skipped=e.detail)
        # One campaign per commit: a step that adds pairs resumes it (a point's configuration
        # does not hold the repetitions' count, so the pairs it has stay complete).
        name = f"{change.campaign}-bisect-{sha[:12]}"[:80]
        more = repetitions > args.repetitions
        spec_path = work / f"{name}.yaml"
        spec_path.write_text(yaml.safe_dump(step_spec(spec, name, repetitions, reference, good,
                                                      metric.phase)))
        code = run([sys.executable, "-m", "lsmbench", "run", str(spec_path),
                    "--resume" if more else "--force", "--results", str(work / "results"),
                    "--quiet"], project_root(), candidate)
        if code not in (EXIT_OK, EXIT_FAILED):
            return Comparison(skipped=f"lsmbench run exited {code}")
        try:
            paired = campaign_run(work / "results" / name, sha).paired
        except HistoryError as e:
            return Comparison(skipped=str(e))
        got = next((v for v in paired if v["metric"] == change.metric), None)
        if got is None:
            return Comparison(skipped=f"no paired {change.metric} (fewer than 2 pairs)")
        # Judged with the testbed's spread: the nights' pooled with this step's own.
        return Comparison(ratio=paired_ratio(got["pairs"], **nights.plus(got["pairs"]).given()))

    def show(step: BisectStep) -> None:
        if step.same_build_as is not None:
            say(f"  step {step.step}: {step.commit[:12]} -> {step.decision}: {step.detail}")
        elif step.ratio is None:
            say(f"  step {step.step}: {step.commit[:12]} skipped: {step.detail}")
        else:
            say(f"  step {step.step}: {step.commit[:12]} x{step.repetitions}: ratio "
                f"{step.ratio:.3f} [{step.low:.3f}, {step.high:.3f}] -> {step.decision}")

    try:
        steps, first_bad, suspects, conclusion = bisect_commits(
            commits, compare, better=metric.better, threshold=threshold,
            repetitions=args.repetitions, max_repetitions=args.max_repetitions, on_step=show,
            build_of=functools.cache(lambda sha: build_key(repo, sha, args.build_command)),
            good=good)
    except BuildFailed as e:
        print(f"lsmbench track bisect: {e.detail}", file=sys.stderr)
        return EXIT_ENV
    except GitError as e:
        print(f"lsmbench track bisect: {e}", file=sys.stderr)
        return EXIT_ENV
    measured_commits = len({s.commit for s in steps
                            if s.same_build_as is None and s.decision != "skipped"})
    conclusion += (f" ({measured_commits} paired comparison(s); "
                   f"{sum(s.same_build_as is not None for s in steps)} commit(s) judged by "
                   f"their build alone)")
    result = BisectResult(change_id=change.id, campaign=change.campaign, group=change.group,
                          metric=change.metric, good=good, bad=bad, commits=commits,
                          steps=steps,
                          first_bad=commits[first_bad] if first_bad is not None else None,
                          suspects=suspects, conclusion=conclusion, threshold=threshold,
                          threshold_source=source, comparisons=measured_commits)
    with open_history(path) as h:
        h.add_bisection(result.model_dump())
    if args.json:
        print(json.dumps(result.model_dump(), indent=2))
    else:
        print(conclusion if not args.quiet else conclusion.split(":")[0])
    return EXIT_OK if result.first_bad is not None else EXIT_FAILED

