"""Reading a YAML or JSON document a user names, whatever the file turns out to be.

Every failure is a ValueError whose message starts with the path: not a regular
file (a directory, a device, a FIFO), a symlink loop, larger than
:data:`MAX_BYTES`, not UTF-8 text, not valid YAML/JSON, nested deeper than
:data:`MAX_DEPTH`, or anchors and aliases that expand to more than
:data:`MAX_NODES` nodes ("billion laughs"). A spec is a few kilobytes: the
limits are far above any real one.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 8 << 20
MAX_DEPTH = 64
MAX_NODES = 100_000


def read_text(path: Path, *, expected: str = "a YAML file", what: str = "a spec",
              max_bytes: int = MAX_BYTES) -> str:
    """The file's text (UTF-8); ValueError 'PATH: why' for anything else. ``expected`` and
    ``what`` name the file in the messages ("a directory (expected a YAML file)", "larger
    than the ... bytes a spec may have")."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise ValueError(f"{path}: {kind} (expected {expected})")
        if st.st_size > max_bytes:
            raise ValueError(f"{path}: {st.st_size} bytes, larger than the {max_bytes} "
                             f"{what} may have")
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(data) > max_bytes:
        raise ValueError(f"{path}: larger than the {max_bytes} bytes {what} may have")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a text file (byte 0x{data[e.start]:02x} at offset "
                         f"{e.start} is not UTF-8)") from None


def _check_shape(node: yaml.Node, path: Path) -> None:
    """Height and expanded size of a composed YAML graph, an alias counting every time it is
    used; a node that contains itself is refused too (nothing downstream could walk it)."""
    done: dict[int, tuple[int, int]] = {}  # id -> (expanded size, height)
    open_: set[int] = set()  # the ancestors of the node being visited
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        n, finishing = stack.pop()
        children: list[yaml.Node] = []
        if isinstance(n, yaml.SequenceNode):
            children = list(n.value)
        elif isinstance(n, yaml.MappingNode):
            children = [x for kv in n.value for x in kv]
        if not finishing:
            if id(n) in done:
                continue
            if isinstance(n, yaml.MappingNode):
                _check_unique_keys(n, path)
            open_.add(id(n))
            stack.append((n, True))
            for c in children:
                if id(c) in open_:
                    raise ValueError(f"{path}: line {c.start_mark.line + 1}: an alias refers to "
                                     "a value that contains it")
                if id(c) not in done:
                    stack.append((c, False))
            continue
        size = 1 + sum(done[id(c)][0] for c in children)
        height = 1 + max((done[id(c)][1] for c in children), default=0)
        if height > MAX_DEPTH:
            raise ValueError(f"{path}: nested more than {MAX_DEPTH} levels deep")
        if size > MAX_NODES:
            raise ValueError(f"{path}: expands to more than {MAX_NODES} values (anchors and "
                             "aliases used over and over?)")
        done[id(n)] = (size, height)
        open_.discard(id(n))


def _check_unique_keys(mapping: yaml.MappingNode, path: Path) -> None:
    """A key given twice in one mapping is refused, naming both lines: YAML loaders keep the
    last silently, and a spec whose `name:` or `duration:` appears twice means one of them."""
    seen: dict[tuple[str, str], int] = {}
    for key, _ in mapping.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        ident = (key.tag, key.value)
        line = key.start_mark.line + 1
        if ident in seen:
            raise ValueError(f"{path}: line {line}: the key {key.value!r} is given twice in one "
                             f"mapping (first on line {seen[ident]}); keep one")
        seen[ident] = line


def parse_yaml(text: str, path: Path) -> Any:
    """The document of a YAML text, within the limits above."""
    loader: yaml.SafeLoader | None = None
    try:
        loader = yaml.SafeLoader(text)
        node = loader.get_single_node()
        if node is None:
            return None
        _check_shape(node, path)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ValueError(f"{path}: not valid YAML: {where}{e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML: {e}") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_document(path: Path, *, json_file: bool = False) -> Any:
    """A YAML (or, with json_file, JSON) file's document; ValueError 'PATH: why'."""
    text = read_text(path)
    if not json_file:
        return parse_yaml(text, path)
    try:
        return json.loads(text)
    except ValueError as e:
        raise ValueError(f"{path}: not valid JSON: {e}") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply") from None
