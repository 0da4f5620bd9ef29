"""The campaign spec: its schema, its layered overrides and its validation.

A spec is YAML. Validation happens in two passes and lists *every* error by
its path (``matrix.scheduler[2]: unknown scheduler 'gredy' (choose from:
single, fair, ...)``):

1. structure, by the pydantic models below (unknown keys, types, ranges);
2. semantics, by :func:`_semantic_errors` (matrix dimensions, zip/exclude
   rules, the policy and scheduler names kept in :mod:`lsmbench.names`,
   the workload file).

Layers: the models' defaults < the spec file < ``--set key=value`` options
(:func:`apply_sets`), applied to the raw mapping before validation so that an
override is validated exactly like the text it replaces.
"""

from __future__ import annotations

import copy
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from . import names
from .paths import workloads_dir
from .units import parse_duration

PHASE_NAMES: tuple[str, ...] = ("load", "testing", "running")
MATRIX_RESERVED: tuple[str, ...] = ("zip", "exclude", "repetitions", "seeds")
# Dotted matrix dimensions may set any of these parts of the spec per point.
# The throttle fields a matrix point may set (the others are campaign-wide).
PER_POINT_THROTTLE_FIELDS: tuple[str, ...] = ("throttle.enabled", "throttle.phases")

DOTTED_DIMENSION_ROOTS: tuple[str, ...] = ("engine", "phases", "workload", "verdict", "throttle",
                                           "testbed")
CREDENTIAL_KEYS = frozenset({"token", "password", "api_key", "apikey", "secret", "auth"})

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
_OPTION_RE = re.compile(r"^[a-z_][a-z0-9_.]*$")
_PERCENT_RE = re.compile(r"^\s*[0-9]*\.?[0-9]+\s*%\s*$")


class SpecError(Exception):
    """A spec that does not validate: ``errors`` holds (path, message) pairs."""

    def __init__(self, errors: list[tuple[str, str]], source: str = "") -> None:
        self.errors = errors
        self.source = source
        lines = [f"{p}: {m}" if p else m for p, m in errors]
        super().__init__("\n".join(lines))

    def lines(self) -> list[str]:
        return [f"{p}: {m}" if p else m for p, m in self.errors]


def _duration(v: Any) -> Any:
    return parse_duration(v) if v is not None else v


Duration = Annotated[float, BeforeValidator(_duration)]
EngineOptions = dict[str, Any]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


# ---------------------------------------------------------------- engine


class EngineSpec(Strict):
    """The engine the driver measures and its options (passed to its adapter by name)."""

    name: str = "builtin"
    options: EngineOptions = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _known_engine(cls, v: str) -> str:
        if v not in names.ENGINES:
            raise ValueError(f"unknown engine '{v}' (choose from: {names.choices(names.ENGINES)})")
        return v


# ---------------------------------------------------------------- workload


class WorkloadRef(Strict):
    """A workload file (a name in workloads/ or a path) or an inline workload, plus overrides."""

    file: str | None = None
    inline: dict[str, Any] | None = None
    set: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_source(self) -> WorkloadRef:
        if (self.file is None) == (self.inline is None):
            raise ValueError("give exactly one of 'file' (a workload in workloads/) or 'inline'")
        return self


def _workload_shorthand(v: Any) -> Any:
    return {"file": v} if isinstance(v, str) else v


# ---------------------------------------------------------------- phases


class LoadPhase(Strict):
    enabled: bool = True
    threads: int | None = Field(default=None, ge=1, le=1024)
    engine_options: EngineOptions = Field(default_factory=dict)
    timeout: Duration | None = None


class TestingPhase(Strict):
    duration: Duration = Field(default=600.0, gt=0)
    warmup: Duration | None = None
    warmup_fraction: float = Field(default=1 / 6, ge=0, lt=1)
    threads: int | None = Field(default=None, ge=1, le=1024)
    queries: dict[str, Any] | None = None
    engine_options: EngineOptions = Field(default_factory=dict)
    timeout: Duration | None = None
    # Matrix dimensions that do not change the testing phase (typically the running
    # phase's scheduler): points that differ only in them, in the same repetition, share
    # one testing phase -- run by the first of them -- and so run at the same rate.
    shared_across: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _warmup_shorter(self) -> TestingPhase:
        if self.warmup is not None and self.warmup >= self.duration:
            raise ValueError(
                f"warmup ({self.warmup:g}s) must be shorter than duration ({self.duration:g}s)"
            )
        return self

    def warmup_seconds(self) -> float:
        return self.warmup if self.warmup is not None else self.duration * self.warmup_fraction


class RunningPhase(Strict):
    enabled: bool = True
    duration: Duration = Field(default=600.0, gt=0)
    warmup: Duration = 0.0
    utilization: float = Field(default=0.95, gt=0, le=2)
    utilizations: list[Annotated[float, Field(gt=0, le=2)]] | None = None
    arrival: dict[str, Any] = Field(default_factory=dict)
    drain: Duration = 0.0
    threads: int | None = Field(default=None, ge=1, le=1024)
    queries: dict[str, Any] | None = None
    engine_options: EngineOptions = Field(default_factory=dict)
    start: Literal["snapshot", "reload", "continue"] = "snapshot"
    timeout: Duration | None = None

    @field_validator("utilizations")
    @classmethod
    def _sweep(cls, v: list[float] | None) -> list[float] | None:
        if v is not None:
            if not v:
                raise ValueError("give at least one utilization, or leave the sweep out")
            if len(set(v)) != len(v):
                raise ValueError(f"duplicate utilizations in {v}")
        return v

    @field_validator("arrival")
    @classmethod
    def _no_rate(cls, v: dict[str, Any]) -> dict[str, Any]:
        if "rate" in v:
            raise ValueError(
                "'rate' is computed (utilization x the testing phase's maximum); set "
                "'utilization' instead"
            )
        return v

    @model_validator(mode="after")
    def _warmup_shorter(self) -> RunningPhase:
        if self.warmup >= self.duration:
            raise ValueError(
                f"warmup ({self.warmup:g}s) must be shorter than duration ({self.duration:g}s)"
            )
        return self

    def sweep(self) -> list[float]:
        """The utilizations the running phase is run at, in the order given."""
        return list(self.utilizations) if self.utilizations else [self.utilization]

    def headline_utilization(self) -> float:
        """The utilization the point's verdict refers to."""
        sweep = self.sweep()
        return self.utilization if self.utilization in sweep else max(sweep)


class Phases(Strict):
    interval: Duration = Field(default=1.0, ge=0.01, le=3600)
    load: LoadPhase = Field(default_factory=LoadPhase)
    testing: TestingPhase = Field(default_factory=TestingPhase)
    running: RunningPhase = Field(default_factory=RunningPhase)


class VerdictSpec(Strict):
    """Sustainable = p99 write latency under a bound and no growing backlog."""

    p99_write_latency: Duration = Field(default=1.0, gt=0)
    max_backlog: Duration = Field(default=1.0, ge=0)


# ---------------------------------------------------------------- throttle


def _check_rate(v: Any, kind: str) -> Any:
    """Syntax check with the throttle's own parser (percentages need a profile: range only)."""
    if v is None:
        return v
    from .calibrate import resolve_relative  # the throttle's grammar lives with calibration

    if isinstance(v, str) and _PERCENT_RE.match(v):
        pct = float(v.strip().rstrip("%"))
        if not 0 < pct <= 100:
            raise ValueError(f"a percentage of the calibrated disk must be in (0, 100], got {v!r}")
        return v
    resolve_relative(v, None, kind=kind)
    return v


class ThrottleSpec(Strict):
    """cgroup I/O limits on the data disk; percentages are of the fio-calibrated disk."""

    enabled: bool = True
    write_bps: Any = None
    read_bps: Any = None
    write_iops: Any = None
    read_iops: Any = None
    device: str = "auto"
    cpus: str | None = None
    cpu_quota: float | None = Field(default=None, gt=0)
    phases: list[Literal["load", "testing", "running"]] = Field(
        default_factory=lambda: list(PHASE_NAMES)
    )
    required: bool = True

    @field_validator("write_bps", "read_bps", "write_iops", "read_iops")
    @classmethod
    def _rate(cls, v: Any, info: ValidationInfo) -> Any:
        return _check_rate(v, str(info.field_name))

    def limits_given(self) -> bool:
        return any(x is not None for x in (self.write_bps, self.read_bps, self.write_iops,
                                            self.read_iops))


# ---------------------------------------------------------------- sinks


class InfluxSinkSpec(Strict):
    """InfluxDB (v1 database or v2 org/bucket). Credentials only from env or a file."""

    url: str
    api: Literal["v1", "v2"] | None = None
    database: str | None = None
    retention_policy: str | None = None
    org: str | None = None
    bucket: str | None = None
    username: str | None = None
    token_env: str | None = "LSMBENCH_INFLUX_TOKEN"
    token_file: str | None = None
    measurement_prefix: str = "lsm"
    tags: dict[str, str] = Field(default_factory=dict)
    timeout: Duration = Field(default=10.0, gt=0)
    retries: int = Field(default=3, ge=0, le=20)

    @field_validator("url")
    @classmethod
    def _http(cls, v: str) -> str:
        if not re.match(r"^https?://[^\s/]+", v):
            raise ValueError(f"expected an http:// or https:// URL, got {v!r}")
        return v.rstrip("/")

    @model_validator(mode="after")
    def _target(self) -> InfluxSinkSpec:
        if self.bucket is not None and self.org is None:
            raise ValueError("an InfluxDB 2 bucket needs its 'org'")
        if self.database is None and self.bucket is None:
            self.database = "lsmbench"
        return self


class Sinks(Strict):
    influx: InfluxSinkSpec | None = None


# ---------------------------------------------------------------- testbeds


class _NodeDefaults(Strict):
    data_dir: str = "/var/tmp/lsmbench"
    drop_caches: bool = False
    fstrim: bool = False
    keep_data: bool = False


class LocalTestbed(_NodeDefaults):
    type: Literal["local"] = "local"
    driver: str | None = None
    calibration: str | None = None


DiskKind = Literal["ssd", "hdd"]


class SshHost(Strict):
    """One data disk of a node (a node with two data disks is listed twice, one entry per
    disk, each with its own data_dir and name). The key file is a path: never the key."""

    address: str
    name: str | None = None
    user: str | None = None
    port: int = Field(default=22, ge=1, le=65535)
    key_file: str | None = None
    data_dir: str | None = None
    device: str = "auto"
    disk: DiskKind = "ssd"
    remote_root: str | None = None  # this node's, when not the testbed's


class _RemoteDefaults(_NodeDefaults):
    """What the ssh and terraform testbeds share: how nodes are deployed and used."""

    playbook: str = "ansible/playbooks/deploy.yml"
    remote_root: str = "/var/lib/lsmbench"
    python: str = "/usr/bin/python3"
    # Run the node helper and Ansible with sudo (non-root users; the throttle needs root).
    become: bool = False
    # A point whose node fails (unreachable, driver killed) runs again on another node
    # this many times before it is recorded as failed.
    retries: int = Field(default=1, ge=0, le=10)
    # Which disk kind the points ask for ("any": every node); a matrix dimension
    # `testbed.disk: [ssd, hdd]` spreads the points over both kinds.
    disk: Literal["any", "ssd", "hdd"] = "any"
    # Extra variables for the deploy playbook (no secrets: those go by path or env).
    ansible_vars: dict[str, Any] = Field(default_factory=dict)


class SshTestbed(_RemoteDefaults):
    type: Literal["ssh"]
    hosts: list[SshHost] = Field(default_factory=list)
    inventory: str | None = None

    @model_validator(mode="after")
    def _some_hosts(self) -> SshTestbed:
        if not self.hosts and not self.inventory:
            raise ValueError("give 'hosts' (a list of {address, user, ...}) or an 'inventory' file")
        return self


class TerraformTestbed(_RemoteDefaults):
    type: Literal["terraform"]
    module: str
    workspace: str = "default"
    variables: dict[str, Any] = Field(default_factory=dict)
    reuse: bool = True
    destroy: Literal["never", "on-success", "always"] = "never"
    ssh_user: str | None = None
    key_file: str | None = None


class NamedTestbed(Strict):
    """`testbed: NAME`: a testbed brought up with `lsmbench testbed up NAME` (its definition and
    state are under testbeds/NAME/); the campaign reuses it without reprovisioning."""

    type: Literal["named"]
    name: str
    disk: Literal["any", "ssd", "hdd"] = "any"
    keep_data: bool = False

    @field_validator("name")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(f"bad testbed name {v!r} (letters, digits, '.', '_', '-')")
        return v

    @property
    def data_dir(self) -> str:
        """Each node's own (testbeds/NAME/testbed.yml); shown by `lsmbench plan`."""
        return f"on each node of testbed {self.name}"


Testbed = Annotated[LocalTestbed | SshTestbed | TerraformTestbed | NamedTestbed,
                    Field(discriminator="type")]
TESTBED_TYPES: tuple[str, ...] = names.TESTBEDS


def _throttle_shorthand(v: Any) -> Any:
    if v is None or v is False or (isinstance(v, str) and v.lower() in ("none", "off")):
        return {"enabled": False}
    return v


def _testbed_shorthand(v: Any) -> Any:
    """`testbed: local` is the local testbed; `testbed: NAME` a testbed named NAME."""
    if isinstance(v, str):
        return {"type": v} if v in TESTBED_TYPES else {"type": "named", "name": v}
    return v


# ---------------------------------------------------------------- campaign


class CampaignSpec(Strict):
    name: str
    description: str = ""
    engine: EngineSpec = Field(default_factory=EngineSpec)
    matrix: dict[str, Any] = Field(default_factory=dict)
    workload: Annotated[WorkloadRef, BeforeValidator(_workload_shorthand)]
    phases: Phases = Field(default_factory=Phases)
    verdict: VerdictSpec = Field(default_factory=VerdictSpec)
    throttle: Annotated[ThrottleSpec, BeforeValidator(_throttle_shorthand)] = Field(
        default_factory=lambda: ThrottleSpec(enabled=False)
    )
    sinks: Sinks = Field(default_factory=Sinks)
    testbed: Annotated[Testbed, BeforeValidator(_testbed_shorthand)] = Field(
        default_factory=LocalTestbed
    )

    @field_validator("name")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(
                f"bad campaign name {v!r} (letters, digits, '.', '_', '-'; at most 80 characters)"
            )
        return v


# ---------------------------------------------------------------- loading


@dataclass
class LoadedSpec:
    """A validated spec plus what was resolved along the way."""

    spec: CampaignSpec
    raw: dict[str, Any]  # the merged raw mapping (spec + --set), as validated
    source: Path | None
    workload: dict[str, Any]  # the resolved workload object (file + set)
    workload_file: Path | None


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as e:
        raise SpecError([("", f"cannot read {path}: {e.strerror}")]) from e
    except yaml.YAMLError as e:
        raise SpecError([("", f"{path}: not valid YAML: {e}")]) from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SpecError([("", f"{path}: expected a mapping at the top level")])
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
    errors: list[tuple[str, str]] = []
    for s in sets or []:
        try:
            apply_set(raw, s)
        except ValueError as e:
            errors.append(("--set", str(e)))
    if errors:
        raise SpecError(errors, str(source or ""))
    spec: CampaignSpec | None = None
    try:
        spec = CampaignSpec.model_validate(raw)
    except ValidationError as e:
        errors.extend(_pydantic_errors(e))
    errors.extend(_semantic_errors(raw, source))
    if spec is not None:
        errors.extend(_shared_testing_errors(spec))
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

    def key(e: tuple[str, str]) -> tuple[int, str]:
        top = re.split(r"[.\[]", e[0], maxsplit=1)[0]
        return (order.get(top, -1 if top == "--set" else len(order)), e[0])

    return sorted(out, key=key)


# ---------------------------------------------------------------- --set


_SET_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _split_set_path(path: str) -> list[str | int]:
    """'matrix.size_ratio[1]' -> ['matrix', 'size_ratio', 1]; under matrix the rest is one key."""
    if path.startswith("matrix.") and not re.search(r"\[\d+\]$", path):
        return ["matrix", path[len("matrix."):]]
    parts: list[str | int] = []
    pos = 0
    for m in _SET_PART.finditer(path):
        if m.start() != pos and path[pos:m.start()] != ".":
            raise ValueError(f"bad key path {path!r}")
        parts.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    if not parts or pos != len(path):
        raise ValueError(f"bad key path {path!r}")
    return parts


def apply_set(raw: dict[str, Any], assignment: str) -> None:
    """Applies one ``key.path=value`` override (value read as YAML) to the raw spec."""
    if "=" not in assignment:
        raise ValueError(f"expected key=value, got {assignment!r}")
    key, _, text = assignment.partition("=")
    key = key.strip()
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError as e:
        raise ValueError(f"{key}: value {text!r} is not valid YAML: {e}") from e
    parts = _split_set_path(key)
    node: Any = raw
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                raise ValueError(f"{key}: index {part} out of range")
            if not isinstance(node[part], dict | list):
                node[part] = [] if isinstance(nxt, int) else {}
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise ValueError(f"{key}: {part!r} is not inside a mapping")
            if part in ("workload", "testbed") and isinstance(node.get(part), str):
                node[part] = (_workload_shorthand(node[part]) if part == "workload"
                              else _testbed_shorthand(node[part]))
            if not isinstance(node.get(part), dict | list):
                node[part] = [] if isinstance(nxt, int) else {}
            node = node[part]
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise ValueError(f"{key}: index {last} out of range")
        node[last] = value
    else:
        if not isinstance(node, dict):
            raise ValueError(f"{key}: {last!r} is not inside a mapping")
        node[last] = value


def set_dotted(raw: dict[str, Any], path: str, value: Any) -> None:
    """Sets raw[a][b][c] = value for 'a.b.c', creating mappings on the way."""
    node = raw
    parts = path.split(".")
    for part in parts[:-1]:
        if part in ("workload", "testbed") and isinstance(node.get(part), str):
            node[part] = ({"file": node[part]} if part == "workload"
                          else _testbed_shorthand(node[part]))
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[parts[-1]] = value


# ---------------------------------------------------------------- pydantic errors


def _unwrap(t: Any) -> Any:
    while True:
        origin = typing.get_origin(t)
        if origin is Annotated:
            t = typing.get_args(t)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(t) if a is not type(None)]
            if len(args) == 1:
                t = args[0]
                continue
        return t


def _is_model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _walk(loc: tuple[Any, ...]) -> tuple[str, Any]:
    """The display path of a pydantic loc and the model that holds its last key.

    Drops discriminator tags (testbed.ssh.hosts -> testbed.hosts) and the
    names pydantic gives to validator wrappers.
    """
    t: Any = CampaignSpec
    path = ""
    parent: Any = None
    i = 0
    while i < len(loc):
        elem = loc[i]
        t = _unwrap(t)
        origin = typing.get_origin(t)
        if _is_model(t):
            parent = t
            field = t.model_fields.get(str(elem))
            path += f".{elem}" if path else str(elem)
            t = field.annotation if field is not None else None
            i += 1
            continue
        if origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(t) if _is_model(_unwrap(a))]
            chosen = None
            for m in members:
                tf = _unwrap(m).model_fields.get("type")
                if tf is not None and typing.get_args(tf.annotation) == (elem,):
                    chosen = m
            if chosen is not None:
                t = chosen
                i += 1
                continue
        if origin in (list, tuple) and isinstance(elem, int):
            path += f"[{elem}]"
            t = typing.get_args(t)[0] if typing.get_args(t) else None
            i += 1
            continue
        if origin is dict:
            path += f".{elem}"
            t = typing.get_args(t)[1] if typing.get_args(t) else None
            parent = None
            i += 1
            continue
        # Unknown structure (wrappers, free-form values): show the rest verbatim.
        if isinstance(elem, int):
            path += f"[{elem}]"
        elif not str(elem).startswith("function-"):
            path += f".{elem}" if path else str(elem)
        parent = None
        t = None
        i += 1
    return path, parent


def _allowed_fields(model: Any) -> str:
    fields = [n for n in model.model_fields if n != "type"] if _is_model(model) else []
    return names.choices(fields)


def _pydantic_errors(exc: ValidationError) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        kind = err["type"]
        msg = err["msg"]
        value = err.get("input")
        ctx = err.get("ctx") or {}
        if kind == "extra_forbidden":
            path, parent = _walk(loc)
            key = loc[-1]
            if str(key).lower() in CREDENTIAL_KEYS:
                msg = (
                    f"credentials never go in the spec text: set the environment variable named "
                    f"by 'token_env' or put the secret in the file named by 'token_file' "
                    f"(not '{key}')"
                )
            else:
                msg = f"unknown key '{key}' (allowed: {_allowed_fields(parent)})"
            out.append((path, msg))
            continue
        path, _ = _walk(loc)
        if kind == "missing":
            msg = "required"
        elif kind == "value_error":
            msg = str(ctx.get("error", msg))
            msg = msg.removeprefix("Value error, ")
        elif kind == "literal_error":
            expected = re.sub(r"'([^']*)'", r"\1", str(ctx.get("expected", "")))
            expected = expected.replace(" or ", ", ")
            msg = f"unknown value {value!r} (choose from: {expected})"
        elif kind == "union_tag_invalid":
            tags = re.sub(r"'([^']*)'", r"\1", str(ctx.get("expected_tags", "")))
            # `named` is written as `testbed: NAME`, never as a type.
            tags = ", ".join(t for t in tags.split(", ") if t != "named")
            msg = f"unknown {path} type {ctx.get('tag')!r} (choose from: {tags})"
        elif kind == "union_tag_not_found":
            msg = f"missing 'type' (choose from: {names.choices(names.TESTBEDS)})"
        elif kind in ("model_type", "dict_type"):
            msg = f"expected a mapping, got {value!r}"
        else:
            msg = f"{msg.replace('Input should be', 'must be')} (got {value!r})"
        out.append((path, msg))
    return out


# ---------------------------------------------------------------- semantics


def _is_scalar(v: Any) -> bool:
    return isinstance(v, str | int | float | bool)


def _check_engine_options(opts: Any, path: str) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    if not isinstance(opts, dict):
        return errors  # pydantic reports the type
    for key, value in opts.items():
        if not isinstance(key, str) or not _OPTION_RE.match(key):
            errors.append((f"{path}.{key}", "bad engine option name (lower_case_with_underscores)"))
            continue
        if not _is_scalar(value):
            errors.append((f"{path}.{key}", f"expected a scalar value, got {value!r}"))
            continue
        errors.extend(_check_named_value(key, value, f"{path}.{key}"))
    return errors


def _check_named_value(option: str, value: Any, path: str) -> list[tuple[str, str]]:
    option = names.DIMENSION_ALIASES.get(option, option)
    if option in names.CHECKED_ENGINE_OPTIONS:
        allowed, label = names.CHECKED_ENGINE_OPTIONS[option]
        if value not in allowed:
            return [(path, f"unknown {label} '{value}' (choose from: {names.choices(allowed)})")]
    return []


def _semantic_errors(raw: dict[str, Any], source: Path | None) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    engine = raw.get("engine")
    if isinstance(engine, dict):
        errors += _check_engine_options(engine.get("options", {}), "engine.options")
    phases = raw.get("phases")
    if isinstance(phases, dict):
        for ph in PHASE_NAMES:
            section = phases.get(ph)
            if isinstance(section, dict) and "engine_options" in section:
                errors += _check_engine_options(
                    section["engine_options"], f"phases.{ph}.engine_options"
                )
    matrix = raw.get("matrix", {})
    if matrix is None:
        matrix = {}
    if not isinstance(matrix, dict):
        errors.append(("matrix", f"expected a mapping of dimensions, got {matrix!r}"))
    else:
        errors += matrix_errors(matrix, raw)
    wref = raw.get("workload")
    wfile = wref if isinstance(wref, str) else (
        wref.get("file") if isinstance(wref, dict) else None)
    if isinstance(wfile, str):
        try:
            find_workload_file(wfile, source)
        except ValueError as e:
            errors.append(("workload", str(e)))
    return errors


def _shared_testing_errors(spec: CampaignSpec) -> list[tuple[str, str]]:
    shared = spec.phases.testing.shared_across
    if not shared:
        return []
    path = "phases.testing.shared_across"
    errors: list[tuple[str, str]] = []
    dims = [k for k in spec.matrix if k not in MATRIX_RESERVED]
    for i, name in enumerate(shared):
        if name not in dims:
            errors.append((f"{path}[{i}]", f"{name!r} is not a matrix dimension (the "
                                           f"dimensions: {names.choices(dims) or 'none'})"))
        elif name.startswith("phases.testing.") or name.startswith("phases.load."):
            errors.append((f"{path}[{i}]", f"{name!r} changes the testing phase (or the tree "
                                           "it starts from), so points differing in it "
                                           "cannot share one"))
    if len(set(shared)) != len(shared):
        errors.append((path, "a dimension is listed twice"))
    if spec.phases.running.start == "continue":
        errors.append((path, "needs phases.running.start 'snapshot' or 'reload': with "
                             "'continue' each running phase starts from its own testing "
                             "phase's tree"))
    if spec.testbed.type != "local":
        errors.append((path, "only on a local testbed: the nodes of a remote testbed may "
                             "differ in speed, so one node's maximum is not another's"))
    return errors


def matrix_errors(matrix: dict[str, Any], raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Every error in a raw matrix mapping, each with its path under 'matrix'."""
    errors: list[tuple[str, str]] = []
    dims: dict[str, list[Any]] = {}
    for key, values in matrix.items():
        if key in MATRIX_RESERVED:
            continue
        path = f"matrix.{key}"
        if not isinstance(key, str) or not key:
            errors.append((path, "a dimension needs a name"))
            continue
        if key == "rep":
            errors.append((path, "'rep' is reserved for the repetition number "
                                 "(use matrix.repetitions)"))
            continue
        if "." in key:
            root = key.split(".", 1)[0]
            if root not in DOTTED_DIMENSION_ROOTS:
                errors.append((
                    path,
                    f"a dotted dimension sets a part of the spec; it must start with one of: "
                    f"{names.choices(DOTTED_DIMENSION_ROOTS)}",
                ))
                continue
            if root == "throttle" and key not in PER_POINT_THROTTLE_FIELDS:
                # The cgroup limits are resolved and checked once per campaign (and
                # per node); a per-point rate would be silently ignored.
                errors.append((
                    path,
                    f"{key} cannot vary per point: the throttle's rates are set once per "
                    f"campaign; vary {names.choices(PER_POINT_THROTTLE_FIELDS)}, or run one "
                    f"campaign per rate",
                ))
                continue
        elif not _OPTION_RE.match(key):
            errors.append((path, "bad dimension name (an engine option name, 'policy', "
                                 "'scheduler', or a dotted spec path)"))
            continue
        if not isinstance(values, list):
            values = [values]
        if not values:
            errors.append((path, "a dimension needs at least one value"))
            continue
        ok = True
        seen: list[Any] = []
        for i, v in enumerate(values):
            if not _is_scalar(v):
                errors.append((f"{path}[{i}]", f"expected a scalar value, got {v!r}"))
                ok = False
                continue
            if v in seen:
                errors.append((f"{path}[{i}]", f"duplicate value {v!r}"))
                ok = False
            seen.append(v)
            option = key
            if key.startswith("engine.options.") or ".engine_options." in key:
                option = key.rsplit(".", 1)[-1]  # an engine option set through a spec path
            bad = _check_named_value(option, v, f"{path}[{i}]")
            if bad:
                ok = False
                errors += bad
        if ok and "." in key:
            errors += _dotted_dimension_errors(key, values, raw)
        dims[key] = values
    if "repetitions" in matrix:
        r = matrix["repetitions"]
        if isinstance(r, bool) or not isinstance(r, int) or r < 1:
            errors.append(("matrix.repetitions", f"expected an integer >= 1, got {r!r}"))
    if "seeds" in matrix:
        seeds = matrix["seeds"]
        if not isinstance(seeds, list) or not seeds:
            errors.append(("matrix.seeds", f"expected a list of integers, got {seeds!r}"))
        else:
            for i, s in enumerate(seeds):
                if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                    errors.append((f"matrix.seeds[{i}]", f"expected an integer >= 0, got {s!r}"))
            r = matrix.get("repetitions")
            if isinstance(r, int) and not isinstance(r, bool) and r != len(seeds):
                errors.append((
                    "matrix.seeds",
                    f"{len(seeds)} seeds for {r} repetitions (give one seed per repetition)",
                ))
    errors += _zip_errors(matrix.get("zip"), dims)
    errors += _exclude_errors(matrix.get("exclude"), dims)
    return errors


def _dotted_dimension_errors(key: str, values: list[Any], raw: dict[str, Any]) -> list:
    """Validates each value of a dotted dimension by setting it in the spec."""
    errors: list[tuple[str, str]] = []
    base = {k: v for k, v in raw.items() if k != "matrix"}
    for i, v in enumerate(values):
        trial = copy.deepcopy(base)
        set_dotted(trial, key, v)
        try:
            CampaignSpec.model_validate(trial)
        except ValidationError as e:
            for p, m in _pydantic_errors(e):
                if p == key or p.startswith(key + ".") or key.startswith(p + "."):
                    errors.append((f"matrix.{key}[{i}]", m))
    return errors


def _zip_errors(zips: Any, dims: dict[str, list[Any]]) -> list[tuple[str, str]]:
    if zips is None:
        return []
    if not isinstance(zips, list):
        return [("matrix.zip", "expected a list of groups, e.g. [[policy, size_ratio]]")]
    if zips and all(isinstance(z, str) for z in zips):
        zips = [zips]  # one group written flat
    errors: list[tuple[str, str]] = []
    used: dict[str, int] = {}
    for gi, group in enumerate(zips):
        gpath = f"matrix.zip[{gi}]"
        if not isinstance(group, list) or len(group) < 2:
            errors.append((gpath, "a zip group names at least two dimensions"))
            continue
        lengths = {}
        for di, d in enumerate(group):
            if d not in dims:
                errors.append((
                    f"{gpath}[{di}]",
                    f"unknown dimension {d!r} (choose from: {names.choices(list(dims))})",
                ))
                continue
            if d in used:
                errors.append((f"{gpath}[{di}]", f"dimension {d!r} is already in zip group "
                                                 f"{used[d]}"))
            used[d] = gi
            lengths[d] = len(dims[d])
        if len(set(lengths.values())) > 1:
            detail = ", ".join(f"{d} has {n}" for d, n in lengths.items())
            errors.append((gpath, f"zipped dimensions need the same number of values ({detail})"))
    return errors


def _exclude_errors(rules: Any, dims: dict[str, list[Any]]) -> list[tuple[str, str]]:
    if rules is None:
        return []
    if not isinstance(rules, list):
        return [("matrix.exclude", "expected a list of rules, e.g. [{policy: leveling, "
                                   "size_ratio: 3}]")]
    errors: list[tuple[str, str]] = []
    for ri, rule in enumerate(rules):
        rpath = f"matrix.exclude[{ri}]"
        if not isinstance(rule, dict) or not rule:
            errors.append((rpath, "a rule is a mapping of dimension: value (or list of values)"))
            continue
        for d, v in rule.items():
            if d not in dims:
                errors.append((
                    f"{rpath}.{d}",
                    f"unknown dimension {d!r} (choose from: {names.choices(list(dims))})",
                ))
                continue
            for x in v if isinstance(v, list) else [v]:
                if x not in dims[d]:
                    errors.append((
                        f"{rpath}.{d}",
                        f"value {x!r} is not in matrix.{d} "
                        f"({names.choices([str(y) for y in dims[d]])})",
                    ))
    return errors


# ---------------------------------------------------------------- workload


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
        if wfile.suffix == ".json":
            import json

            data = json.loads(wfile.read_text())
        else:
            data = yaml.safe_load(wfile.read_text())
        if not isinstance(data, dict):
            raise ValueError(f"{wfile}: expected a mapping of workload fields")
    else:
        data = copy.deepcopy(ref.inline or {})
    for key, value in ref.set.items():
        set_dotted(data, key, value)
    # A trace file is named relative to the workload file; run.json moves, so pin it.
    arrival = data.get("arrival")
    if isinstance(arrival, dict) and isinstance(arrival.get("trace_file"), str):
        tf = Path(arrival["trace_file"])
        base = wfile.parent if wfile else (source.parent if source else Path.cwd())
        if not tf.is_absolute() and (base / tf).is_file():
            arrival["trace_file"] = str((base / tf).resolve())
    return data, wfile
