"""`lsmbench reproduce --quick` on this machine against `--testbed` of three nodes (issue 34):
the wall time of each, side by side, over real sshd nodes in network namespaces
(pipelines/tests/fixtures_netns.py), and whether the pages have the same claims.

    .venv/bin/python research/bench/reproduce_nodes.py [--order testbed,local]
        [--out results/bench/reproduce_nodes.json] [--keep DIR]

The nodes are namespaces of this machine: they share its 2 cores and its disk, so three
experiments at once each run slower than alone. The script reports, beside the two wall times,
each experiment's own time in both runs (reproduce.json's `seconds`): their ratio is what the
shared cores cost; the sum of the local times over the testbed's wall time is what the packing
gained. One run of each (about 30 + 20 minutes): a benchmark, not a test; run it on a quiet
machine. Needs root (namespaces, sshd, cgroup throttling on the nodes).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pipelines" / "tests"))

from fixtures_netns import bench_nodes  # noqa: E402

TESTBED = "rack3"


def lsmbench(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """The command's exit code and its output; stopped with SIGTERM and waited for when this
    script is (bench_nodes turns SIGTERM into SystemExit), so that `reproduce` stops its own
    children before the nodes go away."""
    argv = [sys.executable, "-m", "lsmbench", *args]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env) as proc:
        try:
            out, err = proc.communicate()
        except BaseException:
            proc.send_signal(signal.SIGTERM)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def claims_table(page: Path) -> list[tuple[str, str]]:
    """(claim number, claim text) of a page's claims table: its structure, not its statuses."""
    rows = []
    for line in page.read_text().splitlines():
        m = re.match(r"^\| ([A-Z]+\d+) \| ([^|]+) \|", line)
        if m:
            rows.append((m.group(1), m.group(2).strip()))
    return rows


def run(env: dict[str, str], base: Path, name: str, extra: list[str]) -> dict[str, object]:
    results, pages = base / f"results-{name}", base / f"pages-{name}"
    t0 = time.monotonic()
    r = lsmbench(env, "reproduce", "--quick", "--results", str(results), "--out", str(pages),
                 *extra)
    wall = time.monotonic() - t0
    print(f"{name}: exit {r.returncode}, {wall:.0f} s", flush=True)
    if r.returncode not in (0, 1):
        print(r.stderr[-3000:], file=sys.stderr)
    from lsmbench.reproduce.pages import read_run

    suite_run = read_run(results / "reproduce")
    assert suite_run is not None, f"{results}: no reproduce.json"
    experiments = {n: {"seconds": e.seconds, "exit_code": e.exit_code, "node": e.node,
                       "error": e.error}
                   for n, e in suite_run.experiments.items()}
    return {"exit_code": r.returncode, "wall_s": wall, "experiments": experiments,
            "estimate": r.stdout.splitlines()[0] if r.stdout else None,
            "claims": {p.name: claims_table(p) for p in sorted(pages.glob("*.md"))}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--order", default="testbed,local")
    ap.add_argument("--out", default=str(ROOT / "results" / "bench" / "reproduce_nodes.json"))
    ap.add_argument("--keep", help="keep the stores and pages in this directory")
    args = ap.parse_args()
    order = args.order.split(",")
    if sorted(order) != ["local", "testbed"]:
        print("--order: testbed,local or local,testbed", file=sys.stderr)
        return 2
    out: dict[str, object] = {}
    with bench_nodes("lsmbench-reproduce-nodes-") as (nodes, definition, env):
        base = nodes.base
        r = lsmbench(env, "testbed", "up", TESTBED, "--file", str(definition))
        if r.returncode != 0:
            print(r.stderr[-3000:], file=sys.stderr)
            return 3
        for name in order:
            extra = ["--testbed", TESTBED] if name == "testbed" else []
            out[name] = run(env, base, name, extra)
            failed = {n: e for n, e in out[name]["experiments"].items() if e["exit_code"]}
            for n, e in failed.items():
                print(f"  {n} failed: {e['error']}", file=sys.stderr)
            if failed:  # a comparison of failures measures nothing
                return 1
        if args.keep:
            keep = Path(args.keep)
            keep.mkdir(parents=True, exist_ok=True)
            for p in [*base.glob("results-*"), *base.glob("pages-*")]:
                shutil.copytree(p, keep / p.name, dirs_exist_ok=True)
    tb, lo = out["testbed"], out["local"]
    assert isinstance(tb, dict) and isinstance(lo, dict)
    common = sorted(set(tb["experiments"]) & set(lo["experiments"]))
    per = {n: {"local_s": lo["experiments"][n]["seconds"],
               "testbed_s": tb["experiments"][n]["seconds"],
               "node": tb["experiments"][n]["node"]} for n in common}
    local_sum = sum(v["local_s"] for v in per.values())
    testbed_sum = sum(v["testbed_s"] for v in per.values())
    summary = {
        "wall_ratio": tb["wall_s"] / lo["wall_s"],
        "same_claims": tb["claims"] == lo["claims"],
        "experiment_slowdown": testbed_sum / local_sum if local_sum else None,
        "packing_gain": local_sum / tb["wall_s"] if tb["wall_s"] else None,
        "per_experiment": per,
    }
    doc = {"runs": out, "summary": summary}
    print(f"local {lo['wall_s']:.0f} s, testbed of 3 nodes {tb['wall_s']:.0f} s: ratio "
          f"{summary['wall_ratio']:.2f}; the experiments took "
          f"{summary['experiment_slowdown']:.2f}x "
          f"their local time on the shared cores; same claims tables: {summary['same_claims']}")
    for n, v in sorted(per.items(), key=lambda kv: -kv[1]["local_s"]):
        print(f"  {n}: local {v['local_s']:.0f} s, testbed {v['testbed_s']:.0f} s "
              f"({v['node'] or 'controller'})")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
