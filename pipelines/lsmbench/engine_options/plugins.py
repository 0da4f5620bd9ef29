"""Engine plugins (engines/plugin/include/lsmbench/engine_plugin.h): found by name on the
plugin path, described by the driver that will load them.

A spec names a plugin like any engine, ``engine.name: memkv``, and the file is
``lsmbench-memkv.so`` in the first directory of the plugin path that has it:
``$LSMBENCH_PLUGIN_PATH`` (colon-separated), then ``plugins/`` of each build directory
(``$LSMBENCH_BUILD_DIR``, ``build/``), where the project's own plugins are built.
``engine.plugin: PATH`` names the file instead (relative to the spec's directory).

What a plugin accepts is what ``lsm-driver --describe-options PATH`` prints: its option
table, its version and what it cannot tell. Once described, a plugin is *registered* under
its name, and :func:`lsmbench.engine_options.description` answers for it as for a compiled-in
engine.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..util import names
from ..util.paths import build_candidates, find_driver, project_root
from . import EngineDescription, register_plugin

PLUGIN_NAME_RE = re.compile(r"[a-z][a-z0-9_-]*")
DESCRIBE_TIMEOUT_S = 30.0


def plugin_file(name: str) -> str:
    return f"lsmbench-{name}.so"


def plugin_dirs() -> list[Path]:
    """The plugin path, in order (directories that do not exist included)."""
    dirs: list[Path] = []
    given = [Path(d) for d in os.environ.get("LSMBENCH_PLUGIN_PATH", "").split(":") if d]
    for d in given + [b.parent.parent / "plugins" for b in build_candidates("lsm-driver")]:
        d = d.absolute()
        if d not in dirs:
            dirs.append(d)
    return dirs


def is_plugin_name(name: str) -> bool:
    """A name that is not a compiled-in engine's and could be a plugin's."""
    return name not in names.ENGINES and PLUGIN_NAME_RE.fullmatch(name) is not None


def on_path(name: str) -> Path | None:
    """The plugin file for engine `name` in the first directory of the plugin path that has
    it, or None."""
    for d in plugin_dirs():
        p = d / plugin_file(name)
        if p.is_file():
            return p.resolve()
    return None


def find_plugin(name: str, explicit: str | None = None, source: Path | None = None) -> Path:
    """The plugin file for engine `name`; ValueError saying where it was looked for."""
    if explicit is not None:
        p = Path(explicit).expanduser()
        if not p.is_absolute():
            p = (source.parent if source is not None else project_root()) / p
        if not p.is_file():
            raise ValueError(f"engine plugin {explicit}: no such file ({p})")
        return p.resolve()
    p = on_path(name)
    if p is not None:
        return p
    found = sorted({p.name[len("lsmbench-"):-len(".so")] for d in plugin_dirs() if d.is_dir()
                    for p in d.glob("lsmbench-*.so")})
    where = ", ".join(str(d) for d in plugin_dirs())
    known = list(dict.fromkeys([*names.ENGINES, *names.PROJECT_PLUGINS, *found]))
    return _not_found(name, where, known)


def _not_found(name: str, where: str, known: list[str]) -> Path:
    close = next(iter(difflib.get_close_matches(name, known, n=1)), None)
    hint = f"did you mean '{close}'? " if close else ""
    raise ValueError(f"unknown engine '{name}': neither compiled into lsm-driver nor a plugin "
                     f"{plugin_file(name)} on the plugin path ({where}) ({hint}choose from: "
                     f"{names.choices(known)})")


@dataclass(frozen=True)
class PluginInfo:
    """A plugin as the driver describes it."""

    path: Path
    name: str
    version: str
    abi_version: int
    cannot_tell: tuple[str, ...]
    secondary_indexes: bool
    description: EngineDescription


_described: dict[tuple[str, int, int], PluginInfo] = {}
_registered: dict[str, PluginInfo] = {}


def describe_plugin(path: Path, driver: Path | None = None) -> PluginInfo:
    """What the driver says of the plugin at path (cached while the file is unchanged);
    ValueError with the driver's reason when it refuses the plugin."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key in _described:
        return _described[key]
    drv = driver or find_driver()
    if drv is None:
        raise ValueError(f"engine plugin {path}: describing it needs lsm-driver, which is not "
                         "built (make build)")
    try:
        r = subprocess.run([str(drv), "--describe-options", str(path)], capture_output=True,
                           text=True, timeout=DESCRIBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ValueError(f"engine plugin {path}: {drv} could not describe it: {e}") from e
    if r.returncode != 0:
        lines = [ln.removeprefix("lsm-driver: ") for ln in r.stderr.strip().splitlines()]
        why = lines[-1] if lines else f"lsm-driver exit {r.returncode}"
        if r.returncode < 0:
            why = f"lsm-driver was killed by signal {-r.returncode} loading it" + (
                f" ({lines[-1]})" if lines else "")
        raise ValueError(why)
    try:
        data = json.loads(r.stdout)
        plugin = data.pop("plugin")
        desc = EngineDescription.model_validate(
            {**data, "options_open": bool(plugin.get("options_open", False))})
        info = PluginInfo(path=path, name=desc.engine, version=str(plugin["version"]),
                          abi_version=int(plugin["abi_version"]),
                          cannot_tell=tuple(plugin["cannot_tell"]),
                          secondary_indexes=bool(plugin["secondary_indexes"]),
                          description=desc)
    except (ValueError, KeyError, TypeError, ValidationError) as e:
        raise ValueError(f"engine plugin {path}: {drv} described it in a form this lsmbench "
                         f"does not read ({e})") from e
    _described[key] = info
    return info


def resolve_plugin(name: str, explicit: str | None = None,
                   source: Path | None = None) -> PluginInfo:
    """Finds, describes and registers the plugin for engine `name`; ValueError when there is
    none, the driver refuses it, or it calls itself by another name."""
    info = describe_plugin(find_plugin(name, explicit, source))
    if info.name != name:
        raise ValueError(f"engine plugin {info.path} calls itself '{info.name}', not '{name}' "
                         "(engine.name must be the plugin's own name)")
    _registered[name] = info
    register_plugin(name, info.description)
    return info


def registered(name: str) -> PluginInfo | None:
    """The plugin last resolved under `name`, if any."""
    return _registered.get(name)


def run_json_path(name: str, explicit: str | None = None,
                  driver: str | None = None) -> str | None:
    """run.json's engine_plugin for engine `name` on this machine (a remote node's is the
    one its testbed installed there: campaign.session): None for an engine compiled in. A
    point run by a driver of its own (pair:'s reference build, a nightly's
    or a bisection's) loads the plugin built beside it, in that build's plugins/, when there
    is one: the commit's plugin goes with the commit's build. Else `engine.plugin`, or the
    file the spec's validation resolved, or the one found now (ValueError when none is)."""
    if not is_plugin_name(name):
        return None
    if driver is not None and explicit is None:
        # absolute(), not resolve(): a plugin build links the driver in, from elsewhere.
        beside = Path(driver).absolute().parent.parent / "plugins" / plugin_file(name)
        if beside.is_file():
            return str(beside)
    return str(plugin_path(name, explicit))


def plugin_path(name: str, explicit: str | None = None) -> Path:
    """This machine's file for plugin `name`: the one the spec's validation resolved, else
    `engine.plugin` or the one on the plugin path (ValueError when there is none)."""
    return (registered(name) or resolve_plugin(name, explicit)).path
