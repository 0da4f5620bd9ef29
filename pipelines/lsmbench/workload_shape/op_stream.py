"""Op streams: one line per operation a workload issued (workloads/ycsb/README.md, "The op
stream"), and the statistics that say what shape the workload has.

    # lsmbench op stream v1: <free text naming the source>
    seq,time_us,op,key,value_size,scan_length

``op`` is one of OPS; ``key`` the lowercase hex of the key's bytes; ``value_size`` the bytes of
the values written (insert, update, rmw; empty otherwise); ``scan_length`` the records a scan
asks for (empty otherwise); ``time_us`` empty in a closed loop.

    python -m lsmbench.workload_shape.op_stream [--load LOAD.csv] RUN.csv

prints summarize() of RUN.csv (and of LOAD.csv, with the recent-insert share of the run) as JSON.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

HEADER_PREFIX = "# lsmbench op stream v1:"
COLUMNS = ("seq", "time_us", "op", "key", "value_size", "scan_length")
# put: a write of a query trace, which does not tell a new key from an old one.
OPS = ("insert", "update", "put", "read", "scan", "rmw", "delete")
WRITE_OPS = ("insert", "update", "put", "rmw")  # the ops that carry a value_size
QUANTILES = (("p0", 0.0), ("p10", 0.10), ("p50", 0.50), ("p90", 0.90), ("p99", 0.99),
             ("p100", 1.0))
OP_DTYPE = pd.CategoricalDtype(list(OPS))
_HEX = re.compile(r"(?:[0-9a-f]{2})*")

KeyRanges = Callable[[str], Hashable] | Sequence[str | bytes]


class OpStreamError(ValueError):
    """A file that is not an op stream v1, or a line that breaks its rules."""


def read_op_stream(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The stream as a DataFrame with the columns COLUMNS: seq int64, time_us / value_size /
    scan_length nullable Int64, op categorical (OPS), key str (hex). The header's free text is
    in ``df.attrs["source"]``. Raises OpStreamError on a wrong header, an unknown op, a key
    that is not lowercase hex of whole bytes, a write without value_size (or another op with
    one), scan_length on an op other than scan (a scan may have none: a trace's), a negative
    number, or seq not strictly increasing."""
    with open(path, encoding="utf-8") as f:
        first = f.readline().rstrip("\n")
        second = f.readline().rstrip("\n")
    if not first.startswith(HEADER_PREFIX):
        raise OpStreamError(f"{path}: line 1 is not '{HEADER_PREFIX} ...': {first[:80]!r}")
    if second != ",".join(COLUMNS):
        raise OpStreamError(f"{path}: line 2 is not '{','.join(COLUMNS)}': {second[:80]!r}")
    numeric = ("time_us", "value_size", "scan_length")
    df = pd.read_csv(
        path, skiprows=1, header=0, names=list(COLUMNS),
        dtype={"seq": "int64", "op": str, "key": str, **dict.fromkeys(numeric, "Int64")},
        keep_default_na=False, na_values={c: [""] for c in numeric}, comment=None,
    )
    where = f"{path}"
    bad_op = ~df["op"].isin(OPS)
    if bad_op.any():
        i = int(np.flatnonzero(bad_op.to_numpy())[0])
        raise OpStreamError(f"{where}: line {i + 3}: unknown op {df['op'].iloc[i]!r}")
    # Vectorized (pyarrow's regex on pandas' Arrow strings): a 200,000-op sample per phase.
    bad_key = ~df["key"].str.fullmatch(_HEX.pattern).fillna(False).astype(bool)
    if bad_key.any():
        i = int(np.flatnonzero(bad_key.to_numpy())[0])
        raise OpStreamError(f"{where}: line {i + 3}: key {df['key'].iloc[i]!r} is not "
                            "lowercase hex of whole bytes")
    is_write = df["op"].isin(WRITE_OPS).to_numpy()
    is_scan = (df["op"] == "scan").to_numpy()
    # A scan may lack its length: a query trace records the seek, not the nexts.
    for column, should, what, required in (
            ("value_size", is_write, "insert, update, put and rmw", True),
            ("scan_length", is_scan, "scan", False)):
        present = df[column].notna().to_numpy()
        wrong = (present != should) if required else (present & ~should)
        if wrong.any():
            i = int(np.flatnonzero(wrong)[0])
            raise OpStreamError(f"{where}: line {i + 3}: {column} is given for {what} only "
                                f"(op {df['op'].iloc[i]}, {column} {df[column].iloc[i]!s})")
    for column in ("seq", *numeric):
        negative = (df[column] < 0).fillna(False).to_numpy(dtype=bool)
        if negative.any():
            i = int(np.flatnonzero(negative)[0])
            raise OpStreamError(f"{where}: line {i + 3}: {column} is negative")
    if len(df) > 1:
        steps = np.diff(df["seq"].to_numpy())
        if (steps <= 0).any():
            i = int(np.flatnonzero(steps <= 0)[0]) + 1
            raise OpStreamError(f"{where}: line {i + 3}: seq does not increase")
    df["op"] = df["op"].astype(OP_DTYPE)
    df.attrs["source"] = first[len(HEADER_PREFIX):].strip()
    return df


def distribution(values: pd.Series) -> dict[str, float | int]:
    """count, mean and QUANTILES (linear interpolation; p0 and p100 are the min and max)."""
    x = values.dropna().astype("float64").to_numpy()
    if len(x) == 0:  # a trace's scans: no lengths
        return {"count": 0}
    out: dict[str, float | int] = {"count": len(x), "mean": float(x.mean())}
    for name, q in QUANTILES:
        out[name] = float(np.quantile(x, q))
    return out


def top_keys_share(keys: pd.Series, fraction: float = 0.01) -> tuple[int, float]:
    """(k, share): the k = max(1, ceil(fraction * distinct keys)) most accessed keys and the
    share of all accesses (rows) that went to them."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction {fraction} is not in (0, 1]")
    if len(keys) == 0:
        return 0, math.nan
    counts = keys.value_counts(sort=True)
    k = max(1, math.ceil(fraction * len(counts)))
    return k, float(counts.iloc[:k].sum() / len(keys))


def _range_labels(keys: pd.Series, key_ranges: KeyRanges) -> pd.Series:
    if callable(key_ranges):
        return keys.map(key_ranges)
    bounds = [b.hex() if isinstance(b, bytes) else b for b in key_ranges]
    if any(_HEX.fullmatch(b) is None for b in bounds):
        raise ValueError("key range boundaries are lowercase hex of whole bytes (or bytes)")
    if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
        raise ValueError("key range boundaries must be strictly increasing")
    # Lowercase hex of whole bytes sorts as the bytes do (digits before letters, a prefix first).
    edges = ["", *bounds, None]
    labels = [f"[{lo},{hi if hi is not None else ''})" for lo, hi in itertools.pairwise(edges)]
    index = np.searchsorted(np.array(bounds, dtype=object), keys.to_numpy(dtype=object),
                            side="right")
    return pd.Series(np.array(labels, dtype=object)[index], index=keys.index)


def _rate(time_us: pd.Series) -> dict[str, Any] | None:
    t = time_us.dropna()
    if len(t) == 0:
        return None
    buckets = (t.astype("int64") // 1_000_000).to_numpy()
    first = int(buckets.min())
    counts = np.bincount(buckets - first)
    return {"bucket_s": 1, "first_bucket_s": first, "ops_per_bucket": counts.tolist(),
            "mean_per_s": float(counts.mean()), "max_per_s": int(counts.max()),
            "ops_with_time": len(t)}


def summarize(df: pd.DataFrame, *, key_ranges: KeyRanges | None = None) -> dict[str, Any]:
    """What shape the stream has, JSON-ready:

    ops, op_counts and op_mix (share of rows per op present); value_size per write op present
    (count, mean, p0/p10/p50/p90/p99/p100); scan_length the same over scans (None without
    scans); distinct_keys; top_1pct_keys and top_1pct_key_share (top_keys_share: every row is
    one access to its key, a scan to its start key); key_range_share when key_ranges is given:
    a function of the hex key to a label, or increasing boundaries (hex or bytes) cutting the key
    space in byte order into [lo,hi) ranges; rate (ops per 1-s bucket of time_us) when any row
    has a time_us, else None."""
    n = len(df)
    counts = df["op"].value_counts()
    op_counts = {op: int(counts[op]) for op in OPS if op in counts and counts[op] > 0}
    out: dict[str, Any] = {
        "ops": n,
        "op_counts": op_counts,
        "op_mix": {op: c / n for op, c in op_counts.items()},
        "value_size": {op: distribution(df.loc[df["op"] == op, "value_size"])
                       for op in WRITE_OPS if op in op_counts},
        "scan_length": (distribution(df.loc[df["op"] == "scan", "scan_length"])
                        if "scan" in op_counts else None),
        "distinct_keys": int(df["key"].nunique()),
    }
    k, share = top_keys_share(df["key"])
    out["top_1pct_keys"] = k
    out["top_1pct_key_share"] = share if n else None
    if key_ranges is not None:
        labels = _range_labels(df["key"], key_ranges)
        shares = labels.value_counts(normalize=True, sort=False)
        out["key_range_share"] = {str(label): float(s) for label, s in shares.items()}
    out["rate"] = _rate(df["time_us"])
    return out


def recent_insert_share(run: pd.DataFrame, *, load: pd.DataFrame | None = None,
                        fraction: float = 0.1,
                        ops: Sequence[str] = ("read", "update", "scan", "rmw", "delete")) -> float:
    """The share of the run's accesses (rows whose op is in ops) whose key is among the most
    recently inserted ceil(fraction * n) keys, n being the keys inserted before that access: the
    load's inserts in order, then the run's own as they come. A key inserted twice counts from
    its first insert; an access to a key never inserted is not recent. YCSB's workload D
    ('latest') puts most of its reads there."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction {fraction} is not in (0, 1]")
    loaded = [] if load is None else load.loc[load["op"] == "insert", "key"].tolist()
    order: dict[str, int] = {}  # a key -> how many distinct keys were inserted before it
    for key in loaded:
        order.setdefault(key, len(order))
    before = np.empty(len(run), dtype=np.int64)  # distinct keys inserted before each run row
    for i, (op, key) in enumerate(zip(run["op"], run["key"], strict=True)):
        before[i] = len(order)
        if op == "insert":
            order.setdefault(key, len(order))
    access = run["op"].isin(list(ops)).to_numpy()
    if not access.any():
        return math.nan
    idx = run["key"].map(order).astype("float64").fillna(-np.inf).to_numpy()
    recent = (idx >= before - np.ceil(fraction * before)) & (idx < before)
    return float(recent[access].mean())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lsmbench.workload_shape.op_stream",
                                     description="Summarize an op stream as JSON.")
    parser.add_argument("run", help="the op stream (a YCSB run phase: -t)")
    parser.add_argument("--load", help="the load phase's op stream (-load)")
    args = parser.parse_args(argv)
    try:
        run = read_op_stream(args.run)
        load = read_op_stream(args.load) if args.load else None
    except (OSError, OpStreamError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out: dict[str, Any] = {"run": {"source": run.attrs["source"], **summarize(run)}}
    if load is not None:
        out["load"] = {"source": load.attrs["source"], **summarize(load)}
    recent = recent_insert_share(run, load=load)
    out["recent_10pct_insert_share"] = None if math.isnan(recent) else recent
    json.dump(out, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
