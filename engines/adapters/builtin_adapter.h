// The `builtin` engine: the bundled lsm::DB.
//
// Options: every lsm::Options field by its exact name (except `env`), from
// the engine's option table (lsm/option_table.h, declared in
// lsm/include/lsm/options.def); docs/reference/engine-options.md lists them.
//
// Metrics (from lsm::DB::GetStats()): disk_components, disk_components.L<i>,
// stall_count, stall_micros (merge + memory stalls), merge_stall_count,
// merge_stall_micros, memory_stall_count, memory_stall_micros, bytes_flushed,
// bytes_merged (written by merges), bytes_merge_read, merges_running,
// merges_pending, merge_remaining_bytes, write_amplification,
// io_budget_granted_bytes, io_budget_unused_bytes, background_sync_micros, flushes, merges,
// disk_bytes, max_components, memory_components_immutable, user_bytes, puts,
// deletes, gets, background_error (1 after a flush, merge or WAL failure).
//
// Settle polls the stats every 10 ms until no memtable waits for or is in
// its flush and no merge is pending or running (in every tree of a
// dataset), or the time limit; a failed flush or merge is its error.
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

// The engine as a dataset (lsm/dataset.h) with `secondary_indexes` secondary
// indexes; builtin_dataset_adapter.cc lists its metrics.
Status OpenBuiltinDatasetAdapter(const std::string& dir, const AdapterOptions& options,
                                 int secondary_indexes, std::unique_ptr<KvAdapter>* adapter);

// Parses options into *result (starting from its current values). Exposed
// for tests and for tools that want the engine's options without opening it.
Status ParseBuiltinOptions(const AdapterOptions& options, lsm::Options* result);

// The engine's option table, for --describe-options.
std::vector<OptionDescription> DescribeBuiltinOptions();

// ParseBuiltinOptions into default options, for --check-options.
Status CheckBuiltinOptions(const AdapterOptions& options);

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_BUILTIN_ADAPTER_H_
