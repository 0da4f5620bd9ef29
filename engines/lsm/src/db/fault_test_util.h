// A database on an in-memory Env that injects faults (FaultEnv), with a model
// of the writes it acknowledged: what the fault tests check the engine
// against.
#ifndef LSM_SRC_DB_FAULT_TEST_UTIL_H_
#define LSM_SRC_DB_FAULT_TEST_UTIL_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/manifest.h"
#include "db/test_util.h"
#include "env/fault_env.h"
#include "lsm/db.h"

namespace lsm::test {

// True for the error FaultEnv injects (and nothing else).
inline bool IsInjected(const Status& s) {
  return s.IsIOError() && s.ToString().find("(injected)") != std::string::npos;
}

class FaultyDB {
 public:
  // options.env is replaced by the fault Env.
  explicit FaultyDB(Options options) : options_(std::move(options)) { options_.env = &env_; }
  ~FaultyDB() { db_.reset(); }  // before the Envs it uses
  FaultyDB(const FaultyDB&) = delete;
  FaultyDB& operator=(const FaultyDB&) = delete;

  FaultEnv& env() { return env_; }
  DB* db() { return db_.get(); }
  const Options& options() const { return options_; }

  // After a reopen, call Differences(true) before writing.
  Status Open() {
    db_.reset();
    Status s = DB::Open(options_, kDir, &db_);
    if (s.ok()) failed_since_open_ = false;
    return s;
  }
  // A clean close (it must not hang whatever failed before).
  void Close() { db_.reset(); }

  // One write, recorded if acknowledged. The first write to fail since the
  // last Open is in doubt: its WAL record may be whole all the same (only
  // its sync failed, say), so a reopen may show it. Every later one must
  // fail before it reaches the WAL.
  Status Put(const std::string& key, const std::string& value) { return Write(key, value); }
  Status Delete(const std::string& key) { return Write(key, std::nullopt); }

  // The keys at which the DB differs from the acknowledged writes, found by
  // a full scan: acknowledged writes lost, or writes that should not be
  // there. after_reopen: the write in doubt may show too, and if it does it
  // counts as acknowledged from now on. Scan errors come back as keys too.
  std::vector<std::string> Differences(bool after_reopen) {
    std::map<std::string, std::string> actual;
    std::unique_ptr<Iterator> it = db_->NewIterator();
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      actual.emplace(std::string(it->key()), std::string(it->value()));
    }
    if (!it->status().ok()) return {"<scan failed: " + it->status().ToString() + ">"};
    if (after_reopen && in_doubt_) {
      auto found = actual.find(in_doubt_->key);
      const bool made = in_doubt_->value
                            ? found != actual.end() && found->second == *in_doubt_->value
                            : found == actual.end();
      if (made) Apply(in_doubt_->key, in_doubt_->value);
    }
    if (after_reopen) in_doubt_.reset();
    std::vector<std::string> differ;
    auto a = actual.begin();
    auto m = model_.begin();
    while (a != actual.end() || m != model_.end()) {
      if (m == model_.end() || (a != actual.end() && a->first < m->first)) {
        differ.push_back((a++)->first);
      } else if (a == actual.end() || m->first < a->first) {
        differ.push_back((m++)->first);
      } else {
        if (a->second != m->second) differ.push_back(a->first);
        ++a;
        ++m;
      }
    }
    return differ;
  }

  // The directory holds the live files only: the tables and the one
  // manifest that CURRENT names, no temp file, no WAL that is replayed no
  // more. REQUIRES: closed (so no reader still pins a replaced component).
  void ExpectOnlyLiveFiles() {
    ManifestState state;
    ASSERT_TRUE(RecoverManifest(base_.get(), kDir, &state).ok());
    std::set<uint64_t> live;
    for (const ComponentMeta& c : state.stack) live.insert(c.number);
    std::vector<std::string> children;
    ASSERT_TRUE(base_->GetChildren(kDir, &children).ok());
    for (const std::string& name : children) {
      uint64_t number;
      switch (ParseFileName(name, &number)) {
        case FileType::kTable:
          EXPECT_EQ(live.erase(number), 1u) << "stray table file " << name;
          break;
        case FileType::kManifest:
          EXPECT_EQ(number, state.manifest_number) << "stray manifest " << name;
          break;
        case FileType::kWal:
          EXPECT_GE(number, state.log_number) << "stray WAL " << name;
          break;
        case FileType::kTemp: ADD_FAILURE() << "stray temp file " << name; break;
        default: break;
      }
    }
    EXPECT_TRUE(live.empty()) << live.size() << " live table files are missing";
  }

  // The database stopped at a background error (the first failure of a
  // flush, a merge or the WAL, which may be another than the one `failed`
  // returned when both happened at once): it says so everywhere, hangs
  // nowhere, and still reads as the acknowledged writes. Returns the error.
  std::string ExpectStopped() {
    const std::string error = db_->GetStats().background_error;
    EXPECT_NE(error, "");
    // With the error set, no write reaches the WAL: none of these is in
    // doubt, and a reopen must not show them.
    failed_since_open_ = true;
    EXPECT_EQ(Put("later", "v").ToString(), error);
    EXPECT_EQ(Delete("later").ToString(), error);
    EXPECT_EQ(db_->Flush().ToString(), error);
    EXPECT_EQ(db_->WaitForIdle().ToString(), error);
    EXPECT_EQ(Differences(false), std::vector<std::string>{});
    return error;
  }

  // The acknowledged state: what reads must return while the DB is open.
  const std::map<std::string, std::string>& model() const { return model_; }
  uint64_t acknowledged() const { return acknowledged_; }

 private:
  static constexpr const char* kDir = "/faulty";

  Status Write(const std::string& key, const std::optional<std::string>& value) {
    Status s = value ? db_->Put(key, *value) : db_->Delete(key);
    if (s.ok()) {
      Apply(key, value);
      acknowledged_++;
    } else if (!failed_since_open_) {
      failed_since_open_ = true;
      in_doubt_ = InDoubt{key, value};
    }
    return s;
  }
  void Apply(const std::string& key, const std::optional<std::string>& value) {
    if (value) {
      model_[key] = *value;
    } else {
      model_.erase(key);
    }
  }

  struct InDoubt {
    std::string key;
    std::optional<std::string> value;  // none: a delete
  };

  std::unique_ptr<Env> base_ = NewMemEnv();
  FaultEnv env_{base_.get(), DbFileKind};
  Options options_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> model_;  // the acknowledged state
  std::optional<InDoubt> in_doubt_;
  bool failed_since_open_ = false;
  uint64_t acknowledged_ = 0;
};

}  // namespace lsm::test

#endif  // LSM_SRC_DB_FAULT_TEST_UTIL_H_
