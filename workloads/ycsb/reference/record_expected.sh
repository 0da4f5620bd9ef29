#!/usr/bin/env bash
# Regenerates expected/workload{a..f}.json: record.sh's streams of YCSB's own CoreWorkload
# (recordcount 1000, operationcount 20000 unless given), summarized by
# lsmbench.workload_shape.op_stream. The streams themselves (about 1.3 MB each) are not kept.
#
#   record_expected.sh [recordcount] [operationcount]
#
# PYTHON: a Python with the lsmbench package's dependencies (default: the repo's .venv).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
python="${PYTHON:-$repo/.venv/bin/python}"
recordcount="${1:-1000}"
operationcount="${2:-20000}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/expected"
for w in a b c d e f; do
  "$here/record.sh" "$w" "$tmp/workload$w.csv" "$recordcount" "$operationcount"
  PYTHONPATH="$repo/pipelines" "$python" -m lsmbench.workload_shape.op_stream \
    --load "$tmp/workload$w.load.csv" "$tmp/workload$w.csv" >"$here/expected/workload$w.json"
done
