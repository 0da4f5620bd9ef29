#!/usr/bin/env bash
# Records a RocksDB query trace of db_bench's mixgraph (Cao et al.'s prefix_dist
# parameters, workloads/mixgraph-prefix-dist.yaml) for the trace-replay campaign:
#
#   workloads/traces/record-mixgraph-trace.sh OUT.trace [KEYS] [OPERATIONS]
#
# db_bench loads KEYS keys (fillrandom, 100-byte values, untraced), then runs
# mixgraph for OPERATIONS operations with --trace_file=OUT.trace. Defaults:
# 1,000,000 keys and 1,000,000 operations (~50 MB of trace). db_bench comes
# with Debian's rocksdb-tools (make deps installs it).
set -euo pipefail
out=${1:?usage: record-mixgraph-trace.sh OUT.trace [KEYS] [OPERATIONS]}
keys=${2:-1000000}
ops=${3:-1000000}
command -v db_bench >/dev/null || { echo "db_bench not found: apt-get install rocksdb-tools" >&2; exit 2; }
[[ $keys =~ ^[0-9]+$ && $ops =~ ^[0-9]+$ ]] || { echo "KEYS and OPERATIONS are counts" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
db=$(mktemp -d "${TMPDIR:-/tmp}/mixgraph-db.XXXXXX")
common=(--db="$db" --num="$keys" --key_size=16 --compression_type=none --seed=1 --threads=1)
log=$db.log
trap 'rm -rf "$db" "$log"' EXIT
# db_bench's progress goes to stderr: kept, and shown only when it fails.
run() { "$@" 2>"$log" || { cat "$log" >&2; exit 1; }; }
run db_bench --benchmarks=fillrandom --value_size=100 "${common[@]}" >/dev/null
# Written beside OUT first: a trace cut short must not look complete.
run db_bench --benchmarks=mixgraph --use_existing_db=1 --reads="$ops" "${common[@]}" \
  --trace_file="$out.partial" \
  --mix_get_ratio=0.85 --mix_put_ratio=0.14 --mix_seek_ratio=0.01 \
  --keyrange_num=30 --keyrange_dist_a=14.18 --keyrange_dist_b=-2.917 \
  --keyrange_dist_c=0.0164 --keyrange_dist_d=-0.08082 \
  --key_dist_a=0.002312 --key_dist_b=0.3467 \
  --value_k=0.2615 --value_sigma=25.45 --iter_k=2.517 --iter_sigma=14.236 >"$db/report"
grep mixgraph "$db/report" >&2
mv "$out.partial" "$out"
echo "$out"
