"""Spec errors: the exception that lists them, and pydantic's errors in the spec's words.

Every error is a (path, message) pair: ``matrix.scheduler[2]``, ``engine.options.memtable_byts``;
the path is the spec's own (discriminator tags and validator wrappers dropped).
"""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from ..util import names
from .models import CREDENTIAL_KEYS, CampaignSpec


class SpecError(Exception):
    """A spec that does not validate: ``errors`` holds (path, message) pairs."""

    def __init__(self, errors: list[tuple[str, str]], source: str = "") -> None:
        self.errors = errors
        self.source = source
        lines = [f"{p}: {m}" if p else m for p, m in errors]
        super().__init__("\n".join(lines))

    def lines(self) -> list[str]:
        return [f"{p}: {m}" if p else m for p, m in self.errors]



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


def pydantic_errors(exc: ValidationError) -> list[tuple[str, str]]:
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


