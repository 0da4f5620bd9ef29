"""Publishing a campaign's points to its sink within the campaign's time budget for it."""

from __future__ import annotations

from typing import Any

from ..plan import Plan
from ..progress import Reporter
from ..publish import SinkBudget
from ..store import Store


class CampaignSink:
    """Publishing to the spec's sink (if any) within the campaign's budget for it; says once
    when the budget is used up."""

    def __init__(self, plan: Plan, store: Store, reporter: Reporter) -> None:
        self.spec = plan.spec.sinks.section
        self.store = store
        self.reporter = reporter
        self.budget = SinkBudget(self.spec.budget) if self.spec else None
        self._warned = False

    def publish(self, point_id: str, rec: Any, tags: dict[str, Any] | None = None,
                reporter: Reporter | None = None) -> None:
        if self.spec is None or self.budget is None:
            return
        reporter = reporter or self.reporter
        sink = self.spec if not tags else self.spec.model_copy(
            update={"tags": {**self.spec.tags, **tags}})
        out = self.budget.publish(self.store, rec, sink)
        reporter.published(point_id, out.ok, out.error)
        if self.budget.exhausted and not self._warned:
            self._warned = True
            from ..sinks import backend

            reporter.message(
                f"{backend(self.spec.kind).title} at {self.spec.url}: the campaign's time for "
                f"the sink (sinks.{self.spec.kind}.budget, {self.spec.budget:g}s) is used up; "
                f"the points from here on stay unpublished (`lsmbench ls` lists them; "
                f"`lsmbench publish RESULTS --to {self.spec.url}` sends them)", "warning")

    def summary(self) -> dict[str, Any]:
        if self.budget is None:
            return {}
        return {"sink_wait_s": round(self.budget.used_s, 2),
                "sink_budget_exhausted": self.budget.exhausted}
