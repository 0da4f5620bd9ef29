"""Each point's phases checked by the driver itself: ``lsm-driver --check-config``.

    lsm-driver --check-config run.json
    -> {"ok": false, "errors": [{"path": "queries.field", "message": "..."}]}  (exit 1; 0 when ok)

The driver is the one parser of run.json, so the rules between a workload, its queries and the
engine (a secondary field the workload does not define, a selectivity wider than the values a
field takes, secondary fields on an engine without secondary indexes, ...) live there only. The
spec is checked against them before anything runs: each point's load, testing and running phase
as a run.json (the running phase as a closed loop: its rate is not known before the testing
phase, and the rules checked here do not depend on it), each error mapped back to the spec path
that set the field. Engine options are left to ``--check-options`` (options.py).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..driverio import build_run_json
from ..engine_options import plugins
from ..plan import expand_matrix
from ..points import Point, point_spec, point_workload
from ..spec import LoadedSpec
from ..spec.models import CampaignSpec
from .options import TIMEOUT_S, ask_driver

# A data directory the check never creates: --check-config opens nothing.
_CHECK_DIR = "/nonexistent/lsmbench-config-check"


class ConfigProblem(BaseModel):
    path: str
    message: str


class ConfigReply(BaseModel):
    """What --check-config prints on stdout."""

    ok: bool
    errors: list[ConfigProblem] = []


def check_config(driver: Path, doc: dict[str, Any],
                 timeout_s: float = TIMEOUT_S) -> list[ConfigProblem]:
    """The driver's verdict on one run.json; DriverCannotCheck when it gave none."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="lsmbench-check-") as f:
        json.dump(doc, f)
        f.flush()
        return ask_driver([str(driver), "--check-config", f.name], ConfigReply,
                          timeout_s).errors


def _phase_doc(spec: CampaignSpec, point: Point, phase: str,
               workload: dict[str, Any]) -> dict[str, Any]:
    ph = getattr(spec.phases, phase)
    # The warm-up the phase runs with (point_pipeline.py; its rounding to whole intervals is the
    # driver's rule): a testing phase's own or its fraction, a running phase's as given.
    warmup = (ph.warmup_seconds() if phase == "testing"
              else float(ph.warmup) if phase == "running" else 0.0)
    return build_run_json(
        engine=spec.engine.name, engine_options={}, data_dir=_CHECK_DIR,
        engine_plugin=plugins.run_json_path(spec.engine.name, spec.engine.plugin),
        # One seed for all: it decides no rule, and equal documents are asked once.
        phase="load" if phase == "load" else "testing", workload=workload, seed=1,
        duration_s=0.0 if phase == "load" else ph.duration, warmup_s=warmup,
        threads=ph.threads, interval_s=spec.phases.interval,
        queries=None if phase == "load" else ph.queries)


def _spec_path(spec: CampaignSpec, point: Point, phase: str, path: str,
               message: str) -> tuple[str, str]:
    """(spec path, message) of a driver error at run.json `path` in the phase's run.json."""
    head, _, rest = path.partition(".")
    if head == "workload" and rest:
        parts = rest.split(".")
        # The longest of the field's paths (mixgraph.value_sigma, then mixgraph) that a
        # dimension, then the spec's `set` (its dotted keys and nested mappings), sets.
        prefixes = [".".join(parts[:n]) for n in range(len(parts), 0, -1)]
        sources = ["set", "inline"] if spec.workload.inline is not None else ["set"]
        for prefix in prefixes:
            for source in sources:
                if f"workload.{source}.{prefix}" in point.params:
                    return f"matrix.workload.{source}.{prefix}", message
        given = set(_leaf_paths(spec.workload.set))
        for prefix in prefixes:
            if prefix in given:
                return f"workload.set.{prefix}", message
        if spec.workload.inline is not None:
            return f"workload.inline.{parts[0]}", message
        return "workload.file", f"{spec.workload.file}: {rest}: {message}"
    if head in ("queries", "threads") and phase != "load":
        spec_path = f"phases.{phase}.{path}"
        for dim in point.params:
            if spec_path == dim or spec_path.startswith(dim + "."):
                return f"matrix.{dim}", message
        return spec_path, message
    if head == "warmup_s" and phase != "load":
        return (f"phases.{phase}.warmup", f"{message} (the warm-up, given or its default "
                "share of the duration, ends on a whole interval, phases.interval: a longer "
                "duration or a shorter warm-up)")
    return f"phases.{phase}", f"{path}: {message}" if path else message


def _leaf_paths(overrides: dict[str, Any], prefix: str = "") -> list[str]:
    """Every path a workload's `set` gives, its mappings' own included: {"mixgraph":
    {"value_sigma": 1}} -> ["mixgraph", "mixgraph.value_sigma"]."""
    out = []
    for key, value in overrides.items():
        path = f"{prefix}{key}"
        out.append(path)
        if isinstance(value, dict):
            out += _leaf_paths(value, path + ".")
    return out


def config_errors(loaded: LoadedSpec, driver: Path) -> list[tuple[str, str]]:
    """Every error the driver finds in the campaign's phases, as (spec path, message), each
    distinct run.json asked once. DriverCannotCheck when the driver cannot answer."""
    points, _ = expand_matrix(loaded.spec.matrix)
    asked: dict[str, list[ConfigProblem]] = {}
    errors: list[tuple[str, str]] = []
    for point in points:
        spec = point_spec(loaded, point)
        workload = point_workload(loaded, point, spec)
        for phase in ("load", "testing", "running"):
            if not getattr(getattr(spec.phases, phase), "enabled", True):
                continue
            # As the driver will read it: JSON's keys are strings (a YAML mapping may have
            # mixed int and str keys, which sort_keys cannot order).
            doc = json.loads(json.dumps(_phase_doc(spec, point, phase, workload)))
            key = json.dumps(doc, sort_keys=True)
            if key not in asked:
                asked[key] = check_config(driver, doc)
            for problem in asked[key]:
                error = _spec_path(spec, point, phase, problem.path, problem.message)
                if error not in errors:
                    errors.append(error)
    return errors
