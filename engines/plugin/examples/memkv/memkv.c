/*
 * memkv: the smallest engine plugin that tells lsm-driver everything the
 * two-phase method uses. It keeps its data in memory, as a tiny LSM tree:
 * writes go to a sorted memtable; a full memtable becomes a sorted run (a
 * flush); when `fanout` runs have piled up they are merged into one (a
 * merge). Flushes and merges happen inside the put that fills the memtable,
 * under the engine's one lock, so there is never background work pending.
 *
 * Build: cc -std=c99 -O2 -shared -fPIC -I engines/plugin/include memkv.c -o lsmbench-memkv.so
 * The contract is engines/plugin/include/lsmbench/engine_plugin.h.
 */
#define _POSIX_C_SOURCE 200809L
#include <lsmbench/engine_plugin.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  char *key, *value; /* value NULL: a deletion (a tombstone) */
  size_t key_size, value_size;
} entry;

typedef struct {
  entry *at;
  size_t count, capacity;
  int level; /* 0: flushed, 1: merged */
} run; /* entries sorted by key, each key once */

#define MAX_EVENTS 4096

struct lsmbench_engine {
  pthread_mutex_t lock;
  run memtable;
  run runs[64];                    /* on "disk", oldest first */
  size_t run_count;
  long memtable_entries, fanout;   /* the options */
  lsmbench_event events[MAX_EVENTS]; /* completed, not yet taken */
  size_t event_count;
  uint64_t completed, bytes_put, bytes_flushed, bytes_merged;
};

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int compare(const char *a, size_t an, const char *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c != 0 ? c : (an > bn) - (an < bn);
}

static size_t entry_bytes(const entry *e) { return e->key_size + e->value_size; }

/* The first position in r whose key is >= key. */
static size_t lower_bound(const run *r, const char *key, size_t size) {
  size_t lo = 0, hi = r->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (compare(r->at[mid].key, r->at[mid].key_size, key, size) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void append(run *r, entry e) {
  if (r->count == r->capacity) {
    r->capacity = r->capacity ? 2 * r->capacity : 64;
    r->at = realloc(r->at, r->capacity * sizeof(entry));
  }
  r->at[r->count++] = e;
}

static void free_run(run *r) {
  for (size_t i = 0; i < r->count; i++) free(r->at[i].key), free(r->at[i].value);
  free(r->at);
  memset(r, 0, sizeof(*r));
}

static void record(struct lsmbench_engine *db, lsmbench_event e) {
  /* The driver takes them every second; a full buffer drops the newest. */
  if (db->event_count < MAX_EVENTS) db->events[db->event_count++] = e;
  db->completed++;
}

/* Merges every run into one, newest value of each key winning. The merge
 * reads the oldest run, so tombstones can go. */
static void merge_all(struct lsmbench_engine *db) {
  lsmbench_event e = {.kind = LSMBENCH_EVENT_MERGE, .start_ns = now_ns(), .output_level = 1,
                      .inputs = db->run_count};
  for (size_t i = 0; i < db->run_count; i++) {
    if (db->runs[i].level > e.deepest_input_level) e.deepest_input_level = db->runs[i].level;
  }
  run out = {.level = 1};
  size_t pos[64] = {0};
  for (;;) {
    int newest = -1; /* the run holding the smallest next key; the newest on a tie */
    for (size_t i = 0; i < db->run_count; i++) {
      if (pos[i] == db->runs[i].count) continue;
      entry *c = &db->runs[i].at[pos[i]];
      if (newest < 0) { newest = (int)i; continue; }
      entry *b = &db->runs[newest].at[pos[newest]];
      if (compare(c->key, c->key_size, b->key, b->key_size) <= 0) newest = (int)i;
    }
    if (newest < 0) break;
    entry win = db->runs[newest].at[pos[newest]];
    for (size_t i = 0; i < db->run_count; i++) { /* every copy of the key is read */
      entry *c = pos[i] < db->runs[i].count ? &db->runs[i].at[pos[i]] : NULL;
      if (c && compare(c->key, c->key_size, win.key, win.key_size) == 0) {
        e.input_bytes += entry_bytes(c);
        e.entries++;
        pos[i]++;
        if ((int)i != newest) free(c->key), free(c->value);
      }
    }
    if (win.value == NULL) { free(win.key); continue; }
    append(&out, win);
    e.output_bytes += entry_bytes(&win);
  }
  for (size_t i = 0; i < db->run_count; i++) free(db->runs[i].at);
  db->runs[0] = out;
  db->run_count = 1;
  db->bytes_merged += e.output_bytes;
  e.end_ns = now_ns();
  record(db, e);
}

static void flush(struct lsmbench_engine *db, int64_t sealed) {
  lsmbench_event e = {.kind = LSMBENCH_EVENT_FLUSH, .start_ns = now_ns(), .sealed_ns = sealed};
  for (size_t i = 0; i < db->memtable.count; i++) e.output_bytes += entry_bytes(&db->memtable.at[i]);
  e.entries = db->memtable.count;
  db->runs[db->run_count++] = db->memtable; /* "written": it now is a run */
  memset(&db->memtable, 0, sizeof(run));
  db->bytes_flushed += e.output_bytes;
  e.end_ns = now_ns();
  record(db, e);
  if ((long)db->run_count >= db->fanout) merge_all(db);
}

static char *copy(const char *p, size_t n) {
  char *c = malloc(n ? n : 1);
  memcpy(c, p, n);
  return c;
}

static lsmbench_code write_entry(struct lsmbench_engine *db, const char *key, size_t key_size,
                                 const char *value, size_t value_size) {
  pthread_mutex_lock(&db->lock);
  run *m = &db->memtable;
  size_t at = lower_bound(m, key, key_size);
  entry e = {copy(key, key_size), value ? copy(value, value_size) : NULL, key_size, value_size};
  if (at < m->count && compare(m->at[at].key, m->at[at].key_size, key, key_size) == 0) {
    free(m->at[at].key), free(m->at[at].value);
    m->at[at] = e;
  } else {
    append(m, e); /* grows by one, then makes room at `at` */
    memmove(&m->at[at + 1], &m->at[at], (m->count - 1 - at) * sizeof(entry));
    m->at[at] = e;
  }
  db->bytes_put += key_size + value_size;
  if ((long)m->count >= db->memtable_entries) flush(db, now_ns());
  pthread_mutex_unlock(&db->lock);
  return LSMBENCH_OK;
}

static lsmbench_code put(lsmbench_engine *db, const char *key, size_t key_size,
                         const char *value, size_t value_size, lsmbench_message *message) {
  (void)message;
  return write_entry(db, key, key_size, value, value_size);
}

static lsmbench_code del(lsmbench_engine *db, const char *key, size_t key_size,
                         lsmbench_message *message) {
  (void)message;
  return write_entry(db, key, key_size, NULL, 0);
}

/* The newest entry of key: the memtable first, then the runs, newest first. */
static const entry *find(struct lsmbench_engine *db, const char *key, size_t key_size) {
  for (size_t i = db->run_count + 1; i-- > 0;) {
    const run *r = i == db->run_count ? &db->memtable : &db->runs[i];
    size_t at = lower_bound(r, key, key_size);
    if (at < r->count && compare(r->at[at].key, r->at[at].key_size, key, key_size) == 0) {
      return &r->at[at];
    }
  }
  return NULL;
}

static lsmbench_code get(lsmbench_engine *db, const char *key, size_t key_size,
                         lsmbench_value_sink sink, void *context, lsmbench_message *message) {
  (void)message;
  pthread_mutex_lock(&db->lock);
  const entry *e = find(db, key, key_size);
  lsmbench_code code = e && e->value ? LSMBENCH_OK : LSMBENCH_NOT_FOUND;
  if (code == LSMBENCH_OK) sink(context, e->value, e->value_size);
  pthread_mutex_unlock(&db->lock);
  return code;
}

/* Walks the keys >= start in order; a key is read once, at its newest entry. */
static lsmbench_code scan(lsmbench_engine *db, const char *start, size_t start_size,
                          size_t count, size_t *returned, lsmbench_message *message) {
  (void)message;
  pthread_mutex_lock(&db->lock);
  const run *sources[65];
  size_t pos[65], n = 0, read = 0;
  for (size_t i = 0; i < db->run_count; i++) sources[n++] = &db->runs[i];
  sources[n++] = &db->memtable; /* newest last */
  for (size_t i = 0; i < n; i++) pos[i] = lower_bound(sources[i], start, start_size);
  volatile size_t checksum = 0; /* the values are read, as an application would */
  while (read < count) {
    int best = -1;
    for (size_t i = 0; i < n; i++) {
      if (pos[i] == sources[i]->count) continue;
      const entry *c = &sources[i]->at[pos[i]];
      const entry *b = best < 0 ? NULL : &sources[best]->at[pos[best]];
      if (b == NULL || compare(c->key, c->key_size, b->key, b->key_size) <= 0) best = (int)i;
    }
    if (best < 0) break;
    const entry win = sources[best]->at[pos[best]];
    for (size_t i = 0; i < n; i++) {
      const entry *c = pos[i] < sources[i]->count ? &sources[i]->at[pos[i]] : NULL;
      if (c && compare(c->key, c->key_size, win.key, win.key_size) == 0) pos[i]++;
    }
    if (win.value == NULL) continue;
    for (size_t k = 0; k < win.value_size; k += 64) checksum += (unsigned char)win.value[k];
    read++;
  }
  pthread_mutex_unlock(&db->lock);
  *returned = read;
  return LSMBENCH_OK;
}

static lsmbench_code metrics(lsmbench_engine *db, lsmbench_metric_sink sink, void *context,
                             lsmbench_message *message) {
  (void)message;
  pthread_mutex_lock(&db->lock);
  double written = (double)(db->bytes_flushed + db->bytes_merged);
  sink(context, "disk_components", (double)db->run_count);
  sink(context, "bytes_flushed", (double)db->bytes_flushed);
  sink(context, "bytes_merged", (double)db->bytes_merged);
  if (db->bytes_put > 0) sink(context, "write_amplification", written / (double)db->bytes_put);
  pthread_mutex_unlock(&db->lock);
  return LSMBENCH_OK;
}

static size_t take_events(lsmbench_engine *db, lsmbench_event *events, size_t capacity) {
  pthread_mutex_lock(&db->lock);
  size_t n = db->event_count < capacity ? db->event_count : capacity;
  memcpy(events, db->events, n * sizeof(lsmbench_event));
  memmove(db->events, db->events + n, (db->event_count - n) * sizeof(lsmbench_event));
  db->event_count -= n;
  pthread_mutex_unlock(&db->lock);
  return n;
}

static lsmbench_code background_work(lsmbench_engine *db, lsmbench_work *work,
                                     lsmbench_message *message) {
  (void)message;
  pthread_mutex_lock(&db->lock);
  memset(work, 0, sizeof(*work)); /* nothing ever runs in the background */
  work->completed = db->completed;
  pthread_mutex_unlock(&db->lock);
  return LSMBENCH_OK;
}

static const lsmbench_option options[] = {
    {"memtable_entries", LSMBENCH_OPTION_INT, 16, 1 << 20, "", "entries",
     "Entries the memtable takes before it is flushed into a run.", "4096"},
    {"fanout", LSMBENCH_OPTION_INT, 2, 64, "", "runs",
     "Runs that pile up before they are merged into one.", "4"},
};

static lsmbench_code open_engine(const char *dir, const char *const *names,
                                 const char *const *values, size_t count,
                                 uint32_t secondary_indexes, lsmbench_engine **out,
                                 lsmbench_message *message) {
  (void)dir, (void)secondary_indexes; /* in memory: the directory is not used */
  struct lsmbench_engine *db = calloc(1, sizeof(*db));
  if (db == NULL) {
    snprintf(message->text, LSMBENCH_MESSAGE_BYTES, "out of memory");
    return LSMBENCH_FAILED;
  }
  pthread_mutex_init(&db->lock, NULL);
  db->memtable_entries = 4096;
  db->fanout = 4;
  for (size_t i = 0; i < count; i++) { /* the driver has checked names and ranges */
    if (strcmp(names[i], "memtable_entries") == 0) db->memtable_entries = atol(values[i]);
    if (strcmp(names[i], "fanout") == 0) db->fanout = atol(values[i]);
  }
  *out = db;
  return LSMBENCH_OK;
}

static lsmbench_code close_engine(lsmbench_engine *db, lsmbench_message *message) {
  (void)message;
  free_run(&db->memtable);
  for (size_t i = 0; i < db->run_count; i++) free_run(&db->runs[i]);
  pthread_mutex_destroy(&db->lock);
  free(db);
  return LSMBENCH_OK;
}

static const lsmbench_engine_api api = {
    .abi_version = LSMBENCH_ENGINE_ABI_VERSION,
    .api_size = sizeof(lsmbench_engine_api),
    .option_size = sizeof(lsmbench_option),
    .event_size = sizeof(lsmbench_event),
    .work_size = sizeof(lsmbench_work),
    .write_size = sizeof(lsmbench_write),
    .name = "memkv",
    .version = "1.0",
    .options = options,
    .option_count = sizeof(options) / sizeof(options[0]),
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
