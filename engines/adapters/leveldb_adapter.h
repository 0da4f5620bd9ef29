// The `leveldb` engine: LevelDB (Debian libleveldb-dev), built only when the
// library was found (LSMBENCH_HAVE_LEVELDB).
//
// Options, by leveldb::Options field name (ranges are the ones LevelDB would
// otherwise clip values to silently):
//   write_buffer_size  size [64K, 1G]      max_file_size  size [1M, 1G]
//   block_size         size [1K, 4M]       max_open_files integer [74, 50000]
//   block_restart_interval integer >= 1    compression    none | snappy
//   paranoid_checks, reuse_logs, create_if_missing (default true),
//   error_if_exists    bool
// and, for the objects Options points to or the per-call options:
//   bloom_bits_per_key integer [0, 100], 0 = no filter (NewBloomFilterPolicy)
//   cache_bytes        size, 0 = LevelDB's internal 8 MiB cache (NewLRUCache)
//   sync               bool (WriteOptions.sync)
//   verify_checksums   bool (ReadOptions.verify_checksums)
//
// Metrics: disk_components, disk_components.L<N> (leveldb.num-files-at-level<N>,
// N = 0..6), and from the table of leveldb.stats (whole MiB, as LevelDB prints
// them): bytes_merge_read, bytes_written (flushes and compactions together:
// LevelDB does not tell them apart), disk_bytes, merge_seconds; plus
// memory_bytes (leveldb.approximate-memory-usage), user_bytes and
// write_amplification = bytes_written / user_bytes.
//
// Settle: unsupported (LevelDB exposes no pending-compaction property).
#ifndef LSMBENCH_ADAPTERS_LEVELDB_ADAPTER_H_
#define LSMBENCH_ADAPTERS_LEVELDB_ADAPTER_H_

#include <memory>
#include <string>
#include <vector>

#include "adapters/adapter.h"

namespace lsmbench {

Status OpenLevelDbAdapter(const std::string& dir, const AdapterOptions& options,
                          std::unique_ptr<KvAdapter>* adapter);

// The option table above, for --describe-options.
std::vector<OptionDescription> DescribeLevelDbOptions();

// Parses options as OpenLevelDbAdapter would, for --check-options.
Status CheckLevelDbOptions(const AdapterOptions& options);

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_LEVELDB_ADAPTER_H_
