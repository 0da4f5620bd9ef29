"""What a RocksDB query trace replays as, measured by the driver itself (``lsm-driver
--describe-workload`` on a run.json of the trace: its pass over the trace, the same mapping of
trace ops to the driver's operations as a replay uses). Cached per file and modification time:
the pass streams the whole trace."""

from __future__ import annotations

import json
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from ..util.paths import find_driver


class TraceError(ValueError):
    """The trace cannot be measured: no driver, or the driver refuses the file."""


def trace_measure(path: str) -> dict[str, Any]:
    """The driver's measure of the trace: ops, ops_by_type (insert/update/delete/read/scan),
    not_replayed_ops, span_s, native_rate, load_keys, end_record_seen."""
    p = Path(path)
    try:
        mtime = p.stat().st_mtime_ns
    except OSError as e:
        raise TraceError(f"{path}: {e.strerror}") from e
    return _measure(str(p.resolve()), mtime)


@cache
def _measure(path: str, _mtime: int) -> dict[str, Any]:
    driver = find_driver()
    if driver is None:
        raise TraceError("lsm-driver is not built (make build): it measures the trace")
    with tempfile.TemporaryDirectory(prefix="lsmbench-trace-") as tmp:
        run = Path(tmp) / "run.json"
        run.write_text(json.dumps({"engine": "null", "phase": "testing", "duration_s": 1,
                                   "workload": {"rocksdb_trace": path}}))
        out = subprocess.run([str(driver), "--describe-workload", str(run)],
                             capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise TraceError(out.stderr.strip().removeprefix("lsm-driver: ") or
                         f"lsm-driver exited {out.returncode}")
    return dict(json.loads(out.stdout)["trace"])
