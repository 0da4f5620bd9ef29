"""``lsmbench tune``: an Optuna study whose trials are points of the campaign machinery.

* The sampler is Optuna's TPE (multivariate, seeded, with ``constraints_func`` when the spec
  has constraints); the study lives in ``RESULTS/CAMPAIGN/tune.sqlite3`` (RDBStorage), so it
  resumes (``--resume``) and optuna-dashboard can open it.
* The first trial is the spec's own configuration (engine.options, else the engine's
  defaults), enqueued.
* A trial is one point -- load, testing, running or search -- run and stored like any point:
  its id is its parameters and its repetition (a configuration asked for twice is measured
  twice, as rep 0 and rep 1), so ``ls``, ``report``, ``publish`` and ``track`` work on it.
* Pruning: the testing maximum is reported as the trial's intermediate value; when it shows
  that the trial cannot beat the best feasible result so far (its search could at best reach
  ``high`` x the maximum), the running phases are skipped and the trial is PRUNED.
* A trial killed with the process (RUNNING in the study) is redone on ``--resume``: marked
  FAIL and its parameters enqueued again -- unless its point was stored complete before the
  kill, which is then told to the study as it is.
* Confirmation: the best ``confirm.top`` configurations, and the spec's own, run
  ``confirm.repetitions`` fresh repetitions; the answer is the one whose interval's
  pessimistic end is best (the lower end for a maximum), judged on those repetitions only:
  the trial that put a configuration on top is not evidence for it (the winner's curse).
"""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..campaign import (
    CampaignSession,
    LockedReporter,
    RunOptions,
    campaign_errors,
    existing_points,
    node_attempt,
    run_distributed,
)
from ..engine_options import option_string
from ..fingerprint import testbed_identity, testbed_key, unlike_nodes
from ..method.groups import judge_group, repetition_from_store
from ..method.stats import median_ci
from ..plan import Plan, build_plan
from ..point_pipeline import RunningChoice
from ..points import Point, group_id, point_id
from ..progress import Reporter
from ..results.tuning import (
    RESULT_FILE,
    STUDY_FILE,
    Best,
    Confirmed,
    TrialRow,
    TuneResult,
    import_optuna,
)
from ..spec import LoadedSpec
from ..spec.tune import Bound, TuneSpec
from ..spec.tune_domains import default_value, resolve_domains
from ..store import STATE_COMPLETE, Store, write_json_atomic
from ..testbeds import TestbedError
from ..testbeds.distribute import Attempt, Job, distribute
from ..util.digest import canonical_hash
from .metrics import direction, metric_value, violations


class TuneError(RuntimeError):
    """The study cannot start or go on (nothing was lost)."""


def _redone(attrs: dict[str, Any]) -> bool:
    """A trial failed by the process's end or by its node, whose parameters were enqueued
    again: not one of the study's trials as far as counting goes."""
    return bool(attrs.get("interrupted") or attrs.get("node_failed"))


@dataclass
class _Slot:
    """One trial still to run on some node: asked from the study when a node takes it; after
    its node failed it, the failed trial's parameters to run again."""

    number: int
    redo: dict[str, Any] | None = None
    redo_of: int | None = None


def study_path(store: Store, campaign: str) -> Path:
    return store.campaign_dir(campaign) / STUDY_FILE


def study_fingerprint(loaded: LoadedSpec) -> str:
    """What decides the trials' measurements and the search: a resumed study must have the
    same (more trials, other confirmation and sinks may change)."""
    raw = copy.deepcopy(loaded.raw)
    raw.pop("sinks", None)
    raw.pop("description", None)
    tune = raw.get("tune") or {}
    for k in ("trials", "confirm"):
        tune.pop(k, None)
    return canonical_hash(raw, 16)


class Tuner:
    """One `lsmbench tune` run over a (new or resumed) study."""

    def __init__(self, loaded: LoadedSpec, store: Store, reporter: Reporter,
                 options: RunOptions) -> None:
        self.loaded = loaded
        self.spec = loaded.spec
        assert self.spec.tune is not None
        self.tune: TuneSpec = self.spec.tune
        self.store = store
        self.reporter = reporter
        self.options = options
        self.domains, errors = resolve_domains(self.spec)
        if errors:  # validate_raw reports them first; here only by misuse
            raise TuneError("; ".join(f"{p}: {m}" for p, m in errors))
        self.objectives = self.tune.objectives()
        self.directions = [direction(o) for o in self.objectives]
        self.bounds: list[Bound] = self.tune.bounds()
        self.optuna = import_optuna()
        self.plan: Plan = build_plan(loaded)
        self.plan.points = []
        self.plan.resolved = {}
        # The study, the plan and the session's counts, between the nodes' threads.
        self.lock = threading.RLock()
        self.parallel = False

    # -- the study ------------------------------------------------------------------------

    def _constraints(self, frozen: Any) -> list[float]:
        stored = frozen.user_attrs.get("constraints")
        return list(stored) if stored else [0.0] * len(self.bounds)

    def _sampler(self, trials_so_far: int, parallel: bool = False) -> Any:
        # In parallel, a running trial counts as a poor result for the trials asked meanwhile
        # (TPE's constant liar): the nodes do not all try the same region at once.
        return self.optuna.samplers.TPESampler(
            seed=self.tune.seed + trials_so_far, multivariate=True,
            n_startup_trials=self.tune.n_startup_trials(),
            constraints_func=self._constraints if self.bounds else None,
            constant_liar=parallel)

    def _open_study(self) -> Any:
        optuna = self.optuna
        path = study_path(self.store, self.spec.name)
        if self.options.force:
            path.unlink(missing_ok=True)
        elif path.exists() and not self.options.resume:
            raise TuneError(f"{path} holds a study already: pass --resume to go on with it, "
                            "or --force to discard it and its points")
        path.parent.mkdir(parents=True, exist_ok=True)
        storage = optuna.storages.RDBStorage(
            f"sqlite:///{path}", engine_kwargs={"connect_args": {"timeout": 30}})
        study = optuna.create_study(study_name=self.spec.name, storage=storage,
                                    sampler=self._sampler(0), directions=self.directions,
                                    load_if_exists=True)
        # A resumed study's sampler is seeded anew from the trials so far: the seed alone
        # would replay the random startup trials it already ran.
        study.sampler = self._sampler(len(study.get_trials(deepcopy=False)))
        fingerprint = study_fingerprint(self.loaded)
        stored = study.user_attrs.get("spec_fingerprint")
        if stored is None:
            study.set_user_attr("spec_fingerprint", fingerprint)
            study.set_user_attr("objectives", self.objectives)
        elif stored != fingerprint:
            raise TuneError(
                f"{path}: the spec changed since the study began (only tune.trials, "
                "tune.confirm and sinks may change for --resume): run with --force to start "
                "over, or under another campaign name")
        self.storage = storage
        return study

    def _recover(self, study: Any) -> None:
        """Trials left RUNNING by a killed process: told as stored, or redone."""
        TrialState = self.optuna.trial.TrialState
        for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            pid = t.user_attrs.get("point")
            rec = self.store.point(self.spec.name, pid) if pid else None
            if rec is not None and rec.state == STATE_COMPLETE:
                self.reporter.message(f"trial {t.number}: its point {pid} was stored before "
                                      "the interruption; told to the study as it is")
                self._tell(study, t.number, t._trial_id, rec.point_id)
                continue
            self.storage.set_trial_user_attr(t._trial_id, "interrupted", True)
            self.storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
            study.enqueue_trial(dict(t.params), user_attrs={"redo_of": t.number})
            self.reporter.message(f"trial {t.number} was interrupted: it is run again")

    def _enqueue_defaults(self, study: Any) -> None:
        """The first trial: the spec's own configuration (defaults resolved: a size_ratio of
        0 is the policy's default). Labelled the spec's own only when it is exactly that: a
        value outside its domain is sampled instead, and that trial is then an ordinary one."""
        if study.get_trials(deepcopy=False):
            return
        params: dict[str, Any] = {}
        outside: list[str] = []
        for name, dom in self.domains.items():
            value = default_value(self.spec, dom)
            if value is None or not dom.contains(value):
                shown = "unknown" if value is None else option_string(value)
                outside.append(f"{name} ({shown}) is outside its domain {dom.describe()}")
                continue
            params[name] = value
        if outside:
            self.reporter.message(
                f"the spec's own {'; '.join(outside)}: the first trial samples "
                f"{'it' if len(outside) == 1 else 'them'} and is not the spec's own "
                "configuration", "warning")
        if params:
            study.enqueue_trial(params, user_attrs={"defaults": not outside})

    def _finished(self, study: Any) -> int:
        TrialState = self.optuna.trial.TrialState
        return sum(1 for t in study.get_trials(deepcopy=False)
                   if t.state in (TrialState.COMPLETE, TrialState.PRUNED)
                   or (t.state == TrialState.FAIL and not _redone(t.user_attrs)))

    def _best_feasible(self, study: Any) -> tuple[float, int] | None:
        """The best single-objective value of a complete trial that met every constraint."""
        TrialState = self.optuna.trial.TrialState
        best: tuple[float, int] | None = None
        sign = 1.0 if self.directions[0] == "maximize" else -1.0
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            if any(c > 0 for c in self._constraints(t)) or t.value is None:
                continue
            if best is None or sign * t.value > sign * best[0]:
                best = (float(t.value), t.number)
        return best

    # -- one trial ------------------------------------------------------------------------

    def _ordered(self, params: dict[str, Any]) -> dict[str, Any]:
        """A trial's parameters in the spec's order (a point's id and group follow it)."""
        return {k: params[k] for k in self.domains if k in params}

    def _next_rep(self, params: dict[str, Any]) -> int:
        gid = group_id(params)
        reps = [p.rep for p in self.plan.points if group_id(p.params) == gid]
        return max(reps) + 1 if reps else 0

    def _point(self, params: dict[str, Any]) -> Point:
        rep = self._next_rep(params)
        index = max((p.index for p in self.plan.points), default=-1) + 1
        return Point(index=index, id=point_id(params, rep), params=params,
                     rep=rep, seed=rep + 1)

    def _after_testing(self, study: Any, trial: Any) -> Any:
        single = len(self.objectives) == 1
        objective = self.objectives[0]

        def decide(max_tp: float) -> RunningChoice | None:
            with self.lock:  # other nodes' trials tell the study meanwhile
                return decide_locked(max_tp)

        def decide_locked(max_tp: float) -> RunningChoice | None:
            trial.set_user_attr("max_write_throughput", max_tp)
            if single:
                trial.report(max_tp, step=0)
            rate = self.tune.rate
            choice = RunningChoice(utilization=rate / max_tp) if rate else None
            best = self._best_feasible(study) if (self.tune.prune and single) else None
            if best is None:
                return choice
            search = self.spec.phases.running.search
            bound: float | None = None
            if objective == "max_sustainable_rate" and search is not None:
                bound, how = search.high * max_tp, f"{search.high:g} x its testing maximum"
            elif objective == "max_write_throughput":
                bound, how = max_tp, "its testing maximum"
            if bound is not None and bound <= best[0]:
                return RunningChoice(skip=(
                    f"pruned: {how} ({bound:,.0f} writes/s) cannot beat the best feasible "
                    f"{objective} so far ({best[0]:,.0f} writes/s, trial {best[1]})"))
            return choice

        return decide

    def _tell(self, study: Any, number: int, trial_id: int, pid: str) -> None:
        TrialState = self.optuna.trial.TrialState
        rec = self.store.point(self.spec.name, pid)
        if rec is None or rec.state != STATE_COMPLETE:
            why = (rec.data.get("error") or {}).get("message") if rec is not None else None
            self.storage.set_trial_user_attr(trial_id, "note", f"point failed: {why}")
            study.tell(number, state=TrialState.FAIL)
            return
        mt = (rec.data.get("max_throughput") or {}).get("writes_per_s")
        if mt is not None:
            self.storage.set_trial_user_attr(trial_id, "max_write_throughput", mt)
        if rec.data.get("skipped_running"):
            if len(self.objectives) == 1 and mt is not None:
                self.storage.set_trial_intermediate_value(trial_id, 0, float(mt))
            self.storage.set_trial_user_attr(trial_id, "note", rec.data["skipped_running"])
            study.tell(number, state=TrialState.PRUNED)
            return
        rep = repetition_from_store(rec)
        values = [metric_value(rep, o) for o in self.objectives]
        if any(v is None for v in values):
            missing = [o for o, v in zip(self.objectives, values, strict=True) if v is None]
            self.storage.set_trial_user_attr(trial_id, "note",
                                             f"not measured: {', '.join(missing)}")
            study.tell(number, state=TrialState.FAIL)
            return
        self.storage.set_trial_user_attr(trial_id, "verdict", rep.verdict)
        if self.bounds:
            self.storage.set_trial_user_attr(trial_id, "constraints",
                                             violations(rep, self.bounds))
        study.tell(number, values if len(values) > 1 else values[0])

    def _run_trial(self, study: Any, session: CampaignSession, n: int, total: int) -> None:
        trial = study.ask()
        params = {name: dom.suggest(trial) for name, dom in self.domains.items()}
        point = self._point(params)
        trial.set_user_attr("point", point.id)
        node = session.node if session.remote else None
        if node is not None:  # the report's trial table names it (one node: every trial)
            trial.set_user_attr("node", node.name)
        session.add_point(point)
        session.run_point(point, n, total, after_testing=self._after_testing(study, trial),
                          extra={"tune": {"trial": trial.number}}, node=node)
        self._tell(study, trial.number, trial._trial_id, point.id)

    # -- several nodes ------------------------------------------------------------------

    def _check_nodes(self, study: Any, session: CampaignSession, nodes: list[Any]) -> None:
        """The trials of a study compare their results, so they run on alike nodes only: one
        testbed key (lsmbench.fingerprint.testbed_key: hardware, kernel, disk, file system,
        throttle) for the nodes, and the key the study's earlier trials ran with."""
        if session.remote and getattr(self.spec.testbed, "node", None) is None:
            # A node that did not answer at the start (the testbed runs without it): a study
            # would run on a testbed other than the one named, so it does not start.
            every = [h.name for h in session.testbed.chosen(session.testbed.hosts())]
            missing = [n for n in every if n not in {x.name for x in session.nodes}]
            if missing:
                raise TuneError(
                    f"{session.testbed.describe()}: node {', '.join(missing)} did not answer "
                    "at the start; bring it back, or name the nodes to use "
                    "(testbed.nodes of a named testbed)")
        throttle = self.loaded.raw.get("throttle")
        identities: dict[str, dict[str, Any]] = {}
        for node in nodes:
            try:
                fp = session.testbed.fingerprint(node, node.data_root, "")
            except (TestbedError, OSError, ValueError) as e:
                raise TuneError(f"node {node.name}: its fingerprint could not be read "
                                f"({e}); a study runs on nodes it can compare") from e
            identities[node.name] = testbed_identity(fp, throttle)
        unlike = unlike_nodes(identities)
        if unlike is not None:
            raise TuneError(
                f"{session.testbed.describe()}: its nodes are not alike ({unlike}); a study "
                "compares its trials' results, so they must run on nodes of one testbed "
                "key: use a testbed of alike nodes, or one study per kind of node")
        key = testbed_key(list(identities.values()))
        stored = study.user_attrs.get("testbed_key")
        if stored is None:
            study.set_user_attr("testbed_key", key)
        elif stored != key:
            raise TuneError(
                f"{study_path(self.store, self.spec.name)}: the study's trials ran on a "
                f"testbed of another key ({stored}) than this one's ({key}: "
                f"{', '.join(sorted(identities))}), whose results they cannot be compared with: "
                "resume it where it ran, or start over with --force or another campaign name")

    def _pin(self, session: CampaignSession) -> None:
        """testbed.node: every trial on that node (one at a time)."""
        pinned = getattr(self.spec.testbed, "node", None)
        if pinned is None or not session.remote:
            return
        node = next((n for n in session.nodes if n.name == pinned), None)
        if node is None:
            raise TuneError(f"testbed.node {pinned}: not a reachable node of "
                            f"{session.testbed.describe()}")
        session.nodes, session.node = [node], node

    def _run_parallel(self, study: Any, session: CampaignSession, todo: int) -> None:
        """`todo` trials over the testbed's nodes, one at a time on each (testbeds.distribute):
        a node asks the study for a trial when it is free; a trial whose node failed is FAILED
        (not counted) and its parameters run again on another node."""
        counter = {"n": 0}
        disk = str(getattr(self.spec.testbed, "disk", "any"))
        retries = int(getattr(session.testbed.spec, "retries", 1))
        TrialState = self.optuna.trial.TrialState

        def runner(job: Job, node: Any, last: bool) -> Attempt:
            slot: _Slot = job.point
            with self.lock:
                if slot.redo is not None:
                    study.enqueue_trial(slot.redo, user_attrs={"redo_of": slot.redo_of})
                trial = study.ask()
                params = {name: dom.suggest(trial) for name, dom in self.domains.items()}
                point = self._point(params)
                trial.set_user_attr("point", point.id)
                trial.set_user_attr("node", node.name)
                session.add_point(point)
                counter["n"] += 1
                n = counter["n"]
            record = session.run_point(
                point, n, todo, after_testing=self._after_testing(study, trial),
                extra={"tune": {"trial": trial.number}}, node=node, attempts=job.attempts,
                may_retry=not last)
            attempt = node_attempt(session.testbed, self.spec.name, node, point.id, record,
                                   session.reporter, self.lock)
            with self.lock:
                if record["state"] == "retry":
                    # Its point was not kept: the trial is failed, not counted, and its
                    # parameters go to the next node that takes the slot.
                    session.drop_point(point)
                    self.storage.set_trial_user_attr(trial._trial_id, "node_failed", node.name)
                    self.storage.set_trial_user_attr(
                        trial._trial_id, "note",
                        f"node {node.name} failed ({attempt.error}); run again elsewhere")
                    study.tell(trial.number, state=TrialState.FAIL)
                    slot.redo, slot.redo_of = dict(trial.params), trial.number
                else:
                    self._tell(study, trial.number, trial._trial_id, point.id)
            return attempt

        def no_node(job: Job, reason: str) -> None:
            slot: _Slot = job.point
            with self.lock:
                if slot.redo is not None:  # for --resume, once a node is back
                    study.enqueue_trial(slot.redo, user_attrs={"redo_of": slot.redo_of})
            session.reporter.message(f"a trial could not run: {reason}; `lsmbench tune "
                                     "--resume` runs it when a node is back", "warning")

        distribute([Job(point=_Slot(i), disk=disk) for i in range(todo)], session.nodes,
                   retries, runner, no_node)

    def _confirm_parallel(self, session: CampaignSession, todo: list[Point]) -> None:
        for point in todo:
            session.hashes.setdefault(point.id, self.plan.point(point).config_hash)
        dist = run_distributed(self.plan, self.store, session.testbed, session.nodes,
                               session.node_limits, todo, session.hashes, self.reporter,
                               self.options, session.sink, extra={"tune": {"confirm": True}})
        session.complete += dist["complete"]
        session.failed += dist["failed"]
        session.driver_s += dist["driver_s"]

    # -- confirmation ---------------------------------------------------------------------

    def _candidates(self, study: Any) -> list[tuple[dict[str, Any], float | None, bool]]:
        """(params, the trial's value, is the spec's own) of the top configurations and the
        spec's own, best first, each once."""
        TrialState = self.optuna.trial.TrialState
        sign = 1.0 if self.directions[0] == "maximize" else -1.0
        done = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                if t.value is not None]
        feasible = [t for t in done if not any(c > 0 for c in self._constraints(t))]
        ranked = sorted(feasible or done, key=lambda t: -sign * float(t.value))
        out: list[tuple[dict[str, Any], float | None, bool]] = []
        seen: set[str] = set()
        for t in ranked:
            params = self._ordered(t.params)
            gid = group_id(params)
            if gid not in seen and len(out) < self.tune.confirm.top:
                seen.add(gid)
                out.append((params, float(t.value), False))
        defaults = next((t for t in study.get_trials(deepcopy=False)
                         if t.user_attrs.get("defaults")), None)
        if defaults is not None and defaults.params:
            params = self._ordered(defaults.params)
            gid = group_id(params)
            if gid not in seen:
                out.append((params, defaults.value, True))
            else:
                out = [(p, v, d or group_id(p) == gid) for p, v, d in out]
        return out

    def _confirm(self, study: Any, session: CampaignSession) -> list[Confirmed]:
        if len(self.objectives) != 1 or self.tune.confirm.top == 0:
            return []
        want = self.tune.confirm.repetitions
        candidates = self._candidates(study)
        todo: list[Point] = []
        for params, _, _ in candidates:
            have = self._confirmations(group_id(params))
            for _ in range(max(0, want - len(have))):
                point = self._point(params)
                session.add_point(point)
                todo.append(point)
        if self.parallel:
            self._confirm_parallel(session, todo)
            return [self._judge(params, value, is_default)
                    for params, value, is_default in candidates]
        for n, point in enumerate(todo, 1):
            session.run_point(point, n, len(todo), extra={"tune": {"confirm": True}})
        return [self._judge(params, value, is_default)
                for params, value, is_default in candidates]

    def _confirmations(self, gid: str) -> list[Any]:
        return [r for r in self.store.points(self.spec.name)
                if (r.data.get("tune") or {}).get("confirm") and group_id(
                    r.data.get("params") or {}) == gid]

    def _judge(self, params: dict[str, Any], trial_value: float | None,
               is_default: bool) -> Confirmed:
        gid = group_id(params)
        recs = self._confirmations(gid)
        reps = [repetition_from_store(r) for r in recs]
        objective = self.objectives[0]
        values = [metric_value(r, objective) for r in reps]
        est = median_ci(values)
        known = [v for v in values if v is not None]
        maximize = self.directions[0] == "maximize"
        if est.has_interval:
            pessimistic = est.ci_low if maximize else est.ci_high
        else:
            pessimistic = (min(known) if maximize else max(known)) if known else None
        feasible = bool(reps) and all(
            r.state == STATE_COMPLETE and not any(v > 0 for v in violations(r, self.bounds))
            for r in reps)
        judged = [r for r in reps if r.verdict is not None]
        verdict = judge_group(reps)[0] if judged else None
        return Confirmed(params=params, group=gid, points=[r.point_id for r in recs],
                         trial_value=trial_value, repetitions=len(reps), median=est.median,
                         ci_low=est.ci_low, ci_high=est.ci_high, confidence=est.confidence,
                         pessimistic=pessimistic, feasible=feasible, verdict=verdict,
                         defaults=is_default)

    # -- the answer -----------------------------------------------------------------------

    def _rows(self, study: Any) -> list[TrialRow]:
        TrialState = self.optuna.trial.TrialState
        rows = []
        for t in study.get_trials(deepcopy=False):
            cons = t.user_attrs.get("constraints")
            rows.append(TrialRow(
                number=t.number, state=t.state.name.lower().replace("fail", "failed"),
                params=self._ordered(t.params), point=t.user_attrs.get("point"),
                # A pruned trial's value is Optuna's copy of its intermediate value (the
                # testing maximum, shown apart), not a measure of the objective.
                values=(list(t.values) if t.values is not None
                        and t.state == TrialState.COMPLETE else None),
                constraints=list(cons) if cons else None,
                feasible=(not any(c > 0 for c in cons)) if cons else (
                    True if t.state == TrialState.COMPLETE else None),
                max_write_throughput=t.user_attrs.get("max_write_throughput"),
                verdict=t.user_attrs.get("verdict"),
                note=("interrupted, run again" if t.user_attrs.get("interrupted")
                      else t.user_attrs.get("note")),
                defaults=bool(t.user_attrs.get("defaults")),
                node=t.user_attrs.get("node"), redone=_redone(t.user_attrs)))
        return rows

    def _best(self, study: Any, rows: list[TrialRow],
              confirmed: list[Confirmed]) -> Best | None:
        maximize = self.directions[0] == "maximize"
        sign = 1.0 if maximize else -1.0
        ok = [c for c in confirmed if c.pessimistic is not None]
        if ok:
            pool = [c for c in ok if c.feasible] or ok
            c = max(pool, key=lambda c: sign * float(c.pessimistic or 0.0))
            end = "lower" if maximize else "upper"
            how = (f"the {end} end of its {100 * (c.confidence or 0):.4g} % interval"
                   if c.ci_low is not None else
                   f"its {'worst' if maximize else 'highest'} run")
            basis = (f"chosen by {how} over {c.repetitions} fresh repetitions, among the "
                     f"top {self.tune.confirm.top} trials' configurations and the spec's own")
            if not c.feasible:
                basis += "; no confirmed configuration met every constraint in every repetition"
            return Best(params=c.params, value=c.pessimistic,
                        sustainable=c.verdict == "sustainable" and c.feasible,
                        verdict=c.verdict, median=c.median, interval=[c.ci_low, c.ci_high],
                        confidence=c.confidence, repetitions=c.repetitions, basis=basis)
        done = [r for r in rows if r.state == "complete" and r.values]
        if not done:
            return None
        if len(self.objectives) > 1:
            front = {t.number for t in study.best_trials}
            done = [r for r in done if r.number in front] or done
        pool = [r for r in done if r.feasible] or done
        r = max(pool, key=lambda r: sign * (r.values or [0.0])[0])
        basis = ("one run per trial (no confirmation)" if len(self.objectives) == 1 else
                 f"the Pareto front's best {self.objectives[0]} (one run per trial)")
        return Best(params=r.params, value=(r.values or [None])[0],
                    sustainable=r.verdict == "sustainable" and bool(r.feasible),
                    verdict=r.verdict, basis=basis)

    def result(self, study: Any, confirmed: list[Confirmed]) -> TuneResult:
        rows = self._rows(study)
        pareto = ([t.number for t in study.best_trials] if len(self.objectives) > 1 else [])
        defaults = next((r.number for r in rows if r.defaults), None)
        return TuneResult(
            campaign=self.spec.name, study=str(study_path(self.store, self.spec.name)),
            objectives=self.objectives, directions=self.directions,
            constraints=[b.text() for b in self.bounds],
            parameters={k: d.describe() for k, d in self.domains.items()},
            trials=sum(1 for r in rows if r.state in ("complete", "pruned")
                       or (r.state == "failed" and not r.redone)),
            complete=sum(1 for r in rows if r.state == "complete"),
            pruned=sum(1 for r in rows if r.state == "pruned"),
            failed=sum(1 for r in rows if r.state == "failed" and not r.redone),
            rows=rows, confirmed=confirmed, pareto=pareto,
            best=self._best(study, rows, confirmed), defaults_trial=defaults)

    # -- the whole run --------------------------------------------------------------------

    def run(self) -> TuneResult:
        spec = self.spec
        t0 = time.monotonic()
        run_options = self.options
        with campaign_errors(self.store, spec.name), self.store.lock(spec.name):
            existing = existing_points(self.plan, self.store, self.reporter, run_options)
            fresh = self.options.force or not study_path(self.store, spec.name).exists()
            study = self._open_study()
            for rec in sorted(existing.values(), key=lambda r: r.data.get("index") or 0):
                params, rep = rec.data.get("params"), rec.data.get("rep")
                if isinstance(params, dict) and isinstance(rep, int):
                    self.plan.points.append(Point(
                        index=len(self.plan.points), id=rec.point_id, params=params,
                        rep=rep, seed=int(rec.data.get("seed") or rep + 1)))
            self._recover(study)
            self._enqueue_defaults(study)
            done = self._finished(study)
            session = CampaignSession(self.plan, self.store, self.reporter, run_options, t0)
            try:
                session.open(max(0, self.tune.trials - done), done)
                self._pin(session)
                self.parallel = session.remote and len(session.nodes) > 1
                self._check_nodes(study, session, session.nodes if self.parallel
                                  else [session.node])
            except BaseException:
                # A study that never ran a trial is not kept: the next run (the testbed
                # fixed) starts it without --resume.
                if fresh:
                    study_path(self.store, spec.name).unlink(missing_ok=True)
                raise
            if self.parallel:
                session.reporter = LockedReporter(self.reporter)
                study.sampler = self._sampler(len(study.get_trials(deepcopy=False)), True)
                self.reporter.message(
                    f"{len(session.nodes)} nodes: one trial on each at a time", "info")
            self.reporter.campaign_start(spec.name, max(0, self.tune.trials - done), done,
                                         self.plan.estimate_point_s,
                                         str(self.store.campaign_dir(spec.name)))
            if self.parallel:
                self._run_parallel(study, session, max(0, self.tune.trials - done))
            else:
                n = 0
                while self._finished(study) < self.tune.trials:
                    n += 1
                    self._run_trial(study, session, n, self.tune.trials - done)
            confirmed = self._confirm(study, session)
            result = self.result(study, confirmed)
            write_json_atomic(self.store.campaign_dir(spec.name) / RESULT_FILE,
                              result.to_json())
            session.close(done, {"tune": {"trials": result.trials,
                                          "best": result.best.model_dump()
                                          if result.best else None}})
            return result


def run_tune(loaded: LoadedSpec, store: Store, reporter: Reporter,
             options: RunOptions) -> TuneResult:
    return Tuner(loaded, store, reporter, options).run()
