"""A study in the campaign report and on the terminal: the optimization history, the best
configuration against the spec's own, the confirmation runs, parameter importances
(Optuna's default evaluator), the Pareto front (two objectives) and every trial's verdict.

The report reads ``tune.json`` (what ``lsmbench tune`` decided) and the study's SQLite file
(for the importances); a campaign without them has no tuning section.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine_options import option_string
from ..spec.tune import METRICS
from .study import RESULT_FILE, STUDY_FILE, TuneResult


def load_result(campaign_dir: Path) -> TuneResult | None:
    path = campaign_dir / RESULT_FILE
    try:
        return TuneResult.model_validate(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from e


def metric_text(name: str, value: float | None) -> str:
    if value is None:
        return "-"
    kind = METRICS[name][0]
    if kind == "duration":
        return f"{value * 1e3:,.2f} ms"
    if kind == "rate":
        return f"{value:,.0f} writes/s"
    return f"{value:g}"


def params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={option_string(v)}" for k, v in params.items()) or "(none)"


# PED-ANOVA ranks parameters by how much their distribution in the best trials differs from
# that in all trials; below this many complete trials its top quantile is one or two trials.
MIN_IMPORTANCE_TRIALS = 8


def importances(campaign_dir: Path, campaign: str) -> tuple[dict[str, float], str | None]:
    """Optuna's parameter importances for the first objective, or why there are none.

    The evaluator is Optuna's PED-ANOVA (Watanabe et al., IJCAI 2023): native, fast with few
    trials, and without fANOVA's scikit-learn dependency."""
    path = campaign_dir / STUDY_FILE
    if not path.is_file():
        return {}, "no study file"
    from .study import import_optuna

    optuna = import_optuna()  # PED-ANOVA is marked experimental too
    try:
        study = optuna.load_study(study_name=campaign, storage=f"sqlite:///{path}")
        complete = [t for t in study.get_trials(deepcopy=False)
                    if t.state == optuna.trial.TrialState.COMPLETE]
        if len(complete) < MIN_IMPORTANCE_TRIALS:
            return {}, (f"{len(complete)} complete trial(s); importances need at least "
                        f"{MIN_IMPORTANCE_TRIALS}")
        got = optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.PedAnovaImportanceEvaluator(),
            target=(lambda t: t.values[0]) if len(study.directions) > 1 else None)
    except (RuntimeError, ValueError, KeyError) as e:
        return {}, f"not computable: {e}"
    return {k: float(v) for k, v in got.items()}, None


@dataclass
class TuneSection:
    """What the report's tuning section shows."""

    result: TuneResult
    importances: dict[str, float]
    importance_note: str | None
    figures: list[Any] = field(default_factory=list)  # report.figures.Figure

    @property
    def objective(self) -> str:
        return self.result.objectives[0]

    def value(self, v: float | None, i: int = 0) -> str:
        return metric_text(self.result.objectives[i], v)

    def params(self, p: dict[str, Any]) -> str:
        return params_text(p)


def tune_section(campaign_dir: Path, campaign: str) -> TuneSection | None:
    result = load_result(campaign_dir)
    if result is None:
        return None
    imp, note = importances(campaign_dir, campaign)
    from .figures import tune_figures

    return TuneSection(result=result, importances=imp, importance_note=note,
                       figures=tune_figures(result))


def print_result(result: TuneResult, quiet: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not quiet:
        table = Table(box=None, header_style="bold", title=f"study {result.campaign}")
        for col in ("trial", "state", "params", *result.objectives, "verdict", "note"):
            table.add_column(col, overflow="fold")
        for r in result.rows:
            vals = [metric_text(o, (r.values or [None] * len(result.objectives))[i])
                    for i, o in enumerate(result.objectives)]
            mark = " (spec's own)" if r.defaults else ""
            table.add_row(str(r.number), r.state + mark, params_text(r.params), *vals,
                          r.verdict or "-", r.note or "")
        console.print(table)
        for c in result.confirmed:
            console.print(
                f"confirmed {params_text(c.params)}{' (spec own)' if c.defaults else ''}: "
                f"median {metric_text(result.objectives[0], c.median)} "
                f"[{metric_text(result.objectives[0], c.ci_low)} .. "
                f"{metric_text(result.objectives[0], c.ci_high)}] over {c.repetitions} "
                f"repetitions, {c.verdict or 'no verdict'}"
                f"{'' if c.feasible else ', constraints not met in every repetition'}",
                highlight=False, markup=False)
    best = result.best
    if best is None:
        console.print(f"no trial of {result.trials} gave a result (see {result.study})",
                      highlight=False, markup=False)
        return
    judged = best.verdict or "not judged (no running phase)"
    console.print(f"best: {params_text(best.params)}: {result.objectives[0]} "
                  f"{metric_text(result.objectives[0], best.value)} ({best.basis}); "
                  f"verdict: {judged}; {result.trials} trials "
                  f"({result.pruned} pruned, {result.failed} failed); study {result.study}",
                  highlight=False, markup=False)
