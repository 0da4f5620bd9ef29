#include "table/meta.h"

#include "table/block.h"
#include "table/block_builder.h"
#include "util/coding.h"

namespace lsm {
namespace {

// Property names, in the bytewise order the block requires.
constexpr std::string_view kDataBlocks = "data.blocks";
constexpr std::string_view kDataSize = "data.size";
constexpr std::string_view kEntries = "entries";
constexpr std::string_view kDeletions = "entries.deletions";
constexpr std::string_view kLargestKey = "key.largest";
constexpr std::string_view kSmallestKey = "key.smallest";
constexpr std::string_view kRawKeyBytes = "raw.key.bytes";
constexpr std::string_view kRawValueBytes = "raw.value.bytes";

void AddNumber(BlockBuilder* b, std::string_view name, uint64_t v, std::string* scratch) {
  scratch->clear();
  PutVarint64(scratch, v);
  b->Add(name, ValueType::kValue, *scratch);
}

bool ParseNumber(std::string_view value, uint64_t* v) {
  return GetVarint64(&value, v) && value.empty();
}

}  // namespace

std::string EncodeTableProperties(const TableProperties& props) {
  BlockBuilder b(1);
  std::string scratch;
  AddNumber(&b, kDataBlocks, props.num_data_blocks, &scratch);
  AddNumber(&b, kDataSize, props.data_size, &scratch);
  AddNumber(&b, kEntries, props.num_entries, &scratch);
  AddNumber(&b, kDeletions, props.num_deletions, &scratch);
  b.Add(kLargestKey, ValueType::kValue, props.largest_key);
  b.Add(kSmallestKey, ValueType::kValue, props.smallest_key);
  AddNumber(&b, kRawKeyBytes, props.raw_key_bytes, &scratch);
  AddNumber(&b, kRawValueBytes, props.raw_value_bytes, &scratch);
  return std::string(b.Finish());
}

const char* DecodeTableProperties(std::string_view contents, TableProperties* props) {
  BlockIter it;
  if (!it.Init(contents)) return "bad meta block";
  bool have_entries = false, have_size = false, have_smallest = false, have_largest = false;
  bool ok = true;
  for (it.SeekToFirst(); it.Valid() && ok; it.Next()) {
    const std::string_view name = it.key();
    const std::string_view value = it.value();
    if (name == kDataBlocks) {
      ok = ParseNumber(value, &props->num_data_blocks);
    } else if (name == kDataSize) {
      ok = have_size = ParseNumber(value, &props->data_size);
    } else if (name == kEntries) {
      ok = have_entries = ParseNumber(value, &props->num_entries);
    } else if (name == kDeletions) {
      ok = ParseNumber(value, &props->num_deletions);
    } else if (name == kLargestKey) {
      props->largest_key.assign(value.data(), value.size());
      have_largest = true;
    } else if (name == kSmallestKey) {
      props->smallest_key.assign(value.data(), value.size());
      have_smallest = true;
    } else if (name == kRawKeyBytes) {
      ok = ParseNumber(value, &props->raw_key_bytes);
    } else if (name == kRawValueBytes) {
      ok = ParseNumber(value, &props->raw_value_bytes);
    }
  }
  if (!ok || it.corrupted()) return "bad meta block";
  if (!(have_entries && have_size && have_smallest && have_largest)) {
    return "meta block lacks a required property";
  }
  return nullptr;
}

}  // namespace lsm
