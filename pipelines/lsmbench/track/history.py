"""The history of campaign runs: its SQLite model, and the keys that cut series into segments
(spec hash, testbed identity). Recording a campaign into it is record.py; acknowledging a
change, ack.py.

A SQLite file (default ``RESULTS/history.sqlite``) beside the local store, which stays the
source of truth: a recorded run keeps the path of the campaign directory it came from, and
the history holds only what tracking needs -- per group and metric the median over the
repetitions and its interval (``lsmbench.method.groups``, ``lsmbench.report.load.group_rows``), the
group verdict, the commit, the date, the campaign's spec hash and a testbed key.

A *series* is (campaign, group, metric) within one (spec hash, testbed key): a run whose
spec or testbed differs starts a new segment, and nothing is compared across that boundary
(docs/tracking.md).

A campaign that ran on several nodes is recorded as one run *per node* (``RunRecord.node``),
each with that node's points: every node is a series of its own. Identical machines have
identical testbed identities, so such a run's testbed identity also holds its node's name
(:func:`node_identity`); a run on one node keeps the identity without a name, so the keys of
histories recorded before per-node runs stay what they were. The ``node`` column comes with
schema 2, which the first per-node run migrates a history to (a history of single-node runs
stays at schema 1, readable by an lsmbench from before).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..util.digest import canonical_hash

SCHEMA_VERSION = 2  # 2: runs.node (the first per-node run migrates a schema-1 history)
SCHEMA_VERSIONS = (1, 2)  # what this lsmbench reads
HISTORY_FILE = "history.sqlite"

Better = Literal["higher", "lower"]


@dataclass(frozen=True)
class Metric:
    name: str  # the column of lsmbench.report.load.Row it is read from
    label: str
    unit: str
    better: Better
    # The phase that measures it: a bisection step of a testing-phase metric runs no running
    # phase (lsmbench.track.bisect).
    phase: Literal["testing", "running"] = "running"


# What is tracked, in the order the report shows it. Names are the campaign report's columns,
# so a history figure and a report's table cell are the same number.
METRICS: tuple[Metric, ...] = (
    Metric("max_write_throughput", "testing maximum", "writes/s", "higher", "testing"),
    Metric("max_sustainable_rate", "max sustainable rate", "writes/s", "higher"),
    Metric("write_p50_ms", "write p50", "ms", "lower"),
    Metric("write_p99_ms", "write p99", "ms", "lower"),
    Metric("write_p999_ms", "write p99.9", "ms", "lower"),
    Metric("stall_s", "stall time", "s", "lower"),
    Metric("write_amplification", "write amplification", "x", "lower"),
    Metric("avg_components", "disk components (mean)", "count", "lower"),
)
METRIC_BY_NAME = {m.name: m for m in METRICS}

# The regression a paired comparison looks for, relative: a build is worse than its reference
# when the ratio's whole interval is past halfway to this change (lsmbench.track.paired).
DEFAULT_THRESHOLD = 0.05


class HistoryError(ValueError):
    """Bad input to the history (exit 2): the message names the file or the campaign."""


# ---------------------------------------------------------------- keys


def spec_hash(spec: dict[str, Any]) -> str:
    """The campaign spec as run (``--set`` applied), without its free-text description: a
    change of any measured setting -- repetitions, phase lengths, options -- starts a new
    segment."""
    return canonical_hash({k: v for k, v in spec.items() if k != "description"})


def node_identity(identity: dict[str, Any], node: str) -> dict[str, Any]:
    """A node's identity in a run that spans several nodes: its testbed identity with the
    node's name. Nodes that are the same machine model (same CPU, kernel, disk, ...) have the
    same identity, and each node is a series of its own: without the name, two nodes' runs
    would be one series with two nights a night. Only a run of several nodes carries it: a
    single-node run's key stays what it was (a renamed machine is still the same testbed)."""
    return {**identity, "node": node}


# ---------------------------------------------------------------- models


class RunRecord(BaseModel):
    """One recorded campaign run."""

    run_id: int
    campaign: str
    date: str  # ISO 8601 UTC of the run's end
    finished: float  # unix time of the run's end: orders the series
    commit: str | None
    dirty: bool | None
    spec_hash: str
    testbed_key: str
    testbed: list[dict[str, Any]]  # one identity per distinct node
    results_dir: str
    recorded_at: str
    # The node this run's points ran on when the campaign ran on several (one run per node);
    # None: a single-node run (every run before per-node runs).
    node: str | None = None


class Value(BaseModel):
    run_id: int
    group: str
    metric: str
    median: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    # Each complete repetition's value, in rep order (None: a run recorded before they were
    # kept, or in a history without them)
    reps: list[float] | None = None


class PairedValue(BaseModel):
    """One metric of one group of a paired run (spec ``pair:``): the build under test against
    the reference build, measured in the same night on the same node, their repetitions
    interleaved (lsmbench.track.paired)."""

    run_id: int
    group: str  # the group without its build
    metric: str
    ratio: float  # candidate / reference: the geometric mean over the pairs
    ci_low: float
    ci_high: float
    n: int  # pairs
    reference_median: float | None
    candidate_median: float | None
    reference_commit: str | None  # pair.commit: what the reference build was built from
    # (reference, candidate) of each pair in run order: what the paired detector pools over
    # nights (lsmbench.track.paired.PairedReplay); None in runs recorded before they were kept
    pairs: list[tuple[float, float]] | None = None


class GroupVerdictRecord(BaseModel):
    run_id: int
    group: str
    verdict: str
    repetitions: int
    agree: dict[str, int]


class Ack(BaseModel):
    change_id: str
    campaign: str
    group: str
    metric: str
    direction: str
    run_id: int  # the first run of the acknowledged segment
    why: str
    acked_at: str


# ---------------------------------------------------------------- the store

# The columns of `runs` in both schemas (2 adds `node`).
_RUN_COLUMNS = """
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign TEXT NOT NULL,
    date TEXT NOT NULL,
    finished REAL NOT NULL,
    commit_sha TEXT,
    dirty INTEGER,
    spec_hash TEXT NOT NULL,
    testbed_key TEXT NOT NULL,
    testbed TEXT NOT NULL,
    results_dir TEXT NOT NULL,
    recorded_at TEXT NOT NULL,"""

_DDL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs ({_RUN_COLUMNS}
    UNIQUE (campaign, finished)
);
CREATE TABLE IF NOT EXISTS run_values (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    grp TEXT NOT NULL,
    metric TEXT NOT NULL,
    median REAL,
    ci_low REAL,
    ci_high REAL,
    n INTEGER NOT NULL,
    PRIMARY KEY (run_id, grp, metric)
);
CREATE TABLE IF NOT EXISTS group_verdicts (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    grp TEXT NOT NULL,
    verdict TEXT NOT NULL,
    repetitions INTEGER NOT NULL,
    agree TEXT NOT NULL,
    PRIMARY KEY (run_id, grp)
);
CREATE TABLE IF NOT EXISTS acks (
    change_id TEXT PRIMARY KEY,
    campaign TEXT NOT NULL,
    grp TEXT NOT NULL,
    metric TEXT NOT NULL,
    direction TEXT NOT NULL,
    run_id INTEGER NOT NULL,
    why TEXT NOT NULL,
    acked_at TEXT NOT NULL
);
"""


# Schema 1 -> 2: runs gets `node` ('' for a single-node run), unique with campaign and end time
# (one campaign run is one history run per node). SQLite cannot change a table's constraint:
# the table is rebuilt (its foreign keys off meanwhile, so that dropping the old table does not
# cascade; the other tables' references name `runs`, which the rebuilt table is renamed to).
_NODE_MIGRATION = f"""
BEGIN;
CREATE TABLE runs_v2 ({_RUN_COLUMNS}
    node TEXT NOT NULL DEFAULT '',
    UNIQUE (campaign, finished, node)
);
INSERT INTO runs_v2 (run_id, campaign, date, finished, commit_sha, dirty, spec_hash,
                     testbed_key, testbed, results_dir, recorded_at, node)
    SELECT run_id, campaign, date, finished, commit_sha, dirty, spec_hash, testbed_key,
           testbed, results_dir, recorded_at, '' FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v2 RENAME TO runs;
UPDATE meta SET value = '2' WHERE key = 'schema';
COMMIT;
"""


# Added by the first report that keeps a change (a history from before it reads the same);
# not in _DDL, so that a report on a history that is never written to still reads it.
_HELD_DDL = """
CREATE TABLE IF NOT EXISTS held_changes (
    campaign TEXT NOT NULL,
    grp TEXT NOT NULL,
    metric TEXT NOT NULL,
    spec_hash TEXT NOT NULL,
    testbed_key TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    reported_at TEXT NOT NULL,
    PRIMARY KEY (campaign, grp, metric, spec_hash, testbed_key, run_id)
);
"""


# Added by the first paired run recorded (spec pair:); a history without one reads the same.
_PAIRED_DDL = """
CREATE TABLE IF NOT EXISTS paired_values (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    grp TEXT NOT NULL,
    metric TEXT NOT NULL,
    ratio REAL NOT NULL,
    ci_low REAL NOT NULL,
    ci_high REAL NOT NULL,
    n INTEGER NOT NULL,
    reference_median REAL,
    candidate_median REAL,
    reference_commit TEXT,
    pairs TEXT,
    PRIMARY KEY (run_id, grp, metric)
);
"""


# Added by the first run recorded with its repetitions' values (a history from before them
# reads the same, and an older lsmbench reads a history with them: it never asks for them).
_REPS_DDL = """
CREATE TABLE IF NOT EXISTS repetition_values (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    grp TEXT NOT NULL,
    metric TEXT NOT NULL,
    reps TEXT NOT NULL,
    PRIMARY KEY (run_id, grp, metric)
);
"""


# Added by the first bisection (track bisect).
_BISECT_DDL = """
CREATE TABLE IF NOT EXISTS bisections (
    bisection_id INTEGER PRIMARY KEY AUTOINCREMENT,
    change_id TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    result TEXT NOT NULL
);
"""


def now_iso() -> str:
    """Now in UTC to the second: when a run was recorded or a change acknowledged."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def iso_date(unix: float) -> str:
    return dt.datetime.fromtimestamp(unix, dt.UTC).isoformat(timespec="seconds")


class History:
    """The history database. Writes are transactions: a record is wholly there or not."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise HistoryError(f"{self.path}: no history here (lsmbench track record adds "
                               "the first run)")
        if self.path.exists() and not self.path.is_file():
            raise HistoryError(f"{self.path}: not a file")
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path)
            self.db.execute("PRAGMA foreign_keys = ON")
            version = self._version()
        except sqlite3.DatabaseError as e:
            raise HistoryError(f"{self.path}: not a history database ({e})") from e
        if version is None:
            # A new history is schema 1 until a per-node run needs the node column: a history
            # of single-node runs stays readable by an lsmbench from before per-node runs.
            with self.db:
                self.db.executescript(_DDL)
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', '1')")
            version = 1
        elif version not in SCHEMA_VERSIONS:
            raise HistoryError(f"{self.path}: history schema {version}, this lsmbench reads "
                               f"{', '.join(map(str, SCHEMA_VERSIONS))}")
        self.version = version

    def _version(self) -> int | None:
        row = self.db.execute("SELECT name FROM sqlite_master WHERE type='table' AND "
                              "name='meta'").fetchone()
        if row is None:
            tables = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if tables:
                raise HistoryError(f"{self.path}: an SQLite file, but not a history database")
            return None
        got = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        return int(got[0]) if got else None

    def close(self) -> None:
        self.db.close()

    # -- runs -----------------------------------------------------------------------------

    def find_run(self, campaign: str, finished: float, node: str | None = None) -> int | None:
        sql = "SELECT run_id FROM runs WHERE campaign=? AND finished=?"
        args: tuple[Any, ...] = (campaign, finished)
        if self.version >= 2:
            sql += " AND node=?"
            args += (node or "",)
        elif node:
            return None  # a schema-1 history holds no per-node run
        row = self.db.execute(sql, args).fetchone()
        return int(row[0]) if row else None

    def add_run(self, run: dict[str, Any], values: Sequence[dict[str, Any]],
                verdicts: Sequence[dict[str, Any]],
                paired: Sequence[dict[str, Any]] = ()) -> int:
        return self.add_runs([(run, values, verdicts, paired)])[0]

    def add_runs(self, runs: Sequence[tuple[dict[str, Any], Sequence[dict[str, Any]],
                                            Sequence[dict[str, Any]],
                                            Sequence[dict[str, Any]]]]) -> list[int]:
        """Adds (run, values, verdicts, paired) each, in one transaction: a campaign recorded
        as a run per node is wholly in the history or not at all."""
        if any(p for _, _, _, p in runs):
            self._paired_table()
        if any(v.get("reps") is not None for _, values, _, _ in runs for v in values):
            self.db.executescript(_REPS_DDL)
        if any(r.get("node") for r, _, _, _ in runs) and self.version < 2:
            self._migrate_to_nodes()
        ids = []
        with self.db:
            for run, values, verdicts, paired in runs:
                ids.append(self._insert_run(run, values, verdicts, paired))
        return ids

    def _migrate_to_nodes(self) -> None:
        self.db.execute("PRAGMA foreign_keys = OFF")
        try:
            self.db.executescript(_NODE_MIGRATION)
        except sqlite3.Error:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        finally:
            self.db.execute("PRAGMA foreign_keys = ON")
        self.version = 2

    def _insert_run(self, run: dict[str, Any], values: Sequence[dict[str, Any]],
                    verdicts: Sequence[dict[str, Any]], paired: Sequence[dict[str, Any]]) -> int:
        cols = ("campaign, date, finished, commit_sha, dirty, spec_hash, testbed_key, testbed, "
                "results_dir, recorded_at")
        row: tuple[Any, ...] = (
            run["campaign"], run["date"], run["finished"], run["commit"],
            None if run["dirty"] is None else int(run["dirty"]), run["spec_hash"],
            run["testbed_key"], json.dumps(run["testbed"], sort_keys=True),
            run["results_dir"], now_iso())
        if self.version >= 2:
            cols += ", node"
            row += (run.get("node") or "",)
        cur = self.db.execute(f"INSERT INTO runs ({cols}) VALUES "
                              f"({','.join('?' * len(row))})", row)
        run_id = int(cur.lastrowid or 0)
        self.db.executemany(
            "INSERT INTO run_values VALUES (?,?,?,?,?,?,?)",
            [(run_id, v["group"], v["metric"], v["median"], v["ci_low"], v["ci_high"],
              v["n"]) for v in values])
        reps = [(run_id, v["group"], v["metric"], json.dumps(v["reps"])) for v in values
                if v.get("reps") is not None]
        if reps:
            self.db.executemany("INSERT INTO repetition_values VALUES (?,?,?,?)", reps)
        self.db.executemany(
            "INSERT INTO group_verdicts VALUES (?,?,?,?,?)",
            [(run_id, g["group"], g["verdict"], g["repetitions"],
              json.dumps(g["agree"], sort_keys=True)) for g in verdicts])
        if paired:
            self.db.executemany(
                "INSERT INTO paired_values (run_id, grp, metric, ratio, ci_low, ci_high, "
                "n, reference_median, candidate_median, reference_commit, pairs) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?)",
                [(run_id, v["group"], v["metric"], v["ratio"], v["ci_low"],
                  v["ci_high"], v["n"], v["reference_median"], v["candidate_median"],
                  v["reference_commit"],
                  json.dumps(v["pairs"]) if v.get("pairs") is not None else None)
                 for v in paired])
        return run_id

    def _paired_table(self) -> None:
        """paired_values, made by the first paired run; its pairs column added to a table
        made before pairs were kept."""
        self.db.executescript(_PAIRED_DDL)
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(paired_values)")}
        if "pairs" not in columns:
            with self.db:
                self.db.execute("ALTER TABLE paired_values ADD COLUMN pairs TEXT")

    def runs(self, campaign: str | None = None) -> list[RunRecord]:
        node = "node" if self.version >= 2 else "''"
        sql = ("SELECT run_id, campaign, date, finished, commit_sha, dirty, spec_hash, "
               f"testbed_key, testbed, results_dir, recorded_at, {node} FROM runs")
        args: tuple[Any, ...] = ()
        if campaign is not None:
            sql += " WHERE campaign=?"
            args = (campaign,)
        out = []
        for r in self.db.execute(sql + " ORDER BY finished, node, run_id"
                                 if self.version >= 2 else sql + " ORDER BY finished, run_id",
                                 args):
            out.append(RunRecord(run_id=r[0], campaign=r[1], date=r[2], finished=r[3],
                                 commit=r[4], dirty=None if r[5] is None else bool(r[5]),
                                 spec_hash=r[6], testbed_key=r[7], testbed=json.loads(r[8]),
                                 results_dir=r[9], recorded_at=r[10], node=r[11] or None))
        return out

    def values(self, campaign: str | None = None) -> list[Value]:
        reps = self._has_table("repetition_values")
        sql = ("SELECT v.run_id, v.grp, v.metric, v.median, v.ci_low, v.ci_high, v.n, "
               f"{'p.reps' if reps else 'NULL'} FROM run_values v "
               "JOIN runs r ON r.run_id = v.run_id")
        if reps:
            sql += (" LEFT JOIN repetition_values p ON p.run_id = v.run_id AND p.grp = v.grp "
                    "AND p.metric = v.metric")
        args: tuple[Any, ...] = ()
        if campaign is not None:
            sql += " WHERE r.campaign=?"
            args = (campaign,)
        return [Value(run_id=r[0], group=r[1], metric=r[2], median=r[3], ci_low=r[4],
                      ci_high=r[5], n=r[6], reps=json.loads(r[7]) if r[7] else None)
                for r in self.db.execute(sql, args)]

    def paired_values(self, campaign: str | None = None) -> list[PairedValue]:
        """The paired runs' ratios (none in a history without a paired run)."""
        if not self._has_table("paired_values"):
            return []
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(paired_values)")}
        pairs = "v.pairs" if "pairs" in columns else "NULL"
        sql = ("SELECT v.run_id, v.grp, v.metric, v.ratio, v.ci_low, v.ci_high, v.n, "
               f"v.reference_median, v.candidate_median, v.reference_commit, {pairs} FROM "
               "paired_values v JOIN runs r ON r.run_id = v.run_id")
        args: tuple[Any, ...] = ()
        if campaign is not None:
            sql += " WHERE r.campaign=?"
            args = (campaign,)
        return [PairedValue(run_id=r[0], group=r[1], metric=r[2], ratio=r[3], ci_low=r[4],
                            ci_high=r[5], n=r[6], reference_median=r[7],
                            candidate_median=r[8], reference_commit=r[9],
                            pairs=[tuple(p) for p in json.loads(r[10])] if r[10] else None)
                for r in self.db.execute(sql, args)]

    def verdicts(self, campaign: str | None = None) -> list[GroupVerdictRecord]:
        sql = ("SELECT g.run_id, g.grp, g.verdict, g.repetitions, g.agree FROM group_verdicts g "
               "JOIN runs r ON r.run_id = g.run_id")
        args: tuple[Any, ...] = ()
        if campaign is not None:
            sql += " WHERE r.campaign=?"
            args = (campaign,)
        return [GroupVerdictRecord(run_id=r[0], group=r[1], verdict=r[2], repetitions=r[3],
                                   agree=json.loads(r[4])) for r in self.db.execute(sql, args)]

    def campaigns(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT DISTINCT campaign FROM runs ORDER BY 1")]

    # -- acknowledgements -----------------------------------------------------------------

    def add_ack(self, ack: Ack) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO acks VALUES (?,?,?,?,?,?,?,?)",
                            (ack.change_id, ack.campaign, ack.group, ack.metric, ack.direction,
                             ack.run_id, ack.why, ack.acked_at))

    def acks(self) -> list[Ack]:
        return [Ack(change_id=r[0], campaign=r[1], group=r[2], metric=r[3], direction=r[4],
                    run_id=r[5], why=r[6], acked_at=r[7])
                for r in self.db.execute("SELECT * FROM acks ORDER BY acked_at")]


    # -- bisections ----------------------------------------------------------------------

    def add_bisection(self, result: dict[str, Any]) -> None:
        """A finished bisection (lsmbench.track.bisect.BisectResult as JSON), every step."""
        self.db.executescript(_BISECT_DDL)
        with self.db:
            self.db.execute("INSERT INTO bisections (change_id, finished_at, result) VALUES "
                            "(?,?,?)", (result["change_id"], now_iso(),
                                        json.dumps(result, sort_keys=True)))

    def bisections(self) -> list[dict[str, Any]]:
        """Every bisection, oldest first, with ``finished_at``."""
        if not self._has_table("bisections"):
            return []
        return [{**json.loads(r[1]), "finished_at": r[0]} for r in self.db.execute(
            "SELECT finished_at, result FROM bisections ORDER BY bisection_id")]

    # -- changes reported, kept until the longer evidence rejects them ---------------------

    def held_changes(self, campaign: str, group: str, metric: str, spec_hash: str,
                     testbed_key: str) -> list[int]:
        """The first runs of the changes ``track report`` last reported in this segment of
        this series (lsmbench.track.report: a reported change stays reported until the
        nights since it reject it)."""
        if not self._has_held_table():
            return []
        return [int(r[0]) for r in self.db.execute(
            "SELECT run_id FROM held_changes WHERE campaign=? AND grp=? AND metric=? AND "
            "spec_hash=? AND testbed_key=? ORDER BY run_id",
            (campaign, group, metric, spec_hash, testbed_key))]

    def set_held_changes(self, campaign: str, group: str, metric: str, spec_hash: str,
                         testbed_key: str, run_ids: Sequence[int]) -> None:
        """Replace the segment's reported changes with these (their first runs)."""
        self.db.executescript(_HELD_DDL)
        with self.db:
            self.db.execute("DELETE FROM held_changes WHERE campaign=? AND grp=? AND metric=? "
                            "AND spec_hash=? AND testbed_key=?",
                            (campaign, group, metric, spec_hash, testbed_key))
            self.db.executemany(
                "INSERT OR IGNORE INTO held_changes VALUES (?,?,?,?,?,?,?)",
                [(campaign, group, metric, spec_hash, testbed_key, r, now_iso())
                 for r in run_ids])

    def _has_held_table(self) -> bool:
        return self._has_table("held_changes")

    def _has_table(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                               "name=?", (name,)).fetchone() is not None


@contextlib.contextmanager
def open_history(path: str | Path, create: bool = True) -> Iterator[History]:
    h = History(path, create=create)
    try:
        yield h
    finally:
        h.close()


def history_path(args: argparse.Namespace) -> Path:
    return Path(args.history) if args.history else Path(args.results) / HISTORY_FILE
