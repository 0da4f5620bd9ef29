/*
 * nulltwin: the compiled-in `null` engine (engines/adapters/null_adapter.cc)
 * as an engine plugin, operation for operation: a configurable service time
 * (busy-waiting), scheduled pauses, nothing stored. The same work behind the
 * plugin boundary: what the driver's ceiling loses to the boundary is the
 * difference (engines/driver/bench-driver.sh PLUGIN=...).
 */
#define _POSIX_C_SOURCE 200809L
#include <lsmbench/engine_plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct lsmbench_engine {
  int64_t open_ns, service_ns, every_ns, at_ns, pause_ns; /* at_ns < 0: no one-shot pause */
  int get_hits;
  char *value;
  size_t value_size;
  uint64_t ops, paused_ops; /* atomics (__atomic builtins) */
};

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Sleeping is coarse, so long waits sleep until shortly before the deadline and every
 * wait ends in a spin. */
static void wait_until(int64_t deadline) {
  const int64_t margin = 200000;
  if (deadline - now_ns() > 5 * margin) {
    int64_t d = deadline - margin;
    struct timespec t = {(time_t)(d / 1000000000), (long)(d % 1000000000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
  }
  while (now_ns() < deadline) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

/* The end (ns since open) of the pause containing t, or -1. */
static int64_t pause_end(const lsmbench_engine *e, int64_t t) {
  int64_t end = -1;
  if (e->every_ns > 0 && t >= e->every_ns) {
    int64_t start = t / e->every_ns * e->every_ns;
    if (t - start < e->pause_ns) end = start + e->pause_ns;
  }
  if (e->at_ns >= 0 && t >= e->at_ns && t - e->at_ns < e->pause_ns) {
    int64_t one = e->at_ns + e->pause_ns;
    if (one > end) end = one;
  }
  return end;
}

static void serve(lsmbench_engine *e) {
  const int64_t arrival = now_ns();
  int64_t start = arrival;
  if (e->pause_ns > 0) {
    int64_t t = arrival - e->open_ns, end;
    int paused = 0;
    while ((end = pause_end(e, t)) >= 0) t = end, paused = 1;
    if (paused) {
      __atomic_fetch_add(&e->paused_ops, 1, __ATOMIC_RELAXED);
      start = e->open_ns + t;
    }
  }
  if (start != arrival || e->service_ns > 0) wait_until(start + e->service_ns);
  __atomic_fetch_add(&e->ops, 1, __ATOMIC_RELAXED);
}

static lsmbench_code put(lsmbench_engine *e, const char *k, size_t kn, const char *v, size_t vn,
                         lsmbench_message *m) {
  (void)k, (void)kn, (void)v, (void)vn, (void)m;
  serve(e);
  return LSMBENCH_OK;
}

static lsmbench_code del(lsmbench_engine *e, const char *k, size_t kn, lsmbench_message *m) {
  (void)k, (void)kn, (void)m;
  serve(e);
  return LSMBENCH_OK;
}

static lsmbench_code get(lsmbench_engine *e, const char *k, size_t kn, lsmbench_value_sink sink,
                         void *context, lsmbench_message *m) {
  (void)k, (void)kn, (void)m;
  serve(e);
  if (!e->get_hits) return LSMBENCH_NOT_FOUND;
  sink(context, e->value, e->value_size);
  return LSMBENCH_OK;
}

static lsmbench_code scan(lsmbench_engine *e, const char *s, size_t sn, size_t count,
                          size_t *returned, lsmbench_message *m) {
  (void)s, (void)sn, (void)m;
  serve(e);
  *returned = count;
  return LSMBENCH_OK;
}

static lsmbench_code metrics(lsmbench_engine *e, lsmbench_metric_sink sink, void *context,
                             lsmbench_message *m) {
  (void)m;
  const int64_t t = now_ns() - e->open_ns;
  uint64_t pauses = 0;
  int64_t paused_ns = 0;
  if (e->every_ns > 0 && t / e->every_ns >= 1) {
    const int64_t k = t / e->every_ns;
    int64_t last = t - k * e->every_ns;
    pauses += (uint64_t)k;
    paused_ns += (k - 1) * e->pause_ns + (last < e->pause_ns ? last : e->pause_ns);
  }
  if (e->at_ns >= 0 && t >= e->at_ns) {
    int64_t in = t - e->at_ns;
    pauses += 1;
    paused_ns += in < e->pause_ns ? in : e->pause_ns;
  }
  sink(context, "ops", (double)__atomic_load_n(&e->ops, __ATOMIC_RELAXED));
  sink(context, "paused_ops", (double)__atomic_load_n(&e->paused_ops, __ATOMIC_RELAXED));
  sink(context, "pauses", (double)pauses);
  sink(context, "pause_micros", (double)paused_ns / 1e3);
  return LSMBENCH_OK;
}

static lsmbench_code background_work(lsmbench_engine *e, lsmbench_work *w, lsmbench_message *m) {
  (void)e, (void)w, (void)m; /* nothing is stored: never any work */
  return LSMBENCH_OK;
}

#define DAY_MS 86400000.0

static const lsmbench_option options[] = {
    {"get_hits", LSMBENCH_OPTION_BOOL, 0, 0, "", "", "Every Get finds its key (else NotFound).",
     "false"},
    {"pause_at_ms", LSMBENCH_OPTION_REAL, 0, DAY_MS, "", "ms",
     "One pause of pause_ms this long after the open (default: none).", ""},
    {"pause_every_ms", LSMBENCH_OPTION_REAL, 0, DAY_MS, "", "ms",
     "A pause of pause_ms every this long after the open; 0: none.", "0"},
    {"pause_ms", LSMBENCH_OPTION_REAL, 0, DAY_MS, "", "ms",
     "Length of a pause, during which every operation waits.", "0"},
    {"service_time_us", LSMBENCH_OPTION_REAL, 0, DAY_MS * 1000, "", "us",
     "Time each operation takes (busy-waiting, one at a time).", "0"},
    {"value_bytes", LSMBENCH_OPTION_SIZE, 0, 64 << 20, "", "bytes",
     "Size of the value Get returns.", "100"},
};

typedef struct {
  double service_us, every_ms, at_ms, pause_ms;
  int get_hits;
  size_t value_bytes;
} config;

static void parse(const char *const *names, const char *const *values, size_t count,
                  config *c) {
  *c = (config){0, 0, -1, 0, 0, 100};
  for (size_t i = 0; i < count; i++) { /* checked and canonical */
    const char *n = names[i], *v = values[i];
    if (!strcmp(n, "get_hits")) c->get_hits = !strcmp(v, "true");
    if (!strcmp(n, "pause_at_ms")) c->at_ms = atof(v);
    if (!strcmp(n, "pause_every_ms")) c->every_ms = atof(v);
    if (!strcmp(n, "pause_ms")) c->pause_ms = atof(v);
    if (!strcmp(n, "service_time_us")) c->service_us = atof(v);
    if (!strcmp(n, "value_bytes")) c->value_bytes = (size_t)strtoull(v, NULL, 10);
  }
}

static lsmbench_code check(const char *const *names, const char *const *values, size_t count,
                           lsmbench_message *m) {
  config c;
  parse(names, values, count, &c);
  const char *why = NULL;
  if (c.every_ms > 0 && !(c.pause_ms > 0 && c.pause_ms < c.every_ms)) {
    why = "engine option 'pause_every_ms': needs 0 < pause_ms < pause_every_ms";
  } else if (c.at_ms >= 0 && !(c.pause_ms > 0)) {
    why = "engine option 'pause_at_ms': needs pause_ms > 0";
  } else if (c.pause_ms > 0 && c.every_ms == 0 && c.at_ms < 0) {
    why = "engine option 'pause_ms': needs pause_every_ms or pause_at_ms";
  }
  if (why == NULL) return LSMBENCH_OK;
  snprintf(m->text, LSMBENCH_MESSAGE_BYTES, "%s", why);
  return LSMBENCH_INVALID_ARGUMENT;
}

static int64_t ms_to_ns(double ms) { return (int64_t)(ms * 1e6 + 0.5); }

static lsmbench_code open_engine(const char *dir, const char *const *names,
                                 const char *const *values, size_t count, uint32_t indexes,
                                 lsmbench_engine **out, lsmbench_message *m) {
  (void)dir, (void)indexes;
  lsmbench_code code = check(names, values, count, m);
  if (code != LSMBENCH_OK) return code;
  config c;
  parse(names, values, count, &c);
  lsmbench_engine *e = calloc(1, sizeof(*e));
  e->open_ns = now_ns();
  e->service_ns = (int64_t)(c.service_us * 1e3 + 0.5);
  e->every_ns = ms_to_ns(c.every_ms);
  e->at_ns = c.at_ms < 0 ? -1 : ms_to_ns(c.at_ms);
  e->pause_ns = ms_to_ns(c.pause_ms);
  e->get_hits = c.get_hits;
  e->value_size = c.value_bytes;
  e->value = malloc(c.value_bytes ? c.value_bytes : 1);
  memset(e->value, 'v', c.value_bytes);
  *out = e;
  return LSMBENCH_OK;
}

static lsmbench_code close_engine(lsmbench_engine *e, lsmbench_message *m) {
  (void)m;
  free(e->value);
  free(e);
  return LSMBENCH_OK;
}

static const lsmbench_engine_api api = {
    .abi_version = LSMBENCH_ENGINE_ABI_VERSION,
    .api_size = sizeof(lsmbench_engine_api),
    .option_size = sizeof(lsmbench_option),
    .event_size = sizeof(lsmbench_event),
    .work_size = sizeof(lsmbench_work),
    .write_size = sizeof(lsmbench_write),
    .name = "nulltwin",
    .version = "1.0",
    .options = options,
    .option_count = sizeof(options) / sizeof(options[0]),
    .check_options = check,
    .open = open_engine,
    .close = close_engine,
    .put = put,
    .del = del,
    .get = get,
    .scan = scan,
    .metrics = metrics,
    .background_work = background_work,
};

LSMBENCH_PLUGIN_EXPORT const lsmbench_engine_api *lsmbench_engine_plugin(void) { return &api; }
