/*
 * lsmbench engine plugin ABI, version 1.
 *
 * An engine plugin is a shared object that lsm-driver loads with dlopen(3)
 * and measures like the engines compiled into it. It exports one function,
 *
 *     const lsmbench_engine_api *lsmbench_engine_plugin(void);
 *
 * which returns a table of the engine's functions. This header is the whole
 * contract: C99, no C++, nothing else of lsmbench's to include or link.
 *
 * THE TABLE. The driver reads abi_version first and refuses any version but
 * LSMBENCH_ENGINE_ABI_VERSION, then checks the struct sizes (a plugin built
 * against another revision of this header is refused, not misread), then
 * that every required function is set. Required: open, close, put, del,
 * get, scan. Optional (NULL: the engine does not have it or cannot tell):
 * everything else. The table and every string and array it points to must
 * stay valid and unchanged for as long as the library is loaded (the driver
 * never unloads it).
 *
 * THREADS. put, del, get, scan, write_batch, put_record, query_secondary,
 * metrics, take_events and background_work may be called from many threads
 * at once, on the same engine. open and check_options may be called from
 * any thread, with no engine open. close is the last call on an engine; no
 * call on it is under way or follows. The driver opens one engine per
 * process.
 *
 * MEMORY. Every pointer the driver passes (keys, values, names, option
 * values, the directory) is valid only during the call: copy what you keep.
 * Bytes a plugin hands the driver through a callback (a value, a metric's
 * name) need to be valid only during that callback. The driver never frees
 * what the plugin allocates, nor the other way round.
 *
 * ERRORS. A function returns an lsmbench_code. On any code but LSMBENCH_OK
 * and LSMBENCH_NOT_FOUND it should write a NUL-terminated message of what
 * went wrong into message->text (at most LSMBENCH_MESSAGE_BYTES bytes, NUL
 * included; truncate longer ones). The driver shows it with the plugin's
 * name and the call: "engine plugin 'memkv': put: disk full". The driver
 * clears message->text[0] before each call.
 *
 * CANNOT TELL. What a plugin cannot tell it leaves out, and the method does
 * what it does for a compiled-in engine that cannot tell it either, saying
 * so in the run's metadata and the verdict's reasons:
 *   - take_events NULL: no flush or merge timeline. Steady-state rounds
 *     are whole intervals instead of memtable cycles, and no check that a
 *     running window holds merges into the deepest level (the verdict says
 *     it went unchecked).
 *   - background_work NULL, or returning LSMBENCH_NOT_SUPPORTED: no settle
 *     before a phase ("this engine cannot tell its pending work").
 *   - metrics NULL: no per-interval engine series (components, stalls,
 *     write amplification).
 *
 * TIMES are CLOCK_MONOTONIC nanoseconds (clock_gettime(CLOCK_MONOTONIC)),
 * the driver's clock.
 */
#ifndef LSMBENCH_ENGINE_PLUGIN_H_
#define LSMBENCH_ENGINE_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LSMBENCH_ENGINE_ABI_VERSION 1u

/* The name of the one exported function. */
#define LSMBENCH_ENGINE_PLUGIN_SYMBOL "lsmbench_engine_plugin"

typedef enum lsmbench_code {
  LSMBENCH_OK = 0,
  LSMBENCH_NOT_FOUND = 1,        /* get: no such key. No message needed. */
  LSMBENCH_NOT_SUPPORTED = 2,    /* the engine cannot do or tell this */
  LSMBENCH_INVALID_ARGUMENT = 3, /* a bad option name or value; a bad call */
  LSMBENCH_IO_ERROR = 4,         /* the disk or the OS failed */
  LSMBENCH_CORRUPTION = 5,       /* the data on disk is not what was written */
  LSMBENCH_FAILED = 6            /* anything else the engine reports */
} lsmbench_code;

#define LSMBENCH_MESSAGE_BYTES 1024

/* Where a failing call says why (see ERRORS above). */
typedef struct lsmbench_message {
  char text[LSMBENCH_MESSAGE_BYTES];
} lsmbench_message;

/* The plugin's engine: an opaque handle, whatever the plugin makes it. */
typedef struct lsmbench_engine lsmbench_engine;

/* ------------------------------------------------------------ options */

/* How an option's value is written. The driver checks every value against
 * the option's kind and range before open and check_options, and passes it
 * on in this canonical form:
 *   BOOL    "true" or "false"
 *   INT     decimal digits, optional leading '-', within [min, max]
 *   SIZE    a byte count in decimal digits, within [min, max] (users may
 *           write 64K, 4M, 1G: the driver converts, K = 1024)
 *   REAL    a finite decimal number, within [min, max]
 *   CHOICE  one of the option's choices, exactly */
typedef enum lsmbench_option_kind {
  LSMBENCH_OPTION_BOOL = 0,
  LSMBENCH_OPTION_INT = 1,
  LSMBENCH_OPTION_SIZE = 2,
  LSMBENCH_OPTION_REAL = 3,
  LSMBENCH_OPTION_CHOICE = 4
} lsmbench_option_kind;

typedef struct lsmbench_option {
  const char *name;          /* [a-z0-9_.]+, unique in the table */
  uint32_t kind;             /* an lsmbench_option_kind */
  double min, max;           /* INT, SIZE, REAL: the range, inclusive */
  const char *choices;       /* CHOICE: the names, comma-separated ("none,snappy") */
  const char *unit;          /* "bytes", "files", ...; "" for none */
  const char *doc;           /* one or two sentences */
  const char *default_value; /* canonical form; "" when it depends on others */
} lsmbench_option;

/* ------------------------------------------------------------- events */

#define LSMBENCH_EVENT_FLUSH 1u /* a memtable written to disk */
#define LSMBENCH_EVENT_MERGE 2u /* components merged (a compaction) */

#define LSMBENCH_EVENT_MOVED 1u /* flags: a merge that only moved files down */

/* A flush or merge the engine completed. */
typedef struct lsmbench_event {
  uint32_t kind;               /* LSMBENCH_EVENT_FLUSH or _MERGE */
  uint32_t flags;              /* LSMBENCH_EVENT_MOVED or 0 */
  int64_t start_ns;            /* it began */
  int64_t end_ns;              /* it completed; >= start_ns */
  int64_t sealed_ns;           /* flushes: the memtable stopped taking writes
                                  (<= start_ns); 0 when unknown */
  int32_t output_level;        /* the level written: 0 for a flush */
  int32_t deepest_input_level; /* merges: the deepest level read */
  uint64_t inputs;             /* merges: components (files, runs) read, >= 1 */
  uint64_t input_bytes;        /* merges: bytes read */
  uint64_t output_bytes;       /* bytes written; 0 for a move */
  uint64_t entries;            /* entries flushed, or read by the merge; 0 unknown */
} lsmbench_event;

/* ------------------------------------------------- background work */

/* One look at the engine's flushes and merges, for settling before a phase:
 * the driver looks every 10 ms until two looks in a row see nothing pending
 * or running and `completed` unchanged. */
typedef struct lsmbench_work {
  uint64_t flushes_pending; /* memtables sealed, waiting for a flush */
  uint64_t flushes_running;
  uint64_t merges_pending;  /* merges the engine wants to run; 1 if it only
                               knows that some are due */
  uint64_t merges_running;
  uint64_t completed;       /* flushes and merges completed since open */
} lsmbench_work;

/* ---------------------------------------------------------- batches */

#define LSMBENCH_WRITE_PUT 1u
#define LSMBENCH_WRITE_DELETE 2u

typedef struct lsmbench_write {
  uint32_t kind; /* LSMBENCH_WRITE_PUT or _DELETE */
  const char *key;
  size_t key_size;
  const char *value; /* puts */
  size_t value_size;
} lsmbench_write;

/* ---------------------------------------------------------- callbacks */

/* get: the value found (valid during the call only). */
typedef void (*lsmbench_value_sink)(void *context, const char *value, size_t size);
/* metrics: one metric by name (see metrics below). */
typedef void (*lsmbench_metric_sink)(void *context, const char *name, double value);

/* ------------------------------------------------------------ the table */

typedef struct lsmbench_engine_api {
  /* The ABI: LSMBENCH_ENGINE_ABI_VERSION and the sizeof() of this header's
   * structs as the plugin was compiled. */
  uint32_t abi_version;
  uint32_t api_size;    /* sizeof(lsmbench_engine_api) */
  uint32_t option_size; /* sizeof(lsmbench_option) */
  uint32_t event_size;  /* sizeof(lsmbench_event) */
  uint32_t work_size;   /* sizeof(lsmbench_work) */
  uint32_t write_size;  /* sizeof(lsmbench_write) */

  const char *name;    /* the engine's name: [a-z][a-z0-9_-]*, e.g. "pebble";
                          what specs call it (engine.name) */
  const char *version; /* the engine's version, free text, recorded with results */

  /* Every option open accepts, option_count of them (0 and NULL: none). */
  const lsmbench_option *options;
  size_t option_count;
  /* Nonzero: open and check_options take options the table does not list as
   * well (an engine with its own option parser, like RocksDB's options
   * strings). The driver passes those on as the user wrote them, and
   * check_options is required to check them. */
  uint32_t options_open;

  /* Optional (required with options_open). Checks a set of options as open
   * would, without opening anything: rules between options that the table
   * cannot say. The driver has checked the names, kinds and ranges of the
   * options the table lists. */
  lsmbench_code (*check_options)(const char *const *names, const char *const *values,
                                 size_t count, lsmbench_message *message);

  /* Opens (creating if need be) the engine on directory dir with the options
   * the user set (the others keep their defaults); names[i] = values[i].
   * secondary_indexes > 0 only if put_record and query_secondary are set:
   * then the engine keeps that many secondary indexes. Sets *engine. */
  lsmbench_code (*open)(const char *dir, const char *const *names, const char *const *values,
                        size_t count, uint32_t secondary_indexes, lsmbench_engine **engine,
                        lsmbench_message *message);

  /* Makes what the engine buffers durable and closes it; frees the handle. */
  lsmbench_code (*close)(lsmbench_engine *engine, lsmbench_message *message);

  lsmbench_code (*put)(lsmbench_engine *engine, const char *key, size_t key_size,
                       const char *value, size_t value_size, lsmbench_message *message);
  lsmbench_code (*del)(lsmbench_engine *engine, const char *key, size_t key_size,
                       lsmbench_message *message);
  /* LSMBENCH_OK after calling sink once with the value, or LSMBENCH_NOT_FOUND. */
  lsmbench_code (*get)(lsmbench_engine *engine, const char *key, size_t key_size,
                       lsmbench_value_sink sink, void *context, lsmbench_message *message);
  /* Reads up to count entries, keys and values, from the first key >= start
   * in key order (bytewise), as an application would; *returned = how many. */
  lsmbench_code (*scan)(lsmbench_engine *engine, const char *start, size_t start_size,
                        size_t count, size_t *returned, lsmbench_message *message);

  /* Optional: applies count writes atomically, in order. No workload of
   * lsm-driver writes batches yet, so the driver does not call it. */
  lsmbench_code (*write_batch)(lsmbench_engine *engine, const lsmbench_write *writes,
                               size_t count, lsmbench_message *message);

  /* Optional: metrics by name, each through sink, as often as once a second.
   * The method reads these names (others are kept as they are):
   *   disk_components, disk_components.L<n>  components (files, runs) on disk
   *   bytes_flushed, bytes_merged            bytes written so far
   *   write_amplification                    bytes written to disk per byte put
   *   stall_count, stall_micros              writes the engine held back
   *   merges_running, merges_pending         background work now
   *   memory_bytes                           bytes in memtables */
  lsmbench_code (*metrics)(lsmbench_engine *engine, lsmbench_metric_sink sink, void *context,
                           lsmbench_message *message);

  /* Optional: copies up to capacity of the flushes and merges completed
   * since the last call into events, in completion order (end_ns never
   * decreasing), and returns how many; the driver calls again while it gets
   * capacity. Events past capacity wait for the next call. */
  size_t (*take_events)(lsmbench_engine *engine, lsmbench_event *events, size_t capacity);

  /* Optional: one look at the background work (LSMBENCH_NOT_SUPPORTED: the
   * engine cannot tell). Returns at once; an error a flush or merge hit
   * (the engine stopped writing) is returned with its message. */
  lsmbench_code (*background_work)(lsmbench_engine *engine, lsmbench_work *work,
                                   lsmbench_message *message);

  /* Optional, both or neither: records with secondary fields
   * (secondary_indexes > 0 at open). put_record writes the record and
   * keeps field i's index up to date; query_secondary reads the current
   * records whose field lies in [low, high). */
  lsmbench_code (*put_record)(lsmbench_engine *engine, const char *key, size_t key_size,
                              const uint64_t *fields, size_t field_count, const char *value,
                              size_t value_size, lsmbench_message *message);
  lsmbench_code (*query_secondary)(lsmbench_engine *engine, uint32_t field, uint64_t low,
                                   uint64_t high, size_t *returned, lsmbench_message *message);
} lsmbench_engine_api;

/* The one function a plugin exports, and its type. */
#if defined(__GNUC__)
#define LSMBENCH_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define LSMBENCH_PLUGIN_EXPORT
#endif
LSMBENCH_PLUGIN_EXPORT const lsmbench_engine_api *lsmbench_engine_plugin(void);
typedef const lsmbench_engine_api *(*lsmbench_engine_plugin_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* LSMBENCH_ENGINE_PLUGIN_H_ */
