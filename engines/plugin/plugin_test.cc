// The plugin loader against real shared objects: the memkv example, and the
// faulty builds of it (testdata/faulty.c), one fault each.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "adapters/adapter.h"
#include "adapters/plugin_adapter.h"

namespace lsmbench {
namespace {

std::string Faulty(const std::string& fault) {
  return std::string(LSM_FAULTY_DIR) + "/faulty-" + fault + ".so";
}

std::shared_ptr<const EnginePlugin> LoadOk(const std::string& path) {
  std::shared_ptr<const EnginePlugin> plugin;
  Status s = EnginePlugin::Load(path, &plugin);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return plugin;
}

std::string LoadError(const std::string& path) {
  std::shared_ptr<const EnginePlugin> plugin;
  Status s = EnginePlugin::Load(path, &plugin);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  return s.ToString();
}

std::unique_ptr<KvAdapter> OpenOk(const EnginePlugin& plugin, const AdapterOptions& options) {
  std::unique_ptr<KvAdapter> db;
  Status s = plugin.Open("/nonexistent-memkv-needs-no-dir", options, 0, &db);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return db;
}

std::string Key(int i) {
  char buf[16];
  snprintf(buf, sizeof(buf), "k%06d", i);
  return buf;
}

TEST(PluginTest, MemkvDescribesItselfAndItsOptions) {
  auto plugin = LoadOk(LSM_MEMKV_PLUGIN);
  ASSERT_TRUE(plugin);
  EXPECT_EQ(plugin->name(), "memkv");
  EXPECT_EQ(plugin->version(), "1.0");
  EXPECT_EQ(plugin->abi_version(), 1u);
  EXPECT_TRUE(plugin->CannotTell().empty());
  EXPECT_FALSE(plugin->HasSecondaryIndexes());
  const auto options = plugin->Describe();
  ASSERT_EQ(options.size(), 2u);
  EXPECT_EQ(options[0].name, "memtable_entries");
  EXPECT_EQ(options[0].kind, lsm::OptionKind::kInt);
  EXPECT_EQ(options[0].default_text, "4096");
  EXPECT_EQ(options[1].min, 2);
  EXPECT_EQ(options[1].max, 64);
}

TEST(PluginTest, MemkvKeepsTheNewestValueThroughFlushesAndMerges) {
  auto plugin = LoadOk(LSM_MEMKV_PLUGIN);
  auto db = OpenOk(*plugin, {{"memtable_entries", "16"}, {"fanout", "3"}});
  ASSERT_TRUE(db);
  // 200 keys, each written three times; every third deleted at the end.
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 200; i++) {
      ASSERT_TRUE(db->Put(Key(i), "v" + std::to_string(round) + "-" + std::to_string(i)).ok());
    }
  }
  for (int i = 0; i < 200; i += 3) ASSERT_TRUE(db->Delete(Key(i)).ok());
  for (int i = 0; i < 200; i++) {
    std::string value;
    Status s = db->Get(Key(i), &value);
    if (i % 3 == 0) {
      EXPECT_TRUE(s.IsNotFound()) << Key(i) << ": " << s.ToString();
    } else {
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(value, "v2-" + std::to_string(i));
    }
  }
  size_t returned = 0;
  ASSERT_TRUE(db->Scan(Key(0), 1000, &returned).ok());
  EXPECT_EQ(returned, 200u - 67u);  // the live keys, once each
  ASSERT_TRUE(db->Scan(Key(190), 5, &returned).ok());
  EXPECT_EQ(returned, 5u);

  // 667 writes of 16 per memtable: 41 flushes; a merge every 3 runs.
  const auto events = db->TakeEvents();
  int flushes = 0, merges = 0;
  uint64_t merged_in = 0, merged_out = 0;
  int64_t last_end = 0;
  for (const EngineEvent& e : events) {
    EXPECT_GE(e.end_ns, last_end);
    last_end = e.end_ns;
    if (e.kind == EngineEvent::Kind::kFlush) {
      flushes++;
      EXPECT_EQ(e.entries, 16u);
      EXPECT_GT(e.sealed_ns, 0);
    } else {
      merges++;
      EXPECT_EQ(e.output_level, 1);
      EXPECT_EQ(e.inputs, 3u);
      EXPECT_GE(e.input_bytes, e.output_bytes);
      merged_in += e.input_bytes;
      merged_out += e.output_bytes;
    }
  }
  EXPECT_GT(merged_in, merged_out);  // overwritten values and tombstones dropped
  EXPECT_EQ(flushes, 667 / 16);
  EXPECT_EQ(merges, 20);  // every 2 flushes after the first merge's 3
  EXPECT_TRUE(db->TakeEvents().empty());
  const Metrics m = db->GetMetrics();
  EXPECT_GT(m.at("bytes_flushed"), 0);
  EXPECT_GT(m.at("write_amplification"), 1.0);
  SettleReport report;
  ASSERT_TRUE(db->Settle(1.0, &report).ok());
  EXPECT_TRUE(report.supported);
  EXPECT_TRUE(report.idle);
  EXPECT_TRUE(db->Close().ok());
}

TEST(PluginTest, OptionsAreCheckedAgainstThePluginsTable) {
  auto plugin = LoadOk(LSM_MEMKV_PLUGIN);
  Status s = plugin->CheckOptions({{"fanot", "4"}});
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("engine plugin 'memkv'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("did you mean 'fanout'"), std::string::npos) << s.ToString();
  s = plugin->CheckOptions({{"fanout", "65"}, {"memtable_entries", "lots"}});
  EXPECT_NE(s.ToString().find("'fanout': bad value '65'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("'memtable_entries': bad value 'lots'"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(plugin->CheckOptions({{"fanout", "64"}}).ok());
}

TEST(PluginTest, ThePluginsOwnCheckSeesCanonicalValues) {
  auto plugin = LoadOk(Faulty("checked"));
  Status s = plugin->CheckOptions({{"memtable_entries", "16"}, {"fanout", "17"}});
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("fanout 17 exceeds memtable_entries 16"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(plugin->CheckOptions({{"memtable_entries", "16"}, {"fanout", "16"}}).ok());
  std::unique_ptr<KvAdapter> db;
  EXPECT_TRUE(plugin->Open("/x", {{"memtable_entries", "16"}, {"fanout", "17"}}, 0, &db)
                  .IsInvalidArgument());
}

TEST(PluginTest, AnOpenTablePassesUnlistedOptionsToTheCheck) {
  auto plugin = LoadOk(Faulty("open_checked"));
  EXPECT_TRUE(plugin->options_open());
  EXPECT_TRUE(plugin->CheckOptions({{"anything_else", "as written"}}).ok());
  Status s = plugin->CheckOptions({{"fanout", "99"}});  // listed: still checked by the table
  EXPECT_NE(s.ToString().find("'fanout': bad value '99'"), std::string::npos) << s.ToString();
  EXPECT_NE(LoadError(Faulty("open_unchecked"))
                .find("missing required function: check_options (options_open is set)"),
            std::string::npos);
}

TEST(PluginTest, RecordsWithSecondaryFieldsReachAPluginThatKeepsThem) {
  auto plugin = LoadOk(Faulty("records"));
  EXPECT_TRUE(plugin->HasSecondaryIndexes());
  std::unique_ptr<KvAdapter> db;
  ASSERT_TRUE(plugin->Open("/x", {}, 1, &db).ok());
  for (int i = 0; i < 100; i++) ASSERT_TRUE(db->PutRecord(Key(i), {uint64_t(i % 10)}, "v").ok());
  size_t returned = 0;
  ASSERT_TRUE(db->QuerySecondary(0, 2, 5, &returned).ok());
  EXPECT_EQ(returned, 30u);  // fields 2, 3 and 4: ten records each
  auto plain = LoadOk(LSM_MEMKV_PLUGIN);
  EXPECT_NE(plain->Open("/x", {}, 1, &db).ToString().find("keeps no secondary indexes"),
            std::string::npos);
  EXPECT_NE(LoadError(Faulty("half_records")).find("put_record and query_secondary: both or "
                                                   "neither"),
            std::string::npos);
}

TEST(PluginTest, BadPluginsAreRefusedWithTheReason) {
  EXPECT_NE(LoadError("/nonexistent/lsmbench-x.so").find("no such file"), std::string::npos);
  const std::string text = ::testing::TempDir() + "/not-a-plugin.so";
  std::ofstream(text) << "not an ELF file\n";
  EXPECT_NE(LoadError(text).find("not a loadable shared object"), std::string::npos);
  EXPECT_NE(LoadError(Faulty("abi")).find("ABI version 99; this lsm-driver speaks 1"),
            std::string::npos);
  EXPECT_NE(LoadError(Faulty("sizes")).find("event_size"), std::string::npos);
  const std::string missing = LoadError(Faulty("missing"));
  EXPECT_NE(missing.find("engine plugin 'faulty'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("missing required functions: put, scan"), std::string::npos) << missing;
}

TEST(PluginTest, EventsOutOfOrderFailTheRunWithTheReason) {
  auto plugin = LoadOk(Faulty("events_order"));
  auto db = OpenOk(*plugin, {{"memtable_entries", "16"}});
  for (int i = 0; i < 40; i++) ASSERT_TRUE(db->Put(Key(i), "v").ok());
  EXPECT_EQ(db->TakeEvents().size(), 2u);  // the first batch is in order: start at 1
  for (int i = 0; i < 40; i++) ASSERT_TRUE(db->Put(Key(i), "v").ok());
  EXPECT_TRUE(db->TakeEvents().empty());   // the second goes back in time
  Status s = db->Put("k", "v");
  EXPECT_TRUE(s.IsCorruption());
  // The message names the event: which of the batch, its kind, levels and times.
  for (const char* part : {"bad event ", " of ", ", levels ", ", end_ns ",
                           "): out of completion order"}) {
    EXPECT_NE(s.ToString().find(part), std::string::npos) << part << " in " << s.ToString();
  }
  EXPECT_FALSE(db->Close().ok());
}

TEST(PluginTest, APluginThatTellsNothingSaysSo) {
  auto plugin = LoadOk(Faulty("blind"));
  EXPECT_EQ(plugin->CannotTell(), (std::vector<std::string>{"events", "settle", "metrics"}));
  auto db = OpenOk(*plugin, {});
  SettleReport report;
  ASSERT_TRUE(db->Settle(1.0, &report).ok());
  EXPECT_FALSE(report.supported);
  EXPECT_TRUE(db->GetMetrics().empty());
  EXPECT_TRUE(db->TakeEvents().empty());
}

TEST(PluginDeathTest, ACrashNamesThePluginAndTheCall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto plugin = LoadOk(Faulty("crash_put"));
        auto db = OpenOk(*plugin, {});
        for (int i = 0; i < 200; i++) (void)db->Put(Key(i), "v");
      },
      "engine plugin 'faulty' \\(.*faulty-crash_put.so\\): SIGSEGV during its put");
}

TEST(PluginDeathTest, AHangInSettleEndsTheProcessWithTheReason) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("LSMBENCH_PLUGIN_LOOK_LIMIT_S", "0.5", 1);
        auto plugin = LoadOk(Faulty("hang_settle"));
        auto db = OpenOk(*plugin, {});
        SettleReport report;
        (void)db->Settle(30.0, &report);
      },
      ::testing::ExitedWithCode(1), "engine plugin 'faulty': background_work did not return");
}

TEST(PluginRegistryTest, APluginIsAnEngineByItsName) {
  std::string name;
  ASSERT_TRUE(LoadEnginePlugin(LSM_MEMKV_PLUGIN, &name).ok());
  EXPECT_EQ(name, "memkv");
  ASSERT_TRUE(LoadEnginePlugin(LSM_MEMKV_PLUGIN, &name).ok());  // again: a no-op
  const auto names = AdapterNames();
  EXPECT_EQ(std::count(names.begin(), names.end(), "memkv"), 1);
  std::unique_ptr<KvAdapter> db;
  ASSERT_TRUE(OpenAdapter("memkv", "/x", {{"fanout", "2"}}, &db).ok());
  EXPECT_TRUE(db->Put("a", "b").ok());
  EXPECT_TRUE(db->Close().ok());
  EXPECT_TRUE(CheckAdapterOptions("memkv", {{"fanuot", "2"}}).IsInvalidArgument());
  std::vector<OptionDescription> options;
  EXPECT_TRUE(DescribeAdapterOptions("memkv", &options).ok());
  EXPECT_EQ(options.size(), 2u);
  EXPECT_FALSE(AdapterHasSecondaryIndexes("memkv"));
  Status s = LoadEnginePlugin(Faulty("named_null"), &name);
  EXPECT_NE(s.ToString().find("the name of an engine compiled into lsm-driver"),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace lsmbench
