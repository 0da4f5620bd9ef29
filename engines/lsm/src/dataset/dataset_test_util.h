// Helpers shared by the dataset tests: an in-memory model of a dataset and
// the checks of a dataset against it.
#ifndef LSM_SRC_DATASET_DATASET_TEST_UTIL_H_
#define LSM_SRC_DATASET_DATASET_TEST_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lsm/dataset.h"

namespace lsm::test {

struct ModelRecord {
  std::vector<uint64_t> fields;
  std::string payload;
  bool operator==(const ModelRecord& o) const {
    return fields == o.fields && payload == o.payload;
  }
};
using DatasetModel = std::map<std::string, ModelRecord>;

// The model's answer to Query(index, low, high): keys in order.
inline std::vector<std::string> ModelQuery(const DatasetModel& model, int index, uint64_t low,
                                           uint64_t high) {
  std::vector<std::string> keys;
  for (const auto& [key, record] : model) {
    const uint64_t f = record.fields[static_cast<size_t>(index)];
    if (f >= low && f < high) keys.push_back(key);
  }
  return keys;
}

// One query against the model: the same keys in order, each with the
// model's current record.
inline void CheckQuery(Dataset* dataset, const DatasetModel& model, int index, uint64_t low,
                       uint64_t high, const std::string& where) {
  std::vector<Record> got;
  Status s = dataset->Query(index, low, high, &got);
  ASSERT_TRUE(s.ok()) << where << ": " << s.ToString();
  const std::vector<std::string> want = ModelQuery(model, index, low, high);
  ASSERT_EQ(got.size(), want.size())
      << where << ": index " << index << " [" << low << ", " << high << ")";
  for (size_t i = 0; i < got.size(); i++) {
    ASSERT_EQ(got[i].key, want[i]) << where;
    const ModelRecord& m = model.at(want[i]);
    ASSERT_EQ(got[i].fields, m.fields) << where << " key " << want[i];
    ASSERT_EQ(got[i].payload, m.payload) << where << " key " << want[i];
  }
}

// Every index over its whole range, and every model record by key.
inline void CheckWholeDataset(Dataset* dataset, const DatasetModel& model, int indexes,
                              const std::string& where) {
  for (int i = 0; i < indexes; i++) {
    ASSERT_NO_FATAL_FAILURE(CheckQuery(dataset, model, i, 0, UINT64_MAX, where));
  }
  Record record;
  for (const auto& [key, m] : model) {
    Status s = dataset->Get(key, &record);
    ASSERT_TRUE(s.ok()) << where << " key " << key << ": " << s.ToString();
    ASSERT_EQ(record.fields, m.fields) << where << " key " << key;
    ASSERT_EQ(record.payload, m.payload) << where << " key " << key;
  }
}

}  // namespace lsm::test

#endif  // LSM_SRC_DATASET_DATASET_TEST_UTIL_H_
