// DBImpl: opening a directory -- the manifest, the WALs of memtables that were
// not flushed, the components it names, and the files nothing names any more.
#include <algorithm>
#include <limits>
#include <set>

#include "db/db_impl.h"
#include "db/filenames.h"
#include "env/durable_dir.h"
#include "util/coding.h"

namespace lsm {

Status DBImpl::Recover() {
  Status s = CreateDirDurably(env_, dir_);
  if (!s.ok()) return s;
  s = env_->LockFile(LockFileName(dir_), &dir_lock_);
  if (!s.ok()) return s;

  ManifestState state;
  s = RecoverManifest(env_, dir_, &state);
  if (s.IsNotFound()) {
    if (!options_.create_if_missing) {
      return Status::InvalidArgument("database does not exist (create_if_missing is false)", dir_);
    }
    state = ManifestState();
  } else if (!s.ok()) {
    return s;
  } else if (options_.error_if_exists) {
    return Status::InvalidArgument("database exists (error_if_exists is true)", dir_);
  }
  next_file_number_.store(std::max<uint64_t>(state.next_file_number, 1));

  std::vector<ComponentPtr> stack;
  for (const ComponentMeta& meta : state.stack) {
    ComponentPtr c;
    s = OpenComponent(meta, &c);
    if (!s.ok()) return s;
    stack.push_back(std::move(c));
  }
  s = merge_control_->CheckStackShape(stack, dir_);
  if (!s.ok()) return s;

  // Replay the logs of memtables that were not flushed, oldest first.
  std::vector<std::string> children;
  s = env_->GetChildren(dir_, &children);
  if (!s.ok()) return s;
  std::vector<uint64_t> wals;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type = ParseFileName(name, &number);
    if (type == FileType::kWal && number >= state.log_number) wals.push_back(number);
    if (number >= next_file_number_.load()) next_file_number_.store(number + 1);
  }
  std::sort(wals.begin(), wals.end());
  for (uint64_t wal : wals) {
    s = RecoverWal(wal, &stack);
    if (!s.ok()) return s;
  }

  // A fresh manifest holding the recovered state, and a fresh WAL.
  uint64_t wal_number = 0;
  if (options_.wal != WalMode::kOff) {
    wal_number = NewFileNumber();
    s = env_->NewWritableFile(WalFileName(dir_, wal_number), &wal_file_);
    if (!s.ok()) return s;
    wal_ = std::make_unique<log::Writer>(wal_file_.get());
  }
  ManifestEdit snapshot;
  uint64_t manifest_number = NewFileNumber();
  snapshot.next_file_number = next_file_number_.load();
  snapshot.log_number = wal_number != 0 ? wal_number : snapshot.next_file_number;
  for (const ComponentPtr& c : stack) {
    snapshot.added.push_back(c->meta());
    snapshot.stack.push_back(c->meta().number);
  }
  merge_control_->RestoreCursor(std::move(state.merge_cursors));
  snapshot.merge_cursors = merge_control_->round_robin_cursor();
  s = ManifestWriter::Create(env_, dir_, manifest_number, snapshot, &manifest_);
  if (!s.ok()) return s;
  RemoveObsoleteFiles(stack, manifest_number,
                      wal_number != 0 ? wal_number : std::numeric_limits<uint64_t>::max());
  // The directory entries of the new WAL must survive a crash too.
  s = env_->SyncDir(dir_);
  if (!s.ok()) return s;

  std::unique_lock<std::mutex> lock(mu_);
  mem_ = std::make_shared<MemTable>(wal_number, options_.memtable_bytes);
  auto version = std::make_shared<Version>();
  version->stack = std::move(stack);
  version->Index(merge_control_->partitioned());
  version_ = std::move(version);
  InstallSuperVersion();
  UpdateComponentStats();
  merge_control_->Opened();
  ScheduleMerges();
  lock.unlock();
  // The budget tells flushes from merges by the thread's I/O priority.
  flush_thread_ = std::thread([this] {
    SetThreadIoPriority(IoPriority::kFlush);
    FlushLoop();
  });
  return Status::OK();
}

Status DBImpl::RecoverWal(uint64_t wal_number, std::vector<ComponentPtr>* stack) {
  const std::string fname = WalFileName(dir_, wal_number);
  std::unique_ptr<SequentialFile> file;
  Status s = env_->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  log::Reader reader(file.get(), fname);
  auto mem = std::make_shared<MemTable>(0, options_.memtable_bytes);
  uint64_t seq = 0;
  std::string scratch;
  std::string_view record;

  auto flush_mem = [&]() -> Status {
    if (mem->Empty()) return Status::OK();
    std::unique_ptr<InternalIterator> it = mem->NewIterator(seq);
    ComponentPtr c;
    Status fs =
        BuildComponent(it.get(), mem->NumEntries(), mem->NumEntries(), 0,
                       MakeDropTombstone(*stack), nullptr, &c);
    if (fs.ok() && c) stack->push_back(std::move(c));
    mem = std::make_shared<MemTable>(0, options_.memtable_bytes);
    return fs;
  };

  // A torn tail (the process died mid-append) ends the log: those writes
  // were never acknowledged.
  while (reader.ReadRecord(&record, &scratch)) {
    uint32_t count;
    if (!GetVarint32(&record, &count)) return Status::Corruption("bad WAL record", fname);
    for (uint32_t i = 0; i < count; i++) {
      if (record.empty()) return Status::Corruption("bad WAL record", fname);
      auto type = static_cast<ValueType>(record[0]);
      record.remove_prefix(1);
      std::string_view key, value;
      if ((type != ValueType::kValue && type != ValueType::kDeletion) ||
          !GetLengthPrefixedSlice(&record, &key) || !GetLengthPrefixedSlice(&record, &value)) {
        return Status::Corruption("bad WAL record", fname);
      }
      mem->Add(++seq, type, key, value);
    }
    if (mem->Full()) {
      s = flush_mem();
      if (!s.ok()) return s;
    }
  }
  if (!reader.status().ok()) return reader.status();
  return flush_mem();
}

void DBImpl::RemoveObsoleteFiles(const std::vector<ComponentPtr>& stack, uint64_t keep_manifest,
                                 uint64_t min_wal) {
  std::set<uint64_t> live;
  for (const ComponentPtr& c : stack) live.insert(c->meta().number);
  std::vector<std::string> children;
  if (!env_->GetChildren(dir_, &children).ok()) return;
  for (const std::string& name : children) {
    uint64_t number;
    bool remove = false;
    switch (ParseFileName(name, &number)) {
      case FileType::kTable: remove = live.count(number) == 0; break;  // interrupted flush/merge
      case FileType::kWal: remove = number < min_wal; break;           // replayed
      case FileType::kManifest: remove = number != keep_manifest; break;
      case FileType::kTemp: remove = true; break;
      default: break;
    }
    if (remove) env_->RemoveFile(dir_ + "/" + name);
  }
}

Status DBImpl::OpenComponent(const ComponentMeta& meta, ComponentPtr* result) {
  const std::string fname = TableFileName(dir_, meta.number);
  std::unique_ptr<RandomAccessFile> file;
  Status s = env_->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  uint64_t size = 0;
  s = env_->GetFileSize(fname, &size);
  if (!s.ok()) return s;
  if (size != meta.file_size) {
    return Status::Corruption("component file size differs from the manifest", fname);
  }
  std::unique_ptr<Table> table;
  s = Table::Open(table_options_, std::move(file), size, fname, &table);
  if (!s.ok()) return s;
  *result = std::make_shared<ComponentFile>(meta, std::move(table), env_, fname);
  return Status::OK();
}

}  // namespace lsm
