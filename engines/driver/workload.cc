#include "driver/workload.h"

#include <cmath>

namespace lsmbench {
namespace driver {

namespace {

const std::vector<std::string>& OpTypeNames() {
  static const std::vector<std::string> names = {"insert", "update", "delete", "read", "scan",
                                                 "rmw"};
  return names;
}

constexpr uint32_t kMaxKeySize = 1024;
constexpr uint64_t kMaxValueSize = 64 << 20;
constexpr int kMaxDigits = 19;  // 10^19 < 2^64

}  // namespace

const char* OpTypeName(int type) { return OpTypeNames()[type].c_str(); }

const std::vector<std::string>& DistributionNames() {
  static const std::vector<std::string> names = {"uniform", "zipfian", "latest",
                                                 "scrambled_zipfian"};
  return names;
}

const std::vector<std::string>& InsertOrderNames() {
  static const std::vector<std::string> names = {"hashed", "ordered"};
  return names;
}

const std::vector<std::string>& WorkloadFields() {
  static const std::vector<std::string> names = {
      "name",         "description", "record_count", "key_size",    "key_prefix", "value_size",
      "operations",   "distribution", "zipf_theta",  "scan_length", "seed",       "arrival",
      "secondary_fields", "secondary_values", "secondary_distribution", "insert_order",
      "mixgraph", "rocksdb_trace", "rocksdb_trace_repeat", "scrambled_zipfian_items"};
  return names;
}

double WorkloadSpec::MeanValueSize() const {
  if (trace) return trace->mean_value_size;
  if (mixgraph) return mixgraph->MeanValueSize();
  return (static_cast<double>(value_size_min) + value_size_max) / 2;
}

uint64_t WorkloadSpec::KeyCapacity() const {
  const int digits = static_cast<int>(key_size) - static_cast<int>(key_prefix.size());
  uint64_t cap = 1;
  for (int i = 0; i < std::min(digits, kMaxDigits); i++) cap *= 10;
  return cap;
}

namespace {

// A fixed size as a number, a range as {min, max}.
Json SizeJson(uint32_t lo, uint32_t hi) {
  if (lo == hi) return lo;
  return Json{{"min", lo}, {"max", hi}};
}

// A field that is a number in [min, max] or {min, max} (a uniform range).
Status GetSizeOrRange(const JsonObject& obj, const char* name, uint64_t min, uint64_t max,
                      const char* what, uint32_t* lo_out, uint32_t* hi_out) {
  if (!obj.Has(name)) return Status::OK();
  uint64_t lo = 0, hi = 0;
  Status s;
  if (obj.Raw(name).is_object()) {
    JsonObject range;
    s = obj.GetObject(name, {"min", "max"}, &range);
    if (s.ok()) s = range.Required("min");
    if (s.ok()) s = range.Required("max");
    if (s.ok()) s = range.GetUint("min", min, max, &lo);
    if (s.ok()) s = range.GetUint("max", min, max, &hi);
    if (s.ok() && lo > hi) s = range.Error("max", "must be >= min");
    if (!s.ok()) return s;
  } else {
    s = obj.GetUint(name, min, max, &lo);
    if (!s.ok()) {
      return obj.Error(name, std::string("expected ") + what + " or {min, max} (" +
                                 ErrorText(s) + ")");
    }
    hi = lo;
  }
  *lo_out = static_cast<uint32_t>(lo);
  *hi_out = static_cast<uint32_t>(hi);
  return Status::OK();
}

// db_bench's mixgraph decides what these fields would: giving both is
// ambiguous.
Status ApplyMixgraph(const JsonObject& obj, WorkloadSpec* w) {
  for (const char* field : {"operations", "distribution", "zipf_theta", "value_size",
                            "scan_length", "scrambled_zipfian_items"}) {
    if (obj.Has(field)) {
      return obj.Error(field, "not with mixgraph, whose parameters decide the operation mix, "
                              "the keys, the value sizes and the scan lengths");
    }
  }
  if (w->insert_order != InsertOrder::kOrdered && obj.Has("insert_order")) {
    return obj.Error("insert_order", "must be ordered with mixgraph: its key ranges are ranges "
                                     "of the key order, as db_bench's");
  }
  MixgraphSpec m;
  Status s = ParseMixgraph(obj.Raw("mixgraph"), obj.PathOf("mixgraph"), w->record_count, &m);
  if (!s.ok()) return s;
  w->mix = {};
  w->mix[kRead] = m.mix_get_ratio;
  w->mix[kUpdate] = m.mix_put_ratio;
  w->mix[kScan] = m.mix_seek_ratio;
  w->insert_order = InsertOrder::kOrdered;
  // db_bench's bounds: a value above the maximum is taken modulo it, and so
  // is every scan length.
  w->value_size_min = 0;
  w->value_size_max = static_cast<uint32_t>(m.mix_max_value_size);
  w->scan_length_min = 0;
  w->scan_length_max = static_cast<uint32_t>(m.mix_max_scan_len - 1);
  w->mixgraph = m;
  return Status::OK();
}

// A trace decides the keys, the mix and the value sizes; record_count only
// says whether the load inserts the trace's keys.
Status ReadTraceFields(const JsonObject& obj, WorkloadSpec* w) {
  for (const char* field : {"operations", "distribution", "zipf_theta", "value_size", "mixgraph",
                            "scrambled_zipfian_items",
                            "key_size", "key_prefix", "insert_order", "secondary_fields",
                            "secondary_values", "secondary_distribution"}) {
    if (obj.Has(field)) {
      return obj.Error(field, "not with rocksdb_trace, whose operations, keys and value sizes "
                              "are replayed as traced");
    }
  }
  Status s = obj.GetString("rocksdb_trace", &w->rocksdb_trace);
  if (s.ok() && w->rocksdb_trace.empty()) s = obj.Error("rocksdb_trace", "is empty");
  if (s.ok()) s = obj.GetBool("rocksdb_trace_repeat", &w->rocksdb_trace_repeat);
  if (!s.ok()) return s;
  if (obj.Has("record_count") && w->record_count != 0) {
    return obj.Error("record_count", "with rocksdb_trace, 0 (no load) or left out (the load "
                                     "inserts the distinct keys the trace uses)");
  }
  w->load_trace_keys = !obj.Has("record_count");
  // A trace records a seek, not the nexts after it: by default a scan is the
  // seek and one entry.
  if (!obj.Has("scan_length")) w->scan_length_min = w->scan_length_max = 1;
  w->mix = {};
  return Status::OK();
}

}  // namespace

Status ApplyTraceMeasure(std::shared_ptr<const TraceMeasure> measure, const std::string& path,
                         WorkloadSpec* w) {
  const TraceMeasure& m = *measure;
  if (m.ops == 0) {
    return Status::InvalidArgument(path + ".rocksdb_trace: " + m.path +
                                   " holds no operation the driver replays");
  }
  if (w->load_trace_keys) {
    if (!m.keys_complete) {
      return Status::InvalidArgument(
          path + ".rocksdb_trace: " + m.path + " uses more distinct keys than a load keeps in "
          "memory; give record_count: 0 to replay it without a load");
    }
    w->record_count = m.keys->size();
  }
  w->key_size = std::max<uint32_t>(m.max_key_size, 1);
  w->key_prefix.clear();
  w->value_size_min = 0;
  w->value_size_max = static_cast<uint32_t>(std::min<uint64_t>(m.max_value_size, UINT32_MAX));
  w->mix = {};
  for (int t = 0; t < kNumOpTypes; t++) {
    w->mix[t] = static_cast<double>(m.ops_by_type[t]) / static_cast<double>(m.ops);
  }
  w->trace = std::move(measure);
  return Status::OK();
}

Json WorkloadSpec::ToJson() const {
  Json j;
  if (!name.empty()) j["name"] = name;
  j["record_count"] = record_count;
  j["key_size"] = key_size;
  j["key_prefix"] = key_prefix;
  j["insert_order"] = InsertOrderNames()[static_cast<int>(insert_order)];
  if (!rocksdb_trace.empty()) {
    // The keys, the mix and the value sizes are the trace's.
    j.erase("key_size");
    j.erase("key_prefix");
    j.erase("insert_order");
    j["rocksdb_trace"] = rocksdb_trace;
    if (rocksdb_trace_repeat) j["rocksdb_trace_repeat"] = true;
    if (!load_trace_keys) j["record_count"] = 0;
    else j.erase("record_count");
    j["scan_length"] = SizeJson(scan_length_min, scan_length_max);
  } else if (mixgraph) {
    // The mix, the keys, the value sizes and the scan lengths are mixgraph's.
    j["mixgraph"] = mixgraph->ToJson();
  } else {
    Json ops = Json::object();
    for (int t = 0; t < kNumOpTypes; t++) {
      if (mix[t] > 0) ops[OpTypeName(t)] = mix[t];
    }
    j["operations"] = ops;
    j["value_size"] = SizeJson(value_size_min, value_size_max);
    j["distribution"] = DistributionNames()[static_cast<int>(distribution)];
    j["zipf_theta"] = zipf_theta;
    if (distribution == Distribution::kScrambledZipfian) {
      j["scrambled_zipfian_items"] = ScrambledZipfianItems();
    }
    j["scan_length"] = SizeJson(scan_length_min, scan_length_max);
  }
  if (secondary_fields > 0) {
    j["secondary_fields"] = secondary_fields;
    j["secondary_values"] = SecondaryValues();
    j["secondary_distribution"] = DistributionNames()[static_cast<int>(secondary_distribution)];
  }
  j["seed"] = seed;
  if (!arrival.is_null()) j["arrival"] = arrival;
  return j;
}

std::string WorkloadDefaultsJson() { return WorkloadSpec().ToJson().dump(1) + "\n"; }

Status ParseWorkload(const Json& json, const std::string& path, WorkloadSpec* out) {
  JsonObject obj;
  Status s = JsonObject::Open(json, path, WorkloadFields(), &obj);
  if (!s.ok()) return s;
  WorkloadSpec w;
  std::string description;
  s = obj.GetString("name", &w.name);
  if (s.ok()) s = obj.GetString("description", &description);
  if (s.ok() && !obj.Has("rocksdb_trace")) s = obj.Required("record_count");
  if (s.ok()) s = obj.GetUint("record_count", 0, UINT64_MAX, &w.record_count);
  uint64_t key_size = w.key_size;
  if (s.ok()) s = obj.GetUint("key_size", 1, kMaxKeySize, &key_size);
  w.key_size = static_cast<uint32_t>(key_size);
  if (s.ok()) s = obj.GetString("key_prefix", &w.key_prefix);
  if (!s.ok()) return s;
  if (w.key_prefix.size() >= w.key_size) {
    return obj.Error("key_size", "must exceed the length of key_prefix '" + w.key_prefix +
                                     "' by at least one digit");
  }
  if (w.record_count > w.KeyCapacity()) {
    return obj.Error("record_count", "exceeds the " + std::to_string(w.KeyCapacity()) +
                                         " distinct keys that key_size " +
                                         std::to_string(w.key_size) + " with prefix '" +
                                         w.key_prefix + "' can hold");
  }

  s = GetSizeOrRange(obj, "value_size", 0, kMaxValueSize, "a byte count", &w.value_size_min,
                     &w.value_size_max);
  if (!s.ok()) return s;

  if (obj.Has("operations")) {
    std::map<std::string, double> ops;
    s = obj.GetNumberMap("operations", OpTypeNames(), &ops);
    if (!s.ok()) return s;
    double sum = 0;
    for (int t = 0; t < kNumOpTypes; t++) {
      auto it = ops.find(OpTypeName(t));
      w.mix[t] = it == ops.end() ? 0.0 : it->second;
      sum += w.mix[t];
    }
    if (std::fabs(sum - 1.0) > 1e-6) {
      return obj.Error("operations", "proportions must sum to 1 (they sum to " +
                                         std::to_string(sum) + ")");
    }
  }
  if (w.record_count == 0 && w.mix[kInsert] == 0 && !obj.Has("rocksdb_trace")) {
    return obj.Error("record_count",
                     "is 0, so the operations other than insert would have no keys: "
                     "load records or add inserts");
  }

  size_t dist = 0;
  s = obj.GetChoice("distribution", DistributionNames(), &dist);
  if (!s.ok()) return s;
  w.distribution = static_cast<Distribution>(dist);
  s = obj.GetDouble("zipf_theta", -1e300, 1e300, &w.zipf_theta);
  if (s.ok() && !(w.zipf_theta > 0 && w.zipf_theta < 1)) {
    s = obj.Error("zipf_theta", "must be in (0, 1) (got " + obj.Raw("zipf_theta").dump() + ")");
  }
  if (s.ok()) s = obj.GetUint("scrambled_zipfian_items", 1, UINT64_MAX, &w.scrambled_zipfian_items);
  if (s.ok() && obj.Has("scrambled_zipfian_items") &&
      w.distribution != Distribution::kScrambledZipfian) {
    s = obj.Error("scrambled_zipfian_items", "only with distribution: scrambled_zipfian");
  }
  if (s.ok()) {
    s = GetSizeOrRange(obj, "scan_length", 1, 1 << 24, "a record count", &w.scan_length_min,
                       &w.scan_length_max);
  }
  if (s.ok()) s = obj.GetUint("seed", 0, UINT64_MAX, &w.seed);
  uint64_t secondary_fields = 0;
  if (s.ok()) s = obj.GetUint("secondary_fields", 0, kMaxSecondaryFields, &secondary_fields);
  w.secondary_fields = static_cast<uint32_t>(secondary_fields);
  if (s.ok()) s = obj.GetUint("secondary_values", 0, UINT64_MAX, &w.secondary_values);
  size_t secondary_dist = 0;
  if (s.ok()) s = obj.GetChoice("secondary_distribution", DistributionNames(), &secondary_dist);
  w.secondary_distribution = static_cast<Distribution>(secondary_dist);
  if (!s.ok()) return s;
  if (obj.Has("rocksdb_trace_repeat") && !obj.Has("rocksdb_trace")) {
    return obj.Error("rocksdb_trace_repeat", "only with rocksdb_trace");
  }
  if (w.secondary_distribution == Distribution::kLatest) {
    return obj.Error("secondary_distribution", "must be uniform or zipfian (latest is about "
                                               "keys, not field values)");
  }
  if (w.secondary_fields == 0 &&
      (obj.Has("secondary_values") || obj.Has("secondary_distribution"))) {
    const char* field =
        obj.Has("secondary_values") ? "secondary_values" : "secondary_distribution";
    return obj.Error(field, "describes secondary fields, but secondary_fields is 0");
  }
  if (obj.Has("arrival")) {
    // Only the field names are checked here: the run configuration merges
    // this with its own arrival section (which may add the rate) and
    // validates the result.
    JsonObject arrival;
    s = obj.GetObject("arrival", ArrivalFields(), &arrival);
    if (!s.ok()) return s;
    w.arrival = obj.Raw("arrival");
  }
  size_t order = 0;
  s = obj.GetChoice("insert_order", InsertOrderNames(), &order);
  if (!s.ok()) return s;
  w.insert_order = static_cast<InsertOrder>(order);
  if (obj.Has("mixgraph")) {
    s = ApplyMixgraph(obj, &w);
    if (!s.ok()) return s;
  }
  if (obj.Has("rocksdb_trace")) {
    s = ReadTraceFields(obj, &w);
    if (!s.ok()) return s;
  }
  *out = std::move(w);
  return Status::OK();
}

}  // namespace driver
}  // namespace lsmbench
