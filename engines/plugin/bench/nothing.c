/*
 * nothing: an engine plugin that stores nothing, the plugin twin of the
 * compiled-in `null` engine with no options: every write succeeds at once,
 * every get misses. What it costs a driver to call it is the cost of the
 * plugin boundary (engines/driver/bench-driver.sh with PLUGIN=...).
 */
#include <lsmbench/engine_plugin.h>

#include <stdlib.h>

struct lsmbench_engine {
  int unused;
};

static lsmbench_code open_engine(const char *dir, const char *const *names,
                                 const char *const *values, size_t count, uint32_t indexes,
                                 lsmbench_engine **out, lsmbench_message *m) {
  (void)dir, (void)names, (void)values, (void)count, (void)indexes, (void)m;
  *out = calloc(1, sizeof(lsmbench_engine));
  return LSMBENCH_OK;
}

static lsmbench_code close_engine(lsmbench_engine *e, lsmbench_message *m) {
  (void)m;
  free(e);
  return LSMBENCH_OK;
}

static lsmbench_code put(lsmbench_engine *e, const char *k, size_t kn, const char *v, size_t vn,
                         lsmbench_message *m) {
  (void)e, (void)k, (void)kn, (void)v, (void)vn, (void)m;
  return LSMBENCH_OK;
}

static lsmbench_code del(lsmbench_engine *e, const char *k, size_t kn, lsmbench_message *m) {
  (void)e, (void)k, (void)kn, (void)m;
  return LSMBENCH_OK;
}

static lsmbench_code get(lsmbench_engine *e, const char *k, size_t kn, lsmbench_value_sink sink,
                         void *context, lsmbench_message *m) {
  (void)e, (void)k, (void)kn, (void)sink, (void)context, (void)m;
  return LSMBENCH_NOT_FOUND;
}

static lsmbench_code scan(lsmbench_engine *e, const char *s, size_t sn, size_t count,
                          size_t *returned, lsmbench_message *m) {
  (void)e, (void)s, (void)sn, (void)count, (void)m;
  *returned = 0;
  return LSMBENCH_OK;
}

static lsmbench_code background_work(lsmbench_engine *e, lsmbench_work *w, lsmbench_message *m) {
  (void)e, (void)w, (void)m; /* the driver zeroed *w: idle */
  return LSMBENCH_OK;
}

static const lsmbench_engine_api api = {
    .abi_version = LSMBENCH_ENGINE_ABI_VERSION,
    .api_size = sizeof(lsmbench_engine_api),
    .option_size = sizeof(lsmbench_option),
    .event_size = sizeof(lsmbench_event),
    .work_size = sizeof(lsmbench_work),
    .write_size = sizeof(lsmbench_write),
    .name = "nothing",
    .version = "1.0",
    .open = open_engine,
    .close = close_engine,
    .put = put,
    .del = del,
    .get = get,
    .scan = scan,
    .background_work = background_work,
};

LSMBENCH_PLUGIN_EXPORT const lsmbench_engine_api *lsmbench_engine_plugin(void) { return &api; }
