"""The report's Tuning section, for a campaign that ``lsmbench tune`` ran: the optimization
history, the best configuration against the spec's own, the confirmation runs, parameter
importances (Optuna's default evaluator), the Pareto front (two objectives) and every trial's
verdict.

The section reads ``tune.json`` (what ``lsmbench tune`` decided) and the study's SQLite file
(for the importances); a campaign without them has no tuning section.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..results.tuning import (
    RESULT_FILE,
    STUDY_FILE,
    TuneResult,
    import_optuna,
    metric_text,
    params_text,
)
from .plotting import Figure
from .tuning_figures import tune_figures


def load_result(campaign_dir: Path) -> TuneResult | None:
    path = campaign_dir / RESULT_FILE
    try:
        return TuneResult.model_validate(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from e


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
    figures: list[Figure] = field(default_factory=list)

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
    return TuneSection(result=result, importances=imp, importance_note=note,
                       figures=tune_figures(result))
