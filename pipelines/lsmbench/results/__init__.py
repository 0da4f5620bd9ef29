"""A campaign of the results store as tidy tables, for pandas, DuckDB and notebooks.

    from lsmbench.results import load
    r = load("results/quickstart")          # or load("quickstart", results="results")
    r.points, r.timeseries, r.histograms, r.merges   # pandas DataFrames

Modules by role: ``reading`` (the store's files -> campaign, points, phases: the one reader,
also under the HTML report), ``tables`` (those -> the four DataFrames), ``export`` (the
DataFrames -> Parquet or CSV files, each renamed into place when complete). What each column
means: docs/analysis.md.

pandas is imported only by :func:`load` and the modules that build or write tables, so the
report and ``lsmbench ls``, which read the store through ``reading``, do not pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .reading import (
    Campaign,
    ResultsError,
    StoredPhase,
    StoredPoint,
    read_campaign,
    resolve_campaign_dir,
)

if TYPE_CHECKING:
    import pandas as pd

# The tables, in the order they are written and documented.
TABLES: tuple[str, ...] = ("points", "timeseries", "histograms", "merges")

__all__ = [
    "TABLES", "Campaign", "Results", "ResultsError", "StoredPhase", "StoredPoint", "load",
    "read_campaign", "resolve_campaign_dir",
]


@dataclass(frozen=True)
class Results:
    """One campaign's tables (docs/analysis.md says what each column means)."""

    campaign: str
    path: Path  # the campaign's directory in the store
    points: pd.DataFrame  # one row per point and phase
    timeseries: pd.DataFrame  # one row per driver interval
    histograms: pd.DataFrame  # one row per latency histogram bucket
    merges: pd.DataFrame  # one row per merge the engine told

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, name) for name in TABLES}


def load(path: str | Path, *, results: str | Path | None = None) -> Results:
    """The campaign at ``path`` (its directory, or its name in the store ``results``, default
    ``results/`` or ``$LSMBENCH_RESULTS``) as tables. Raises :class:`ResultsError`, naming the
    path, when it is not a campaign or a file cannot be read."""
    from ..util.paths import default_results_dir
    from .tables import campaign_tables

    root = Path(results) if results is not None else default_results_dir()
    camp_dir = resolve_campaign_dir(Path(path), root)
    campaign = read_campaign(camp_dir)
    return Results(campaign.name, camp_dir, **campaign_tables(campaign))
