/*
 * Plugins that misbehave, for the driver's tests: the memkv example with
 * one fault, chosen at compile time (-DFAULT_...). Each is what a real
 * plugin gets wrong; the driver must name the plugin and the problem.
 */
#define lsmbench_engine_plugin memkv_plugin
#include "../examples/memkv/memkv.c"
#undef lsmbench_engine_plugin

#include <signal.h>
#include <unistd.h>

static lsmbench_engine_api faulty;

#ifdef FAULT_CRASH_PUT /* dereferences NULL on the 100th put */
static lsmbench_code crashing_put(lsmbench_engine *db, const char *key, size_t key_size,
                                  const char *value, size_t value_size, lsmbench_message *m) {
  static int puts;
  if (__sync_add_and_fetch(&puts, 1) == 100) *(volatile int *)NULL = 1;
  return put(db, key, key_size, value, value_size, m);
}
#endif

#ifdef FAULT_HANG_SETTLE /* background_work never returns */
static lsmbench_code hanging_work(lsmbench_engine *db, lsmbench_work *w, lsmbench_message *m) {
  (void)db, (void)w, (void)m;
  for (;;) pause();
  return LSMBENCH_OK; /* never */
}
#endif

#ifdef FAULT_EVENTS_ORDER /* each batch starts with an event completed long ago */
static size_t disordered_events(lsmbench_engine *db, lsmbench_event *events, size_t capacity) {
  size_t n = take_events(db, events, capacity);
  if (n > 0) events[0].start_ns = events[0].end_ns = events[0].sealed_ns = 1;
  return n;
}
#endif

#if defined(FAULT_CHECKED) || defined(FAULT_OPEN_CHECKED) /* a rule the table cannot say */
static lsmbench_code check(const char *const *names, const char *const *values, size_t count,
                           lsmbench_message *m) {
  long entries = 4096, fanout = 4;
  for (size_t i = 0; i < count; i++) {
    if (strcmp(names[i], "memtable_entries") == 0) entries = atol(values[i]);
    if (strcmp(names[i], "fanout") == 0) fanout = atol(values[i]);
  }
  if (fanout <= entries) return LSMBENCH_OK;
  snprintf(m->text, LSMBENCH_MESSAGE_BYTES, "fanout %ld exceeds memtable_entries %ld", fanout,
           entries);
  return LSMBENCH_INVALID_ARGUMENT;
}
#endif

#if defined(FAULT_RECORDS) || defined(FAULT_HALF_RECORDS)
/* not a fault: records with one secondary field, kept in a table */
#define MAX_RECORDS 65536
static uint64_t record_field[MAX_RECORDS]; /* by the key's number; UINT64_MAX: none */
static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;

static lsmbench_code put_record(lsmbench_engine *db, const char *key, size_t key_size,
                                const uint64_t *fields, size_t field_count, const char *value,
                                size_t value_size, lsmbench_message *m) {
  char digits[32] = {0};
  size_t n = 0;
  for (size_t i = 0; i < key_size && n < sizeof(digits) - 1; i++) {
    if (key[i] >= '0' && key[i] <= '9') digits[n++] = key[i];
  }
  unsigned long id = strtoul(digits, NULL, 10) % MAX_RECORDS;
  pthread_mutex_lock(&record_lock);
  record_field[id] = field_count > 0 ? fields[0] + 1 : 0; /* 0: no record */
  pthread_mutex_unlock(&record_lock);
  return put(db, key, key_size, value, value_size, m);
}

static lsmbench_code query_secondary(lsmbench_engine *db, uint32_t field, uint64_t low,
                                     uint64_t high, size_t *returned, lsmbench_message *m) {
  (void)db, (void)m;
  size_t n = 0;
  pthread_mutex_lock(&record_lock);
  for (size_t i = 0; field == 0 && i < MAX_RECORDS; i++) {
    n += record_field[i] > low && record_field[i] <= high; /* stored + 1 */
  }
  pthread_mutex_unlock(&record_lock);
  *returned = n;
  return LSMBENCH_OK;
}
#endif

LSMBENCH_PLUGIN_EXPORT const lsmbench_engine_api *lsmbench_engine_plugin(void) {
  faulty = *memkv_plugin();
  faulty.name = "faulty";
#ifdef FAULT_ABI
  faulty.abi_version = 99;
#endif
#ifdef FAULT_SIZES
  faulty.event_size += 8;
#endif
#ifdef FAULT_MISSING
  faulty.put = NULL;
  faulty.scan = NULL;
#endif
#ifdef FAULT_CRASH_PUT
  faulty.put = crashing_put;
#endif
#ifdef FAULT_HANG_SETTLE
  faulty.background_work = hanging_work;
#endif
#ifdef FAULT_EVENTS_ORDER
  faulty.take_events = disordered_events;
#endif
#ifdef FAULT_CHECKED
  faulty.check_options = check;
#endif
#ifdef FAULT_OPEN_CHECKED /* takes options its table does not list, and checks them */
  faulty.options_open = 1;
  faulty.check_options = check;
#endif
#ifdef FAULT_OPEN_UNCHECKED /* takes options its table does not list, and cannot check them */
  faulty.options_open = 1;
#endif
#ifdef FAULT_NAMED_NULL /* takes the name of an engine compiled into the driver */
  faulty.name = "null";
#endif
#ifdef FAULT_RECORDS
  faulty.put_record = put_record;
  faulty.query_secondary = query_secondary;
#endif
#ifdef FAULT_HALF_RECORDS /* put_record without query_secondary */
  faulty.put_record = put_record;
  (void)query_secondary;
#endif
#ifdef FAULT_BLIND /* tells nothing it may leave out */
  faulty.metrics = NULL;
  faulty.take_events = NULL;
  faulty.background_work = NULL;
#endif
  return &faulty;
}
