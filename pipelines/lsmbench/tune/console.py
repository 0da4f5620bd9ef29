"""``lsmbench tune``'s result on the terminal: every trial, the confirmed configurations and
the best one (tune.json holds the same, the campaign report shows it)."""

from __future__ import annotations

from ..results.tuning import TuneResult, metric_text, params_text
from ..wording import plural


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
                f"{metric_text(result.objectives[0], c.ci_high)}] over "
                f"{plural(c.repetitions, 'repetition')}, {c.verdict or 'no verdict'}"
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
