"""The driver's mixgraph against db_bench's own: the same parameters through both, each
one's op stream (db_bench's from its query trace, converted by ``lsm-driver --trace-ops``;
the driver's from ``lsm-driver --generate-ops``), and the statistics that do not depend on
the seed compared with a tolerance that says why it is what it is.

Tolerances. Each statistic is a sample of the same law in both tools, so the tolerance is
the sampling noise of the difference of two samples, at a level where a run that agrees
fails less than once in a million checks:

- shares (the operation mix, each key range's share of the accesses): |p1 - p2| within
  5 standard deviations of the difference, sqrt(p (1 - p) (1/n1 + 1/n2)) with the pooled p
  (two-sided 5.7e-7), plus one access in either sample;
- value sizes: the two-sample Kolmogorov-Smirnov test (scipy), failing at p < 1e-6 (for
  sizes, which are integers, the test is conservative: it fails even less often);
- the top 1 % of the keys' share of the accesses: the difference within 5 standard
  deviations of it, the standard deviation estimated from the driver's own stream by
  splitting it into 20 blocks (the share is not a binomial proportion: which keys are the
  top 1 % is itself drawn);
- the mean scan length, which db_bench prints (its trace records a seek but not the nexts):
  within 5 standard errors of the driver's mean (scan lengths are heavy-tailed, so the
  check is weak, and the page says so);
- the rate over time (a sine load): each whole second's requests within 5 % of the driver's
  plus 5 sqrt(rate), after db_bench's first interval, which it runs unthrottled.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .op_stream import read_op_stream, top_keys_share

SIGMAS = 5.0
KS_ALPHA = 1e-6
RATE_TOLERANCE = 0.05

# db_bench's op as the driver names it (a trace does not tell an insert from an update).
DB_BENCH_OPS = {"read": "read", "put": "update", "update": "update", "scan": "scan"}


@dataclass(frozen=True)
class Check:
    statistic: str
    db_bench: float
    driver: float
    tolerance: float  # the allowed |db_bench - driver|, or the KS p-value floor
    ok: bool
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "db_bench": float(self.db_bench),
                "driver": float(self.driver), "tolerance": float(self.tolerance),
                "ok": bool(self.ok), "note": self.note}


@dataclass(frozen=True)
class DbBenchReport:
    """What db_bench prints at the end of mixgraph."""

    gets: int
    puts: int
    seeks: int
    mean_value_size: float
    mean_scan_length: float


_REPORT = re.compile(r"Gets:(\d+) Puts:(\d+) Seek:(\d+).*avg size: ([\d.na-]+) value, "
                     r"([\d.na-]+) scan")


def parse_db_bench_report(text: str) -> DbBenchReport:
    m = _REPORT.search(text)
    if m is None:
        raise ValueError("db_bench printed no mixgraph summary ('( Gets:... Puts:... Seek:...')")
    return DbBenchReport(int(m[1]), int(m[2]), int(m[3]), float(m[4]), float(m[5]))


def db_bench_flags(mixgraph: dict[str, Any]) -> list[str]:
    """The workload's mixgraph section as db_bench flags: the names are the same."""
    return [f"--{name}={value}" for name, value in mixgraph.items()]


def sine_flags(arrival: dict[str, Any]) -> list[str]:
    """A sine arrival section as db_bench's --sine_mix_rate flags."""
    names = ("sine_a", "sine_b", "sine_c", "sine_d", "sine_mix_rate_interval_milliseconds",
             "sine_mix_rate_noise")
    return ["--sine_mix_rate=true"] + [f"--{n}={arrival[n]}" for n in names if n in arrival]


def run_db_bench(db_bench: str, work: Path, mixgraph: dict[str, Any], *, num: int,
                 reads: int, key_size: int, seed: int, extra: Sequence[str] = (),
                 duration_s: int = 0) -> tuple[Path, DbBenchReport]:
    """Loads `num` keys (fillrandom, untraced), then runs mixgraph with its trace on:
    (the trace, db_bench's report)."""
    work.mkdir(parents=True, exist_ok=True)
    db, trace = work / "db_bench-db", work / "db_bench.trace"
    common = [f"--db={db}", f"--num={num}", f"--key_size={key_size}", "--compression_type=none",
              f"--seed={seed}", "--threads=1"]
    subprocess.run([db_bench, "--benchmarks=fillrandom", "--value_size=100", *common],
                   check=True, capture_output=True, text=True)
    out = subprocess.run(
        [db_bench, "--benchmarks=mixgraph", "--use_existing_db=1", f"--reads={reads}",
         f"--duration={duration_s}", f"--trace_file={trace}", *common, *db_bench_flags(mixgraph),
         *extra],
        check=True, capture_output=True, text=True)
    return trace, parse_db_bench_report(out.stdout)


def trace_stream(driver: str, trace: Path, out: Path) -> pd.DataFrame:
    """db_bench's trace as an op stream (lsm-driver --trace-ops)."""
    with out.open("w") as f:
        subprocess.run([driver, "--trace-ops", str(trace)], check=True, stdout=f)
    return read_op_stream(out)


def driver_stream(driver: str, run_json: Path, count: int, out: Path) -> pd.DataFrame:
    """The driver's first `count` operations for run.json (lsm-driver --generate-ops)."""
    with out.open("w") as f:
        subprocess.run([driver, "--generate-ops", str(run_json), "--count", str(count)],
                       check=True, stdout=f)
    return read_op_stream(out)


def db_bench_key_id(key_hex: str) -> int:
    """db_bench's key: the id's 8 big-endian bytes, then '0' padding (GenerateKeyFromInt)."""
    return int(key_hex[:16], 16)


def driver_key_id(prefix_len: int) -> Callable[[str], int]:
    """The driver's ordered key: prefix + the zero-padded id in decimal."""
    def key_id(key_hex: str) -> int:
        return int(bytes.fromhex(key_hex)[prefix_len:])
    return key_id


def _share_check(name: str, k1: int, n1: int, k2: int, n2: int) -> Check:
    p1, p2 = k1 / n1, k2 / n2
    pooled = (k1 + k2) / (n1 + n2)
    tol = SIGMAS * math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2)) + 1 / n1 + 1 / n2
    return Check(name, p1, p2, tol, abs(p1 - p2) <= tol)


def _ops(df: pd.DataFrame) -> pd.Series:
    return df["op"].astype(str).map(lambda op: DB_BENCH_OPS.get(op, op))


def mix_checks(db: pd.DataFrame, drv: pd.DataFrame) -> list[Check]:
    a, b = _ops(db).value_counts(), _ops(drv).value_counts()
    return [_share_check(f"share of {op}", int(a.get(op, 0)), len(db), int(b.get(op, 0)),
                         len(drv))
            for op in ("read", "update", "scan")]


def key_range_checks(db: pd.DataFrame, drv: pd.DataFrame, *, num: int, ranges: int,
                     prefix_len: int) -> list[Check]:
    """The share of the accesses outside the loaded keys [0, ranges x s), s = num // ranges,
    and each key range's share of those inside (range i holds ids [i s, (i+1) s))."""
    size = num // ranges
    def labels(df: pd.DataFrame, key_id: Callable[[str], int]) -> pd.Series:
        ids = df["key"].map(key_id)
        r = ids // size
        return r.where(r < ranges, ranges)
    a = labels(db, db_bench_key_id).value_counts()
    b = labels(drv, driver_key_id(prefix_len)).value_counts()
    out = [_share_check("outside the loaded keys", int(a.get(ranges, 0)), len(db),
                        int(b.get(ranges, 0)), len(drv))]
    inside_a, inside_b = len(db) - int(a.get(ranges, 0)), len(drv) - int(b.get(ranges, 0))
    out += [_share_check(f"range {i} share", int(a.get(i, 0)), inside_a, int(b.get(i, 0)),
                         inside_b)
            for i in range(ranges)]
    return out


def top_keys_check(db: pd.DataFrame, drv: pd.DataFrame, blocks: int = 20) -> Check:
    _, s1 = top_keys_share(db["key"])
    _, s2 = top_keys_share(drv["key"])
    # The spread of the share over blocks of 1/blocks of the stream, scaled to the whole.
    parts = np.array_split(drv["key"].to_numpy(), blocks)
    block_shares = [top_keys_share(pd.Series(p))[1] for p in parts]
    sd = float(np.std(block_shares, ddof=1)) / math.sqrt(blocks)
    tol = SIGMAS * sd * math.sqrt(2)
    return Check("top 1 % keys' share of accesses", s1, s2, tol, abs(s1 - s2) <= tol,
                 note="the share among the keys each stream accessed; spread from 20 blocks "
                      "of the driver's stream")


def value_size_checks(db: pd.DataFrame, drv: pd.DataFrame) -> list[Check]:
    x = db.loc[_ops(db) == "update", "value_size"].dropna().astype(float).to_numpy()
    y = drv.loc[_ops(drv) == "update", "value_size"].dropna().astype(float).to_numpy()
    ks = stats.ks_2samp(x, y)
    out = [Check("value sizes: Kolmogorov-Smirnov p-value", float(ks.statistic), float(ks.pvalue),
                 KS_ALPHA, bool(ks.pvalue >= KS_ALPHA),
                 note=f"KS statistic {ks.statistic:.4f} over {len(x)} and {len(y)} puts")]
    for q in (0.1, 0.5, 0.9, 0.99):
        out.append(Check(f"value size p{round(q * 100)}", float(np.quantile(x, q)),
                         float(np.quantile(y, q)), math.nan, True, note="shown; the KS test "
                         "decides"))
    return out


def scan_length_check(report: DbBenchReport, drv: pd.DataFrame) -> Check:
    y = drv.loc[drv["op"] == "scan", "scan_length"].dropna().astype(float).to_numpy()
    se = float(np.std(y, ddof=1)) / math.sqrt(len(y)) if len(y) > 1 else math.inf
    tol = SIGMAS * se * math.sqrt(2)
    return Check("mean scan length", report.mean_scan_length, float(y.mean()), tol,
                 abs(report.mean_scan_length - float(y.mean())) <= tol,
                 note="db_bench's printed mean (the nexts it made); its trace has no lengths")


def rate_checks(db: pd.DataFrame, drv: pd.DataFrame, *, skip_s: float) -> list[Check]:
    """Requests per whole second of the trace's and the driver's time stamps."""
    def per_second(df: pd.DataFrame) -> np.ndarray:
        t = df["time_us"].dropna().astype("int64").to_numpy()
        t = t - t.min()
        return np.bincount(t // 1_000_000)
    a, b = per_second(db), per_second(drv)
    first = math.ceil(skip_s)
    last = min(len(a), len(b)) - 1  # the last second of either may be partial
    out = []
    for s in range(first, last):
        tol = RATE_TOLERANCE * b[s] + SIGMAS * math.sqrt(max(b[s], 1))
        out.append(Check(f"requests in second {s}", float(a[s]), float(b[s]), tol,
                         abs(float(a[s]) - float(b[s])) <= tol))
    return out


def run_json(path: Path, mixgraph: dict[str, Any], *, num: int, key_size: int, prefix: str,
             seed: int, arrival: dict[str, Any] | None = None) -> Path:
    """A run.json of the driver for the same parameters (the null engine: only the generator
    is used)."""
    run: dict[str, Any] = {
        "engine": "null", "phase": "running" if arrival else "testing", "duration_s": 3600,
        "seed": seed,
        "workload": {"name": "mixgraph", "record_count": num, "key_size": key_size,
                     "key_prefix": prefix, "mixgraph": mixgraph}}
    if arrival:
        run["arrival"] = arrival
    path.write_text(json.dumps(run))
    return path


def compare_mixgraph(db_bench: str, driver: str, work: Path, mixgraph: dict[str, Any], *,
                     num: int, reads: int, seed: int = 1, key_size: int = 16,
                     prefix: str = "user") -> tuple[list[Check], DbBenchReport]:
    """db_bench and the driver on the same mixgraph parameters: every check above."""
    work.mkdir(parents=True, exist_ok=True)
    trace, report = run_db_bench(db_bench, work, mixgraph, num=num, reads=reads,
                                 key_size=key_size, seed=seed)
    db = trace_stream(driver, trace, work / "db_bench.csv")
    drv = driver_stream(driver, run_json(work / "run.json", mixgraph, num=num,
                                         key_size=key_size, prefix=prefix, seed=seed),
                        reads, work / "driver.csv")
    ranges = int(mixgraph.get("keyrange_num", 1))
    checks = mix_checks(db, drv)
    # Without key ranges, tenths of the key space show uniform keys spread evenly; power-law
    # keys only the share outside: which tenth the hottest keys hash into depends on the seed.
    if ranges > 1 or not mixgraph.get("key_dist_a"):
        checks += key_range_checks(db, drv, num=num, ranges=ranges if ranges > 1 else 10,
                                   prefix_len=len(prefix))
    else:
        checks += key_range_checks(db, drv, num=num, ranges=1, prefix_len=len(prefix))[:1]
    checks.append(top_keys_check(db, drv))
    checks += value_size_checks(db, drv)
    checks.append(scan_length_check(report, drv))
    return checks, report


def compare_sine(db_bench: str, driver: str, work: Path, mixgraph: dict[str, Any],
                 arrival: dict[str, Any], *, num: int, seconds: int, seed: int = 1,
                 key_size: int = 16, prefix: str = "user") -> tuple[list[Check], float]:
    """db_bench's sine load against the driver's sine arrivals, requests per second: (the
    checks, the seconds left out at the start)."""
    work.mkdir(parents=True, exist_ok=True)
    trace, _ = run_db_bench(db_bench, work, mixgraph, num=num, reads=10**9, key_size=key_size,
                            seed=seed, duration_s=seconds, extra=sine_flags(arrival))
    db = trace_stream(driver, trace, work / "db_bench.csv")
    drv = driver_stream(driver, run_json(work / "run.json", mixgraph, num=num,
                                         key_size=key_size, prefix=prefix, seed=seed,
                                         arrival=arrival),
                        len(db), work / "driver.csv")
    # db_bench's first interval runs unthrottled (its limiter starts at 1e6/s), and its rate
    # is first set at the end of it: the first two intervals are its start, not the wave.
    skip = 2 * float(arrival.get("sine_mix_rate_interval_milliseconds", 10000)) / 1000
    return rate_checks(db, drv, skip_s=skip), skip
