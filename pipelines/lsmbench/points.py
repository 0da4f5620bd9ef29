"""A point of the plan and everything resolved about it, once.

:class:`Point` is one matrix combination x one repetition; :func:`resolve_point`
turns it into a :class:`ResolvedPoint` -- the point's spec (dotted dimensions
applied), its workload, the engine options of each phase, the configuration
that decides its measurements and that configuration's hash -- which the
campaign, the pipeline, the store and the sinks read instead of deriving it
again. Phase directory names (``running@0.95`` in a sweep, ``reload@0.95``)
are made and read here too.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from .engine_options import option_string
from .spec import PHASE_NAMES, CampaignSpec, LoadedSpec, resolve_workload, set_dotted
from .spec.checks import dimension_option
from .spec.models import EngineSpec
from .util.digest import canonical_hash
from .util.names import BUILD_DIMENSION, ENGINE_DIMENSION

_SLUG_RE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_ID_LEN = 96
# A reload (phases.running.start: reload) is a load phase: it runs with the load options.
_OPTION_PHASE = {"reload": "load"}


def slug(value: Any) -> str:
    text = option_string(value)
    s = _SLUG_RE.sub("-", text).strip("-")
    return s or "x"


@dataclass(frozen=True)
class Point:
    """One run of the two-phase pipeline: matrix values x one repetition."""

    index: int
    id: str
    params: dict[str, Any]  # dimension -> value, in matrix order
    rep: int
    seed: int

    def label(self) -> str:
        parts = [f"{k}={option_string(v)}" for k, v in self.params.items()]
        return ",".join([*parts, f"rep={self.rep}"])


def point_id(params: dict[str, Any], rep: int) -> str:
    """'policy=tiering,size_ratio=3,rep=0': stable, readable, filesystem-safe.

    Dimension names are shortened to their last dotted part when that is
    unambiguous; ids longer than MAX_ID_LEN keep a prefix plus a hash of the
    full parameters, so they stay unique.
    """
    return _id_text(params, {"params": params, "rep": rep}, [f"rep={rep}"])


def group_id(params: dict[str, Any]) -> str:
    """The id of a point's group, its repetitions: the point id without 'rep=K'
    ('policy=tiering,size_ratio=3'); 'all' for a campaign without matrix dimensions."""
    return _id_text(params, {"params": params}, []) or "all"


def short_names(params: dict[str, Any]) -> dict[str, str]:
    """Each dimension's short name: the last part of a dotted name when no other dimension
    ends the same ('phases.running.queries.operations.get' -> 'get'), else the whole name."""
    lasts = [k.rsplit(".", 1)[-1] for k in params]
    return {k: k.rsplit(".", 1)[-1] if lasts.count(k.rsplit(".", 1)[-1]) == 1 else k
            for k in params}


def _id_text(params: dict[str, Any], hashed: dict[str, Any], tail: list[str]) -> str:
    short = short_names(params)
    parts = [f"{slug(short[k])}={slug(v)}" for k, v in params.items()]
    text = ",".join([*parts, *tail])
    if len(text) > MAX_ID_LEN:
        digest = canonical_hash(hashed, 10)
        text = f"{text[: MAX_ID_LEN - 12].rstrip(',=')}~{digest}"
    return text


def running_dir(utilization: float, sweep: bool, kind: str = "running") -> str:
    """The directory of a running phase (or of its reload: kind 'reload'): 'running' alone,
    'running@0.95' in a utilization sweep."""
    return f"{kind}@{utilization:g}" if sweep else kind


def phase_name(phase_dir: str) -> str:
    """A phase directory's name without its utilization: 'running@0.95' -> 'running',
    'reload@0.5' -> 'reload' (a load phase)."""
    return phase_dir.split("@", 1)[0]


def phase_utilization(phase_dir: str) -> float | None:
    """The utilization in a sweep's phase directory name ('running@0.95' -> 0.95)."""
    if "@" not in phase_dir:
        return None
    try:
        return float(phase_dir.split("@", 1)[1])
    except ValueError:
        return None


def point_engine(spec: CampaignSpec, point: Point) -> tuple[EngineSpec, str]:
    """The engine section a point runs (spec: the campaign's) and its spec path: the entry of
    `engines` its `engine` value names, else `engine`."""
    label = point.params.get(ENGINE_DIMENSION)
    if spec.engines is not None and isinstance(label, str) and label in spec.engines:
        return spec.engines[label], f"engines.{label}"
    return spec.engine, "engine"


def phase_option_sources(spec: CampaignSpec, point: Point,
                         phase: str) -> dict[str, tuple[str, str]]:
    """The engine options a phase runs with: name -> (value as the driver's string, the spec
    path that set it). Lowest to highest precedence: the engine section's options (`engine`,
    or the point's entry of `engines`), the point's engine option dimensions,
    phases.<phase>.engine_options, a phases.<phase>.engine_options.X dimension (spec: the
    campaign's)."""
    ph = _OPTION_PHASE.get(phase_name(phase), phase_name(phase))
    engine, engine_path = point_engine(spec, point)
    chosen: dict[str, tuple[Any, str]] = {
        k: (v, f"{engine_path}.options.{k}") for k, v in engine.options.items()}
    phase_dims: dict[str, tuple[Any, str]] = {}
    for dim, value in point.params.items():
        option = dimension_option(dim)
        if option is None or dim == BUILD_DIMENSION:  # pair:'s builds: not an engine option
            continue
        values = spec.matrix.get(dim)
        i = values.index(value) if isinstance(values, list) and value in values else 0
        source = (value, f"matrix.{dim}[{i}]")
        if not dim.startswith("phases."):
            chosen[option] = source
        elif dim.startswith(f"phases.{ph}.engine_options."):
            phase_dims[option] = source
    for k, v in getattr(spec.phases, ph).engine_options.items():
        chosen[k] = (v, f"phases.{ph}.engine_options.{k}")
    chosen.update(phase_dims)
    return {k: (option_string(v), path) for k, (v, path) in sorted(chosen.items())}


def phase_engine_options(spec: CampaignSpec, point: Point, phase: str) -> dict[str, str]:
    """The engine options a phase runs with, as name -> string for run.json (spec: the
    campaign's)."""
    return {k: v for k, (v, _) in phase_option_sources(spec, point, phase).items()}


def point_spec(loaded: LoadedSpec, point: Point) -> CampaignSpec:
    """The spec as this point sees it: its entry of `engines` as its engine section, dotted
    dimensions applied, matrix dropped."""
    dotted = {k: v for k, v in point.params.items()
              if "." in k and not k.startswith("engine.options.")}
    variant = ENGINE_DIMENSION in point.params and loaded.spec.engines is not None
    if not dotted and not variant:
        return loaded.spec
    raw = copy.deepcopy({k: v for k, v in loaded.raw.items() if k != "matrix"})
    if variant:
        raw["engine"] = raw.pop("engines")[point.params[ENGINE_DIMENSION]]
    for k, v in dotted.items():
        set_dotted(raw, k, v)
    return CampaignSpec.model_validate(raw)


def point_workload(loaded: LoadedSpec, point: Point,
                   spec: CampaignSpec | None = None) -> dict[str, Any]:
    """The workload object of a point: the campaign's, unless a 'workload.*' dimension varies it
    (spec: the point's, when the caller has it)."""
    if not any(k.startswith("workload.") for k in point.params):
        return loaded.workload
    spec = spec if spec is not None else point_spec(loaded, point)
    data, _ = resolve_workload(spec.workload, loaded.source)
    return data


class ResolvedPoint(BaseModel):
    """One point, resolved once by the plan (frozen: nothing downstream changes it)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    point: Point
    spec: CampaignSpec  # the spec as this point sees it (dotted dimensions applied)
    workload: dict[str, Any]
    engine_options: dict[str, dict[str, str]]  # phase (load, testing, running) -> options
    config: dict[str, Any]  # everything that decides the measurements (spec.json)
    config_hash: str  # decides resume

    @property
    def id(self) -> str:
        return self.point.id

    def phase_options(self, phase_dir: str) -> dict[str, str]:
        """The engine options the phase in this directory runs with."""
        name = phase_name(phase_dir)
        return self.engine_options[_OPTION_PHASE.get(name, name)]


def testing_signature(config: dict[str, Any]) -> dict[str, Any]:
    """What a point's testing phase depends on: the tree it starts from and the phase (the
    configuration of :func:`resolve_point`, or a stored spec.json)."""
    phases = config["phases"]
    testing = {k: v for k, v in phases["testing"].items() if k != "shared_across"}
    return {
        "engine": config["engine"],
        "load options": config["engine_options"]["load"],
        "testing options": config["engine_options"]["testing"],
        "workload": config["workload"],
        "load phase": phases["load"],
        "testing phase": testing,
        "seed": config["seed"],
        "throttle": config["throttle"],
    }


def config_hash(config: dict[str, Any]) -> str:
    return canonical_hash(config, 16)


def resolve_point(loaded: LoadedSpec, point: Point) -> ResolvedPoint:
    spec = point_spec(loaded, point)
    workload = point_workload(loaded, point, spec)
    options = {ph: phase_engine_options(loaded.spec, point, ph) for ph in PHASE_NAMES}
    config = {
        "campaign": spec.name,
        "point": point.id,
        "params": point.params,
        "rep": point.rep,
        "seed": point.seed,
        "engine": spec.engine.name,
        "engine_options": options,
        "workload": workload,
        "phases": spec.phases.model_dump(),
        "verdict": spec.verdict.model_dump(),
        "throttle": spec.throttle.model_dump(),
        "testbed": spec.testbed.type,
    }
    if spec.pair is not None:  # only then: the other campaigns' hashes stay what they were
        config["pair"] = spec.pair.model_dump()
    return ResolvedPoint(point=point, spec=spec, workload=workload, engine_options=options,
                         config=config, config_hash=config_hash(config))
