"""The checks of a ``tune:`` section that need the rest of the spec and the engine's option
descriptions; every error names its spec path (``tune.parameters.write_buffer_size.log``)."""

from __future__ import annotations

import copy
import re
from typing import Any

from ..engine_options import description, name_error
from .checks import dimension_option, matrix_errors
from .models import MATRIX_RESERVED, CampaignSpec
from .tune import constraint_errors
from .tune_domains import resolve_domain

_MATRIX_PATH = re.compile(r"^matrix\.(?P<name>[^\[]+)(?:\[(?P<i>[0-9]+)\])?$")


def _endpoint_errors(spec: CampaignSpec,
                     raw: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """The domain's ends (or choices) checked as matrix values would be -- the option's name
    and range, a dotted path's target -- with the errors moved to the tune section's paths."""
    assert spec.tune is not None
    out: dict[str, list[tuple[str, str]]] = {}
    base = copy.deepcopy({k: v for k, v in raw.items() if k not in ("matrix", "tune")})
    for name, p in spec.tune.parameters.items():
        path = f"tune.parameters.{name}"
        errors = out.setdefault(name, [])
        if p.choices is None and p.low is None:
            # The engine's own range: only the name can be wrong.
            option = dimension_option(name)
            desc = description(spec.engine.name) if option is not None else None
            if option is not None and desc is not None and desc.get(option) is None:
                errors.append((path, name_error(desc, option)))
            continue
        values = list(p.choices) if p.choices is not None else [p.low, p.high]
        for mpath, msg in matrix_errors({name: values}, base):
            m = _MATRIX_PATH.match(mpath)
            i = m.group("i") if m is not None and m.group("name") == name else None
            if i is None:
                errors.append((path, msg))
            elif p.choices is not None:
                errors.append((f"{path}.choices[{i}]", msg))
            else:
                errors.append((f"{path}.{'low' if i == '0' else 'high'}", msg))
    return out


def tune_errors(spec: CampaignSpec, raw: dict[str, Any]) -> list[tuple[str, str]]:
    tune = spec.tune
    if tune is None:
        return []
    errors: list[tuple[str, str]] = constraint_errors(tune.constraints)
    if errors:
        return errors  # the checks below read the constraints
    dims = [k for k in spec.matrix if k not in MATRIX_RESERVED]
    for k in dims:
        errors.append((f"matrix.{k}", "a tune spec's points are its trials: search "
                                      f"{k} in tune.parameters, or fix it in the spec"))
    for k in ("repetitions", "seeds"):
        if k in spec.matrix:
            errors.append((f"matrix.{k}", "a tune spec runs each trial once; its best "
                                          "configurations are repeated by tune.confirm"))
    running = spec.phases.running
    search = running.search if running.enabled else None
    objectives = tune.objectives()
    if "max_sustainable_rate" in objectives + list(tune.constraints) and search is None:
        errors.append(("tune.objective", "max_sustainable_rate needs phases.running.search "
                                         "(and the running phase enabled)"))
    if tune.needs_running() and not running.enabled:
        errors.append(("tune.objective", "a running-phase metric (objective or constraint) "
                                         "needs phases.running.enabled: true"))
    if tune.rate is not None:
        if "p99_write_latency" not in objectives:
            errors.append(("tune.rate", "a fixed rate is for the objective p99_write_latency"))
        if search is not None:
            errors.append(("tune.rate", "a fixed rate and phases.running.search exclude each "
                                        "other"))
        if running.utilizations:
            errors.append(("tune.rate", "a fixed rate replaces phases.running.utilizations"))
    if "p99_write_latency" in objectives and search is not None:
        errors.append(("tune.objective", "p99_write_latency is measured at one rate: leave "
                                         "phases.running.search out (or give tune.rate)"))
    names = list(tune.parameters)
    for k in names:
        if k in ("rep", "trial"):
            errors.append((f"tune.parameters.{k}", f"'{k}' is reserved"))
    # A parameter's domain is checked once its name and ends are known to be right.
    for name, bad in _endpoint_errors(spec, raw).items():
        errors += bad or resolve_domain(spec, name, tune.parameters[name])[1]
    return errors
