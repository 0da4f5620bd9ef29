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

from ..engine_options.plugins import PLUGIN_NAME_RE
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

# Descriptions that several models' fields share.
_THREADS = "Writer threads; none: the driver's default, 1."
_QUERIES = ("Closed-loop query threads beside the writers: run.json's `queries` "
            "(`threads`, `operations`, `scan_length`, `distribution`, `field`, "
            "`selectivity`).")
_SETTLE_LOAD = ("After its writes, the load waits at most this long until the engine has no "
                "pending or running flush or merge. `0` or `false`: not at all; `true`: `10m`.")
_SETTLE_PHASE = ("Before its clock starts, the phase waits at most this long for the engine's "
                 "pending flushes and merges. `0` or `false`: not at all; `true`: `10m`.")
_KEEP_DATA = "Keep each point's engine directory instead of removing it."
_TYPE = "The testbed's kind."
_DISK = "The disk kind the points ask for; `any`: every node."
_NODE = "The node, by name, every point runs on; none: any node."
_MATRIX = ("Dimensions, whose cross product gives the points, and the rules `zip`, `exclude`, "
           "`repetitions` and `seeds`.")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


# ---------------------------------------------------------------- engine


class EngineSpec(Strict):
    """The engine the driver measures and its options (passed to its adapter by name)."""

    name: str = Field(default="builtin", description="The engine: one compiled into "
                      f"lsm-driver ({', '.join(f'`{e}`' for e in names.ENGINES)}), one of "
                      "the engine plugins the project builds ("
                      f"{', '.join(f'`{e}`' for e in names.PROJECT_PLUGINS)}) or any engine "
                      "plugin's own name, found as `lsmbench-NAME.so` on the plugin path "
                      "(docs/how-to/add-your-engine.md).")
    plugin: str | None = Field(default=None, description="The engine plugin's file, for "
                               "`name` (relative to the spec's directory); none: found on "
                               "the plugin path.")
    options: EngineOptions = Field(
        default_factory=dict,
        description="Engine options by name, for every phase. "
                    "docs/reference/engine-options.md lists the `builtin` engine's.")

    @field_validator("name")
    @classmethod
    def _known_engine(cls, v: str) -> str:
        if v not in names.ENGINES and not PLUGIN_NAME_RE.fullmatch(v):
            known = names.choices(names.ENGINES + names.PROJECT_PLUGINS)
            raise ValueError(f"unknown engine '{v}' (choose from: {known}, or an engine "
                             "plugin's name: [a-z][a-z0-9_-]*)")
        return v

    @model_validator(mode="after")
    def _plugin_has_its_own_name(self) -> EngineSpec:
        if self.plugin is not None and self.name in names.ENGINES:
            raise ValueError(f"engine.plugin: '{self.name}' is compiled into lsm-driver; set "
                             "engine.name to the plugin's own name")
        return self


# ---------------------------------------------------------------- workload


class WorkloadRef(Strict):
    """A workload file (a name in workloads/ or a path) or an inline workload, plus overrides."""

    file: str | None = Field(default=None, description="A workload file: `NAME` for "
                             "`workloads/NAME.yaml`, or a path.")
    inline: dict[str, Any] | None = Field(default=None, description="The driver's workload "
                                          "object itself, instead of a file.")
    set: dict[str, Any] = Field(default_factory=dict, description="Overrides of the file's "
                                "or the inline workload's fields; dotted keys reach "
                                "nested ones. A mapping given for a mapping overrides it "
                                "field by field (`{mixgraph: {value_sigma: 30}}` keeps the "
                                "other mixgraph fields); `operations`, and an `arrival` "
                                "naming another `process`, are taken whole.")

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
    enabled: bool = Field(default=True, description="Load the workload's records first, "
                          "closed loop, until all are written.")
    threads: int | None = Field(default=None, ge=1, le=1024, description=_THREADS)
    engine_options: EngineOptions = Field(default_factory=dict, description="Engine options "
                                           "for the load only.")
    timeout: Duration | None = Field(default=None, description="The driver is stopped after "
                                     "this, plus `settle`; none: `1h`.")
    # After its writes, the load waits (at most this long; 0 or false: not at all) until the
    # engine has no pending or running flush or merge, so that the testing phase and the
    # running phases' snapshot start from a settled tree, not during the merges the load
    # left due (RocksDB's WaitForCompact; docs/explanation/adaptive-phases.md).
    settle: Settle = Field(default=DEFAULT_SETTLE_S, description=_SETTLE_LOAD)


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

    rounds: int = Field(default=5, ge=2, le=50, description="The measurement window, in "
                        "rounds.")
    round: Duration = Field(default=10.0, gt=0, description="A round's least length. A round "
                             "also holds `deepest_merges` merges and ends at a memtable "
                             "sealing.")
    deepest_merges: int = Field(default=1, ge=0, le=10, description="Completed merges into "
                                "the deepest level each round holds; `0`: time alone. "
                                "Ignored for an engine that tells no merges.")
    # Half the SNIA PTS's 20 % and 10 %: its rounds are fixed minutes, ours whole merge
    # cycles, whose rates vary a few per cent once steady (docs/explanation/adaptive-phases.md).
    max_range: float = Field(default=0.10, gt=0, le=1, description="The window's round "
                             "rates span at most this share of their mean.")
    max_slope: float = Field(default=0.05, gt=0, le=1, description="The least-squares line "
                             "through the round rates changes by at most this share of "
                             "their mean across the window.")
    ramp: Duration = Field(default=0.0, ge=0, description="Time ignored first, before the "
                            "rounds count.")


class TestingPhase(Strict):
    duration: Duration = Field(default=600.0, gt=0, description="The closed-loop phase's "
                                "length; with `steady`, its cap.")
    warmup: Duration | None = Field(default=None, description="Time excluded from the start "
                                    "of the measured window; none: `warmup_fraction` of "
                                    "`duration`.")
    warmup_fraction: float = Field(default=1 / 6, ge=0, lt=1, description="The share of "
                                   "`duration` excluded first when `warmup` is not given.")
    threads: int | None = Field(default=None, ge=1, le=1024, description=_THREADS)
    queries: dict[str, Any] | None = Field(default=None, description=_QUERIES)
    engine_options: EngineOptions = Field(default_factory=dict, description="Engine options "
                                           "for the testing phase only, e.g. "
                                           "`{merge_scheduler: fair}`.")
    timeout: Duration | None = Field(default=None, description="The driver is stopped after "
                                     "this; none: `2 x (duration + settle) + 5m`.")
    # Matrix dimensions that do not change the testing phase (typically the running
    # phase's scheduler): points that differ only in them, in the same repetition, share
    # one testing phase -- run by the first of them -- and so run at the same rate.
    shared_across: list[str] = Field(default_factory=list, description="Matrix dimensions "
                                      "that do not change the testing phase. Points that "
                                      "differ only in them share one testing phase.")
    # How the maximum is taken from the measured window: "cycles" counts whole memtable
    # cycles (not quantized by the window; falls back on the count when the engine does not
    # tell its flushes), "intervals" counts the window's writes
    # (verdict.max_throughput_of_testing; research/quickstart-verdicts.md
    # measures both).
    maximum: Literal["intervals", "cycles"] = Field(
        default="cycles",
        description="How the maximum is taken from the measured window: `cycles` counts "
                    "whole memtable cycles, `intervals` counts the window's writes.")
    # Before its clock starts, the phase waits (at most this long; 0 or false: not at all)
    # for the engine's pending flushes and merges: reopening the loaded tree recovers its last
    # memtable from the log, which may start a merge.
    settle: Settle = Field(default=DEFAULT_SETTLE_S, description=_SETTLE_PHASE)
    # End at steady state instead of after `duration`, which becomes the cap (SteadyState).
    steady: SteadyState | None = Field(default=None, description="End at steady state "
                                       "instead of after `duration`, which becomes the "
                                       "cap. Excludes `warmup`.")

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

    low: float = Field(default=0.5, gt=0, le=2, description="The lowest utilization "
                       "searched, a share of the testing maximum.")
    high: float = Field(default=1.0, gt=0, le=2, description="The highest utilization "
                        "searched; it runs first.")
    # Stop when the bracket [highest sustainable, lowest not] is at most this wide. At least
    # 0.001: step utilizations are rounded to 4 decimals (their directory names).
    tolerance: float = Field(default=0.02, ge=0.001, le=2, description="The search stops "
                             "when the bracket [highest sustainable, lowest not] is at "
                             "most this wide.")
    # At least 2: the upper end, and the lower end when nothing above it was sustainable.
    max_steps: int = Field(default=8, ge=2, le=64, description="At most this many running "
                           "phases.")

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

    deepest_merges: int = Field(default=2, ge=1, le=20, description="Completed merges into "
                                "the deepest level the window holds before it may "
                                "pass.")
    min_duration: Duration = Field(default=0.0, ge=0, description="The phase does not pass "
                                    "before this.")


class RunningPhase(Strict):
    enabled: bool = Field(default=True, description="Run the open-loop phase; `false`: only the "
                          "maximum is measured.")
    duration: Duration = Field(default=600.0, gt=0, description="The open-loop phase's "
                                "length; with `until_decided`, its cap.")
    warmup: Duration = Field(default=0.0, description="Time excluded from the start of the "
                             "verdict's window.")
    utilization: float = Field(default=0.95, gt=0, le=2, description="The arrival rate, as "
                               "a share of the testing phase's maximum.")
    utilizations: list[Annotated[float, Field(gt=0, le=2)]] | None = Field(
        default=None,
        description="A sweep: one running phase per utilization. The headline verdict is "
                    "the one at `utilization` when it is in the sweep, else at the largest.")
    arrival: dict[str, Any] = Field(default_factory=dict, description="run.json's "
                                    "`arrival` fields besides `rate`, which is "
                                    "computed: `process`, `interarrival`, `burst_s`, "
                                    "`burst_count`, `idle_s`, `trace_file`, `rate_scale`.")
    drain: Duration = Field(default=0.0, description="After `duration`, the requests that "
                            "arrived before the end finish for at most this long.")
    threads: int | None = Field(default=None, ge=1, le=1024, description=_THREADS)
    queries: dict[str, Any] | None = Field(default=None, description=_QUERIES)
    engine_options: EngineOptions = Field(default_factory=dict, description="Engine options "
                                           "for the running phases only.")
    start: Literal["snapshot", "reload", "continue"] = Field(
        default="snapshot",
        description="The state each running phase starts from: `snapshot`, a copy of the "
                    "loaded state; `reload`, a fresh load; `continue`, where the previous "
                    "phase left off.")
    timeout: Duration | None = Field(default=None, description="The driver is stopped after "
                                     "this; none: `2 x (duration + drain + settle) + 5m`.")
    search: RateSearchSpec | None = Field(default=None, description="Search the maximum "
                                          "sustainable rate instead of running at "
                                          "`utilization`. Excludes `utilizations` and "
                                          "`start: continue`.")
    settle: Settle = Field(default=DEFAULT_SETTLE_S, description=_SETTLE_PHASE)
    until_decided: UntilDecided | None = Field(default=None, description="End each running "
                                               "phase as soon as its verdict is decided; "
                                               "`duration` becomes the cap.")

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
    interval: Duration = Field(default=1.0, ge=0.01, le=3600, description="The driver's "
                                "reporting interval.")
    load: LoadPhase = Field(default_factory=LoadPhase, description="The load phase: it "
                            "writes the workload's records.")
    testing: TestingPhase = Field(default_factory=TestingPhase, description="The "
                                  "closed-loop phase that measures the maximum write "
                                  "throughput.")
    running: RunningPhase = Field(default_factory=RunningPhase, description="The open-loop "
                                  "phases at a share of the maximum, judged by the "
                                  "verdict.")


class VerdictSpec(Strict):
    """Sustainable = no criterion of the running phase fails (docs/explanation/verdicts.md):
    p99 write latency under a bound, a final backlog under a bound, no steady backlog growth,
    little stalled time, and the achieved rate close to the offered one."""

    p99_write_latency: Duration = Field(default=1.0, gt=0, description="The running "
                                         "phase's p99 write latency, from intended "
                                         "arrival, is at most this.")
    max_backlog: Duration = Field(default=1.0, ge=0, description="The queue at the end of "
                                   "the arrivals holds under this many seconds of "
                                   "arrivals.")
    # Seconds of arrivals the queue may gain per second of run: the lower end of the 95 %
    # interval of its Theil-Sen slope over the second half, divided by the offered rate.
    max_backlog_growth: float = Field(default=0.001, ge=0, description="Seconds of arrivals "
                                      "the queue may gain per second of run.")
    # Share of the measured window writes may be stalled (metrics.stall_time: the engine's
    # stall time, else intervals with no completed write while writes waited).
    max_stalled_fraction: float = Field(default=0.01, ge=0, le=1, description="The share of "
                                        "the measured window writes may be stalled.")
    # The achieved rate may be at most this share under the offered rate (pebble: 10 %).
    max_rate_shortfall: float = Field(default=0.10, ge=0, le=1, description="The achieved "
                                      "rate is at most this share under the offered "
                                      "rate.")


# ---------------------------------------------------------------- throttle


class ThrottleSpec(Strict):
    """cgroup I/O limits on the data disk; percentages are of the fio-calibrated disk."""

    enabled: bool = Field(default=True, description="Run the listed phases inside the "
                          "throttle.")
    write_bps: Any = Field(default=None, description="Write bytes/s on the data disk: "
                            "`52428800`, `100MB/s`, `100MiB/s`, or `50%` of the calibrated "
                            "bandwidth.")
    read_bps: Any = Field(default=None, description="Read bytes/s on the data disk, as "
                           "`write_bps`.")
    write_iops: Any = Field(default=None, description="Write I/Os per second on the data "
                             "disk: `500`, or `50%` of the calibrated IOPS.")
    read_iops: Any = Field(default=None, description="Read I/Os per second on the data "
                            "disk, as `write_iops`.")
    device: str = Field(default="auto", description="The disks to limit: `auto` (the data "
                         "directory's), `MAJ:MIN`, `/dev/NAME`, or a comma-separated list.")
    cpus: str | None = Field(default=None, description="The cpuset the driver is pinned to, "
                              "e.g. `0-1`.")
    cpu_quota: float | None = Field(default=None, gt=0, description="The driver's CPU time, "
                                     "in cores.")
    phases: list[Literal["load", "testing", "running"]] = Field(
        default_factory=lambda: list(PHASE_NAMES),
        description="The phases that run inside the throttle.")
    required: bool = Field(default=True, description="Fail before the first point when "
                           "throttling is impossible here; `false`: warn and run "
                           "unthrottled.")

    @field_validator("write_bps", "read_bps", "write_iops", "read_iops")
    @classmethod
    def _rate(cls, v: Any, info: ValidationInfo) -> Any:
        return check_rate(v, str(info.field_name))


# ---------------------------------------------------------------- sinks


DEFAULT_SINK_BUDGET_S = 300.0


class InfluxSinkSpec(Strict):
    """InfluxDB (v1 database or v2 org/bucket). Credentials only from env or a file."""

    kind: ClassVar[str] = "influx"  # its name in names.SINKS: the backend lsmbench.sinks opens

    url: str = Field(description="The server: `http(s)://host:port`.")
    api: Literal["v1", "v2"] | None = Field(default=None, description="`v1` (a database) or "
                                            "`v2` (an org and a bucket); none: `v2` when a "
                                            "bucket is given, else `v1`.")
    database: str | None = Field(default=None, description="The InfluxDB 1.x database; "
                                 "none: `lsmbench`, when no bucket is given.")
    retention_policy: str | None = Field(default=None, description="The InfluxDB 1.x "
                                         "retention policy.")
    org: str | None = Field(default=None, description="The InfluxDB 2.x organization.")
    bucket: str | None = Field(default=None, description="The InfluxDB 2.x bucket; it needs "
                               "`org`.")
    username: str | None = Field(default=None, description="The v1 user; the password is "
                                 "the token.")
    token_env: str | None = Field(default="LSMBENCH_INFLUX_TOKEN", description="The "
                                  "environment variable that holds the token.")
    token_file: str | None = Field(default=None, description="A file whose first line is "
                                   "the token.")
    measurement_prefix: str = Field(default="lsm", description="Measurements are "
                                     "`PREFIX_interval`, `PREFIX_summary`, `PREFIX_phase`.")
    tags: dict[str, str] = Field(default_factory=dict, description="Extra tags of every "
                                 "point.")
    timeout: Duration = Field(default=10.0, gt=0, description="The timeout of one HTTP "
                               "request.")
    retries: int = Field(default=3, ge=0, le=20, description="Further tries on connection "
                         "errors, 5xx and 429.")
    # The most a campaign waits on this sink over all its points (tries, timeouts, backoff);
    # once used up, the rest stay unpublished for `lsmbench publish` (docs/faults.md).
    budget: Duration = Field(default=DEFAULT_SINK_BUDGET_S, gt=0, description="The most a "
                              "campaign waits on this sink over all its points; then the "
                              "rest stay unpublished.")

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

    influx: InfluxSinkSpec | None = Field(default=None, description="An InfluxDB sink: "
                                          "each point is sent when it ends.")

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
    data_dir: str = Field(default="/var/tmp/lsmbench", description="A directory on the disk "
                           "to measure; each point gets a fresh one under it.")
    drop_caches: bool = Field(default=False, description="Sync and drop the page cache "
                               "before each point (root).")
    fstrim: bool = Field(default=False, description="Trim the data directory's filesystem "
                          "before each point.")
    keep_data: bool = Field(default=False, description=_KEEP_DATA)


class LocalTestbedSpec(_NodeDefaults):
    type: Literal["local"] = Field(default="local", description=_TYPE)
    driver: str | None = Field(default=None, description="The lsm-driver binary; none: "
                               "`$LSMBENCH_DRIVER`, `$LSMBENCH_BUILD_DIR/bin`, "
                               "`build/bin`, `build-*/bin`.")
    calibration: str | None = Field(default=None, description="The disk profile of throttle "
                                    "percentages; none: "
                                    "`RESULTS/.calibration/HOST.json`.")


DiskKind = Literal["ssd", "hdd"]


class SshHost(Strict):
    """One data disk of a node (a node with two data disks is listed twice, one entry per
    disk, each with its own data_dir and name). The key file is a path: never the key."""

    address: str = Field(description="The node's host name or IP address.")
    name: str | None = Field(default=None, description="The node's name; none: its "
                              "address.")
    user: str | None = Field(default=None, description="The ssh user; none: ssh's "
                              "default.")
    port: int = Field(default=22, ge=1, le=65535, description="The ssh port.")
    key_file: str | None = Field(default=None, description="The path of the ssh key.")
    data_dir: str | None = Field(default=None, description="This disk's data directory; "
                                  "none: the testbed's.")
    device: str = Field(default="auto", description="The disk to throttle: `auto`, `MAJ:MIN` "
                         "or `/dev/NAME`.")
    disk: DiskKind = Field(default="ssd", description="The kind of this disk.")
    remote_root: str | None = Field(default=None, description="Where the project is "
                                     "deployed on this node; none: the testbed's.")


class _RemoteDefaults(_NodeDefaults):
    """What the ssh and terraform testbeds share: how nodes are deployed and used."""

    playbook: str = Field(default="ansible/playbooks/deploy.yml", description="The playbook "
                           "that deploys the engine, the driver and the node helper.")
    remote_root: str = Field(default="/var/lib/lsmbench", description="Where the project is "
                              "deployed on a node.")
    python: str = Field(default="/usr/bin/python3", description="The node's Python: it runs "
                         "the node helper and Ansible's modules.")
    # Run the node helper and Ansible with sudo (non-root users; the throttle needs root).
    become: bool = Field(default=False, description="Run the node helper and Ansible with "
                         "`sudo`.")
    # A point whose node fails (unreachable, driver killed) runs again on another node
    # this many times before it is recorded as failed.
    retries: int = Field(default=1, ge=0, le=10, description="A point whose node fails runs "
                         "again on another node this many times.")
    # Which disk kind the points ask for ("any": every node); a matrix dimension
    # `testbed.disk: [ssd, hdd]` spreads the points over both kinds.
    disk: Literal["any", "ssd", "hdd"] = Field(default="any", description=_DISK)
    # The node (its name) every point runs on, None: any node. A matrix dimension
    # `testbed.node: [a, b]` runs every point on each node: a pinned point is not retried on
    # another node (its node's series would get another machine's number).
    node: str | None = Field(default=None, description=_NODE)
    # Extra variables for the deploy playbook (no secrets: those go by path or env).
    ansible_vars: dict[str, Any] = Field(default_factory=dict, description="Extra variables "
                                         "of the deploy playbook; no secrets.")


class SshTestbedSpec(_RemoteDefaults):
    type: Literal["ssh"] = Field(description=_TYPE)
    hosts: list[SshHost] = Field(default_factory=list, description="The nodes: one entry per "
                                 "data disk.")
    inventory: str | None = Field(default=None, description="A YAML file with a `hosts:` "
                                   "list, instead of `hosts`.")

    @model_validator(mode="after")
    def _some_hosts(self) -> SshTestbedSpec:
        if not self.hosts and not self.inventory:
            raise ValueError("give 'hosts' (a list of {address, user, ...}) or an 'inventory' file")
        return self


class TerraformTestbedSpec(_RemoteDefaults):
    type: Literal["terraform"] = Field(description=_TYPE)
    module: str = Field(description="The Terraform module, e.g. `terraform/modules/static`.")
    workspace: str = Field(default="default", description="The Terraform workspace, one per "
                            "testbed, so that it can be kept and reused.")
    variables: dict[str, Any] = Field(default_factory=dict, description="The module's "
                                      "variables.")
    reuse: bool = Field(default=True, description="Reuse an applied workspace instead of "
                        "provisioning again.")
    destroy: Literal["never", "on-success", "always"] = Field(
        default="never", description="When a campaign's end destroys the nodes.")
    ssh_user: str | None = Field(default=None, description="The ssh user of the provisioned "
                                 "nodes.")
    key_file: str | None = Field(default=None, description="The path of the ssh key of the "
                                 "provisioned nodes.")


class NamedTestbed(Strict):
    """`testbed: NAME`: a testbed brought up with `lsmbench testbed up NAME` (its definition and
    state are under testbeds/NAME/); the campaign reuses it without reprovisioning."""

    type: Literal["named"] = Field(description=_TYPE)
    name: str = Field(description="The kept testbed, under `testbeds/NAME/`.")
    disk: Literal["any", "ssd", "hdd"] = Field(default="any", description=_DISK)
    # The node every point runs on (None: any); see _RemoteDefaults.node.
    node: str | None = Field(default=None, description=_NODE)
    keep_data: bool = Field(default=False, description=_KEEP_DATA)
    # Only these of the testbed's nodes (their names in testbeds/NAME/testbed.yml; checked
    # against them when the testbed is brought up): `lsmbench reproduce --testbed` pins each
    # experiment to one node this way, so that its points compare like with like.
    nodes: list[str] | None = Field(default=None, description="Only these of the testbed's "
                                     "nodes, by name; none: all of them.")

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
    """Paired builds (docs/campaign-specs.md, "pair"): every point runs with the
    reference engine build and with the build under test (the testbed's driver), their
    repetitions interleaved on the same node, so that what the machine does that hour is in
    both and cancels in their ratio."""

    # The reference build: a build directory (its bin/lsm-driver) or an lsm-driver file.
    reference: str = Field(description="The reference build: a build directory or an "
                                       "lsm-driver file.")
    # The commit the reference was built from, when known (the nightly job sets it): recorded
    # with each paired ratio, so the history says what the build under test was held against.
    commit: str | None = Field(default=None, description="The commit the reference was "
                                "built from, recorded with each paired ratio.")
    # The two builds of a repetition run one after the other, in ABBA order (A B for one
    # repetition, B A for the next) from a start drawn per group with this seed: a drift
    # during the night weighs on both alike, and neither always runs first.
    seed: int = Field(default=1, ge=0, description="Seeds the draw, per group, of which "
                      "build runs first.")


class CampaignSpec(Strict):
    name: str = Field(description="The campaign's name and its results directory: letters, "
                                  "digits, `.`, `_`, `-`; at most 80 characters.")
    description: str = Field(default="", description="Free text.")
    engine: EngineSpec = Field(default_factory=EngineSpec, description="The engine and its "
                                "options.")
    engines: dict[str, EngineSpec] | None = Field(
        default=None, description="Engines side by side, each under a name of the campaign's: "
        "the matrix dimension `engine` lists the names, and each point runs the one its value "
        "names, with that entry's options, in place of the `engine` section.")
    matrix: dict[str, Any] = Field(default_factory=dict, description=_MATRIX)
    workload: Annotated[WorkloadRef, BeforeValidator(workload_shorthand)] = Field(
        description="The workload. `workload: NAME` is short for `{file: NAME}`.")
    phases: Phases = Field(default_factory=Phases, description="The phases of each point.")
    verdict: VerdictSpec = Field(default_factory=VerdictSpec, description="The bounds a "
                                  "sustainable running phase meets.")
    throttle: Annotated[ThrottleSpec, BeforeValidator(throttle_shorthand)] = Field(
        default_factory=lambda: ThrottleSpec(enabled=False),
        description="cgroup I/O and CPU limits of the driver. `throttle: none`, or no "
                    "throttle section, is off.")
    sinks: Sinks = Field(default_factory=Sinks, description="Where points are published "
                         "besides the results store.")
    testbed: Annotated[Testbed, BeforeValidator(testbed_shorthand)] = Field(
        default_factory=LocalTestbedSpec,
        description="Where the points run. `testbed: local` is short for `{type: local}`; "
                    "`testbed: NAME` names a kept testbed.")
    # lsmbench tune: the trials' parameters, objective and constraints (docs/tuning.md).
    tune: TuneSpec | None = Field(default=None, description="Makes the spec a study of "
                                  "`lsmbench tune`.")
    pair: PairSpec | None = Field(default=None, description="Paired builds: each point runs "
                                  "with a reference build and the build under test, "
                                  "interleaved.")

    @field_validator("name")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(
                f"bad campaign name {v!r} (letters, digits, '.', '_', '-'; at most 80 characters)"
            )
        return v

