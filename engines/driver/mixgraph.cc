#include "driver/mixgraph.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace lsmbench {
namespace driver {

namespace {

constexpr uint64_t kMaxValueSize = 64 << 20;
constexpr uint32_t kMinValueSize = 10;  // db_bench's floor
// db_bench turns key-range weights into integer shares; beyond this their
// sum would overflow its int64 arithmetic.
constexpr double kMaxAccessTotal = 0x1p62;

// The key-range weights of db_bench's two-term exponential as integer
// shares, for ranges N .. 1 in the order db_bench computes them
// (GenerateTwoTermExpKeys::InitiateExpDistribution). Returns their sum.
double RangeAccesses(const MixgraphSpec& m, std::vector<int64_t>* accesses) {
  accesses->clear();
  double amplify = 0, total = 0;
  for (uint64_t x = m.keyrange_num; x >= 1; x--) {
    double p = m.keyrange_dist_a * std::exp(m.keyrange_dist_b * static_cast<double>(x)) +
               m.keyrange_dist_c * std::exp(m.keyrange_dist_d * static_cast<double>(x));
    if (!(p >= 1e-16)) p = 0;
    // The first range with a weight fixes the scale (db_bench's "amplify"):
    // it gets about one share.
    if (amplify == 0 && p > 0) amplify = std::floor(1 / p) + 1;
    const double a = p > 0 ? std::floor(amplify * p) : 0;
    total += a;
    // (A sum beyond the limit is refused by the caller; the cast must not overflow.)
    accesses->push_back(a <= kMaxAccessTotal ? static_cast<int64_t>(a) : 0);
  }
  return total;
}

}  // namespace

const std::vector<std::string>& MixgraphFields() {
  static const std::vector<std::string> names = {
      "mix_get_ratio",   "mix_put_ratio",   "mix_seek_ratio",     "keyrange_num",
      "keyrange_dist_a", "keyrange_dist_b", "keyrange_dist_c",    "keyrange_dist_d",
      "key_dist_a",      "key_dist_b",      "value_theta",        "value_k",
      "value_sigma",     "iter_theta",      "iter_k",             "iter_sigma",
      "mix_max_value_size", "mix_max_scan_len"};
  return names;
}

double ParetoInverse(double u, double theta, double k, double sigma) {
  if (k == 0.0) return theta - sigma * std::log(u);
  return theta + sigma * (std::pow(u, -k) - 1) / k;
}

uint32_t MixgraphValueSize(const MixgraphSpec& m, double u) {
  const double v = std::ceil(ParetoInverse(u, m.value_theta, m.value_k, m.value_sigma));
  if (!(v >= kMinValueSize)) return kMinValueSize;
  const double max = static_cast<double>(m.mix_max_value_size);
  return static_cast<uint32_t>(v > max ? std::fmod(v, max) : v);
}

uint32_t MixgraphScanLength(const MixgraphSpec& m, double u) {
  const double v = std::ceil(ParetoInverse(u, m.iter_theta, m.iter_k, m.iter_sigma));
  if (!(v >= 0)) return 0;
  return static_cast<uint32_t>(std::fmod(v, static_cast<double>(m.mix_max_scan_len)));
}

double MixgraphSpec::MeanValueSize() const {
  // Midpoints of 2^16 equal slices of u: the clamps make a closed form
  // awkward, and this is exact to well under a byte for any finite mean.
  constexpr int kSlices = 1 << 16;
  double sum = 0;
  for (int i = 0; i < kSlices; i++) sum += MixgraphValueSize(*this, (i + 0.5) / kSlices);
  return sum / kSlices;
}

Json MixgraphSpec::ToJson() const {
  return Json{{"mix_get_ratio", mix_get_ratio},
              {"mix_put_ratio", mix_put_ratio},
              {"mix_seek_ratio", mix_seek_ratio},
              {"keyrange_num", keyrange_num},
              {"keyrange_dist_a", keyrange_dist_a},
              {"keyrange_dist_b", keyrange_dist_b},
              {"keyrange_dist_c", keyrange_dist_c},
              {"keyrange_dist_d", keyrange_dist_d},
              {"key_dist_a", key_dist_a},
              {"key_dist_b", key_dist_b},
              {"value_theta", value_theta},
              {"value_k", value_k},
              {"value_sigma", value_sigma},
              {"iter_theta", iter_theta},
              {"iter_k", iter_k},
              {"iter_sigma", iter_sigma},
              {"mix_max_value_size", mix_max_value_size},
              {"mix_max_scan_len", mix_max_scan_len}};
}

Status ParseMixgraph(const Json& json, const std::string& path, uint64_t record_count,
                     MixgraphSpec* out) {
  JsonObject obj;
  Status s = JsonObject::Open(json, path, MixgraphFields(), &obj);
  if (!s.ok()) return s;
  MixgraphSpec m;
  constexpr double kHuge = 1e300;
  struct Number {
    const char* name;
    double* field;
    double min;
  };
  const Number numbers[] = {
      {"mix_get_ratio", &m.mix_get_ratio, 0},     {"mix_put_ratio", &m.mix_put_ratio, 0},
      {"mix_seek_ratio", &m.mix_seek_ratio, 0},   {"keyrange_dist_a", &m.keyrange_dist_a, -kHuge},
      {"keyrange_dist_b", &m.keyrange_dist_b, -kHuge},
      {"keyrange_dist_c", &m.keyrange_dist_c, -kHuge},
      {"keyrange_dist_d", &m.keyrange_dist_d, -kHuge},
      {"key_dist_a", &m.key_dist_a, -kHuge},      {"key_dist_b", &m.key_dist_b, -kHuge},
      {"value_theta", &m.value_theta, 0},         {"value_k", &m.value_k, -kHuge},
      {"value_sigma", &m.value_sigma, -kHuge},    {"iter_theta", &m.iter_theta, 0},
      {"iter_k", &m.iter_k, -kHuge},              {"iter_sigma", &m.iter_sigma, -kHuge},
  };
  for (const Number& n : numbers) {
    s = obj.GetDouble(n.name, n.min, kHuge, n.field);
    if (!s.ok()) return s;
  }
  s = obj.GetUint("keyrange_num", 1, UINT32_MAX, &m.keyrange_num);
  if (s.ok()) s = obj.GetUint("mix_max_value_size", 1, kMaxValueSize, &m.mix_max_value_size);
  if (s.ok()) s = obj.GetUint("mix_max_scan_len", 1, 1 << 24, &m.mix_max_scan_len);
  if (!s.ok()) return s;

  const double sum = m.mix_get_ratio + m.mix_put_ratio + m.mix_seek_ratio;
  if (std::fabs(sum - 1.0) > 1e-6) {
    return obj.Error("mix_get_ratio",
                     "mix_get_ratio + mix_put_ratio + mix_seek_ratio must sum to 1 (they sum "
                     "to " + std::to_string(sum) + "; db_bench would rescale them silently)");
  }
  if (!(m.value_sigma > 0) || !(m.iter_sigma > 0)) {
    return obj.Error(m.value_sigma > 0 ? "iter_sigma" : "value_sigma",
                     "must be > 0 (the Generalized Pareto's scale)");
  }
  if (!(m.value_k < 1)) {
    return obj.Error("value_k", "must be < 1: a Generalized Pareto with shape k >= 1 has no "
                                "finite mean, so the data size would have none");
  }
  if (m.key_dist_a < 0 || m.key_dist_b < 0) {
    return obj.Error(m.key_dist_a < 0 ? "key_dist_a" : "key_dist_b",
                     "must be >= 0: the power CDF a*x^b needs a positive shape (0 on either "
                     "turns the power model off)");
  }
  if (m.PowerKeys() && m.key_dist_a > 1) {
    return obj.Error("key_dist_a", "must be <= 1: F(1) = key_dist_a is the hottest key's "
                                   "share of accesses");
  }
  if (m.KeyRanges()) {
    if (m.keyrange_num > std::max<uint64_t>(record_count, 1)) {
      return obj.Error("keyrange_num", "exceeds record_count (" + std::to_string(record_count) +
                                           "): a key range needs at least one key");
    }
    std::vector<int64_t> accesses;
    const double total = RangeAccesses(m, &accesses);
    if (total <= 0) {
      return obj.Error("keyrange_dist_a", "with keyrange_dist_b..d, gives every key range a "
                                          "weight below 1e-16: no range would be accessed");
    }
    if (total > kMaxAccessTotal) {
      return obj.Error("keyrange_dist_a", "with keyrange_dist_b..d, gives weights that span "
                                          "more than 18 orders of magnitude (db_bench's "
                                          "integer shares would overflow)");
    }
  } else if (obj.Has("keyrange_num") && m.keyrange_num > 1) {
    return obj.Error("keyrange_num", "needs the key-range weights keyrange_dist_a..d");
  }
  *out = m;
  return Status::OK();
}

MixgraphKeys::MixgraphKeys(const MixgraphSpec& spec, uint64_t num, uint64_t seed)
    : spec_(spec), num_(std::max<uint64_t>(num, 1)), salt_(Hash64(seed, 0x6d6978)) {
  range_size_ = num_;
  if (!spec.KeyRanges()) return;
  range_size_ = std::max<uint64_t>(num_ / spec.keyrange_num, 1);
  access_total_ = static_cast<int64_t>(RangeAccesses(spec, &range_accesses_));
  // db_bench places the ranges by a shuffle seeded with the total share
  // (RocksDB's Random64 is std::mt19937_64), so the same parameters put the
  // same hot ranges at the same places in both tools.
  std::mt19937_64 shuffle(static_cast<uint64_t>(access_total_));
  const uint64_t n = range_accesses_.size();
  for (uint64_t i = 0; i < n; i++) std::swap(range_accesses_[i], range_accesses_[shuffle() % n]);
  int64_t start = 0;
  for (int64_t a : range_accesses_) {
    range_starts_.push_back(start);
    start += a;
  }
}

double MixgraphKeys::RangeShare(uint64_t i) const {
  if (range_starts_.empty()) return 1.0;
  return static_cast<double>(range_accesses_[i]) / static_cast<double>(access_total_);
}

uint64_t MixgraphKeys::Offset(uint64_t j, uint64_t size) const {
  if (!spec_.PowerKeys()) return j;
  // The power CDF F(x) = a x^b at u = j / size inverted gives a rank, and the
  // rank's hash the key (db_bench seeds a generator with the rank and takes
  // its first number modulo the size).
  const double u = static_cast<double>(j) / static_cast<double>(size);
  const double rank = std::ceil(std::pow(u / spec_.key_dist_a, 1 / spec_.key_dist_b));
  const uint64_t r = rank < 0x1p63 ? static_cast<uint64_t>(rank) : UINT64_MAX;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(Hash64(salt_, r)) * size) >> 64);
}

uint64_t MixgraphKeys::Choose(Rng* rng) const {
  // One uniform number in [0, num) decides both the range and the place in
  // it, as db_bench's does (its residues modulo the ranges' shares and modulo
  // the range size): a cold range sees only the places its few numbers give,
  // so it has fewer distinct keys than a uniform place would give it.
  const uint64_t draw = rng->Uniform(num_);
  if (range_starts_.empty()) return Offset(draw, num_);
  const int64_t r = static_cast<int64_t>(draw % static_cast<uint64_t>(access_total_));
  // The last range starting at or before r: ranges with no share start where
  // the next one does, so they are never chosen.
  const auto it = std::upper_bound(range_starts_.begin(), range_starts_.end(), r);
  const uint64_t range = static_cast<uint64_t>(it - range_starts_.begin()) - 1;
  return range * range_size_ + Offset(draw % range_size_, range_size_);
}

}  // namespace driver
}  // namespace lsmbench
