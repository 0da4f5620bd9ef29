"""A phase's workload shape record, ``workload_shape.json`` beside its driver outputs: what the
workload really sent, so that a result says what it was measured on (docs/results-store.md,
"workload_shape.json").

Three parts, each from the source that knows it:

* ``completed``: the op mix the driver completed, from its own per-type counts (summary.json
  ``ops``, the measured window; ``ops_total`` when the window holds none, as in a load);
* ``sample``: the key-access skew, value sizes and scan lengths, from :func:`op_stream.summarize`
  of the phase's op stream (``lsm-driver --generate-ops`` on the phase's run.json: the same ops
  by sequence number, no engine), its first min(ops sent, SAMPLE_LIMIT) operations;
* ``rate``: requests/s per interval achieved (timeseries.jsonl ``throughput.total``) and, in an
  open loop, intended (``queue.intended_rate``: a sine's or a replay's rate varies).

The pipeline writes it when a phase finishes (:func:`write_phase_shape`). It never fails a phase:
a part that cannot be computed is null and ``problems`` says why; the file is written
atomically (whole or not at all). Points stored before lsmbench recorded it get the parts their
files hold when read (:func:`stored_shape`: ``completed`` and ``rate``, ``sample`` null); ``python
-m lsmbench.workload_shape.record DIR`` writes the missing records of a point or a campaign.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..driverio import read_json_object, read_timeseries
from ..store import write_json_atomic
from ..util.paths import find_driver
from ..util.values import number

SHAPE_FILE = "workload_shape.json"
SCHEMA = "lsmbench.workload_shape/1"
SAMPLE_LIMIT = 200_000  # operations of the generated stream summarized, at most
GENERATE_TIMEOUT_S = 120.0
# summary.json ops: the types of the mix, and two sums that are not types.
_NOT_TYPES = frozenset({"total", "writes"})
COMPUTED_WITH_PHASE = "with the phase"
COMPUTED_WHEN_READ = "when read"  # a point stored without the record: the parts its files hold


def completed_mix(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """The op mix the driver completed: counts per type of the measured window (the whole
    phase's when the window holds none), their shares, and the query threads' ops beside."""
    if not summary:
        return None
    window = "measured"
    counts = _type_counts(summary.get("ops"))
    if not sum(counts.values()):
        window, counts = "whole phase", _type_counts(summary.get("ops_total"))
    total = sum(counts.values())
    if not total:
        return None
    queries = {}
    for kind, q in (summary.get("queries") or {}).items():
        n = number(q.get("ops")) if isinstance(q, dict) else None
        if n:
            queries[str(kind)] = int(n)
    return {"window": window, "requests": total, "ops": counts,
            "op_mix": {op: n / total for op, n in counts.items()}, "queries": queries}


def _type_counts(ops: Any) -> dict[str, int]:
    if not isinstance(ops, dict):
        return {}
    out = {}
    for op, n in ops.items():
        v = number(n)
        if op not in _NOT_TYPES and v:
            out[str(op)] = int(v)
    return out


def rate_over_time(intervals: list[dict[str, Any]],
                   summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """Requests/s per regular interval (the drain left out): achieved, and intended where the
    driver says (an open loop); the measured window's means from the summary."""
    t_end, achieved, intended, measured_from = [], [], [], None
    for iv in intervals:
        if iv.get("drain"):
            continue
        t = number(iv.get("t_end_s"))
        a = number((iv.get("throughput") or {}).get("total"))
        if t is None or a is None:
            continue
        t_end.append(round(t, 3))
        achieved.append(round(a, 3))
        q = iv.get("queue")
        i = number(q.get("intended_rate")) if isinstance(q, dict) else None
        intended.append(None if i is None else round(i, 3))
        if measured_from is None and iv.get("measured"):
            measured_from = number(iv.get("t_start_s"))
    if not t_end:
        return None
    s = summary or {}
    loop = s.get("open_loop") if isinstance(s.get("open_loop"), dict) else None
    mean = number((s.get("throughput") or {}).get("mean"))
    if mean is None:
        mean = sum(achieved) / len(achieved)
    has_intended = any(v is not None for v in intended)
    return {
        "unit": "requests/s",
        "interval_s": number(s.get("interval_s")),
        "t_end_s": t_end,
        "achieved": achieved,
        "intended": intended if has_intended else None,
        "measured_from_s": measured_from,
        "mean_achieved": mean,
        "mean_intended": number(loop.get("intended_rate")) if loop else None,
        "arrival": dict(loop["arrival"]) if loop and isinstance(loop.get("arrival"), dict)
        else None,
    }


def ops_sent(summary: dict[str, Any] | None) -> int | None:
    """The requests the phase sent (summary.json ops_total.total), None when unknown."""
    v = number(((summary or {}).get("ops_total") or {}).get("total"))
    return int(v) if v is not None else None


def generation_doc(run: dict[str, Any]) -> dict[str, Any]:
    """The phase's run.json as --generate-ops reads it: the ops depend on the workload, the
    phase, its seed, insert_start and arrival, not on the engine, so the engine is the builtin
    one without options (a plugin's file may be on another node; the builtin takes every
    workload, secondary fields too) and its directory is never opened."""
    doc = {k: v for k, v in run.items()
           if k not in ("engine_plugin", "engine_options", "queries", "settle_s")}
    doc["engine"] = "builtin"
    doc.setdefault("dir", "/nonexistent/lsmbench-generate-ops")
    return doc


def sample_shape(run: dict[str, Any], driver: Path, count: int,
                 timeout_s: float = GENERATE_TIMEOUT_S) -> dict[str, Any]:
    """summarize() of the first `count` operations the phase's run.json sends, as the
    driver generates them. Raises ValueError (why) when the driver cannot generate them."""
    # pandas only here: `ls` and the report read stored records without it (start-up time).
    from .op_stream import WRITE_OPS, OpStreamError, distribution, read_op_stream, summarize

    with tempfile.TemporaryDirectory(prefix="lsmbench-shape-") as tmp:
        run_path = Path(tmp) / "run.json"
        run_path.write_text(json.dumps(generation_doc(run)))
        stream = Path(tmp) / "ops.csv"
        with open(stream, "wb") as out:
            try:
                proc = subprocess.run([str(driver), "--generate-ops", str(run_path), "--count",
                                       str(count)], stdout=out, stderr=subprocess.PIPE,
                                      timeout=timeout_s, check=False)
            except subprocess.TimeoutExpired as e:
                raise ValueError(f"lsm-driver --generate-ops took more than {timeout_s:g} s"
                                 ) from e
            except OSError as e:
                raise ValueError(f"{driver}: {e.strerror or e}") from e
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            raise ValueError(f"lsm-driver --generate-ops exited {proc.returncode}: "
                             f"{err[-1] if err else '(no message)'}")
        try:
            df = read_op_stream(stream)
        except OpStreamError as e:
            raise ValueError(str(e)) from e
    s = summarize(df)
    writes = df.loc[df["op"].isin(WRITE_OPS), "value_size"]
    value_size = {"all": distribution(writes), **s["value_size"]} if len(writes) else {}
    return {"source": "lsm-driver --generate-ops", "ops": s["ops"], "op_mix": s["op_mix"],
            "distinct_keys": s["distinct_keys"], "top_1pct_keys": s["top_1pct_keys"],
            "top_1pct_key_share": s["top_1pct_key_share"], "value_size": value_size,
            "scan_length": s["scan_length"]}


def stored_shape(name: str, kind: str, summary: dict[str, Any] | None,
                 intervals: list[dict[str, Any]]) -> dict[str, Any]:
    """The record of a phase stored without one: the parts its driver outputs hold
    (``completed``, ``rate``); ``sample`` null."""
    shape = _base(name, kind, summary, intervals)
    shape["computed"] = COMPUTED_WHEN_READ
    shape["problems"].append("the phase was stored without workload_shape.json: no sample of "
                             "its op stream (python -m lsmbench.workload_shape.record writes it)")
    return shape


def _base(name: str, kind: str, summary: dict[str, Any] | None,
          intervals: list[dict[str, Any]]) -> dict[str, Any]:
    problems = []
    completed = completed_mix(summary)
    if completed is None:
        problems.append("no operation completed by type in summary.json")
    rate = rate_over_time(intervals, summary)
    if rate is None:
        problems.append("no interval with a throughput in timeseries.jsonl")
    return {"schema": SCHEMA, "phase": name, "kind": kind, "computed": COMPUTED_WITH_PHASE,
            "completed": completed, "sample": None, "rate": rate, "problems": problems}


def phase_shape(phase_dir: Path, driver: Path | None, *, run: dict[str, Any] | None = None,
                outputs: tuple[dict[str, Any] | None, list[dict[str, Any]]] | None = None,
                limit: int = SAMPLE_LIMIT,
                timeout_s: float = GENERATE_TIMEOUT_S) -> dict[str, Any]:
    """The record of the phase in phase_dir (its run.json, unless `run` gives it, summary.json
    and timeseries.jsonl, unless `outputs` gives them as read); `driver` generates the sample
    (None: no sample, and why)."""
    t0 = time.monotonic()
    if outputs is not None:
        summary, intervals = outputs
    else:
        summary = read_json_object(phase_dir / "summary.json")
        intervals = read_timeseries(phase_dir / "timeseries.jsonl")
    run = run if run is not None else read_json_object(phase_dir / "run.json")
    kind = str((run or {}).get("phase") or phase_dir.name.split("@", 1)[0])
    shape = _base(phase_dir.name, kind, summary, intervals)
    sent = ops_sent(summary)
    count = min(sent, limit) if sent is not None else limit
    if run is None:
        shape["problems"].append("no run.json: no sample of the op stream")
    elif driver is None:
        shape["problems"].append("lsm-driver is not built on this machine (make build): no "
                                 "sample of the op stream")
    elif count <= 0:
        shape["problems"].append("the phase sent no operation: no sample of the op stream")
    else:
        try:
            shape["sample"] = sample_shape(run, driver, count, timeout_s)
            shape["sample"].update(limit=limit, sent=sent)
        except (ValueError, OSError) as e:
            shape["problems"].append(f"no sample of the op stream: {e}")
    shape["cost_s"] = round(time.monotonic() - t0, 3)
    return shape


def write_phase_shape(phase_dir: Path, driver: Path | None, *,
                      run: dict[str, Any] | None = None,
                      outputs: tuple[dict[str, Any] | None, list[dict[str, Any]]] | None = None,
                      limit: int = SAMPLE_LIMIT,
                      timeout_s: float = GENERATE_TIMEOUT_S) -> dict[str, Any]:
    """Computes the phase's record and writes it to phase_dir/SHAPE_FILE atomically. Raises
    only OSError, from the write (nothing half-written is left)."""
    try:
        shape = phase_shape(phase_dir, driver, run=run, outputs=outputs, limit=limit,
                            timeout_s=timeout_s)
    except Exception as e:  # never a phase's failure: the record says why
        shape = {"schema": SCHEMA, "phase": phase_dir.name, "kind": phase_dir.name.split("@")[0],
                 "computed": COMPUTED_WITH_PHASE, "completed": None, "sample": None,
                 "rate": None, "problems": [f"could not be computed: {type(e).__name__}: {e}"]}
    write_json_atomic(phase_dir / SHAPE_FILE, shape)
    return shape


def read_shape(phase_dir: Path) -> dict[str, Any] | None:
    """The stored record of a phase, None when it has none (or an unreadable one)."""
    data = read_json_object(phase_dir / SHAPE_FILE)
    return data if data is not None and data.get("schema") == SCHEMA else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lsmbench.workload_shape.record",
        description=f"Write {SHAPE_FILE} for every phase of a stored point or campaign that "
                    "lacks it (points stored before lsmbench recorded it).")
    parser.add_argument("dirs", nargs="+", type=Path, help="a campaign or point directory")
    parser.add_argument("--force", action="store_true", help="rewrite existing records too")
    parser.add_argument("--driver", help="the lsm-driver to generate the op streams with")
    args = parser.parse_args(argv)
    driver = find_driver(args.driver)
    if driver is None:
        print("error: lsm-driver is not built (make build), or --driver names no file",
              file=sys.stderr)
        return 2
    missing = [str(d) for d in args.dirs if not d.is_dir()]
    if missing:
        print(f"error: not a directory: {', '.join(missing)} (give a campaign or a point "
              "directory of the results store)", file=sys.stderr)
        return 2
    written = 0
    for top in args.dirs:
        for run_json in sorted(top.rglob("run.json")):
            phase_dir = run_json.parent
            if any(p.startswith(".") for p in phase_dir.relative_to(top).parts):
                continue  # a point being written (.tmp/)
            if not (phase_dir / "summary.json").is_file():
                continue
            if not args.force and (phase_dir / SHAPE_FILE).exists():
                continue
            shape = write_phase_shape(phase_dir, driver)
            written += 1
            why = "; ".join(shape["problems"])
            print(f"{phase_dir}: {SHAPE_FILE}" + (f" ({why})" if why else ""))
    print(f"{written} record(s) written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
