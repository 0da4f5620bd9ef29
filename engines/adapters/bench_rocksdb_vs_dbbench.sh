#!/usr/bin/env bash
# Overhead of the rocksdb plugin + lsm-driver, measured against RocksDB's own
# db_bench (Debian rocksdb-tools): the same single-threaded random fill, with
# the same RocksDB options, run by both, RUNS times each, interleaved so that
# drift in the machine's load affects both alike. Prints every run, the
# medians and the ratio driver / db_bench (1.0 = no overhead).
#
#   db_bench   --benchmarks=fillrandom: NUM puts of random keys drawn from
#              [0, NUM) with replacement, 16-byte keys, 100-byte values
#   lsm-driver testing phase (closed loop, 1 writer), max_ops=NUM updates of
#              uniformly random ids in [0, NUM): the same draw, 16-byte keys,
#              100-byte values; figure = summary.json max_write_throughput
#
# Both run with the WAL disabled and no compression, so that the work is the
# memtable insert plus background flushes and compactions.
#
# PLUGIN=FILE runs the same fill through another RocksDB plugin too, under its
# own name (BUILD/plugin/bench/lsmbench-rocksdbtwin.so is this tree's, named
# rocksdbtwin), in the same rotation, and prints the ratio PLUGIN / rocksdb.
#
# usage: [PLUGIN=FILE] engines/adapters/bench_rocksdb_vs_dbbench.sh [BUILD_DIR] [RUNS] [NUM]
#   BUILD_DIR  build directory holding bin/lsm-driver (default: build)
#   RUNS       runs of each (default 5)
#   NUM        operations per run (default 1000000)
# environment: BENCH_DIR (where the databases, logs and driver outputs go,
# kept but for the databases; default a temporary dir in ${TMPDIR:-/tmp},
# removed at the end), DB_BENCH (default: db_bench on PATH),
# WRITE_BUFFER_SIZE (bytes, default 67108864).
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-5}
NUM=${3:-1000000}
DRIVER=$BUILD/bin/lsm-driver
DB_BENCH=${DB_BENCH:-$(command -v db_bench || true)}
WRITE_BUFFER_SIZE=${WRITE_BUFFER_SIZE:-67108864}

[ -x "$DRIVER" ] || { echo "no $DRIVER (build the lsm-driver target first)" >&2; exit 2; }
[ -n "$DB_BENCH" ] && [ -x "$DB_BENCH" ] || { echo "no db_bench (Debian package rocksdb-tools)" >&2; exit 2; }

if [ -n "${BENCH_DIR:-}" ]; then
  WORK=$BENCH_DIR
  mkdir -p "$WORK"
  trap 'rm -rf "$WORK/db-bench" "$WORK/driver-db"' EXIT  # keep the logs and outputs
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/lsm-rocksdb-bench.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi

# The shared RocksDB settings, as (db_bench flag, options-string name, value).
# Given explicitly where db_bench's default differs from rocksdb::Options'
# (enable_pipelined_write, delayed_write_rate, perf_level: db_bench and the
# plugin both default to 1 = kDisable, RocksDB itself to kEnableCount) or
# matters to the comparison.
SETTINGS=(
  "write_buffer_size write_buffer_size $WRITE_BUFFER_SIZE"
  "max_write_buffer_number max_write_buffer_number 2"
  "max_background_jobs max_background_jobs 2"
  "compression_type compression none"
  "enable_pipelined_write enable_pipelined_write false"
  "delayed_write_rate delayed_write_rate 8388608"
  "target_file_size_base target_file_size_base 67108864"
  "max_bytes_for_level_base max_bytes_for_level_base 268435456"
  "level0_file_num_compaction_trigger level0_file_num_compaction_trigger 4"
  "level0_slowdown_writes_trigger level0_slowdown_writes_trigger 20"
  "level0_stop_writes_trigger level0_stop_writes_trigger 36"
  "perf_level perf_level 1"
)

bench_flags=()
engine_options='"disable_wal": "true"'
for s in "${SETTINGS[@]}"; do
  read -r flag name value <<<"$s"
  bench_flags+=("--$flag=$value")
  [ "$name" = compression ] && value=kNoCompression  # the options-string spelling
  [ "$name" = perf_level ] && value=kDisable  # the rocksdb::PerfLevel spelling of 1
  engine_options+=", \"$name\": \"$value\""
done

if [ -n "${PLUGIN:-}" ]; then
  PLUGIN=$(realpath "$PLUGIN")
  NAME=$("$DRIVER" --describe-options "$PLUGIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["engine"])')
  cat > "$WORK/plugin.json" <<JSON
{"engine": "$NAME", "engine_plugin": "$PLUGIN", "dir": "$WORK/plugin-db", "phase": "testing",
 "duration_s": 86400, "max_ops": $NUM, "threads": 1, "progress_s": 0, "seed": 1,
 "engine_options": {$engine_options},
 "workload": {"record_count": $NUM, "key_size": 16, "value_size": 100,
              "operations": {"update": 1}, "distribution": "uniform"}}
JSON
fi

cat > "$WORK/run.json" <<JSON
{"engine": "rocksdb", "dir": "$WORK/driver-db", "phase": "testing",
 "duration_s": 86400, "max_ops": $NUM, "threads": 1, "progress_s": 0, "seed": 1,
 "engine_options": {$engine_options},
 "workload": {"record_count": $NUM, "key_size": 16, "value_size": 100,
              "operations": {"update": 1}, "distribution": "uniform"}}
JSON

echo "rocksdb plugin + lsm-driver vs db_bench fillrandom: NUM=$NUM, $RUNS runs each,"
echo "  $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), data in $WORK"
echo "  db_bench flags: ${bench_flags[*]} --disable_wal=1"
: > "$WORK/dbbench.txt"
: > "$WORK/driver.txt"
: > "$WORK/plugin.txt"
for i in $(seq 1 "$RUNS"); do
  rm -rf "$WORK/db-bench" "$WORK/driver-db"
  "$DB_BENCH" --benchmarks=fillrandom --num="$NUM" --key_size=16 --value_size=100 \
    --disable_wal=1 --threads=1 --seed="$i" --use_existing_db=0 --statistics=0 \
    --db="$WORK/db-bench" "${bench_flags[@]}" > "$WORK/dbbench-$i.log" 2>&1
  ops=$(sed -n 's/^fillrandom *:.* \([0-9][0-9]*\) ops\/sec.*/\1/p' "$WORK/dbbench-$i.log")
  [ -n "$ops" ] || { echo "db_bench output not understood:" >&2; cat "$WORK/dbbench-$i.log" >&2; exit 1; }
  echo "$ops" >> "$WORK/dbbench.txt"

  "$DRIVER" --config "$WORK/run.json" --out "$WORK/driver-out-$i" --quiet
  python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["max_write_throughput"]))' \
    "$WORK/driver-out-$i/summary.json" >> "$WORK/driver.txt"
  echo "  run $i: db_bench $(tail -1 "$WORK/dbbench.txt") ops/s, lsm-driver $(tail -1 "$WORK/driver.txt") ops/s"
  if [ -n "${PLUGIN:-}" ]; then
    rm -rf "$WORK/plugin-db"
    "$DRIVER" --config "$WORK/plugin.json" --out "$WORK/plugin-out-$i" --quiet
    python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["max_write_throughput"]))' \
      "$WORK/plugin-out-$i/summary.json" >> "$WORK/plugin.txt"
    echo "         plugin $(tail -1 "$WORK/plugin.txt") ops/s"
  fi
done

python3 - "$WORK" <<'PY'
import statistics, sys
work = sys.argv[1]
bench = [float(x) for x in open(f"{work}/dbbench.txt").read().split()]
driver = [float(x) for x in open(f"{work}/driver.txt").read().split()]
mb, md = statistics.median(bench), statistics.median(driver)
print(f"db_bench fillrandom (ops/s):       " + " ".join(f"{x:,.0f}" for x in bench))
print(f"rocksdb + driver (ops/s):          " + " ".join(f"{x:,.0f}" for x in driver))
print(f"median db_bench {mb:,.0f}  median driver {md:,.0f}  ratio driver/db_bench {md / mb:.3f}")
plugin = [float(x) for x in open(f"{work}/plugin.txt").read().split()]
if plugin:
    mp = statistics.median(plugin)
    ratios = sorted(p / d for p, d in zip(plugin, driver))
    print(f"PLUGIN + driver (ops/s):           " + " ".join(f"{x:,.0f}" for x in plugin))
    print(f"median PLUGIN {mp:,.0f}  ratio PLUGIN/rocksdb {mp / md:.3f} (run by run: "
          + ", ".join(f"{r:.3f}" for r in ratios) + ")")
PY
