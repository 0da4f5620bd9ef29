// Partitioned leveling: hand-checked cases. level1_bytes = 1000, T = 10, so
// level 1 holds up to 1000 bytes, level 2 up to 10000; l0_trigger 4,
// l0_stop 12; files are named by key ranges of single letters.
#include <gtest/gtest.h>

#include "policy/policies.h"
#include "policy/policy_test_util.h"
#include "options/option_test_util.h"

namespace lsm::policy {
namespace {

using test::Ids;

struct File {
  int level;
  uint64_t bytes;
  const char* smallest;
  const char* largest;
  bool being_merged = false;
};

// The stack in the engine's order for partitioned trees: deepest level
// first, level 0 last and oldest first. Ids 1, 2, ... in the given order.
Snapshot MakeTree(const std::vector<File>& files) {
  Snapshot s;
  uint64_t id = 1;
  for (const File& f : files) {
    Component c;
    c.id = id++;
    c.level = f.level;
    c.bytes = f.bytes;
    c.entries = f.bytes;
    c.smallest = f.smallest;
    c.largest = f.largest;
    c.being_merged = f.being_merged;
    s.stack.push_back(c);
  }
  return s;
}

PartitionedParams Params() {
  PartitionedParams p;
  p.size_ratio = 10;
  p.level1_bytes = 1000;
  p.partition_bytes = 300;
  return p;
}

TEST(Partitioned, LevelZeroWaitsForTheTrigger) {
  auto p = NewPartitionedPolicy(Params());
  EXPECT_TRUE(p->PickMerges(MakeTree({{0, 100, "a", "z"}, {0, 100, "a", "z"}, {0, 100, "b", "y"}}))
                  .empty());
}

TEST(Partitioned, LevelZeroTakesEveryFileAndTheOverlappingLevelOneFiles) {
  auto p = NewPartitionedPolicy(Params());
  // Level 1: [a-c] [d-f] [m-p]; five level-0 files covering b..g.
  auto snap = MakeTree({{1, 200, "a", "c"},
                        {1, 200, "d", "f"},
                        {1, 200, "m", "p"},
                        {0, 50, "b", "e"},
                        {0, 50, "c", "g"},
                        {0, 50, "b", "d"},
                        {0, 50, "e", "f"},
                        {0, 50, "c", "e"}});
  auto ops = p->PickMerges(snap);
  ASSERT_EQ(ops.size(), 1u);
  // [m-p] does not overlap b..g; inputs are in stack order.
  EXPECT_EQ(ops[0].inputs, Ids({1, 2, 4, 5, 6, 7, 8}));
  EXPECT_EQ(ops[0].output_level, 1);
  EXPECT_EQ(ops[0].max_output_bytes, 300u);
  EXPECT_DOUBLE_EQ(ops[0].score, 5.0 / 4);
}

TEST(Partitioned, MergeExactTakesTheOldestTriggerFiles) {
  PartitionedParams params = Params();
  params.l0_merge_exact = true;
  auto p = NewPartitionedPolicy(params);
  auto snap = MakeTree({{1, 200, "a", "c"},
                        {1, 200, "x", "z"},
                        {0, 50, "b", "c"},
                        {0, 50, "a", "b"},
                        {0, 50, "b", "c"},
                        {0, 50, "a", "c"},
                        {0, 50, "w", "z"},    // the fifth, newest: stays
                        {0, 50, "a", "z"}});  // the sixth: stays
  auto ops = p->PickMerges(snap);
  ASSERT_EQ(ops.size(), 1u);
  // The oldest four (ids 3-6) cover a..c: only [a-c] of level 1 joins.
  EXPECT_EQ(ops[0].inputs, Ids({1, 3, 4, 5, 6}));
}

TEST(Partitioned, FullLevelPushesOneFileRoundRobin) {
  auto p = NewPartitionedPolicy(Params());
  // Level 1 holds 1200 > 1000 bytes: one file goes down with its overlaps.
  // Level 2: [a-d] [e-h] [i-q].
  Snapshot snap = MakeTree({{2, 900, "a", "d"},
                            {2, 900, "e", "h"},
                            {2, 900, "i", "q"},
                            {1, 400, "b", "c"},
                            {1, 400, "f", "j"},
                            {1, 400, "r", "t"}});
  // No cursor yet: the first file by key, [b-c], with [a-d].
  auto ops = p->PickMerges(snap);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({1, 4}));
  EXPECT_EQ(ops[0].output_level, 2);
  EXPECT_DOUBLE_EQ(ops[0].score, 1.2);
  // After [b-c]: the next file, [f-j], overlapping [e-h] and [i-q].
  snap.round_robin_cursor = {"", "c"};
  ops = p->PickMerges(snap);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 3, 5}));
  // After the last file: [r-t], no overlap (a trivial move); then wrap.
  snap.round_robin_cursor = {"", "j"};
  EXPECT_EQ(p->PickMerges(snap)[0].inputs, Ids({6}));
  snap.round_robin_cursor = {"", "t"};
  EXPECT_EQ(p->PickMerges(snap)[0].inputs, Ids({1, 4}));
}

TEST(Partitioned, ChooseBestTakesTheFewestOverlappingBytes) {
  PartitionedParams params = Params();
  params.choose_best = true;
  auto p = NewPartitionedPolicy(params);
  Snapshot snap = MakeTree({{2, 900, "a", "d"},
                            {2, 100, "e", "h"},
                            {2, 900, "i", "q"},
                            {1, 400, "b", "c"},    // overlaps 900
                            {1, 400, "f", "g"},    // overlaps 100
                            {1, 400, "j", "k"}});  // overlaps 900
  auto ops = p->PickMerges(snap);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs, Ids({2, 5}));
}

TEST(Partitioned, FilesBeingMergedAreSkippedAndLevelsTakeTurns) {
  auto p = NewPartitionedPolicy(Params());
  // Level 1 is full, and level 0 is at its trigger; level 0 scores 1.0,
  // level 1 1.2: level 1 goes first and, as it now has a merge in flight
  // (into level 2), level 0 waits (one merge per level at a time).
  Snapshot snap = MakeTree({{2, 900, "a", "d"},
                            {1, 600, "a", "c"},
                            {1, 600, "m", "p"},
                            {0, 50, "a", "b"},
                            {0, 50, "a", "b"},
                            {0, 50, "a", "b"},
                            {0, 50, "a", "b"}});
  auto ops = p->PickMerges(snap);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].output_level, 2);
  // [a-c] is being merged (its overlap [a-d] too): the level-0 merge would
  // need it, so nothing new; level 1's next free file is [m-p], but level 1
  // already has a merge in flight.
  snap.stack[0].being_merged = true;
  snap.stack[1].being_merged = true;
  EXPECT_TRUE(p->PickMerges(snap).empty());
}

// A merge waiting to run keeps its source level busy, so the merge of the
// level above into it cannot be created: it inherits that level's urgency.
// Ranked by its own score alone, level 2's merge (barely full) lost to
// every level-0 merge while level 1 grew without bound.
TEST(Partitioned, UrgencyIsTheSourcesOrTheLevelItHoldsBack) {
  auto p = NewPartitionedPolicy(Params());
  // Level 2: 10100 of 10000 bytes (1.01); level 1: 5000 of 1000 (5.0, held
  // back by the merge out of level 2); level 0: 8 files (2.0).
  std::vector<File> files = {{3, 5000, "a", "z"}, {2, 10100, "a", "z", true},
                             {1, 2500, "a", "l", false}, {1, 2500, "m", "z"}};
  for (int i = 0; i < 8; i++) files.push_back({0, 50, "a", "b"});
  const Snapshot snap = MakeTree(files);
  EXPECT_DOUBLE_EQ(p->Urgency(snap, 3), 5.0);  // level 2's merge: level 1's score
  EXPECT_DOUBLE_EQ(p->Urgency(snap, 2), 5.0);  // level 1's own
  EXPECT_DOUBLE_EQ(p->Urgency(snap, 1), 2.0);  // level 0's: nothing above it
  // Stack policies keep the urgency a merge was created with.
  EXPECT_LT(NewLevelingPolicy(LevelingParams())->Urgency(snap, 1), 0);
}

TEST(Partitioned, ConstraintCountsLevelZeroAndOneRunPerLevel) {
  auto p = NewPartitionedPolicy(Params());
  Snapshot snap = MakeTree({{2, 900, "a", "d"},
                            {2, 900, "e", "h"},
                            {1, 100, "a", "b"},
                            {1, 100, "c", "d"},
                            {1, 100, "e", "f"},
                            {0, 50, "a", "b"},
                            {0, 50, "a", "b"}});
  EXPECT_EQ(p->ConstrainedCount(snap, /*local=*/false), 4u);  // 2 level-0 + 2 runs
  EXPECT_EQ(p->ConstrainedCount(snap, /*local=*/true), 2u);
  EXPECT_EQ(p->DefaultMaxComponents(snap), 12u + 2u);
  EXPECT_EQ(p->DefaultMaxComponentsPerLevel(), 12u);
  // Stack policies count every component.
  auto tiering = NewTieringPolicy(3);
  EXPECT_EQ(tiering->ConstrainedCount(snap, false), 7u);
  EXPECT_EQ(tiering->ConstrainedCount(snap, true), 3u);
}

TEST(Partitioned, OpensItsOwnShape) {
  auto p = NewPartitionedPolicy(Params());
  // Level 2 first, then level 1 with disjoint files, then overlapping level 0.
  auto snap = MakeTree(
      {{2, 300, "a", "m"}, {2, 300, "n", "z"}, {1, 200, "d", "f"}, {1, 200, "a", "c"},
       {0, 100, "a", "z"}, {0, 100, "b", "y"}});
  EXPECT_TRUE(p->CheckStackShape(snap, "/db").ok());
  EXPECT_TRUE(p->CheckStackShape(Snapshot(), "/db").ok());
}

TEST(Partitioned, RefusesAStackPolicysTreeNamingTheReason) {
  auto p = NewPartitionedPolicy(Params());
  Status s = p->CheckStackShape(MakeTree({{1, 200, "a", "c"}, {2, 300, "d", "f"}}), "/db");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.ToString(),
            "Invalid argument: merge_policy partitioned cannot open /db: its components were "
            "written by a stack policy (levels out of order); use that policy");
  s = p->CheckStackShape(MakeTree({{1, 200, "a", "f"}, {1, 200, "f", "k"}}), "/db");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.ToString(),
            "Invalid argument: merge_policy partitioned cannot open /db: level 1 holds "
            "overlapping components, written by a stack policy; use that policy");
  // What a stack policy accepts.
  Options o;
  o.merge_policy = lsm::PolicyKind::kLeveling;
  std::unique_ptr<MergePolicy> leveling;
  ASSERT_TRUE(NewMergePolicy(o, &leveling).ok());
  EXPECT_TRUE(leveling->CheckStackShape(MakeTree({{1, 200, "a", "f"}, {1, 200, "f", "k"}}), "/db")
                  .ok());
}

TEST(Partitioned, ParametersAreValidatedByName) {
  Options o;
  o.merge_policy = lsm::PolicyKind::kPartitioned;
  std::unique_ptr<MergePolicy> p;
  ASSERT_TRUE(NewMergePolicy(o, &p).ok());
  EXPECT_TRUE(p->Partitioned());
  auto expect_bad = [&](Options bad, const std::string& field) {
    Status s = NewMergePolicy(bad, &p);
    EXPECT_TRUE(s.IsInvalidArgument()) << field;
    EXPECT_NE(s.ToString().find(field), std::string::npos) << s.ToString();
  };
  Options bad = o;
  bad.l0_trigger = 0;
  expect_bad(bad, "l0_trigger");
  bad = o;
  bad.l0_stop = 3;  // below the trigger
  expect_bad(bad, "l0_stop");
  bad = o;
  bad.partition_pick = lsm::test::Named<lsm::PartitionPick>("random");
  expect_bad(bad, "partition_pick");
  bad = o;
  bad.partition_bytes = 10;
  expect_bad(bad, "partition_bytes");
}

}  // namespace
}  // namespace lsm::policy
