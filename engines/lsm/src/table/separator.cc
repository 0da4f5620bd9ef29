#include "table/separator.h"

#include <algorithm>

namespace lsm {
namespace {

// Sets *result to start[0, from) followed by start[j] + 1, where j >= from is
// the first position whose byte is not 0xff; that key is > start. Returns
// false (and leaves *result alone) if every byte from `from` on is 0xff.
bool IncrementAfter(std::string_view start, size_t from, std::string* result) {
  for (size_t j = from; j < start.size(); j++) {
    const auto byte = static_cast<uint8_t>(start[j]);
    if (byte != 0xff) {
      result->assign(start.data(), j);
      result->push_back(static_cast<char>(byte + 1));
      return true;
    }
  }
  return false;
}

}  // namespace

void ShortestSeparator(std::string_view start, std::string_view limit, std::string* result) {
  const size_t min_len = std::min(start.size(), limit.size());
  size_t diff = 0;
  while (diff < min_len && start[diff] == limit[diff]) diff++;
  if (diff < min_len) {
    const auto s = static_cast<uint8_t>(start[diff]);
    const auto l = static_cast<uint8_t>(limit[diff]);
    // s < l since start < limit.
    if (s + 1 < l) {
      // prefix + (s + 1): above start, below limit at position diff.
      result->assign(start.data(), diff);
      result->push_back(static_cast<char>(s + 1));
      return;
    }
    // l == s + 1: keep start[diff] (so the key stays below limit) and
    // increment a later byte of start.
    if (IncrementAfter(start, diff + 1, result)) return;
  }
  // start is a prefix of limit, or nothing shorter exists.
  result->assign(start.data(), start.size());
}

void ShortSuccessor(std::string_view start, std::string* result) {
  if (!IncrementAfter(start, 0, result)) result->assign(start.data(), start.size());
}

}  // namespace lsm
