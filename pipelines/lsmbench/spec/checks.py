"""Cross-field checks of a raw spec, after (and besides) the models' own.

Engine options -- in engine.options, a phase's engine_options, or a matrix
dimension that names one (policy -> merge_policy, scheduler ->
merge_scheduler) -- against the engine's option description
(:mod:`lsmbench.engine_options`); the matrix (dimension names and values,
zip groups, exclude rules); testing phases shared across dimensions; the
workload file; the testbed's key files. Every error is (spec path, message).
"""

from __future__ import annotations

import copy
import difflib
import math
import re
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import engine_options
from ..engine_options import plugins
from ..util import names
from ..util.paths import find_driver
from ..util.wording import plural
from .errors import pydantic_errors
from .models import (
    DOTTED_DIMENSION_ROOTS,
    MATRIX_RESERVED,
    PER_POINT_THROTTLE_FIELDS,
    PHASE_NAMES,
    CampaignSpec,
)
from .overrides import set_dotted
from .workload import find_workload_file

_OPTION_RE = re.compile(r"^[a-z_][a-z0-9_.]*$")


def _is_scalar(v: Any) -> bool:
    return isinstance(v, str | int | float | bool)


def dimension_option(key: str) -> str | None:
    """The engine option a matrix dimension sets: its name for an undotted one (aliases
    resolved: policy -> merge_policy), the last part of engine.options.X and
    phases.P.engine_options.X; None for any other spec path."""
    if key == names.ENGINE_DIMENSION:
        return None  # the names of the spec's engines, not an option
    if "." not in key:
        return names.DIMENSION_ALIASES.get(key, key)
    if key.startswith("engine.options.") or (key.startswith("phases.")
                                             and ".engine_options." in key):
        return key.rsplit(".", 1)[-1]
    return None


# An engine section of a raw spec, by its path: ("engine", {...}) or ("engines.NAME", {...}).
Section = tuple[str, dict[str, Any]]


def engine_sections(raw: dict[str, Any]) -> list[Section]:
    """The engine sections a campaign runs: each entry of `engines`, else `engine`."""
    engines = raw.get("engines")
    if isinstance(engines, dict) and engines:
        return [(f"engines.{k}", v if isinstance(v, dict) else {}) for k, v in engines.items()]
    engine = raw.get("engine")
    return [("engine", engine if isinstance(engine, dict) else {})]


def engine_names(raw: dict[str, Any], sections: list[Section] | None = None) -> list[str]:
    """The engines a campaign names (of `sections`: default all): each section's name, or
    each value of an engine.name dimension; a name that can be no engine's (the models report
    it) as the closest compiled-in one."""
    matrix = raw.get("matrix")
    dim = matrix.get("engine.name") if isinstance(matrix, dict) else None
    if dim is not None:
        values = dim if isinstance(dim, list) else [dim]
    else:
        values = [s.get("name", "builtin") for _, s in (sections or engine_sections(raw))]
    out = []
    for v in values:
        if not isinstance(v, str) or not (v in names.ENGINES or plugins.is_plugin_name(v)):
            v = _stand_in(v)
        if v not in out:
            out.append(v)
    return out


def engines_of(raw: dict[str, Any], sections: list[Section] | None = None) -> list[str]:
    """The engines whose options a campaign's (of `sections`: default all) are checked
    against: each it names, a plugin once resolved (plugin_errors); a name that is no plugin
    found (a typo of builtin?) counts as the closest compiled-in engine, so that its options
    are still checked."""
    sections = sections or engine_sections(raw)
    out: list[str] = []
    for e in engine_names(raw, sections):
        if e in names.ENGINES or plugins.registered(e) or _not_describable(e):
            checked: str | None = e  # a project plugin not built: its committed description
        elif any(e == s.get("name") and s.get("plugin") is not None for _, s in sections) or any(
                (d / plugins.plugin_file(e)).is_file() for d in plugins.plugin_dirs()):
            checked = None  # a plugin's file, refused: plugin_errors says why
        else:
            checked = _stand_in(e)
        if checked is not None and checked not in out:
            out.append(checked)
    return out


def _stand_in(name: Any) -> str:
    """The engine whose options are checked for a name that is no engine's: the closest
    compiled-in engine or project plugin."""
    close = difflib.get_close_matches(str(name), names.ENGINES + names.PROJECT_PLUGINS, n=1)
    return close[0] if close else "builtin"


def plugin_errors(raw: dict[str, Any], source: Path | None) -> list[tuple[str, str]]:
    """Each engine plugin the campaign runs, found and described by the driver (and so
    registered for the option checks); the reason where one cannot be. The path of each
    error is the section's plugin or name (engine.plugin, engines.NAME.name, ...) or
    matrix.engine.name."""
    errors: list[tuple[str, str]] = []
    for section in engine_sections(raw):
        for e in _section_plugin_errors(raw, section, source):
            if e not in errors:
                errors.append(e)
    return errors


def _section_plugin_errors(raw: dict[str, Any], section: Section,
                           source: Path | None) -> list[tuple[str, str]]:
    spath, engine = section
    base = engine.get("name", "builtin")
    explicit = engine.get("plugin") if isinstance(engine.get("plugin"), str) else None
    matrix = raw.get("matrix") if isinstance(raw.get("matrix"), dict) else {}
    errors: list[tuple[str, str]] = []
    for name in engine_names(raw, [section]):
        if not plugins.is_plugin_name(name):
            continue
        path = (f"{spath}.plugin" if name == base and explicit is not None
                else "matrix.engine.name" if "engine.name" in matrix else f"{spath}.name")
        own = explicit if name == base else None
        if own is None and _not_describable(name):
            problem = _unbuilt_project_plugin(name)
            if problem is not None:
                errors.append((path, problem))
            continue
        try:
            plugins.resolve_plugin(name, explicit if name == base else None, source)
        except ValueError as e:
            errors.append((path, str(e)))
    return errors


# What each project plugin's CMake target needs besides the compiler (engines/plugin).
_PLUGIN_NEEDS = {"rocksdb": "librocksdb-dev", "leveldb": "libleveldb-dev", "pebble": "Go",
                 "fjall": "Rust (cargo)"}


def _not_describable(name: str) -> bool:
    """A project plugin the driver cannot describe here: no driver, or no plugin file."""
    return name in names.PROJECT_PLUGINS and (find_driver() is None
                                              or plugins.on_path(name) is None)


def _unbuilt_project_plugin(name: str) -> str | None:
    """Why a project plugin the driver cannot describe cannot run, or None before the driver
    is built (validate then checks what the committed descriptions tell, and says what it
    could not: cli.specs._driver_check)."""
    if find_driver() is None:
        return None
    needs = _PLUGIN_NEEDS.get(name)
    where = ", ".join(str(d) for d in plugins.plugin_dirs())
    return (f"engine plugin '{name}' is not built (no {plugins.plugin_file(name)} on the "
            f"plugin path: {where}): `make build` builds it"
            + (f" when {needs} is installed (`make deps` installs it)" if needs else ""))


def _option_errors(option: str, value: Any, path: str, name_path: str,
                   engines: list[str]) -> list[tuple[str, str]]:
    """An engine option's value against each engine's description: a bad value at `path`,
    an unknown name at `name_path` (the key itself)."""
    out: list[tuple[str, str]] = []
    for engine in engines:
        desc = engine_options.description(engine)
        if desc is None:
            continue  # rocksdb: the driver checks (driver_checks.options)
        opt = desc.get(option)
        if opt is None and desc.options_open:
            continue  # the driver checks it (driver_checks.options)
        if opt is None:
            out.append((name_path, engine_options.name_error(desc, option)))
        else:
            msg = engine_options.value_error(opt, value)
            if msg is not None:
                out.append((path, msg))
    return out


def _check_engine_options(opts: Any, path: str, engines: list[str]) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    if not isinstance(opts, dict):
        return errors  # pydantic reports the type
    for key, value in opts.items():
        kpath = f"{path}.{key}"
        if not isinstance(key, str) or not _OPTION_RE.match(key):
            errors.append((kpath, "bad engine option name (lower_case_with_underscores)"))
        elif not _is_scalar(value):
            errors.append((kpath, f"expected a scalar value, got {value!r}"))
        else:
            errors += _option_errors(key, value, kpath, kpath, engines)
    return errors


def semantic_errors(raw: dict[str, Any], source: Path | None) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = engines_errors(raw) + plugin_errors(raw, source)
    engines = engines_of(raw)
    for spath, section in engine_sections(raw):
        errors += _check_engine_options(section.get("options", {}), f"{spath}.options",
                                        engines_of(raw, [(spath, section)]))
    phases = raw.get("phases")
    if isinstance(phases, dict):
        for ph in PHASE_NAMES:
            section = phases.get(ph)
            if isinstance(section, dict) and "engine_options" in section:
                errors += _check_engine_options(
                    section["engine_options"], f"phases.{ph}.engine_options", engines
                )
    matrix = raw.get("matrix", {})
    if matrix is None:
        matrix = {}
    if not isinstance(matrix, dict):
        errors.append(("matrix", f"expected a mapping of dimensions, got {matrix!r}"))
    else:
        errors += matrix_errors(matrix, raw)
        for key in ("workload", "workload.file"):  # each point's workload file must exist
            values = matrix.get(key)
            for i, v in enumerate(values if isinstance(values, list) else []):
                if isinstance(v, str):
                    try:
                        find_workload_file(v, source)
                    except ValueError as e:
                        errors.append((f"matrix.{key}[{i}]", str(e)))
    wref = raw.get("workload")
    wfile = wref if isinstance(wref, str) else (
        wref.get("file") if isinstance(wref, dict) else None)
    if isinstance(wfile, str):
        try:
            find_workload_file(wfile, source)
        except ValueError as e:
            errors.append(("workload", str(e)))
    return errors


_ENGINE_LABEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")


def engines_errors(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """`engines` and the matrix dimension `engine` that picks among them, as a pair."""
    engines = raw.get("engines")
    matrix = raw.get("matrix") if isinstance(raw.get("matrix"), dict) else {}
    dim = matrix.get(names.ENGINE_DIMENSION)
    if engines is None:
        if dim is not None:
            return [(f"matrix.{names.ENGINE_DIMENSION}", "names entries of `engines`, and the "
                     "spec has none (to vary the engine alone: matrix `engine.name`)")]
        return []
    if not isinstance(engines, dict):
        return []  # pydantic reports the type
    errors: list[tuple[str, str]] = []
    if not engines:
        errors.append(("engines", "needs at least one engine"))
    for label in engines:
        if not isinstance(label, str) or not _ENGINE_LABEL_RE.fullmatch(label):
            errors.append((f"engines.{label}", "bad name (letters, digits, '.', '_', '-'; at "
                                               "most 40 characters: it goes into point ids)"))
    if "engine" in raw:
        errors.append(("engine", "a campaign with `engines` runs each point's entry of it: "
                                 "leave out `engine`"))
    if raw.get("tune") is not None:
        errors.append(("engines", "lsmbench tune studies one engine: give it as `engine`"))
    if dim is None:
        listed = names.choices([str(k) for k in engines])
        errors.append(("engines", f"needs the matrix dimension `{names.ENGINE_DIMENSION}`, "
                                  f"listing the engines to run (of: {listed})"))
    for key in matrix:
        if isinstance(key, str) and key.startswith("engine."):
            errors.append((f"matrix.{key}", "with `engines`, set the engine's name and "
                                            "options in each of its entries"))
    return errors


def shared_across_errors(spec: CampaignSpec) -> list[tuple[str, str]]:
    """phases.testing.shared_across as a setting: dimensions of the matrix that do not change
    the testing phase, on one machine (stages.shared_testing_mismatches checks the points)."""
    shared = spec.phases.testing.shared_across
    if not shared:
        return []
    path = "phases.testing.shared_across"
    errors: list[tuple[str, str]] = []
    dims = [k for k in spec.matrix if k not in MATRIX_RESERVED]
    for i, name in enumerate(shared):
        if name not in dims:
            errors.append((f"{path}[{i}]", f"{name!r} is not a matrix dimension (the "
                                           f"dimensions: {names.choices(dims) or 'none'})"))
        elif name.startswith("phases.testing.") or name.startswith("phases.load."):
            errors.append((f"{path}[{i}]", f"{name!r} changes the testing phase (or the tree "
                                           "it starts from), so points differing in it "
                                           "cannot share one"))
    if len(set(shared)) != len(shared):
        errors.append((path, "a dimension is listed twice"))
    if spec.phases.running.start == "continue":
        errors.append((path, "needs phases.running.start 'snapshot' or 'reload': with "
                             "'continue' each running phase starts from its own testing "
                             "phase's tree"))
    one_node = spec.testbed.type == "named" and len(spec.testbed.nodes or []) == 1
    if spec.testbed.type != "local" and not one_node:
        errors.append((path, "only on a local testbed, or a named one restricted to one node "
                             "(testbed.nodes: [NODE]): the nodes of a remote testbed may "
                             "differ in speed, so one node's maximum is not another's"))
    return errors


def key_file_problem(key_file: str) -> str | None:
    """What is wrong with a testbed's key_file, or None: it must name a file on this machine
    (ssh -i reads it from here; a relative path is from the current directory)."""
    path = Path(key_file).expanduser()
    if path.is_file():
        return None
    shown = key_file if str(path.absolute()) == key_file else f"{key_file} ({path.absolute()})"
    what = "is not a file" if path.exists() else "no such file"
    return (f"{shown}: {what}; key_file is the path, on this machine, of the SSH private key "
            "the node accepts (the key itself never goes into a spec)")


def key_file_errors(testbed: Any, prefix: str = "testbed.") -> list[tuple[str, str]]:
    """The key_file fields of a validated testbed section (each ssh host's, terraform's default
    for its nodes) that name no file on this machine, as (path, message)."""
    keys: list[tuple[str, str | None]] = []
    if testbed.type == "ssh":
        keys = [(f"{prefix}hosts[{i}].key_file", h.key_file) for i, h in enumerate(testbed.hosts)]
    elif testbed.type == "terraform":
        keys = [(f"{prefix}key_file", testbed.key_file)]
    errors = []
    for path, key_file in keys:
        problem = key_file_problem(key_file) if key_file else None
        if problem:
            errors.append((path, problem))
    return errors


def pair_errors(spec: CampaignSpec) -> list[tuple[str, str]]:
    """pair: a reference build that exists, and a campaign whose repetitions can be paired."""
    from ..util.paths import build_driver

    pair = spec.pair
    if pair is None:
        return []
    errors: list[tuple[str, str]] = []
    if build_driver(pair.reference) is None:
        errors.append(("pair.reference", f"{pair.reference}: no executable lsm-driver (give a "
                                         "build directory holding bin/lsm-driver, or the "
                                         "binary)"))
    if names.BUILD_DIMENSION in spec.matrix:
        errors.append((f"matrix.{names.BUILD_DIMENSION}",
                       f"'{names.BUILD_DIMENSION}' is the dimension pair: adds (reference, "
                       "candidate); name yours otherwise"))
    if isinstance(spec.matrix.get("repetitions"), dict):
        errors.append(("matrix.repetitions",
                       "pair: needs a fixed number of repetitions: {min, max} would add "
                       "repetitions to one build's group and leave them unpaired"))
    if spec.testbed.type != "local":
        errors.append(("pair", "only on a local testbed yet: a remote node would need the "
                               "reference build deployed beside the build under test"))
    if spec.tune is not None:
        errors.append(("pair", "not with tune: a study's trials compare options, not builds"))
    return errors


def matrix_errors(matrix: dict[str, Any], raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Every error in a raw matrix mapping, each with its path under 'matrix'."""
    errors: list[tuple[str, str]] = []
    dims: dict[str, list[Any]] = {}
    engines = engines_of(raw)  # once: it looks for plugin files
    for key, values in matrix.items():
        if key in MATRIX_RESERVED:
            continue
        path = f"matrix.{key}"
        if not isinstance(key, str) or not key:
            errors.append((path, "a dimension needs a name"))
            continue
        if key == "rep":
            errors.append((path, "'rep' is reserved for the repetition number "
                                 "(use matrix.repetitions)"))
            continue
        if "." in key:
            root = key.split(".", 1)[0]
            if root not in DOTTED_DIMENSION_ROOTS:
                errors.append((
                    path,
                    f"a dotted dimension sets a part of the spec; it must start with one of: "
                    f"{names.choices(DOTTED_DIMENSION_ROOTS)}",
                ))
                continue
            if root == "throttle" and key not in PER_POINT_THROTTLE_FIELDS:
                # The cgroup limits are resolved and checked once per campaign (and
                # per node); a per-point rate would be silently ignored.
                errors.append((
                    path,
                    f"{key} cannot vary per point: the throttle's rates are set once per "
                    f"campaign; vary {names.choices(PER_POINT_THROTTLE_FIELDS)}, or run one "
                    f"campaign per rate",
                ))
                continue
        elif not _OPTION_RE.match(key):
            errors.append((path, "bad dimension name (an engine option name, 'policy', "
                                 "'scheduler', or a dotted spec path)"))
            continue
        if not isinstance(values, list):
            values = [values]
        if not values:
            errors.append((path, "a dimension needs at least one value"))
            continue
        ok = True
        seen: list[Any] = []
        for i, v in enumerate(values):
            if not _is_scalar(v):
                errors.append((f"{path}[{i}]", f"expected a scalar value, got {v!r}"))
                ok = False
                continue
            if v in seen:
                errors.append((f"{path}[{i}]", f"duplicate value {v!r}"))
                ok = False
            seen.append(v)
            if key == names.ENGINE_DIMENSION and isinstance(raw.get("engines"), dict) \
                    and v not in raw["engines"]:
                errors.append((f"{path}[{i}]", f"unknown engine {v!r} (choose from the names "
                               f"of engines: {names.choices(list(raw['engines']))})"))
                ok = False
            option = dimension_option(key)
            if option is not None:
                bad = _option_errors(option, v, f"{path}[{i}]", path, engines)
                if bad:
                    ok = False
                    errors += bad
        if ok and "." in key:
            errors += _dotted_dimension_errors(key, values, raw)
        dims[key] = values
    if "repetitions" in matrix:
        errors += repetitions_errors(matrix["repetitions"])
    if "seeds" in matrix:
        seeds = matrix["seeds"]
        if not isinstance(seeds, list) or not seeds:
            errors.append(("matrix.seeds", f"expected a list of integers, got {seeds!r}"))
        else:
            for i, s in enumerate(seeds):
                if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                    errors.append((f"matrix.seeds[{i}]", f"expected an integer >= 0, got {s!r}"))
            r = matrix.get("repetitions")
            if isinstance(r, dict) and "max" in r:
                r = r["max"]
            if isinstance(r, int) and not isinstance(r, bool) and r != len(seeds):
                errors.append((
                    "matrix.seeds",
                    f"{len(seeds)} seeds for {r} repetitions (give one seed per repetition)",
                ))
    errors += _zip_errors(matrix.get("zip"), dims)
    errors += _exclude_errors(matrix.get("exclude"), dims)
    if not errors:
        errors += _size_errors(matrix, dims)
    return errors


# A campaign is refused over this many points (lsmbench validate/plan/run --max-points raises
# it): they are computed before one is made, so a typo like `repetitions: 1000000000` is an
# answer in milliseconds, not an orchestrator out of memory.
DEFAULT_MAX_POINTS = 100_000
MAX_POINTS: ContextVar[int] = ContextVar("max_points", default=DEFAULT_MAX_POINTS)


def point_count(matrix: dict[str, Any], dims: dict[str, list[Any]]) -> int:
    """The points a validated matrix expands to, before exclusions (which only remove some),
    every repetition that may run included; computed, not enumerated."""
    zips = matrix.get("zip") or []
    if zips and all(isinstance(z, str) for z in zips):
        zips = [zips]
    zipped = {d for z in zips for d in z}
    count = math.prod(len(v) for d, v in dims.items() if d not in zipped)
    count *= math.prod(len(dims[z[0]]) for z in zips if z and z[0] in dims)
    return count * repetition_range(matrix)[1]


def _size_errors(matrix: dict[str, Any], dims: dict[str, list[Any]]) -> list[tuple[str, str]]:
    count = point_count(matrix, dims)
    limit = MAX_POINTS.get()
    if count <= limit:
        return []
    sizes = " x ".join(f"{d} ({len(v)})" for d, v in dims.items()) or "no dimension"
    reps = repetition_range(matrix)[1]
    return [("matrix", f"{count:,} points ({sizes} x {plural(reps, 'repetition')}), over the "
                       f"limit of {limit:,}: fewer values or repetitions, or --max-points to "
                       "raise it")]


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def repetitions_errors(r: Any) -> list[tuple[str, str]]:
    """matrix.repetitions: a count, or {min, max}: min repetitions always, more (up to max)
    while a group is undecided (lsmbench.method.adaptive.group_decided); with `groups` (group ids),
    more for those groups instead, up to max, decided or not (lsmbench reproduce asks for
    them when a claim compares groups whose intervals more repetitions would part)."""
    if not isinstance(r, dict):
        return [] if _is_count(r) else [
            ("matrix.repetitions", f"expected an integer >= 1 or {{min: N, max: M}}, got {r!r}")]
    errors = [(f"matrix.repetitions.{k}", "unknown field (allowed: min, max, groups)")
              for k in r if k not in ("min", "max", "groups")]
    groups = r.get("groups")
    if groups is not None and (not isinstance(groups, list) or not groups or not all(
            isinstance(g, str) and g for g in groups)):
        errors.append(("matrix.repetitions.groups",
                       f"expected a list of group ids ('policy=tiering,scheduler=fair'), got "
                       f"{groups!r}"))
    for k in ("min", "max"):
        if k not in r:
            errors.append((f"matrix.repetitions.{k}", "required (an integer >= 1)"))
        elif not _is_count(r[k]):
            errors.append((f"matrix.repetitions.{k}", f"expected an integer >= 1, got {r[k]!r}"))
    if not errors and r["min"] > r["max"]:
        errors.append(("matrix.repetitions.min",
                       f"min ({r['min']}) must not exceed max ({r['max']})"))
    return errors


def repetition_groups(matrix: dict[str, Any]) -> list[str] | None:
    """The groups matrix.repetitions.groups names (they, not the undecided ones, get the
    repetitions beyond min), or None."""
    r = matrix.get("repetitions")
    return list(r["groups"]) if isinstance(r, dict) and r.get("groups") else None


def repetition_range(matrix: dict[str, Any]) -> tuple[int, int]:
    """(min, max) repetitions of a validated matrix: a count N is (N, N); seeds alone give one
    repetition per seed."""
    r = matrix.get("repetitions")
    if isinstance(r, dict):
        return int(r["min"]), int(r["max"])
    if r is None:
        n = len(matrix.get("seeds") or []) or 1
        return n, n
    return int(r), int(r)


def _dotted_dimension_errors(key: str, values: list[Any], raw: dict[str, Any]) -> list:
    """Validates each value of a dotted dimension by setting it in the spec."""
    errors: list[tuple[str, str]] = []
    base = {k: v for k, v in raw.items() if k != "matrix"}
    for i, v in enumerate(values):
        trial = copy.deepcopy(base)
        set_dotted(trial, key, v)
        try:
            CampaignSpec.model_validate(trial)
        except ValidationError as e:
            for p, m in pydantic_errors(e):
                if p == key or p.startswith(key + ".") or key.startswith(p + "."):
                    errors.append((f"matrix.{key}[{i}]", m))
    return errors


def _zip_errors(zips: Any, dims: dict[str, list[Any]]) -> list[tuple[str, str]]:
    if zips is None:
        return []
    if not isinstance(zips, list):
        return [("matrix.zip", "expected a list of groups, e.g. [[policy, size_ratio]]")]
    if zips and all(isinstance(z, str) for z in zips):
        zips = [zips]  # one group written flat
    errors: list[tuple[str, str]] = []
    used: dict[str, int] = {}
    for gi, group in enumerate(zips):
        gpath = f"matrix.zip[{gi}]"
        if not isinstance(group, list) or len(group) < 2:
            errors.append((gpath, "a zip group names at least two dimensions"))
            continue
        lengths = {}
        for di, d in enumerate(group):
            if d not in dims:
                errors.append((
                    f"{gpath}[{di}]",
                    f"unknown dimension {d!r} (choose from: {names.choices(list(dims))})",
                ))
                continue
            if d in used:
                errors.append((f"{gpath}[{di}]", f"dimension {d!r} is already in zip group "
                                                 f"{used[d]}"))
            used[d] = gi
            lengths[d] = len(dims[d])
        if len(set(lengths.values())) > 1:
            detail = ", ".join(f"{d} has {n}" for d, n in lengths.items())
            errors.append((gpath, f"zipped dimensions need the same number of values ({detail})"))
    return errors


def _exclude_errors(rules: Any, dims: dict[str, list[Any]]) -> list[tuple[str, str]]:
    if rules is None:
        return []
    if not isinstance(rules, list):
        return [("matrix.exclude", "expected a list of rules, e.g. [{policy: leveling, "
                                   "size_ratio: 3}]")]
    errors: list[tuple[str, str]] = []
    for ri, rule in enumerate(rules):
        rpath = f"matrix.exclude[{ri}]"
        if not isinstance(rule, dict) or not rule:
            errors.append((rpath, "a rule is a mapping of dimension: value (or list of values)"))
            continue
        for d, v in rule.items():
            if d not in dims:
                errors.append((
                    f"{rpath}.{d}",
                    f"unknown dimension {d!r} (choose from: {names.choices(list(dims))})",
                ))
                continue
            for x in v if isinstance(v, list) else [v]:
                if x not in dims[d]:
                    errors.append((
                        f"{rpath}.{d}",
                        f"value {x!r} is not in matrix.{d} "
                        f"({names.choices([str(y) for y in dims[d]])})",
                    ))
    return errors


