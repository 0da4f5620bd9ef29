// Leveling: hand-checked cases. M = memtable_bytes = 100, T = 10, so level
// i holds up to 100 * 10^i bytes: level 1 1000, level 2 10000, level 3
// 100000.
#include <gtest/gtest.h>

#include "policy/policies.h"
#include "policy/policy_test_util.h"

namespace lsm::policy {
namespace {

using test::Ids;
using test::ImmediateSim;
using test::MakeStack;
using test::Shape;
using Levels = std::vector<std::pair<int, uint64_t>>;

std::unique_ptr<MergePolicy> Leveling(bool dynamic = false, double t = 10,
                                      bool full_level_waits = false) {
  LevelingParams params;
  params.size_ratio = t;
  params.memtable_bytes = 100;
  params.dynamic_level_sizes = dynamic;
  params.full_level_waits = full_level_waits;
  return NewLevelingPolicy(params);
}

TEST(Leveling, FirstFlushMovesToLevelOne) {
  auto p = Leveling();
  auto ops = p->PickMerges(MakeStack({{0, 100}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1}));
  EXPECT_EQ(ops[0].output_level, 1);
}

TEST(Leveling, FlushesMergeIntoLevelOneTogetherWithIt) {
  auto p = Leveling();
  // Three flushes piled up while nothing ran: all of them and level 1.
  auto ops = p->PickMerges(MakeStack({{2, 5000}, {1, 400}, {0, 100}, {0, 100}, {0, 100}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3, 4, 5}));
  EXPECT_EQ(ops[0].output_level, 1);
}

TEST(Leveling, StackOverTheFirstFlushes) {
  auto p = Leveling();
  ImmediateSim sim(*p);
  // Flushes 1..9 grow level 1 to 900.
  for (int i = 1; i <= 9; ++i) sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{1, 900}}));
  // Flush 10 makes it 1000 = its capacity: full, it moves to level 2.
  sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 1000}}));
  for (int i = 11; i <= 13; ++i) sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 1000}, {1, 300}}));
  // Flush 20: level 1 full again, merged with level 2.
  for (int i = 14; i <= 20; ++i) sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 2000}}));
  // Flush 100: level 2 reaches 10000 and moves to level 3.
  for (int i = 21; i <= 100; ++i) sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{3, 10000}}));
  for (int i = 101; i <= 255; ++i) sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{3, 20000}, {2, 5000}, {1, 500}}));
}

TEST(Leveling, ExactWriteAmplificationAfter1000Flushes) {
  // Per 10 flushes level 1 is written at 100, 200, ..., 1000: 5500 per
  // 1000 bytes flushed. Level 2 receives 1000 per 10 flushes and is written
  // at 1000, 2000, ..., 10000 per 100 flushes: again 5.5x. Level 3 likewise
  // (10000 .. 100000 over 1000 flushes), and at flush 1000 level 3 is full
  // and moves to level 4 (100000). Total 100000 * (1 + 5.5 * 3) + 100000 =
  // 1850000 bytes: write amplification 18.5 counting moves as writes.
  // Moves: flush -> empty level 1 at flushes 1, 11, ..., 991 (100 x 100),
  // level 1 -> empty level 2 at flushes 10, 110, ..., 910 (10 x 1000),
  // level 2 -> empty level 3 at flush 100 (10000), level 3 -> level 4 at
  // flush 1000 (100000): 130000 bytes, so 17.2 without moves.
  auto p = Leveling();
  ImmediateSim sim(*p);
  for (int i = 0; i < 1000; ++i) sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{4, 100000}}));
  EXPECT_DOUBLE_EQ(sim.stats().WriteAmp(), 18.5);
  EXPECT_EQ(sim.stats().move_bytes, 130000u);
  EXPECT_EQ(sim.stats().moves, 100u + 10 + 1 + 1);
  EXPECT_DOUBLE_EQ(sim.stats().WriteAmpWithoutMoves(), 17.2);
}

TEST(Leveling, FlushesFormANewLevelOneWhileTheOldOneMovesDown) {
  auto p = Leveling();
  // Level 1 is being merged into level 2: the flushes form a new level-1
  // component beside it (bLSM's C_1 while C'_1 merges into C_2).
  Snapshot s = MakeStack({{2, 5000}, {1, 1000}, {0, 100}, {0, 100}});
  s.stack[0].being_merged = s.stack[1].being_merged = true;
  auto ops = p->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({3, 4}));
  EXPECT_EQ(ops[0].output_level, 1);
  // A later flush merges with that new component, not with the old one.
  s = MakeStack({{2, 5000}, {1, 1000}, {1, 200}, {0, 100}});
  s.stack[0].being_merged = s.stack[1].being_merged = true;
  ops = p->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({3, 4}));
  EXPECT_EQ(ops[0].output_level, 1);
}

// Level 1 (capacity 1000) moves down; the new level-1 component beside it
// is full already. full_level_waits: the flushes wait (they accumulate, and
// the component constraint stalls the writes) until the move ends; without
// it they merge into the new component, which grows past its capacity.
TEST(Leveling, AFullNewComponentTakesNoMoreWhileItsLevelMovesDown) {
  Snapshot s = MakeStack({{2, 5000}, {1, 1000}, {1, 1000}, {0, 100}});
  s.stack[0].being_merged = s.stack[1].being_merged = true;
  EXPECT_TRUE(Leveling(false, 10, true)->PickMerges(s).empty());
  auto ops = Leveling(false, 10, false)->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({3, 4}));
  // Not full yet (900 < 1000): it takes the flush either way.
  s = MakeStack({{2, 5000}, {1, 1000}, {1, 900}, {0, 100}});
  s.stack[0].being_merged = s.stack[1].being_merged = true;
  ops = Leveling(false, 10, true)->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({3, 4}));
  // Deeper: level 2 (capacity 10000) moves down to level 3 and its new
  // component is full; a full level 1 waits instead of merging into it.
  s = MakeStack({{3, 50000}, {2, 10000}, {2, 10000}, {1, 1000}});
  s.stack[0].being_merged = s.stack[1].being_merged = true;
  EXPECT_TRUE(Leveling(false, 10, true)->PickMerges(s).empty());
  ops = Leveling(false, 10, false)->PickMerges(s);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({3, 4}));
  EXPECT_EQ(ops[0].output_level, 2);
}

TEST(Leveling, FlushesWaitWhileALevelZeroMergeRuns) {
  auto p = Leveling();
  Snapshot s;
  // Level 1 is being merged with earlier flushes: newer flushes wait.
  s = MakeStack({{1, 500}, {0, 100}, {0, 100}});
  s.stack[0].being_merged = s.stack[1].being_merged = true;
  EXPECT_TRUE(p->PickMerges(s).empty());
  // No level 1 yet, but the first flush is on its way there: the second
  // must not start a second merge into level 1.
  s = MakeStack({{0, 100}, {0, 100}});
  s.stack[0].being_merged = true;
  EXPECT_TRUE(p->PickMerges(s).empty());
}

TEST(Leveling, FullLevelOneMovesDownWhileTheFlushFormsANewOne) {
  auto p = Leveling();
  // Level 1 full (1000): it merges with level 2, and the flush becomes the
  // new level 1 at once (a move) instead of waiting for that merge.
  Snapshot s = MakeStack({{2, 5000}, {1, 1000}, {0, 100}});
  auto ops = p->PickMerges(s);
  ASSERT_TRUE(test::ValidOps(s, ops));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].inputs, Ids({3}));
  EXPECT_EQ(ops[0].output_level, 1);
  EXPECT_EQ(ops[1].inputs, Ids({1, 2}));
  EXPECT_EQ(ops[1].output_level, 2);
  // Same, with level 2 being merged into level 3: level 1 becomes a new
  // level-2 component beside it (a move: nothing free to merge with), and
  // the flush goes into the emptied level 1.
  s = MakeStack({{3, 50000}, {2, 10000}, {1, 1000}, {0, 100}});
  s.stack[0].being_merged = s.stack[1].being_merged = true;
  ops = p->PickMerges(s);
  ASSERT_TRUE(test::ValidOps(s, ops));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].inputs, Ids({4}));
  EXPECT_EQ(ops[0].output_level, 1);
  EXPECT_EQ(ops[1].inputs, Ids({3}));
  EXPECT_EQ(ops[1].output_level, 2);
}

TEST(Leveling, SeveralMergesAtOnceDeepestWaitsForNothing) {
  auto p = Leveling();
  // Level 2 is full: it moves to (empty) level 3; level 1 is not full: the
  // flushes merge into it. Listed shallowest first.
  const Snapshot s = MakeStack({{2, 10000}, {1, 500}, {0, 100}, {0, 100}});
  auto ops = p->PickMerges(s);
  ASSERT_TRUE(test::ValidOps(s, ops));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3, 4}));
  EXPECT_EQ(ops[0].output_level, 1);
  EXPECT_EQ(ops[1].inputs, Ids({1}));
  EXPECT_EQ(ops[1].output_level, 3);
}

TEST(Leveling, FullLevelsMoveDownTogether) {
  auto p = Leveling();
  // Levels 1 and 2 both full: level 2 moves to level 3, level 1 becomes a
  // new level-2 component beside it, the flush a new level 1: three
  // concurrent merges (here all moves), for the scheduler to order.
  const Snapshot s = MakeStack({{2, 10000}, {1, 1000}, {0, 100}});
  auto ops = p->PickMerges(s);
  ASSERT_TRUE(test::ValidOps(s, ops));
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].inputs, Ids({3}));
  EXPECT_EQ(ops[0].output_level, 1);
  EXPECT_EQ(ops[1].inputs, Ids({2}));
  EXPECT_EQ(ops[1].output_level, 2);
  EXPECT_EQ(ops[2].inputs, Ids({1}));
  EXPECT_EQ(ops[2].output_level, 3);
}

TEST(Leveling, RestoresOneComponentPerLevelOnAForeignStack) {
  // A tiering stack reopened under leveling: each level >= 1 with several
  // components is merged into one at that level; the flush forms a new
  // level-1 component beside them meanwhile.
  auto p = Leveling();
  const Snapshot s = MakeStack({{2, 900}, {2, 900}, {1, 300}, {1, 300}, {0, 100}});
  auto ops = p->PickMerges(s);
  ASSERT_TRUE(test::ValidOps(s, ops));
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].inputs, Ids({5}));
  EXPECT_EQ(ops[0].output_level, 1);
  EXPECT_EQ(ops[1].inputs, Ids({3, 4}));
  EXPECT_EQ(ops[1].output_level, 1);
  EXPECT_EQ(ops[2].inputs, Ids({1, 2}));
  EXPECT_EQ(ops[2].output_level, 2);
  // And a full level with several components takes all of them down.
  auto full = p->PickMerges(MakeStack({{1, 600}, {1, 600}}));
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0].inputs, Ids({1, 2}));
  EXPECT_EQ(full[0].output_level, 2);
}

TEST(Leveling, StaticCapacities) {
  LevelingParams params;
  params.size_ratio = 10;
  params.memtable_bytes = 100;
  EXPECT_EQ(LevelingCapacities(MakeStack({{3, 5}, {0, 1}}), params),
            (std::vector<double>{0, 1000, 10000, 100000, 1000000}));
  EXPECT_EQ(LevelingCapacities(Snapshot(), params), (std::vector<double>{0, 1000}));
  params.size_ratio = 2.5;
  EXPECT_EQ(LevelingCapacities(MakeStack({{1, 5}}), params),
            (std::vector<double>{0, 250, 625}));
}

TEST(Leveling, DynamicCapacitiesFollowTheLastLevel) {
  LevelingParams params;
  params.size_ratio = 10;
  params.memtable_bytes = 100;
  params.dynamic_level_sizes = true;
  // Last level 3 holds 50000: level 2 gets 5000, level 1 500; levels >= 3
  // keep their static capacities (level 3 moves down at 100000).
  EXPECT_EQ(LevelingCapacities(MakeStack({{3, 50000}, {2, 100}, {1, 10}}), params),
            (std::vector<double>{0, 500, 5000, 100000, 1000000}));
  // 20000: 2000 and 200.
  EXPECT_EQ(LevelingCapacities(MakeStack({{3, 20000}}), params),
            (std::vector<double>{0, 200, 2000, 100000, 1000000}));
  // 5000 (data was deleted): the floor M * T^(i-1), 1000 and 100.
  EXPECT_EQ(LevelingCapacities(MakeStack({{3, 5000}}), params),
            (std::vector<double>{0, 100, 1000, 100000, 1000000}));
  // With one level >= 1 there is nothing to derive: static.
  EXPECT_EQ(LevelingCapacities(MakeStack({{1, 50}, {0, 100}}), params),
            (std::vector<double>{0, 1000, 10000}));
}

TEST(Leveling, DynamicLevelSizesKeepTheLastLevelNearlyFull) {
  // The first 10 flushes are as static: level 1 fills and moves to level 2.
  // Then level 1's capacity is 1000/10 = 100: flush 11 fills it at once
  // and it merges into level 2 (1100); flush 12 stays (100 < 110); flush
  // 13 makes it 200 >= 110 and it merges (1300). Static leveling would
  // hold 1000 + 300 instead.
  auto p = Leveling(/*dynamic=*/true);
  ImmediateSim sim(*p);
  for (int i = 1; i <= 10; ++i) sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 1000}}));
  sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 1100}}));
  sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 1100}, {1, 100}}));
  sim.Flush(100);
  EXPECT_EQ(Shape(sim.snapshot()), (Levels{{2, 1300}}));
}

TEST(Leveling, DynamicLastLevelMovesDownAtItsStaticCapacity) {
  // Level 2 holds 9400, so level 1's capacity is 940: a flush joins the 900
  // of level 1 (1000), which is then full and merges into level 2 (10400);
  // that reaches level 2's static capacity 10000 and the tree deepens.
  auto p = Leveling(/*dynamic=*/true);
  auto ops = p->PickMerges(MakeStack({{2, 9400}, {1, 900}, {0, 100}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3}));
  EXPECT_EQ(ops[0].output_level, 1);
  ops = p->PickMerges(MakeStack({{2, 9400}, {1, 1000}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 2}));
  EXPECT_EQ(ops[0].output_level, 2);
  ops = p->PickMerges(MakeStack({{2, 10400}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].output_level, 3);
  // Just below the static capacity the last level stays.
  EXPECT_TRUE(p->PickMerges(MakeStack({{2, 9999}})).empty());
  // Static leveling would have moved level 1 (900 + 100 = 1000 = 100 * 10)
  // down on its own instead of merging the flush into a 940-capacity level.
  auto fixed = Leveling(/*dynamic=*/false);
  ops = fixed->PickMerges(MakeStack({{2, 9400}, {1, 1000}}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].output_level, 2);
  EXPECT_TRUE(fixed->PickMerges(MakeStack({{2, 9400}, {1, 950}})).empty());
  EXPECT_EQ(p->PickMerges(MakeStack({{2, 9400}, {1, 950}})).size(), 1u);
}

}  // namespace
}  // namespace lsm::policy
