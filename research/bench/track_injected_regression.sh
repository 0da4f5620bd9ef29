#!/usr/bin/env bash
# The injected regression of research/nightly-tracking.md, end to end: a scratch clone of this
# project gets NIGHTS commits, the REGRESS_AT-th of which makes every flush write half of its
# table once more (injected-regression/slow-flush.patch); the others change a text file only.
# Each commit is one night of `lsmbench track nightly` (check out, build the engine, run
# pipelines/campaigns/nightly.yaml, record, report), into WORK/results. After each night the
# report's regressions.json is kept as WORK/nights/N.json, so "nothing before night 7" can be
# checked on every night, not only the last.
#
#   research/bench/track_injected_regression.sh [WORK]     # default /tmp/lsmbench-injected
#   NIGHTS=12 REGRESS_AT=7 ...                               # the defaults
#
# About 2m15s a night on 2 cores plus one engine build (~4 min); run it on a quiet machine:
# a benchmark, not a test. Needs root (the campaign throttles writes with cgroup blkio).
set -euo pipefail

. "$(dirname "$0")/scratch_clone.sh"
work=$(realpath -m "${1:-/tmp/lsmbench-injected}")
nights=${NIGHTS:-12}
regress_at=${REGRESS_AT:-7}
scratch_clone "$work" injected
for n in $(seq 1 "$nights"); do
  if [ "$n" = "$regress_at" ]; then
    git apply "$here/injected-regression/slow-flush.patch"
    msg="db: FlushMemTable writes half of each flushed table again (the injected regression)"
  else
    msg="docs: night $n (no engine change)"
  fi
  echo "night $n" >> docs/injected-nights.txt
  git add -A
  git commit -qm "$msg"
done
git log --reverse --format=%H "-$nights" > "$work/commits.txt"

n=0
while read -r sha; do
  n=$((n + 1))
  set +e
  "$lsmbench" track nightly "$project/pipelines/campaigns/nightly.yaml" \
    --repo "$work/repo" --ref "$sha" --no-fetch --results "$work/results" --quiet
  code=$?
  set -e
  echo "night $n ${sha:0:12} exit $code" | tee -a "$work/nights.log"
  if [ -f "$work/results/regressions.json" ]; then
    cp "$work/results/regressions.json" "$work/nights/$n.json"
  fi
done < "$work/commits.txt"
echo "history report: $work/results/history.html"
