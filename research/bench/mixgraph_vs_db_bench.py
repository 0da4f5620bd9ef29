"""docs/results/mixgraph.md: db_bench's mixgraph against the driver's, on the same parameters.

    .venv/bin/python research/bench/mixgraph_vs_db_bench.py [--num N] [--reads N]
        [--out docs/results/mixgraph.md] [--work DIR] [--cases all-random,prefix-dist,...]

For each of Cao et al.'s four workloads (the presets workloads/mixgraph-*.yaml) db_bench loads
`--num` keys (fillrandom, untraced), runs mixgraph with --trace_file, and the trace becomes an
op stream (lsm-driver --trace-ops); the driver's generator gives the same number of operations
on the same parameters (lsm-driver --generate-ops). A fifth case runs db_bench's sine load for
--sine-seconds and compares the requests per second. lsmbench.workload_shape.dbbench holds the
statistics and their tolerances; a test (pipelines/tests/workload_shape/test_mixgraph_db_bench.py)
runs the same comparison on a small run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from lsmbench.util.paths import find_driver
from lsmbench.workload_shape import dbbench as dbb

REPO = Path(__file__).resolve().parents[2]
CASES = ("all-random", "all-dist", "prefix-random", "prefix-dist")
KEY_SIZE = 16
PREFIX = "user"

# Where db_bench does not do what its parameters describe (engines/driver/README.md, "Where the
# driver differs from db_bench"): the statistics expected to differ, and why.
KNOWN = {
    "all-dist": [("outside the loaded keys",
                  "db_bench's power-law keys are a signed Random64 % num: about half are "
                  "negative ids, outside the loaded keys; the driver keeps every key inside")],
    "prefix-random": [(prefix, "db_bench ignores the key ranges when key_dist_a or key_dist_b "
                               "is 0 (prefix_random runs as all_random); the driver keeps them")
                      for prefix in ("range", "top 1 %")],
}


def _workload(case: str) -> dict[str, Any]:
    return dict(yaml.safe_load((REPO / "workloads" / f"mixgraph-{case}.yaml").read_text()))


def compare_case(case: str, work: Path, *, db_bench: str, driver: str, num: int, reads: int,
                 seed: int = 1) -> dict[str, Any]:
    """db_bench and the driver on one preset: the checks and the commands."""
    mixgraph = _workload(case)["mixgraph"]
    checks, report = dbb.compare_mixgraph(db_bench, driver, work, mixgraph, num=num,
                                          reads=reads, seed=seed, key_size=KEY_SIZE,
                                          prefix=PREFIX)
    rows = []
    for c in checks:
        why = next((w for prefix, w in KNOWN.get(case, []) if c.statistic.startswith(prefix)),
                   None)
        rows.append({**c.to_json(), "known": why})
    return {"case": case, "num": num, "reads": reads, "seed": seed, "checks": rows,
            "db_bench_report": report.__dict__,
            "commands": {"db_bench": f"db_bench --benchmarks=fillrandom --num={num} "
                                     f"--key_size={KEY_SIZE} --value_size=100 --seed={seed}; "
                                     f"db_bench --benchmarks=mixgraph --use_existing_db=1 "
                                     f"--num={num} --reads={reads} --key_size={KEY_SIZE} "
                                     f"--seed={seed} --trace_file=T "
                                     + " ".join(dbb.db_bench_flags(mixgraph)),
                          "driver": f"lsm-driver --trace-ops T; lsm-driver --generate-ops "
                                    f"run.json --count {reads}"}}


# db_bench asserts when a rate limiter refills fewer than 100 requests per 100 ms: its write
# rate (the put share of the wave) must stay above 1,000/s.
SINE = {"process": "sine", "sine_a": 8000, "sine_b": 0.3, "sine_c": 0, "sine_d": 20000,
        "sine_mix_rate_interval_milliseconds": 1000}


def compare_sine(work: Path, *, db_bench: str, driver: str, num: int, seconds: int,
                 seed: int = 1) -> dict[str, Any]:
    """db_bench's sine load against the driver's sine arrivals: requests per second."""
    checks, skip = dbb.compare_sine(db_bench, driver, work, _workload("prefix-dist")["mixgraph"],
                                    SINE, num=num, seconds=seconds, seed=seed,
                                    key_size=KEY_SIZE, prefix=PREFIX)
    return {"case": "sine", "arrival": SINE, "seconds": seconds, "skip_s": skip,
            "checks": [c.to_json() for c in checks],
            "commands": {"db_bench": "db_bench --benchmarks=mixgraph ... "
                                     + " ".join(dbb.sine_flags(SINE))
                                     + f" --duration={seconds}",
                         "driver": "lsm-driver --generate-ops run.json (phase running, "
                                   "arrival process sine)"}}


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.4f}"


def render(results: list[dict[str, Any]], argv: list[str]) -> str:
    lines = ["# mixgraph: db_bench and the driver side by side", "",
             "db_bench's `mixgraph` (RocksDB 7.8.3, Debian's `rocksdb-tools`) and the driver's "
             "(engines/driver/README.md, \"mixgraph\") on the same parameters: Cao et al.'s four "
             "workloads (`workloads/mixgraph-*.yaml`). db_bench's operations come from its own "
             "query trace (`--trace_file`, read by `lsm-driver --trace-ops`); the driver's from "
             "its generator (`lsm-driver --generate-ops`). Each statistic is a sample of the same "
             "law in both, so a tolerance is the sampling noise of the difference: 5 standard "
             "deviations for shares, the Kolmogorov-Smirnov test at p < 1e-6 for value sizes "
             "(`pipelines/lsmbench/workload_shape/dbbench.py` says why for each).", "",
             "Made by:", "", "```sh", "LSMBENCH_BUILD_DIR=build .venv/bin/python "
             "research/bench/mixgraph_vs_db_bench.py " + " ".join(argv), "```", ""]
    for r in results:
        checks = r["checks"]
        failed = [c for c in checks if not c["ok"] and not c.get("known")]
        known = [c for c in checks if not c["ok"] and c.get("known")]
        lines += [f"## {r['case']}", ""]
        if r["case"] == "sine":
            lines += [f"Arrival `{json.dumps(r['arrival'])}` for {r['seconds']} s; seconds "
                      f"before {r['skip_s']:g} s are left out (db_bench runs its first interval "
                      "unthrottled and sets its first rate at the end of it). Each second's "
                      "requests within 5 % of the driver's plus 5 sqrt(rate).", ""]
        else:
            lines += [f"`--num={r['num']}`, {r['reads']:,} operations, seed {r['seed']}. "
                      f"db_bench printed a mean value size of "
                      f"{r['db_bench_report']['mean_value_size']:.1f} and a mean scan length "
                      f"of {r['db_bench_report']['mean_scan_length']:.1f}.", ""]
        lines += [f"**{len(checks) - len(failed) - len(known)} of {len(checks)} within "
                  f"tolerance**" + (f"; {len(known)} differ as db_bench's code makes them differ"
                                    if known else "")
                  + (f"; **{len(failed)} outside**" if failed else "") + ".", ""]
        lines += ["| statistic | db_bench | driver | tolerance | within |", "|---|---|---|---|---|"]
        for c in checks:
            if r["case"] != "sine" and c["statistic"].startswith("range ") and c["ok"] \
                    and c["db_bench"] < 0.001 and c["driver"] < 0.001:
                continue  # the cold ranges: shown only when they disagree
            ok = "yes" if c["ok"] else ("differs: " + c["known"] if c.get("known") else "**no**")
            tol = ("p >= 1e-6" if "Kolmogorov" in c["statistic"]
                   else "-" if c["tolerance"] != c["tolerance"] else f"± {_fmt(c['tolerance'])}")
            lines.append(f"| {c['statistic']} | {_fmt(c['db_bench'])} | {_fmt(c['driver'])} | "
                         f"{tol} | {ok} |")
        lines += ["", "Commands: `" + r["commands"]["db_bench"] + "`; then `"
                  + r["commands"]["driver"] + "`.", ""]
    lines += ["Key ranges whose share is below 0.1 % in both are left out of the tables when "
              "they agree. The KS row shows the statistic under db_bench and the p-value under "
              "the driver.", "",
              "The mean scan length is within its tolerance everywhere, but the driver's is the "
              "larger in every case. db_bench's figure counts the nexts it made, and a scan stops "
              "at the last key: in prefix_dist the hottest range is the last one. db_bench also "
              "draws a seek's length from the number that made it a seek, so seeks never see "
              "the draws below 990 / num. The check is weak (scan lengths are heavy-tailed: a "
              "twentieth of them wrap around mix_max_scan_len) and db_bench's trace has no "
              "lengths to compare quantiles with.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--reads", type=int, default=1_000_000)
    ap.add_argument("--sine-seconds", type=int, default=40)
    ap.add_argument("--cases", default=",".join((*CASES, "sine")))
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "results" / "mixgraph.md")
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args(argv)
    db_bench = shutil.which("db_bench")
    driver = find_driver()
    if db_bench is None or driver is None:
        print("needs db_bench (apt-get install rocksdb-tools) and a built lsm-driver",
              file=sys.stderr)
        return 2
    cases = args.cases.split(",")
    unknown = [c for c in cases if c not in (*CASES, "sine")]
    if unknown:
        print(f"--cases: unknown {', '.join(unknown)} (allowed: {', '.join(CASES)}, sine)",
              file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="mixgraph-"))
    results = []
    for case in cases:
        print(f"{case} ...", file=sys.stderr)
        if case == "sine":
            results.append(compare_sine(work / case, db_bench=db_bench, driver=str(driver),
                                        num=args.num, seconds=args.sine_seconds))
        else:
            results.append(compare_case(case, work / case, db_bench=db_bench,
                                        driver=str(driver), num=args.num, reads=args.reads))
    given = list(argv if argv is not None else sys.argv[1:])
    shown = [a for i, a in enumerate(given)
             if not a.startswith("--work") and (i == 0 or given[i - 1] != "--work")]
    args.out.write_text(render(results, shown))
    (work / "results.json").write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out} ({work}/results.json)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as e:
        print(f"{e.cmd[0]} failed ({e.returncode}): {(e.stderr or '')[-500:]}", file=sys.stderr)
        sys.exit(1)
