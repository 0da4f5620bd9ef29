"""The contract with lsm-driver (engines/driver/README.md): run.json in, three files out.

    lsm-driver --config run.json --out DIR [--quiet]

Exit codes: 0 success; 1 engine failure or an output that could not be
written; 2 bad input (configuration, engine options, output directory);
128+N interrupted by signal N (outputs written, marked "interrupted").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUTPUT_FILES = ("timeseries.jsonl", "summary.json", "histograms.json")
EXIT_OK = 0
EXIT_ENGINE = 1
EXIT_INPUT = 2


def describe_exit(code: int | None) -> str:
    if code is None:
        return "did not exit"
    if code == EXIT_OK:
        return "success"
    if code == EXIT_ENGINE:
        return "engine failure (exit 1)"
    if code == EXIT_INPUT:
        return "bad input: configuration or engine options (exit 2)"
    if code > 128:
        return f"interrupted by signal {code - 128} (exit {code})"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit {code}"


def build_run_json(
    *,
    engine: str,
    engine_options: dict[str, str],
    data_dir: str,
    phase: str,
    workload: dict[str, Any],
    seed: int,
    label: str = "",
    duration_s: float = 0.0,
    warmup_s: float = 0.0,
    threads: int | None = None,
    interval_s: float = 1.0,
    arrival: dict[str, Any] | None = None,
    insert_start: int | None = None,
    progress_s: float = 0.0,
    drain_s: float = 0.0,
    queries: dict[str, Any] | None = None,
    settle_s: float = 0.0,
    engine_plugin: str | None = None,
) -> dict[str, Any]:
    """One run.json document (fields as the driver's README names them). settle_s > 0 makes
    the driver wait (at most that long) for the engine's pending flushes and merges before the
    phase starts; 0 leaves the field out, so documents without it stay as they were."""
    if phase not in ("load", "testing", "running"):
        raise ValueError(f"unknown phase {phase!r}")
    doc: dict[str, Any] = {
        "engine": engine,
        "engine_options": dict(engine_options),
        "dir": data_dir,
        "label": label,
        "workload": workload,
        "phase": phase,
        "duration_s": float(duration_s),
        "warmup_s": float(warmup_s),
        "interval_ms": max(10, round(interval_s * 1000)),
        "seed": int(seed),
        "progress_s": float(progress_s),
    }
    if threads is not None:
        doc["threads"] = int(threads)
    if insert_start is not None:
        doc["insert_start"] = int(insert_start)
    if queries:
        doc["queries"] = dict(queries)
    if phase == "running":
        doc["arrival"] = dict(arrival or {})
        if drain_s:
            doc["drain_s"] = float(drain_s)
    elif arrival or drain_s:
        raise ValueError("arrival and drain_s are only for the running phase")
    if settle_s > 0:
        doc["settle_s"] = float(settle_s)
    if engine_plugin:
        doc["engine_plugin"] = engine_plugin
    return doc


def timeseries_file(path: Path) -> Path | None:
    """The file that holds a phase's intervals: timeseries.jsonl, else the .partial a crash or
    a run still going left; None without either."""
    if path.exists():
        return path
    partial = path.with_name(path.name + ".partial")
    return partial if partial.exists() else None


def read_timeseries(path: Path) -> list[dict[str, Any]]:
    """The intervals of timeseries.jsonl (or of .partial after a crash); a torn last line is
    dropped."""
    found = timeseries_file(path)
    if found is None:
        return []
    out = []
    with open(found) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                break  # a line cut by a kill is the last one
            if isinstance(obj, dict):
                out.append(obj)
    return out


def read_json_object(path: Path) -> dict[str, Any] | None:
    """A JSON object file of a phase or point, None when it is missing, unreadable or not an
    object (a run still going or a crash can leave either)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class DriverOutputs:
    """The parsed outputs of one phase run."""

    dir: Path
    summary: dict[str, Any] | None
    histograms: dict[str, Any] | None
    intervals: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, out_dir: Path) -> DriverOutputs:
        return cls(
            dir=out_dir,
            summary=read_json_object(out_dir / "summary.json"),
            histograms=read_json_object(out_dir / "histograms.json"),
            intervals=read_timeseries(out_dir / "timeseries.jsonl"),
        )

    def missing(self) -> list[str]:
        return [n for n in OUTPUT_FILES if not (self.dir / n).exists()]

    @property
    def status(self) -> str | None:
        return (self.summary or {}).get("status")

    @property
    def next_insert_id(self) -> int | None:
        v = (self.summary or {}).get("next_insert_id")
        return int(v) if v is not None else None

    @property
    def elapsed_s(self) -> float | None:
        v = (self.summary or {}).get("elapsed_s")
        return float(v) if v is not None else None

    def driver_max_write_throughput(self) -> float | None:
        s = self.summary or {}
        v = s.get("max_write_throughput")
        if v is None:
            v = (s.get("throughput") or {}).get("writes_mean")
        return float(v) if v is not None else None
