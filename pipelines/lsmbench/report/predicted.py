"""lsm-sim's prediction (campaign.json ``plan.predictions``, made before the run) beside what
the run measured, per point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..util.values import number as _num
from .load import Row


@dataclass
class PredictedRow:
    point: str
    predicted_max: float  # writes/s
    measured_max: float | None
    ratio: float | None  # measured / predicted
    predicted_sustainable: bool | None  # at the prediction's utilization
    utilization: float | None  # the prediction's
    measured_verdict: str | None  # the JSON's word (sustainable, not-sustainable, inconclusive)
    measured_utilization: float | None  # the verdict's
    arrival: str = "constant"  # the running phase's arrival process, as the point ran it
    outside: str = ""  # why the point is outside the model's validated range ("" inside)
    verdict_outside: str = ""  # why only its verdict is ("" inside)


def predicted_rows(rows: list[Row], plan: dict[str, Any] | None) -> list[PredictedRow]:
    """Rows for the points that have a prediction (none without the plan's predictions)."""
    preds = (plan or {}).get("predictions")
    if not isinstance(preds, dict):
        return []
    out = []
    for r in rows:
        p = preds.get(r.point)
        predicted = _num(p.get("max_writes_per_s")) if isinstance(p, dict) else None
        if not isinstance(p, dict) or not predicted:
            continue
        measured = r.max_write_throughput
        sustainable = p.get("sustainable")
        out.append(PredictedRow(
            point=r.point, predicted_max=predicted, measured_max=measured,
            ratio=measured / predicted if measured else None,
            predicted_sustainable=sustainable if isinstance(sustainable, bool) else None,
            utilization=_num(p.get("utilization")), measured_verdict=r.verdict,
            measured_utilization=r.utilization, arrival=str(p.get("arrival") or "constant"),
            outside=str(p.get("outside") or ""),
            verdict_outside=str(p.get("verdict_outside") or "")))
    return out
