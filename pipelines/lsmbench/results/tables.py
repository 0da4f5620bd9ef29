"""A campaign as read from the store -> four long-format DataFrames (docs/analysis.md).

* ``points``: one row per point and phase. The fixed columns come first (the point, its matrix
  values as one column each, the phase, its verdict), then every numeric figure of the phase's
  verdict (``verdict_*``) and of its summary.json, flattened.
* ``timeseries``: one row per interval of a phase's timeseries.jsonl, its numeric fields
  flattened.
* ``histograms``: one row per bucket of every latency histogram in histograms.json.
* ``merges``: one row per merge the engine told (the driver's ``events``).

Nested JSON fields become one column each, their path joined with ``_`` (a dot inside a name,
as in the engine metric ``disk_components.L0``, becomes ``_`` too), so that every generated
name is a plain SQL identifier: ``write_latency_us.p99`` -> ``write_latency_us_p99``.

Every table has its fixed columns with their types even when it has no rows, so a query
written against one campaign runs on any other.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pandas as pd

from ..method.cycles import events
from ..method.groups import point_group
from ..method.metrics import stall_time, write_amplification
from ..method.verdict import verdict_word
from ..points import phase_name, phase_utilization
from ..util.values import number
from .reading import Campaign, ResultsError, StoredPhase, StoredPoint

# Fixed columns and their pandas dtypes, per table. Generated columns follow them.
POINT_COLUMNS: dict[str, str] = {
    "campaign": "string", "point": "string", "group": "string", "rep": "Int64",
    "seed": "Int64", "state": "string", "error": "string", "engine": "string",
    "config_hash": "string",
    # the point's testing maximum (point.json max_throughput.writes_per_s), on each of its rows
    "testing_max_writes_per_s": "float64",
    "searched": "boolean", "max_sustainable_utilization": "float64",
    "max_sustainable_rate": "float64",
    "phase": "string", "phase_kind": "string", "utilization": "float64",
    "headline": "boolean", "phase_status": "string", "phase_exit_code": "Int64",
    "phase_wall_s": "float64", "throttled": "boolean",
    "cgroup_read_bytes": "Int64", "cgroup_write_bytes": "Int64",
    # lsmbench.method.metrics over the phase's measured window, the figures every view shows
    "stall_s": "float64", "stall_source": "string", "stall_count": "float64",
    "write_amplification": "float64", "write_amplification_window": "string",
    "verdict": "string", "sustainable": "boolean", "failed_criteria": "string",
    "verdict_reasons": "string",
    # what the phase's workload sent (its workload_shape.json: workload_shape.record)
    "shape_requests": "Int64",
    **{f"shape_op_share_{op}": "float64" for op in ("insert", "update", "delete", "read",
                                                     "scan", "rmw")},
    "shape_sample_ops": "Int64", "shape_distinct_keys": "Int64",
    "shape_top_1pct_key_share": "float64",
    "shape_value_size_mean": "float64", "shape_value_size_p50": "float64",
    "shape_value_size_p99": "float64",
    "shape_scan_length_mean": "float64", "shape_scan_length_p50": "float64",
    "shape_scan_length_p99": "float64",
    "shape_rate_mean": "float64", "shape_intended_rate_mean": "float64",
    "shape_problems": "string",
}
TIMESERIES_COLUMNS: dict[str, str] = {
    "campaign": "string", "point": "string", "phase": "string", "interval": "Int64",
    "t_start_s": "float64", "t": "float64", "measured": "boolean", "drain": "boolean",
}
HISTOGRAM_COLUMNS: dict[str, str] = {
    "campaign": "string", "point": "string", "phase": "string", "kind": "string",
    "low_ns": "Int64", "high_ns": "Int64", "count": "Int64",
}
MERGE_COLUMNS: dict[str, str] = {
    "campaign": "string", "point": "string", "phase": "string", "level": "Int64",
    "deepest_input_level": "Int64", "inputs": "Int64", "input_bytes": "Int64",
    "output_bytes": "Int64", "entries": "Int64", "moved": "boolean",
    "start_s": "float64", "end_s": "float64",
}

# Not flattened into metric columns: the run's configuration (run.json's copy: spec.json and the
# matrix columns say it), and the fields the fixed columns already hold.
_SUMMARY_SKIP = frozenset({"config"})
_INTERVAL_SKIP = frozenset({"schema", "phase", "interval", "t_start_s", "t_end_s", "measured",
                            "drain", "events"})
_VERDICT_SKIP = frozenset({"utilization", "sustainable"})

# Reasons are sentences (they may hold commas); criteria names are identifiers.
REASON_SEPARATOR = "; "
CRITERIA_SEPARATOR = ","


def campaign_tables(campaign: Campaign) -> dict[str, pd.DataFrame]:
    return {
        "points": points_table(campaign),
        "timeseries": timeseries_table(campaign),
        "histograms": histograms_table(campaign),
        "merges": merges_table(campaign),
    }


# ---------------------------------------------------------------- columns


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def numeric_leaves(obj: Mapping[str, Any], skip: frozenset[str] = frozenset(),
                   prefix: str = "") -> Iterator[tuple[str, int | float]]:
    """(column name, value) of every number in nested JSON objects, names joined with '_'."""
    for key, value in obj.items():
        if not prefix and key in skip:
            continue
        name = prefix + str(key).replace(".", "_")
        if isinstance(value, dict):
            yield from numeric_leaves(value, prefix=name + "_")
        elif _is_number(value):
            yield name, value


def _inferred_dtype(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    if not present:
        return "float64"
    if all(isinstance(v, bool) for v in present):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "Int64"
    if all(_is_number(v) for v in present):
        return "float64"
    return "string"


def _as_text(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)


def _series(values: list[Any], dtype: str) -> pd.Series:
    if dtype == "string":
        values = [_as_text(v) for v in values]
    elif dtype == "float64":
        values = [math.nan if v is None else float(v) for v in values]
    return pd.Series(values, dtype=dtype)


def _frame(rows: list[dict[str, Any]], fixed: dict[str, str],
           generated: Iterable[str] = ()) -> pd.DataFrame:
    """The rows as a DataFrame: the fixed columns with their dtypes, then the generated ones
    in the given order, typed from their values (missing -> NA)."""
    columns = dict(fixed)
    for name in generated:
        columns.setdefault(name, "")
    data = {}
    for name, dtype in columns.items():
        values = [row.get(name) for row in rows]
        data[name] = _series(values, dtype or _inferred_dtype(values))
    return pd.DataFrame(data, columns=list(columns))


def _generated_names(rows: list[dict[str, Any]], fixed: Mapping[str, str]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        for name in row:
            if name not in fixed:
                names.setdefault(name, None)
    return list(names)


def _free_name(name: str, taken: Iterable[str], prefix: str) -> str:
    """name, or prefix + name when a fixed column already has it."""
    return prefix + name if name in taken else name


# ---------------------------------------------------------------- points


def _phase_names(pt: StoredPoint) -> list[str | None]:
    """The point's phases in the order they ran (point.json ``phases``), then any phase
    directory with driver output that point.json does not list; [None] for a point that
    reached no phase."""
    recorded = pt.record.get("phases")
    names = [str(n) for n in recorded] if isinstance(recorded, dict) else []
    names += sorted(n for n in pt.phases if n not in names)
    return list(names) or [None]


def _phase_verdict(pt: StoredPoint, name: str) -> dict[str, Any] | None:
    """The verdict of a running phase: by its ``phase``, else (records from before verdicts
    named it) by its utilization, else the point's only verdict for its only running phase."""
    verdicts = pt.verdicts
    for v in verdicts:
        if v.get("phase") == name:
            return v
    if any("phase" in v for v in verdicts) or phase_name(name) != "running":
        return None
    u = phase_utilization(name)
    if u is not None:
        return next((v for v in verdicts if number(v.get("utilization")) == u), None)
    runs = [n for n in _phase_names(pt) if n and phase_name(n) == "running"]
    return verdicts[0] if len(verdicts) == 1 and runs == [name] else None


def _io_total(info: dict[str, Any], field: str) -> int | None:
    """A phase's cgroup I/O counter summed over its devices (point.json phases.X.io_counters)."""
    counters = info.get("io_counters")
    if not isinstance(counters, dict):
        return None
    values = [c.get(field) for c in counters.values() if isinstance(c, dict)]
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return sum(ints) if ints else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _text(v: Any) -> str | None:
    return str(v) if v is not None else None


def point_rows(campaign: str, pt: StoredPoint) -> list[dict[str, Any]]:
    rec = pt.record
    mt = rec.get("max_throughput") if isinstance(rec.get("max_throughput"), dict) else {}
    search = pt.search
    head = pt.running
    base: dict[str, Any] = {
        "campaign": campaign, "point": pt.id, "group": point_group(pt.id, rec),
        "rep": _int(rec.get("rep")), "seed": _int(rec.get("seed")),
        "state": pt.state, "error": pt.error, "engine": _text(rec.get("engine")),
        "config_hash": _text(rec.get("config_hash")),
        "testing_max_writes_per_s": number(mt.get("writes_per_s")),
        "searched": search is not None,
        "max_sustainable_utilization": number((search or {}).get("utilization")),
        "max_sustainable_rate": number((search or {}).get("rate")),
    }
    for key, value in pt.params.items():
        base[_param_column(str(key))] = value
    phases_info = rec.get("phases") if isinstance(rec.get("phases"), dict) else {}
    rows = []
    for name in _phase_names(pt):
        row = dict(base)
        rows.append(row)
        if name is None:
            continue
        info = phases_info.get(name)
        info = info if isinstance(info, dict) else {}
        stored = pt.phases.get(name)
        v = _phase_verdict(pt, name)
        status = info.get("status") or (stored.summary_get("status") if stored else None)
        row.update({
            "phase": name, "phase_kind": phase_name(name),
            "utilization": number(v.get("utilization")) if v else phase_utilization(name),
            "headline": head is not None and head.name == name,
            "phase_status": _text(status),
            "phase_exit_code": _int(info.get("exit_code")),
            "phase_wall_s": number(info.get("wall_s")),
            "throttled": info.get("throttled") if isinstance(info.get("throttled"), bool)
            else None,
            "cgroup_read_bytes": _io_total(info, "read_bytes"),
            "cgroup_write_bytes": _io_total(info, "write_bytes"),
        })
        stall = stall_time(stored.summary) if stored else None
        wa = write_amplification(stored.summary) if stored else None
        if stall is not None:
            row.update(stall_s=stall.seconds, stall_source=stall.source,
                       stall_count=stall.count)
        if wa is not None:
            row.update(write_amplification=wa.value, write_amplification_window=wa.window)
        if v is not None:
            row["verdict"] = verdict_word(v)
            row["sustainable"] = v.get("sustainable") if isinstance(v.get("sustainable"), bool) \
                else None
            row["failed_criteria"] = CRITERIA_SEPARATOR.join(str(c) for c in v.get("failed") or [])
            row["verdict_reasons"] = REASON_SEPARATOR.join(str(r) for r in v.get("reasons") or [])
            for key, value in v.items():
                if key not in _VERDICT_SKIP and _is_number(value):
                    row[f"verdict_{key}"] = value
        if stored is not None:
            row.update(shape_columns(stored.shape))
        if stored is not None and stored.summary:
            for key, value in numeric_leaves(stored.summary, _SUMMARY_SKIP):
                row[_free_name(key, POINT_COLUMNS, "summary_")] = value
    return rows


def shape_columns(shape: Mapping[str, Any]) -> dict[str, Any]:
    """The points table's shape_* columns of one phase's workload shape record: the op shares
    the driver completed (every type of the driver; another type, shape_op_share_<type>), the
    sample's keys, value sizes (all writes) and scan lengths, the mean rates."""
    out: dict[str, Any] = {}
    completed = shape.get("completed") if isinstance(shape.get("completed"), dict) else None
    if completed is not None:
        out["shape_requests"] = _int(completed.get("requests"))
        mix = completed.get("op_mix") if isinstance(completed.get("op_mix"), dict) else {}
        for name in POINT_COLUMNS:
            if name.startswith("shape_op_share_"):
                out[name] = 0.0  # the phase completed none of this type
        for op, share in mix.items():
            out[f"shape_op_share_{op}"] = number(share)
    sample = shape.get("sample") if isinstance(shape.get("sample"), dict) else None
    if sample is not None:
        out["shape_sample_ops"] = _int(sample.get("ops"))
        out["shape_distinct_keys"] = _int(sample.get("distinct_keys"))
        out["shape_top_1pct_key_share"] = number(sample.get("top_1pct_key_share"))
        for column, dist in (("value_size", (sample.get("value_size") or {}).get("all")),
                             ("scan_length", sample.get("scan_length"))):
            if isinstance(dist, dict):
                for q in ("mean", "p50", "p99"):
                    out[f"shape_{column}_{q}"] = number(dist.get(q))
    rate = shape.get("rate") if isinstance(shape.get("rate"), dict) else None
    if rate is not None:
        out["shape_rate_mean"] = number(rate.get("mean_achieved"))
        out["shape_intended_rate_mean"] = number(rate.get("mean_intended"))
    problems = shape.get("problems")
    if isinstance(problems, list):
        out["shape_problems"] = REASON_SEPARATOR.join(str(p) for p in problems)
    return out


def _param_columns(campaign: Campaign) -> list[str]:
    names: dict[str, None] = {}
    for pt in campaign.points:
        for key in pt.params:
            names.setdefault(_param_column(str(key)), None)
    return list(names)


def _param_column(key: str) -> str:
    return _free_name(key, POINT_COLUMNS, "param_")


def points_table(campaign: Campaign) -> pd.DataFrame:
    rows = [row for pt in campaign.points for row in point_rows(campaign.name, pt)]
    # The matrix values right after the point's identity (typed from their values), then the
    # fixed phase columns, then the verdict's and the summary's figures by name.
    fixed: dict[str, str] = {}
    for name, dtype in POINT_COLUMNS.items():
        fixed[name] = dtype
        if name == "seed":
            fixed.update(dict.fromkeys(_param_columns(campaign), ""))
    return _frame(rows, fixed, sorted(_generated_names(rows, fixed)))


# ---------------------------------------------------------------- time series, histograms, merges


def _phases(campaign: Campaign) -> Iterator[tuple[StoredPoint, StoredPhase]]:
    for pt in campaign.points:
        for name in _phase_names(pt):
            if name is not None and name in pt.phases:
                yield pt, pt.phases[name]


def timeseries_table(campaign: Campaign) -> pd.DataFrame:
    rows = []
    for pt, ph in _phases(campaign):
        for iv in ph.intervals:
            row: dict[str, Any] = {
                "campaign": campaign.name, "point": pt.id, "phase": ph.name,
                "interval": _int(iv.get("interval")), "t_start_s": number(iv.get("t_start_s")),
                "t": number(iv.get("t_end_s")),
                "measured": iv.get("measured") if isinstance(iv.get("measured"), bool) else None,
                "drain": bool(iv.get("drain")),
            }
            for key, value in numeric_leaves(iv, _INTERVAL_SKIP):
                row[_free_name(key, TIMESERIES_COLUMNS, "metric_")] = value
            rows.append(row)
    return _frame(rows, TIMESERIES_COLUMNS, sorted(_generated_names(rows, TIMESERIES_COLUMNS)))


def _buckets(hist: Any) -> Iterator[tuple[int, int, int]]:
    """[low, high, count] buckets of one histogram; anything else is skipped."""
    buckets = hist.get("buckets") if isinstance(hist, dict) else None
    for b in buckets if isinstance(buckets, list) else []:
        if isinstance(b, list) and len(b) == 3 and all(_int(x) is not None for x in b):
            yield b[0], b[1], b[2]


def histograms_table(campaign: Campaign) -> pd.DataFrame:
    cols: dict[str, list[Any]] = {name: [] for name in HISTOGRAM_COLUMNS}
    for pt, ph in _phases(campaign):
        doc = ph.histograms
        if not doc:
            continue
        unit = doc.get("unit", "ns")
        if unit != "ns":  # the only unit the driver writes (engines/driver/README.md)
            raise ResultsError(f"{pt.path / ph.name / 'histograms.json'}: unit {unit!r}, "
                               "expected 'ns'")
        hists = doc.get("histograms") if isinstance(doc.get("histograms"), dict) else {}
        for kind, hist in hists.items():
            for low, high, count in _buckets(hist):
                for name, value in zip(cols, (campaign.name, pt.id, ph.name, kind, low, high,
                                              count), strict=True):
                    cols[name].append(value)
    return pd.DataFrame({name: pd.Series(values, dtype=HISTOGRAM_COLUMNS[name])
                         for name, values in cols.items()}, columns=list(HISTOGRAM_COLUMNS))


def merges_table(campaign: Campaign) -> pd.DataFrame:
    rows = []
    for pt, ph in _phases(campaign):
        for e in events(ph.intervals, "merge"):
            rows.append({
                "campaign": campaign.name, "point": pt.id, "phase": ph.name,
                "level": _int(e.get("output_level")),
                "deepest_input_level": _int(e.get("deepest_input_level")),
                "inputs": _int(e.get("inputs")), "input_bytes": _int(e.get("input_bytes")),
                "output_bytes": _int(e.get("output_bytes")), "entries": _int(e.get("entries")),
                "moved": e.get("moved") if isinstance(e.get("moved"), bool) else None,
                "start_s": number(e.get("start_s")), "end_s": number(e.get("end_s")),
            })
    return _frame(rows, MERGE_COLUMNS)
