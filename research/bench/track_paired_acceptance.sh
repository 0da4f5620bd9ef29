#!/usr/bin/env bash
# Issue 33's acceptance, end to end (research/nightly-tracking.md, "Paired nights on this
# machine"): paired nights of pipelines/campaigns/nightly.yaml run by `lsmbench track nightly`
# on a scratch clone of this project.
#
#   1. A/A: AA_NIGHTS commits that change a text file only; each night is paired against the
#      last accepted commit (the default reference), so the two builds are the same engine.
#      Expected: no alarm. Afterwards the CoV of the paired ratio beside the CoV of the raw
#      metric over the same nights (track report's history.csv and the history database).
#   2. A ~5 % regression: REGRESS_NIGHTS more commits, the first of which makes every flush
#      write a fifth of its table once more (injected-regression/slow-flush-5.patch); the
#      nights after it are paired against the last accepted commit. Expected: a regression
#      alarm (not an improvement) on the first or second night after it; each night's
#      regressions.json is kept as WORK/nights/N.json.
#   3. `track bisect` on that alarm over a range of BISECT_RANGE commits (the regression among
#      them, at a place no night measured): the commit it names, in how many paired steps.
#
#   research/bench/track_paired_acceptance.sh [WORK]      # default /var/tmp/lsmbench-paired
#   AA_NIGHTS=20 REGRESS_NIGHTS=3 BISECT_RANGE=9 REPETITIONS=3 ...   # the defaults
#
# REPETITIONS: nightly.yaml's repetitions for these nights (the spec is copied with it):
# 3 pairs a night, as nightly.yaml has since 2026-11-28.
# About 7 minutes a paired night on 2 cores (6 points of ~65 s), plus a build (~4 min) for
# each engines/ tree the nights meet: AA_NIGHTS=20 is some 2 h 40 min. Run it on a quiet
# machine: a benchmark, not a test. Needs root (cgroup blkio throttling).
#
# The two parts in separate sittings (each from nothing; measured 2026-11-28: a night is 7.4
# minutes, so the A/A part is ~2 h 35 min, the other ~1 h of nights and a bisection;
# research/nightly-tracking.md):
#   AA_NIGHTS=20 REGRESS_NIGHTS=0 research/bench/track_paired_acceptance.sh   # the A/A part
#   AA_NIGHTS=4 research/bench/track_paired_acceptance.sh    # 4 A/A nights, the regression
# Commits that leave engines/ as it was share one build (lsmbench.track.builds.build_key), so
# an A/A night builds nothing: a night is its ~7 minutes of points. For the same reason the
# bisection here measures nothing: the range's commits around the regression change docs
# only, and `track bisect` judges each by its build (the good commit's engines/ tree or the
# bad one's). track_bisect_engine_range.sh WORK CHANGE_ID replays the regression on a branch
# whose every commit changes engines/: a bisection that must measure each step.
#
# A testbed whose nights differ: NEIGHBOUR_NIGHTS="2 5 6 ..." keeps one core busy through each
# of those nights (`sha256sum /dev/zero`, at the benchmark's priority): both builds of the
# night see it, as they would a neighbour VM or a busy disk, which this VM alone never shows
# (its 20 A/A nights shared none of the testing maximum's noise: research/nightly-tracking.md).
# The raw series should move on those nights, the paired ratio not.
#
# In parts, when no single sitting has 3 quiet hours: DEADLINE=EPOCH_SECONDS starts a night
# only when it can end before then (NIGHT_S, default 480, is a night's length), and stops
# with exit 0 and a line saying where; RESUME=1 with the same WORK goes on from the nights
# WORK/nights.log records (a night cut short runs again on a commit of its own).
#   DEADLINE=$(date -d '+100 min' +%s) research/bench/track_paired_acceptance.sh
#   RESUME=1 research/bench/track_paired_acceptance.sh      # later, the rest
set -euo pipefail

. "$(dirname "$0")/scratch_clone.sh"
work=$(realpath -m "${1:-/var/tmp/lsmbench-paired}")
aa_nights=${AA_NIGHTS:-20}
regress_nights=${REGRESS_NIGHTS:-3}
bisect_range=${BISECT_RANGE:-9}
reps=${REPETITIONS:-3}
deadline=${DEADLINE:-}
neighbour_nights=" ${NEIGHBOUR_NIGHTS:-} "
neighbour=""  # the busy neighbour's pid during a night that has one
trap '[ -z "$neighbour" ] || kill "$neighbour" 2>/dev/null || true' EXIT
night_s=${NIGHT_S:-480}
[ "$bisect_range" -ge 3 ] || { echo "BISECT_RANGE must be at least 3" >&2; exit 2; }
if [ "${RESUME:-0}" = 1 ]; then
  [ -d "$work/repo" ] && [ -f "$work/nightly.yaml" ] || {
    echo "RESUME=1: $work holds no earlier run (no repo/ or nightly.yaml)" >&2; exit 2; }
  cd "$work/repo"
else
  scratch_clone "$work" paired
  sed "s/^  repetitions: .*/  repetitions: $reps/" "$project/pipelines/campaigns/nightly.yaml" \
    > "$work/nightly.yaml"
  grep -q "^  repetitions: $reps\$" "$work/nightly.yaml"
fi
nights_done=$(grep -c '^night ' "$work/nights.log" 2>/dev/null || true)
nights_done=${nights_done:-0}

due() {  # due N: whether night N still has to run (exit 0), or stop here at the deadline
  [ "$1" -ge "$nights_done" ] || return 1
  if [ -n "$deadline" ] && [ $(( $(date +%s) + night_s )) -gt "$deadline" ]; then
    echo "stopped before night $1 (the deadline): RESUME=1 $0 $work goes on" \
      | tee -a "$work/nights.log"
    exit 0
  fi
}

commit() {  # commit MESSAGE: a night's commit (a text file changes with it)
  echo "$1" >> docs/paired-nights.txt
  git add -A
  git commit -qm "$1"
  git rev-parse HEAD
}

night() {  # night N SHA: one paired night, its regressions.json kept
  local n=$1 sha=$2 code said=""
  if [[ "$neighbour_nights" == *" $n "* ]]; then
    sha256sum /dev/zero & neighbour=$!
    said=" (a neighbour: one core busy)"
  fi
  set +e
  "$lsmbench" track nightly "$work/nightly.yaml" --repo "$work/repo" --ref "$sha" \
    --no-fetch --results "$work/results" --quiet
  code=$?
  set -e
  if [ -n "$neighbour" ]; then
    kill "$neighbour"; wait "$neighbour" 2>/dev/null || true; neighbour=""
  fi
  echo "night $n ${sha:0:12} exit $code$said" | tee -a "$work/nights.log"
  [ -f "$work/results/regressions.json" ] && cp "$work/results/regressions.json" "$work/nights/$n.json"
  return 0
}

# 1. A/A (night 0 runs unpaired: there is no accepted night before it).
n=0
for i in $(seq 0 "$aa_nights"); do
  if due "$n"; then night "$n" "$(commit "docs: A/A night $i (no engine change)")"; fi
  n=$((n + 1))
done

"$project/.venv/bin/python" "$here/track_paired_cov.py" "$work/results/history.sqlite" \
  --last "$aa_nights" | tee "$work/aa-cov.md"
if [ "$regress_nights" = 0 ]; then
  echo "REGRESS_NIGHTS=0: the A/A part alone, done" | tee -a "$work/nights.log"
  exit 0
fi

# 3's range: commits no night measures, the regression at a place inside it; 2's nights then
# measure the range's end and the commits after it.
half=$(( (bisect_range - 1) / 2 ))
if [ ! -f "$work/regressed.txt" ]; then
  for i in $(seq 1 "$half"); do commit "docs: before the regression, $i" >/dev/null; done
  git apply "$here/injected-regression/slow-flush-5.patch"
  regressed=$(commit "db: FlushMemTable writes a fifth of each flushed table again (the injected 5 % regression)")
  for i in $(seq 1 $((bisect_range - half - 2))); do commit "docs: after the regression, $i" >/dev/null; done
  echo "$regressed" > "$work/regressed.txt"
fi
regressed=$(cat "$work/regressed.txt")

# 2. The nights after it.
for i in $(seq 1 "$regress_nights"); do
  if due "$n"; then night "$n" "$(commit "docs: regression night $i")"; fi
  n=$((n + 1))
done

# 3. Bisect the open paired regression of max_write_throughput, if there is one.
change=$("$project/.venv/bin/python" - "$work/results/regressions.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
print(next((c["id"] for c in doc.get("open", [])
            if c["kind"] == "paired" and c["direction"] == "regression"), ""))
EOF
)
if grep -q '^bisect ' "$work/nights.log" 2>/dev/null; then
  echo "bisected before: $(grep '^bisect ' "$work/nights.log" | tail -1)"
elif [ -n "$change" ]; then
  # ~4 paired steps, each a night's length and a build or two
  if [ -n "$deadline" ] && [ $(( $(date +%s) + 5 * night_s )) -gt "$deadline" ]; then
    echo "stopped before the bisection (the deadline): RESUME=1 $0 $work goes on" \
      | tee -a "$work/nights.log"
    exit 0
  fi
  set +e
  "$lsmbench" track bisect "$change" --history "$work/results/history.sqlite" \
    --repo "$work/repo" --json > "$work/bisect.json"
  echo "bisect $change exit $? (the regression: ${regressed:0:12})" | tee -a "$work/nights.log"
  set -e
else
  echo "no open paired regression to bisect" | tee -a "$work/nights.log"
fi
echo "history report: $work/results/history.html"
