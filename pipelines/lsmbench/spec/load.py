"""Loading a spec: read the file, apply ``--set`` overrides, validate, resolve the workload.

Layers: the models' defaults < the spec file < ``--set key=value`` options,
applied to the raw mapping before validation so that an override is
validated exactly like the text it replaces.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..util.wording import natural_key
from .checks import key_file_errors, pair_errors, semantic_errors, shared_across_errors
from .errors import SpecError, pydantic_errors
from .models import CampaignSpec
from .overrides import apply_set, prune_excludes
from .reading import read_document
from .tune_checks import tune_errors
from .workload import resolve_workload


@dataclass
class LoadedSpec:
    """A validated spec plus what was resolved along the way."""

    spec: CampaignSpec
    raw: dict[str, Any]  # the merged raw mapping (spec + --set), as validated
    source: Path | None
    workload: dict[str, Any]  # the resolved workload object (file + set)
    workload_file: Path | None


def read_yaml(path: Path) -> dict[str, Any]:
    """A spec file's mapping; SpecError 'PATH: why' for anything else (spec.reading)."""
    try:
        data = read_document(path)
    except ValueError as e:
        raise SpecError([("", str(e))], str(path)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SpecError([("", f"{path}: expected a mapping at the top level")], str(path))
    return data


def load_spec(path: str | Path, sets: list[str] | None = None) -> LoadedSpec:
    """Reads, overrides and validates a spec file; raises SpecError listing every error."""
    p = Path(path)
    raw = read_yaml(p)
    return validate_raw(raw, sets=sets, source=p)


def validate_raw(
    raw: dict[str, Any], sets: list[str] | None = None, source: Path | None = None
) -> LoadedSpec:
    raw = copy.deepcopy(raw)
    before = copy.deepcopy(raw.get("matrix"))
    errors: list[tuple[str, str]] = []
    for s in sets or []:
        try:
            apply_set(raw, s)
        except ValueError as e:
            errors.append(("--set", str(e)))
    if errors:
        raise SpecError(errors, str(source or ""))
    if sets:
        prune_excludes(raw.get("matrix"), before)
    spec: CampaignSpec | None = None
    try:
        spec = CampaignSpec.model_validate(raw)
    except ValidationError as e:
        errors.extend(pydantic_errors(e))
    errors.extend(semantic_errors(raw, source))
    if spec is not None:
        errors.extend(shared_across_errors(spec))
        errors.extend(pair_errors(spec))
        errors.extend(key_file_errors(spec.testbed))
        if spec.tune is not None:
            errors.extend(tune_errors(spec, raw))
    workload: dict[str, Any] = {}
    wfile: Path | None = None
    if spec is not None and not errors:
        try:
            workload, wfile = resolve_workload(spec.workload, source)
        except ValueError as e:
            errors.append(("workload", str(e)))
    if errors:
        raise SpecError(_ordered(errors, raw), str(source or ""))
    assert spec is not None
    return LoadedSpec(spec=spec, raw=raw, source=source, workload=workload, workload_file=wfile)


def _ordered(errors: list[tuple[str, str]], raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Errors in the order of the spec's top-level keys, then by path; no duplicates."""
    order = {k: i for i, k in enumerate(raw)}
    seen: set[tuple[str, str]] = set()
    out = []
    for e in errors:
        if e not in seen:
            seen.add(e)
            out.append(e)

    def key(e: tuple[str, str]) -> tuple[int, tuple[tuple[int, str | int], ...]]:
        top = re.split(r"[.\[]", e[0], maxsplit=1)[0]
        # Indexes by value: matrix.x[99] before matrix.x[999].
        return (order.get(top, -1 if top == "--set" else len(order)), natural_key(e[0]))

    return sorted(out, key=key)


