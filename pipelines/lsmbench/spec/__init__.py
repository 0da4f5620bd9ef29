"""The campaign spec: its schema, its layered overrides and its validation.

A spec is YAML. Validation happens in two passes and lists *every* error by
its path (``matrix.scheduler[2]: bad value 'gredy' for merge_scheduler
(choose from: single, fair, ...); did you mean 'greedy'?``):

1. structure, by the pydantic models (:mod:`.models`; unknown keys, types,
   ranges), translated into the spec's paths by :mod:`.errors`;
2. cross-field checks, by :mod:`.checks` (engine options against the engine's
   option description, matrix dimensions, zip/exclude rules, the workload file).

Roles: :mod:`.reading` reads a file whatever it is, :mod:`.overrides` sets a
value at a path (``--set``, dotted dimensions), :mod:`.load` ties it together
(:func:`load_spec`), :mod:`.workload` resolves the workload.
"""

from .errors import SpecError
from .load import LoadedSpec, load_spec, read_yaml, validate_raw
from .models import (
    MATRIX_RESERVED,
    PHASE_NAMES,
    SINK_SECTIONS,
    CampaignSpec,
    EngineSpec,
    InfluxSinkSpec,
    LoadPhase,
    LocalTestbedSpec,
    NamedTestbed,
    Phases,
    RateSearchSpec,
    RunningPhase,
    Sinks,
    SshHost,
    SshTestbedSpec,
    TerraformTestbedSpec,
    Testbed,
    TestingPhase,
    ThrottleSpec,
    VerdictSpec,
    WorkloadRef,
    testbed_shorthand,
)
from .overrides import apply_set, set_dotted
from .workload import find_workload_file, resolve_workload

__all__ = [
    "MATRIX_RESERVED",
    "PHASE_NAMES",
    "SINK_SECTIONS",
    "CampaignSpec",
    "EngineSpec",
    "InfluxSinkSpec",
    "LoadPhase",
    "LoadedSpec",
    "LocalTestbedSpec",
    "NamedTestbed",
    "Phases",
    "RateSearchSpec",
    "RunningPhase",
    "Sinks",
    "SpecError",
    "SshHost",
    "SshTestbedSpec",
    "TerraformTestbedSpec",
    "Testbed",
    "TestingPhase",
    "ThrottleSpec",
    "VerdictSpec",
    "WorkloadRef",
    "apply_set",
    "find_workload_file",
    "load_spec",
    "read_yaml",
    "resolve_workload",
    "set_dotted",
    "testbed_shorthand",
    "validate_raw",
]
