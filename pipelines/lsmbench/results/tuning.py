"""A tuning study as ``lsmbench tune`` stores it in its campaign's directory: ``tune.json``
(:class:`TuneResult`, what the study decided: written by lsmbench.tune.study, read by the
report's Tuning section and printed by ``lsmbench tune``) and ``tune.sqlite3`` (the study's
Optuna storage, which :func:`import_optuna` reads), and how the study's values read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..engine_options import option_string
from ..spec.tune import METRICS

STUDY_FILE = "tune.sqlite3"
RESULT_FILE = "tune.json"
TUNE_SCHEMA = "lsmbench.tune/1"


class TrialRow(BaseModel):
    """One trial as the report and --json show it."""

    number: int
    state: str  # complete | pruned | failed | running | waiting
    params: dict[str, Any]
    point: str | None = None
    values: list[float] | None = None
    constraints: list[float] | None = None
    feasible: bool | None = None
    max_write_throughput: float | None = None
    verdict: str | None = None
    note: str | None = None  # why pruned or failed
    defaults: bool = False
    node: str | None = None  # the testbed node that ran it (a study over several nodes)
    # failed by the process's end or its node, its parameters run again: not counted
    redone: bool = False


class Confirmed(BaseModel):
    """A configuration re-run with repetitions: its objective's median and interval."""

    params: dict[str, Any]
    group: str
    points: list[str]
    trial_value: float | None  # the single run that put it on top (not counted below)
    repetitions: int
    median: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float | None
    pessimistic: float | None  # the interval's worse end (min..max with fewer than 3)
    feasible: bool  # every repetition met every constraint
    verdict: str | None  # the grouped verdict of the repetitions (when they ran a running phase)
    defaults: bool = False


class Best(BaseModel):
    params: dict[str, Any]
    value: float | None  # the pessimistic end after confirmation, else the trial's value
    sustainable: bool
    verdict: str | None = None
    median: float | None = None
    interval: list[float | None] | None = None
    confidence: float | None = None
    repetitions: int = 1
    basis: str  # how it was chosen


class TuneResult(BaseModel):
    schema_: str = Field(default=TUNE_SCHEMA, alias="schema")
    campaign: str
    study: str  # the SQLite file
    objectives: list[str]
    directions: list[str]
    constraints: list[str]
    parameters: dict[str, str]  # name -> domain text
    trials: int  # finished trials (complete, pruned or failed)
    complete: int
    pruned: int
    failed: int
    rows: list[TrialRow]
    confirmed: list[Confirmed] = Field(default_factory=list)
    pareto: list[int] = Field(default_factory=list)  # trial numbers (two objectives)
    best: Best | None = None
    defaults_trial: int | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


def import_optuna() -> Any:
    """Optuna, quiet: its logging at warnings, its experimental features' warnings off."""
    import warnings

    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # TPE's multivariate mode and constraints_func are marked experimental (their interface
    # may change); the study pins optuna<5 and says which it uses in docs/tuning.md.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


def metric_text(name: str, value: float | None) -> str:
    """A study metric's value for people, in its unit: '1.25 ms', '12,000 writes/s'."""
    if value is None:
        return "-"
    kind = METRICS[name][0]
    if kind == "duration":
        return f"{value * 1e3:,.2f} ms"
    if kind == "rate":
        return f"{value:,.0f} writes/s"
    return f"{value:g}"


def params_text(params: dict[str, Any]) -> str:
    """A trial's parameters as the spec would set them: 'name=value, ...'."""
    return ", ".join(f"{k}={option_string(v)}" for k, v in params.items()) or "(none)"
