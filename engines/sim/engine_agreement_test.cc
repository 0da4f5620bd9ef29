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

// Mao et al.'s Fig. 6: both sides after the same flushes, every N-th and the
// last; the last point is the final figures.
TEST(EngineAgreement, SeriesEveryNthFlushAndTheLast) {
  ReplayOptions o;
  o.policy = "minlatency";
  o.k = 4;
  o.flushes = 130;
  o.series_every = 50;
  o.dir = ::testing::TempDir() + "/lsm_sim_series." + std::to_string(getpid());
  ReplayResult r;
  Status s = RunReplay(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(r.series.size(), 3u);
  EXPECT_EQ(r.series[0].flushes, 50u);
  EXPECT_EQ(r.series[1].flushes, 100u);
  EXPECT_EQ(r.series[2].flushes, 130u);
  EXPECT_DOUBLE_EQ(r.series.back().engine_write_amp, r.engine_write_amp);
  EXPECT_DOUBLE_EQ(r.series.back().sim_write_amp, r.sim_write_amp);
  for (const SeriesPoint& p : r.series) {
    EXPECT_GE(p.engine_write_amp, 1) << p.flushes;
    EXPECT_GE(p.sim_write_amp, 1) << p.flushes;
    EXPECT_GE(p.engine_sstables, 1u) << p.flushes;
    EXPECT_LE(p.engine_sstables, 4u) << p.flushes;
    EXPECT_LE(p.sim_sstables, 4u) << p.flushes;
  }
  EXPECT_LT(r.series[0].engine_write_amp, r.series[2].engine_write_amp) << "it grows";

  o.series_every = 0;
  o.dir += "-none";
  s = RunReplay(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(r.series.empty());
}

// Mao et al.'s Fig. 4: with 70 % updates (zipfian, the newest hottest) the
// engine's merges drop overwritten versions, so its write amplification
// falls below the same run without updates and below the simulator's model
// of its own flushes, which keeps every byte (the paper's Sec. III: updates
// only lower it). The draws are seeded: the same options, the same run.
TEST(EngineAgreement, UpdatesLowerWriteAmplificationBelowTheModel) {
  ReplayOptions o;
  o.policy = "binomial";
  o.k = 4;
  o.flushes = 200;
  const std::string dir = ::testing::TempDir() + "/lsm_sim_updates." + std::to_string(getpid());
  o.dir = dir + "-appends";
  ReplayResult appends;
  Status s = RunReplay(o, &appends);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(appends.updates, 0u);

  o.update_fraction = 0.7;
  o.dir = dir + "-updates";
  ReplayResult updates;
  s = RunReplay(o, &updates);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(updates.flush_sizes.size(), 200u);
  EXPECT_GT(updates.updates, 0u);
  EXPECT_LT(updates.engine_write_amp, appends.engine_write_amp);
  EXPECT_LT(updates.engine_write_amp, updates.sim_write_amp)
      << "the model keeps every byte; the engine drops overwritten versions";

  o.dir = dir + "-again";
  ReplayResult again;
  s = RunReplay(o, &again);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(again.updates, updates.updates);
  EXPECT_EQ(again.flush_sizes, updates.flush_sizes);

  o.update_fraction = 1.0;
  EXPECT_TRUE(RunReplay(o, &again).IsInvalidArgument());
}

}  // namespace
}  // namespace lsm::sim
