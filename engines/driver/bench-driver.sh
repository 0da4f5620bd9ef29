#!/usr/bin/env bash
# Harness overhead of lsm-driver, measured with the `null` engine (recorded in
# engines/BENCHMARKS.md, "Driver"):
#   closed   testing phase, 1 writer, 6 s with 1 s warm-up: max_write_throughput
#   ceiling  running phase, 1 writer, arrival rate far above what it can issue:
#            completed requests/s, every one with its latency recorded
#   sustain  running phase, 1 writer, constant RATE (default 1 M/s) for 6 s:
#            achieved rate, final backlog, p99
#   mixgraph the ceiling with db_bench's mixgraph generators (prefix_dist:
#            key ranges, power-law keys, Pareto value sizes and scan lengths)
#   md1      running phase, Poisson arrivals at 2,500/s, 200 us service (rho 0.5):
#            mean write latency against M/D/1's 300 us (the precise figure the
#            calibration test only bounds, since a loaded machine moves it)
# Each is run RUNS times (default 5); the median is printed last.
# PLUGIN=FILE runs them on that engine plugin instead:
# BUILD/plugin/bench/lsmbench-nulltwin.so is `null` as a plugin, operation for
# operation, so the two runs' ratio is the cost of the plugin boundary.
#
# usage: [PLUGIN=FILE] engines/driver/bench-driver.sh [BUILD_DIR] [RUNS] [RATE]
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-5}
RATE=${3:-1000000}
DRIVER=$BUILD/bin/lsm-driver
[ -x "$DRIVER" ] || { echo "no $DRIVER (build the lsm-driver target first)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/lsm-driver-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ENGINE='"engine": "null"'
if [ -n "${PLUGIN:-}" ]; then
  PLUGIN=$(realpath "$PLUGIN")
  NAME=$("$DRIVER" --describe-options "$PLUGIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["engine"])')
  ENGINE="\"engine\": \"$NAME\", \"engine_plugin\": \"$PLUGIN\", \"dir\": \"$WORK/db\""
fi

cat > "$WORK/closed.json" <<JSON
{$ENGINE, "phase": "testing", "duration_s": 6, "warmup_s": 1, "threads": 1,
 "progress_s": 0, "workload": {"record_count": 1000000}}
JSON
cat > "$WORK/ceiling.json" <<JSON
{$ENGINE, "phase": "running", "duration_s": 6, "warmup_s": 1, "threads": 1,
 "progress_s": 0, "workload": {"record_count": 1000000},
 "arrival": {"process": "constant", "rate": 100000000}}
JSON
cat > "$WORK/sustain.json" <<JSON
{$ENGINE, "phase": "running", "duration_s": 6, "warmup_s": 1, "threads": 1,
 "drain_s": 0.1, "progress_s": 0, "workload": {"record_count": 1000000},
 "arrival": {"process": "constant", "rate": $RATE}}
JSON

cat > "$WORK/mixgraph.json" <<JSON
{$ENGINE, "phase": "running", "duration_s": 6, "warmup_s": 1, "threads": 1,
 "progress_s": 0, "workload": {"record_count": 1000000, "mixgraph": {
   "mix_get_ratio": 0.85, "mix_put_ratio": 0.14, "mix_seek_ratio": 0.01, "keyrange_num": 30,
   "keyrange_dist_a": 14.18, "keyrange_dist_b": -2.917, "keyrange_dist_c": 0.0164,
   "keyrange_dist_d": -0.08082, "key_dist_a": 0.002312, "key_dist_b": 0.3467}},
 "arrival": {"process": "constant", "rate": 100000000}}
JSON

cat > "$WORK/md1.json" <<JSON
{$ENGINE, "phase": "running", "duration_s": 8, "warmup_s": 1, "spin_us": 300,
 "progress_s": 0, "workload": {"record_count": 1000},
 "engine_options": {"service_time_us": "200"},
 "arrival": {"process": "poisson", "rate": 2500}}
JSON

echo "lsm-driver harness benchmark: $RUNS runs each, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in closed ceiling mixgraph sustain md1; do
  for i in $(seq 1 "$RUNS"); do
    "$DRIVER" --config "$WORK/$kind.json" --out "$WORK/out-$kind-$i" --quiet
  done
done

python3 - "$WORK" "$RUNS" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def load(kind, i):
    return json.load(open(f"{work}/out-{kind}-{i}/summary.json"))
closed = [load("closed", i)["max_write_throughput"] for i in range(1, runs + 1)]
print("closed loop, 1 thread (ops/s):      ", " ".join(f"{x:,.0f}" for x in closed))
print("  median                             ", f"{statistics.median(closed):,.0f}")
ceiling = []
for i in range(1, runs + 1):
    s = load("ceiling", i)
    # every completed request has its latency recorded, and every one still queued at the end
    # its wait so far (censored; a driver from before 2026-11-27 has no such count)
    censored = s["write_latency_us"].get("censored") or 0
    assert s["write_latency_us"]["count"] == s["ops"]["total"] + censored, s["ops"]
    ceiling.append(s["throughput"]["mean"])
print("open-loop ceiling, 1 thread (req/s): ", " ".join(f"{x:,.0f}" for x in ceiling))
print("  median                             ", f"{statistics.median(ceiling):,.0f}")
mixgraph = [load("mixgraph", i)["throughput"]["mean"] for i in range(1, runs + 1)]
print("mixgraph ceiling, 1 thread (req/s):  ", " ".join(f"{x:,.0f}" for x in mixgraph))
print("  median                             ", f"{statistics.median(mixgraph):,.0f}")
rows = []
for i in range(1, runs + 1):
    s = load("sustain", i)
    o = s["open_loop"]
    rows.append((o["achieved_rate"], o["intended_rate"], o["final_backlog"],
                 s["write_latency_us"]["p99"], s["write_latency_us"]["count"]))
print("open loop at target (achieved/intended req/s, backlog, p99 us, latencies recorded):")
for r in rows:
    print(f"   {r[0]:,.0f} / {r[1]:,.0f}  backlog {r[2]}  p99 {r[3]:,.1f}  n {r[4]:,}")
print("  median achieved                    ", f"{statistics.median(r[0] for r in rows):,.0f}")
print("  median p99 (us)                    ", f"{statistics.median(r[3] for r in rows):,.1f}")
md1 = [load("md1", i)["write_latency_us"]["mean"] for i in range(1, runs + 1)]
print("M/D/1 at rho 0.5, mean latency (us, predicted 300):", " ".join(f"{x:,.1f}" for x in md1))
print("  median                             ", f"{statistics.median(md1):,.1f}")
PY
