#include "db/db_impl.h"

#include <algorithm>
#include <set>

#include "db/db_iter.h"
#include "db/filenames.h"
#include "db/level_iterator.h"
#include "db/merging_iterator.h"
#include "env/io_budget_env.h"
#include "lsm/option_table.h"
#include "util/coding.h"

namespace lsm {
namespace {

// Group commit gathers at most this many bytes of queued writes per WAL
// record, so one huge group cannot delay the first writer for long.
constexpr size_t kMaxGroupBytes = 1 << 20;

}  // namespace

DB::~DB() = default;

Status DB::Open(const Options& options, const std::string& dir, std::unique_ptr<DB>* db) {
  db->reset();
  std::unique_ptr<DBImpl> impl;
  Status s = DBImpl::OpenImpl(options, dir, &impl);
  if (s.ok()) *db = std::move(impl);
  return s;
}

Status DBImpl::OpenImpl(const Options& options, const std::string& dir,
                        std::unique_ptr<DBImpl>* db) {
  db->reset();
  // Every option checked once, every bad one reported at once; the policy and the
  // scheduler are made from the checked options.
  Status s = CheckOptions(options);
  if (!s.ok()) return s;
  auto impl = std::make_unique<DBImpl>(options, dir, policy::NewCheckedMergePolicy(options),
                                       sched::NewCheckedMergeScheduler(options));
  s = impl->Recover();
  if (!s.ok()) return s;
  *db = std::move(impl);
  return Status::OK();
}

DBImpl::DBImpl(const Options& options, std::string dir,
               std::unique_ptr<policy::MergePolicy> policy,
               std::unique_ptr<sched::MergeScheduler> scheduler)
    : options_(options),
      env_(options.env != nullptr ? options.env : Env::Default()),
      dir_(std::move(dir)) {
  if (options.io_budget_bytes_per_sec > 0) {
    io_budget_ = std::make_shared<IoBudget>(options.io_budget_bytes_per_sec);
  }
  if (io_budget_ != nullptr || options.force_bytes > 0) {
    budget_env_ =
        NewIoBudgetEnv(env_, io_budget_, options.force_bytes, options.io_budget_charge_reads);
    env_ = budget_env_.get();
  }
  table_options_.block_bytes = options.block_bytes;
  table_options_.bloom_bits_per_key = options.bloom_bits_per_key;
  table_options_.verify_checksums = options.verify_checksums;
  MergeControl::Host* host = this;  // a private base, converted where accessible
  merge_control_ = std::make_unique<MergeControl>(options, std::move(policy), std::move(scheduler),
                                                  env_, &mu_, host);
}

DBImpl::~DBImpl() {
  if (flush_thread_.joinable()) {
    // Without a WAL the memtables would be lost: a clean close flushes them.
    if (options_.wal == WalMode::kOff) Flush();
    std::unique_lock<std::mutex> lock(mu_);
    bg_cv_.wait(lock, [this] { return imms_.empty() || !bg_error_.ok(); });
    shutting_down_ = true;
    merge_control_->BeginShutdown();
    flush_cv_.notify_all();
    lock.unlock();
    flush_thread_.join();
    merge_control_->JoinThreads();
  }
  if (wal_file_) {
    if (options_.wal == WalMode::kSync) wal_file_->Sync();
    wal_file_->Close();
  }
  super_version_.reset();
  version_.reset();
  if (dir_lock_) env_->UnlockFile(std::move(dir_lock_));
}

// ---------------------------------------------------------------- writes

Status DBImpl::Put(std::string_view key, std::string_view value) {
  if (key.size() > kMaxKeyBytes) {
    return Status::InvalidArgument("key too large",
                                   std::to_string(key.size()) + " bytes > 64 KiB");
  }
  if (value.size() > kMaxValueBytes) {
    return Status::InvalidArgument("value too large",
                                   std::to_string(value.size()) + " bytes > 16 MiB");
  }
  Writer w;
  w.type = ValueType::kValue;
  w.key = key;
  w.value = value;
  return Write(&w);
}

Status DBImpl::Delete(std::string_view key) {
  if (key.size() > kMaxKeyBytes) {
    return Status::InvalidArgument("key too large",
                                   std::to_string(key.size()) + " bytes > 64 KiB");
  }
  Writer w;
  w.type = ValueType::kDeletion;
  w.key = key;
  return Write(&w);
}

Status DBImpl::Write(Writer* w) {
  std::unique_lock<std::mutex> lock(mu_);
  writers_.push_back(w);
  while (!w->done && w != writers_.front()) w->cv.wait(lock);
  if (w->done) return w->status;

  // This writer leads: it commits itself and the writers queued behind it.
  Status s = MakeRoomForWrite(lock, w->force_flush);
  Writer* last = w;
  if (s.ok() && !w->force_flush) {
    const bool logging = options_.wal != WalMode::kOff;
    size_t count = 0;
    size_t bytes = 0;
    for (Writer* q : writers_) {
      if (q->force_flush || (count > 0 && bytes > kMaxGroupBytes)) break;
      bytes += q->key.size() + q->value.size();
      count++;
      last = q;
    }
    if (logging) {
      wal_record_.clear();
      PutVarint32(&wal_record_, static_cast<uint32_t>(count));
      for (auto it = writers_.begin(); it != writers_.end(); ++it) {
        Writer* q = *it;
        wal_record_.push_back(static_cast<char>(q->type));
        PutLengthPrefixedSlice(&wal_record_, q->key);
        PutLengthPrefixedSlice(&wal_record_, q->value);
        if (q == last) break;
      }
    }
    MemTable* mem = mem_.get();
    uint64_t seq = last_seq_.load(std::memory_order_relaxed);
    // The queue behind us does not move while we work unlocked: only the
    // front writer pops, and we are it.
    group_.assign(writers_.begin(), writers_.begin() + static_cast<std::ptrdiff_t>(count));
    lock.unlock();
    if (logging) {
      const bool sync = options_.wal == WalMode::kSync;
      // Once per log, before its first synced write: RocksDB does the same.
      if (sync && !wal_entry_synced_) {
        s = env_->SyncDir(dir_);
        wal_entry_synced_ = s.ok();
      }
      if (s.ok()) s = wal_->AddRecord(wal_record_);
      if (s.ok()) s = sync ? wal_file_->Sync() : wal_file_->Flush();
    }
    if (s.ok()) {
      uint64_t user_bytes = 0;
      uint64_t puts = 0;
      for (Writer* q : group_) {
        mem->Add(++seq, q->type, q->key, q->value);
        user_bytes += q->key.size() + q->value.size();
        puts += q->type == ValueType::kValue;
      }
      counters_.puts.fetch_add(puts, std::memory_order_relaxed);
      counters_.deletes.fetch_add(group_.size() - puts, std::memory_order_relaxed);
      counters_.user_bytes.fetch_add(user_bytes, std::memory_order_relaxed);
      last_seq_.store(seq, std::memory_order_release);
    }
    lock.lock();
    if (!s.ok()) SetBackgroundError(s);
  }

  while (true) {
    Writer* ready = writers_.front();
    writers_.pop_front();
    if (ready != w) {
      ready->status = s;
      ready->done = true;
      ready->cv.notify_one();
    }
    if (ready == last) break;
  }
  if (!writers_.empty()) writers_.front()->cv.notify_one();
  return s;
}

Status DBImpl::MakeRoomForWrite(std::unique_lock<std::mutex>& lock, bool force) {
  // Stalls begin and end rarely (a few times a second at most), so they take stats_mu_:
  // the counter and the stall in progress change together, as GetStats reads them.
  bool stalled = false;
  auto end_stall_locked = [&] {
    const uint64_t micros = env_->NowMicros() - stall_begin_micros_;
    (stall_is_merge_ ? counters_.merge_stall_micros : counters_.memory_stall_micros)
        .fetch_add(micros, std::memory_order_relaxed);
    stall_begin_micros_ = 0;
  };
  auto end_stall = [&] {
    if (!stalled) return;
    std::lock_guard<std::mutex> stats_lock(stats_mu_);
    end_stall_locked();
    stalled = false;
  };
  auto begin_stall = [&](bool is_merge_stall) {
    std::lock_guard<std::mutex> stats_lock(stats_mu_);
    if (stalled && stall_is_merge_ == is_merge_stall) return;
    if (stalled) end_stall_locked();
    stalled = true;
    stall_is_merge_ = is_merge_stall;
    stall_begin_micros_ = env_->NowMicros();
    (is_merge_stall ? counters_.merge_stalls : counters_.memory_stalls)
        .fetch_add(1, std::memory_order_relaxed);
  };

  Status s;
  bool slowed_down = false;
  while (true) {
    if (!bg_error_.ok()) {
      s = bg_error_;
      break;
    }
    const MergeControl::WriteAdmission admission =
        merge_control_->AdmitWrite(flushing_ || !imms_.empty());
    if (admission.stop) {
      begin_stall(true);
      bg_cv_.wait(lock);
      continue;
    }
    if (admission.slowdown_micros > 0 && !slowed_down && !force) {
      // Once per write. The writer keeps its place at the front of the
      // queue; the others wait behind it.
      slowed_down = true;
      lock.unlock();
      const uint64_t begin = env_->NowMicros();
      env_->SleepForMicroseconds(admission.slowdown_micros);
      counters_.slowdowns.fetch_add(1, std::memory_order_relaxed);
      counters_.slowdown_micros.fetch_add(env_->NowMicros() - begin, std::memory_order_relaxed);
      lock.lock();
      continue;
    }
    const bool full = mem_->Full();
    if (force ? mem_->Empty() : !full) break;
    if (static_cast<int>(imms_.size()) >= options_.memory_components - 1) {
      begin_stall(false);
      bg_cv_.wait(lock);
      continue;
    }
    s = SwitchMemTable();
    if (!s.ok()) break;
    if (force) break;
  }
  end_stall();
  return s;
}

Status DBImpl::SwitchMemTable() {
  uint64_t wal_number = 0;
  if (options_.wal != WalMode::kOff) {
    wal_number = NewFileNumber();
    std::unique_ptr<WritableFile> file;
    Status s = env_->NewWritableFile(WalFileName(dir_, wal_number), &file);
    // The old log's records were handed to the OS (or synced) per write, so
    // closing it only reports what became of them.
    if (s.ok()) s = wal_file_->Close();
    if (!s.ok()) {
      // Like a failed append: the WAL is in doubt, so no write may follow.
      // The new log, if created, is empty and goes at the next open.
      SetBackgroundError(s);
      return s;
    }
    wal_file_ = std::move(file);
    wal_ = std::make_unique<log::Writer>(wal_file_.get());
    wal_entry_synced_ = false;
  }
  mem_->Seal(env_->NowMicros());
  imms_.insert(imms_.begin(), std::move(mem_));
  mem_ = std::make_shared<MemTable>(wal_number, options_.memtable_bytes);
  InstallSuperVersion();
  {
    std::lock_guard<std::mutex> stats_lock(stats_mu_);
    component_stats_.memory_components_immutable = imms_.size();
  }
  flush_cv_.notify_one();
  return Status::OK();
}

void DBImpl::SetBackgroundError(const Status& s) {
  if (bg_error_.ok()) {
    bg_error_ = s;
    std::lock_guard<std::mutex> stats_lock(stats_mu_);
    component_stats_.background_error = s.ToString();
  }
  bg_cv_.notify_all();
}

// ---------------------------------------------------------------- reads

void DBImpl::InstallSuperVersion() {
  auto sv = std::make_shared<SuperVersion>();
  sv->mem = mem_;
  sv->imms = imms_;
  sv->version = version_;
  super_version_ = std::move(sv);
}

std::shared_ptr<const DBImpl::SuperVersion> DBImpl::AcquireSuperVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return super_version_;
}

Status DBImpl::Get(std::string_view key, std::string* value) {
  counters_.gets.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<const SuperVersion> sv = AcquireSuperVersion();
  ValueType type;
  auto found = [&](ValueType t) {
    return t == ValueType::kValue ? Status::OK() : Status::NotFound("deleted");
  };
  if (sv->mem->Get(key, &type, value)) return found(type);
  for (const auto& imm : sv->imms) {
    if (imm->Get(key, &type, value)) return found(type);
  }
  for (const ReadSource& source : sv->version->read_order) {
    const ComponentFile* file = source.Candidate(key);
    if (file == nullptr) continue;
    const Table& table = file->table();
    if (!table.KeyMayMatch(key)) continue;
    bool hit = false;
    Status s = table.Get(key, &hit, &type, value);
    if (!s.ok()) return s;
    if (hit) return found(type);
  }
  return Status::NotFound("");
}

std::unique_ptr<Iterator> DBImpl::NewIterator() {
  std::shared_ptr<const SuperVersion> sv;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sv = super_version_;
    seq = last_seq_.load(std::memory_order_acquire);
  }
  std::vector<std::unique_ptr<InternalIterator>> children;
  children.push_back(sv->mem->NewIterator(seq));
  for (const auto& imm : sv->imms) children.push_back(imm->NewIterator(seq));
  const auto& stack = sv->version->stack;
  // Newest first. A partitioned level (its stack block, deepest first) is
  // one source; a stack policy's components are one source each.
  auto it = stack.rbegin();
  while (it != stack.rend()) {
    const int level = (*it)->meta().level;
    if (!merge_control_->partitioned() || level == 0) {
      children.push_back((*it++)->table().NewIterator());
      continue;
    }
    std::vector<ComponentPtr> files;
    for (; it != stack.rend() && (*it)->meta().level == level; ++it) files.push_back(*it);
    children.push_back(NewLevelIterator(std::move(files)));
  }
  return NewDBIterator(NewMergingIterator(std::move(children)), std::move(sv));
}

// ---------------------------------------------------------------- flush

Status DBImpl::Flush() {
  std::shared_ptr<MemTable> target;
  Status s = SwitchForFlush(&target);
  if (!s.ok()) return s;
  return WaitForFlush(target);
}

Status DBImpl::SwitchForFlush(std::shared_ptr<MemTable>* target) {
  Writer w;
  w.force_flush = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    *target = mem_;
  }
  return Write(&w);
}

Status DBImpl::WaitForFlush(const std::shared_ptr<MemTable>& target) {
  std::unique_lock<std::mutex> lock(mu_);
  bg_cv_.wait(lock, [&] {
    return std::find(imms_.begin(), imms_.end(), target) == imms_.end() || !bg_error_.ok();
  });
  return bg_error_;
}

void DBImpl::FlushLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    flush_cv_.wait(lock, [this] { return shutting_down_ || (!imms_.empty() && bg_error_.ok()); });
    if (shutting_down_) return;
    std::shared_ptr<MemTable> imm = imms_.back();  // oldest first
    flushing_ = true;
    lock.unlock();
    Status s = FlushMemTable(imm);
    lock.lock();
    flushing_ = false;
    if (!s.ok()) SetBackgroundError(s);
    bg_cv_.notify_all();
  }
}

Status DBImpl::FlushMemTable(const std::shared_ptr<MemTable>& imm) {
  FlushInfo info;
  info.start_micros = env_->NowMicros();
  info.entries = imm->NumEntries();
  info.sealed_micros = imm->sealed_micros();
  std::shared_ptr<const Version> base;
  {
    std::lock_guard<std::mutex> lock(mu_);
    base = version_;
  }
  // Every disk component is older than this memtable.
  std::unique_ptr<InternalIterator> it = imm->NewIterator(last_seq_.load());
  ComponentPtr component;
  Status s = BuildComponent(it.get(), imm->NumEntries(), imm->NumEntries(), 0,
                            MakeDropTombstone(base->stack), nullptr, &component);
  it.reset();
  if (!s.ok()) return s;

  std::unique_lock<std::mutex> manifest_lock(manifest_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  std::vector<ComponentPtr> stack = version_->stack;
  std::vector<ComponentMeta> added;
  if (component) {
    stack.push_back(component);
    added.push_back(component->meta());
    counters_.flush_bytes.fetch_add(component->meta().file_size, std::memory_order_relaxed);
    info.bytes = component->meta().file_size;
  }
  s = LogAndApply(lock, std::move(stack), std::move(added), imm);
  // The component's file stays, as a failed merge's outputs do (RunMerge).
  if (!s.ok()) return s;
  counters_.flushes.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> stats_lock(stats_mu_);
    component_stats_.memory_components_immutable = imms_.size();
  }
  ScheduleMerges();
  // Stats::average_sstables: the count this flush's decision leaves.
  counters_.sstables_after_flush.fetch_add(
      merge_control_->ComponentsAfterMerges(version_->stack.size()), std::memory_order_relaxed);
  lock.unlock();
  if (imm->wal_number() != 0) env_->RemoveFile(WalFileName(dir_, imm->wal_number()));
  manifest_lock.unlock();
  if (options_.listener != nullptr) {
    info.end_micros = env_->NowMicros();
    options_.listener->OnFlushCompleted(info);
  }
  return Status::OK();
}

Status DBImpl::LogAndApply(std::unique_lock<std::mutex>& lock, std::vector<ComponentPtr> new_stack,
                           std::vector<ComponentMeta> added,
                           const std::shared_ptr<MemTable>& flushed) {
  ManifestEdit edit;
  // The WALs of memtables still in memory are needed: the oldest such
  // memtable is the last of imms_, or the one before it when that one is
  // being installed now.
  if (flushed != nullptr && imms_.size() >= 2) {
    edit.log_number = imms_[imms_.size() - 2]->wal_number();
  } else if (flushed == nullptr && !imms_.empty()) {
    edit.log_number = imms_.back()->wal_number();
  } else {
    edit.log_number = mem_->wal_number();
  }
  edit.added = std::move(added);
  for (const ComponentPtr& c : new_stack) edit.stack.push_back(c->meta().number);
  edit.merge_cursors = merge_control_->round_robin_cursor();
  edit.next_file_number = next_file_number_.load();
  // The stack cannot change while manifest_mu_ is held, so the mutex can go
  // during the fsync: writers and readers are not held up by it.
  lock.unlock();
  Status s;
  {
    // Manifest edits are bookkeeping, not flush or merge output.
    ScopedIoPriority bookkeeping(IoPriority::kUser);
    s = manifest_->Append(edit);
  }
  lock.lock();
  if (!s.ok()) return s;

  // By number, not by object: a moved component is a new object over the
  // same file, which must stay.
  std::set<uint64_t> kept;
  for (const ComponentPtr& c : new_stack) kept.insert(c->meta().number);
  for (const ComponentPtr& c : version_->stack) {
    if (kept.count(c->meta().number) == 0) c->MarkObsolete();
  }
  auto version = std::make_shared<Version>();
  version->stack = std::move(new_stack);
  version->Index(merge_control_->partitioned());
  version_ = std::move(version);
  // The flushed memtable and its component change places in one step, so a
  // reader always sees the data in one of them.
  if (flushed != nullptr) imms_.pop_back();
  InstallSuperVersion();
  UpdateComponentStats();
  bg_cv_.notify_all();
  return Status::OK();
}

DBImpl::DropTombstone DBImpl::MakeDropTombstone(std::vector<ComponentPtr> older) {
  return [older = std::move(older)](std::string_view key) {
    for (const ComponentPtr& c : older) {
      const ComponentMeta& m = c->meta();
      if (key >= m.smallest && key <= m.largest && c->table().KeyMayMatch(key)) return false;
    }
    return true;
  };
}

Status DBImpl::BuildComponent(InternalIterator* input, uint64_t expected_entries,
                              uint64_t flushed_entries, int level, const DropTombstone& drop,
                              MergeJob* job, ComponentPtr* result) {
  result->reset();
  std::vector<ComponentPtr> outputs;
  Status s =
      BuildComponents(input, expected_entries, flushed_entries, level, 0, drop, job, &outputs);
  if (s.ok() && !outputs.empty()) *result = std::move(outputs.front());
  return s;
}

Status DBImpl::BuildComponents(InternalIterator* input, uint64_t expected_entries,
                               uint64_t flushed_entries, int level, uint64_t max_file_bytes,
                               const DropTombstone& drop, MergeJob* job,
                               std::vector<ComponentPtr>* results) {
  results->clear();
  // The output being written; files already finished wait in `finished`
  // until every one is synced, so a failure leaves no file behind.
  struct Output {
    ComponentMeta meta;
    std::string fname;
    std::unique_ptr<WritableFile> file;
    std::unique_ptr<TableBuilder> builder;
  };
  std::vector<ComponentMeta> finished;
  Output out;
  auto remove_all = [&] {
    for (const ComponentMeta& m : finished) env_->RemoveFile(TableFileName(dir_, m.number));
    if (out.file) env_->RemoveFile(out.fname);
  };
  auto open_output = [&]() -> Status {
    out.meta = ComponentMeta();
    out.meta.number = NewFileNumber();
    out.meta.level = level;
    out.fname = TableFileName(dir_, out.meta.number);
    Status st = env_->NewWritableFile(out.fname, &out.file);
    if (!st.ok()) return st;
    TableOptions table_options = table_options_;
    // Sizes the Bloom filter up front, so the builder need not keep every
    // key; a split output's share is unknown, so the builder counts exactly.
    table_options.expected_entries = max_file_bytes == 0 ? expected_entries : 0;
    out.builder = std::make_unique<TableBuilder>(table_options, out.file.get());
    return Status::OK();
  };
  // Finishes, syncs and closes the current output; an empty one is removed.
  auto close_output = [&]() -> Status {
    Status st = out.builder->Finish();
    if (st.ok()) st = out.builder->status();
    if (st.ok()) st = out.file->Sync();
    Status close = out.file->Close();
    if (st.ok()) st = close;
    if (st.ok() && out.builder->NumEntries() > 0) {
      out.meta.file_size = out.builder->FileSize();
      out.meta.entries = out.builder->NumEntries();
      out.meta.smallest.assign(out.builder->smallest_key());
      out.meta.largest.assign(out.builder->largest_key());
      finished.push_back(out.meta);
    } else {
      env_->RemoveFile(out.fname);
    }
    out.builder.reset();
    out.file.reset();
    return st;
  };

  Status s = open_output();
  if (!s.ok()) return s;
  uint64_t consumed = 0;
  bool cancelled = false;
  for (input->SeekToFirst(); input->Valid(); input->Next()) {
    if (job != nullptr) {
      uint64_t now = input->BytesConsumed();
      if (now != consumed) {  // a block boundary: the place to pause
        consumed = now;
        job->SetConsumedBytes(consumed);
        if (!job->WaitWhilePaused()) {
          cancelled = true;
          break;
        }
      }
    }
    if (input->type() == ValueType::kDeletion && drop(input->key())) continue;
    // Merges keep one entry per key, so any key boundary may split files.
    if (max_file_bytes > 0 && out.builder->NumEntries() > 0 &&
        out.builder->FileSize() >= max_file_bytes) {
      s = close_output();
      if (s.ok()) s = open_output();
      if (!s.ok()) break;
    }
    out.builder->Add(input->key(), input->type(), input->value());
  }
  if (s.ok() && !input->status().ok()) s = input->status();
  if (cancelled || !s.ok()) {
    if (out.file) out.file->Close();
    remove_all();
    return cancelled ? Status::IOError("merge cancelled") : s;
  }
  s = close_output();
  if (s.ok() && !finished.empty()) s = env_->SyncDir(dir_);
  uint64_t output_entries = 0;
  for (const ComponentMeta& m : finished) output_entries += m.entries;
  uint64_t shared = 0;
  for (size_t i = 0; i < finished.size(); i++) {
    ComponentMeta& m = finished[i];
    m.flushed_entries =
        i + 1 == finished.size()
            ? flushed_entries - shared
            : static_cast<uint64_t>(static_cast<double>(flushed_entries) *
                                    static_cast<double>(m.entries) /
                                    static_cast<double>(output_entries));
    shared += m.flushed_entries;
  }
  for (size_t i = 0; s.ok() && i < finished.size(); i++) {
    ComponentPtr component;
    s = OpenComponent(finished[i], &component);
    if (s.ok()) results->push_back(std::move(component));
  }
  if (!s.ok()) {
    results->clear();
    remove_all();
    return s;
  }
  if (job != nullptr) job->SetConsumedBytes(job->total_input_bytes());
  return Status::OK();
}

Status DBImpl::WaitForIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  bg_cv_.wait(lock, [this] {
    return !bg_error_.ok() || (imms_.empty() && !flushing_ && !merge_control_->HasMerges());
  });
  return bg_error_;
}

// ---------------------------------------------------------------- stats

void DBImpl::UpdateComponentStats() {
  std::lock_guard<std::mutex> stats_lock(stats_mu_);
  Stats& st = component_stats_;
  const auto& stack = version_->stack;
  st.disk_components = stack.size();
  st.disk_components_per_level.assign(1, 0);
  st.disk_bytes_per_level.assign(1, 0);
  st.disk_bytes = 0;
  for (const ComponentPtr& c : stack) {
    size_t level = static_cast<size_t>(c->meta().level);
    if (st.disk_components_per_level.size() <= level) {
      st.disk_components_per_level.resize(level + 1, 0);
      st.disk_bytes_per_level.resize(level + 1, 0);
    }
    st.disk_components_per_level[level]++;
    st.disk_bytes_per_level[level] += c->meta().file_size;
    st.disk_bytes += c->meta().file_size;
  }
  st.max_components = merge_control_->max_components();
  st.constrained_components = merge_control_->constrained_count();
  st.memory_components_immutable = imms_.size();
}

Stats DBImpl::GetStats() const {
  Stats st;
  {
    std::lock_guard<std::mutex> stats_lock(stats_mu_);
    st = component_stats_;
    // Under stats_mu_ still: the component and merge parts are one snapshot.
    merge_control_->AddMergeStats(&st);
    // The stall in progress counts up to now (read with its counter, under the same lock).
    st.merge_stall_micros = counters_.merge_stall_micros.load(std::memory_order_relaxed);
    st.memory_stall_micros = counters_.memory_stall_micros.load(std::memory_order_relaxed);
    if (stall_begin_micros_ != 0) {
      const uint64_t now = env_->NowMicros();
      const uint64_t ongoing = now > stall_begin_micros_ ? now - stall_begin_micros_ : 0;
      (stall_is_merge_ ? st.merge_stall_micros : st.memory_stall_micros) += ongoing;
    }
  }
  auto load = [](const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); };
  st.puts = load(counters_.puts);
  st.deletes = load(counters_.deletes);
  st.gets = load(counters_.gets);
  st.user_bytes_written = load(counters_.user_bytes);
  st.flushes_completed = load(counters_.flushes);
  st.flush_bytes_written = load(counters_.flush_bytes);
  st.merges_completed = load(counters_.merges);
  st.merge_bytes_read = load(counters_.merge_bytes_read);
  st.merge_bytes_written = load(counters_.merge_bytes_written);
  st.merge_stalls = load(counters_.merge_stalls);
  st.memory_stalls = load(counters_.memory_stalls);
  st.slowdowns = load(counters_.slowdowns);
  st.slowdown_micros = load(counters_.slowdown_micros);
  if (io_budget_ != nullptr) {
    const IoBudgetStats io = io_budget_->GetStats();
    for (IoPriority pri : {IoPriority::kFlush, IoPriority::kMerge}) {
      st.io_budget_granted_bytes += io.granted_bytes[static_cast<int>(pri)];
      st.background_sync_micros += io.sync_micros[static_cast<int>(pri)];
    }
    st.io_budget_unused_bytes = io.unused_bytes;
  }
  if (st.user_bytes_written > 0) {
    st.write_amplification =
        static_cast<double>(st.flush_bytes_written + st.merge_bytes_written) /
        static_cast<double>(st.user_bytes_written);
  }
  if (st.flushes_completed > 0) {
    st.average_sstables = static_cast<double>(load(counters_.sstables_after_flush)) /
                          static_cast<double>(st.flushes_completed);
  }
  return st;
}

}  // namespace lsm
