"""Engine options checked by the driver itself: ``lsm-driver --check-options``.

    lsm-driver --check-options ENGINE --option NAME=VALUE ...
    -> {"ok": false, "errors": [{"name": "NAME", "message": "..."}]}  (exit 1; 0 when ok)

The only check for rocksdb (no committed description: hundreds of options),
and an additional one for the other engines (cross-field rules such as
min_merge_components <= max_merge_components). Each point's options are
checked once per phase (distinct sets once), and each error is mapped back to
the spec path that set the option.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ..plan import expand_matrix
from ..points import Point, phase_option_sources, point_engine
from ..spec import PHASE_NAMES, LoadedSpec

TIMEOUT_S = 30.0


class OptionProblem(BaseModel):
    name: str
    message: str


class CheckReply(BaseModel):
    """What --check-options prints on stdout."""

    ok: bool
    errors: list[OptionProblem] = []


class DriverCannotCheck(RuntimeError):
    """The driver could not check (too old for --check-options, crashed, timed out)."""


Reply = TypeVar("Reply", bound=BaseModel)


def ask_driver(cmd: list[str], reply_model: type[Reply], timeout_s: float = TIMEOUT_S) -> Reply:
    """Runs one of the driver's check commands (cmd[1]) and reads its JSON answer (a model
    with ``ok``); DriverCannotCheck when it gave none, or one its exit code contradicts."""
    driver, command = cmd[0], cmd[1]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DriverCannotCheck(f"{driver}: {e}") from e
    try:
        reply = reply_model.model_validate(json.loads(r.stdout))
    except (ValueError, ValidationError) as e:
        detail = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[0]
        raise DriverCannotCheck(f"{driver} gave no {command} answer ({detail})") from e
    ok = getattr(reply, "ok", None)
    if ok != (r.returncode == 0):
        raise DriverCannotCheck(f"{driver}: {command} said ok={ok} but exited {r.returncode}")
    return reply


def check_options(driver: Path, engine: str, options: dict[str, str],
                  timeout_s: float = TIMEOUT_S) -> list[OptionProblem]:
    """The driver's verdict on one engine's option set; DriverCannotCheck when it gave none."""
    cmd = [str(driver), "--check-options", engine]
    for name, value in options.items():
        cmd += ["--option", f"{name}={value}"]
    return ask_driver(cmd, CheckReply, timeout_s).errors


def _point_engine(loaded: LoadedSpec, point: Point) -> str:
    value = point.params.get("engine.name", point_engine(loaded.spec, point)[0].name)
    return str(value)


def driver_errors(loaded: LoadedSpec, driver: Path,
                  engines: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """Every option error the driver finds in the campaign's points, as (spec path, message).
    engines: only points of these engines (default: all). DriverCannotCheck when the driver
    cannot answer."""
    points, _ = expand_matrix(loaded.spec.matrix)
    asked: dict[tuple[str, tuple[tuple[str, str], ...]], list[OptionProblem]] = {}
    errors: list[tuple[str, str]] = []
    for point in points:
        engine = _point_engine(loaded, point)
        if engines is not None and engine not in engines:
            continue
        for phase in PHASE_NAMES:
            sources = phase_option_sources(loaded.spec, point, phase)
            options = {k: v for k, (v, _) in sources.items()}
            key = (engine, tuple(options.items()))
            if key not in asked:
                asked[key] = check_options(driver, engine, options)
            for problem in asked[key]:
                path = sources[problem.name][1] if problem.name in sources else "engine.options"
                if (path, problem.message) not in errors:
                    errors.append((path, problem.message))
    return errors
