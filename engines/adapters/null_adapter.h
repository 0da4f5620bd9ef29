// The `null` engine: stores nothing. Each operation takes a configurable
// service time (a busy-wait, so it is precise at microsecond scale), and
// scheduled pauses block every operation that arrives during them. With known
// service and pause times the latencies the driver should report follow from
// queueing theory, so running the driver against it calibrates the harness.
//
// Options (values in the grammar of lsm/option_values.h):
//   service_time_us  real >= 0, default 0: time one operation takes, per
//                    calling thread (concurrent calls each spin on their own:
//                    the model is one server per driver thread)
//   pause_every_ms   real >= 0, default 0 (none): a pause of pause_ms starts
//                    every pause_every_ms after open (first at pause_every_ms)
//   pause_at_ms      real >= 0, default none: one pause of pause_ms starting
//                    that long after open
//   pause_ms         real > 0: pause length, for either schedule
//   get_hits         bool, default false: Get finds every key (else NotFound)
//   value_bytes      size, default 100: length of the value Get returns
// An operation arriving during a pause completes at the pause end plus the
// service time; one arriving before a pause starts is not affected by it.
//
// Metrics: ops, paused_ops (ops that arrived during a pause), pauses (pauses
// begun so far), pause_micros (scheduled pause time elapsed so far).
// Settle: idle at once.
#ifndef LSMBENCH_ADAPTERS_NULL_ADAPTER_H_
#define LSMBENCH_ADAPTERS_NULL_ADAPTER_H_

#include <memory>
#include <string>
#include <vector>

#include "adapters/adapter.h"

namespace lsmbench {

// dir is not used.
Status OpenNullAdapter(const std::string& dir, const AdapterOptions& options,
                       std::unique_ptr<KvAdapter>* adapter);

// The option table, for --describe-options.
std::vector<OptionDescription> DescribeNullOptions();

// Parses options as OpenNullAdapter would, for --check-options.
Status CheckNullOptions(const AdapterOptions& options);

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_NULL_ADAPTER_H_
