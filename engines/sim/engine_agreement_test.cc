// The agreement at small scale: the engine and the simulator, fed
// the engine's own flush sizes, agree on write amplification and average
// SSTable count (the full table is in README.md, made by lsm-sim-validate).
#include <gtest/gtest.h>

#include <unistd.h>

#include "sim/engine_replay.h"

namespace lsm::sim {
namespace {

TEST(EngineAgreement, BinomialK4) {
  ReplayOptions o;
  o.policy = "binomial";
  o.k = 4;
  o.flushes = 300;
  o.dir = ::testing::TempDir() + "/lsm_sim_agreement." + std::to_string(getpid());
  ReplayResult r;
  Status s = RunReplay(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(r.flush_sizes.size(), 300u);
  EXPECT_LE(r.engine_max_sstables, 4u) << "the bound, once each flush settled";
  EXPECT_GT(r.engine_write_amp, 2) << "merges happened";
  EXPECT_LE(std::abs(r.WriteAmpDiffPercent()), kMaxWriteAmpDiffPercent)
      << "engine " << r.engine_write_amp << " sim " << r.sim_write_amp;
  EXPECT_LE(std::abs(r.AvgDiff()), kMaxAvgSstablesDiff)
      << "engine " << r.engine_avg_sstables << " sim " << r.sim_avg_sstables;
}

}  // namespace
}  // namespace lsm::sim
