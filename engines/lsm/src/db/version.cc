#include "db/version.h"

#include <algorithm>

namespace lsm {

const ComponentFile* ReadSource::Candidate(std::string_view key) const {
  // The first file whose largest key is not below key; it holds the key if
  // its smallest is not above it (the ranges are disjoint and sorted).
  auto it = std::lower_bound(files.begin(), files.end(), key,
                             [](const ComponentFile* f, std::string_view k) {
                               return std::string_view(f->meta().largest) < k;
                             });
  if (it == files.end() || key < std::string_view((*it)->meta().smallest)) return nullptr;
  return *it;
}

void Version::Index(bool partitioned) {
  read_order.clear();
  for (auto it = stack.rbegin(); it != stack.rend();) {
    const int level = (*it)->meta().level;
    ReadSource source;
    if (!partitioned || level == 0) {
      source.files.push_back((it++)->get());
    } else {
      for (; it != stack.rend() && (*it)->meta().level == level; ++it) {
        source.files.push_back(it->get());
      }
      std::sort(source.files.begin(), source.files.end(),
                [](const ComponentFile* a, const ComponentFile* b) {
                  return a->meta().smallest < b->meta().smallest;
                });
    }
    read_order.push_back(std::move(source));
  }
}

}  // namespace lsm
