// How a dataset lays its records out in its trees, and its log records.
//   primary entry:   key = primary key,
//                    value = varint32 n | n x fixed64 field | payload
//   secondary entry: key = big-endian fixed64 field value | primary key,
//                    value = empty (so a range of field values is a key range)
//   log record:      varint32 count | count x (varint32 tree | type byte |
//                    length-prefixed key | length-prefixed value)
// A log record holds every tree write of one dataset write: it is what makes
// the write atomic across trees.
#ifndef LSM_SRC_DATASET_RECORD_FORMAT_H_
#define LSM_SRC_DATASET_RECORD_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lsm::dataset {

std::string EncodeRecordValue(const std::vector<uint64_t>& fields, std::string_view payload);
// False for a malformed value.
bool DecodeRecordValue(std::string_view value, std::vector<uint64_t>* fields,
                       std::string* payload);

std::string SecondaryKey(uint64_t field, std::string_view primary_key);
// The smallest secondary key of field value `field`.
std::string SecondaryKeyPrefix(uint64_t field);
// False for a key shorter than the field.
bool ParseSecondaryKey(std::string_view key, uint64_t* field, std::string_view* primary_key);

// One tree write of a dataset write.
struct TreeWrite {
  uint32_t tree = 0;  // 0 = primary, 1 + i = secondary index i
  bool is_delete = false;
  std::string key;
  std::string value;
};

std::string EncodeLogRecord(const std::vector<TreeWrite>& writes);
bool DecodeLogRecord(std::string_view record, std::vector<TreeWrite>* writes);

}  // namespace lsm::dataset

#endif  // LSM_SRC_DATASET_RECORD_FORMAT_H_
