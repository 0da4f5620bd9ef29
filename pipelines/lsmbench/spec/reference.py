"""The campaign spec's reference page (docs/reference/spec.md), made from the models: each
section of a spec with its fields' types, defaults, allowed values and descriptions (their
``Field(description=...)``). ``python -m lsmbench.cli.reference`` writes it; a test compares."""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, BeforeValidator
from pydantic.fields import FieldInfo

from ..util.markdown import anchor, code, table
from .models import CampaignSpec, Duration, Settle


def _parser_of(alias: Any) -> Any:
    return next(m.func for m in get_args(alias)[1:] if isinstance(m, BeforeValidator))


# The spec's own scalar types, known by the validator that reads them.
_NAMED_TYPES = {_parser_of(Duration): "duration", _parser_of(Settle): "duration or bool"}
_BOUNDS = ("Gt", "Ge", "Lt", "Le", "MinLen")  # annotated_types' names
_SCALARS = {str: "string", int: "integer", float: "number", bool: "bool", Any: "any"}


@dataclass(frozen=True)
class Section:
    """One mapping of a spec: ``path`` is its dotted path ("" at the top level); ``kind``, the
    value of its ``discriminator`` field when it is one member of a union (a testbed's type)."""

    path: str
    model: type[BaseModel]
    kind: str | None = None
    intro: str = ""
    discriminator: str | None = None

    @property
    def title(self) -> str:
        if not self.path:
            return "Top level"
        if self.kind:
            return f"{code(self.path)} ({self.discriminator}: {code(self.kind)})"
        return code(self.path)

    def link(self, text: str | None = None) -> str:
        return f"[{text or self.title}](#{anchor(self.title)})"


def _strip(tp: Any) -> tuple[Any, list[Any]]:
    """A type without its Annotated wrapper, and that wrapper's metadata."""
    if get_origin(tp) is Annotated:
        base, *meta = get_args(tp)
        return base, meta
    return tp, []


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _kind(model: type[BaseModel], discriminator: str) -> str:
    return str(get_args(model.model_fields[discriminator].annotation)[0])


def _walk_type(tp: Any, path: str, meta: list[Any], found: list[Section],
               discriminator: str | None = None, intro: str = "") -> str:
    """The type as the page says it; each section it holds is appended to ``found``."""
    tp, inner = _strip(tp)
    meta = meta + inner
    for m in meta:
        if isinstance(m, BeforeValidator) and m.func in _NAMED_TYPES:
            return _NAMED_TYPES[m.func]
    if _is_union(tp):
        members = [a for a in get_args(tp) if a is not type(None)]
        if discriminator and all(_is_model(a) for a in members):
            kinds = [Section(path, a, _kind(a, discriminator), "", discriminator)
                     for a in members]
            found += kinds
            return "one of: " + ", ".join(s.link(code(s.kind)) for s in kinds)
        return ", or ".join(_walk_type(a, path, meta, found, intro=intro) for a in members)
    if get_origin(tp) is Literal:
        return "string" if all(isinstance(v, str) for v in get_args(tp)) else "value"
    if get_origin(tp) is list:
        (item,) = get_args(tp)
        return "list of " + _walk_type(item, f"{path}[]", [], found, intro=intro)
    if get_origin(tp) is dict:
        _, value = get_args(tp)
        if value is Any:
            return "mapping"
        return "mapping of name to " + _walk_type(value, f"{path}.NAME", [], found, intro=intro)
    if _is_model(tp):
        section = Section(path, tp, None, intro)
        found.append(section)
        return section.link()
    return _SCALARS.get(tp, getattr(tp, "__name__", str(tp)))


def _literals(tp: Any) -> list[Any]:
    tp, _ = _strip(tp)
    if get_origin(tp) is Literal:
        return list(get_args(tp))
    return [v for a in get_args(tp) for v in _literals(a)]


def _bounds(tp: Any, meta: list[Any]) -> list[Any]:
    """Every bound of a field, its items' included (``list[Annotated[float, Field(gt=0)]]``)."""
    tp, inner = _strip(tp)
    out: list[Any] = []
    for m in meta + inner:
        out += m.metadata if isinstance(m, FieldInfo) else [m]
    return out + [b for a in get_args(tp) for b in _bounds(a, [])]


def _seconds(v: float) -> str:
    """A duration as a spec may write it: 600 -> 10m, 0.25 -> 250ms."""
    if v == 0:
        return "0"
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if v >= size and v % size == 0:
            return f"{v / size:g}{unit}"
    return f"{v * 1000:g}ms" if v < 1 else f"{v:g}s"


def _number(v: float, duration: bool) -> str:
    return _seconds(v) if duration else f"{v:g}"


def _allowed(tp: Any, meta: list[Any], duration: bool) -> str:
    parts = []
    values = list(dict.fromkeys(_literals(tp)))
    if len(values) == 1:
        parts.append(code(values[0]))
    elif values:
        parts.append("one of: " + ", ".join(code(v) for v in values))
    bounds = {type(b).__name__: getattr(b, dataclasses.fields(b)[0].name)
              for b in _bounds(tp, meta) if type(b).__name__ in _BOUNDS}
    if "Ge" in bounds and "Le" in bounds:
        lo, hi = bounds.pop("Ge"), bounds.pop("Le")
        parts.append(f"{_number(lo, duration)} to {_number(hi, duration)}")
    words = {"Gt": "above", "Ge": "at least", "Lt": "under", "Le": "at most"}
    parts += [f"{word} {_number(bounds[name], duration)}" for name, word in words.items()
              if name in bounds]
    if "MinLen" in bounds:
        n = bounds["MinLen"]
        parts.append(f"at least {n} {'entry' if n == 1 else 'entries'}")
    return ", ".join(parts)


def _flow(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=1 << 20).strip()


def _default(field: FieldInfo, duration: bool) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, BaseModel):
        shown = value.model_dump(exclude_defaults=True)
        if "type" in type(value).model_fields:
            shown = {"type": value.model_dump(include={"type"})["type"], **shown}
        return code(_flow(shown)) if shown else "all defaults"
    if isinstance(value, bool):
        return code("true" if value else "false")
    if isinstance(value, str):
        return code(value) if value else code('""')
    if not isinstance(value, int | float):
        return code(_flow(value))
    if duration:
        return code(_seconds(value))
    return code(f"{value:.4g}")


def _rows(section: Section, found: list[Section]) -> list[list[str]]:
    rows = []
    fields = section.model.model_fields
    first = [section.discriminator] if section.discriminator else []  # a testbed: type first
    for name in first + [n for n in fields if n not in first]:
        field = fields[name]
        if not field.description:
            raise ValueError(f"{section.model.__name__}.{name} has no Field(description=...): "
                             "the reference needs one")
        path = f"{section.path}.{name}" if section.path else name
        discriminator = field.discriminator if isinstance(field.discriminator, str) else None
        kind = _walk_type(field.annotation, path, list(field.metadata), found, discriminator,
                          field.description)
        duration = kind.startswith("duration")
        rows.append([code(name), kind, _default(field, duration),
                     _allowed(field.annotation, list(field.metadata), duration),
                     field.description])
    return rows


def spec_page(root: type[BaseModel] = CampaignSpec) -> str:
    """docs/reference/spec.md for the spec whose top level is ``root``."""
    pending = [Section("", root)]
    done: list[tuple[Section, list[list[str]]]] = []
    while pending:
        section = pending.pop(0)
        found: list[Section] = []
        done.append((section, _rows(section, found)))
        pending[:0] = found  # depth first: a section's own sections follow it
    titles = [s.title for s, _ in done]
    if len(set(titles)) != len(titles):
        raise ValueError(f"two sections of one title: {titles}")
    lines = [
        "<!-- Generated by `python -m lsmbench.cli.reference` from "
        "pipelines/lsmbench/spec/models.py and tune.py; do not edit (a test compares). -->",
        "# Campaign spec reference",
        "",
        "A campaign spec is a YAML mapping. Each section below is one mapping of it. "
        "An unknown key is an error. `lsmbench validate SPEC` lists every error by its path.",
        "",
        "Durations are seconds or a number with a unit: `90`, `90s`, `1.5m`, `2h`, `250ms`. "
        "A field of type `duration or bool` also takes `false` (off) and `true` (its default). "
        "The engine's options are in [engine-options.md](engine-options.md). "
        "How the fields work together: [campaign-specs.md](../campaign-specs.md).",
        "",
        "Sections: " + " · ".join(s.link() for s, _ in done),
    ]
    for section, rows in done:
        lines += ["", f"## {section.title}", ""]
        if section.kind:
            lines += [f"The {code(section.path)} section when "
                      f"{code(f'{section.discriminator}: {section.kind}')}.", ""]
        if section.intro:
            lines += [section.intro, ""]
        lines += table(["field", "type", "default", "allowed", "description"], rows)
    return "\n".join(lines) + "\n"
