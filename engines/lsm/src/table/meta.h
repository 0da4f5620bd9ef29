// The meta block: table properties as a block whose keys are property names
// (sorted) and whose values are varint64 numbers or raw keys.
#ifndef LSM_SRC_TABLE_META_H_
#define LSM_SRC_TABLE_META_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace lsm {

struct TableProperties {
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;
  uint64_t num_data_blocks = 0;
  uint64_t data_size = 0;  // bytes of the data blocks, trailers included
  uint64_t raw_key_bytes = 0;
  uint64_t raw_value_bytes = 0;
  std::string smallest_key;
  std::string largest_key;
};

// Returns the meta block contents (a finished block).
std::string EncodeTableProperties(const TableProperties& props);

// Parses meta block contents. Unknown properties are skipped (newer
// writers may add some); missing required ones (entries, data size,
// smallest and largest key) are an error. Returns nullptr or what is wrong.
const char* DecodeTableProperties(std::string_view contents, TableProperties* props);

}  // namespace lsm

#endif  // LSM_SRC_TABLE_META_H_
