"""`lsmbench export`: a campaign's tables as Parquet or CSV files, one per table.

Each file is written under a temporary name in the output directory and renamed over its final
name once complete and synced: a reader sees the old file or the new one, never half of one,
and an export that fails (a full disk) leaves no partial file behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from . import TABLES, Results

Format = Literal["parquet", "csv"]
FORMATS: tuple[Format, ...] = ("parquet", "csv")
EXPORT_DIR = "export"  # the default output directory, inside the campaign's


@dataclass(frozen=True)
class ExportedTable:
    name: str
    path: Path
    rows: int
    columns: int


def _writer(fmt: Format) -> Callable[[pd.DataFrame, Path], None]:
    if fmt == "parquet":
        return lambda df, path: df.to_parquet(path, engine="pyarrow", index=False)
    return lambda df, path: df.to_csv(path, index=False)


def _write_atomic(df: pd.DataFrame, path: Path, write: Callable[[pd.DataFrame, Path], None]
                  ) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(df, tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def table_names(fmt: Format) -> list[str]:
    """The file names write_tables writes."""
    return [f"{name}.{fmt}" for name in TABLES]


def write_tables(results: Results, out_dir: Path, fmt: Format) -> list[ExportedTable]:
    """Writes <out_dir>/<table>.<fmt> for every table (empty ones too, with their columns).
    Raises OSError when the directory or a file cannot be written."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    write = _writer(fmt)
    written = []
    for name in TABLES:
        df = getattr(results, name)
        path = out_dir / f"{name}.{fmt}"
        _write_atomic(df, path, write)
        written.append(ExportedTable(name, path, len(df), len(df.columns)))
    return written
