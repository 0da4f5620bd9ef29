#include "dataset/dataset_impl.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>

#include "env/durable_dir.h"
#include "env/io_budget_env.h"

namespace lsm {
namespace {

// The memory an entry costs beyond its key and value: the memtable's
// sequence number and type, length prefixes, skiplist node and the arena's
// block ends (measured: 2,000 puts of 126 bytes took 180 bytes each).
constexpr uint64_t kEntryOverheadBytes = 48;

constexpr char kDescriptorName[] = "DATASET";

std::string LogFileName(const std::string& dir, uint64_t number) {
  char name[64];
  std::snprintf(name, sizeof(name), "/dataset-%06" PRIu64 ".log", number);
  return dir + name;
}

bool ParseLogFileName(const std::string& name, uint64_t* number) {
  unsigned long long n = 0;
  int consumed = 0;
  if (std::sscanf(name.c_str(), "dataset-%llu.log%n", &n, &consumed) != 1 ||
      consumed != static_cast<int>(name.size())) {
    return false;
  }
  *number = n;
  return true;
}

std::string TreeDir(const std::string& dir, size_t tree) {
  return tree == 0 ? dir + "/primary" : dir + "/secondary-" + std::to_string(tree - 1);
}

uint64_t WriteBytes(const std::vector<dataset::TreeWrite>& writes) {
  uint64_t bytes = 0;
  for (const auto& w : writes) bytes += w.key.size() + w.value.size() + kEntryOverheadBytes;
  return bytes;
}

}  // namespace

Dataset::~Dataset() = default;

Status Dataset::Open(const DatasetOptions& options, const std::string& dir,
                     std::unique_ptr<Dataset>* dataset) {
  dataset->reset();
  if (options.secondary_indexes < 0 || options.secondary_indexes > kMaxSecondaryIndexes) {
    return Status::InvalidArgument(
        "secondary_indexes", "must be 0.." + std::to_string(kMaxSecondaryIndexes) + ", got " +
                                 std::to_string(options.secondary_indexes));
  }
  auto impl = std::make_unique<DatasetImpl>(options, dir);
  Status s = impl->Recover();
  if (!s.ok()) return s;
  *dataset = std::move(impl);
  return Status::OK();
}

DatasetImpl::DatasetImpl(const DatasetOptions& options, std::string dir)
    : options_(options),
      dir_(std::move(dir)),
      base_env_(options.options.env != nullptr ? options.options.env : Env::Default()) {
  const Options& o = options.options;
  if (o.io_budget_bytes_per_sec > 0) {
    io_budget_ = std::make_shared<IoBudget>(o.io_budget_bytes_per_sec);
  }
  if (io_budget_ != nullptr || o.force_bytes > 0) {
    budget_env_ = NewIoBudgetEnv(base_env_, io_budget_, o.force_bytes, o.io_budget_charge_reads);
  }
}

DatasetImpl::~DatasetImpl() {
  if (flush_thread_.joinable()) {
    // A clean close leaves every write in the trees and an empty log.
    Flush();
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutting_down_ = true;
    }
    flush_cv_.notify_all();
    round_cv_.notify_all();
    writers_cv_.notify_all();
    flush_thread_.join();
  }
  if (log_file_) {
    if (options_.options.wal == WalMode::kSync) log_file_->Sync();
    log_file_->Close();
  }
  trees_.clear();
  if (dir_lock_) base_env_->UnlockFile(std::move(dir_lock_));
}

// ---------------------------------------------------------------- opening

Status DatasetImpl::Recover() {
  const Options& o = options_.options;
  const bool exists = base_env_->FileExists(dir_ + "/" + kDescriptorName);
  if (!exists && !o.create_if_missing) {
    return Status::InvalidArgument("dataset does not exist (create_if_missing is false)", dir_);
  }
  if (exists && o.error_if_exists) {
    return Status::InvalidArgument("dataset exists (error_if_exists is true)", dir_);
  }
  Status s = CreateDirDurably(base_env_, dir_);
  if (s.ok()) s = base_env_->LockFile(dir_ + "/LOCK", &dir_lock_);
  if (s.ok()) s = CheckDescriptor();
  if (s.ok()) s = OpenTrees();
  if (!s.ok()) return s;

  const std::vector<uint64_t> logs = LogNumbers();
  s = ReplayLogs(logs);
  if (!s.ok()) return s;
  log_number_ = logs.empty() ? 1 : logs.back() + 1;
  s = NewLog();
  if (!s.ok()) return s;
  flush_thread_ = std::thread([this] { FlushLoop(); });
  return Status::OK();
}

Status DatasetImpl::CheckDescriptor() {
  const std::string fname = dir_ + "/" + kDescriptorName;
  const std::string expected =
      "secondary_indexes " + std::to_string(options_.secondary_indexes) + "\n";
  if (base_env_->FileExists(fname)) {
    std::unique_ptr<SequentialFile> file;
    Status s = base_env_->NewSequentialFile(fname, &file);
    if (!s.ok()) return s;
    char scratch[256];
    std::string_view got;
    s = file->Read(sizeof(scratch), &got, scratch);
    if (!s.ok()) return s;
    if (got != expected) {
      return Status::InvalidArgument(
          "the dataset was created with other secondary indexes",
          dir_ + " holds '" + std::string(got.substr(0, got.find('\n'))) + "', asked for " +
              std::to_string(options_.secondary_indexes));
    }
    return Status::OK();
  }
  // Written whole under a temporary name, then renamed: a crash leaves the
  // descriptor absent or complete.
  const std::string tmp = fname + ".tmp";
  std::unique_ptr<WritableFile> file;
  Status s = base_env_->NewWritableFile(tmp, &file);
  if (s.ok()) s = file->Append(expected);
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = base_env_->RenameFile(tmp, fname);
  if (s.ok()) s = base_env_->SyncDir(dir_);
  return s;
}

Status DatasetImpl::OpenTrees() {
  Options o = options_.options;
  o.env = budget_env_ != nullptr ? budget_env_.get() : base_env_;
  o.wal = WalMode::kOff;  // the dataset's log covers every tree
  o.io_budget_bytes_per_sec = 0;  // the dataset's budget Env charges all trees together
  o.force_bytes = 0;
  o.create_if_missing = true;
  o.error_if_exists = false;
  // Only flush rounds switch memtables: a tree never fills up on its own (the
  // dataset's count of the bytes written is an estimate of the arena's).
  o.memtable_bytes = std::min<size_t>(2 * o.memtable_bytes, 64 * kGiB);
  const size_t n = 1 + static_cast<size_t>(options_.secondary_indexes);
  for (size_t i = 0; i < n; i++) {
    o.listener = i == 0 ? options_.options.listener : nullptr;
    std::unique_ptr<DBImpl> tree;
    Status s = DBImpl::OpenImpl(o, TreeDir(dir_, i), &tree);
    if (!s.ok()) return s;
    trees_.push_back(std::move(tree));
  }
  return Status::OK();
}

std::vector<uint64_t> DatasetImpl::LogNumbers() {
  std::vector<std::string> children;
  std::vector<uint64_t> numbers;
  if (!base_env_->GetChildren(dir_, &children).ok()) return numbers;
  for (const std::string& name : children) {
    uint64_t number;
    if (ParseLogFileName(name, &number)) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

Status DatasetImpl::ReplayLogs(const std::vector<uint64_t>& numbers) {
  if (numbers.empty()) return Status::OK();
  std::vector<dataset::TreeWrite> writes;
  for (uint64_t number : numbers) {
    const std::string fname = LogFileName(dir_, number);
    std::unique_ptr<SequentialFile> file;
    Status s = base_env_->NewSequentialFile(fname, &file);
    if (!s.ok()) return s;
    // A torn tail ends the log: those writes were never acknowledged.
    log::Reader reader(file.get(), fname);
    std::string scratch;
    std::string_view record;
    while (reader.ReadRecord(&record, &scratch)) {
      if (!dataset::DecodeLogRecord(record, &writes)) {
        return Status::Corruption("bad dataset log record", fname);
      }
      for (const auto& w : writes) {
        if (w.tree >= trees_.size()) return Status::Corruption("bad dataset log record", fname);
      }
      s = Apply(writes);
      if (!s.ok()) return s;
    }
    if (!reader.status().ok()) return reader.status();
  }
  // Once every tree holds the replayed writes in a disk component, the logs
  // can go; a crash before that replays them again.
  for (auto& tree : trees_) {
    Status s = tree->Flush();
    if (!s.ok()) return s;
  }
  for (uint64_t number : numbers) base_env_->RemoveFile(LogFileName(dir_, number));
  return base_env_->SyncDir(dir_);
}

Status DatasetImpl::NewLog() {
  Status s = base_env_->NewWritableFile(LogFileName(dir_, log_number_), &log_file_);
  if (!s.ok()) return s;
  log_ = std::make_unique<log::Writer>(log_file_.get());
  // The new log's directory entry must survive a crash before its writes do.
  return base_env_->SyncDir(dir_);
}

// ---------------------------------------------------------------- writes

std::mutex& DatasetImpl::StripeFor(std::string_view key) {
  return stripes_[std::hash<std::string_view>{}(key) % kKeyStripes];
}

Status DatasetImpl::Put(std::string_view key, const std::vector<uint64_t>& fields,
                        std::string_view payload) {
  if (fields.size() != static_cast<size_t>(options_.secondary_indexes)) {
    return Status::InvalidArgument(
        "fields", "a record of this dataset has " + std::to_string(options_.secondary_indexes) +
                      " secondary fields, got " + std::to_string(fields.size()));
  }
  return Write(key, false, fields, payload);
}

Status DatasetImpl::Delete(std::string_view key) { return Write(key, true, {}, {}); }

Status DatasetImpl::Write(std::string_view key, bool is_delete,
                          const std::vector<uint64_t>& fields, std::string_view payload) {
  if (key.size() > kMaxKeyBytes - 8) {
    return Status::InvalidArgument("key too large",
                                   std::to_string(key.size()) + " bytes > 64 KiB - 8");
  }
  std::lock_guard<std::mutex> stripe(StripeFor(key));
  std::vector<dataset::TreeWrite> writes;
  std::vector<uint64_t> old_fields;
  bool has_old = false;
  if (options_.options.secondary_maintenance == SecondaryMaintenance::kEager &&
      options_.secondary_indexes > 0) {
    std::string old;
    Status s = trees_[0]->Get(key, &old);
    counters_.lookups.fetch_add(1, std::memory_order_relaxed);
    if (s.ok()) {
      if (!dataset::DecodeRecordValue(old, &old_fields, nullptr) ||
          old_fields.size() != static_cast<size_t>(options_.secondary_indexes)) {
        return Status::Corruption("bad record in the primary index", std::string(key));
      }
      has_old = true;
    } else if (!s.IsNotFound()) {
      return s;
    }
  }
  // Under eager maintenance an unchanged field keeps its entry.
  auto unchanged = [&](size_t i) { return has_old && !is_delete && old_fields[i] == fields[i]; };
  uint64_t antimatter = 0;
  for (size_t i = 0; has_old && i < old_fields.size(); i++) {
    if (unchanged(i)) continue;
    writes.push_back(
        {static_cast<uint32_t>(1 + i), true, dataset::SecondaryKey(old_fields[i], key), ""});
    antimatter++;
  }
  writes.push_back({0, is_delete, std::string(key),
                    is_delete ? std::string() : dataset::EncodeRecordValue(fields, payload)});
  for (size_t i = 0; !is_delete && i < fields.size(); i++) {
    if (unchanged(i)) continue;
    writes.push_back(
        {static_cast<uint32_t>(1 + i), false, dataset::SecondaryKey(fields[i], key), ""});
  }

  Status s = EnterLogSection();
  if (!s.ok()) return s;
  s = AppendToLog(dataset::EncodeLogRecord(writes));
  if (s.ok()) s = Apply(writes);
  ExitLogSection(WriteBytes(writes));
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    SetBackgroundError(s);
    return s;
  }
  (is_delete ? counters_.deletes : counters_.puts).fetch_add(1, std::memory_order_relaxed);
  counters_.antimatter.fetch_add(antimatter, std::memory_order_relaxed);
  return Status::OK();
}

Status DatasetImpl::EnterLogSection() {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t stall_start = 0;
  Status s;
  while (true) {
    if (!bg_error_.ok()) {
      s = bg_error_;
      break;
    }
    if (switching_) {
      writers_cv_.wait(lock);
      continue;
    }
    if (memory_bytes_ >= options_.options.memtable_bytes) {
      // The budget is spent: wait for the round that switches memtables. A
      // stall only when the previous round still flushes (both memory
      // components full); otherwise the switch is a moment away.
      if (!round_requested_ && !round_flushing_) {
        round_requested_ = true;
        flush_cv_.notify_one();
      }
      if (round_flushing_ && stall_start == 0) {
        stall_start = base_env_->NowMicros();
        counters_.memory_stalls.fetch_add(1, std::memory_order_relaxed);
      }
      writers_cv_.wait(lock);
      continue;
    }
    break;
  }
  if (stall_start != 0) {
    counters_.memory_stall_micros.fetch_add(base_env_->NowMicros() - stall_start,
                                            std::memory_order_relaxed);
  }
  if (s.ok()) writers_in_section_++;
  return s;
}

void DatasetImpl::ExitLogSection(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  writers_in_section_--;
  memory_bytes_ += bytes;
  if (switching_ && writers_in_section_ == 0) writers_cv_.notify_all();
  if (memory_bytes_ >= options_.options.memtable_bytes && !round_requested_ &&
      !round_flushing_) {
    round_requested_ = true;
    flush_cv_.notify_one();
  }
}

Status DatasetImpl::AppendToLog(std::string record) {
  const WalMode mode = options_.options.wal;
  if (mode == WalMode::kOff) return Status::OK();
  std::unique_lock<std::mutex> lock(log_mu_);
  log_queue_.push_back(std::move(record));
  const uint64_t mine = ++log_queued_;
  while (log_written_ < mine) {
    if (!log_error_.ok()) return log_error_;
    if (log_leader_) {
      log_cv_.wait(lock);
      continue;
    }
    // Lead: write every queued record, then one flush or fsync for all.
    log_leader_ = true;
    std::vector<std::string> group;
    group.swap(log_queue_);
    const uint64_t upto = log_queued_;
    lock.unlock();
    Status s;
    for (const std::string& r : group) {
      s = log_->AddRecord(r);
      if (!s.ok()) break;
    }
    if (s.ok()) s = mode == WalMode::kSync ? log_file_->Sync() : log_file_->Flush();
    lock.lock();
    log_leader_ = false;
    if (s.ok()) {
      log_written_ = upto;
    } else {
      log_error_ = s;
    }
    log_cv_.notify_all();
  }
  return Status::OK();
}

Status DatasetImpl::Apply(const std::vector<dataset::TreeWrite>& writes) {
  for (const auto& w : writes) {
    DB* tree = trees_[w.tree].get();
    Status s = w.is_delete ? tree->Delete(w.key) : tree->Put(w.key, w.value);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

void DatasetImpl::SetBackgroundError(const Status& s) {
  if (bg_error_.ok()) {
    bg_error_ = s;
    bg_error_text_ = s.ToString();
  }
  writers_cv_.notify_all();
  round_cv_.notify_all();
}

// ---------------------------------------------------------------- flush rounds

void DatasetImpl::FlushLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    flush_cv_.wait(lock, [this] { return shutting_down_ || (round_requested_ && bg_error_.ok()); });
    if (shutting_down_) return;
    lock.unlock();
    FlushRound();
    lock.lock();
  }
}

Status DatasetImpl::FlushRound() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    switching_ = true;
    writers_cv_.wait(lock, [this] { return writers_in_section_ == 0; });
  }
  // Every write logged so far is applied to the trees, and the trees' new
  // memtables take only later ones: once the old ones are flushed, the old
  // log holds nothing the trees lack.
  Status s = log_file_->Close();
  if (s.ok()) {
    log_number_++;
    s = NewLog();
  }
  std::vector<std::shared_ptr<MemTable>> flushing(trees_.size());
  for (size_t i = 0; s.ok() && i < trees_.size(); i++) s = trees_[i]->SwitchForFlush(&flushing[i]);
  {
    std::lock_guard<std::mutex> lock(mu_);
    switching_ = false;
    round_requested_ = false;
    if (!s.ok()) {
      SetBackgroundError(s);
      return s;
    }
    memory_bytes_ = 0;
    round_flushing_ = true;
    rounds_begun_++;
    writers_cv_.notify_all();
  }
  // The trees' flush threads run side by side, sharing the I/O budget.
  for (size_t i = 0; i < trees_.size(); i++) {
    Status r = trees_[i]->WaitForFlush(flushing[i]);
    if (s.ok()) s = r;
  }
  if (s.ok()) {
    for (uint64_t number : LogNumbers()) {
      if (number < log_number_) base_env_->RemoveFile(LogFileName(dir_, number));
    }
  }

  std::lock_guard<std::mutex> lock(mu_);
  round_flushing_ = false;
  rounds_done_++;
  if (!s.ok()) SetBackgroundError(s);
  if (memory_bytes_ >= options_.options.memtable_bytes) round_requested_ = true;
  writers_cv_.notify_all();
  round_cv_.notify_all();
  return s;
}

Status DatasetImpl::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!bg_error_.ok()) return bg_error_;
  // The next round to begin switches logs after this call, so it covers
  // every write acknowledged before it.
  const uint64_t target = rounds_begun_ + 1;
  round_requested_ = true;
  flush_cv_.notify_one();
  round_cv_.wait(lock, [&] { return rounds_done_ >= target || !bg_error_.ok() || shutting_down_; });
  return bg_error_;
}

Status DatasetImpl::WaitForIdle() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    round_cv_.wait(lock, [this] {
      return (!round_requested_ && !round_flushing_) || !bg_error_.ok() || shutting_down_;
    });
    if (!bg_error_.ok()) return bg_error_;
  }
  for (auto& tree : trees_) {
    Status s = tree->WaitForIdle();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// ---------------------------------------------------------------- reads

Status DatasetImpl::Get(std::string_view key, Record* record) {
  std::string value;
  Status s = trees_[0]->Get(key, &value);
  if (!s.ok()) return s;
  if (!dataset::DecodeRecordValue(value, &record->fields, &record->payload)) {
    return Status::Corruption("bad record in the primary index", std::string(key));
  }
  record->key.assign(key);
  return Status::OK();
}

Status DatasetImpl::Query(int index, uint64_t low, uint64_t high, std::vector<Record>* records) {
  records->clear();
  if (index < 0 || index >= options_.secondary_indexes) {
    return Status::InvalidArgument("no such secondary index",
                                   std::to_string(index) + " of " +
                                       std::to_string(options_.secondary_indexes));
  }
  counters_.queries.fetch_add(1, std::memory_order_relaxed);
  if (low >= high) return Status::OK();
  std::vector<std::string> keys;
  std::unique_ptr<Iterator> it = trees_[1 + static_cast<size_t>(index)]->NewIterator();
  for (it->Seek(dataset::SecondaryKeyPrefix(low)); it->Valid(); it->Next()) {
    uint64_t field;
    std::string_view primary_key;
    if (!dataset::ParseSecondaryKey(it->key(), &field, &primary_key)) {
      return Status::Corruption("bad secondary key", "index " + std::to_string(index));
    }
    if (field >= high) break;
    keys.emplace_back(primary_key);
  }
  if (!it->status().ok()) return it->status();
  it.reset();
  // Sorted, the primary lookups read the primary index in key order (the
  // paper's plan); a key found under an old and a new value counts once.
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  uint64_t stale = 0;
  Record record;
  for (const std::string& key : keys) {
    Status s = Get(key, &record);
    if (s.IsNotFound()) {
      stale++;
      continue;
    }
    if (!s.ok()) return s;
    const size_t i = static_cast<size_t>(index);
    if (i >= record.fields.size() || record.fields[i] < low || record.fields[i] >= high) {
      stale++;
      continue;
    }
    records->push_back(record);
  }
  counters_.candidates.fetch_add(keys.size(), std::memory_order_relaxed);
  counters_.results.fetch_add(records->size(), std::memory_order_relaxed);
  counters_.stale.fetch_add(stale, std::memory_order_relaxed);
  return Status::OK();
}

DatasetStats DatasetImpl::GetStats() const {
  DatasetStats st;
  for (const auto& tree : trees_) st.trees.push_back(tree->GetStats());
  st.records_put = counters_.puts.load(std::memory_order_relaxed);
  st.records_deleted = counters_.deletes.load(std::memory_order_relaxed);
  st.maintenance_lookups = counters_.lookups.load(std::memory_order_relaxed);
  st.antimatter_entries = counters_.antimatter.load(std::memory_order_relaxed);
  st.memory_stalls = counters_.memory_stalls.load(std::memory_order_relaxed);
  st.memory_stall_micros = counters_.memory_stall_micros.load(std::memory_order_relaxed);
  st.queries = counters_.queries.load(std::memory_order_relaxed);
  st.query_candidates = counters_.candidates.load(std::memory_order_relaxed);
  st.query_results = counters_.results.load(std::memory_order_relaxed);
  st.stale_entries_skipped = counters_.stale.load(std::memory_order_relaxed);
  if (io_budget_ != nullptr) {
    const IoBudgetStats io = io_budget_->GetStats();
    for (int p = 0; p < kNumIoPriorities; p++) st.io_budget_granted_bytes += io.granted_bytes[p];
    st.io_budget_unused_bytes = io.unused_bytes;
  }
  std::lock_guard<std::mutex> lock(mu_);
  st.flush_rounds = rounds_done_;
  st.background_error = bg_error_text_;
  return st;
}

}  // namespace lsm
