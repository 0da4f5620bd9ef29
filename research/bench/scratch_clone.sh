# Sourced by the bench scripts that run nights of `lsmbench track` on a scratch clone of this
# project: sets $here, $project and $lsmbench (exits 2 when the venv is missing), and
# `scratch_clone WORK WHO` makes WORK afresh (WORK/nights, WORK/repo: a clone committing as
# WHO) and cds into the clone.
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
project=$(git -C "$here" rev-parse --show-toplevel)
lsmbench="$project/.venv/bin/lsmbench"
[ -x "$lsmbench" ] || { echo "$lsmbench: not installed (make quickstart or make test first)" >&2; exit 2; }

scratch_clone() {
  local work=$1 who=$2
  rm -rf "$work"
  mkdir -p "$work/nights"
  git clone -q "$project" "$work/repo"
  cd "$work/repo"
  git config user.email "$who@lsmbench.invalid"
  git config user.name "lsmbench $who"
}
