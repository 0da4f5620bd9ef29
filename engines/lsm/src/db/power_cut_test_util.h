// Power-cut tests: writers whose acknowledged writes are counted, cuts taken
// by a PowerCutEnv's hook with what had been acknowledged before each, and
// the check that what a cut's disk recovers to is a state the writes allow.
#ifndef LSM_SRC_DB_POWER_CUT_TEST_UTIL_H_
#define LSM_SRC_DB_POWER_CUT_TEST_UTIL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/filenames.h"
#include "env/power_cut_env.h"
#include "lsm/options.h"
#include "lsm/status.h"

namespace lsm::test {

// One write of a writer: a key and its new value, or no value for a delete.
struct Write {
  std::string key;
  std::optional<std::string> value;
};

// Where a cut was taken: "sync of WAL", "sync of table", "directory sync", ...
// (a dataset's log is "sync of dataset log").
inline std::string DescribeCutPoint(PowerCutEnv::Event event, const std::string& path) {
  if (event == PowerCutEnv::Event::kSyncDir) return "directory sync";
  const std::string name = path.substr(path.rfind('/') + 1);
  if (name.rfind("dataset-", 0) == 0) return "sync of dataset log";
  uint64_t number;
  switch (ParseFileName(name, &number)) {
    case FileType::kWal: return "sync of WAL";
    case FileType::kTable: return "sync of table";
    case FileType::kManifest: return "sync of manifest";
    case FileType::kTemp: return "sync of CURRENT";
    default: return "sync of " + name;
  }
}

// A cut: the disk, and per writer the writes acknowledged before it, the
// writes a completed Flush had covered before it (a lower bound for modes
// that promise only what a flush made durable) and the writes begun by the
// time it was taken (what it may hold at most).
struct CutPoint {
  DiskImage image;
  std::vector<uint64_t> acked;
  std::vector<uint64_t> flushed;
  std::vector<uint64_t> begun;
  std::string where;
};

class CutLog {
 public:
  explicit CutLog(size_t writers) : begun_(writers), acked_(writers), flushed_(writers, 0) {}

  // A writer is about to issue its next write.
  void Begin(size_t writer) { begun_[writer].fetch_add(1, std::memory_order_acq_rel); }
  // A writer's write was acknowledged.
  void Acknowledged(size_t writer) { acked_[writer].fetch_add(1, std::memory_order_acq_rel); }
  std::vector<uint64_t> Acked() const { return Load(acked_); }
  // A Flush that began once `before` were acknowledged has returned OK.
  void Flushed(const std::vector<uint64_t>& before) {
    std::lock_guard<std::mutex> l(mu_);
    for (size_t w = 0; w < before.size(); w++) flushed_[w] = std::max(flushed_[w], before[w]);
  }

  // Takes a cut now. What was acknowledged is read before the disk (each
  // of those writes was synced before the cut), what was begun after it
  // (no later write can be on it).
  void Take(const PowerCutEnv& env, const PowerCutEnv::CutOptions& options, std::string where) {
    CutPoint cut;
    {
      std::lock_guard<std::mutex> l(mu_);
      cut.flushed = flushed_;
    }
    cut.acked = Acked();
    cut.image = env.Cut(options);
    cut.begun = Load(begun_);
    cut.where = std::move(where);
    Add(std::move(cut));
  }
  // Takes a cut during a recovery: it promises what the disk it recovers did.
  void TakeDuringRecovery(const PowerCutEnv& env, std::string where, const CutPoint& recovering) {
    CutPoint cut;
    cut.acked = recovering.acked;
    cut.flushed = recovering.flushed;
    cut.begun = recovering.begun;
    cut.image = env.Cut();
    cut.where = std::move(where);
    Add(std::move(cut));
  }

  // REQUIRES: no cut is being taken.
  std::vector<CutPoint>& cuts() { return cuts_; }

 private:
  static std::vector<uint64_t> Load(const std::vector<std::atomic<uint64_t>>& counters) {
    std::vector<uint64_t> values;
    for (const auto& c : counters) values.push_back(c.load(std::memory_order_acquire));
    return values;
  }
  void Add(CutPoint cut) {
    std::lock_guard<std::mutex> l(mu_);
    cuts_.push_back(std::move(cut));
  }

  std::vector<std::atomic<uint64_t>> begun_;
  std::vector<std::atomic<uint64_t>> acked_;
  std::mutex mu_;
  std::vector<uint64_t> flushed_;  // guarded by mu_
  std::vector<CutPoint> cuts_;     // guarded by mu_
};

// The keys of `actual` with this prefix, without it.
inline std::map<std::string, std::string> WithPrefix(
    const std::map<std::string, std::string>& actual, const std::string& prefix) {
  std::map<std::string, std::string> mine;
  for (auto it = actual.lower_bound(prefix);
       it != actual.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    mine.emplace(it->first.substr(prefix.size()), it->second);
  }
  return mine;
}

// Whether actual (key -> value) is the state after the first p writes, for
// some p in [lo, hi]: what survives is a prefix of the writes, and at least
// lo of them. One pass: the keys that differ are counted as p moves on.
inline bool IsPrefixState(const std::vector<Write>& writes, uint64_t lo, uint64_t hi,
                          const std::map<std::string, std::string>& actual) {
  hi = std::min<uint64_t>(hi, writes.size());
  std::map<std::string, std::optional<std::string>> state;
  for (uint64_t i = 0; i < lo && i < writes.size(); i++) state[writes[i].key] = writes[i].value;
  auto differs = [&](const std::string& key) {
    auto s = state.find(key);
    auto a = actual.find(key);
    const bool in_state = s != state.end() && s->second.has_value();
    if (in_state != (a != actual.end())) return 1;
    return in_state && *s->second != a->second ? 1 : 0;
  };
  std::set<std::string> keys;
  for (const auto& [key, value] : state) keys.insert(key);
  for (const auto& [key, value] : actual) keys.insert(key);
  int64_t diff = 0;
  for (const std::string& key : keys) diff += differs(key);
  for (uint64_t p = lo;; p++) {
    if (diff == 0) return true;
    if (p >= hi) return false;
    const Write& w = writes[p];
    diff -= differs(w.key);
    state[w.key] = w.value;
    diff += differs(w.key);
  }
}

// The keys whose value in actual no write allows: each key must hold its
// value after the first lo writes or the value of one of writes [lo, hi).
// (Weaker than IsPrefixState: for what survives when it need not be a prefix.)
inline std::vector<std::string> KeysNoWriteAllows(
    const std::vector<Write>& writes, uint64_t lo, uint64_t hi,
    const std::map<std::string, std::string>& actual) {
  hi = std::min<uint64_t>(hi, writes.size());
  std::map<std::string, std::set<std::optional<std::string>>> allowed;
  std::map<std::string, std::optional<std::string>> state;
  for (uint64_t i = 0; i < lo && i < writes.size(); i++) state[writes[i].key] = writes[i].value;
  for (const auto& [key, value] : state) allowed[key].insert(value);
  for (uint64_t i = lo; i < hi; i++) allowed[writes[i].key].insert(writes[i].value);
  std::vector<std::string> bad;
  for (const auto& [key, values] : allowed) {
    auto a = actual.find(key);
    std::optional<std::string> got;
    if (a != actual.end()) got = a->second;
    const bool never_written = state.count(key) == 0;
    if (values.count(got) == 0 && !(never_written && !got)) bad.push_back(key);
  }
  for (const auto& [key, value] : actual) {
    if (allowed.count(key) == 0) bad.push_back(key);
  }
  return bad;
}

// The first key at which actual differs from the state after the first lo
// writes, with both values (sizes of long ones) and the index of the last
// write to it, for a failure message.
inline std::string FirstDifference(const std::vector<Write>& writes, uint64_t lo,
                                   const std::map<std::string, std::string>& actual) {
  std::map<std::string, std::pair<std::optional<std::string>, uint64_t>> state;
  for (uint64_t i = 0; i < lo && i < writes.size(); i++) {
    state[writes[i].key] = {writes[i].value, i};
  }
  auto show = [](const std::optional<std::string>& v) {
    if (!v) return std::string("(none)");
    return v->size() <= 12 ? *v : v->substr(0, v->find('x')) + "+" + std::to_string(v->size());
  };
  for (const auto& [key, entry] : state) {
    auto a = actual.find(key);
    std::optional<std::string> got;
    if (a != actual.end()) got = a->second;
    if (got != entry.first) {
      return "key " + key + " holds " + show(got) + ", expected " + show(entry.first) +
             " (write " + std::to_string(entry.second) + ")";
    }
  }
  for (const auto& [key, value] : actual) {
    if (state.count(key) == 0) return "key " + key + " holds " + show(value) + ", never written";
  }
  return "no key differs";
}

// A writer's writes: puts and deletes over key_space keys, values of a few
// to a few hundred bytes, each tagged with its index so no two are alike.
inline std::vector<Write> RandomWrites(std::mt19937_64& rng, uint64_t count, int key_space) {
  std::vector<Write> writes;
  for (uint64_t i = 0; i < count; i++) {
    Write w;
    w.key = "k" + std::to_string(rng() % key_space);
    if (rng() % 6 != 0) w.value = "v" + std::to_string(i) + std::string(rng() % 300, 'x');
    writes.push_back(std::move(w));
  }
  return writes;
}

// What a power-cut run writes to: a DB or a dataset, opened on the Env the
// cuts are taken from, and opened again on each cut's disk.
class CutTarget {
 public:
  virtual ~CutTarget() = default;
  virtual Status Open(Env* env) = 0;
  // One write; key is already prefixed with its writer's prefix.
  virtual Status Apply(const std::string& key, const std::optional<std::string>& value) = 0;
  virtual Status Flush() = 0;
  virtual Status WaitForIdle() = 0;
  virtual uint64_t MergesCompleted() = 0;
  // Everything it holds, key -> value; a problem a scan shows (an index
  // that disagrees with the records, say) as an error.
  virtual Status Scan(std::map<std::string, std::string>* contents) = 0;
  virtual void Close() = 0;
};

inline std::string WriterPrefix(size_t writer) { return "w" + std::to_string(writer) + "/"; }

// What one run did, and what checking its cuts found.
struct CutOutcome {
  uint64_t cuts = 0, recovery_cuts = 0, acknowledged = 0, merges = 0;
  std::map<std::string, uint64_t> cuts_at;  // by DescribeCutPoint
  std::vector<std::string> failures;        // empty: every cut held (at most 5 are kept)

  std::string Report() const {
    std::string text = std::to_string(cuts) + " cuts + " + std::to_string(recovery_cuts) +
                       " during recovery, " + std::to_string(acknowledged) +
                       " writes acknowledged, " + std::to_string(merges) + " merges; at:";
    for (const auto& [where, n] : cuts_at) text += " " + where + " " + std::to_string(n) + ",";
    for (const std::string& f : failures) text += "\n  FAILED " + f;
    return text;
  }
};

struct CutRunSpec {
  std::function<std::unique_ptr<CutTarget>()> make_target;
  WalMode wal = WalMode::kSync;  // what the check holds the target to
  size_t writers = 1;
  uint64_t writes_per_writer = 600;
  int key_space = 150;
  // Values: RandomWrites's, or these (a dataset's records, say).
  std::function<std::vector<Write>(std::mt19937_64&, uint64_t count, int key_space)> make_writes =
      RandomWrites;
  uint64_t flush_every = 200;  // writer 0 calls Flush() after this many writes
  uint64_t take_one_in = 1;    // of the sync points, one in this many is cut at (randomly)
  bool keep_unsynced = false;  // the cuts keep a random prefix of unsynced bytes
  // Of every `recovery_one_in` cuts, the disk is opened with a cut before
  // each sync of the recovery (0: never).
  uint64_t recovery_one_in = 0;
};

// Whether a cut's contents are what the WAL mode promises; why not if not.
// sync: every acknowledged write, a prefix of each writer's writes; off, or
// async when the OS wrote back nothing unsynced: what a completed Flush
// covered, a prefix; async with unsynced bytes partly kept: what a Flush
// covered, and each key at a value some write gave it.
inline std::string CheckCut(const CutRunSpec& spec, const std::vector<std::vector<Write>>& writes,
                            const CutPoint& cut, const std::map<std::string, std::string>& actual) {
  for (const auto& [key, value] : actual) {
    if (key.size() < 3 || key[0] != 'w') return "a key no writer wrote: " + key;
  }
  for (size_t w = 0; w < writes.size(); w++) {
    const auto mine = WithPrefix(actual, WriterPrefix(w));
    const bool sync = spec.wal == WalMode::kSync;
    const uint64_t lo = sync ? cut.acked[w] : cut.flushed[w];
    const uint64_t hi = cut.begun[w];  // the writes in flight may have happened
    const bool prefix_promised = sync || spec.wal == WalMode::kOff || !spec.keep_unsynced;
    const std::string who = "writer " + std::to_string(w) + " (" + std::to_string(cut.acked[w]) +
                            " acknowledged, " + std::to_string(lo) + " promised)";
    if (prefix_promised && !IsPrefixState(writes[w], lo, hi, mine)) {
      return who + ": not a prefix of its writes; " + FirstDifference(writes[w], lo, mine);
    }
    if (!prefix_promised) {
      const auto bad = KeysNoWriteAllows(writes[w], lo, hi, mine);
      if (!bad.empty()) {
        return who + ": " + std::to_string(bad.size()) + " keys hold what no write allows; " +
               FirstDifference(writes[w], lo, mine);
      }
    }
  }
  return "";
}

// Opens the disk a cut left and reads it; with recovery_log, cuts before
// each sync of the recovery.
inline Status OpenCut(const CutRunSpec& spec, const CutPoint& cut, CutLog* recovery_log,
                      std::map<std::string, std::string>* actual) {
  std::unique_ptr<Env> mem = NewMemEnv();
  PowerCutEnv env(mem.get());
  Status s = env.Restore(cut.image);
  if (!s.ok()) return s;
  if (recovery_log != nullptr) {
    env.SetHook([&](PowerCutEnv::Event event, const std::string& path) {
      recovery_log->TakeDuringRecovery(env, "recovery, " + DescribeCutPoint(event, path), cut);
    });
  }
  std::unique_ptr<CutTarget> target = spec.make_target();
  s = target->Open(&env);
  env.SetHook(nullptr);
  if (s.ok()) s = target->Scan(actual);
  target->Close();  // before the Env it uses
  return s;
}

// Runs the writers with cuts taken at sync points, then opens every cut (and
// the cuts of some recoveries) and checks it.
inline CutOutcome RunWithCuts(const CutRunSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<Write>> writes;
  for (size_t w = 0; w < spec.writers; w++) {
    writes.push_back(spec.make_writes(rng, spec.writes_per_writer, spec.key_space));
  }
  CutOutcome out;
  std::unique_ptr<Env> mem = NewMemEnv();
  PowerCutEnv env(mem.get());
  CutLog log(spec.writers);
  std::mutex pick_mu;
  std::mt19937_64 pick(rng());
  env.SetHook([&](PowerCutEnv::Event event, const std::string& path) {
    PowerCutEnv::CutOptions options;
    {
      std::lock_guard<std::mutex> l(pick_mu);
      if (pick() % spec.take_one_in != 0) return;
      options.keep_unsynced = spec.keep_unsynced;
      options.seed = pick();
    }
    log.Take(env, options, DescribeCutPoint(event, path));
  });
  std::unique_ptr<CutTarget> target = spec.make_target();
  Status s = target->Open(&env);
  if (!s.ok()) {
    out.failures.push_back("open: " + s.ToString());
    return out;
  }
  auto writer = [&](size_t w) {
    for (uint64_t i = 0; i < writes[w].size(); i++) {
      log.Begin(w);
      if (!target->Apply(WriterPrefix(w) + writes[w][i].key, writes[w][i].value).ok()) return;
      log.Acknowledged(w);
      if (w == 0 && (i + 1) % spec.flush_every == 0) {
        const std::vector<uint64_t> before = log.Acked();
        if (target->Flush().ok()) log.Flushed(before);
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < spec.writers; w++) threads.emplace_back(writer, w);
  writer(0);
  for (std::thread& t : threads) t.join();
  s = target->WaitForIdle();
  if (!s.ok()) out.failures.push_back("WaitForIdle: " + s.ToString());
  out.merges = target->MergesCompleted();
  log.Take(env, {}, "after the run");
  env.SetHook(nullptr);
  target->Close();
  for (uint64_t a : log.Acked()) out.acknowledged += a;
  if (out.acknowledged != spec.writers * spec.writes_per_writer) {
    out.failures.push_back("only " + std::to_string(out.acknowledged) + " writes acknowledged");
  }

  std::vector<CutPoint>& cuts = log.cuts();
  for (size_t c = 0; c < cuts.size() && out.failures.size() < 5; c++) {
    const CutPoint& cut = cuts[c];
    out.cuts++;
    out.cuts_at[cut.where]++;
    const bool cut_recovery = spec.recovery_one_in > 0 && c % spec.recovery_one_in == 0;
    CutLog recovery_log(spec.writers);
    std::map<std::string, std::string> actual;
    const std::string what = "cut " + std::to_string(c) + " (" + cut.where + ", " +
                             std::to_string(cut.image.files.size()) + " files)";
    s = OpenCut(spec, cut, cut_recovery ? &recovery_log : nullptr, &actual);
    if (!s.ok()) {
      out.failures.push_back(what + ": open failed: " + s.ToString());
      continue;
    }
    std::string why = CheckCut(spec, writes, cut, actual);
    if (!why.empty()) out.failures.push_back(what + ": " + why);
    for (const CutPoint& again : recovery_log.cuts()) {
      out.recovery_cuts++;
      out.cuts_at[again.where]++;
      s = OpenCut(spec, again, nullptr, &actual);
      if (!s.ok()) {
        out.failures.push_back(what + ", then " + again.where + ": open failed: " + s.ToString());
        continue;
      }
      why = CheckCut(spec, writes, again, actual);
      if (!why.empty()) out.failures.push_back(what + ", then " + again.where + ": " + why);
    }
  }
  return out;
}

}  // namespace lsm::test

#endif  // LSM_SRC_DB_POWER_CUT_TEST_UTIL_H_
