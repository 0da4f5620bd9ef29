#!/usr/bin/env bash
# The power-cut soak (engines/README.md, "Tests"; figures in
# engines/BENCHMARKS.md, "Power cuts"): two writers with wal=sync, a cut at
# random sync points, every disk opened and checked against the acknowledged
# writes, one in 8 (DB) or 12 (dataset) cut again during recovery; every policy x
# scheduler for the DB, eager and lazy for a dataset with two secondary
# indexes. CUTS scales the length (LSM_POWER_CUTS: ~240 DB cuts per unit,
# ~37 per dataset strategy); the seeds are printed, replay one case with
# LSM_TEST_SEED=<seed> and a --gtest_filter naming it.
#
# usage: engines/bench/power_cut_soak.sh [BUILD_DIR] [CUTS]
set -euo pipefail
BUILD=${1:-build}
CUTS=${2:-40}
cmake --build "$BUILD" --target lsm_db_tests lsm_dataset_tests >/dev/null
start=$(date +%s)
LSM_POWER_CUTS=$CUTS "$BUILD/bin/lsm_db_tests" --gtest_filter='Soak/PowerCutSoakTest.*' |
  grep -E '^(power-cut soak|\[  (PASSED|FAILED)|  FAILED)'
LSM_POWER_CUTS=$CUTS "$BUILD/bin/lsm_dataset_tests" --gtest_filter='*DatasetPowerCutTest.Soak*' |
  grep -E '^(eager|lazy) soak|^\[  (PASSED|FAILED)|  FAILED'
echo "wall time: $(( $(date +%s) - start )) s"
