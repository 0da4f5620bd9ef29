// The driver's output files (schemas in engines/driver/README.md):
//   timeseries.jsonl  one object per interval; written live to
//                     timeseries.jsonl.partial, renamed when the run ends
//   summary.json      configuration echo and the measured window's figures
//   histograms.json   the measured window's full latency histograms
// summary.json and histograms.json are written to a temporary file and
// renamed, so a reader never sees half a file.
#ifndef LSMBENCH_DRIVER_REPORT_H_
#define LSMBENCH_DRIVER_REPORT_H_

#include <cstdio>
#include <string>

#include "driver/histogram.h"
#include "driver/json_reader.h"
#include "driver/run_config.h"
#include "driver/runner.h"
#include "driver/settle.h"

namespace lsmbench {
namespace driver {

// {"count", "mean", "p50", "p90", "p99", "p999", "max"} in microseconds
// (null percentiles when empty).
Json LatencySummary(const Histogram& h);
// {"count", "sum", "min", "max", "buckets": [[low, high, count], ...]} in ns.
Json HistogramJson(const Histogram& h);

Json IntervalJson(const RunConfig& config, const IntervalStats& s);

struct RunInfo {
  std::string start_time_utc;  // ISO 8601
  std::string hostname;
  int exit_code = 0;
  int signal = 0;
  SettleOutcome settle;  // config.settle_s > 0: the wait before the phase
};

Json SummaryJson(const RunConfig& config, const RunResult& r, const RunInfo& info);
Json HistogramsJson(const RunConfig& config, const RunResult& r);

// Creates dir (and parents) if needed and checks that a file can be created
// in it.
Status PrepareOutputDir(const std::string& dir);

// Writes path atomically: a temporary file in the same directory, fsync'd,
// then renamed over path.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

// Appends one JSON line per interval to DIR/timeseries.jsonl.partial and
// renames it to timeseries.jsonl in Finish().
class TimeseriesWriter {
 public:
  ~TimeseriesWriter();
  Status Open(const std::string& dir);
  Status Append(const Json& line);
  Status Finish();

 private:
  std::string dir_;
  FILE* file_ = nullptr;
  Status error_;
};

}  // namespace driver
}  // namespace lsmbench

#endif  // LSMBENCH_DRIVER_REPORT_H_
