#!/usr/bin/env bash
# Records what YCSB's own client and CoreWorkload (site.ycsb:core, Maven Central) issue for one
# of YCSB's core workloads, as two lsmbench op streams (workloads/ycsb/README.md):
#
#   record.sh WORKLOAD OUT.csv [recordcount] [operationcount]
#
# WORKLOAD: a..f, workloada..workloadf (the property files in workloads/ beside this script, the
# values of YCSB's own) or the path of a property file. Writes OUT.csv, the transaction phase
# (`site.ycsb.Client -t`), and OUT.load.csv beside it, the load phase (`-load`); recordcount
# defaults to 1000, operationcount to 20000. YCSB's client takes no seed: every run differs.
#
# The jar is built with Maven (offline from ~/.m2 when everything is cached, else online);
# Java >= 17 and Maven are needed (Debian: default-jdk-headless maven; `make deps` installs them).
set -euo pipefail

usage() {
  echo "usage: $0 WORKLOAD OUT.csv [recordcount] [operationcount]" >&2
  echo "  WORKLOAD: a..f, workloada..workloadf, or a property file" >&2
  exit 2
}
[ $# -ge 2 ] && [ $# -le 4 ] || usage

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
workload="$1"
out="$2"
recordcount="${3:-1000}"
operationcount="${4:-20000}"
[[ "$recordcount" =~ ^[1-9][0-9]*$ ]] || { echo "$0: recordcount must be a positive integer" >&2; exit 2; }
[[ "$operationcount" =~ ^[1-9][0-9]*$ ]] || { echo "$0: operationcount must be a positive integer" >&2; exit 2; }

case "$workload" in
  [a-f]) props="$here/workloads/workload$workload" ;;
  workload[a-f]) props="$here/workloads/$workload" ;;
  *) props="$workload" ;;
esac
[ -f "$props" ] || { echo "$0: no workload property file $props" >&2; exit 2; }
name="$(basename "$props")"

for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$0: '$tool' is not installed: YCSB's reference needs Java >= 17 and Maven" >&2
    echo "  (Debian: apt-get install default-jdk-headless maven; or run 'make deps' as root)" >&2
    exit 3
  fi
done

# Build: skipped while the jar is newer than the pom and every source. One build at a time
# (tests may run record.sh in parallel): flock on target/.build.lock.
jar="$here/target/ycsb-reference.jar"
stale() {
  [ ! -f "$jar" ] || [ -n "$(find "$here/pom.xml" "$here/src" -newer "$jar" -print -quit)" ] \
    || ! compgen -G "$here/target/lib/core-*.jar" >/dev/null
}
build() {
  local log
  log="$(mktemp)"
  if ! mvn -B -q -o -f "$here/pom.xml" package >"$log" 2>&1; then
    echo "$0: building offline failed (not everything in ~/.m2?); building online" >&2
    if ! mvn -B -q -f "$here/pom.xml" package >"$log" 2>&1; then
      cat "$log" >&2
      rm -f "$log"
      echo "$0: mvn package failed" >&2
      exit 1
    fi
  fi
  rm -f "$log"
}
if stale; then
  mkdir -p "$here/target"
  exec 9>"$here/target/.build.lock"
  command -v flock >/dev/null 2>&1 && flock 9
  if stale; then build; fi
  exec 9>&-
fi
cp="$jar:$here/target/lib/*"

case "$out" in
  *.csv) load_out="${out%.csv}.load.csv" ;;
  *) load_out="$out.load.csv" ;;
esac
mkdir -p "$(dirname "$out")"

# One phase: the client's own output goes to a log, shown when the phase fails.
run_phase() {  # PHASE_FLAG PHASE_NAME FILE EXPECTED_ROWS
  local flag="$1" phase="$2" file="$3" rows="$4" log
  log="$(mktemp)"
  if ! timeout 1800 java -cp "$cp" site.ycsb.Client "$flag" \
      -db lsmbench.ycsb.RecordingDB -P "$props" \
      -p workload=lsmbench.ycsb.RecordingCoreWorkload \
      -p recordcount="$recordcount" -p operationcount="$operationcount" -p threadcount=1 \
      -p lsmbench.out="$file" \
      -p "lsmbench.label=$name $phase recordcount=$recordcount operationcount=$operationcount" \
      >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    echo "$0: YCSB's client failed in the $phase phase" >&2
    exit 1
  fi
  # YCSB's client exits 0 even when a thread died (ClientThread catches, prints, System.exit(0)):
  # the stream must hold every operation.
  local got
  got=0
  [ -f "$file" ] && got=$(( $(wc -l <"$file") - 2 ))
  if [ "$got" -ne "$rows" ]; then
    cat "$log" >&2; rm -f "$log"
    echo "$0: the $phase phase wrote $got operations to $file, expected $rows" >&2
    exit 1
  fi
  rm -f "$log"
}

run_phase -load load "$load_out" "$recordcount"
run_phase -t run "$out" "$operationcount"
echo "$name: $recordcount loaded -> $load_out; $operationcount operations -> $out"
