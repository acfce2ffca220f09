/*
 * entry.h — which entry a launch of a CORUN_SHARED kernel runs: the chunk
 * loop (NAME__corun) or the ahead entry (NAME__corun_ahead, one task per
 * claim, each claim issued while the task before it runs; corun_device.cuh).
 * Host only. Every launcher keeps one corun__entry_memo per kernel (and per
 * chunk budget) and asks corun__entry_decide: libcorun's launches, the
 * scenarios' and gpu-check's direct ones.
 */
#ifndef CORUN_CORE_ENTRY_H
#define CORUN_CORE_ENTRY_H

#include <stdbool.h>
#include <stdint.h>

/* Whether the next launch runs the ahead entry, from the task time the last
 * launch measured (task_ns, 0 = none) and whether that launch ran it. Three
 * tasks must fit in the budget, give or take an eighth: the time a chunked
 * launch measures includes its claims' share, which the ahead entry does not
 * pay, and a bound that tight made a kernel near the line enter on some
 * launches and not others. A halt there waits for two tasks at most (the
 * void, corun_ctl.h), so within 3/4 of the budget. It is entered where a
 * chunk would hold at most three tasks, as there one claim's round trip is
 * paid every three tasks or fewer; with four or more a chunk pays it rarely
 * enough, and a claim per task costs short-task kernels more than it saves.
 * It is left once tasks are shorter than a fifth of the budget, so a task
 * time near the edge does not switch entries at every launch. */
bool corun__entry_wanted(uint32_t task_ns, uint32_t budget_ns, bool was_ahead);

/* What a kernel's finished launches say about its entry. corun__entry_wanted
 * alone switched entries at every launch where a kernel's chunked task time
 * (its claims' share included) says "enter" and its ahead task time says
 * "leave" (docs/decisions). The two times measure different things, so they
 * are not compared with each other: once a kernel has left the ahead entry,
 * its next CORUN_ENTRY_BAR launches do not enter it again on a chunked time
 * within a quarter of the one it was entered on; outside that band its tasks
 * have changed and the rule alone decides. The bar runs out so that one slow
 * ahead launch (a co-runner taking memory bandwidth) does not keep a kernel
 * out for good. */
#define CORUN_ENTRY_BAR 16u
typedef struct corun__entry_memo {
    uint32_t task_ns;    /* task time the last finished launch measured (0 = none) */
    uint32_t entered_ns; /* the chunked task time the ahead entry was last entered on */
    uint32_t left_ns;    /* entered_ns of the ahead run last left */
    uint32_t barred;     /* launches still kept out within a quarter of left_ns */
    uint32_t ran_ahead;  /* the last finished launch ran the ahead entry */
    double per_task[2];  /* measured run per task (ns), chunk loop [0] and ahead
                            entry [1], weighted means; 0 = not measured */
    uint32_t probe;      /* launches since the slower entry last ran */
} corun__entry_memo;

/* Once both entries have a measured run per task (corun__entry_measured),
 * the choice among kernels the rule lets in is by that measure: the rule
 * says where the ahead entry may pay (where a chunk holds three tasks or
 * fewer), the run says whether it does. On the H100 it did not for some
 * memory-bound tiled kernels that the rule sent there (gpu/apps' hotspot:
 * a claim per task cost more than the chunk loop's claims). The faster one
 * runs; the other must be faster by CORUN_ENTRY_MARGIN to take over, and
 * runs once every CORUN_ENTRY_PROBE launches so its measure stays current. */
#define CORUN_ENTRY_PROBE 32u
#define CORUN_ENTRY_MARGIN 0.02

/* Whether the next launch runs the ahead entry by the memo (the caller
 * checked that it has one that may run). */
bool corun__entry_choose(corun__entry_memo *m, uint32_t budget_ns);
/* A launch finished having measured task_ns (0: nothing, ignored). */
void corun__entry_learn(corun__entry_memo *m, uint32_t task_ns, bool ran_ahead,
                        uint32_t budget_ns);
/* A launch of `tasks` tasks that ran every task in its first grid took
 * run_ns on the device (0: not known, ignored). */
void corun__entry_measured(corun__entry_memo *m, bool ran_ahead, uint32_t run_ns, uint64_t tasks);

/* How long a launch of `tasks` tasks will run, from the kernel's last launch
 * of last_tasks, made with last_workers workers: its run on the device
 * (run_ns: its first worker's start to its last worker's end, 0 = not known)
 * scaled by the waves of workers, else the waves times its reported task
 * time (task_ns). The run is preferred: the reported task time is the mean
 * of the worker that left last, the slowest, which may span several tasks.
 * 0 = nothing known. */
double corun__entry_predict_ns(uint32_t run_ns, uint32_t task_ns, uint64_t last_tasks,
                               uint32_t last_workers, uint64_t tasks);

/* The whole decision for one launch: setting is CORUN_AHEAD (0 never, 1 by
 * the memo, 2 always); has_ahead: the kernel has an ahead entry; tasks: the
 * launch's (the ahead entry takes at most CORUN_AHEAD_MAX_TASKS). */
bool corun__entry_decide(corun__entry_memo *m, unsigned setting, bool has_ahead, uint64_t tasks,
                         uint32_t budget_ns);

#endif
