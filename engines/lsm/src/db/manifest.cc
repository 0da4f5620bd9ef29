#include "db/manifest.h"

#include <algorithm>
#include <unordered_map>

#include "db/filenames.h"
#include "util/coding.h"

namespace lsm {
namespace {

enum Tag : uint32_t {
  kNextFileNumber = 1,
  kLogNumber = 2,
  kAddedComponent = 3,
  kStack = 4,
  kMergeCursors = 5,
  // Per added component, its number and flushed_entries: a tag of its own
  // so that manifests written before components recorded it still open.
  kFlushedEntries = 6,
};

Status ReadFileToString(Env* env, const std::string& fname, std::string* data) {
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  data->clear();
  std::string scratch(64 * 1024, '\0');
  while (true) {
    std::string_view chunk;
    s = file->Read(scratch.size(), &chunk, scratch.data());
    if (!s.ok()) return s;
    if (chunk.empty()) return Status::OK();
    data->append(chunk.data(), chunk.size());
  }
}

}  // namespace

std::string ManifestEdit::Encode() const {
  std::string out;
  PutVarint32(&out, kNextFileNumber);
  PutVarint64(&out, next_file_number);
  PutVarint32(&out, kLogNumber);
  PutVarint64(&out, log_number);
  for (const ComponentMeta& c : added) {
    PutVarint32(&out, kAddedComponent);
    PutVarint64(&out, c.number);
    PutVarint32(&out, static_cast<uint32_t>(c.level));
    PutVarint64(&out, c.file_size);
    PutVarint64(&out, c.entries);
    PutLengthPrefixedSlice(&out, c.smallest);
    PutLengthPrefixedSlice(&out, c.largest);
  }
  for (const ComponentMeta& c : added) {
    if (c.flushed_entries == 0) continue;
    PutVarint32(&out, kFlushedEntries);
    PutVarint64(&out, c.number);
    PutVarint64(&out, c.flushed_entries);
  }
  PutVarint32(&out, kStack);
  PutVarint64(&out, stack.size());
  for (uint64_t n : stack) PutVarint64(&out, n);
  if (!merge_cursors.empty()) {
    PutVarint32(&out, kMergeCursors);
    PutVarint64(&out, merge_cursors.size());
    for (const std::string& key : merge_cursors) PutLengthPrefixedSlice(&out, key);
  }
  return out;
}

Status ManifestEdit::Decode(std::string_view input, const std::string& fname) {
  *this = ManifestEdit();
  auto bad = [&](const char* what) { return Status::Corruption(what, fname); };
  bool saw_stack = false;
  while (!input.empty()) {
    uint32_t tag;
    if (!GetVarint32(&input, &tag)) return bad("manifest edit: bad tag");
    switch (tag) {
      case kNextFileNumber:
        if (!GetVarint64(&input, &next_file_number)) return bad("manifest edit: bad file number");
        break;
      case kLogNumber:
        if (!GetVarint64(&input, &log_number)) return bad("manifest edit: bad log number");
        break;
      case kAddedComponent: {
        ComponentMeta c;
        uint32_t level;
        std::string_view smallest, largest;
        if (!GetVarint64(&input, &c.number) || !GetVarint32(&input, &level) ||
            !GetVarint64(&input, &c.file_size) || !GetVarint64(&input, &c.entries) ||
            !GetLengthPrefixedSlice(&input, &smallest) ||
            !GetLengthPrefixedSlice(&input, &largest) || level > 1000) {
          return bad("manifest edit: bad component");
        }
        c.level = static_cast<int>(level);
        c.smallest.assign(smallest.data(), smallest.size());
        c.largest.assign(largest.data(), largest.size());
        added.push_back(std::move(c));
        break;
      }
      case kStack: {
        uint64_t count;
        if (!GetVarint64(&input, &count) || count > input.size()) {
          return bad("manifest edit: bad stack");
        }
        stack.resize(count);
        for (uint64_t& n : stack) {
          if (!GetVarint64(&input, &n)) return bad("manifest edit: bad stack entry");
        }
        saw_stack = true;
        break;
      }
      case kMergeCursors: {
        uint64_t count;
        if (!GetVarint64(&input, &count) || count > input.size() || count > 1000) {
          return bad("manifest edit: bad merge cursors");
        }
        merge_cursors.resize(count);
        for (std::string& key : merge_cursors) {
          std::string_view k;
          if (!GetLengthPrefixedSlice(&input, &k)) return bad("manifest edit: bad merge cursor");
          key.assign(k.data(), k.size());
        }
        break;
      }
      case kFlushedEntries: {
        uint64_t number, flushed;
        if (!GetVarint64(&input, &number) || !GetVarint64(&input, &flushed)) {
          return bad("manifest edit: bad flushed entries");
        }
        auto it = std::find_if(added.begin(), added.end(),
                               [&](const ComponentMeta& c) { return c.number == number; });
        if (it == added.end()) return bad("manifest edit: flushed entries of no added component");
        it->flushed_entries = flushed;
        break;
      }
      default:
        return bad("manifest edit: unknown tag");
    }
  }
  if (!saw_stack) return bad("manifest edit: no stack");
  return Status::OK();
}

Status RecoverManifest(Env* env, const std::string& dir, ManifestState* state) {
  const std::string current = CurrentFileName(dir);
  if (!env->FileExists(current)) return Status::NotFound("no CURRENT file", current);
  std::string contents;
  Status s = ReadFileToString(env, current, &contents);
  if (!s.ok()) return s;
  uint64_t manifest_number;
  if (contents.empty() || contents.back() != '\n' ||
      ParseFileName(contents.substr(0, contents.size() - 1), &manifest_number) !=
          FileType::kManifest) {
    return Status::Corruption("CURRENT does not name a manifest", current);
  }
  const std::string fname = ManifestFileName(dir, manifest_number);
  std::unique_ptr<SequentialFile> file;
  s = env->NewSequentialFile(fname, &file);
  if (!s.ok()) return Status::Corruption("manifest named by CURRENT is unreadable", s.ToString());

  log::Reader reader(file.get(), fname);
  std::unordered_map<uint64_t, ComponentMeta> known;
  std::vector<uint64_t> stack;
  std::string scratch;
  std::string_view record;
  int edits = 0;
  *state = ManifestState();
  state->manifest_number = manifest_number;
  while (reader.ReadRecord(&record, &scratch)) {
    ManifestEdit edit;
    s = edit.Decode(record, fname);
    if (!s.ok()) return s;
    for (ComponentMeta& c : edit.added) known[c.number] = std::move(c);
    stack = std::move(edit.stack);
    // Cursors only ever move forward, never back to none: an edit without
    // them (a stack policy, or written before they existed) changes nothing.
    if (!edit.merge_cursors.empty()) state->merge_cursors = std::move(edit.merge_cursors);
    state->next_file_number = edit.next_file_number;
    state->log_number = edit.log_number;
    edits++;
  }
  if (!reader.status().ok()) return reader.status();
  // A file ending inside the last edit is an append that never completed (a
  // crash, or a failed write: ManifestWriter appends nothing after one), so
  // that edit never took effect and the state is the one before it. Any
  // other bad tail is damage: every edit was synced before it took effect.
  if (reader.tail_corrupted() && !reader.tail_truncated()) {
    return Status::Corruption("manifest is damaged or truncated (" + reader.what_happened() + ")",
                              fname);
  }
  if (edits == 0) return Status::Corruption("manifest is empty", fname);
  for (uint64_t n : stack) {
    auto it = known.find(n);
    if (it == known.end()) return Status::Corruption("manifest names an unknown component", fname);
    if (n >= state->next_file_number) {
      return Status::Corruption("manifest component number beyond next file number", fname);
    }
    state->stack.push_back(it->second);
  }
  return Status::OK();
}

Status ManifestWriter::Create(Env* env, const std::string& dir, uint64_t number,
                              const ManifestEdit& snapshot,
                              std::unique_ptr<ManifestWriter>* writer) {
  const std::string fname = ManifestFileName(dir, number);
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  std::unique_ptr<ManifestWriter> w(new ManifestWriter(number, std::move(file)));
  s = w->Append(snapshot);
  if (!s.ok()) return s;

  // Point CURRENT at the new manifest atomically.
  const std::string tmp = TempFileName(dir, number);
  std::unique_ptr<WritableFile> current;
  s = env->NewWritableFile(tmp, &current);
  if (s.ok()) s = current->Append(fname.substr(dir.size() + 1) + "\n");
  if (s.ok()) s = current->Sync();
  if (s.ok()) s = current->Close();
  if (s.ok()) s = env->RenameFile(tmp, CurrentFileName(dir));
  if (s.ok()) s = env->SyncDir(dir);
  if (!s.ok()) {
    env->RemoveFile(tmp);
    return s;
  }
  *writer = std::move(w);
  return Status::OK();
}

Status ManifestWriter::Append(const ManifestEdit& edit) {
  if (!error_.ok()) return error_;
  std::string record = edit.Encode();
  Status s = writer_.AddRecord(record);
  if (s.ok()) s = file_->Sync();
  if (s.ok()) {
    bytes_written_ += record.size();
  } else {
    error_ = s;
  }
  return s;
}

}  // namespace lsm
