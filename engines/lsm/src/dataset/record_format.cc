#include "dataset/record_format.h"

#include "util/coding.h"

namespace lsm::dataset {
namespace {

constexpr char kPutType = 1;
constexpr char kDeleteType = 0;

void PutBigEndian64(std::string* dst, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    dst->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

}  // namespace

std::string EncodeRecordValue(const std::vector<uint64_t>& fields, std::string_view payload) {
  std::string value;
  value.reserve(kMaxVarint32Bytes + 8 * fields.size() + payload.size());
  PutVarint32(&value, static_cast<uint32_t>(fields.size()));
  for (uint64_t f : fields) PutFixed64(&value, f);
  value.append(payload);
  return value;
}

bool DecodeRecordValue(std::string_view value, std::vector<uint64_t>* fields,
                       std::string* payload) {
  uint32_t n;
  if (!GetVarint32(&value, &n) || value.size() / 8 < n) return false;
  fields->resize(n);
  for (uint32_t i = 0; i < n; i++) GetFixed64(&value, &(*fields)[i]);
  if (payload != nullptr) payload->assign(value);
  return true;
}

std::string SecondaryKey(uint64_t field, std::string_view primary_key) {
  std::string key;
  key.reserve(8 + primary_key.size());
  PutBigEndian64(&key, field);
  key.append(primary_key);
  return key;
}

std::string SecondaryKeyPrefix(uint64_t field) { return SecondaryKey(field, {}); }

bool ParseSecondaryKey(std::string_view key, uint64_t* field, std::string_view* primary_key) {
  if (key.size() < 8) return false;
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | static_cast<uint8_t>(key[i]);
  *field = v;
  *primary_key = key.substr(8);
  return true;
}

std::string EncodeLogRecord(const std::vector<TreeWrite>& writes) {
  std::string record;
  PutVarint32(&record, static_cast<uint32_t>(writes.size()));
  for (const TreeWrite& w : writes) {
    PutVarint32(&record, w.tree);
    record.push_back(w.is_delete ? kDeleteType : kPutType);
    PutLengthPrefixedSlice(&record, w.key);
    PutLengthPrefixedSlice(&record, w.value);
  }
  return record;
}

bool DecodeLogRecord(std::string_view record, std::vector<TreeWrite>* writes) {
  uint32_t count;
  if (!GetVarint32(&record, &count)) return false;
  writes->clear();
  for (uint32_t i = 0; i < count; i++) {
    TreeWrite w;
    std::string_view key, value;
    if (!GetVarint32(&record, &w.tree) || record.empty()) return false;
    const char type = record[0];
    record.remove_prefix(1);
    if ((type != kPutType && type != kDeleteType) || !GetLengthPrefixedSlice(&record, &key) ||
        !GetLengthPrefixedSlice(&record, &value)) {
      return false;
    }
    w.is_delete = type == kDeleteType;
    w.key.assign(key);
    w.value.assign(value);
    writes->push_back(std::move(w));
  }
  return record.empty();
}

}  // namespace lsm::dataset
