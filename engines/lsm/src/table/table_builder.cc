#include "table/table_builder.h"

#include <cstdint>
#include <optional>

#include "table/block_builder.h"
#include "table/format.h"
#include "table/meta.h"
#include "table/separator.h"
#include "util/bloom.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace lsm {

namespace {
// Entry sizes the block encoding can represent: the value length is stored
// shifted left by one bit in a varint32.
constexpr size_t kMaxEncodableKey = UINT32_MAX;
constexpr size_t kMaxEncodableValue = UINT32_MAX >> 1;

// Appends contents and its trailer; sets *handle.
Status WriteBlock(WritableFile* file, uint64_t* offset, std::string_view contents,
                  BlockHandle* handle) {
  handle->offset = *offset;
  handle->size = contents.size();
  char trailer[kBlockTrailerSize];
  EncodeFixed32(trailer, crc32c::Mask(crc32c::Value(contents.data(), contents.size())));
  Status s = file->Append(contents);
  if (s.ok()) s = file->Append(std::string_view(trailer, sizeof(trailer)));
  if (s.ok()) *offset += contents.size() + kBlockTrailerSize;
  return s;
}

}  // namespace

struct TableBuilder::Rep {
  Rep(const TableOptions& opt, WritableFile* f)
      : options(opt), file(f), data_block(kDataBlockRestartInterval), index_block(1) {
    if (options.bloom_bits_per_key > 0) {
      filter.emplace(options.bloom_bits_per_key, options.expected_entries);
    }
  }

  TableOptions options;
  WritableFile* file;
  uint64_t offset = 0;
  Status status;
  bool finished = false;
  BlockBuilder data_block;
  BlockBuilder index_block;
  std::optional<BloomFilterBuilder> filter;
  TableProperties props;
  std::string scratch;  // separator keys
  std::string handle_encoding;

  // Writes the pending data block and its index entry. next_key is the
  // first key of the following block, or nullptr after the last block.
  void FlushDataBlock(const std::string_view* next_key) {
    BlockHandle handle;
    status = WriteBlock(file, &offset, data_block.Finish(), &handle);
    if (!status.ok()) return;
    if (next_key != nullptr) {
      ShortestSeparator(data_block.last_key(), *next_key, &scratch);
    } else {
      ShortSuccessor(data_block.last_key(), &scratch);
    }
    handle_encoding.clear();
    handle.EncodeTo(&handle_encoding);
    index_block.Add(scratch, ValueType::kValue, handle_encoding);
    data_block.Reset();
    props.num_data_blocks++;
  }
};

TableBuilder::TableBuilder(const TableOptions& options, WritableFile* file)
    : rep_(std::make_unique<Rep>(options, file)) {}

TableBuilder::~TableBuilder() = default;


void TableBuilder::Add(std::string_view key, ValueType type, std::string_view value) {
  Rep* r = rep_.get();
  if (!r->status.ok()) return;
  if (r->finished) {
    r->status = Status::InvalidArgument("TableBuilder::Add after Finish");
    return;
  }
  if (r->props.num_entries > 0 && key <= r->data_block.last_key()) {
    r->status = Status::InvalidArgument("table keys not in strictly increasing order");
    return;
  }
  if (key.size() > kMaxEncodableKey || value.size() > kMaxEncodableValue) {
    r->status = Status::InvalidArgument("table entry too large");
    return;
  }
  if (type == ValueType::kDeletion) value = {};

  // Close the block before it would exceed its target, so that a block is
  // at most block_bytes unless a single entry is larger. The entry size is
  // an upper bound (the key's shared prefix is not subtracted).
  if (!r->data_block.empty() && r->data_block.CurrentSizeEstimate() + key.size() + value.size() +
                                        3 * kMaxVarint32Bytes >
                                    r->options.block_bytes) {
    r->FlushDataBlock(&key);
    if (!r->status.ok()) return;
  }

  if (r->props.num_entries == 0) r->props.smallest_key.assign(key.data(), key.size());
  if (r->filter) r->filter->AddKey(key);
  r->data_block.Add(key, type, value);
  r->props.num_entries++;
  if (type == ValueType::kDeletion) r->props.num_deletions++;
  r->props.raw_key_bytes += key.size();
  r->props.raw_value_bytes += value.size();
}


Status TableBuilder::Finish() {
  Rep* r = rep_.get();
  if (!r->status.ok()) return r->status;
  if (r->finished) return Status::InvalidArgument("TableBuilder::Finish called twice");
  r->finished = true;

  if (!r->data_block.empty()) {
    r->FlushDataBlock(nullptr);
    if (!r->status.ok()) return r->status;
  }
  r->props.data_size = r->offset;
  if (r->props.num_entries > 0) {
    const std::string_view last = r->data_block.last_key();
    r->props.largest_key.assign(last.data(), last.size());
  }

  Footer footer;
  if (r->filter) {
    std::string filter;
    r->filter->Finish(&filter);
    r->status = WriteBlock(r->file, &r->offset, filter, &footer.filter);
    if (!r->status.ok()) return r->status;
  }
  r->status = WriteBlock(r->file, &r->offset, EncodeTableProperties(r->props), &footer.meta);
  if (!r->status.ok()) return r->status;
  r->status = WriteBlock(r->file, &r->offset, r->index_block.Finish(), &footer.index);
  if (!r->status.ok()) return r->status;

  std::string encoded;
  footer.EncodeTo(&encoded);
  r->status = r->file->Append(encoded);
  if (r->status.ok()) r->offset += encoded.size();
  return r->status;
}

Status TableBuilder::status() const { return rep_->status; }
uint64_t TableBuilder::NumEntries() const { return rep_->props.num_entries; }
uint64_t TableBuilder::FileSize() const { return rep_->offset; }
std::string_view TableBuilder::smallest_key() const { return rep_->props.smallest_key; }

std::string_view TableBuilder::largest_key() const {
  const Rep* r = rep_.get();
  if (r->props.num_entries == 0) return {};
  return r->data_block.last_key();
}

}  // namespace lsm
