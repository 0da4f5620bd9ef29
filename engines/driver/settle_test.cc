#include "driver/settle.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace lsmbench {
namespace driver {
namespace {

// An engine whose background work is scripted: busy for `busy_calls` calls
// of Settle (each waiting out its time limit), then idle.
class ScriptedAdapter final : public KvAdapter {
 public:
  explicit ScriptedAdapter(int busy_calls, bool supported = true)
      : busy_calls_(busy_calls), supported_(supported) {}

  Status Put(std::string_view, std::string_view) override { return Status::OK(); }
  Status Delete(std::string_view) override { return Status::OK(); }
  Status Get(std::string_view, std::string*) override { return Status::NotFound("none"); }
  Status Scan(std::string_view, size_t, size_t* returned) override {
    *returned = 0;
    return Status::OK();
  }
  Metrics GetMetrics() override { return {}; }
  Status Close() override { return Status::OK(); }

  std::vector<EngineEvent> TakeEvents() override {
    EngineEvent flush, merge;
    merge.kind = EngineEvent::Kind::kMerge;
    return {flush, merge, flush};
  }

  Status Settle(double timeout_s, SettleReport* report) override {
    if (!supported_) return KvAdapter::Settle(timeout_s, report);
    limits.push_back(timeout_s);
    if (fail) return Status::IOError("a background flush or merge failed", "disk full");
    *report = SettleReport();
    report->supported = true;
    report->idle = static_cast<int>(limits.size()) > busy_calls_;
    report->detail = report->idle ? "quiet" : "busy";
    if (!report->idle) std::this_thread::sleep_for(std::chrono::duration<double>(timeout_s));
    return Status::OK();
  }

  std::vector<double> limits;  // each call's time limit
  bool fail = false;

 private:
  const int busy_calls_;
  const bool supported_;
};

TEST(SettleTest, IdleAfterSomeSlicesAndTheEventsAreTakenOut) {
  ScriptedAdapter adapter(2);
  SettleOutcome o;
  ASSERT_TRUE(SettleEngine(&adapter, 60, nullptr, &o).ok());
  EXPECT_EQ(o.limit_s, 60);
  EXPECT_TRUE(o.report.supported);
  EXPECT_TRUE(o.report.idle);
  EXPECT_FALSE(o.timed_out);
  EXPECT_FALSE(o.interrupted);
  EXPECT_EQ(o.report.detail, "quiet");
  ASSERT_EQ(adapter.limits.size(), 3u);
  for (double limit : adapter.limits) EXPECT_EQ(limit, 0.25);  // slices
  EXPECT_GE(o.report.waited_s, 0.5);
  EXPECT_EQ(o.flushes, 2u);
  EXPECT_EQ(o.merges, 1u);
}

// Busy throughout: the wait ends at the limit (the last slice is what is
// left of it) and says it timed out.
TEST(SettleTest, BusyUntilTheLimitTimesOut) {
  ScriptedAdapter adapter(1000);
  SettleOutcome o;
  ASSERT_TRUE(SettleEngine(&adapter, 0.6, nullptr, &o).ok());
  EXPECT_TRUE(o.report.supported);
  EXPECT_FALSE(o.report.idle);
  EXPECT_TRUE(o.timed_out);
  EXPECT_EQ(o.report.detail, "busy");
  EXPECT_GE(o.report.waited_s, 0.6);
  ASSERT_GE(adapter.limits.size(), 2u);
  EXPECT_LE(adapter.limits.back(), 0.25);
}

TEST(SettleTest, AStopSignalEndsTheWait) {
  ScriptedAdapter adapter(1000);
  std::atomic<int> stop{2};
  SettleOutcome o;
  ASSERT_TRUE(SettleEngine(&adapter, 3600, &stop, &o).ok());
  EXPECT_EQ(adapter.limits.size(), 1u);
  EXPECT_TRUE(o.interrupted);
  EXPECT_FALSE(o.report.idle);
  EXPECT_FALSE(o.timed_out);
}

TEST(SettleTest, AnEngineThatCannotTell) {
  ScriptedAdapter adapter(0, /*supported=*/false);
  SettleOutcome o;
  ASSERT_TRUE(SettleEngine(&adapter, 60, nullptr, &o).ok());
  EXPECT_FALSE(o.report.supported);
  EXPECT_FALSE(o.report.idle);
  EXPECT_FALSE(o.timed_out);
  EXPECT_EQ(o.report.waited_s, 0);
  EXPECT_EQ(o.report.detail, "this engine cannot tell its pending flushes and merges");
}

TEST(SettleTest, AnEngineErrorIsReturned) {
  ScriptedAdapter adapter(1000);
  adapter.fail = true;
  SettleOutcome o;
  Status s = SettleEngine(&adapter, 60, nullptr, &o);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_FALSE(o.timed_out);
}

TEST(SettleTest, NullEngineIsIdleAtOnce) {
  std::unique_ptr<KvAdapter> adapter;
  ASSERT_TRUE(OpenAdapter("null", "", {}, &adapter).ok());
  SettleOutcome o;
  ASSERT_TRUE(SettleEngine(adapter.get(), 60, nullptr, &o).ok());
  EXPECT_TRUE(o.report.supported);
  EXPECT_TRUE(o.report.idle);
  EXPECT_FALSE(o.timed_out);
  EXPECT_EQ(o.flushes + o.merges, 0u);
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
