"""The workload a spec names: found by name or path, read, and overridden by its ``set``."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ..util import names
from ..util.paths import workloads_dir
from .models import WorkloadRef
from .overrides import set_dotted
from .reading import read_document


def find_workload_file(ref: str, source: Path | None) -> Path:
    """A workload by name (workloads/NAME.yaml) or by path (relative to the spec or cwd)."""
    cands: list[Path] = []
    p = Path(ref).expanduser()
    if p.is_absolute():
        cands.append(p)
    else:
        if source is not None:
            cands.append(source.parent / p)
        cands.append(Path.cwd() / p)
        wd = workloads_dir()
        cands.append(wd.parent / p)
        cands += [wd / ref, wd / f"{ref}.yaml", wd / f"{ref}.yml", wd / f"{ref}.json"]
    for c in cands:
        if c.is_file():
            return c.resolve()
    wd = workloads_dir()
    known = sorted(x.stem for x in wd.glob("*.y*ml")) if wd.is_dir() else []
    hint = f" (choose from: {names.choices(known)})" if known else " (workloads/ is empty)"
    raise ValueError(f"unknown workload '{ref}'{hint}")


def resolve_workload(ref: WorkloadRef, source: Path | None) -> tuple[dict[str, Any], Path | None]:
    """The workload object the driver gets inline: the file's (or inline) content + 'set'."""
    wfile: Path | None = None
    if ref.file is not None:
        wfile = find_workload_file(ref.file, source)
        data = read_document(wfile, json_file=wfile.suffix == ".json")
        if not isinstance(data, dict):
            raise ValueError(f"{wfile}: expected a mapping of workload fields")
    else:
        data = copy.deepcopy(ref.inline or {})
    for key, value in ref.set.items():
        set_dotted(data, key, value)
    # A trace file (arrival rates, or a RocksDB query trace) is named relative to the workload
    # file; run.json moves, so pin it.
    base = wfile.parent if wfile else (source.parent if source else Path.cwd())
    arrival = data.get("arrival")
    if isinstance(arrival, dict) and isinstance(arrival.get("trace_file"), str):
        arrival["trace_file"] = _pinned(arrival["trace_file"], base)
    if isinstance(data.get("rocksdb_trace"), str):
        data["rocksdb_trace"] = _pinned(data["rocksdb_trace"], base)
    return data, wfile


def _pinned(path: str, base: Path) -> str:
    """A relative file as a workload file is found: beside the workload file (or the spec),
    in the current directory, in the repository, in workloads/."""
    p = Path(path).expanduser()
    if p.is_absolute():
        return str(p)
    wd = workloads_dir()
    for c in (base / p, Path.cwd() / p, wd.parent / p, wd / p):
        if c.is_file():
            return str(c.resolve())
    return str(p)
