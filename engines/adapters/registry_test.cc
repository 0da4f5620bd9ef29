#include <algorithm>
#include <memory>
#include <string>

#include "adapters/adapter.h"
#include "adapters/plugin_adapter.h"
#include "gtest/gtest.h"

namespace lsmbench {
namespace {

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(RegistryTest, NamesWhatWasBuilt) {
  const std::vector<std::string> names = AdapterNames();
  EXPECT_TRUE(Has(names, "null"));
  // Every other storing engine is a plugin (engines/plugin), known once loaded
  // (this binary's storage tests load RocksDB's and LevelDB's when built).
  EXPECT_EQ(Has(names, "rocksdb"), FindEnginePlugin("rocksdb") != nullptr);
  EXPECT_EQ(Has(names, "leveldb"), FindEnginePlugin("leveldb") != nullptr);
#ifdef LSMBENCH_HAVE_BUILTIN
  EXPECT_TRUE(Has(names, "builtin"));
#else
  EXPECT_FALSE(Has(names, "builtin"));
#endif
}

TEST(RegistryTest, UnknownEngineListsTheNames) {
  std::unique_ptr<KvAdapter> adapter;
  Status s = OpenAdapter("rocksdbb", "/nonexistent", {}, &adapter);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(nullptr, adapter);
  std::string names;
  for (const std::string& name : AdapterNames()) names += (names.empty() ? "" : ", ") + name;
  EXPECT_EQ("Invalid argument: engine 'rocksdbb': unknown (choose from: " + names + ")",
            s.ToString());
}

TEST(RegistryTest, OpensEachNamedEngineKind) {
  std::unique_ptr<KvAdapter> adapter;
  ASSERT_TRUE(OpenAdapter("null", "", {}, &adapter).ok());
  ASSERT_NE(nullptr, adapter);
  EXPECT_TRUE(adapter->Close().ok());
}

}  // namespace
}  // namespace lsmbench
