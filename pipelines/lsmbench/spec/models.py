"""The campaign spec's models: its schema, ranges and per-field checks (pydantic).

Cross-field checks that need the whole raw mapping (matrix, engine options,
the workload file) are in :mod:`lsmbench.spec.checks`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..throttle.rates import check_rate
from ..util import names
from ..util.units import parse_duration
from .tune import TuneSpec

PHASE_NAMES: tuple[str, ...] = ("load", "testing", "running")
MATRIX_RESERVED: tuple[str, ...] = ("zip", "exclude", "repetitions", "seeds")
# Dotted matrix dimensions may set any of these parts of the spec per point.
# The throttle fields a matrix point may set (the others are campaign-wide).
PER_POINT_THROTTLE_FIELDS: tuple[str, ...] = ("throttle.enabled", "throttle.phases")

DOTTED_DIMENSION_ROOTS: tuple[str, ...] = ("engine", "phases", "workload", "verdict", "throttle",
                                           "testbed")
CREDENTIAL_KEYS = frozenset({"token", "password", "api_key", "apikey", "secret", "auth"})

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


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


def workload_shorthand(v: Any) -> Any:
    return {"file": v} if isinstance(v, str) else v


# ---------------------------------------------------------------- phases


def _settle(v: Any) -> Any:
    """`settle: false` is off (0), `true` the default limit; else a duration."""
    if v is False:
        return 0.0
    if v is True:
        return DEFAULT_SETTLE_S
    return parse_duration(v) if v is not None else v


# The most a phase waits for the engine to finish its pending flushes and merges.
DEFAULT_SETTLE_S = 600.0
Settle = Annotated[float, BeforeValidator(_settle), Field(ge=0, le=86400)]


class LoadPhase(Strict):
    enabled: bool = True
    threads: int | None = Field(default=None, ge=1, le=1024)
    engine_options: EngineOptions = Field(default_factory=dict)
    timeout: Duration | None = None
    # After its writes, the load waits (at most this long; 0 or false: not at all) until the
    # engine has no pending or running flush or merge, so that the testing phase and the
    # running phases' snapshot start from a settled tree, not during the merges the load
    # left due (RocksDB's WaitForCompact; docs/orchestrator.md, "Adaptive phases").
    settle: Settle = DEFAULT_SETTLE_S


class SteadyState(Strict):
    """phases.testing.steady: the testing phase ends once its write rate is steady (fio's
    steadystate, the SNIA PTS rule), and ``duration`` is then its cap.

    The phase is cut into rounds: each at least ``round`` long, from one memtable sealing to
    another, and holding ``deepest_merges`` completed merges into the tree's deepest level (when
    the engine tells its merges), so every round holds whole cycles of the merges that shape the
    rate. The measurement window is the last ``rounds`` rounds after the ``ramp``; the state is
    steady when the window's round rates span at most ``max_range`` of their mean and the
    least-squares line through them changes by at most ``max_slope`` of the mean across the
    window. The maximum is then the window's rate (lsmbench.method.adaptive.steady_state)."""

    rounds: int = Field(default=5, ge=2, le=50)
    round: Duration = Field(default=10.0, gt=0)
    deepest_merges: int = Field(default=1, ge=0, le=10)
    # Half the SNIA PTS's 20 % and 10 %: its rounds are fixed minutes, ours whole merge
    # cycles, whose rates vary a few per cent once steady (docs/orchestrator.md).
    max_range: float = Field(default=0.10, gt=0, le=1)
    max_slope: float = Field(default=0.05, gt=0, le=1)
    ramp: Duration = Field(default=0.0, ge=0)


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
    # How the maximum is taken from the measured window: "cycles" counts whole memtable
    # cycles (not quantized by the window; falls back on the count when the engine does not
    # tell its flushes), "intervals" counts the window's writes
    # (verdict.max_throughput_of_testing; docs/results/quickstart.md measures both).
    maximum: Literal["intervals", "cycles"] = "cycles"
    # Before its clock starts, the phase waits (at most this long; 0 or false: not at all)
    # for the engine's pending flushes and merges: reopening the loaded tree recovers its last
    # memtable from the log, which may start a merge.
    settle: Settle = DEFAULT_SETTLE_S
    # End at steady state instead of after `duration`, which becomes the cap (SteadyState).
    steady: SteadyState | None = None

    @model_validator(mode="after")
    def _warmup_shorter(self) -> TestingPhase:
        if self.warmup is not None and self.warmup >= self.duration:
            raise ValueError(
                f"warmup ({self.warmup:g}s) must be shorter than duration ({self.duration:g}s)"
            )
        return self

    @model_validator(mode="after")
    def _steady_fits(self) -> TestingPhase:
        st = self.steady
        if st is not None and st.ramp + st.rounds * st.round > self.duration:
            raise ValueError(
                f"steady: ramp ({st.ramp:g}s) + rounds ({st.rounds}) x round ({st.round:g}s) "
                f"= {st.ramp + st.rounds * st.round:g}s exceeds duration ({self.duration:g}s), "
                "the phase's cap: the window could never fill; raise duration or shorten them")
        if st is not None and self.warmup is not None:
            raise ValueError("steady and warmup exclude each other: with steady, the time "
                             "ignored first is steady.ramp")
        return self

    def warmup_seconds(self) -> float:
        if self.steady is not None:
            return self.steady.ramp
        return self.warmup if self.warmup is not None else self.duration * self.warmup_fraction



class RateSearchSpec(Strict):
    """phases.running.search: the maximum sustainable rate, searched between two fractions of
    the testing maximum (lsmbench.method.search)."""

    low: float = Field(default=0.5, gt=0, le=2)
    high: float = Field(default=1.0, gt=0, le=2)
    # Stop when the bracket [highest sustainable, lowest not] is at most this wide. At least
    # 0.001: step utilizations are rounded to 4 decimals (their directory names).
    tolerance: float = Field(default=0.02, ge=0.001, le=2)
    # At least 2: the upper end, and the lower end when nothing above it was sustainable.
    max_steps: int = Field(default=8, ge=2, le=64)

    @model_validator(mode="after")
    def _ordered(self) -> RateSearchSpec:
        if self.low >= self.high:
            raise ValueError(f"low ({self.low:g}) must be under high ({self.high:g})")
        return self


class UntilDecided(Strict):
    """phases.running.until_decided: the running phase ends as soon as its verdict is decided,
    and ``duration`` is then its cap (lsmbench.method.adaptive.RunningRule).

    It fails fast once a criterion cannot pass any more within the cap (stalled time beyond
    the stalls bound's share of the capped window; writes over the p99 bound beyond 1 % of all
    the capped window can hold). It passes once the window has seen ``deepest_merges``
    completed merges into the deepest level, every criterion passes and the backlog's trend
    is flat (the upper end of its 95 % interval under verdict.max_backlog_growth); not before
    ``min_duration``. At the cap, undecided is inconclusive, with the length it would need."""

    deepest_merges: int = Field(default=2, ge=1, le=20)
    min_duration: Duration = Field(default=0.0, ge=0)


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
    search: RateSearchSpec | None = None
    settle: Settle = DEFAULT_SETTLE_S  # as phases.testing.settle
    until_decided: UntilDecided | None = None

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

    @model_validator(mode="after")
    def _decided_fits(self) -> RunningPhase:
        d = self.until_decided
        if d is not None and d.min_duration >= self.duration:
            raise ValueError(
                f"until_decided.min_duration ({d.min_duration:g}s) must be under duration "
                f"({self.duration:g}s), the phase's cap")
        return self

    @model_validator(mode="after")
    def _search_alone(self) -> RunningPhase:
        if self.search is None:
            return self
        if self.utilizations is not None:
            raise ValueError(
                "phases.running.search and phases.running.utilizations exclude each other: the "
                "search chooses the utilizations itself; give one of them")
        if self.start == "continue":
            raise ValueError(
                "phases.running.search needs phases.running.start 'snapshot' or 'reload': every "
                "step of the search must start from the same loaded tree, and 'continue' would "
                "start each where the previous step left off")
        return self

    def runs(self) -> int:
        """How many running phases a point runs at most (a search: max_steps)."""
        return self.search.max_steps if self.search is not None else len(self.sweep())

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
    """Sustainable = no criterion of the running phase fails (docs/orchestrator.md, verdict):
    p99 write latency under a bound, a final backlog under a bound, no steady backlog growth,
    little stalled time, and the achieved rate close to the offered one."""

    p99_write_latency: Duration = Field(default=1.0, gt=0)
    max_backlog: Duration = Field(default=1.0, ge=0)
    # Seconds of arrivals the queue may gain per second of run: the lower end of the 95 %
    # interval of its Theil-Sen slope over the second half, divided by the offered rate.
    max_backlog_growth: float = Field(default=0.001, ge=0)
    # Share of the measured window writes may be stalled (metrics.stall_time: the engine's
    # stall time, else intervals with no completed write while writes waited).
    max_stalled_fraction: float = Field(default=0.01, ge=0, le=1)
    # The achieved rate may be at most this share under the offered rate (pebble: 10 %).
    max_rate_shortfall: float = Field(default=0.10, ge=0, le=1)


# ---------------------------------------------------------------- throttle


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
        return check_rate(v, str(info.field_name))


# ---------------------------------------------------------------- sinks


DEFAULT_SINK_BUDGET_S = 300.0


class InfluxSinkSpec(Strict):
    """InfluxDB (v1 database or v2 org/bucket). Credentials only from env or a file."""

    kind: ClassVar[str] = "influx"  # its name in names.SINKS: the backend lsmbench.sinks opens

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
    # The most a campaign waits on this sink over all its points (tries, timeouts, backoff);
    # once used up, the rest stay unpublished for `lsmbench publish` (docs/faults.md).
    budget: Duration = Field(default=DEFAULT_SINK_BUDGET_S, gt=0)

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
    """One field per sink backend (names.SINKS). A section has its backend's name as `kind`
    and, whatever the backend, `url`, `tags` and `budget`."""

    influx: InfluxSinkSpec | None = None

    def by_name(self) -> dict[str, Any]:
        """Every sink name -> its section, None where the spec has none."""
        return {name: getattr(self, name) for name in names.SINKS}

    @property
    def section(self) -> Any:
        """The section the campaign publishes to, or None: the spec names one sink."""
        return next((s for s in self.by_name().values() if s is not None), None)


# The spec section of each sink name.
SINK_SECTIONS: dict[str, type[Strict]] = {"influx": InfluxSinkSpec}


# ---------------------------------------------------------------- testbeds


class _NodeDefaults(Strict):
    data_dir: str = "/var/tmp/lsmbench"
    drop_caches: bool = False
    fstrim: bool = False
    keep_data: bool = False


class LocalTestbedSpec(_NodeDefaults):
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
    # The node (its name) every point runs on, None: any node. A matrix dimension
    # `testbed.node: [a, b]` runs every point on each node: a pinned point is not retried on
    # another node (its node's series would get another machine's number).
    node: str | None = None
    # Extra variables for the deploy playbook (no secrets: those go by path or env).
    ansible_vars: dict[str, Any] = Field(default_factory=dict)


class SshTestbedSpec(_RemoteDefaults):
    type: Literal["ssh"]
    hosts: list[SshHost] = Field(default_factory=list)
    inventory: str | None = None

    @model_validator(mode="after")
    def _some_hosts(self) -> SshTestbedSpec:
        if not self.hosts and not self.inventory:
            raise ValueError("give 'hosts' (a list of {address, user, ...}) or an 'inventory' file")
        return self


class TerraformTestbedSpec(_RemoteDefaults):
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
    # The node every point runs on (None: any); see _RemoteDefaults.node.
    node: str | None = None
    keep_data: bool = False
    # Only these of the testbed's nodes (their names in testbeds/NAME/testbed.yml; checked
    # against them when the testbed is brought up): `lsmbench reproduce --testbed` pins each
    # experiment to one node this way, so that its points compare like with like.
    nodes: list[str] | None = None

    @field_validator("name")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(f"bad testbed name {v!r} (letters, digits, '.', '_', '-')")
        return v

    @field_validator("nodes")
    @classmethod
    def _some_nodes(cls, v: list[str] | None) -> list[str] | None:
        if v is not None:
            if not v:
                raise ValueError("an empty list of nodes runs nothing (leave nodes out for "
                                 "all of them)")
            twice = sorted({n for n in v if v.count(n) > 1})
            if twice:
                raise ValueError(f"node {', '.join(twice)} named twice")
        return v

    @property
    def data_dir(self) -> str:
        """Each node's own (testbeds/NAME/testbed.yml); shown by `lsmbench plan`."""
        return f"on each node of testbed {self.name}"


Testbed = Annotated[LocalTestbedSpec | SshTestbedSpec | TerraformTestbedSpec | NamedTestbed,
                    Field(discriminator="type")]
TESTBED_TYPES: tuple[str, ...] = names.TESTBEDS


def throttle_shorthand(v: Any) -> Any:
    if v is None or v is False or (isinstance(v, str) and v.lower() in ("none", "off")):
        return {"enabled": False}
    return v


def testbed_shorthand(v: Any) -> Any:
    """`testbed: local` is the local testbed; `testbed: NAME` a testbed named NAME."""
    if isinstance(v, str):
        return {"type": v} if v in TESTBED_TYPES else {"type": "named", "name": v}
    return v


# ---------------------------------------------------------------- campaign


class PairSpec(Strict):
    """Paired builds (docs/orchestrator.md, "Paired builds"): every point runs with the
    reference engine build and with the build under test (the testbed's driver), their
    repetitions interleaved on the same node, so that what the machine does that hour is in
    both and cancels in their ratio."""

    # The reference build: a build directory (its bin/lsm-driver) or an lsm-driver file.
    reference: str
    # The commit the reference was built from, when known (the nightly job sets it): recorded
    # with each paired ratio, so the history says what the build under test was held against.
    commit: str | None = None
    # The two builds of a repetition run one after the other, in ABBA order (A B for one
    # repetition, B A for the next) from a start drawn per group with this seed: a drift
    # during the night weighs on both alike, and neither always runs first.
    seed: int = Field(default=1, ge=0)


class CampaignSpec(Strict):
    name: str
    description: str = ""
    engine: EngineSpec = Field(default_factory=EngineSpec)
    matrix: dict[str, Any] = Field(default_factory=dict)
    workload: Annotated[WorkloadRef, BeforeValidator(workload_shorthand)]
    phases: Phases = Field(default_factory=Phases)
    verdict: VerdictSpec = Field(default_factory=VerdictSpec)
    throttle: Annotated[ThrottleSpec, BeforeValidator(throttle_shorthand)] = Field(
        default_factory=lambda: ThrottleSpec(enabled=False)
    )
    sinks: Sinks = Field(default_factory=Sinks)
    testbed: Annotated[Testbed, BeforeValidator(testbed_shorthand)] = Field(
        default_factory=LocalTestbedSpec
    )
    # lsmbench tune: the trials' parameters, objective and constraints (docs/tuning.md).
    tune: TuneSpec | None = None
    pair: PairSpec | None = None

    @field_validator("name")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(
                f"bad campaign name {v!r} (letters, digits, '.', '_', '-'; at most 80 characters)"
            )
        return v

