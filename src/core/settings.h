/*
 * settings.h — every corun setting in one table.
 *
 * X(NAME, field, TYPE, default, min, max, allowed, help)
 *   NAME    the environment variable is CORUN_<NAME>; the CLI flag is
 *           --set field=value
 *   TYPE    STR (allowed: comma-separated values, or "" for any), UINT, DBL
 * Settings are read once (corun__settings_load_env) into a corun__settings
 * value that is passed down; nothing else calls getenv.
 */
#ifndef CORUN_CORE_SETTINGS_H
#define CORUN_CORE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#define CORUN_SETTINGS(X)                                                                        \
    X(BACKEND, backend, STR, "auto", 0, 0, "auto,cuda,sim",                                      \
      "GPU backend: auto picks cuda when a GPU is usable, else sim")                             \
    X(POLICY, policy, STR, "smguard", 0, 0, "",                                                  \
      "scheduling policy of the in-process scheduler (corun policies lists them)")               \
    X(LOG_LEVEL, log_level, STR, "warn", 0, 0, "error,warn,info,debug",                          \
      "how much the command line and the daemon log")                                           \
    X(RESERVE_CAPSM, reserve_capsm, UINT, "8", 0, 4096, "",                                      \
      "smguard: CapSMs reserved for latency-sensitive kernels; batch quota is the rest")         \
    X(CHUNK_BUDGET_US, chunk_budget_us, DBL, "20", 0.5, 1e6, "",                                 \
      "latency budget of one chunk of block-tasks, in microseconds (see docs/gpu-results.md)")   \
    X(CHUNK_MAX, chunk_max, UINT, "1024", 1, 1048576, "",                                        \
      "most block-tasks a worker claims at once")                                                \
    X(SEED, seed, UINT, "1", 0, 4294967295.0, "", "random seed of simulations and scenarios")    \
    X(SIM_SIGNAL_US, sim_signal_us, DBL, "8", 0, 1e6, "",                                        \
      "sim: delay from a host signal to the workers seeing it (H100: 10-12 us incl. exit)")      \
    X(SIM_LAUNCH_US, sim_launch_us, DBL, "5", 0, 1e6, "",                                        \
      "sim: delay from a launch call to its blocks reaching the dispatcher")                     \
    X(SIM_NOTIFY_US, sim_notify_us, DBL, "10", 0, 1e6, "",                                       \
      "sim: delay from a launch's last block leaving to the host knowing")                       \
    X(SIM_CLAIM_NS, sim_claim_ns, DBL, "800", 0, 1e9, "",                                        \
      "sim: cost of one chunk claim (atomic on the counter plus a barrier)")

typedef struct corun__settings {
#define CORUN__SET_FIELD_STR(f) char f[64];
#define CORUN__SET_FIELD_UINT(f) uint64_t f;
#define CORUN__SET_FIELD_DBL(f) double f;
#define CORUN__SET_FIELD(N, f, T, d, lo, hi, allowed, help) CORUN__SET_FIELD_##T(f)
    CORUN_SETTINGS(CORUN__SET_FIELD)
#undef CORUN__SET_FIELD
} corun__settings;

typedef enum corun__setting_type {
    CORUN_SETTING_STR,
    CORUN_SETTING_UINT,
    CORUN_SETTING_DBL
} corun__setting_type;

typedef struct corun__setting_info {
    const char *env;     /* CORUN_BACKEND */
    const char *name;    /* backend */
    corun__setting_type type;
    const char *def;
    double min, max;     /* numeric bounds */
    const char *allowed; /* STR: comma-separated choices, "" = any */
    const char *help;
    size_t offset;       /* of the field in corun__settings */
} corun__setting_info;

void corun__settings_default(corun__settings *s);
/* Reads every CORUN_<NAME> variable that is set. On a bad value returns
 * CORUN_EINVAL with a message naming the variable; *s is then unchanged. */
int corun__settings_load_env(corun__settings *s, char *why, size_t why_len);
/* Sets one setting by name ("chunk_budget_us") or variable ("CORUN_CHUNK_BUDGET_US"). */
int corun__settings_set(corun__settings *s, const char *name, const char *value, char *why,
                        size_t why_len);
size_t corun__settings_count(void);
const corun__setting_info *corun__settings_info(size_t i);
/* The current value of setting i as text. */
void corun__settings_format(const corun__settings *s, size_t i, char *buf, size_t len);

#endif
