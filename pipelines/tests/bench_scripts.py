"""The scripts of research/bench, which are not part of the package, loaded as modules for
the tests that call their functions."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from lsmbench.util.paths import project_root

BENCH = project_root() / "research" / "bench"


def load_bench_script(name: str) -> ModuleType:
    """research/bench/<name>.py as module `name` (registered, so pydantic models and
    dataclasses in it resolve their annotations)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
