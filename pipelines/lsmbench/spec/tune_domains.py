"""Each searched parameter's domain, resolved once: the spec's ``low``/``high``/``choices``,
or the range the engine describes for the option (``lsm-driver --describe-options``).

A domain asks an Optuna trial for a value (:meth:`Domain.suggest`) and names the spec path of
anything wrong with it (:func:`resolve_domains`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..engine_options import OptionDescription, description, option_string
from ..engine_options.policy_defaults import resolve as resolve_policy_default
from ..util.units import parse_size
from .checks import dimension_option
from .models import CampaignSpec
from .tune import TuneParameter

Kind = Literal["int", "float", "categorical"]


@dataclass(frozen=True)
class Domain:
    name: str  # as the spec writes it (an engine option, an alias, or a dotted path)
    kind: Kind
    low: float | None = None
    high: float | None = None
    log: bool = False
    step: float | None = None
    choices: tuple[Any, ...] = ()
    option: str | None = None  # the engine option it sets, if any
    unit: str | None = None

    def suggest(self, trial: Any) -> Any:
        if self.kind == "categorical":
            return trial.suggest_categorical(self.name, list(self.choices))
        if self.kind == "int":
            assert self.low is not None and self.high is not None
            return trial.suggest_int(self.name, int(self.low), int(self.high),
                                     step=int(self.step or 1), log=self.log)
        assert self.low is not None and self.high is not None
        return trial.suggest_float(self.name, float(self.low), float(self.high),
                                   step=self.step, log=self.log)

    def contains(self, value: Any) -> bool:
        if self.kind == "categorical":
            return value in self.choices
        try:
            x = float(value)
        except (TypeError, ValueError):
            return False
        assert self.low is not None and self.high is not None
        if self.kind == "int" and not float(x).is_integer():
            return False
        return self.low <= x <= self.high

    def describe(self) -> str:
        if self.kind == "categorical":
            return "{" + ", ".join(option_string(c) for c in self.choices) + "}"
        assert self.low is not None and self.high is not None
        scale = ", log" if self.log else ""
        step = f", step {self.step:g}" if self.step else ""
        ends = (f"[{int(self.low):,}, {int(self.high):,}]" if self.kind == "int"
                else f"[{self.low:g}, {self.high:g}]")
        unit = f" {self.unit}" if self.unit else ""
        return f"{ends}{unit} {self.kind}{scale}{step}"


def _number(value: Any, opt: OptionDescription | None) -> float:
    if opt is not None and opt.type == "size":
        return float(parse_size(value))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def resolve_domain(spec: CampaignSpec, name: str,
                   p: TuneParameter) -> tuple[Domain | None, list[tuple[str, str]]]:
    """One parameter's domain, or the errors (path, message) that keep it from having one."""
    path = f"tune.parameters.{name}"
    option = dimension_option(name)
    desc = description(spec.engine.name) if option is not None else None
    opt = desc.get(option) if desc is not None and option is not None else None
    if option is not None and desc is not None and opt is None:
        return None, []  # the endpoint checks name the unknown option (checks.tune_errors)
    if p.choices is not None:
        return Domain(name=name, kind="categorical", choices=tuple(p.choices), option=option,
                      unit=opt.unit if opt else None), []
    if opt is not None and opt.type in ("choice", "bool") and p.low is None:
        values = tuple(opt.choices or ()) if opt.type == "choice" else (False, True)
        return Domain(name=name, kind="categorical", choices=values, option=option), []
    if p.low is None:
        if opt is None or opt.min is None or opt.max is None or opt.type == "string":
            what = (f"{name} is not an engine option of {spec.engine.name}" if opt is None
                    else f"the engine describes no range for {name}")
            return None, [(path, f"{what}: give its domain (low and high, or choices)")]
        low, high = float(opt.min), float(opt.max)
    else:
        errors = []
        try:
            low = _number(p.low, opt)
        except ValueError as e:
            errors.append((f"{path}.low", str(e)))
        try:
            high = _number(p.high, opt)
        except ValueError as e:
            errors.append((f"{path}.high", str(e)))
        if errors:
            return None, errors
    if not low < high:
        return None, [(path, f"empty domain: low ({low:g}) must be under high ({high:g})")]
    # Integers for an integer or size option, and whenever both ends are integers (size_ratio
    # {low: 2, high: 12}; write 2.0 for a real range).
    ends_int = all(isinstance(v, int) and not isinstance(v, bool) for v in (p.low, p.high))
    is_int = (opt is not None and opt.type in ("int", "size")) or (
        ends_int and (opt is None or opt.type == "real"))
    log = p.log if p.log is not None else (opt is not None and opt.type == "size" and low > 0)
    if log and low <= 0:
        return None, [(f"{path}.log", f"a log scale needs low > 0 (low is {low:g})")]
    if log and p.step is not None:
        return None, [(f"{path}.step", "a log scale takes no step")]
    if is_int and p.step is not None and not float(p.step).is_integer():
        return None, [(f"{path}.step", f"an integer parameter takes an integer step, got "
                                       f"{p.step:g}")]
    return Domain(name=name, kind="int" if is_int else "float", low=low, high=high, log=log,
                  step=p.step, option=option, unit=opt.unit if opt else None), []


def resolve_domains(spec: CampaignSpec) -> tuple[dict[str, Domain], list[tuple[str, str]]]:
    out: dict[str, Domain] = {}
    errors: list[tuple[str, str]] = []
    assert spec.tune is not None
    for name, p in spec.tune.parameters.items():
        dom, errs = resolve_domain(spec, name, p)
        errors += errs
        if dom is not None:
            out[name] = dom
    return out, errors


def default_value(spec: CampaignSpec, dom: Domain) -> Any:
    """What the spec runs without tuning: engine.options' value, else the engine's default,
    resolved as the engine runs it (a size_ratio of 0 is the policy's default: 10 for
    leveling); None when neither is known, e.g. a dotted path."""
    if dom.option is None:
        value: Any = spec.model_dump()
        for part in dom.name.split("."):
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value if dom.contains(value) else None
    if dom.option in spec.engine.options:
        value = spec.engine.options[dom.option]
    else:
        desc = description(spec.engine.name)
        opt = desc.get(dom.option) if desc is not None else None
        if opt is None:
            return None
        value = opt.default
    desc = description(spec.engine.name)
    policy = desc.get("merge_policy") if desc is not None else None
    value = resolve_policy_default(spec.engine.name, dom.option, value, spec.engine.options,
                                   str(policy.default) if policy is not None else "")
    if dom.kind == "int":
        try:
            number = parse_size(value) if isinstance(value, str) else value
            # 1.2 stays 1.2: outside an integer domain, not truncated into it.
            return int(number) if float(number).is_integer() else number
        except (TypeError, ValueError):
            return None
    if dom.kind == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value
