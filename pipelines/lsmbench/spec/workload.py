"""The workload a spec names: found by name or path, read, and overridden by its ``set``.

``set`` rule (:func:`apply_workload_set`): a key (dotted keys reach nested fields) takes its
value, except that a mapping given where the workload has a mapping overrides it field by field,
recursively: ``{mixgraph: {value_sigma: 30}}`` (what a matrix dimension
``workload.set.mixgraph.value_sigma`` becomes) keeps every other field of the file's mixgraph.
Two mappings are taken whole, as the driver reads them: ``operations`` (a mix: its shares sum
to 1) and an ``arrival`` naming another ``process`` (run.json's arrival replaces a workload's
so too)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ..util import names
from ..util.paths import workloads_dir
from .models import WorkloadRef
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
    apply_workload_set(data, ref.set)
    # A trace file (arrival rates, or a RocksDB query trace) is named relative to the workload
    # file; run.json moves, so pin it.
    base = wfile.parent if wfile else (source.parent if source else Path.cwd())
    arrival = data.get("arrival")
    if isinstance(arrival, dict) and isinstance(arrival.get("trace_file"), str):
        arrival["trace_file"] = _pinned(arrival["trace_file"], base)
    if isinstance(data.get("rocksdb_trace"), str):
        data["rocksdb_trace"] = _pinned(data["rocksdb_trace"], base)
    return data, wfile


# Mappings that a mapping in `set` replaces whole (see the module's docstring).
_WHOLE = frozenset({"operations"})


def apply_workload_set(data: dict[str, Any], overrides: dict[str, Any]) -> None:
    """Applies a spec's ``workload.set`` to the workload object ``data`` (in place): each key,
    dotted or not, set to its value; a mapping onto a mapping merged field by field (the
    module's rule)."""
    for key, value in overrides.items():
        _set_field(data, str(key).split("."), value)


def _set_field(data: dict[str, Any], parts: list[str], value: Any) -> None:
    node = data
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    name = parts[-1]
    current = node.get(name)
    if (isinstance(value, dict) and isinstance(current, dict) and name not in _WHOLE
            and not _other_process(name, current, value)):
        for key, sub in value.items():
            _set_field(current, str(key).split("."), sub)
    else:
        node[name] = copy.deepcopy(value)


def _other_process(name: str, current: dict[str, Any], value: dict[str, Any]) -> bool:
    """An arrival that names another process than the workload's: taken whole."""
    return (name == "arrival" and "process" in value
            and value["process"] != current.get("process"))


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
