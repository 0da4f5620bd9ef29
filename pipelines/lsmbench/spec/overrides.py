"""Setting a value at a path in a raw spec: ``--set key.path=value`` and dotted dimensions.

One walker (:func:`set_path`) serves both: ``--set`` paths may index lists
(``matrix.size_ratio[1]``), dotted matrix dimensions and a workload's ``set``
are plain ``a.b.c``. On the way, the shorthands ``workload: NAME`` and
``testbed: NAME`` are expanded to their mappings so that a path can go into them.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from .models import testbed_shorthand, workload_shorthand

_SET_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_SHORTHANDS = {"workload": workload_shorthand, "testbed": testbed_shorthand}


def split_set_path(path: str) -> list[str | int]:
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


def set_path(raw: dict[str, Any], parts: list[str | int], value: Any, *, shown: str = "",
             replace_lists: bool = False) -> None:
    """Sets the value at `parts`, creating mappings (or lists before an index) on the way.

    A scalar in the way is replaced; a list in the way of a name is replaced by a mapping
    only with `replace_lists` (else a ValueError naming `shown`, the path as written)."""
    shown = shown or ".".join(str(p) for p in parts)
    node: Any = raw
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                raise ValueError(f"{shown}: index {part} out of range")
        else:
            if not isinstance(node, dict):
                raise ValueError(f"{shown}: {part!r} is not inside a mapping")
            if part in _SHORTHANDS and not last and isinstance(node.get(part), str):
                node[part] = _SHORTHANDS[part](node[part])
        if last:
            node[part] = value
            return
        nxt = parts[i + 1]
        child = node[part] if isinstance(part, int) else node.get(part)
        keep = isinstance(child, dict) or (isinstance(child, list)
                                           and (isinstance(nxt, int) or not replace_lists))
        if not keep:
            node[part] = [] if isinstance(nxt, int) else {}
        node = node[part]


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
    set_path(raw, split_set_path(key), value, shown=key)


def set_dotted(raw: dict[str, Any], path: str, value: Any) -> None:
    """Sets raw[a][b][c] = value for 'a.b.c', creating mappings on the way."""
    set_path(raw, list(path.split(".")), value, replace_lists=True)


def prune_excludes(matrix: Any, before: Any) -> None:
    """Drops from `matrix`'s exclude rules the values that a narrowing of their dimension took
    out (values `before`, the matrix as the file wrote it, had); a rule left with no value of
    a dimension (`[]`) matches nothing. So a spec narrowed by `--set 'matrix.policy=[tiering]'`
    stays valid with the file's rules, in their places, and as stored (campaign.json). A
    value neither matrix has stays: a typo is an error (spec.checks)."""
    if not isinstance(matrix, dict) or not isinstance(before, dict):
        return
    rules = matrix.get("exclude")
    if not isinstance(rules, list):
        return
    for rule in rules:
        if not isinstance(rule, dict):
            continue
        for dim, value in list(rule.items()):
            now, then = matrix.get(dim), before.get(dim)
            if not isinstance(now, list) or not isinstance(then, list):
                continue
            values = value if isinstance(value, list) else [value]
            left = [v for v in values if v in now or v not in then]
            if left != values:
                rule[dim] = left
