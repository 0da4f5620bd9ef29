"""The package's import structure (docs/architecture.md, "Layers"), beyond what `lint-imports`
checks (pyproject.toml, [tool.importlinter]: the layers, no cycle between the children of a
package):

* no import cycle at all between lsmbench's modules -- a package's ``__init__`` and its own
  modules included, which import-linter's acyclic_siblings contract does not look at (the
  reproduce.claims registry was such a cycle);
* no private name (one leading underscore) of one module used by another: what another module
  needs is public and named for it. Ruff's PLC2701 cannot say this: it exempts every import
  from the same top-level package.

Each checker also runs on a small package written to tmp_path that breaks its rule, so that a
checker which finds nothing cannot pass unnoticed. Every import statement counts, one inside a
function or under ``if TYPE_CHECKING:`` too: hiding an import does not remove the dependency.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import grimp
import lsmbench
import pytest

PACKAGE = "lsmbench"
PACKAGE_DIR = Path(lsmbench.__file__).parent


def import_cycle(package: str) -> list[str] | None:
    """One import cycle among the modules of an importable package, as [a, b, ..., a], or
    None when there is none."""
    graph = grimp.build_graph(package, cache_dir=None)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    try:
        graphlib.TopologicalSorter(imports).prepare()
    except graphlib.CycleError as e:
        return list(e.args[1])
    return None


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_names(package_dir: Path, package: str) -> dict[Path, str]:
    """Every module file of the package -> its dotted name (a package's is its __init__'s)."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [package, *path.relative_to(package_dir).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[path] = ".".join(parts)
    return out


def _imported_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute name of the module an ImportFrom reads from."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()  # a module's relative imports start from its package
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def private_uses(package_dir: Path, package: str) -> list[str]:
    """Every use of another module's private name in the package, as 'file:line: what':
    ``from m import _name`` and ``m._name`` for a module m of the package."""
    names = _module_names(package_dir, package)
    modules = set(names.values())
    found = []
    for path, module in names.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        where = path.relative_to(package_dir.parent)
        bound: dict[str, str] = {}  # a local name -> the package's module it is
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _imported_from(node, module, path.name == "__init__.py")
                if source not in modules:
                    continue
                for alias in node.names:
                    if _is_private(alias.name):
                        found.append(f"{where}:{node.lineno}: from {source} import {alias.name}")
                    elif f"{source}.{alias.name}" in modules:
                        bound[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        top = alias.name.split(".")[0]
                        bound[alias.asname or top] = alias.name if alias.asname else top
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _is_private(node.attr)):
                continue
            owner = _dotted(node.value)
            if owner is None:
                continue
            head, _, rest = owner.partition(".")
            target = bound.get(head)
            if target is not None and (f"{target}.{rest}" if rest else target) in modules:
                found.append(f"{where}:{node.lineno}: {owner}.{node.attr}")
    return found


# ---------------------------------------------------------------- lsmbench


def test_lsmbench_has_no_import_cycle():
    cycle = import_cycle(PACKAGE)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_module_uses_another_modules_private_names():
    assert private_uses(PACKAGE_DIR, PACKAGE) == []


# ---------------------------------------------------------------- the checkers break


def write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize(("files", "expected"), [
    # a package's __init__ and its own module, the import hidden in a function
    ({"pkg/__init__.py": "from .a import public\n",
      "pkg/a.py": "def public():\n    from . import registry\n    return registry\n"},
     {"pkg", "pkg.a"}),
    # two siblings deep in a subpackage, one import under TYPE_CHECKING
    ({"pkg/__init__.py": "", "pkg/sub/__init__.py": "",
      "pkg/sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from .c import C\n",
      "pkg/sub/c.py": "from . import b\nC = b\n"},
     {"pkg.sub.b", "pkg.sub.c"}),
])
def test_import_cycle_finds_hidden_cycles(tmp_path, monkeypatch, files, expected):
    write_package(tmp_path, files)
    monkeypatch.syspath_prepend(str(tmp_path))
    cycle = import_cycle("pkg")
    assert cycle is not None and set(cycle) == expected


def test_import_cycle_is_none_without_one(tmp_path, monkeypatch):
    write_package(tmp_path, {"pkg/__init__.py": "from .a import f\n",
                             "pkg/a.py": "from .b import g\n\ndef f():\n    return g()\n",
                             "pkg/b.py": "def g():\n    return 1\n"})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycle("pkg") is None


def test_private_uses_finds_each_form(tmp_path):
    write_package(tmp_path, {
        "pkg/__init__.py": "__version__ = '1'\n",
        "pkg/a.py": "def _hidden():\n    return 1\n\ndef public():\n    return _hidden()\n",
        "pkg/b.py": "from .a import _hidden, public\n",
        "pkg/c.py": "from . import a\n\ndef f():\n    return a._hidden()\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/d.py": "import pkg.a\nimport pkg.a as m\nfrom pkg.a import _hidden as h\n"
                        "from ..a import public\nfrom .. import __version__\n"
                        "x = (pkg.a._hidden, m._hidden, h, public, __version__)\n",
        # fine: a module's own private names, another package's, a function's attribute
        "pkg/e.py": "import os\nfrom .a import public\n_own = os._exit\n"
                    "y = (_own, public._cache)\n",
    })
    found = private_uses(tmp_path / "pkg", "pkg")
    assert [f.split(": ", 1)[1] for f in found] == [
        "from pkg.a import _hidden",
        "a._hidden",
        "from pkg.a import _hidden",
        "pkg.a._hidden",
        "m._hidden",
    ]
    assert [f.split(":")[0] for f in found] == [
        "pkg/b.py", "pkg/c.py", "pkg/sub/d.py", "pkg/sub/d.py", "pkg/sub/d.py"]
