"""The engines' option descriptions, and checking a spec's engine options against them.

``<engine>.json`` beside this file is what ``lsm-driver --describe-options ENGINE``
prints (committed, so that ``lsmbench validate`` works before anything is
built): every option the engine's adapter accepts, with its type and range.
A value is checked as the driver will read it: the string
:func:`option_string` makes of it, in the driver's grammar (bool: true, false,
1, 0; int: optional '-' and digits; size: digits with an optional K/M/G
suffix, :func:`lsmbench.util.units.parse_size`; real: a finite number; choice: one
of the names, exactly). RocksDB has no committed description (hundreds of
options): its options are checked by the driver itself (:mod:`lsmbench.driver_checks`).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from functools import cache
from importlib import resources
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from ..util.units import parse_size
from ..workload_shape.trace import trace_measure

_INT_RE = re.compile(r"-?[0-9]+")
_REAL_RE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_BOOLS = ("true", "false", "1", "0")


class OptionDescription(BaseModel):
    """One option as the driver describes it."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: Literal["bool", "int", "size", "real", "choice", "string"]
    default: Any = None
    min: float | None = None
    max: float | None = None
    unit: str | None = None
    choices: tuple[str, ...] | None = None
    # builtin only: "merge-policy" when the merge policy reads it (lsm-sim simulates it),
    # "engine" when only the rest of the engine does (options.def's scope column).
    scope: Literal["merge-policy", "engine"] | None = None
    doc: str = ""

    def allowed(self) -> str:
        """What the option takes, for messages: 'choose from: a, b', 'an integer in [0, 64]'."""
        if self.type == "choice":
            return f"choose from: {', '.join(self.choices or ())}"
        if self.type == "bool":
            return "choose from: true, false"
        what = {"int": "an integer", "size": "a byte count (optional suffix K, M or G)",
                "real": "a number", "string": "a string"}[self.type]
        if self.min is not None and self.max is not None:
            return f"{what} in [{_num(self.min)}, {_num(self.max)}]"
        if self.min is not None:
            return f"{what} >= {_num(self.min)}"
        if self.max is not None:
            return f"{what} <= {_num(self.max)}"
        return what


class EngineDescription(BaseModel):
    """Every option of one engine's adapter."""

    model_config = ConfigDict(frozen=True)

    engine: str
    options: tuple[OptionDescription, ...]
    # An engine plugin whose table lists only some options: the driver checks the others
    # (--check-options), as it checks all of rocksdb's.
    options_open: bool = False

    def get(self, name: str) -> OptionDescription | None:
        return next((o for o in self.options if o.name == name), None)

    def names(self) -> list[str]:
        return [o.name for o in self.options]


class DescriptionError(RuntimeError):
    """A committed description that does not parse: a packaging bug, not the user's."""


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e18 else f"{v:g}"


def option_string(value: Any) -> str:
    """An engine option value as the driver's name=value strings expect it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


# Engine plugins' descriptions by name, registered as they are resolved (.plugins).
_plugins: dict[str, EngineDescription] = {}


def register_plugin(name: str, desc: EngineDescription) -> None:
    """Makes :func:`description` answer for the engine plugin `name`."""
    _plugins[name] = desc


def description(engine: str) -> EngineDescription | None:
    """The description of an engine's options: an engine plugin's as registered, else the
    committed one; None when there is none (rocksdb)."""
    return _plugins.get(engine) or _committed(engine)


@cache
def _committed(engine: str) -> EngineDescription | None:
    res = resources.files(__package__).joinpath(f"{engine}.json")
    if not res.is_file():
        return None
    try:
        return EngineDescription.model_validate(json.loads(res.read_text()))
    except (ValueError, ValidationError) as e:
        raise DescriptionError(f"engine_options/{engine}.json: {e}") from e


@cache
def workload_defaults() -> dict[str, Any]:
    """What lsm-driver gives a workload field a spec leaves out (``lsm-driver
    --describe-workload``, committed beside the descriptions as driver-workload.json; a driver
    test holds the file to the driver)."""
    res = resources.files(__package__).joinpath("driver-workload.json")
    try:
        return dict(json.loads(res.read_text()))
    except (OSError, ValueError) as e:
        raise DescriptionError(f"engine_options/driver-workload.json: {e}") from e


def record_sizes(workload: dict[str, Any]) -> tuple[int, float]:
    """The key bytes and the mean value bytes of a workload's records, as the driver writes
    them (its defaults for what the workload leaves out; a value size range's midpoint;
    mixgraph's Generalized Pareto sizes by db_bench's rules)."""
    defaults = workload_defaults()
    key = int(workload.get("key_size", defaults["key_size"]))
    if isinstance(workload.get("mixgraph"), dict):
        return key, mixgraph_mean_value_size(workload["mixgraph"])
    value = workload.get("value_size", defaults["value_size"])
    if isinstance(value, dict):
        value = (float(value.get("min", 0)) + float(value.get("max", 0))) / 2
    return key, float(value)


# The driver's operations that write a record (a read-modify-write writes one too).
WRITE_OPERATIONS = ("insert", "update", "delete", "rmw")


def write_share(workload: dict[str, Any]) -> float:
    """The share of writes in a workload's mix (its writers' operations; mixgraph's puts): 1 for
    a write-only workload, 0 for one without writes."""
    mixgraph = workload.get("mixgraph")
    if isinstance(mixgraph, dict):
        return float(mixgraph.get("mix_put_ratio", 0.0))
    if isinstance(workload.get("rocksdb_trace"), str):
        ops = trace_measure(workload["rocksdb_trace"])["ops_by_type"]
    else:
        ops = workload.get("operations", workload_defaults()["operations"]) or {}
    weights = {k: float(v) for k, v in ops.items() if isinstance(v, int | float)}
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return sum(weights.get(op, 0.0) for op in WRITE_OPERATIONS) / total


# db_bench's mixgraph defaults for the value sizes (tools/db_bench_tool.cc).
_MIXGRAPH_VALUE_DEFAULTS = {"value_theta": 0.0, "value_k": 0.2615, "value_sigma": 25.45,
                            "mix_max_value_size": 1024}


def mixgraph_mean_value_size(mixgraph: dict[str, Any]) -> float:
    """The mean value size of mixgraph's puts: ceil of the Generalized Pareto's inverse CDF, at
    least 10 bytes, taken modulo mix_max_value_size above it (db_bench's rules), averaged over
    the midpoints of 2^16 slices of u, as the driver computes it (a test holds them equal)."""
    p = {**_MIXGRAPH_VALUE_DEFAULTS, **mixgraph}
    theta, k, sigma = float(p["value_theta"]), float(p["value_k"]), float(p["value_sigma"])
    top = float(p["mix_max_value_size"])
    u = (np.arange(1 << 16) + 0.5) / (1 << 16)
    with np.errstate(over="ignore"):
        x = theta - sigma * np.log(u) if k == 0 else theta + sigma * (u ** -k - 1) / k
    v = np.ceil(x)
    v = np.where(v >= 10, np.where(v > top, np.fmod(v, top), v), 10.0)
    return float(v.mean())


def choices(engine: str, option: str) -> tuple[str, ...]:
    """The names a choice option takes ('merge_scheduler' -> single, fair, ...); () if none."""
    desc = description(engine)
    opt = desc.get(option) if desc else None
    return opt.choices or () if opt else ()


def value_error(opt: OptionDescription, value: Any) -> str | None:
    """Why the driver would refuse this value for the option, None when it reads it."""
    text = option_string(value)
    ok = True
    number: float | None = None
    if opt.type == "bool":
        ok = text in _BOOLS
    elif opt.type == "choice":
        ok = text in (opt.choices or ())
    elif opt.type == "int":
        ok = bool(_INT_RE.fullmatch(text))
        number = int(text) if ok else None
    elif opt.type == "size":
        try:
            number = parse_size(text)
        except ValueError:
            ok = False
    elif opt.type == "real":
        ok = bool(_REAL_RE.fullmatch(text)) and math.isfinite(float(text))
        number = float(text) if ok else None
    if ok and number is not None:
        ok = ((opt.min is None or number >= opt.min) and (opt.max is None or number <= opt.max))
    if ok:
        return None
    if opt.type == "choice":
        close = difflib.get_close_matches(text, list(opt.choices or ()), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return f"unknown {opt.name} '{text}' ({opt.allowed()}){hint}"
    unit = f" {opt.unit}" if opt.unit and opt.type != "size" else ""
    return f"bad value '{text}' for {opt.name} ({opt.allowed()}{unit})"


def name_error(desc: EngineDescription, name: str) -> str:
    """The message for an option the engine does not have, with the closest name."""
    close = difflib.get_close_matches(name, desc.names(), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return (f"unknown {desc.engine} engine option '{name}'{hint} (the options: "
            f"{', '.join(desc.names())})")


def check(engine: str, name: str, value: Any) -> str | None:
    """Why `name: value` is not an option of the engine, None when fine or unknowable (no
    committed description)."""
    desc = description(engine)
    if desc is None:
        return None
    opt = desc.get(name)
    if opt is None:
        return name_error(desc, name)
    return value_error(opt, value)
