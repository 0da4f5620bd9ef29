"""Re-records the real lsm-driver outputs that test_verdict.py checks its arithmetic on.

    .venv/bin/python pipelines/tests/data/record.py [--driver build/bin/lsm-driver]

Runs a two-point campaign (tiering at 50 % of the measured maximum; leveling overloaded at
130 %, so that its queue must grow; throttled when cgroups allow) and copies each point's
testing/ and running/ outputs (timeseries.jsonl, summary.json, histograms.json, run.json) into
data/recorded-<policy>/,
with expect.json holding the figures lsmbench computed at recording time. Re-record when the
driver's output schema changes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
FILES = ("timeseries.jsonl", "summary.json", "histograms.json", "run.json")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lsmbench-record-", dir="/var/tmp") as tmp:
        tmpd = Path(tmp)
        spec = {
            "name": "record",
            "engine": {"options": {"memtable_bytes": "1M"}},
            "matrix": {"policy": ["tiering", "leveling"],
                       "phases.running.utilization": [0.5, 1.3],
                       "zip": [["policy", "phases.running.utilization"]]},
            "workload": {"file": "update-uniform-1kb", "set": {"record_count": 30000}},
            "phases": {"testing": {"duration": "12s"}, "running": {"duration": "8s"}},
            "throttle": {"write_bps": "16MiB/s", "phases": ["testing", "running"],
                         "required": False},
            "testbed": {"type": "local", "data_dir": str(tmpd / "data")},
        }
        spec_path = tmpd / "record.yaml"
        spec_path.write_text(yaml.safe_dump(spec))
        cmd = [sys.executable, "-m", "lsmbench", "run", str(spec_path), "--quiet",
               "--results", str(tmpd / "results")]
        if args.driver:
            cmd += ["--set", f"testbed.driver={args.driver}"]
        r = subprocess.run(cmd, check=False)
        if r.returncode != 0:
            return r.returncode
        for point in sorted((tmpd / "results" / "record").iterdir()):
            if not (point / "point.json").is_file():
                continue
            p = json.loads((point / "point.json").read_text())
            out = HERE / f"recorded-{p['params']['policy']}"
            shutil.rmtree(out, ignore_errors=True)
            for ph in ("testing", "running"):
                (out / ph).mkdir(parents=True)
                for f in FILES:
                    shutil.copy(point / ph / f, out / ph / f)
            v = p["verdict"]
            expect = {
                "max_write_throughput": p["max_throughput"]["writes_per_s"],
                "utilization": v["utilization"],
                "p99_limit_s": v["p99_limit_s"],
                "max_backlog_s": v["max_backlog_s"],
                "sustainable": v["sustainable"],
                "final_queue_length": v["final_queue_length"],
                "p99_write_latency_s": v["p99_write_latency_s"],
                "reasons": v["reasons"],
            }
            (out / "expect.json").write_text(json.dumps(expect, indent=2) + "\n")
            print(f"{out.name}: {'sustainable' if v['sustainable'] else 'NOT sustainable'}: "
                  f"{'; '.join(v['reasons'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
