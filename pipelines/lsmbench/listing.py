"""`lsmbench ls CAMPAIGN`: a campaign's groups (a point's repetitions judged as one), as a table
or as JSON, with the repetitions reachable (nested ids, the per-repetition rows, --repetitions).

The terminal view never breaks a word or a number across lines (:mod:`lsmbench.util.terminal`, the
layout every command's output shares): a table, one line per group, when it fits the width;
else each group stacked as a block of "label  value" lines, values wrapped between words.
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .method.groups import (
    Group,
    Repetition,
    agreement_text,
    campaign_completion,
    group_repetitions,
    interval_text,
)
from .method.groups import repetition_from_store as _repetition
from .method.stats import Estimate
from .points import group_id
from .store import LOCK_FILE, STATE_COMPLETE, Store
from .util.terminal import UNBOUNDED, make_console, print_layout, say, terminal_width
from .util.wording import plural

__all__ = ["UNBOUNDED", "Listing", "campaign_listing", "print_listing", "say", "terminal_width"]

# The table's column headings, which the stacked layout uses as labels too (a group's runs
# under RUNS; in the table, a repetition's criteria share the column).
GROUP = "group"
VERDICT = "verdict"
RUNS = "runs / criteria"
RUNS_LABEL = "runs"
MAX_SUSTAINABLE = "max sustainable writes/s [CI]"
WRITES = "writes/s [CI]"
P99 = "p99 [CI]"
WHY = "why"


def last_run_state(doc: dict[str, Any], campaign_dir: Path) -> str | None:
    """How the campaign's last run ended: 'finished', 'stopped' (it ended early and said why:
    a full results store), 'running' (not finished, and the store's lock is held by a live
    process), 'interrupted' (not finished, and nothing runs it: killed, or stopped with ^C);
    None when it never ran."""
    runs = doc.get("runs") or []
    if not runs:
        return None
    last = runs[-1]
    if last.get("stopped"):
        return "stopped"
    if last.get("finished") is not None:
        return "finished"
    return "running" if _lock_held(campaign_dir / LOCK_FILE) else "interrupted"


def _lock_held(path: Path) -> bool:
    """Whether a live process holds the campaign's lock: the file names its holder while held
    (filelock.exclusive empties it when released; a killed process leaves its pid there)."""
    try:
        text = path.read_text()
    except OSError:
        return False
    m = re.match(r"pid (\d+) on (\S+)", text)
    if m is None:
        return False
    if m.group(2) != socket.gethostname():
        return True  # another host's run: not ours to judge, so not called interrupted
    try:
        os.kill(int(m.group(1)), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def campaign_points(doc: dict[str, Any], reps: list[Repetition]) -> dict[str, Any]:
    """The campaign's points as planned and as run: ``planned``, ``run`` (stored, failed ones
    included), ``not_needed`` (planned repetitions of groups complete without them: adaptive
    repetitions, decided early), ``not_run`` (the rest: a run to finish), and ``state`` of
    the last run (:func:`last_run_state`, set by the caller)."""
    plan, spec = doc.get("plan"), doc.get("spec")
    planned = plan.get("points") if isinstance(plan, dict) else None
    planned = [p for p in planned if isinstance(p, dict)] if isinstance(planned, list) else []
    matrix = spec.get("matrix") if isinstance(spec, dict) else None
    completion = campaign_completion(planned, reps, matrix if isinstance(matrix, dict) else {})
    have = {(r.group, r.rep) for r in reps}
    done = {c.group for c in completion if c.complete}
    not_needed = sum(1 for p in planned if isinstance(p.get("params"), dict)
                     and group_id(p["params"]) in done
                     and (group_id(p["params"]), p.get("rep")) not in have)
    run = len(reps)
    bound = any(c.complete and c.why != "decided" and c.stored < c.planned for c in completion)
    return {"planned": len(planned), "run": run, "not_needed": not_needed,
            "not_needed_why": ("groups decided, or only a longer running cap decides them"
                               if bound else "groups decided"),
            "not_run": max(0, len(planned) - run - not_needed)}


def points_text(c: dict[str, Any]) -> str:
    """'4 planned, 2 run (2 not needed: groups decided)'; '?' planned when campaign.json has
    no plan."""
    planned = c.get("planned") or 0
    text = f"{planned or '?'} planned, {c.get('run', 0)} run"
    why = []
    if c.get("not_needed"):
        why.append(f"{c['not_needed']} not needed: {c.get('not_needed_why') or 'groups decided'}")
    if c.get("not_run"):
        why.append(f"{c['not_run']} not run")
    return text + (f" ({'; '.join(why)})" if why else "")


def state_text(doc: dict[str, Any], state: str | None) -> str | None:
    """What ls says of a last run that did not finish, or None."""
    last = (doc.get("runs") or [{}])[-1]
    since = (time.strftime("%Y-%m-%d %H:%M", time.localtime(last["started"]))
             if isinstance(last.get("started"), int | float) else "?")
    if state == "interrupted":
        return (f"the last run (started {since}) was interrupted: it never finished; "
                "`lsmbench run --resume` finishes it")
    if state == "running":
        return f"the last run (started {since}) is still running"
    if state == "stopped":
        return f"the last run (started {since}) stopped before its end: {last.get('stopped')}"
    return None


def _index(record: dict[str, Any]) -> int:
    i = record.get("index")
    return i if isinstance(i, int) and not isinstance(i, bool) else 1 << 30


def campaign_listing(store: Store, campaign: str) -> dict[str, Any]:
    """The JSON of `ls CAMPAIGN --json`: groups, and every repetition's row under "points"."""
    # In the plan's order (the matrix's), as the report reads them: groups take its order.
    recs = sorted(store.points(campaign), key=lambda r: (_index(r.data), r.point_id))
    reps = [_repetition(r) for r in recs]
    groups = group_repetitions(reps)
    camp = store.read_campaign(campaign) or {}
    state = last_run_state(camp, store.campaign_dir(campaign))
    return {
        "campaign": campaign,
        **campaign_points(camp, reps),
        "last_run_state": state,
        "last_run_text": state_text(camp, state),
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


def runs_text(g: Group) -> str:
    """The group's repetitions by their own verdicts, inconclusive ones counted, and the
    failed ones: '1 sustainable, 2 inconclusive of 3, 1 failed'."""
    judged = agreement_text(g.agree)
    parts = [judged] if judged != "-" or not g.failed else []
    if g.failed:
        parts.append(f"{g.failed} failed")
    return ", ".join(parts)


def criteria_text(r: Repetition) -> str:
    """What a repetition's verdict rests on beyond its word: the criteria that failed, and
    those that could not be computed."""
    parts = []
    if r.failed_criteria:
        parts.append(f"failed: {', '.join(r.failed_criteria)}")
    if r.not_computed:
        parts.append(f"not computed: {', '.join(r.not_computed)}")
    return "; ".join(parts)


def rep_verdict_text(r: Repetition) -> str:
    """A repetition's verdict in the JSON's word; its state when it did not complete."""
    if r.state != STATE_COMPLETE:
        return r.state
    return r.verdict or "-"


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


def _unit_note(unit: str) -> str:
    """A mix without writes is measured in requests: its cells say so."""
    return "" if unit == "writes" else f" {unit}/s"


def group_cells(g: Group, searched: bool) -> dict[str, str]:
    """A group's cells, by column heading, in the table's order."""
    cells = {VERDICT: g.verdict, RUNS: runs_text(g)}
    if searched:
        cells[MAX_SUSTAINABLE] = group_search_text(g)
    cells[WRITES] = estimate_text(g.max_write_throughput, _count) + _unit_note(g.unit)
    cells[P99] = estimate_text(g.p99_write_latency_s, _seconds)
    return cells


def rep_label(r: Repetition) -> str:
    return f"rep {r.rep if r.rep is not None else r.point}"


def rep_cells(r: Repetition, searched: bool) -> dict[str, str]:
    """A repetition's cells, under the same headings as its group's."""
    cells = {VERDICT: rep_verdict_text(r), RUNS: criteria_text(r)}
    if searched:
        cells[MAX_SUSTAINABLE] = rep_search_text(r)
    cells[WRITES] = _count(r.max_write_throughput) + _unit_note(r.unit) + (
        " (not steady)" if r.steady is False else "")
    cells[P99] = _seconds(r.p99_write_latency_s)
    return cells


class Listing:
    """The groups (and with ``repetitions`` each repetition) of `ls CAMPAIGN`, laid out for a
    width."""

    def __init__(self, data: dict[str, Any], repetitions: bool) -> None:
        self.groups = [Group.model_validate(g) for g in data["groups"]]
        self.reps = {r["point"]: Repetition.model_validate(r) for r in data["points"]}
        self.searched = any(g.search is not None for g in self.groups)
        self.repetitions = repetitions

    def _members(self, g: Group) -> list[Repetition]:
        return [self.reps[pid] for pid in g.points] if self.repetitions else []

    def table(self) -> Table:
        """One line per group and repetition, no cell wrapped."""
        table = Table(box=None, header_style="bold", pad_edge=False)
        # The cells' headings, in their order (a repetition's cells have the same).
        headings = list(group_cells(self.groups[0], self.searched)) if self.groups else []
        for heading in [GROUP, *headings]:
            table.add_column(heading, no_wrap=True)
        for g in self.groups:
            table.add_row(Text(g.group), *map(Text, group_cells(g, self.searched).values()))
            for r in self._members(g):
                table.add_row(Text("  " + rep_label(r)),
                              *map(Text, rep_cells(r, self.searched).values()))
        return table

    def blocks(self) -> Iterator[tuple[Text, Table]]:
        """Per group, its heading and a block of "label  value" lines: values wrap between
        words, a label never wraps."""
        for g in self.groups:
            block = Table.grid(padding=(0, 2), pad_edge=True)
            block.add_column(no_wrap=True)
            block.add_column()
            for label, value in group_cells(g, self.searched).items():
                block.add_row(RUNS_LABEL if label == RUNS else label, Text(value))
            for i, why in enumerate(g.reasons):
                block.add_row(WHY if i == 0 else "", Text(why))
            for r in self._members(g):
                block.add_row(rep_label(r), Text(self._rep_line(r)))
            yield Text(g.group, style="bold"), block

    def _rep_line(self, r: Repetition) -> str:
        """A repetition's cells as one phrase; a failed one's state alone (why it failed is
        among its group's reasons)."""
        cells = rep_cells(r, self.searched)
        if r.state != STATE_COMPLETE:
            return cells[VERDICT]
        rate = cells[WRITES] if r.unit != "writes" else f"{cells[WRITES]} writes/s"
        words = [cells[VERDICT], rate, f"p99 {cells[P99]}"]
        if self.searched:
            words.insert(1, f"max sustainable {cells[MAX_SUSTAINABLE]}")
        return "; ".join([*words, cells[RUNS]] if cells[RUNS] else words)

    def print(self, console: Console, width: int | None) -> None:
        if print_layout(console, self.table(), self.blocks(), width):
            for g in self.groups:
                say(console, reason_line(g), width)


def reason_line(g: Group) -> str:
    return f"{g.group}: {'; '.join(g.reasons)}"


def footer_lines(data: dict[str, Any], store_dir: str, repetitions: bool) -> list[str]:
    """What follows the groups: the unpublished points, and what the store holds."""
    unpublished = data.get("unpublished") or []
    lines = [f"unpublished {u['point']}: {u['error'] or 'not sent yet'}" for u in unpublished]
    if unpublished:
        lines.append(f"(`lsmbench publish {store_dir} --to URL` sends the "
                     f"{plural(len(unpublished), 'unpublished point')})")
    groups, reps = data["groups"], data["points"]
    published = [r["published"] for r in reps if r.get("published") is not None]
    pub = f"; {sum(published)} of {len(published)} published" if published else ""
    lines.append(f"{plural(len(groups), 'group')}, points {points_text(data)}, stored in "
                 f"{store_dir}{pub}"
                 + ("" if repetitions else " (--repetitions lists each repetition)"))
    if data.get("last_run_text"):
        lines.append(data["last_run_text"])
    return lines


def print_listing(data: dict[str, Any], store_dir: str, repetitions: bool,
                  width: int | None = None) -> None:
    """Prints the listing laid out for ``width`` columns (None: no limit, one line per row)."""
    console = make_console(width)
    Listing(data, repetitions).print(console, width)
    for line in footer_lines(data, store_dir, repetitions):
        say(console, line, width)
