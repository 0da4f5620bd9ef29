#include "adapters/settle_poll.h"

#include "gtest/gtest.h"

namespace lsmbench {
namespace {

// A probe that replays a script of looks, repeating the last one.
class Script {
 public:
  explicit Script(std::vector<BackgroundWork> looks) : looks_(std::move(looks)) {}
  std::function<Status(BackgroundWork*)> Probe() {
    return [this](BackgroundWork* w) {
      *w = looks_[std::min(calls_, looks_.size() - 1)];
      calls_++;
      return Status::OK();
    };
  }
  size_t calls() const { return calls_; }

 private:
  std::vector<BackgroundWork> looks_;
  size_t calls_ = 0;
};

BackgroundWork Busy(uint64_t completed) { return {true, completed, "busy"}; }
BackgroundWork Quiet(uint64_t completed) { return {false, completed, "quiet"}; }

TEST(SettlePollTest, IdleTakesTwoQuietLooksInARow) {
  Script script({Busy(0), Busy(0), Quiet(1), Quiet(1)});
  SettleReport r;
  ASSERT_TRUE(PollUntilIdle(60, script.Probe(), &r).ok());
  EXPECT_TRUE(r.supported);
  EXPECT_TRUE(r.idle);
  EXPECT_EQ(script.calls(), 4u);
  EXPECT_EQ(r.detail, "quiet");
  EXPECT_GE(r.waited_s, 0.0);
}

// Nothing was seen running, but a merge completed between two looks: work
// went on in between, so the quiet looks start again.
TEST(SettlePollTest, WorkCompletedBetweenQuietLooksIsNotIdle) {
  Script script({Quiet(0), Quiet(1), Quiet(2), Quiet(2)});
  SettleReport r;
  ASSERT_TRUE(PollUntilIdle(60, script.Probe(), &r).ok());
  EXPECT_TRUE(r.idle);
  EXPECT_EQ(script.calls(), 4u);
}

TEST(SettlePollTest, ALimitOfZeroIsOneLook) {
  Script busy({Busy(0)});
  SettleReport r;
  ASSERT_TRUE(PollUntilIdle(0, busy.Probe(), &r).ok());
  EXPECT_EQ(busy.calls(), 1u);
  EXPECT_TRUE(r.supported);
  EXPECT_FALSE(r.idle);
  EXPECT_EQ(r.detail, "busy");

  Script quiet({Quiet(0)});
  ASSERT_TRUE(PollUntilIdle(0, quiet.Probe(), &r).ok());
  EXPECT_EQ(quiet.calls(), 1u);
  EXPECT_TRUE(r.idle);
}

// Busy throughout: the wait ends at the limit, not idle. (Only a lower bound
// on the time: a loaded machine may take longer, never shorter.)
TEST(SettlePollTest, BusyUntilTheLimit) {
  Script script({Busy(0)});
  SettleReport r;
  ASSERT_TRUE(PollUntilIdle(0.05, script.Probe(), &r).ok());
  EXPECT_FALSE(r.idle);
  EXPECT_GE(r.waited_s, 0.05);
  EXPECT_GE(script.calls(), 2u);
}

TEST(SettlePollTest, AProbeErrorEndsTheWait) {
  int calls = 0;
  SettleReport r;
  Status s = PollUntilIdle(
      60,
      [&calls](BackgroundWork* w) {
        if (++calls == 3) return Status::IOError("a background flush or merge failed", "disk");
        w->busy = true;
        return Status::OK();
      },
      &r);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(r.idle);
}

}  // namespace
}  // namespace lsmbench
