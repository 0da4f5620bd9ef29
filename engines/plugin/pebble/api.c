/*
 * The C side of the Pebble plugin: the table (static C memory, valid for as long as the
 * library is loaded), the option table, thin wrappers with the header's exact signatures
 * around the functions plugin.go exports, and the helpers Go needs to call the driver's
 * callbacks (Go cannot call a C function pointer) and to read CLOCK_MONOTONIC.
 */
#define _POSIX_C_SOURCE 200809L
#include <lsmbench/engine_plugin.h>

#include <time.h>

#include "_cgo_export.h"

int64_t lsmbench_pebble_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* An engine's id as the handle the driver holds (not a pointer to anything). */
lsmbench_engine *lsmbench_pebble_handle(uintptr_t id) { return (lsmbench_engine *)id; }

void lsmbench_pebble_value(lsmbench_value_sink sink, void *context, const char *value,
                           size_t size) {
  static const char empty[1] = {0};
  sink(context, size ? value : empty, size);
}

void lsmbench_pebble_metric(lsmbench_metric_sink sink, void *context, const char *name,
                            double value) {
  sink(context, name, value);
}

/* Pebble's main knobs, with the defaults of pebble.Options.EnsureDefaults (v2.1.7). */
static const lsmbench_option options[] = {
    {"memtable_size", LSMBENCH_OPTION_SIZE, 65536, 1073741824.0, "", "bytes",
     "Options.MemTableSize: the memtable's size; a full one is sealed and flushed to L0.",
     "4194304"},
    {"memtable_stop_writes_threshold", LSMBENCH_OPTION_INT, 2, 100, "", "memtables",
     "Options.MemTableStopWritesThreshold: memtables (mutable and queued) at which writes stop.",
     "2"},
    {"l0_compaction_threshold", LSMBENCH_OPTION_INT, 1, 1000, "", "sublevels",
     "Options.L0CompactionThreshold: L0 read amplification (sublevels) that triggers a compaction.",
     "4"},
    {"l0_compaction_file_threshold", LSMBENCH_OPTION_INT, 1, 100000, "", "files",
     "Options.L0CompactionFileThreshold: L0 files that trigger a compaction.", "500"},
    {"l0_stop_writes_threshold", LSMBENCH_OPTION_INT, 1, 1000, "", "sublevels",
     "Options.L0StopWritesThreshold: L0 read amplification at which writes stop.", "12"},
    {"lbase_max_bytes", LSMBENCH_OPTION_SIZE, 65536, 1099511627776.0, "", "bytes",
     "Options.LBaseMaxBytes: the base level's target size (levels below grow by level_multiplier).",
     "67108864"},
    {"level_multiplier", LSMBENCH_OPTION_INT, 2, 1000, "", "",
     "Options.Experimental.LevelMultiplier: each level's target size over the one above.", "10"},
    {"max_concurrent_compactions", LSMBENCH_OPTION_INT, 1, 64, "", "compactions",
     "The upper bound of Options.CompactionConcurrencyRange (the lower stays 1): compactions "
     "Pebble runs at once when it is behind.",
     "1"},
    {"target_file_size", LSMBENCH_OPTION_SIZE, 65536, 1099511627776.0, "", "bytes",
     "Options.TargetFileSizes[0]: L0's target sstable size; each deeper level's is twice the "
     "one above.",
     "2097152"},
    {"block_size", LSMBENCH_OPTION_SIZE, 256, 16777216, "", "bytes",
     "Options.Levels[*].BlockSize: the target size of an sstable's data blocks.", "4096"},
    {"compression", LSMBENCH_OPTION_CHOICE, 0, 0, "none,snappy,zstd,minlz", "",
     "Options.Levels[*].Compression on every level: NoCompression, SnappyCompression, "
     "ZstdCompression (level 3) or MinLZCompression.",
     "snappy"},
    {"bloom_bits_per_key", LSMBENCH_OPTION_INT, 0, 64, "", "bits",
     "Options.Levels[*].FilterPolicy: a bloom filter of this many bits per key; 0: none "
     "(Pebble's default).",
     "0"},
    {"cache_size", LSMBENCH_OPTION_SIZE, 0, 1099511627776.0, "", "bytes",
     "Options.CacheSize: the block cache's capacity.", "8388608"},
    {"bytes_per_sync", LSMBENCH_OPTION_SIZE, 1, 1073741824.0, "", "bytes",
     "Options.BytesPerSync: sstable bytes written between background syncs.", "524288"},
    {"wal_bytes_per_sync", LSMBENCH_OPTION_SIZE, 0, 1073741824.0, "", "bytes",
     "Options.WALBytesPerSync: WAL bytes written between background syncs; 0: off.", "0"},
    {"max_open_files", LSMBENCH_OPTION_INT, 16, 1000000, "", "files",
     "Options.MaxOpenFiles: the table cache's capacity.", "1000"},
    {"disable_wal", LSMBENCH_OPTION_BOOL, 0, 0, "", "",
     "Options.DisableWAL: writes skip the write-ahead log.", "false"},
    {"sync", LSMBENCH_OPTION_BOOL, 0, 0, "", "",
     "Each put and delete waits for the WAL to be synced (pebble.Sync) rather than not "
     "(pebble.NoSync).",
     "false"},
};

static lsmbench_code check_options(const char *const *names, const char *const *values,
                                   size_t count, lsmbench_message *message) {
  return pebbleCheckOptions((char **)names, (char **)values, count, message);
}

static lsmbench_code open_engine(const char *dir, const char *const *names,
                                 const char *const *values, size_t count,
                                 uint32_t secondary_indexes, lsmbench_engine **engine,
                                 lsmbench_message *message) {
  return pebbleOpen((char *)dir, (char **)names, (char **)values, count, secondary_indexes,
                    engine, message);
}

static lsmbench_code close_engine(lsmbench_engine *engine, lsmbench_message *message) {
  return pebbleClose(engine, message);
}

static lsmbench_code put(lsmbench_engine *engine, const char *key, size_t key_size,
                         const char *value, size_t value_size, lsmbench_message *message) {
  return pebblePut(engine, (char *)key, key_size, (char *)value, value_size, message);
}

static lsmbench_code del(lsmbench_engine *engine, const char *key, size_t key_size,
                         lsmbench_message *message) {
  return pebbleDel(engine, (char *)key, key_size, message);
}

static lsmbench_code get(lsmbench_engine *engine, const char *key, size_t key_size,
                         lsmbench_value_sink sink, void *context, lsmbench_message *message) {
  return pebbleGet(engine, (char *)key, key_size, sink, context, message);
}

static lsmbench_code scan(lsmbench_engine *engine, const char *start, size_t start_size,
                          size_t count, size_t *returned, lsmbench_message *message) {
  return pebbleScan(engine, (char *)start, start_size, count, returned, message);
}

static lsmbench_code metrics(lsmbench_engine *engine, lsmbench_metric_sink sink, void *context,
                             lsmbench_message *message) {
  return pebbleMetrics(engine, sink, context, message);
}

static size_t take_events(lsmbench_engine *engine, lsmbench_event *events, size_t capacity) {
  return pebbleTakeEvents(engine, events, capacity);
}

static lsmbench_code background_work(lsmbench_engine *engine, lsmbench_work *work,
                                     lsmbench_message *message) {
  return pebbleBackgroundWork(engine, work, message);
}

static const lsmbench_engine_api api = {
    .abi_version = LSMBENCH_ENGINE_ABI_VERSION,
    .api_size = sizeof(lsmbench_engine_api),
    .option_size = sizeof(lsmbench_option),
    .event_size = sizeof(lsmbench_event),
    .work_size = sizeof(lsmbench_work),
    .write_size = sizeof(lsmbench_write),
    .name = "pebble",
    .version = "pebble v2.1.7 (lsmbench plugin 1)",
    .options = options,
    .option_count = sizeof(options) / sizeof(options[0]),
    .check_options = check_options,
    .open = open_engine,
    .close = close_engine,
    .put = put,
    .del = del,
    .get = get,
    .scan = scan,
    .metrics = metrics,
    .take_events = take_events,
    .background_work = background_work,
};

LSMBENCH_PLUGIN_EXPORT const lsmbench_engine_api *lsmbench_engine_plugin(void) { return &api; }
