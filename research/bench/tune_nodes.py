"""`lsmbench tune` on one node against three (issue 34): the wall time of the same study,
side by side, over real sshd nodes in network namespaces (pipelines/tests/fixtures_netns.py).

    .venv/bin/python research/bench/tune_nodes.py [--trials 9] [--rounds 2]
        [--out results/bench/tune_nodes.json]

The trials run the null engine with fixed-length phases (testing 4 s, running 2 s): a trial
takes its phases' time whatever this machine's 2 shared cores do, so the ratio is the
orchestration's (one trial per node at a time, the confirmation runs spread too). The studies
alternate (one node, three nodes, one, three, ...), each from scratch (--force); the figure is
the median wall time of each with its range, and their ratio. Needs root (namespaces, sshd).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "pipelines" / "tests"))

from fixtures_netns import bench_nodes, null_tune_spec  # noqa: E402


def lsmbench(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lsmbench", *args], capture_output=True,
                          text=True, check=False, env=env)


def study_spec(base: Path, testbed: str, trials: int) -> Path:
    path = base / f"{testbed}.yaml"
    path.write_text(yaml.safe_dump(null_tune_spec(f"tune-on-{testbed}", testbed, trials, seed=11,
                                                  testing="4s", running="2s")))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "results" / "bench" / "tune_nodes.json"))
    args = ap.parse_args()
    walls: dict[str, list[float]] = {"one": [], "three": []}
    with bench_nodes("lsmbench-tune-nodes-") as (nodes, definition_path, env):
        base = nodes.base
        definition = yaml.safe_load(definition_path.read_text())
        for name, hosts in (("one", definition["hosts"][:1]),
                            ("three", definition["hosts"])):
            f = base / f"testbed-{name}.yml"
            f.write_text(yaml.safe_dump({**definition, "hosts": hosts}))
            r = lsmbench(env, "testbed", "up", name, "--file", str(f))
            if r.returncode != 0:
                print(r.stderr[-3000:], file=sys.stderr)
                return 3
        for rnd in range(args.rounds):
            for name in ("one", "three"):
                spec = study_spec(base, name, args.trials)
                t0 = time.monotonic()
                r = lsmbench(env, "tune", str(spec), "--results", str(base / "results"),
                             "--force", "--no-publish", "--json")
                wall = time.monotonic() - t0
                if r.returncode != 0:
                    print(r.stderr[-3000:], file=sys.stderr)
                    return 1
                answer = json.loads(r.stdout.strip().splitlines()[-1])
                walls[name].append(wall)
                print(f"round {rnd + 1}: {name} node(s): {wall:.1f} s, "
                      f"{answer['trials']} trials, best {answer['best']['params']}",
                      flush=True)
    one, three = statistics.median(walls["one"]), statistics.median(walls["three"])
    doc = {"trials": args.trials, "rounds": args.rounds, "wall_s": walls,
           "median_one_s": one, "median_three_s": three, "ratio": three / one}
    print(f"one node: median {one:.1f} s [{min(walls['one']):.1f}-{max(walls['one']):.1f}]; "
          f"three nodes: median {three:.1f} s "
          f"[{min(walls['three']):.1f}-{max(walls['three']):.1f}]; ratio {three / one:.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
