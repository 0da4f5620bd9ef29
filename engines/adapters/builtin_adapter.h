// The `builtin` engine: the bundled lsm::DB.
//
// Options: every lsm::Options field by its exact name (except `env`):
//   create_if_missing, error_if_exists, dynamic_level_sizes, merge_exact_min,
//   verify_checksums             bool
//   memtable_bytes, block_bytes  size (K/M/G suffixes = KiB/MiB/GiB)
//   memory_components, bloom_bits_per_key, min_merge_components,
//   max_merge_components, max_components   integer
//   wal                          off | async | sync
//   merge_policy                 one of lsm::policy::PolicyNames()
//   size_ratio                   real; 0 = the policy's default, else > 1
// Ranges are in the option table in builtin_adapter.cc; an error names the
// option and the accepted values.
//
// Metrics (from lsm::DB::GetStats()): disk_components, disk_components.L<i>,
// stall_count, stall_micros (merge + memory stalls), merge_stall_count,
// merge_stall_micros, memory_stall_count, memory_stall_micros, bytes_flushed,
// bytes_merged (written by merges), bytes_merge_read, merges_running,
// merges_pending, merge_remaining_bytes, write_amplification, flushes, merges,
// disk_bytes, max_components, memory_components_immutable, user_bytes, puts,
// deletes, gets.
//
// Close flushes the memtable first when wal=off (nothing else would keep
// those writes, and RocksDB behaves the same way), then closes the DB.
#ifndef LSMBENCH_ADAPTERS_BUILTIN_ADAPTER_H_
#define LSMBENCH_ADAPTERS_BUILTIN_ADAPTER_H_

#include <memory>
#include <string>
#include <vector>

#include "adapters/adapter.h"
#include "lsm/options.h"

namespace lsmbench {

Status OpenBuiltinAdapter(const std::string& dir, const AdapterOptions& options,
                          std::unique_ptr<KvAdapter>* adapter);

// Parses options into *result (starting from its current values). Exposed
// for tests and for tools that want the engine's options without opening it.
Status ParseBuiltinOptions(const AdapterOptions& options, lsm::Options* result);

// The accepted option names, sorted.
std::vector<std::string> BuiltinOptionNames();

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_BUILTIN_ADAPTER_H_
