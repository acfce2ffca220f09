/*
 * preempt_cost.h — what preempting a kernel costs, per kernel name: FLEP's
 * O_i (§4.2, §5.2). FLEP profiles it offline (50 runs, averaged); corun
 * measures it online on every temporal preemption, as the time from the
 * stop signal to the host knowing that the kernel's last worker has left
 * (signal delay, the chunk in progress, the completion notice), and keeps an
 * exponentially weighted mean. The same code measures the simulator's
 * modelled delays and a real GPU's.
 *
 * Why not the relaunch too: corun resumes a kernel by launching workers that
 * continue from its task counter, and the next kernel is launched at the
 * moment of the stop, so its launch overlaps the draining; FLEP relaunches
 * the preempted kernel with a task range and pays both in sequence.
 */
#ifndef CORUN_CORE_PREEMPT_COST_H
#define CORUN_CORE_PREEMPT_COST_H

#include <stddef.h>
#include <stdint.h>

typedef struct corun__pcost {
    char name[64];
    double ns;          /* EWMA of measured overheads */
    uint32_t samples;
} corun__pcost;

typedef struct corun__pcost_table {
    corun__pcost *v;
    size_t n, cap;
    double default_ns;  /* until a kernel has been measured (PREEMPT_OVERHEAD_US) */
} corun__pcost_table;

void corun__pcost_init(corun__pcost_table *t, double default_ns);
void corun__pcost_free(corun__pcost_table *t);
/* The estimate for a kernel: its EWMA, or the default. */
double corun__pcost_get(const corun__pcost_table *t, const char *name);
/* One measurement (weight 1/4 on it; the first is taken as is). Out of
 * memory the measurement is dropped: estimates stay at the default. */
void corun__pcost_add(corun__pcost_table *t, const char *name, double sample_ns);

#endif
