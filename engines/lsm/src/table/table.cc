// Table: the reader of a table file, and its two-level iterator.
#include <cstring>

#include "table/block.h"
#include "table/format.h"
#include "table/meta.h"
#include "table/table_builder.h"
#include "util/bloom.h"
#include "util/coding.h"

namespace lsm {

namespace {

// Everything a Table knows, immutable after Open, hence safe to share
// between threads. (Table::Rep derives from it so that the helpers of this
// file can name it.)
struct TableState {
  TableOptions options;
  std::unique_ptr<RandomAccessFile> file;
  uint64_t file_size = 0;
  std::string fname;
  std::string index;   // index block contents
  std::string filter;  // empty: no filter
  TableProperties props;

  // Decodes and bounds-checks an index entry's block handle.
  bool DecodeHandle(std::string_view encoded, BlockHandle* handle) const {
    return handle->DecodeFrom(&encoded) && encoded.empty() && handle->offset <= props.data_size &&
           handle->size <= props.data_size - handle->offset &&
           kBlockTrailerSize <= props.data_size - handle->offset - handle->size;
  }
};

// Reads a metadata block (always checksummed) into *out, copying it so it
// outlives the read buffer.
Status ReadMetadataBlock(const RandomAccessFile* file, const BlockHandle& handle,
                         uint64_t metadata_end, const std::string& fname, const char* what,
                         std::string* out) {
  if (handle.offset > metadata_end || handle.size > metadata_end - handle.offset ||
      kBlockTrailerSize > metadata_end - handle.offset - handle.size) {
    return TableCorruption(std::string("bad ") + what + " block handle", fname);
  }
  BlockBuffer buf;
  std::string_view contents;
  Status s = ReadBlock(file, handle, /*verify_checksum=*/true, fname,
                       buf.Reserve(handle.size + kBlockTrailerSize), &contents);
  if (!s.ok()) return s;
  out->assign(contents.data(), contents.size());
  return Status::OK();
}

}  // namespace

struct Table::Rep : TableState {};

namespace {

// Walks the whole index once so that every later lookup can trust it: block
// handles tile the data area [0, data_size) in order, separators increase.
Status CheckIndex(const TableState& rep) {
  BlockIter it;
  Status bad = TableCorruption("bad index block", rep.fname);
  if (!it.Init(rep.index)) return bad;
  uint64_t expected_offset = 0;
  std::string prev_key;
  bool first = true;
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    BlockHandle h;
    if (!rep.DecodeHandle(it.value(), &h) || h.offset != expected_offset) return bad;
    if (!first && it.key() <= prev_key) return bad;
    prev_key.assign(it.key().data(), it.key().size());
    first = false;
    expected_offset = h.end();
  }
  if (it.corrupted() || expected_offset != rep.props.data_size) return bad;
  return Status::OK();
}

}  // namespace

Status Table::Open(const TableOptions& options, std::unique_ptr<RandomAccessFile> file,
                   uint64_t file_size, const std::string& fname, std::unique_ptr<Table>* table) {
  table->reset();
  if (file_size < kFooterSize) {
    return TableCorruption("truncated table (file shorter than the footer)", fname);
  }
  char footer_buf[kFooterSize];
  std::string_view footer_data;
  const uint64_t footer_offset = file_size - kFooterSize;
  Status s = file->Read(footer_offset, kFooterSize, &footer_data, footer_buf);
  if (!s.ok()) return s;
  if (footer_data.size() != kFooterSize) {
    return TableCorruption("truncated table (short footer read)", fname);
  }
  Footer footer;
  if (const char* err = footer.DecodeFrom(footer_data)) return TableCorruption(err, fname);

  auto rep = std::make_unique<Rep>();
  rep->options = options;
  rep->file_size = file_size;
  rep->fname = fname;

  std::string meta;
  s = ReadMetadataBlock(file.get(), footer.meta, footer_offset, fname, "meta", &meta);
  if (!s.ok()) return s;
  if (const char* err = DecodeTableProperties(meta, &rep->props)) {
    return TableCorruption(err, fname);
  }
  // Data blocks come first; the metadata blocks follow them.
  const uint64_t data_size = rep->props.data_size;
  if (data_size > footer.meta.offset || data_size > footer.index.offset ||
      (footer.filter.size > 0 && data_size > footer.filter.offset)) {
    return TableCorruption("bad data size in meta block", fname);
  }
  s = ReadMetadataBlock(file.get(), footer.index, footer_offset, fname, "index", &rep->index);
  if (!s.ok()) return s;
  if (footer.filter.size > 0) {
    s = ReadMetadataBlock(file.get(), footer.filter, footer_offset, fname, "filter", &rep->filter);
    if (!s.ok()) return s;
  }
  s = CheckIndex(*rep);
  if (!s.ok()) return s;

  rep->file = std::move(file);
  table->reset(new Table(std::move(rep)));
  return Status::OK();
}

Table::Table(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
Table::~Table() = default;

bool Table::KeyMayMatch(std::string_view key) const {
  return rep_->filter.empty() || BloomKeyMayMatch(key, rep_->filter);
}

Status Table::Get(std::string_view key, bool* found, ValueType* type, std::string* value) const {
  *found = false;
  const Rep& r = *rep_;
  if (!KeyMayMatch(key)) return Status::OK();

  BlockIter index;
  index.Init(r.index);  // checked by Open
  index.Seek(key);
  if (!index.Valid()) {
    // Past the last separator: absent. (Open walked the index, so
    // corruption here would mean memory corruption.)
    return index.corrupted() ? TableCorruption("bad index block", r.fname) : Status::OK();
  }
  BlockHandle handle;
  if (!r.DecodeHandle(index.value(), &handle)) {
    return TableCorruption("bad block handle in index", r.fname);
  }

  // Most blocks fit a stack buffer: a point lookup then never allocates
  // (besides the value it returns).
  char stack_buf[16384];
  std::unique_ptr<char[]> heap_buf;
  const size_t n = handle.size + kBlockTrailerSize;
  char* scratch = stack_buf;
  if (n > sizeof(stack_buf)) {
    heap_buf = std::make_unique<char[]>(n);
    scratch = heap_buf.get();
  }
  std::string_view contents;
  Status s = ReadBlock(r.file.get(), handle, r.options.verify_checksums, r.fname, scratch,
                      &contents);
  if (!s.ok()) return s;

  BlockIter block;
  if (!block.Init(contents)) return TableCorruption("bad block contents", r.fname, handle.offset);
  block.Seek(key);
  if (block.corrupted()) return TableCorruption("bad block contents", r.fname, handle.offset);
  if (block.Valid() && block.key() == key) {
    *found = true;
    *type = block.type();
    if (value != nullptr) {
      if (block.type() == ValueType::kValue) {
        value->assign(block.value().data(), block.value().size());
      } else {
        value->clear();
      }
    }
  }
  return Status::OK();
}

uint64_t Table::NumEntries() const { return rep_->props.num_entries; }
uint64_t Table::NumDeletions() const { return rep_->props.num_deletions; }
uint64_t Table::FileSize() const { return rep_->file_size; }
uint64_t Table::DataSize() const { return rep_->props.data_size; }
std::string_view Table::smallest_key() const { return rep_->props.smallest_key; }
std::string_view Table::largest_key() const { return rep_->props.largest_key; }

namespace {

// Two levels: the index iterator picks a data block, the data iterator walks
// it. The data block buffer is reused from block to block.
class TableIterator final : public InternalIterator {
 public:
  explicit TableIterator(const TableState* rep) : rep_(rep) {
    index_.Init(rep_->index);  // checked by Open
  }

  bool Valid() const override { return data_loaded_ && data_.Valid(); }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    index_.SeekToFirst();
    LoadBlock();
    if (data_loaded_) data_.SeekToFirst();
    SkipExhaustedBlocks();
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    index_.Seek(target);
    LoadBlock();
    if (data_loaded_) data_.Seek(target);
    SkipExhaustedBlocks();
  }

  void Next() override {
    data_.Next();
    SkipExhaustedBlocks();
  }

  std::string_view key() const override { return data_.key(); }
  std::string_view value() const override { return data_.value(); }
  ValueType type() const override { return data_.type(); }
  Status status() const override { return status_; }
  uint64_t BytesConsumed() const override { return bytes_consumed_; }

 private:
  // Loads the data block under index_, or marks the iterator exhausted.
  void LoadBlock() {
    data_loaded_ = false;
    if (!index_.Valid()) {
      if (index_.corrupted()) {
        SetError(TableCorruption("bad index block", rep_->fname));
      } else {
        bytes_consumed_ = rep_->props.data_size;
      }
      return;
    }
    BlockHandle handle;
    if (!rep_->DecodeHandle(index_.value(), &handle)) {
      SetError(TableCorruption("bad block handle in index", rep_->fname));
      return;
    }
    std::string_view contents;
    Status s = ReadBlock(rep_->file.get(), handle, rep_->options.verify_checksums, rep_->fname,
                         buf_.Reserve(handle.size + kBlockTrailerSize), &contents);
    if (!s.ok()) {
      SetError(s);
      return;
    }
    if (!data_.Init(contents)) {
      SetError(TableCorruption("bad block contents", rep_->fname, handle.offset));
      return;
    }
    data_offset_ = handle.offset;
    bytes_consumed_ = handle.end();
    data_loaded_ = true;
  }

  // Moves past the end of data blocks (a Seek target above a block's last
  // key lands there) to the first entry of the next block.
  void SkipExhaustedBlocks() {
    while (data_loaded_ && !data_.Valid()) {
      if (data_.corrupted()) {
        SetError(TableCorruption("bad block contents", rep_->fname, data_offset_));
        return;
      }
      index_.Next();
      LoadBlock();
      if (data_loaded_) data_.SeekToFirst();
    }
  }

  // The first error sticks: the iterator stays invalid from then on.
  void SetError(Status s) {
    data_loaded_ = false;
    if (status_.ok()) status_ = std::move(s);
  }

  const TableState* const rep_;
  BlockIter index_;
  BlockIter data_;
  bool data_loaded_ = false;
  uint64_t data_offset_ = 0;
  uint64_t bytes_consumed_ = 0;
  BlockBuffer buf_;
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> Table::NewIterator() const {
  return std::make_unique<TableIterator>(rep_.get());
}

}  // namespace lsm
