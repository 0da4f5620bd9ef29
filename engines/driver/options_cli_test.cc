// The committed descriptions of the engines' options (what `lsmbench
// validate` reads on a fresh clone, before anything is built) and the
// generated option reference must be what this build prints.
#include "driver/options_cli.h"

#include "adapters/adapter.h"
#include "driver/workload.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace lsmbench::driver {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Regenerate(const std::string& engine, const std::string& how) {
  return std::string("build/bin/lsm-driver --describe-options ") + engine + how;
}

// The compiled-in engines, and the leveldb plugin: lsmbench validate reads its committed
// description before anything is built.
TEST(OptionsCliTest, CommittedDescriptionsAreCurrent) {
#ifdef LSM_LEVELDB_PLUGIN
  std::string loaded;
  ASSERT_TRUE(LoadEnginePlugin(LSM_LEVELDB_PLUGIN, &loaded).ok());
#endif
  for (const std::string& engine : AdapterNames()) {
    std::string json;
    Status s = DescribeOptionsJson(engine, &json);
    ASSERT_TRUE(s.ok()) << engine << ": " << s.ToString();
    const std::string path =
        std::string(LSM_REPO_ROOT) + "/pipelines/lsmbench/engine_options/" + engine + ".json";
    if (FindEnginePlugin(engine) == nullptr) {
      EXPECT_EQ(json, ReadFile(path))
          << path << " is stale: regenerate it with " << Regenerate(engine, " > " + path);
      continue;
    }
    // A plugin's description also says where it was loaded from; the file has the rest.
    nlohmann::json described = nlohmann::json::parse(json);
    described.erase("plugin");
    EXPECT_EQ(described.dump(1) + "\n", ReadFile(path))
        << path << " is stale: regenerate it with " << Regenerate(engine, "")
        << ", leaving out its \"plugin\" block";
  }
}

TEST(OptionsCliTest, CommittedWorkloadDefaultsAreCurrent) {
  const std::string path =
      std::string(LSM_REPO_ROOT) + "/pipelines/lsmbench/engine_options/driver-workload.json";
  EXPECT_EQ(WorkloadDefaultsJson(), ReadFile(path))
      << path << " is stale: regenerate it with build/bin/lsm-driver --describe-workload > "
      << path;
  const nlohmann::json j = nlohmann::json::parse(WorkloadDefaultsJson());
  EXPECT_EQ(WorkloadSpec().key_size, j["key_size"].get<uint32_t>());
}

TEST(OptionsCliTest, CommittedReferenceIsCurrent) {
  std::string md;
  ASSERT_TRUE(DescribeOptionsMarkdown("builtin", &md).ok());
  const std::string path = std::string(LSM_REPO_ROOT) + "/docs/reference/engine-options.md";
  EXPECT_EQ(md, ReadFile(path))
      << path << " is stale: regenerate it with "
      << Regenerate("builtin", " --markdown > docs/reference/engine-options.md");
}

TEST(OptionsCliTest, DescriptionIsTypedJson) {
  std::string text;
  ASSERT_TRUE(DescribeOptionsJson("builtin", &text).ok());
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ("builtin", j["engine"]);
  bool saw_size = false, saw_choice = false;
  for (const auto& o : j["options"]) {
    if (o["name"] == "memtable_bytes") {
      saw_size = true;
      EXPECT_EQ("size", o["type"]);
      EXPECT_EQ(32u << 20, o["default"].get<uint64_t>());
      EXPECT_EQ(4096u, o["min"].get<uint64_t>());
    }
    if (o["name"] == "merge_policy") {
      saw_choice = true;
      EXPECT_EQ("choice", o["type"]);
      EXPECT_EQ("tiering", o["default"]);
      EXPECT_EQ(9u, o["choices"].size());
      EXPECT_FALSE(o.contains("min"));
    }
  }
  EXPECT_TRUE(saw_size && saw_choice);
}

TEST(OptionsCliTest, CheckNamesEveryBadOption) {
  bool ok = true;
  const nlohmann::json j = nlohmann::json::parse(CheckOptionsJson(
      "builtin", {{"memtable_byts", "4M"}, {"bloom_bits_per_key", "1000"}, {"wal", "off"}}, &ok));
  EXPECT_FALSE(ok);
  EXPECT_EQ(false, j["ok"]);
  ASSERT_EQ(2u, j["errors"].size());
  EXPECT_EQ("bloom_bits_per_key", j["errors"][0]["name"]);
  EXPECT_EQ("memtable_byts", j["errors"][1]["name"]);
  EXPECT_NE(std::string::npos,
            j["errors"][1]["message"].get<std::string>().find("did you mean 'memtable_bytes'"));
  const nlohmann::json good =
      nlohmann::json::parse(CheckOptionsJson("null", {{"service_time_us", "5"}}, &ok));
  EXPECT_TRUE(ok);
  EXPECT_TRUE(good["errors"].empty());
}

}  // namespace
}  // namespace lsmbench::driver
