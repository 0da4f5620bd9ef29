"""The report's figures in the report's order: the generic ones (figures.py), the merge cycle
(merges.py), the datasets' (datasets.py) and the seed papers' (papers.py), each caption naming
the paper figures it is the counterpart of; last the Workload section's rate (workload.py)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from .datasets import PAPER_FIGURES, dataset_figure, is_dataset, with_paper_references
from .figures import (
    components_figure,
    flushes_figure,
    latency_figure,
    query_figure,
    search_figure,
    sweep_figure,
    throughput_figure,
)
from .load import StoredPoint
from .merges import merges_figure
from .papers import (
    activity_figure,
    merge_cost_figure,
    parameter_figures,
    tradeoff_figure,
    with_generic_references,
)
from .plotting import Figure
from .series import DEFAULT_WINDOW_S
from .workload import RATE_FIGURE, rate_figure


def all_figures(points: Sequence[StoredPoint], window_s: float = DEFAULT_WINDOW_S,
                only: Collection[str] | None = None) -> list[Figure]:
    """Every figure the data supports, in the report's order; with `only`, just the figures of
    those ids ("vs-<parameter>" ones by their id), the others not even drawn."""
    builders: list[tuple[str, Callable[[], Figure | list[Figure] | None]]] = [
        ("throughput", lambda: throughput_figure(points, window_s)),
        ("components", lambda: components_figure(points)),
        ("latency", lambda: latency_figure(points)),
        ("queries", lambda: query_figure(points, window_s)),
        ("flushes", lambda: flushes_figure(points)),
        ("sweep", lambda: sweep_figure(points)),
        ("search", lambda: search_figure(points)),
        ("merges", lambda: merges_figure(points)),
        ("dataset", lambda: dataset_figure(points)),
        ("vs-", lambda: parameter_figures(points)),
        ("tradeoff", lambda: tradeoff_figure(points)),
        ("merge-cost", lambda: merge_cost_figure(points)),
        ("activity", lambda: activity_figure(points)),
        (RATE_FIGURE, lambda: rate_figure(points)),  # the Workload section's
    ]
    out: list[Figure | None] = []
    for key, build in builders:
        if only is not None and not any(o == key or (key.endswith("-") and o.startswith(key))
                                        for o in only):
            continue
        built = build()
        out.extend(built if isinstance(built, list) else [built])
    if only is not None:
        out = [f for f in out if f is None or f.id in only]
    figures = [f for f in out if f is not None]
    if is_dataset(points):
        return with_generic_references(with_paper_references(figures), points,
                                       skip=set(PAPER_FIGURES))
    return with_generic_references(figures, points, skip=set())


