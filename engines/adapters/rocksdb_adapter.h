// The `rocksdb` engine: RocksDB (Debian librocksdb-dev), built only when the
// library was found (LSMBENCH_HAVE_ROCKSDB).
//
// Options: any name RocksDB's options-string API knows (DBOptions and
// ColumnFamilyOptions, e.g. write_buffer_size=64M, max_background_jobs=4,
// compression=kNoCompression, block_based_table_factory={block_size=8K}),
// applied with rocksdb::GetOptionsFromString to a base with
// create_if_missing=true; a bad one is InvalidArgument naming it, carrying
// RocksDB's own message. Plus two write options the string API has no place
// for: `sync` and `disableWAL` (bool: rocksdb::WriteOptions fields).
//
// Metrics (the source of each is commented in rocksdb_adapter.cc):
// disk_components, disk_components.L<N>, stall_count, stall_stop_count,
// stall_slowdown_count, stall_micros, write_stopped, delayed_write_rate,
// merges_running, flushes_running, merges_pending, pending_merge_bytes,
// memory_components_immutable, bytes_flushed, bytes_merged, bytes_merge_read,
// flushes, merges, disk_bytes, user_bytes, write_amplification.
//
// Settle polls rocksdb.mem-table-flush-pending, rocksdb.compaction-pending,
// rocksdb.num-running-flushes and rocksdb.num-running-compactions until all
// are 0 (db_bench's old waitforcompaction), or the time limit.
#ifndef LSMBENCH_ADAPTERS_ROCKSDB_ADAPTER_H_
#define LSMBENCH_ADAPTERS_ROCKSDB_ADAPTER_H_

#include <memory>
#include <string>
#include <vector>

#include "adapters/adapter.h"

namespace lsmbench {

Status OpenRocksDbAdapter(const std::string& dir, const AdapterOptions& options,
                          std::unique_ptr<KvAdapter>* adapter);

// Parses options as OpenRocksDbAdapter would, for --check-options.
Status CheckRocksDbOptions(const AdapterOptions& options);

}  // namespace lsmbench

#endif  // LSMBENCH_ADAPTERS_ROCKSDB_ADAPTER_H_
