"""The local results store: the source of truth of every campaign.

Layout::

    results/<campaign>/
      campaign.json            resolved spec, plan, one entry per `run`
      .lock                    held (flock) by the run in progress
      .tmp/<point-id>.<pid>/   a point being written; never looks complete
      <point-id>/              a finished point (complete or failed)
        point.json             state, params, figures, verdict, timings, publish state
        spec.json              the point's resolved configuration (its hash decides resume)
        fingerprint.json       host, kernel, CPU, disk, commit, options hash
        load/ testing/ running/ (running@U/ in a sweep)
          run.json  timeseries.jsonl  summary.json  histograms.json  driver.log
          workload_shape.json (what the workload sent: workload_shape/record.py)
        pipeline.log

A point directory appears only by rename(2) of a fully written temporary
directory, so a killed campaign never leaves a point that looks complete;
``point.json`` is the last file written inside it. The next run removes
leftover temporary directories.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .util.filelock import LockHeld, exclusive

POINT_FILE = "point.json"
CAMPAIGN_FILE = "campaign.json"
TMP_DIR = ".tmp"
LOCK_FILE = ".lock"  # a campaign directory's lock (filelock.exclusive: who holds it)
STATE_COMPLETE = "complete"
STATE_FAILED = "failed"


class StoreError(RuntimeError):
    pass


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """path is replaced in one step: a reader sees the old or the new file, never half."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk leaves no half-written file behind
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    write_bytes_atomic(path, (json.dumps(data, indent=2, sort_keys=False, default=str)
                              + "\n").encode())


def read_json(path: Path) -> Any:
    with open(path) as f:
        return json.load(f)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class PointRecord:
    campaign: str
    point_id: str
    path: Path
    data: dict[str, Any]

    @property
    def state(self) -> str:
        return str(self.data.get("state", "?"))

    @property
    def published(self) -> bool | None:
        return self.data.get("published")


class PointWriter:
    """A point under construction in <campaign>/.tmp/; :meth:`commit` makes it visible."""

    def __init__(self, store: Store, campaign: str, point_id: str) -> None:
        self.store = store
        self.campaign = campaign
        self.point_id = point_id
        tmp_root = store.campaign_dir(campaign) / TMP_DIR
        tmp_root.mkdir(parents=True, exist_ok=True)
        self.path = tmp_root / f"{point_id}.{os.getpid()}"
        if self.path.exists():
            shutil.rmtree(self.path)
        self.path.mkdir()
        self.committed = False

    def commit(self, point: dict[str, Any]) -> Path:
        """Writes point.json last, then renames the directory into place (replacing an old one)."""
        if self.committed:
            raise StoreError(f"point {self.point_id} already committed")
        for sub in self.path.rglob("*"):
            if sub.is_dir():
                _fsync_dir(sub)
        write_json_atomic(self.path / POINT_FILE, point)
        _fsync_dir(self.path)
        final = self.store.campaign_dir(self.campaign) / self.point_id
        old = None
        if final.exists():
            tmp_root = self.store.campaign_dir(self.campaign) / TMP_DIR
            old = tmp_root / f"{self.point_id}.old.{os.getpid()}"
            if old.exists():
                shutil.rmtree(old)
            os.rename(final, old)
        os.rename(self.path, final)
        _fsync_dir(final.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        self.committed = True
        self.path = final
        return final

    def discard(self) -> None:
        if not self.committed and self.path.exists():
            shutil.rmtree(self.path, ignore_errors=True)


def _remove_if_untouched(campaign_dir: Path, made: list[Path]) -> None:
    """Removes the directories the lock made (``made``: the campaign's, and the store's when
    it was not there either) if nothing but the lock file and an empty .tmp is in them."""
    try:
        entries = {p.name: p for p in campaign_dir.iterdir()}
        if set(entries) - {LOCK_FILE, TMP_DIR}:
            return
        tmp = entries.get(TMP_DIR)
        if tmp is not None:
            tmp.rmdir()  # fails (and keeps everything) unless it is empty
        (campaign_dir / LOCK_FILE).unlink(missing_ok=True)
        for p in made:  # the campaign directory first, then the store's
            p.rmdir()
    except OSError:
        pass


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def campaign_dir(self, campaign: str) -> Path:
        return self.root / campaign

    # -- campaigns ------------------------------------------------------------------------

    def campaigns(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(
            p.name for p in self.root.iterdir()
            if p.is_dir() and not p.name.startswith(".")
            and ((p / CAMPAIGN_FILE).exists() or any(self._point_dirs(p.name)))
        )

    def read_campaign(self, campaign: str) -> dict[str, Any] | None:
        path = self.campaign_dir(campaign) / CAMPAIGN_FILE
        try:
            return read_json(path)
        except (OSError, ValueError):
            return None

    def write_campaign(self, campaign: str, data: dict[str, Any]) -> None:
        d = self.campaign_dir(campaign)
        d.mkdir(parents=True, exist_ok=True)
        write_json_atomic(d / CAMPAIGN_FILE, data)

    @contextlib.contextmanager
    def lock(self, campaign: str) -> Iterator[None]:
        """Exclusive use of a campaign's directory by one `lsmbench run` at a time. A block that
        fails before it wrote anything (a run refused before it started: a missing calibration,
        an unreachable testbed) leaves no directory behind: the campaign directory (and the
        store's, if the lock made them) is removed again when it holds nothing but the lock
        and an empty .tmp; a directory that was there before is never removed."""
        d = self.campaign_dir(campaign)
        path = d / LOCK_FILE
        made = [p for p in (d, self.root) if not p.exists()]
        try:
            with exclusive(path):
                try:
                    yield
                except BaseException:
                    if made:
                        _remove_if_untouched(d, made)
                    raise
        except LockHeld as e:
            raise StoreError(f"campaign {campaign!r} is being run by another lsmbench process "
                             f"(lock {path}: {e.holder})") from None

    def clean_tmp(self, campaign: str) -> list[str]:
        """Removes the leftovers of killed runs (call with the campaign lock held)."""
        tmp = self.campaign_dir(campaign) / TMP_DIR
        removed = []
        if tmp.is_dir():
            for p in tmp.iterdir():
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
                removed.append(p.name)
        return removed

    # -- points ---------------------------------------------------------------------------

    def _point_dirs(self, campaign: str) -> Iterator[Path]:
        d = self.campaign_dir(campaign)
        if not d.is_dir():
            return
        for p in sorted(d.iterdir()):
            if p.is_dir() and not p.name.startswith(".") and (p / POINT_FILE).is_file():
                yield p

    def points(self, campaign: str) -> list[PointRecord]:
        out = []
        for p in self._point_dirs(campaign):
            try:
                data = read_json(p / POINT_FILE)
            except (OSError, ValueError):
                data = {"state": "unreadable"}
            out.append(PointRecord(campaign, p.name, p, data))
        return out

    def point(self, campaign: str, point_id: str) -> PointRecord | None:
        p = self.campaign_dir(campaign) / point_id
        try:
            data = read_json(p / POINT_FILE)
        except (OSError, ValueError):
            return None
        return PointRecord(campaign, point_id, p, data)

    def begin_point(self, campaign: str, point_id: str) -> PointWriter:
        return PointWriter(self, campaign, point_id)

    def update_point(self, record: PointRecord, **changes: Any) -> None:
        """Changes fields of a finished point's point.json (atomically), e.g. its publish state."""
        record.data.update(changes)
        record.data["updated"] = time.time()
        write_json_atomic(record.path / POINT_FILE, record.data)

    def mean_load_s(self, campaign: str) -> float | None:
        """Mean load time of the campaign's complete points, if any (for estimates)."""
        times = []
        for rec in self.points(campaign):
            ph = (rec.data.get("phases") or {}).get("load") or {}
            if rec.state == STATE_COMPLETE and ph.get("wall_s"):
                times.append(float(ph["wall_s"]))
        return sum(times) / len(times) if times else None

    def mean_phase_s(self, campaign: str) -> dict[str, float]:
        """Mean length of the campaign's stored testing and running phases (their clocks, the
        driver's elapsed time) and of each phase's settle wait, over its complete points (the
        expected time of adaptive phases: plan.expected_time)."""
        seen: dict[str, list[float]] = {}
        for rec in self.points(campaign):
            if rec.state != STATE_COMPLETE:
                continue
            for name, ph in (rec.data.get("phases") or {}).items():
                kind = name.split("@")[0]
                if not isinstance(ph, dict):
                    continue
                if kind in ("testing", "running") and ph.get("driver_elapsed_s"):
                    seen.setdefault(kind, []).append(float(ph["driver_elapsed_s"]))
                settle = ph.get("settle") or {}
                if settle.get("waited_s") is not None:
                    seen.setdefault(f"{kind}_settle", []).append(float(settle["waited_s"]))
        return {k: sum(v) / len(v) for k, v in seen.items() if v}


def results_store_problem(results: Path) -> str | None:
    """Why the results store cannot take a campaign (exit 3, the environment), or None: a path
    that is not a directory, one that cannot be created, or one on which files cannot be made
    (a read-only filesystem, or permissions)."""
    if results.exists() and not results.is_dir():
        return f"results store {results}: not a directory"
    try:
        results.mkdir(parents=True, exist_ok=True)
        probe = results / f".lsmbench-probe.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        return f"results store {results}: cannot write in it: {e.strerror or e}"
    return None
