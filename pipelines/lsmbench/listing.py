"""`lsmbench ls CAMPAIGN`: a campaign's groups (a point's repetitions judged as one), as a table
or as JSON, with the repetitions reachable (nested ids, the per-repetition rows, --repetitions).
"""

from __future__ import annotations

from typing import Any

from .groups import (
    NOT_SUSTAINABLE,
    SUSTAINABLE,
    Group,
    Repetition,
    group_repetitions,
    interval_text,
)
from .groups import repetition_from_store as _repetition
from .stats import Estimate
from .store import Store

VERDICT_WORDS = {SUSTAINABLE: "yes", NOT_SUSTAINABLE: "NO", "inconclusive": "inconclusive"}


def campaign_listing(store: Store, campaign: str) -> dict[str, Any]:
    """The JSON of `ls CAMPAIGN --json`: groups, and every repetition's row under "points"."""
    reps = [_repetition(r) for r in store.points(campaign)]
    groups = group_repetitions(reps)
    camp = store.read_campaign(campaign) or {}
    return {
        "campaign": campaign,
        "planned": len((camp.get("plan") or {}).get("points") or []),
        "groups": [g.model_dump() for g in groups],
        "points": [r.model_dump() for r in reps],
        # What `lsmbench publish` would send, and why it was not sent.
        "unpublished": [{"point": r.point_id, "error": r.data.get("publish_error")}
                        for r in store.points(campaign) if r.published is False],
    }


def _seconds(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"


def _count(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f}"


def estimate_text(e: Estimate, fmt: Any) -> str:
    """'1,234 [1,100..1,300]' (an en dash between), with the interval's confidence when under
    95 %; the median alone when there is no interval."""
    if e.median is None:
        return "-"
    return f"{fmt(e.median)} [{interval_text(e, fmt)}]" if e.has_interval else fmt(e.median)


def agree_text(g: Group) -> str:
    judged = g.agree.get(SUSTAINABLE, 0) + g.agree.get(NOT_SUSTAINABLE, 0)
    return f"{g.agree.get(SUSTAINABLE, 0)}/{judged}" if judged else "-"


def group_search_text(g: Group) -> str:
    """The max. sustainable column of a group: the median rate [CI] at its median utilization,
    '-' without a search, 'none' when no repetition found one."""
    s = g.search
    if s is None:
        return "-"
    if s.rate.median is None and s.utilization.median is None:
        return "none"
    u = f" @ {s.utilization.median:.3g}x" if s.utilization.median is not None else ""
    none = f" ({s.none} none)" if s.none else ""
    return estimate_text(s.rate, _count) + u + none


def rep_search_text(r: Repetition) -> str:
    if not r.searched:
        return "-"
    if r.max_sustainable_utilization is None:
        return "none"
    return f"{_count(r.max_sustainable_rate)} @ {r.max_sustainable_utilization:.3g}x"


def print_listing(data: dict[str, Any], store_dir: str, repetitions: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    groups = [Group.model_validate(g) for g in data["groups"]]
    reps = {r["point"]: Repetition.model_validate(r) for r in data["points"]}
    searched = any(g.search is not None for g in groups)
    table = Table(box=None, header_style="bold")
    table.add_column("group", no_wrap=True)
    columns = ["runs", "writes/s [CI]", "p99 [CI]", "verdict", "sust./judged"]
    if searched:
        columns.insert(1, "max sustainable writes/s [CI]")
    for col in columns:
        table.add_column(col, overflow="fold")
    for g in groups:
        runs = f"{g.complete}" + (f" +{g.failed} failed" if g.failed else "")
        cells = [g.group, runs, estimate_text(g.max_write_throughput, _count),
                 estimate_text(g.p99_write_latency_s, _seconds), VERDICT_WORDS[g.verdict],
                 agree_text(g)]
        if searched:
            cells.insert(2, group_search_text(g))
        table.add_row(*cells)
        if repetitions:
            for pid in g.points:
                r = reps[pid]
                cells = [f"  rep {r.rep if r.rep is not None else pid}",
                         "" if r.state == "complete" else r.state,
                         _count(r.max_write_throughput)
                         + (" (not steady)" if r.steady is False else ""),
                         _seconds(r.p99_write_latency_s),
                         {True: "yes", False: "NO", None: "-"}[r.sustainable],
                         ", ".join(r.failed_criteria)]
                if searched:
                    cells.insert(2, rep_search_text(r))
                table.add_row(*cells)
    Console().print(table)
    for g in groups:
        print(f"{g.group}: {'; '.join(g.reasons)}")
    for u in data.get("unpublished") or []:
        print(f"unpublished {u['point']}: {u['error'] or 'not sent yet'}")
    if data.get("unpublished"):
        print(f"(`lsmbench publish {store_dir} --to URL` sends the "
              f"{len(data['unpublished'])} unpublished point(s))")
    published = [r.published for r in reps.values() if r.published is not None]
    pub = f"; {sum(published)} of {len(published)} published" if published else ""
    print(f"{len(groups)} group(s) of {len(reps)} of {data['planned'] or '?'} planned point(s) "
          f"stored in {store_dir}{pub}" + ("" if repetitions else
                                           " (--repetitions lists each repetition)"))
