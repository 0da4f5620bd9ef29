// db_bench's mixgraph workload (Cao et al., "Characterizing, Modeling, and
// Benchmarking RocksDB Key-Value Workloads at Facebook", FAST'20), engine
// neutral. The parameters keep db_bench's names and meanings (RocksDB
// tools/db_bench_tool.cc, v7.8.3: the flags after "the parameters of
// mix_graph" and Benchmark::MixGraph):
//
//   key-range hotness  keyrange_num ranges of equal size; range x (1..N) is
//                      accessed with weight a*exp(b*x) + c*exp(d*x)
//                      (keyrange_dist_a..d), ranges placed in the key space
//                      by db_bench's own shuffle of those weights;
//   key hotness        inside a range (or over all keys without ranges), the
//                      power CDF F(x) = a*x^b (key_dist_a, key_dist_b) picks
//                      a rank, and a hash of the rank the key;
//   value sizes        Generalized Pareto (value_theta, value_k, value_sigma),
//                      at least 10 bytes, above mix_max_value_size taken
//                      modulo it (db_bench's rule);
//   scan lengths       Generalized Pareto (iter_theta, iter_k, iter_sigma)
//                      modulo mix_max_scan_len;
//   operation mix      mix_get_ratio, mix_put_ratio, mix_seek_ratio.
//
// The sine-wave load (sine_a..d) is an arrival process (arrival.h), so any
// workload can have it. db_bench draws the key, the operation, the value size
// and the scan length from one uniform number; the driver keeps that for the
// key range and the place in it, and draws the rest independently: the
// marginal distributions are the same, but db_bench ties a key's value size
// to its hotness.
#ifndef LSMBENCH_DRIVER_MIXGRAPH_H_
#define LSMBENCH_DRIVER_MIXGRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "driver/json_reader.h"
#include "driver/random.h"

namespace lsmbench {
namespace driver {

struct MixgraphSpec {
  double mix_get_ratio = 1.0;
  double mix_put_ratio = 0.0;
  double mix_seek_ratio = 0.0;
  uint64_t keyrange_num = 1;
  double keyrange_dist_a = 0, keyrange_dist_b = 0, keyrange_dist_c = 0, keyrange_dist_d = 0;
  double key_dist_a = 0, key_dist_b = 0;
  double value_theta = 0, value_k = 0.2615, value_sigma = 25.45;
  double iter_theta = 0, iter_k = 2.517, iter_sigma = 14.236;
  uint64_t mix_max_value_size = 1024;
  uint64_t mix_max_scan_len = 10000;

  // Key-range hotness is modelled when any keyrange_dist_* is non-zero.
  bool KeyRanges() const {
    return keyrange_dist_a != 0 || keyrange_dist_b != 0 || keyrange_dist_c != 0 ||
           keyrange_dist_d != 0;
  }
  // Key hotness follows the power model when both key_dist_* are non-zero.
  bool PowerKeys() const { return key_dist_a != 0 && key_dist_b != 0; }
  // The mean value size the distribution gives (for estimates of data size).
  double MeanValueSize() const;
  Json ToJson() const;
};

const std::vector<std::string>& MixgraphFields();

// Parses the workload's "mixgraph" object. Impossible parameters are errors
// naming the field: ratios that do not sum to 1, a non-positive sigma, a
// value-size shape (value_k) of 1 or more (no finite mean), a negative or
// zero power-law parameter, key-range weights that give no range any access.
Status ParseMixgraph(const Json& json, const std::string& path, uint64_t record_count,
                     MixgraphSpec* out);

// The inverse CDF of the Generalized Pareto distribution at u in (0, 1], as a
// double (db_bench rounds it up).
double ParetoInverse(double u, double theta, double k, double sigma);

// Value size and scan length by db_bench's rules, from a uniform u in (0, 1].
uint32_t MixgraphValueSize(const MixgraphSpec& m, double u);
uint32_t MixgraphScanLength(const MixgraphSpec& m, double u);

// Picks key ids in [0, num) as db_bench's mixgraph does. Thread-safe.
class MixgraphKeys {
 public:
  MixgraphKeys(const MixgraphSpec& spec, uint64_t num, uint64_t seed);
  uint64_t Choose(Rng* rng) const;

  // Key ranges (1 without key-range modelling) and their size in ids.
  uint64_t ranges() const { return range_starts_.empty() ? 1 : range_starts_.size(); }
  uint64_t range_size() const { return range_size_; }
  // The share of accesses range i (in key order) receives.
  double RangeShare(uint64_t i) const;

 private:
  // The place of a key in a range of `size` keys, from db_bench's j in [0, size).
  uint64_t Offset(uint64_t j, uint64_t size) const;

  MixgraphSpec spec_;
  uint64_t num_;
  uint64_t salt_;
  uint64_t range_size_;
  // Key ranges in key order: where each one's accesses start among
  // [0, access_total_), and how many it has (db_bench's KeyrangeUnit).
  std::vector<int64_t> range_starts_;
  std::vector<int64_t> range_accesses_;
  int64_t access_total_ = 0;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_MIXGRAPH_H_
