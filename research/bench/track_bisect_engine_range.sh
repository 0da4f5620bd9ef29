#!/usr/bin/env bash
# A bisection that has to measure every step (research/nightly-tracking.md, "The bisection to its
# end"): the paired acceptance's regression (track_paired_acceptance.sh, or its kit restored:
# research/nightly-tracking/tracking-paired/real-nights/kit/README.md) replayed on a branch whose every
# commit changes engines/ -- a comment appended to an engine source, so the code is the
# same but no two commits share an engines/ tree, and `track bisect` cannot judge a commit by
# its build alone (it does for the acceptance's own range, whose commits around the
# regression change docs only). The injected regression (injected-regression/slow-flush-5.patch)
# comes with commit REGRESSED_AT of RANGE; the bisection runs over the branch with --range,
# against the change's good commit, with track bisect's defaults (3 pairs, up to 24; the
# boundary halfway to the regression the nights measured).
#
#   research/bench/track_bisect_engine_range.sh WORK CHANGE_ID
#   RANGE=12 REGRESSED_AT=8 ...      # the defaults: 12 commits, the 8th makes it
#
# WORK holds repo/ and results/history.sqlite (the acceptance's work directory); the branch
# is WORK/repo's `engine-range`, the steps go to WORK/bisect-engine-range/, the answer to
# WORK/bisect-engine-range.json. Each step builds its commit (~2-4 minutes on 2 cores) and
# runs 3 pairs or more of the testing phase (~38 s a point): ~15-60 minutes. A benchmark:
# run it on a quiet machine, as root (cgroup blkio throttling).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
work=$(realpath -m "${1:?usage: $0 WORK CHANGE_ID}")
change=${2:?usage: $0 WORK CHANGE_ID}
range=${RANGE:-12}
regressed_at=${REGRESSED_AT:-8}
[ "$regressed_at" -ge 1 ] && [ "$regressed_at" -le "$range" ] || {
  echo "REGRESSED_AT must be between 1 and RANGE ($range)" >&2; exit 2; }
history=$work/results/history.sqlite
[ -f "$history" ] && [ -d "$work/repo/.git" ] || {
  echo "$work: no results/history.sqlite or repo/ (the paired acceptance's work directory)" >&2
  exit 2; }

good=$("$project/.venv/bin/python" - "$history" "$change" <<'EOF'
import sys
from lsmbench.track.changes import find_changes
from lsmbench.track.history import open_history
with open_history(sys.argv[1], create=False) as h:
    found = [c for c in find_changes(h).changes if c.id == sys.argv[2]]
if not found:
    print(f"no change {sys.argv[2]} in {sys.argv[1]} (lsmbench track report lists them)",
          file=sys.stderr)
    sys.exit(2)
print(found[0].commit_before)
EOF
)

cd "$work/repo"
export GIT_AUTHOR_NAME=lsmbench GIT_AUTHOR_EMAIL=lsmbench@localhost
export GIT_COMMITTER_NAME=lsmbench GIT_COMMITTER_EMAIL=lsmbench@localhost
if ! git rev-parse -q --verify engine-range >/dev/null; then
  git checkout -q -b engine-range "$good"
  # Appended at the end, so no line of code moves (__LINE__ and the binary stay the same).
  source_file=engines/lsm/src/db/db_impl.cc
  for i in $(seq 1 "$range"); do
    if [ "$i" = "$regressed_at" ]; then
      git apply "$here/injected-regression/slow-flush-5.patch"
      what="db: FlushMemTable writes a fifth of each flushed table again (the injected 5 % regression)"
    else
      what="db: a comment only, $i of $range (a new engines/ tree, the same code)"
    fi
    echo "// engine-range commit $i" >> "$source_file"
    git commit -qam "$what"
  done
fi
tip=$(git rev-parse engine-range)
echo "bisecting $change over $good..$tip ($range commits, the regression at $regressed_at:" \
  "$(git rev-list --reverse "$good..$tip" | sed -n "${regressed_at}p" | cut -c1-12))"

cd "$project"
set +e
/usr/bin/time -f "bisection: %e s wall" .venv/bin/lsmbench track bisect "$change" \
  --history "$history" --repo "$work/repo" --range "$good..$tip" \
  --work "$work/bisect-engine-range" --json > "$work/bisect-engine-range.json" \
  2> "$work/bisect-engine-range.log"
code=$?
set -e
grep -E "^bisection:" "$work/bisect-engine-range.log" || true
.venv/bin/python - "$work/bisect-engine-range.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["conclusion"])
for s in r["steps"]:
    measured = s["ratio"] is not None
    print(s["step"], s["commit"][:12], s["n"] or s["repetitions"],
          f"{s['ratio']:.3f} [{s['low']:.3f}, {s['high']:.3f}]" if measured else "-",
          s["decision"], s["detail"])
EOF
exit $code
