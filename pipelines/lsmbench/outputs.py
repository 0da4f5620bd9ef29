"""Output files in a directory shared with other files: a command replaces only the files it
wrote itself, never a user's.

`export --out`, `reproduce --out` and `track report --out` write a fixed set of names into a
directory that may hold anything else (docs/results holds hand-written pages beside the
reproduced ones). Each keeps a marker in the directory, `.lsmbench-outputs`, listing the files
it wrote; before writing, a file that exists must be listed there as written by the same
command, or the command refuses (exit 2) naming it -- before any work, so a four-hour
reproduction never fails at its end. (`report --out` replaces its directory whole and has its
own marker, report/render.py.)

Default output places are lsmbench's own (the results store, docs/results of this checkout):
a command writing there records its files but does not ask, so stores and pages written
before markers existed stay writable."""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ValidationError

from .store import write_bytes_atomic

MARKER = ".lsmbench-outputs"


class OutputError(ValueError):
    """A directory the command may not write into (exit 2)."""


class OutputsMarker(BaseModel):
    """What lsmbench wrote in a directory: relative path -> the command that wrote it."""
    files: dict[str, str] = {}


def _read_marker(out_dir: Path) -> OutputsMarker:
    path = out_dir / MARKER
    try:
        return OutputsMarker.model_validate_json(path.read_text())
    except FileNotFoundError:
        return OutputsMarker()
    except (OSError, ValueError, ValidationError) as e:
        raise OutputError(f"{path}: unreadable ({e.__class__.__name__}); it lists what lsmbench "
                          "wrote here -- remove it only if nothing here is lsmbench's") from None


def _existing_files(out_dir: Path, rel: str) -> list[str]:
    """rel itself if it exists, or every file under it when it is a directory."""
    path = out_dir / rel
    if path.is_dir() and not path.is_symlink():
        return sorted(p.relative_to(out_dir).as_posix() for p in path.rglob("*")
                      if not p.is_dir() or p.is_symlink())
    return [rel] if path.exists() or path.is_symlink() else []


def check_writable(out_dir: Path, command: str, names: Iterable[str], *, owned: bool = False,
                   option: str = "--out") -> None:
    """Refuses (OutputError) an out_dir that exists and is not a directory, and one where a
    file among names (a name that is a directory: any file under it) exists without the
    marker listing it as written by command. owned: out_dir is lsmbench's own place (a
    default), where only the first check applies."""
    if (out_dir.exists() or out_dir.is_symlink()) and not out_dir.is_dir():
        raise OutputError(f"{option} {out_dir}: not a directory")
    if owned or not out_dir.is_dir():
        return
    written = _read_marker(out_dir).files
    foreign = [f for rel in names for f in _existing_files(out_dir, rel)
               if written.get(f) != command]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5
                                          else "")
        raise OutputError(f"{option} {out_dir}: would replace files lsmbench {command} did not "
                          f"write ({shown}); give {option} a new or empty directory, or one "
                          f"{command} wrote before")


def record_written(out_dir: Path, command: str, files: Iterable[Path | str]) -> None:
    """Adds files (paths under out_dir, or relative to it) to the marker, atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        marker = _read_marker(out_dir)
    except OutputError:
        marker = OutputsMarker()  # only reached when the caller did not check (a default place)
    for f in files:
        p = Path(f)
        rel = p.relative_to(out_dir) if p.is_relative_to(out_dir) else p
        marker.files[rel.as_posix()] = command
    marker.files = dict(sorted(marker.files.items()))
    write_bytes_atomic(out_dir / MARKER, (marker.model_dump_json(indent=1) + "\n").encode())


def resolve_out(out: str | None, default: Path) -> tuple[Path, bool]:
    """The output directory and whether it is lsmbench's own (the default)."""
    if out is None:
        return default, True
    return Path(os.path.abspath(out)), False
