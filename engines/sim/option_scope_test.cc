// options.def's scope column against the policies' code: an option of scope
// kEngine never changes what any merge policy decides. lsmbench relies on it
// (pipelines/lsmbench/mergesim.py: points that differ only in such options
// share one lsm-sim run), so a policy that starts reading an option marked
// kEngine fails here until options.def says kMergePolicy.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "lsm/option_table.h"
#include "lsm/options.h"
#include "sim/simulator.h"

namespace lsm::sim {
namespace {

constexpr int kFlushes = 400;
constexpr uint64_t kFlushBytes = 1 << 20;

struct Merge {
  uint64_t flush, first, inputs;
  int level;
  bool operator==(const Merge& o) const {
    return flush == o.flush && first == o.first && inputs == o.inputs && level == o.level;
  }
};

// Every merge the instant model applies over kFlushes flushes (the
// decisions lsmbench reads), or none with *ok false when the options are
// refused.
std::vector<Merge> Decisions(const Options& engine, bool* ok) {
  SimOptions o;
  o.engine = engine;
  std::unique_ptr<Simulator> sim;
  *ok = Simulator::Create(o, &sim).ok();
  std::vector<Merge> merges;
  if (!*ok) return merges;
  sim->set_decision_observer([&](const Decision& d) {
    merges.push_back({d.flush, d.first, d.inputs, d.level});
  });
  for (int f = 0; f < kFlushes && *ok; ++f) *ok = sim->Flush(kFlushBytes).ok();
  return merges;
}

// Values other than the default that the table accepts for this option
// (each may still break a rule between options: the caller tries them all).
std::vector<std::string> OtherValues(const OptionInfo& info, const std::string& current) {
  std::vector<std::string> values;
  switch (info.kind) {
    case OptionKind::kBool:
      values = {current == "true" ? "false" : "true"};
      break;
    case OptionKind::kChoice:
      for (const std::string& c : info.choices) {
        if (c != current) values.push_back(c);
      }
      break;
    case OptionKind::kInt:
    case OptionKind::kSize:
    case OptionKind::kReal: {
      const double now = std::stod(current);
      for (double v : {info.min, info.max, now * 2 + 1, now + 1, (info.min + info.max) / 2}) {
        if (v != now && v >= info.min && v <= info.max) {
          values.push_back(info.kind == OptionKind::kReal
                               ? std::to_string(v)
                               : std::to_string(static_cast<uint64_t>(v)));
        }
      }
      break;
    }
  }
  return values;
}

TEST(OptionScope, AnEngineOptionNeverChangesWhatAPolicyMerges) {
  int compared = 0;
  for (const char* policy : {"leveling", "tiering", "size-tiered", "partitioned",
                                    "bigtable", "exploring", "constant", "minlatency",
                                    "binomial"}) {
    Options base;
    base.memtable_bytes = kFlushBytes;
    ASSERT_TRUE(SetOption(&base, "merge_policy", policy).ok()) << policy;
    bool ok = false;
    const std::vector<Merge> expected = Decisions(base, &ok);
    ASSERT_TRUE(ok) << policy;
    ASSERT_FALSE(expected.empty()) << policy << ": no merge in " << kFlushes << " flushes";
    for (const OptionInfo& info : OptionTable()) {
      if (info.scope != OptionScope::kEngine) continue;
      bool tried = false;
      for (const std::string& value : OtherValues(info, info.get(base))) {
        Options changed = base;
        if (!SetOption(&changed, info.name, value).ok() || !CheckOptions(changed).ok()) {
          continue;
        }
        const std::vector<Merge> got = Decisions(changed, &ok);
        if (!ok) continue;  // e.g. a constraint the instant model cannot meet
        tried = true;
        ++compared;
        EXPECT_TRUE(got == expected)
            << policy << ": " << info.name << "=" << value << " changed the merges ("
            << got.size() << " against " << expected.size()
            << "): the policy reads it, so options.def must give it scope kMergePolicy";
      }
      EXPECT_TRUE(tried) << policy << ": no other value of " << info.name
                         << " was accepted: the test cannot check it";
    }
  }
  EXPECT_GT(compared, 100);
}

TEST(OptionScope, TheComparisonSeesWhatAPolicyOptionChanges) {
  // Without this the test above could pass by comparing nothing that can differ.
  for (const auto& [policy, option, value] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"leveling", "size_ratio", "4"}, {"tiering", "size_ratio", "5"},
           {"binomial", "sstable_bound", "3"}, {"size-tiered", "max_merge_components", "3"}}) {
    Options base;
    base.memtable_bytes = kFlushBytes;
    ASSERT_TRUE(SetOption(&base, "merge_policy", policy).ok());
    Options changed = base;
    ASSERT_TRUE(SetOption(&changed, option, value).ok()) << option;
    bool ok1 = false, ok2 = false;
    const std::vector<Merge> a = Decisions(base, &ok1), b = Decisions(changed, &ok2);
    ASSERT_TRUE(ok1 && ok2) << policy;
    EXPECT_FALSE(a == b) << policy << ": " << option << "=" << value << " changed nothing";
  }
}

TEST(OptionScope, EveryOptionHasOneAndThePolicysOwnAreMarked) {
  // The options each policy's parameters come from (policy.cc) are marked:
  // the other direction of the contract, spot-checked.
  for (const char* name : {"merge_policy", "size_ratio", "memtable_bytes", "sstable_bound",
                           "full_level_waits", "l0_trigger", "exploring_ratio"}) {
    const OptionInfo* info = FindOption(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->scope, OptionScope::kMergePolicy) << name;
  }
  EXPECT_STREQ(OptionScopeName(OptionScope::kMergePolicy), "merge-policy");
  EXPECT_STREQ(OptionScopeName(OptionScope::kEngine), "engine");
}

}  // namespace
}  // namespace lsm::sim
