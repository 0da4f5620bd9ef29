// Randomized model test: the engine against std::map, for every policy,
// with a tiny memtable so that flushes and merges happen all the time.
#include <map>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "db/test_util.h"
#include "lsm/db.h"
#include "policy/policy.h"
#include "sched/scheduler.h"
#include "options/option_test_util.h"

namespace lsm {
namespace {

// (policy, scheduler, operations): every policy with the single scheduler at
// full length, and every other scheduler on a shorter run. The names come
// from the registries, so a new policy or scheduler is tested here at once.
struct ModelCase {
  std::string policy;
  std::string scheduler;
  uint64_t ops;
};

class ModelTest : public ::testing::TestWithParam<ModelCase> {};

void CheckFullScan(DB* db, const std::map<std::string, std::string>& model, uint64_t op) {
  auto it = db->NewIterator();
  auto m = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.end()) << "op " << op << ": extra key " << it->key();
    ASSERT_EQ(it->key(), m->first) << "op " << op;
    ASSERT_EQ(it->value(), m->second) << "op " << op << " key " << m->first;
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  ASSERT_EQ(m, model.end()) << "op " << op << ": missing key " << m->first;
}

TEST_P(ModelTest, MatchesStdMap) {
  const uint64_t seed = test::TestSeed();
  std::mt19937_64 rng(seed);
  test::TempDir dir;
  Options options;
  options.memtable_bytes = 64 * 1024;
  options.merge_policy = lsm::test::Named<lsm::PolicyKind>(GetParam().policy);
  options.merge_scheduler = lsm::test::Named<lsm::SchedulerKind>(GetParam().scheduler);
  options.partition_bytes = 16 * 1024;  // partitioned: several files per level
  options.wal = WalMode::kAsync;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());

  std::map<std::string, std::string> model;
  const uint64_t kOps = GetParam().ops;
  constexpr int kKeySpace = 20000;
  std::string value;
  for (uint64_t op = 1; op <= kOps; op++) {
    const int dice = static_cast<int>(rng() % 100);
    const std::string key = test::RandomKey(rng, kKeySpace);
    if (dice < 50) {
      std::string v = test::RandomValue(rng);
      ASSERT_TRUE(db->Put(key, v).ok());
      model[key] = v;
    } else if (dice < 65) {
      ASSERT_TRUE(db->Delete(key).ok());
      model.erase(key);
    } else if (dice < 95) {
      Status s = db->Get(key, &value);
      auto m = model.find(key);
      if (m == model.end()) {
        ASSERT_TRUE(s.IsNotFound()) << "op " << op << " key " << key << ": " << s.ToString();
      } else {
        ASSERT_TRUE(s.ok()) << "op " << op << " key " << key << ": " << s.ToString();
        ASSERT_EQ(value, m->second) << "op " << op << " key " << key;
      }
    } else {
      // A short scan from a random start.
      auto it = db->NewIterator();
      it->Seek(key);
      auto m = model.lower_bound(key);
      for (int i = 0; i < 20 && m != model.end(); i++, ++m, it->Next()) {
        ASSERT_TRUE(it->Valid()) << "op " << op;
        ASSERT_EQ(it->key(), m->first) << "op " << op;
        ASSERT_EQ(it->value(), m->second) << "op " << op;
      }
      if (m == model.end()) {
        ASSERT_FALSE(it->Valid()) << "op " << op;
      }
    }
    if (op % 10000 == 0) {
      ASSERT_NO_FATAL_FAILURE(CheckFullScan(db.get(), model, op));
      for (int i = 0; i < 200; i++) {
        const std::string probe = test::RandomKey(rng, kKeySpace);
        Status s = db->Get(probe, &value);
        auto m = model.find(probe);
        ASSERT_EQ(s.ok(), m != model.end()) << "op " << op << " key " << probe;
        if (m != model.end()) {
          ASSERT_EQ(value, m->second);
        }
      }
    }
    if (op == kOps / 2) {
      // Reopen in the middle: everything written must come back.
      db.reset();
      ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
      ASSERT_NO_FATAL_FAILURE(CheckFullScan(db.get(), model, op));
    }
  }
  ASSERT_TRUE(db->WaitForIdle().ok());
  ASSERT_NO_FATAL_FAILURE(CheckFullScan(db.get(), model, kOps));
  Stats st = db->GetStats();
  EXPECT_GT(st.flushes_completed, kOps / 4000);
  EXPECT_GT(st.merges_completed, 5u);
  EXPECT_GT(st.write_amplification, 0.0);
  std::printf("%s/%s: flushes %llu merges %llu components %llu wa %.2f\n",
              GetParam().policy.c_str(), GetParam().scheduler.c_str(),
              static_cast<unsigned long long>(st.flushes_completed),
              static_cast<unsigned long long>(st.merges_completed),
              static_cast<unsigned long long>(st.disk_components), st.write_amplification);
}

std::vector<ModelCase> ModelCases() {
  std::vector<ModelCase> cases;
  for (const std::string& policy : policy::PolicyNames()) {
    for (const std::string& scheduler : sched::SchedulerNames()) {
      cases.push_back({policy, scheduler, scheduler == "single" ? 200000u : 40000u});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(PoliciesAndSchedulers, ModelTest, ::testing::ValuesIn(ModelCases()),
                         [](const auto& info) {
                           return test::PolicySchedulerName(info.param.policy,
                                                            info.param.scheduler);
                         });

}  // namespace
}  // namespace lsm
