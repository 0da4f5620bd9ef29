"""What a running campaign tells its user: a rich progress bar with an ETA, a quiet
mode, or JSON lines for scripts (``--json``: one object per event on stdout)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from .method.verdict import INCONCLUSIVE, inconclusive_cause, verdict_word
from .points import Point
from .util.units import format_duration
from .util.wording import plural


class Reporter:
    """The events of a campaign; the base class ignores them all."""

    def campaign_start(self, campaign: str, todo: int, skipped: int, estimate_point_s: float,
                       results_dir: str) -> None:
        pass

    def point_start(self, point: Point, n: int, total: int) -> None:
        pass

    def point_skipped(self, point: Point, reason: str) -> None:
        pass

    def phase_start(self, point: Point, phase: str, duration_s: float | None) -> None:
        pass

    def phase_tick(self, elapsed_s: float) -> None:
        pass

    def phase_end(self, point: Point, phase: str, info: dict[str, Any]) -> None:
        pass

    def point_end(self, point: Point, record: dict[str, Any]) -> None:
        pass

    def published(self, point_id: str, ok: bool, error: str | None) -> None:
        pass

    def message(self, text: str, level: str = "info") -> None:
        pass

    def campaign_end(self, summary: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


def point_line(record: dict[str, Any]) -> str:
    """One line about a finished point: state, max throughput, verdict."""
    pid = record.get("point", "?")
    if record.get("state") != "complete":
        err = record.get("error") or {}
        return f"FAILED {pid}: {err.get('stage', '?')}: {err.get('message', '')}"
    mt = (record.get("max_throughput") or {}).get("writes_per_s")
    unit = (record.get("max_throughput") or {}).get("unit") or "writes"  # requests: no writes
    v = record.get("verdict") or {}
    verdict = verdict_word(v) or "no verdict"
    if verdict == INCONCLUSIVE:
        verdict += f" ({inconclusive_cause(v.get('reasons') or [])})"
    p99 = v.get("p99_write_latency_s")
    parts = [f"ok {pid}:"]
    if mt is not None:
        parts.append(f"max {mt:,.0f} {unit}/s;")
    parts.append(verdict)
    if p99 is not None:
        parts.append(f"(p99 {p99 * 1000:.1f} ms, final queue {v.get('final_queue_length', 0):.0f})")
    return " ".join(parts)


class QuietReporter(Reporter):
    """Errors and the final line only (on stderr / stdout)."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None,
                 final: bool = True) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.final = final  # False: the command prints its own final line (lsmbench tune)

    def message(self, text: str, level: str = "info") -> None:
        if level in ("error", "warning"):
            print(f"{level}: {text}", file=self.err)

    def point_end(self, point: Point, record: dict[str, Any]) -> None:
        if record.get("state") != "complete":
            print(point_line(record), file=self.err)

    def campaign_end(self, summary: dict[str, Any]) -> None:
        if self.final:
            print(summary_line(summary), file=self.out)


def summary_line(summary: dict[str, Any]) -> str:
    # No overhead without a driver run (a --resume with nothing left): 100 % of nothing.
    pct = summary.get("overhead_pct")
    overhead = f" (orchestration overhead {pct:.1f}%)" if pct is not None else ""
    return (
        f"campaign {summary['campaign']}: {summary['complete']} complete, "
        f"{summary['failed']} failed, {summary['skipped']} skipped "
        f"in {format_duration(summary['wall_s'])}{overhead}; "
        f"results in {summary['results_dir']}"
    )


class JsonReporter(Reporter):
    """One JSON object per event on stdout, for scripts."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def _emit(self, event: str, **fields: Any) -> None:
        fields = {"event": event, "time": round(time.time(), 3), **fields}
        self.out.write(json.dumps(fields, default=str) + "\n")
        self.out.flush()

    def campaign_start(self, campaign: str, todo: int, skipped: int, estimate_point_s: float,
                       results_dir: str) -> None:
        self._emit("campaign_start", campaign=campaign, todo=todo, skipped=skipped,
                   estimate_s=round(todo * estimate_point_s, 1), results_dir=results_dir)

    def point_start(self, point: Point, n: int, total: int) -> None:
        self._emit("point_start", point=point.id, n=n, total=total)

    def point_skipped(self, point: Point, reason: str) -> None:
        self._emit("point_skipped", point=point.id, reason=reason)

    def phase_start(self, point: Point, phase: str, duration_s: float | None) -> None:
        self._emit("phase_start", point=point.id, phase=phase, duration_s=duration_s)

    def phase_end(self, point: Point, phase: str, info: dict[str, Any]) -> None:
        self._emit("phase_end", point=point.id, phase=phase, exit_code=info.get("exit_code"),
                   wall_s=info.get("wall_s"))

    def point_end(self, point: Point, record: dict[str, Any]) -> None:
        v = record.get("verdict") or {}
        self._emit("point_end", point=point.id, state=record.get("state"),
                   error=record.get("error"),
                   max_write_throughput=(record.get("max_throughput") or {}).get("writes_per_s"),
                   sustainable=v.get("sustainable") if v else None,
                   verdict=verdict_word(v) if v else None,
                   p99_write_latency_s=v.get("p99_write_latency_s") if v else None)

    def published(self, point_id: str, ok: bool, error: str | None) -> None:
        self._emit("published", point=point_id, ok=ok, error=error)

    def message(self, text: str, level: str = "info") -> None:
        self._emit("message", level=level, text=text)

    def campaign_end(self, summary: dict[str, Any]) -> None:
        self._emit("campaign_end", **summary)


class RichReporter(Reporter):
    """A progress bar over the campaign (ETA from the plan's estimate, corrected by
    the actual pace) and one over the current phase; a line per finished point.

    Not on a terminal (a log file, the journal under systemd, CI): only the lines, unwrapped,
    and no progress bar -- a log cannot redraw one."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        if not self.console.is_terminal:
            self.console.soft_wrap = True
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
            refresh_per_second=2,
        )
        self.campaign_task: TaskID | None = None
        self.phase_task: TaskID | None = None
        self.est = 0.0
        self.done_points = 0
        self.point_est = 0.0
        self.point_started = 0.0
        self.phase_base = 0.0
        self.started = False

    def _start(self) -> None:
        if not self.started and self.console.is_terminal:
            self.progress.start()
            self.started = True

    def campaign_start(self, campaign: str, todo: int, skipped: int, estimate_point_s: float,
                       results_dir: str) -> None:
        self._start()
        self.est = max(estimate_point_s, 1.0)
        msg = f"campaign [bold]{campaign}[/]: {plural(todo, 'point')} to run"
        if skipped:
            msg += f", {skipped} already complete (skipped)"
        msg += f"; ~{format_duration(todo * self.est)} estimated"
        self.console.print(msg)
        self.campaign_task = self.progress.add_task(f"{campaign}", total=max(todo, 1) * self.est)

    def point_start(self, point: Point, n: int, total: int) -> None:
        self.point_started = time.monotonic()
        if self.campaign_task is not None:
            self.progress.update(self.campaign_task,
                                 description=f"point {n}/{total}",
                                 completed=self.done_points * self.est)

    def point_skipped(self, point: Point, reason: str) -> None:
        self.console.print(f"[dim]skip {point.id}: {reason}[/]")

    def phase_start(self, point: Point, phase: str, duration_s: float | None) -> None:
        if self.phase_task is not None:
            self.progress.remove_task(self.phase_task)
        label = f"  {phase}"
        self.phase_task = self.progress.add_task(label, total=duration_s or None)
        self.phase_base = time.monotonic() - self.point_started

    def phase_tick(self, elapsed_s: float) -> None:
        if self.phase_task is not None:
            self.progress.update(self.phase_task, completed=elapsed_s)
        if self.campaign_task is not None:
            in_point = min(self.phase_base + elapsed_s, self.est * 0.99)
            self.progress.update(self.campaign_task,
                                 completed=self.done_points * self.est + in_point)

    def phase_end(self, point: Point, phase: str, info: dict[str, Any]) -> None:
        if self.phase_task is not None:
            self.progress.remove_task(self.phase_task)
            self.phase_task = None

    def point_end(self, point: Point, record: dict[str, Any]) -> None:
        self.done_points += 1
        if self.campaign_task is not None:
            self.progress.update(self.campaign_task, completed=self.done_points * self.est)
        style = "green" if record.get("state") == "complete" else "red"
        self.console.print(f"[{style}]{point_line(record)}[/]", highlight=False)

    def published(self, point_id: str, ok: bool, error: str | None) -> None:
        if not ok:
            self.console.print(f"[yellow]not published {point_id}: {error} "
                               "(kept as unpublished; `lsmbench publish` sends it later)[/]")

    def message(self, text: str, level: str = "info") -> None:
        style = {"error": "red", "warning": "yellow"}.get(level, "")
        self.console.print(f"[{style}]{text}[/]" if style else text, highlight=False)

    def campaign_end(self, summary: dict[str, Any]) -> None:
        self.close()
        print(summary_line(summary))

    def close(self) -> None:
        if self.started:
            self.progress.stop()
            self.started = False
