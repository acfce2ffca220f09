/* support.h — helpers shared by the unit tests. cmocka's headers need the
 * standard headers first, in this order. */
#ifndef CORUN_TESTS_SUPPORT_H
#define CORUN_TESTS_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Path of a file in the source tree, in a static buffer. */
const char *corun_test_path(const char *rel);

/* A fresh folder /tmp/corun-test-TAG-XXXXXX into dir (n bytes); fails the
 * test if it cannot be made. */
void corun_test_mkdtemp(char *dir, size_t n, const char *tag);
/* Removes a folder made by corun_test_mkdtemp, with everything in it. */
void corun_test_rmdir(const char *dir);

struct corun__scenario;
struct corun__backend;
/* A corun__run_env.make_backend that makes the simulator of the scenario's
 * GPU with the settings ctx points to (a corun__settings). */
int corun_test_make_sim(void *ctx, const struct corun__scenario *sc, uint64_t seed,
                        struct corun__backend **out, char *why, size_t why_len);

/* The simulator's model as these tests' figures were set on it, before it
 * was calibrated on the H200 (docs/decisions/0044): launch and notify
 * delays of 5 and 10 us, no launch noise, no idle GPU's extra, a block
 * alone 1.9x faster. For tests of mechanisms whose bounds count
 * microseconds or rates; the calibrated model has tests of its own
 * (test_sim.c, test_sim_share.c, test_demo.c). */
#define CORUN_TEST_BLOCK_SPEEDUP 1.9
#define CORUN_TEST_LAUNCH_US 5
#define CORUN_TEST_NOTIFY_US 10
struct corun__settings;
struct corun__sim_opts;
void corun_test_fixed_model(struct corun__settings *set);
/* The same as simulator options, and as the CORUN_SIM_* variables the host
 * API reads (for tests that go through corun_ctx_create). */
void corun_test_fixed_sim_opts(struct corun__sim_opts *o);
void corun_test_fixed_model_env(void);

struct corun__exp_opts;
struct corun__settings;
/* Options of `corun experiment` on the simulator over the source tree's
 * bench/scenarios/, with the settings *set (which must outlive the run). */
void corun_test_exp_opts(struct corun__exp_opts *o, struct corun__settings *set);

struct corun__sched;
struct corun__job;
/* Tasks job k has run: all of them once done, else its progress (read). */
uint64_t corun_test_done_of(struct corun__sched *s, struct corun__job *k);
/* Steps the scheduler until its clock reaches t (ns). */
void corun_test_step_to(struct corun__sched *s, uint64_t t);

struct corun__exec;
/* Fails the test unless, on the simulator be, tasks [0, ran) of kernel k
 * (tasks in all; name for the message) ran once each and no other did. */
void corun_test_prefix_once(struct corun__backend *be, struct corun__exec *k, uint64_t tasks,
                            uint64_t ran, const char *name);

#endif
