"""lsm-sim's time model against the engine (issue 17, part 3; engines/sim/README.md).

For each configuration: lsm-driver runs the engine's testing phase (a closed loop of inserts
into an empty store under an I/O budget), then lsm-sim runs the same policy, scheduler,
constraint and budget over exactly the flush sizes the engine produced, with the memtable
filling at the rate the engine's writer reached while it was not stalled. Compared: the
throughput in flushes per second (the testing maximum, in the unit both share), the share of
the time writes were stalled, and the merges completed.

    .venv/bin/python research/bench/sim_time_validation.py [--duration 60] [--repetitions 3]
        [--budget 16M] [--only leveling,tiering] [--out results/bench/sim_time_validation.json]

A benchmark, not a test: it measures the engine (run it on an otherwise idle machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LSMBENCH_BUILD_DIR", ROOT / "build"))
WORKLOAD = ROOT / "workloads" / "insert-only-1kb.yaml"

CONFIGS: dict[str, dict[str, str]] = {
    "leveling": {"merge_policy": "leveling", "size_ratio": "4", "merge_scheduler": "greedy"},
    "tiering": {"merge_policy": "tiering", "size_ratio": "4", "merge_scheduler": "fair"},
    "binomial": {"merge_policy": "binomial", "sstable_bound": "6", "merge_scheduler": "fair"},
}
COMMON = {"memtable_bytes": "1M", "wal": "off"}
# The simulator's time models compared on the same engine runs: name -> lsm-sim flags.
# "{flush_rate}" and "{merge_rate}" stand for the speeds measured in the engine run compared
# (EngineRun.flush_rate, merge_rate: what one flush or merge thread writes at its fastest).
VARIANTS: dict[str, list[str]] = {
    "no flush time": ["--flush-time", "none"],
    "flushes first": ["--flush-priority", "strict"],
    "flushes alternate": ["--flush-priority", "alternate"],  # lsm-sim's default
    "flushes first + thread speeds": ["--flush-priority", "strict",
                                     "--flush-rate", "{flush_rate}",
                                     "--merge-rate", "{merge_rate}"],
}
MERGE_RATE_PERCENTILE = 90  # merges a scheduler paused are slow: the fast ones ran alone


@dataclass
class EngineRun:
    flush_sizes: list[int]
    flush_entries: list[int]
    sealed_s: list[float]  # when each flushed memtable stopped taking writes
    duration_s: float
    stall_s: float  # merge + memory stalls
    merge_stall_s: float
    memory_stall_s: float
    merges: int
    user_bytes: float
    flush_bytes: float
    max_writes_per_s: float  # the testing phase's maximum (writes/s over the window)
    # The speeds of one flush and one merge thread: the median flush's bytes over its time,
    # and the MERGE_RATE_PERCENTILE-th percentile of the merges' input bytes over theirs.
    flush_rate: float = 0.0
    merge_rate: float = 0.0


@dataclass
class Comparison:
    config: str
    variant: str  # the simulator's time model (VARIANTS)
    phase: str  # testing (closed loop), or running at a share of the testing maximum
    repetition: int
    flushes: int
    engine_flushes_per_s: float
    sim_flushes_per_s: float
    engine_stall_share: float
    sim_stall_share: float
    engine_merges: int  # merges that rewrote data (moves excluded)
    sim_merges: int
    arrival_rate: float  # bytes/s given to the simulator
    flush_rate: float = 0.0  # the engine's thread speeds measured in this run (bytes/s)
    merge_rate: float = 0.0

    @property
    def throughput_diff(self) -> float:
        return self.sim_flushes_per_s / self.engine_flushes_per_s - 1.0


def run_engine(options: dict[str, str], duration: float, work: Path,
               rate: float | None = None) -> EngineRun:
    """The testing phase (closed loop) or, given a rate in writes/s, a running phase at
    constant arrivals; both on an empty store."""
    out = work / ("running" if rate else "testing")
    config: dict[str, Any] = {
        "engine": "builtin", "dir": str(work / out.name), "engine_options": options,
        "phase": out.name, "duration_s": duration, "warmup_s": 0, "threads": 1,
        "interval_ms": 1000, "progress_s": 0, "workload_file": str(WORKLOAD),
    }
    if rate:
        config["arrival"] = {"process": "constant", "rate": rate}
        config["drain_s"] = 0
    (work / "run.json").write_text(json.dumps(config))
    subprocess.run([str(BUILD / "bin" / "lsm-driver"), "--config", str(work / "run.json"),
                    "--out", str(out)], check=True, capture_output=True, text=True)
    intervals = [json.loads(line) for line in (out / "timeseries.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    flushes = sorted((e for iv in intervals for e in iv.get("events", []) if e["kind"] == "flush"),
                     key=lambda e: e["end_s"])
    merges = [e for iv in intervals for e in iv.get("events", [])
              if e["kind"] == "merge" and not e["moved"]]
    # Over the measured window (warm-up 0: the whole phase but the drain and the final
    # snapshot): the engine's counters at its first interval's start are 0.
    last = [iv for iv in intervals if iv.get("measured") and not iv.get("drain")][-1]["engine"]
    return EngineRun(
        flush_sizes=[int(e["output_bytes"]) for e in flushes],
        flush_entries=[int(e["entries"]) for e in flushes],
        sealed_s=[float(e["sealed_s"]) for e in flushes],
        duration_s=float(summary["window"]["duration_s"]),
        stall_s=(last["merge_stall_micros"] + last["memory_stall_micros"]) / 1e6,
        merge_stall_s=last["merge_stall_micros"] / 1e6,
        memory_stall_s=last["memory_stall_micros"] / 1e6,
        merges=len(merges), user_bytes=float(last["user_bytes"]),
        flush_bytes=float(last["bytes_flushed"]),
        max_writes_per_s=float(summary.get("max_write_throughput") or 0.0),
        flush_rate=statistics.median(e["output_bytes"] / max(e["end_s"] - e["start_s"], 1e-6)
                                     for e in flushes) if flushes else 0.0,
        merge_rate=float(np.percentile([e["input_bytes"] / max(e["end_s"] - e["start_s"], 1e-6)
                                        for e in merges], MERGE_RATE_PERCENTILE))
        if merges else 0.0)


def run_sim(options: dict[str, str], budget: int, arrival: float, sizes: list[int],
            work: Path, extra: list[str], write_rate: float = 0.0,
            rates: dict[str, str] | None = None) -> dict[str, Any]:
    """lsm-sim over these flush sizes; `rates` fills the variants' placeholders."""
    rates = rates or {}
    (work / "sizes.txt").write_text("".join(f"{s}\n" for s in sizes))
    args = [str(BUILD / "bin" / "lsm-sim"), "--flush-file", str(work / "sizes.txt"),
            "--bandwidth", str(budget), "--arrival-rate", f"{arrival:.0f}", "--format", "jsonl"]
    if write_rate > arrival:
        args += ["--write-rate", f"{write_rate:.0f}"]
    for k, v in options.items():
        if k not in COMMON and k != "io_budget_bytes_per_sec":
            args += [f"--{k}", v]
    args += ["--memtable_bytes", options["memtable_bytes"]]
    args += [f.format(**rates) for f in extra]
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _rates(eng: EngineRun) -> dict[str, str]:
    """The testing phase's thread speeds, for the variants that use them (the running phase's
    flushes and merges run on the same machine at the same speeds)."""
    return {"flush_rate": f"{eng.flush_rate:.0f}", "merge_rate": f"{eng.merge_rate:.0f}"}


def _compare(name: str, variant: str, phase: str, rep: int, eng: EngineRun,
             sim: dict[str, Any], arrival: float) -> Comparison:
    n = len(eng.flush_sizes)
    span = eng.sealed_s[-1] - eng.sealed_s[0]
    # The simulator's first memtable is full at size / rate: its span starts there
    sim_span = sim["time_s"] - eng.flush_sizes[0] / arrival
    return Comparison(
        config=name, variant=variant, phase=phase, repetition=rep, flushes=n,
        engine_flushes_per_s=(n - 1) / span, sim_flushes_per_s=(n - 1) / max(sim_span, 1e-9),
        engine_stall_share=eng.stall_s / eng.duration_s,
        sim_stall_share=sim["stall_s"] / sim["time_s"] if sim["time_s"] > 0 else 0.0,
        engine_merges=eng.merges, sim_merges=int(sim["merges"]) - int(sim["moves"]),
        arrival_rate=arrival, flush_rate=eng.flush_rate, merge_rate=eng.merge_rate)


def compare(name: str, rep: int, budget: int, duration: float, share: float,
            variants: dict[str, list[str]]) -> list[Comparison]:
    """The engine's testing phase (and running phase at `share`), each against every variant
    of the simulator."""
    options = {**COMMON, **CONFIGS[name], "io_budget_bytes_per_sec": str(budget)}
    out = []
    with tempfile.TemporaryDirectory(prefix="simval-", dir=os.environ.get("TMPDIR", "/var/tmp")
                                     ) as tmp:
        work = Path(tmp)
        eng = run_engine(options, duration, work)
        n = len(eng.flush_sizes)
        if n < 10:
            raise SystemExit(f"{name}: only {n} flushes in {duration} s; run longer")
        # The writer's unstalled rate, in flushed bytes: the bytes of the flushes sealed after
        # the first, over the time between them less the stalls (counted over the whole phase,
        # pro rata).
        span = eng.sealed_s[-1] - eng.sealed_s[0]
        busy = max(span * (1.0 - eng.stall_s / eng.duration_s), 1e-3)
        writer = sum(eng.flush_sizes[1:]) / busy
        for variant, flags in variants.items():
            sim = run_sim(options, budget, writer, eng.flush_sizes, work, flags,
                          rates=_rates(eng))
            out.append(_compare(name, variant, "testing", rep, eng, sim, writer))
        if share > 0:
            # The running phase at `share` of the testing maximum (writes/s), on a fresh store;
            # the simulator's memtable fills at the same rate in flushed bytes, and its writer
            # catches up after a stall at the testing phase's unstalled rate.
            rate = share * eng.max_writes_per_s
            run = run_engine(options, duration, work, rate=rate)
            arrival = rate * sum(run.flush_sizes) / max(sum(run.flush_entries), 1)
            for variant, flags in variants.items():
                sim = run_sim(options, budget, arrival, run.flush_sizes, work, flags,
                              write_rate=max(writer, arrival), rates=_rates(eng))
                out.append(_compare(name, variant, f"running@{share:g}", rep, run, sim,
                                    arrival))
    return out


def _table_row(variant: str, name: str, phase: str, mine: list[Comparison]) -> str:
    def med(f: Any) -> float:
        return statistics.median(f(r) for r in mine)

    def rng(f: Any) -> str:
        vals = [f(r) for r in mine]
        return f" [{min(vals):.3g}-{max(vals):.3g}]" if len(vals) > 1 else ""

    def pct(f: Any) -> str:
        return f"{med(f):.1%}{rng(lambda x: f(x) * 100)}"

    sched = CONFIGS[name]["merge_scheduler"]
    return (f"| {variant} | {name} ({sched}) | {phase} | {len(mine)} | "
            f"{med(lambda r: r.flushes):.0f} | "
            f"{med(lambda r: r.engine_flushes_per_s):.3f}{rng(lambda r: r.engine_flushes_per_s)} | "
            f"{med(lambda r: r.sim_flushes_per_s):.3f}{rng(lambda r: r.sim_flushes_per_s)} | "
            f"{med(lambda r: r.throughput_diff):+.1%}{rng(lambda r: r.throughput_diff * 100)} | "
            f"{pct(lambda r: r.engine_stall_share)} | {pct(lambda r: r.sim_stall_share)} | "
            f"{med(lambda r: (r.sim_stall_share - r.engine_stall_share) * 100):+.1f} | "
            f"{med(lambda r: r.engine_merges):.0f} | {med(lambda r: r.sim_merges):.0f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--repetitions", type=int, default=3)
    p.add_argument("--budget", default="16M")
    p.add_argument("--only", default=",".join(CONFIGS))
    p.add_argument("--running-share", type=float, default=0.9,
                   help="also a running phase at this share of the testing maximum (0: none)")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help=f"the simulator's time models to compare: {', '.join(VARIANTS)}")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "bench" /
                   "sim_time_validation.json")
    a = p.parse_args(argv)
    sys.path.insert(0, str(ROOT / "pipelines"))
    from lsmbench.util.units import parse_size

    budget = parse_size(a.budget)
    unknown = set(a.variants.split(",")) - set(VARIANTS)
    if unknown:
        raise SystemExit(f"--variants: unknown {sorted(unknown)}; known: {', '.join(VARIANTS)}")
    variants = {v: VARIANTS[v] for v in a.variants.split(",")}
    rows: list[Comparison] = []
    started = time.time()
    for name in a.only.split(","):
        for rep in range(a.repetitions):
            for c in compare(name, rep, budget, a.duration, a.running_share, variants):
                rows.append(c)
                print(f"{name} {c.phase} [{c.variant}] rep {rep}: {c.flushes} flushes, engine "
                      f"{c.engine_flushes_per_s:.3f} flushes/s vs sim {c.sim_flushes_per_s:.3f} "
                      f"({c.throughput_diff:+.1%}); stalled {c.engine_stall_share:.1%} vs "
                      f"{c.sim_stall_share:.1%}; merges {c.engine_merges} vs {c.sim_merges}",
                      flush=True)
    print()
    print("| simulator | policy (scheduler) | phase | runs | flushes | engine flushes/s | "
          "sim flushes/s | diff | engine stalled | sim stalled | diff (points) | "
          "engine merges | sim merges |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for variant in variants:
        for name in a.only.split(","):
            for phase in dict.fromkeys(r.phase for r in rows):
                mine = [r for r in rows
                        if r.config == name and r.phase == phase and r.variant == variant]
                print(_table_row(variant, name, phase, mine))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"budget": budget, "duration_s": a.duration,
                                 "running_share": a.running_share,
                                 "variants": variants, "elapsed_s": time.time() - started,
                                 "runs": [asdict(r) for r in rows]}, indent=1))
    print(f"\n{time.time() - started:.0f} s; {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
