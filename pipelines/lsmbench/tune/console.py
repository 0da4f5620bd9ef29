"""``lsmbench tune``'s result on the terminal: every trial, the confirmed configurations and
the best one (tune.json holds the same, the campaign report shows it), laid out for the
terminal's width as every command's output is (lsmbench.util.terminal): no number is broken across
lines. With --quiet, the best line alone."""

from __future__ import annotations

from ..results.tuning import TuneResult, metric_text, params_text
from ..util.terminal import Rows, final, make_console, say, terminal_width
from ..util.wording import plural

SPEC_OWN = " (spec's own)"


def print_result(result: TuneResult, quiet: bool = False) -> None:
    width = terminal_width()
    console = make_console(width)
    if not quiet:
        rows = Rows(("trial", "state", "params", *result.objectives, "verdict", "note"),
                    right=frozenset({0}), title=f"study {result.campaign}", prefix="trial ")
        for r in result.rows:
            vals = [metric_text(o, (r.values or [None] * len(result.objectives))[i])
                    for i, o in enumerate(result.objectives)]
            mark = SPEC_OWN if r.defaults else ""
            rows.add(str(r.number), r.state + mark, params_text(r.params), *vals,
                     r.verdict or "-", r.note or "")
        rows.print(console, width)
        for c in result.confirmed:
            say(console,
                f"confirmed {params_text(c.params)}{SPEC_OWN if c.defaults else ''}: "
                f"median {metric_text(result.objectives[0], c.median)} "
                f"[{metric_text(result.objectives[0], c.ci_low)} .. "
                f"{metric_text(result.objectives[0], c.ci_high)}] over "
                f"{plural(c.repetitions, 'repetition')}, {c.verdict or 'no verdict'}"
                f"{'' if c.feasible else ', constraints not met in every repetition'}", width)
    final(console, final_line(result), width, quiet)


def final_line(result: TuneResult) -> str:
    """The one line --quiet prints: the best configuration, or that there is none."""
    best = result.best
    if best is None:
        return f"no trial of {result.trials} gave a result (see {result.study})"
    judged = best.verdict or "not judged (no running phase)"
    return (f"best: {params_text(best.params)}: {result.objectives[0]} "
            f"{metric_text(result.objectives[0], best.value)} ({best.basis}); "
            f"verdict: {judged}; {result.trials} trials "
            f"({result.pruned} pruned, {result.failed} failed); study {result.study}")
