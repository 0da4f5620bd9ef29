#include "sim/engine_replay.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "driver/random.h"
#include "driver/zipfian.h"
#include "lsm/db.h"
#include "lsm/option_table.h"
#include "sim/simulator.h"

namespace lsm::sim {

namespace {

// A bijection on 64 bits (splitmix64's finalizer): distinct keys in a
// scrambled order, so flushed components overlap like random inserts do.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string Key(uint64_t i) {
  static const char kHex[] = "0123456789abcdef";
  std::string key = "user";
  const uint64_t h = Mix(i);
  for (int shift = 60; shift >= 0; shift -= 4) key.push_back(kHex[(h >> shift) & 15]);
  return key;
}

double WriteAmp(uint64_t flushed, uint64_t merged) {
  return flushed == 0 ? 0
                      : static_cast<double>(flushed + merged) / static_cast<double>(flushed);
}

// The writes' keys: new ids in order, or (a fraction update_fraction of the
// writes, once something exists) an existing id a zipfian distance back from
// the newest. The zipfian domain bounds the ids the run can insert; a draw
// beyond the ids inserted so far is redrawn, which leaves exactly the
// zipfian law over the existing ids (YCSB's "latest" on a growing store).
class WriteKeys {
 public:
  explicit WriteKeys(const ReplayOptions& o)
      : update_fraction_(o.update_fraction),
        rng_(o.seed),
        zipf_(update_fraction_ > 0 ? MaxInserts(o) : 1, o.update_theta) {}

  uint64_t Next() {
    if (inserted_ > 0 && update_fraction_ > 0 && rng_.UniformDouble() < update_fraction_) {
      uint64_t back;
      do {
        back = zipf_.Sample(rng_.UniformDouble());
      } while (back >= inserted_);
      updates_++;
      return inserted_ - 1 - back;
    }
    return inserted_++;
  }
  uint64_t updates() const { return updates_; }

 private:
  // Every flush holds at most a memtable of new records.
  static uint64_t MaxInserts(const ReplayOptions& o) {
    return (o.flushes + 1) * (o.engine.memtable_bytes / std::max<uint64_t>(o.value_bytes, 1) + 1);
  }

  const double update_fraction_;
  lsmbench::driver::Rng rng_;
  const lsmbench::driver::Zipfian zipf_;
  uint64_t inserted_ = 0;
  uint64_t updates_ = 0;
};

bool InSeries(const ReplayOptions& o, uint64_t flushes) {
  return o.series_every > 0 && (flushes % o.series_every == 0 || flushes == o.flushes);
}

Status RunEngine(const ReplayOptions& o, ReplayResult* r) {
  Options options = o.engine;
  Status s = SetOption(&options, "merge_policy", o.policy);
  if (!s.ok()) return s;
  options.sstable_bound = o.k;
  options.wal = WalMode::kOff;
  options.error_if_exists = true;
  std::unique_ptr<DB> db;
  s = DB::Open(options, o.dir, &db);
  if (!s.ok()) return s;
  std::string value(o.value_bytes, 'v');
  WriteKeys keys(o);
  uint64_t flushes = 0, flushed = 0;
  for (uint64_t i = 0; flushes < o.flushes; ++i) {
    for (size_t j = 0; j < value.size(); j += 8) {
      value[j] = static_cast<char>('a' + Mix(i + j) % 26);
    }
    s = db->Put(Key(keys.Next()), value);
    if (!s.ok()) return s;
    Stats st = db->GetStats();
    if (st.memory_components_immutable == 0 && st.flushes_completed == flushes) continue;
    // A flush started: let it and every merge it causes complete before the
    // next write, so that the engine decides as the instant model does.
    s = db->WaitForIdle();
    if (!s.ok()) return s;
    st = db->GetStats();
    if (st.flushes_completed != flushes + 1) {
      return Status::Corruption("replay: " + std::to_string(st.flushes_completed - flushes) +
                                " flushes at once; the memtable is too small for one write");
    }
    flushes = st.flushes_completed;
    r->flush_sizes.push_back(st.flush_bytes_written - flushed);
    flushed = st.flush_bytes_written;
    r->engine_max_sstables = std::max(r->engine_max_sstables, st.disk_components);
    if (InSeries(o, flushes)) {
      SeriesPoint point;
      point.flushes = flushes;
      point.engine_write_amp = WriteAmp(st.flush_bytes_written, st.merge_bytes_written);
      point.engine_sstables = st.disk_components;
      r->series.push_back(point);
    }
  }
  const Stats st = db->GetStats();
  r->engine_write_amp = WriteAmp(st.flush_bytes_written, st.merge_bytes_written);
  r->engine_avg_sstables = st.average_sstables;
  r->updates = keys.updates();
  db.reset();
  return Status::OK();
}

}  // namespace

Status RunReplay(const ReplayOptions& o, ReplayResult* r) {
  *r = ReplayResult();
  std::error_code ec;
  if (!(o.update_fraction >= 0 && o.update_fraction < 1)) {
    return Status::InvalidArgument("update_fraction", "must be in [0, 1)");
  }
  if (!(o.update_theta > 0 && o.update_theta < 1)) {
    return Status::InvalidArgument("update_theta", "must be in (0, 1)");
  }
  if (std::filesystem::exists(o.dir, ec)) {
    return Status::InvalidArgument("replay directory " + o.dir, "exists; give a fresh one");
  }
  Status s = RunEngine(o, r);
  std::filesystem::remove_all(o.dir, ec);
  if (!s.ok()) return s;

  SimOptions so;
  so.engine = o.engine;
  s = SetOption(&so.engine, "merge_policy", o.policy);
  if (!s.ok()) return s;
  so.engine.sstable_bound = o.k;
  std::unique_ptr<Simulator> sim;
  s = Simulator::Create(so, &sim);
  if (!s.ok()) return s;
  auto point = r->series.begin();
  for (uint64_t bytes : r->flush_sizes) {
    s = sim->Flush(bytes);
    if (!s.ok()) return s;
    if (point != r->series.end() && point->flushes == sim->Now().flushes) {
      const Checkpoint c = sim->Now();
      point->sim_write_amp = c.write_amp;
      point->sim_sstables = c.sstables;
      ++point;
    }
  }
  const Checkpoint c = sim->Now();
  r->sim_write_amp = c.write_amp;
  r->sim_avg_sstables = c.avg_sstables;
  return Status::OK();
}

}  // namespace lsm::sim
