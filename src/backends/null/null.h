/*
 * null.h — a backend with no GPU at all: it records what the scheduler asks
 * for, and launches finish only when a test says so. For unit tests of the
 * scheduler and policies, and for measuring the scheduler's own cost.
 */
#ifndef CORUN_BACKENDS_NULL_H
#define CORUN_BACKENDS_NULL_H

#include "core/backend.h"

typedef struct corun__null_call {
    enum { CORUN_NULL_WORKERS, CORUN_NULL_PLAIN, CORUN_NULL_SIGNAL, CORUN_NULL_REWIND } what;
    const corun__exec *k;
    corun__launch_req req;     /* WORKERS; PLAIN uses cookie and priority */
    corun__signal sig;         /* SIGNAL */
    uint64_t value;            /* SIGNAL value, REWIND next */
    uint64_t limit;            /* REWIND limit */
} corun__null_call;

int corun__null_create(const corun_gpu_desc *desc, corun__backend **out);
/* Calls recorded since the last clear (the log keeps the last 4096). */
size_t corun__null_calls(corun__backend *be, const corun__null_call **calls);
void corun__null_clear(corun__backend *be);
/* Makes the launch with this cookie finish at the next poll. */
void corun__null_finish(corun__backend *be, uint64_t cookie);
/* Sets what progress() reports for k (done tasks). */
void corun__null_set_done(corun__backend *be, corun__exec *k, uint64_t done);
/* Makes the next launch call (workers or plain) fail with rc. */
void corun__null_fail_next(corun__backend *be, int rc);
/* Advances the clock. */
void corun__null_advance(corun__backend *be, uint64_t ns);

#endif
