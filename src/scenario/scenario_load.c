/*
 * scenario_load.c — scenario files (JSON, via jansson) into corun__scenario.
 * The format is documented in docs/scenarios.md. Every error names the file
 * and the JSON path of the bad value; unknown keys are errors (typos must
 * not pass silently).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "corun/corun_chunk.h"
#include "scenario/scenario.h"

typedef struct ctx {
    const char *origin;
    char *why;
    size_t why_len;
} ctx;

__attribute__((format(printf, 3, 4))) static int bad(const ctx *c, const char *path,
                                                     const char *fmt, ...)
{
    char msg[384];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->why != NULL && c->why_len > 0) {
        snprintf(c->why, c->why_len, "%s: %s: %s", c->origin, path, msg);
    }
    return CORUN_EPARSE;
}

/* Fails on any key of obj not in the NULL-terminated list. */
static int only_keys(const ctx *c, const char *path, json_t *obj, const char *const *keys)
{
    const char *key;
    json_t *v;

    json_object_foreach(obj, key, v) {
        size_t i;
        int known = 0;
        for (i = 0; keys[i] != NULL; i++) {
            if (strcmp(key, keys[i]) == 0) {
                known = 1;
                break;
            }
        }
        if (!known) {
            char list[256] = "";
            for (i = 0; keys[i] != NULL; i++) {
                strncat(list, keys[i], sizeof(list) - strlen(list) - 1);
                if (keys[i + 1] != NULL) {
                    strncat(list, ", ", sizeof(list) - strlen(list) - 1);
                }
            }
            return bad(c, path, "unknown key '%s' (known: %s)", key, list);
        }
    }
    return CORUN_OK;
}

static int get_number(const ctx *c, const char *path, json_t *obj, const char *key, double lo,
                      double hi, double *out, int required)
{
    json_t *v = json_object_get(obj, key);
    double d;

    if (v == NULL) {
        return required ? bad(c, path, "missing '%s'", key) : CORUN_OK;
    }
    if (!json_is_number(v)) {
        return bad(c, path, "'%s' must be a number", key);
    }
    d = json_number_value(v);
    if (!isfinite(d) || d < lo || d > hi) {
        return bad(c, path, "'%s' = %g is outside [%g, %g]", key, d, lo, hi);
    }
    *out = d;
    return CORUN_OK;
}

static int get_u32(const ctx *c, const char *path, json_t *obj, const char *key, uint32_t lo,
                   uint32_t hi, uint32_t *out, int required)
{
    double d = 0; /* set by get_number on CORUN_OK; gcc -O3 cannot see it */
    int rc;

    if (json_object_get(obj, key) == NULL) {
        return required ? bad(c, path, "missing '%s'", key) : CORUN_OK;
    }
    if (!json_is_integer(json_object_get(obj, key))) {
        return bad(c, path, "'%s' must be a whole number", key);
    }
    rc = get_number(c, path, obj, key, lo, hi, &d, required);
    if (rc == CORUN_OK) {
        *out = (uint32_t)d;
    }
    return rc;
}

static int get_string(const ctx *c, const char *path, json_t *obj, const char *key, char *out,
                      size_t len, int required)
{
    json_t *v = json_object_get(obj, key);

    if (v == NULL) {
        return required ? bad(c, path, "missing '%s'", key) : CORUN_OK;
    }
    if (!json_is_string(v)) {
        return bad(c, path, "'%s' must be a string", key);
    }
    if (strlen(json_string_value(v)) >= len) {
        return bad(c, path, "'%s' is longer than %zu characters", key, len - 1);
    }
    snprintf(out, len, "%s", json_string_value(v));
    return CORUN_OK;
}

/* A dim3: a number (x) or an array of 1 to 3 whole numbers >= 1. */
static int get_dim3(const ctx *c, const char *path, json_t *obj, const char *key, uint32_t max_x,
                    corun_dim3 *out)
{
    json_t *v = json_object_get(obj, key);
    uint32_t d[3] = {1, 1, 1};
    const uint32_t max[3] = {max_x, 65535, 65535};
    size_t i, n;

    if (v == NULL) {
        return bad(c, path, "missing '%s'", key);
    }
    if (json_is_integer(v)) {
        n = 1;
    } else if (json_is_array(v) && json_array_size(v) >= 1 && json_array_size(v) <= 3) {
        n = json_array_size(v);
    } else {
        return bad(c, path, "'%s' must be a whole number or an array of 1 to 3 of them", key);
    }
    for (i = 0; i < n; i++) {
        json_t *e = json_is_array(v) ? json_array_get(v, i) : v;
        json_int_t x;
        if (!json_is_integer(e)) {
            return bad(c, path, "'%s'[%zu] must be a whole number", key, i);
        }
        x = json_integer_value(e);
        if (x < 1 || (uint64_t)x > max[i]) {
            return bad(c, path, "'%s'[%zu] = %lld is outside [1, %u]", key, i, (long long)x, max[i]);
        }
        d[i] = (uint32_t)x;
    }
    out->x = d[0];
    out->y = d[1];
    out->z = d[2];
    return CORUN_OK;
}

/* Durations in microseconds: a number (constant) or {"dist": ..., ...}. */
static int get_dist_us(const ctx *c, const char *path, json_t *obj, const char *key,
                       corun__dist *out, int required)
{
    static const char *const keys[] = {"dist", "value", "mean", "sd", "min", "max", NULL};
    json_t *v = json_object_get(obj, key);
    char p[160], dist[16] = "";
    double a = 0, b = 0;
    int rc;

    if (v == NULL) {
        return required ? bad(c, path, "missing '%s'", key) : CORUN_OK;
    }
    snprintf(p, sizeof(p), "%s.%s", path, key);
    if (json_is_number(v)) {
        a = json_number_value(v);
        if (!(a > 0) || a > 1e9) {
            return bad(c, p, "must be a duration in microseconds in (0, 1e9]");
        }
        *out = (corun__dist){CORUN_DIST_CONST, a * 1e3, 0};
        return CORUN_OK;
    }
    if (!json_is_object(v)) {
        return bad(c, p, "must be a number (microseconds) or an object with 'dist'");
    }
    if ((rc = only_keys(c, p, v, keys)) != CORUN_OK ||
        (rc = get_string(c, p, v, "dist", dist, sizeof(dist), 1)) != CORUN_OK) {
        return rc;
    }
    if (strcmp(dist, "const") == 0) {
        rc = get_number(c, p, v, "value", 1e-3, 1e9, &a, 1);
        *out = (corun__dist){CORUN_DIST_CONST, a * 1e3, 0};
    } else if (strcmp(dist, "uniform") == 0) {
        if ((rc = get_number(c, p, v, "min", 1e-3, 1e9, &a, 1)) == CORUN_OK &&
            (rc = get_number(c, p, v, "max", 1e-3, 1e9, &b, 1)) == CORUN_OK && b < a) {
            return bad(c, p, "'max' (%g) is below 'min' (%g)", b, a);
        }
        *out = (corun__dist){CORUN_DIST_UNIFORM, a * 1e3, b * 1e3};
    } else if (strcmp(dist, "normal") == 0) {
        if ((rc = get_number(c, p, v, "mean", 1e-3, 1e9, &a, 1)) == CORUN_OK) {
            rc = get_number(c, p, v, "sd", 0, 1e9, &b, 1);
        }
        *out = (corun__dist){CORUN_DIST_NORMAL, a * 1e3, b * 1e3};
    } else if (strcmp(dist, "exp") == 0) {
        rc = get_number(c, p, v, "mean", 1e-3, 1e9, &a, 1);
        *out = (corun__dist){CORUN_DIST_EXP, a * 1e3, 0};
    } else {
        return bad(c, p, "'dist' = '%s' is not one of const, uniform, normal, exp", dist);
    }
    return rc;
}

/* The real kernels a scenario may name: "code" -> what it runs on, and the
 * block it is written for; in corun__builtin's order (builtins[id - 1]). */
static const struct builtin_def {
    const char *name;
    corun__builtin id;
    corun_dim3 block;
    unsigned grid_rank; /* 1: grid.y = grid.z = 1; 2: grid.z = 1; 3: any */
} builtins[] = {
    {"matmul", CORUN_BUILTIN_MATMUL, {32, 32, 1}, 2},
    {"reduce", CORUN_BUILTIN_REDUCE, {256, 1, 1}, 1},
    {"vadd", CORUN_BUILTIN_VADD, {256, 1, 1}, 1},
    {"stencil3d", CORUN_BUILTIN_STENCIL3D, {8, 8, 4}, 3},
    {"blackscholes", CORUN_BUILTIN_BLACKSCHOLES, {128, 1, 1}, 1},
    {"transpose", CORUN_BUILTIN_TRANSPOSE, {32, 8, 1}, 2},
    {"ragged", CORUN_BUILTIN_RAGGED, {256, 1, 1}, 1},
    {"longtask", CORUN_BUILTIN_LONGTASK, {256, 1, 1}, 1},
    {"md5search", CORUN_BUILTIN_MD5SEARCH, {256, 1, 1}, 1},
    {"backprop", CORUN_BUILTIN_BACKPROP, {16, 16, 1}, 2},
};
_Static_assert(sizeof(builtins) / sizeof(builtins[0]) == CORUN_BUILTIN_COUNT - 1,
               "a builtin per corun__builtin");

/* kernel.code: "synthetic" (the default) or a builtin's name, whose block
 * and grid rank the kernel must have. */
static int parse_code(const ctx *c, const char *path, json_t *v, corun__kspec *k)
{
    char code[32] = "synthetic";
    size_t i;
    int rc;

    k->code = CORUN_CODE_SYNTHETIC;
    k->builtin = CORUN_BUILTIN_NONE;
    if ((rc = get_string(c, path, v, "code", code, sizeof(code), 0)) != CORUN_OK ||
        strcmp(code, "synthetic") == 0) {
        return rc;
    }
    for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
        const struct builtin_def *b = &builtins[i];
        if (strcmp(code, b->name) != 0) {
            continue;
        }
        if (k->block.x != b->block.x || k->block.y != b->block.y || k->block.z != b->block.z) {
            return bad(c, path, "'code' = '%s' runs blocks of [%u, %u, %u] threads; 'block' is "
                       "[%u, %u, %u]", code, b->block.x, b->block.y, b->block.z, k->block.x,
                       k->block.y, k->block.z);
        }
        if ((b->grid_rank < 3 && k->grid.z != 1) || (b->grid_rank == 1 && k->grid.y != 1)) {
            return bad(c, path, "'code' = '%s' takes a %uD grid; 'grid' is [%u, %u, %u]", code,
                       b->grid_rank, k->grid.x, k->grid.y, k->grid.z);
        }
        k->code = CORUN_CODE_BUILTIN;
        k->builtin = b->id;
        return CORUN_OK;
    }
    return bad(c, path,
               "'code' = '%s' is not one of synthetic, matmul, reduce, vadd, stencil3d, "
               "blackscholes, transpose, ragged, longtask, md5search, backprop",
               code);
}

static int parse_kernel(const ctx *c, const char *path, json_t *v, corun__kspec *k,
                        double *compute)
{
    static const char *const keys[] = {"name", "code", "grid", "block", "regs", "smem_static",
                                       "smem_dynamic", "smem_optin", "task_us", "mem_frac",
                                       "mem_bw", "compute", NULL};
    uint32_t optin = 0;
    int rc;

    if (!json_is_object(v)) {
        return bad(c, path, "must be an object");
    }
    if ((rc = only_keys(c, path, v, keys)) != CORUN_OK ||
        (rc = get_string(c, path, v, "name", k->name, sizeof(k->name), 0)) != CORUN_OK ||
        (rc = get_dim3(c, path, v, "grid", 0x7fffffffu, &k->grid)) != CORUN_OK ||
        (rc = get_dim3(c, path, v, "block", 1024, &k->block)) != CORUN_OK ||
        (rc = get_u32(c, path, v, "regs", 1, 255, &k->shape.regs_per_thread, 0)) != CORUN_OK ||
        (rc = get_u32(c, path, v, "smem_static", 0, 1u << 20, &k->shape.smem_static, 0)) != CORUN_OK ||
        (rc = get_u32(c, path, v, "smem_dynamic", 0, 1u << 20, &k->smem_dynamic, 0)) != CORUN_OK ||
        (rc = get_u32(c, path, v, "smem_optin", 0, 1, &optin, 0)) != CORUN_OK ||
        (rc = get_dist_us(c, path, v, "task_us", &k->task_ns, 1)) != CORUN_OK ||
        (rc = get_number(c, path, v, "mem_frac", 0, 1, &k->mem_frac, 0)) != CORUN_OK ||
        (rc = get_number(c, path, v, "mem_bw", 0, CORUN_MEM_BW_MAX, &k->mem_bw, 0)) != CORUN_OK ||
        (rc = get_number(c, path, v, "compute", 0, 1, compute, 0)) != CORUN_OK) {
        return rc;
    }
    k->compute = *compute;
    if ((uint64_t)k->block.x * k->block.y * k->block.z > 1024) {
        return bad(c, path, "'block' has %llu threads; a block has at most 1024",
                   (unsigned long long)k->block.x * k->block.y * k->block.z);
    }
    if ((uint64_t)k->grid.x * k->grid.y * k->grid.z > CORUN_MAX_TASKS) {
        return bad(c, path, "'grid' has more than %llu blocks", (unsigned long long)CORUN_MAX_TASKS);
    }
    k->shape.smem_optin = optin != 0;
    return parse_code(c, path, v, k);
}

/* "kernels": one request's kernels in order, 1 to CORUN_SCENARIO_MAX_CHAIN.
 * One without a name is called APP.CODE (a real kernel) or APP.I. */
static int parse_chain(const ctx *c, const char *path, json_t *v, corun__app *app)
{
    char p[128];
    size_t i, n = json_is_array(v) ? json_array_size(v) : 0;
    int rc;

    if (n == 0 || n > CORUN_SCENARIO_MAX_CHAIN) {
        return bad(c, path, "'kernels' must be an array of 1 to %d kernels",
                   CORUN_SCENARIO_MAX_CHAIN);
    }
    for (i = 0; i < n; i++) {
        corun__kspec *k = i == 0 ? &app->kernel : &app->then[i - 1];
        double compute = 0;
        size_t j;
        snprintf(p, sizeof(p), "%s.kernels[%zu]", path, i);
        if ((rc = parse_kernel(c, p, json_array_get(v, i), k, &compute)) != CORUN_OK) {
            return rc;
        }
        if (i == 0) {
            app->compute = compute;
        }
        if (k->name[0] == '\0') {
            if (k->code == CORUN_CODE_BUILTIN) {
                snprintf(k->name, sizeof(k->name), "%.40s.%s", app->name,
                         builtins[k->builtin - 1].name);
            } else {
                snprintf(k->name, sizeof(k->name), "%.40s.%zu", app->name, i);
            }
        }
        for (j = 0; j < i; j++) {
            if (strcmp(corun__app_kernel(app, j)->name, k->name) == 0) {
                return bad(c, p, "a request's kernels need names of their own ('%s' twice)",
                           k->name);
            }
        }
    }
    app->nthen = n - 1;
    return CORUN_OK;
}

static int parse_arrival(const ctx *c, const char *path, json_t *v, corun__arrival *a)
{
    static const char *const keys[] = {"kind", "start_us", "think_us", "mean_us", "min_us",
                                       "max_us", "period_us", "count", "at_us", "dist", NULL};
    char kind[16] = "", dist[16] = "exp";
    double start_us = 0, think_us = 0, x = 0, y = 0;
    int rc;

    if (!json_is_object(v)) {
        return bad(c, path, "must be an object");
    }
    if ((rc = only_keys(c, path, v, keys)) != CORUN_OK ||
        (rc = get_string(c, path, v, "kind", kind, sizeof(kind), 1)) != CORUN_OK ||
        (rc = get_number(c, path, v, "start_us", 0, 1e12, &start_us, 0)) != CORUN_OK ||
        (rc = get_u32(c, path, v, "count", 0, 100000000, &a->count, 0)) != CORUN_OK) {
        return rc;
    }
    a->start_ns = start_us * 1e3;
    if (strcmp(kind, "loop") == 0) {
        a->kind = CORUN_ARRIVAL_LOOP;
        rc = get_number(c, path, v, "think_us", 0, 1e12, &think_us, 0);
        a->think_ns = think_us * 1e3;
    } else if (strcmp(kind, "random") == 0) {
        a->kind = CORUN_ARRIVAL_RANDOM;
        if ((rc = get_string(c, path, v, "dist", dist, sizeof(dist), 0)) != CORUN_OK) {
            return rc;
        }
        if (strcmp(dist, "exp") == 0) {
            rc = get_number(c, path, v, "mean_us", 1e-3, 1e12, &x, 1);
            a->interval = (corun__dist){CORUN_DIST_EXP, x * 1e3, 0};
        } else if (strcmp(dist, "uniform") == 0) {
            if ((rc = get_number(c, path, v, "min_us", 0, 1e12, &x, 1)) == CORUN_OK &&
                (rc = get_number(c, path, v, "max_us", 0, 1e12, &y, 1)) == CORUN_OK && y < x) {
                return bad(c, path, "'max_us' is below 'min_us'");
            }
            a->interval = (corun__dist){CORUN_DIST_UNIFORM, x * 1e3, y * 1e3};
        } else {
            return bad(c, path, "'dist' = '%s' is not one of exp, uniform", dist);
        }
    } else if (strcmp(kind, "periodic") == 0) {
        a->kind = CORUN_ARRIVAL_PERIODIC;
        rc = get_number(c, path, v, "period_us", 1e-3, 1e12, &x, 1);
        a->interval = (corun__dist){CORUN_DIST_CONST, x * 1e3, 0};
    } else if (strcmp(kind, "at") == 0) {
        json_t *at = json_object_get(v, "at_us");
        size_t i;
        a->kind = CORUN_ARRIVAL_AT;
        if (!json_is_array(at) || json_array_size(at) == 0 ||
            json_array_size(at) > CORUN_SCENARIO_MAX_AT) {
            return bad(c, path, "'at_us' must be an array of 1 to %d times", CORUN_SCENARIO_MAX_AT);
        }
        for (i = 0; i < json_array_size(at); i++) {
            json_t *e = json_array_get(at, i);
            if (!json_is_number(e) || json_number_value(e) < 0) {
                return bad(c, path, "'at_us'[%zu] must be a non-negative number", i);
            }
            a->at_ns[i] = json_number_value(e) * 1e3;
            if (i > 0 && a->at_ns[i] < a->at_ns[i - 1]) {
                return bad(c, path, "'at_us' must be in increasing order");
            }
        }
        a->nat = json_array_size(at);
    } else {
        return bad(c, path, "'kind' = '%s' is not one of loop, random, periodic, at", kind);
    }
    return rc;
}

static int parse_app(const ctx *c, const char *path, json_t *v, const corun_gpu_desc *gpu,
                     corun__app *app)
{
    static const char *const keys[] = {"name", "class", "capsm", "priority", "weight",
                                       "size_hint", "qos", "arrival", "kernel", "kernels", NULL};
    char cls[16] = "batch", p[96];
    double prio = 0;
    int rc;

    if (!json_is_object(v)) {
        return bad(c, path, "must be an object");
    }
    app->attr.weight = 1;
    if ((rc = only_keys(c, path, v, keys)) != CORUN_OK ||
        (rc = get_string(c, path, v, "name", app->name, sizeof(app->name), 1)) != CORUN_OK ||
        (rc = get_string(c, path, v, "class", cls, sizeof(cls), 0)) != CORUN_OK ||
        (rc = get_u32(c, path, v, "capsm", 0, 1u << 20, &app->attr.capsm, 0)) != CORUN_OK ||
        (rc = get_number(c, path, v, "priority", -1000, 1000, &prio, 0)) != CORUN_OK ||
        (rc = get_u32(c, path, v, "weight", 1, 1000000, &app->attr.weight, 0)) != CORUN_OK ||
        (rc = get_number(c, path, v, "size_hint", 0, 1e18, &app->attr.size_hint, 0)) != CORUN_OK ||
        (rc = get_number(c, path, v, "qos", 0, 1, &app->attr.qos, 0)) != CORUN_OK) {
        return rc;
    }
    if (app->name[0] == '\0') {
        /* it names the kernel too when the kernel has no name of its own,
         * and the profile store keeps no record of a nameless kernel */
        return bad(c, path, "'name' is empty");
    }
    app->attr.priority = (int32_t)prio;
    if (strcmp(cls, "ls") == 0) {
        app->attr.cls = CORUN_CLASS_LS;
    } else if (strcmp(cls, "batch") == 0) {
        app->attr.cls = CORUN_CLASS_BATCH;
    } else {
        return bad(c, path, "'class' = '%s' is not one of ls, batch", cls);
    }
    if (app->attr.capsm > gpu->sm_count) {
        return bad(c, path, "'capsm' = %u is more than the GPU's %u SMs", app->attr.capsm,
                   gpu->sm_count);
    }
    if (json_object_get(v, "arrival") == NULL) {
        return bad(c, path, "missing 'arrival'");
    }
    snprintf(p, sizeof(p), "%s.arrival", path);
    if ((rc = parse_arrival(c, p, json_object_get(v, "arrival"), &app->arrival)) != CORUN_OK) {
        return rc;
    }
    if ((json_object_get(v, "kernel") == NULL) == (json_object_get(v, "kernels") == NULL)) {
        return bad(c, path, "needs one of 'kernel' (one kernel a launch) and 'kernels' (a "
                   "request of kernels run one after another)");
    }
    if (json_object_get(v, "kernels") != NULL) {
        return parse_chain(c, path, json_object_get(v, "kernels"), app);
    }
    snprintf(p, sizeof(p), "%s.kernel", path);
    if ((rc = parse_kernel(c, p, json_object_get(v, "kernel"), &app->kernel, &app->compute)) !=
        CORUN_OK) {
        return rc;
    }
    if (app->kernel.name[0] == '\0') {
        snprintf(app->kernel.name, sizeof(app->kernel.name), "%s", app->name);
    }
    return CORUN_OK;
}

static int parse_gpu(const ctx *c, json_t *v, corun_gpu_desc *g)
{
    static const char *const keys[] = {"preset", "sm_count", "max_threads_per_sm",
                                       "max_blocks_per_sm", "regs_per_sm", "smem_per_sm", NULL};
    char preset[16] = "h100", why[256];
    int rc;

    if (!json_is_object(v)) {
        return bad(c, "gpu", "must be an object");
    }
    if ((rc = only_keys(c, "gpu", v, keys)) != CORUN_OK ||
        (rc = get_string(c, "gpu", v, "preset", preset, sizeof(preset), 0)) != CORUN_OK) {
        return rc;
    }
    if (strcmp(preset, "h100") != 0) {
        return bad(c, "gpu", "'preset' = '%s' is unknown (known: h100)", preset);
    }
    if ((rc = get_u32(c, "gpu", v, "sm_count", 1, 4096, &g->sm_count, 0)) != CORUN_OK ||
        (rc = get_u32(c, "gpu", v, "max_threads_per_sm", 32, 65536, &g->max_threads_per_sm, 0)) != CORUN_OK ||
        (rc = get_u32(c, "gpu", v, "max_blocks_per_sm", 1, 1024, &g->max_blocks_per_sm, 0)) != CORUN_OK ||
        (rc = get_u32(c, "gpu", v, "regs_per_sm", 1024, 1u << 24, &g->regs_per_sm, 0)) != CORUN_OK ||
        (rc = get_u32(c, "gpu", v, "smem_per_sm", 1024, 1u << 26, &g->smem_per_sm, 0)) != CORUN_OK) {
        return rc;
    }
    if (corun_gpu_desc_check(g, why, sizeof(why)) != CORUN_OK) {
        return bad(c, "gpu", "%s", why);
    }
    return CORUN_OK;
}

int corun__scenario_parse(const char *text, const char *origin, corun__scenario *out, char *why,
                          size_t why_len)
{
    static const char *const keys[] = {"name", "description", "gpu", "duration_ms", "seed",
                                       "reserve_capsm", "apps", NULL};
    ctx c = {origin, why, why_len};
    corun__scenario *sc = out;
    json_error_t err;
    json_t *root, *apps;
    double seed = 0;
    size_t i, j;
    int rc = CORUN_OK;
    char key[32];

    memset(sc, 0, sizeof(*sc));
    corun_gpu_desc_h100(&sc->gpu);
    root = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL) {
        if (why != NULL && why_len > 0) {
            snprintf(why, why_len, "%s:%d:%d: %s", origin, err.line, err.column, err.text);
        }
        return CORUN_EPARSE;
    }
    if (!json_is_object(root)) {
        rc = bad(&c, "(top)", "must be an object");
        goto out_free_root;
    }
    if ((rc = only_keys(&c, "(top)", root, keys)) != CORUN_OK ||
        (rc = get_string(&c, "(top)", root, "name", sc->name, sizeof(sc->name), 1)) != CORUN_OK ||
        (rc = get_string(&c, "(top)", root, "description", sc->description,
                         sizeof(sc->description), 0)) != CORUN_OK ||
        (rc = get_number(&c, "(top)", root, "duration_ms", 1e-3, 1e7, &sc->duration_ns, 1)) != CORUN_OK) {
        goto out_free_root;
    }
    sc->duration_ns *= 1e6;
    if (json_object_get(root, "seed") != NULL) {
        if ((rc = get_number(&c, "(top)", root, "seed", 0, 4294967295.0, &seed, 0)) != CORUN_OK) {
            goto out_free_root;
        }
        sc->seed = (uint64_t)seed;
        sc->has_seed = 1;
    }
    if (json_object_get(root, "gpu") != NULL &&
        (rc = parse_gpu(&c, json_object_get(root, "gpu"), &sc->gpu)) != CORUN_OK) {
        goto out_free_root;
    }
    if (json_object_get(root, "reserve_capsm") != NULL) {
        if ((rc = get_u32(&c, "(top)", root, "reserve_capsm", 0, sc->gpu.sm_count,
                          &sc->reserve_capsm, 0)) != CORUN_OK) {
            goto out_free_root;
        }
        sc->has_reserve = 1;
    }
    apps = json_object_get(root, "apps");
    if (!json_is_array(apps) || json_array_size(apps) == 0 ||
        json_array_size(apps) > CORUN_SCENARIO_MAX_APPS) {
        rc = bad(&c, "apps", "must be an array of 1 to %d applications", CORUN_SCENARIO_MAX_APPS);
        goto out_free_root;
    }
    for (i = 0; i < json_array_size(apps); i++) {
        snprintf(key, sizeof(key), "apps[%zu]", i);
        rc = parse_app(&c, key, json_array_get(apps, i), &sc->gpu, &sc->apps[i]);
        if (rc != CORUN_OK) {
            goto out_free_root;
        }
        for (j = 0; j < i; j++) {
            if (strcmp(sc->apps[j].name, sc->apps[i].name) == 0) {
                rc = bad(&c, key, "name '%s' is used twice", sc->apps[i].name);
                goto out_free_root;
            }
        }
    }
    sc->napps = json_array_size(apps);

out_free_root:
    json_decref(root);
    return rc;
}

int corun__scenario_load(const char *path, corun__scenario *out, char *why, size_t why_len)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc;

    if (f == NULL) {
        if (why != NULL && why_len > 0) {
            snprintf(why, why_len, "%s: %s", path, strerror(errno));
        }
        return CORUN_EIO;
    }
    for (;;) {
        size_t got;
        if (len + 4096 + 1 > cap) {
            char *t;
            cap = cap ? cap * 2 : 16384;
            if (cap > (64u << 20)) {
                rc = CORUN_EPARSE;
                if (why != NULL && why_len > 0) {
                    snprintf(why, why_len, "%s: larger than 64 MiB", path);
                }
                goto out_close;
            }
            t = realloc(text, cap);
            if (t == NULL) {
                rc = CORUN_ENOMEM;
                goto out_close;
            }
            text = t;
        }
        got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096) {
            break;
        }
    }
    if (ferror(f)) {
        rc = CORUN_EIO;
        if (why != NULL && why_len > 0) {
            snprintf(why, why_len, "%s: read error", path);
        }
        goto out_close;
    }
    text[len] = '\0';
    if (strlen(text) != len) {
        /* the parser would stop there and take what follows for the end */
        rc = CORUN_EPARSE;
        if (why != NULL && why_len > 0) {
            snprintf(why, why_len, "%s: a NUL byte at offset %zu: not a text file", path,
                     strlen(text));
        }
        goto out_close;
    }
    rc = corun__scenario_parse(text, path, out, why, why_len);
out_close:
    free(text);
    fclose(f);
    return rc;
}
