/* support.c — helpers shared by the unit tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#include "backends/create.h"
#include "backends/sim/sim.h"
#include "core/sched.h"
#include "scenario/experiments.h"
#include "scenario/scenario.h"

void corun_test_mkdtemp(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "/tmp/corun-test-%s-XXXXXX", tag);
    assert_non_null(mkdtemp(dir));
}

void corun_test_rmdir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

const char *corun_test_path(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "%s/%s", CORUN_SOURCE_DIR, rel);
    return buf;
}

int corun_test_make_sim(void *ctx, const corun__scenario *sc, uint64_t seed, corun__backend **out,
                        char *why, size_t why_len)
{
    return corun__backend_create("sim", ctx, &sc->gpu, seed, out, why, why_len);
}

void corun_test_fixed_model(corun__settings *set)
{
    set->sim_block_speedup = CORUN_TEST_BLOCK_SPEEDUP;
    set->sim_launch_us = CORUN_TEST_LAUNCH_US;
    set->sim_notify_us = CORUN_TEST_NOTIFY_US;
    set->sim_launch_jitter_us = 0;
    set->sim_idle_launch_us = 0;
}

void corun_test_fixed_sim_opts(corun__sim_opts *o)
{
    corun__settings set;

    corun__settings_default(&set);
    corun_test_fixed_model(&set);
    corun__sim_opts_from(o, &set);
}

void corun_test_fixed_model_env(void)
{
    char v[32];

    snprintf(v, sizeof(v), "%g", (double)CORUN_TEST_BLOCK_SPEEDUP);
    setenv("CORUN_SIM_BLOCK_SPEEDUP", v, 1);
    snprintf(v, sizeof(v), "%g", (double)CORUN_TEST_LAUNCH_US);
    setenv("CORUN_SIM_LAUNCH_US", v, 1);
    snprintf(v, sizeof(v), "%g", (double)CORUN_TEST_NOTIFY_US);
    setenv("CORUN_SIM_NOTIFY_US", v, 1);
    setenv("CORUN_SIM_LAUNCH_JITTER_US", "0", 1);
    setenv("CORUN_SIM_IDLE_LAUNCH_US", "0", 1);
}

void corun_test_exp_opts(corun__exp_opts *o, corun__settings *set)
{
    memset(o, 0, sizeof(*o));
    o->env.make_backend = corun_test_make_sim;
    o->env.make_ctx = set;
    o->env.settings = *set;
    o->backend = "sim";
    o->dir = corun_test_path("bench/scenarios");
}

uint64_t corun_test_done_of(corun__sched *s, corun__job *k)
{
    corun_progress p;

    if (k->state == CORUN_JS_DONE) {
        return k->tasks;
    }
    assert_int_equal(corun__sched_progress(s, k, &p), CORUN_OK);
    return p.done;
}

void corun_test_step_to(corun__sched *s, uint64_t t)
{
    while (corun__sched_now(s) < t) {
        assert_int_equal(corun__sched_step(s, t), CORUN_OK);
    }
}

void corun_test_prefix_once(corun__backend *be, corun__exec *k, uint64_t tasks, uint64_t ran,
                            const char *name)
{
    const uint32_t *hits = corun__sim_task_hits(be, k);
    uint64_t i;

    assert_non_null(hits);
    for (i = 0; i < tasks; i++) {
        if (hits[i] != (i < ran ? 1u : 0u)) {
            fail_msg("%s: task %llu ran %u times (expected %u)", name, (unsigned long long)i,
                     hits[i], i < ran ? 1u : 0u);
        }
    }
}
