"""The ``tune:`` section of a campaign spec (``lsmbench tune``; docs/tuning.md).

A tune spec is a campaign spec without matrix dimensions: its points are the trials an
optimizer (Optuna's TPE) asks for. The section names the parameters to search (engine
options by name, or dotted spec paths a matrix dimension could set), each with a domain,
the number of trials, the objective(s) and the constraints.

Per-field checks are here (pydantic); the checks that need the engine's option
descriptions or the rest of the spec are :func:`lsmbench.spec.checks.tune_errors`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..util.units import parse_duration

# What a trial can be judged by: name -> (kind, better). kind: "rate" (writes/s), "duration"
# (seconds; a spec may write 100ms), "bool".
METRICS: dict[str, tuple[str, str]] = {
    "max_write_throughput": ("rate", "maximize"),
    "max_sustainable_rate": ("rate", "maximize"),
    "p50_write_latency": ("duration", "minimize"),
    "p99_write_latency": ("duration", "minimize"),
    "p999_write_latency": ("duration", "minimize"),
    "stall_time": ("duration", "minimize"),
    "sustainable": ("bool", "maximize"),
}
OBJECTIVES: tuple[str, ...] = ("max_write_throughput", "max_sustainable_rate",
                               "p99_write_latency")
# Metrics only a running phase measures.
RUNNING_METRICS = frozenset({"max_sustainable_rate", "p50_write_latency", "p99_write_latency",
                             "p999_write_latency", "stall_time", "sustainable"})

Objective = Literal["max_write_throughput", "max_sustainable_rate", "p99_write_latency"]
_BOUND_RE = re.compile(r"^\s*(<=|>=)\s*(\S.*?)\s*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class TuneParameter(_Strict):
    """One searched parameter's domain. Leave it empty for the domain the engine describes
    for the option (sizes on a log scale); give ``low``/``high`` (sizes may be written 1M) or
    ``choices``."""

    low: Any = Field(default=None,
                     description="The domain's lower end; sizes may be written `1M`.")
    high: Any = Field(default=None, description="The domain's upper end.")
    log: bool | None = Field(default=None, description="Search on a log scale; none: log for "
                             "byte sizes, linear otherwise.")
    step: float | None = Field(default=None, gt=0,
                               description="The step between the values tried.")
    choices: list[Any] | None = Field(default=None, description="The values to choose from, "
                                      "instead of low and high.")

    @model_validator(mode="after")
    def _one_kind(self) -> TuneParameter:
        if self.choices is not None:
            if self.low is not None or self.high is not None or self.log or self.step:
                raise ValueError("give either choices or low/high (with log, step), not both")
            if not self.choices:
                raise ValueError("empty domain: choices needs at least one value")
        elif (self.low is None) != (self.high is None):
            raise ValueError("give both low and high (or neither, for the engine's own range)")
        return self


class Bound(_Strict):
    """A constraint on a metric: '<=' or '>=' a value (seconds for latencies)."""

    metric: str
    op: Literal["<=", ">="]
    value: float

    def text(self) -> str:
        kind = METRICS[self.metric][0]
        if kind == "bool":
            return self.metric
        shown = f"{self.value * 1e3:g}ms" if kind == "duration" else f"{self.value:g}"
        return f"{self.metric} {self.op} {shown}"


class ConfirmSpec(_Strict):
    """The best configurations re-run with repetitions at the end: the answer is chosen by
    the pessimistic end of each one's interval, not by one lucky run."""

    top: int = Field(default=3, ge=0, le=20, description="How many of the best "
                     "configurations are confirmed, besides the spec's own.")
    repetitions: int = Field(default=3, ge=2, le=50,
                             description="Fresh runs of each confirmed configuration.")


class TuneSpec(_Strict):
    parameters: dict[str, TuneParameter] = Field(
        min_length=1,
        description="The parameters searched, each with its domain. A name is an engine "
                    "option, `policy`, `scheduler`, or a dotted spec path.")
    trials: int = Field(default=20, ge=1, le=10_000, description="Trials to run; the first is "
                        "the spec's own configuration.")
    seed: int = Field(default=1, description="The seed of the sampler (TPE).")
    objective: Objective | list[Objective] = Field(
        default="max_sustainable_rate",
        description="What the study optimizes. Two objectives give a Pareto front.")
    # metric -> true (sustainable) or '<= 100ms' / '>= 1000'.
    constraints: dict[str, Any] = Field(
        default_factory=dict,
        description="Bounds by metric: `sustainable: true`, or `<= VALUE` / `>= VALUE` "
                    "(latencies with a unit: `<= 100ms`).")
    # p99_write_latency at this fixed offered rate (writes/s) instead of a utilization of
    # each trial's own testing maximum.
    rate: float | None = Field(
        default=None, gt=0,
        description="The fixed offered rate, in writes/s, at which p99_write_latency is "
                    "measured; none: a utilization of each trial's testing maximum.")
    # Skip the running phases of a trial whose testing maximum shows it cannot beat the best
    # result so far (single objective only).
    prune: bool = Field(default=True, description="Skip the running phases of a trial whose "
                        "testing maximum cannot beat the best result so far.")
    # Random trials before TPE models the results (None: a third of the trials, 3 to 10).
    startup_trials: int | None = Field(
        default=None, ge=1,
        description="Random trials before TPE models the results; none: a third of the "
                    "trials, 3 to 10.")
    confirm: ConfirmSpec = Field(
        default_factory=ConfirmSpec,
        description="The best configurations, run again with repetitions at the end.")

    @field_validator("objective")
    @classmethod
    def _objectives(cls, v: Any) -> Any:
        if isinstance(v, list):
            if len(v) not in (1, 2) or len(set(v)) != len(v):
                raise ValueError("give one objective, or two different ones (a Pareto front)")
            if len(v) == 1:
                return v[0]
        return v

    def objectives(self) -> list[str]:
        return list(self.objective) if isinstance(self.objective, list) else [self.objective]

    def bounds(self) -> list[Bound]:
        return [parse_bound(k, v) for k, v in self.constraints.items()]

    def n_startup_trials(self) -> int:
        if self.startup_trials is not None:
            return self.startup_trials
        return max(3, min(10, self.trials // 3))

    def needs_running(self) -> bool:
        names = set(self.objectives()) | set(self.constraints)
        return bool(names & RUNNING_METRICS)


def parse_bound(metric: str, value: Any) -> Bound:
    """'sustainable: true' -> sustainable >= 1; 'p99_write_latency: <= 100ms' -> seconds."""
    kind = METRICS[metric][0]
    if kind == "bool":
        if value is not True:
            raise ValueError(f"{metric}: only 'true' constrains it (got {value!r})")
        return Bound(metric=metric, op=">=", value=1.0)
    m = _BOUND_RE.match(str(value)) if isinstance(value, str) else None
    if m is None:
        raise ValueError(f"{metric}: expected '<= VALUE' or '>= VALUE', got {value!r}")
    op, text = m.group(1), m.group(2)
    try:
        number = parse_duration(text) if kind == "duration" else float(text)
    except ValueError as e:
        raise ValueError(f"{metric}: {e}") from None
    return Bound(metric=metric, op=op, value=number)  # type: ignore[arg-type]


def constraint_errors(constraints: dict[str, Any]) -> list[tuple[str, str]]:
    """Each constraint that names no metric or gives no bound, by its path."""
    errors = []
    for name, value in constraints.items():
        path = f"tune.constraints.{name}"
        if name not in METRICS:
            errors.append((path, f"unknown metric '{name}' (choose from: "
                                 f"{', '.join(METRICS)})"))
            continue
        try:
            parse_bound(name, value)
        except ValueError as e:
            errors.append((path, str(e)))
    return errors
