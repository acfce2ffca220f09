/*
 * entry.c — the choice of entry per launch. See entry.h.
 */
#include "core/entry.h"
#include "corun/corun_chunk.h"

bool corun__entry_wanted(uint32_t task_ns, uint32_t budget_ns, bool was_ahead)
{
    const uint64_t t = task_ns, b = budget_ns;

    return t != 0 && 24 * t <= 9 * b && (was_ahead ? 5 * t > b : 4 * t > b);
}

/* Both entries measured: the faster, the other now and then. */
static bool by_measure(corun__entry_memo *m)
{
    const int cur = m->ran_ahead != 0;
    const bool other_faster = m->per_task[!cur] < (1.0 - CORUN_ENTRY_MARGIN) * m->per_task[cur];
    const int best = other_faster ? !cur : cur;

    if (++m->probe >= CORUN_ENTRY_PROBE) {
        m->probe = 0;
        return !best;
    }
    return best;
}

bool corun__entry_choose(corun__entry_memo *m, uint32_t budget_ns)
{
    const uint64_t t = m->task_ns, l = m->left_ns;

    if (m->per_task[0] > 0 && m->per_task[1] > 0 &&
        corun__entry_wanted(m->task_ns, budget_ns, true)) {
        return by_measure(m);
    }

    if (!corun__entry_wanted(m->task_ns, budget_ns, m->ran_ahead != 0)) {
        return false;
    }
    if (!m->ran_ahead) {
        if (m->barred > 0 && 5 * t >= 4 * l && 4 * t <= 5 * l) {
            m->barred--;
            return false;
        }
        m->entered_ns = m->task_ns;
        m->barred = 0;
    }
    return true;
}

void corun__entry_learn(corun__entry_memo *m, uint32_t task_ns, bool ran_ahead,
                        uint32_t budget_ns)
{
    if (task_ns == 0) {
        return;
    }
    if (ran_ahead && !corun__entry_wanted(task_ns, budget_ns, true) && m->entered_ns != 0) {
        m->left_ns = m->entered_ns;
        m->barred = CORUN_ENTRY_BAR;
    }
    m->task_ns = task_ns;
    m->ran_ahead = ran_ahead;
}

void corun__entry_measured(corun__entry_memo *m, bool ran_ahead, uint32_t run_ns, uint64_t tasks)
{
    double *p = &m->per_task[ran_ahead ? 1 : 0];
    double x;

    if (run_ns == 0 || tasks == 0) {
        return;
    }
    x = (double)run_ns / (double)tasks;
    *p = *p > 0 ? 0.75 * *p + 0.25 * x : x;
}

bool corun__entry_decide(corun__entry_memo *m, unsigned setting, bool has_ahead, uint64_t tasks,
                         uint32_t budget_ns)
{
    if (setting == 0 || !has_ahead || tasks > CORUN_AHEAD_MAX_TASKS) {
        return false;
    }
    return setting == 2 || corun__entry_choose(m, budget_ns);
}

double corun__entry_predict_ns(uint32_t run_ns, uint32_t task_ns, uint64_t last_tasks,
                               uint32_t last_workers, uint64_t tasks)
{
    uint64_t waves, was;

    if (last_workers == 0) {
        return 0;
    }
    waves = (tasks + last_workers - 1) / last_workers;
    if (run_ns != 0 && last_tasks != 0) {
        was = (last_tasks + last_workers - 1) / last_workers;
        return (double)run_ns * (double)waves / (double)was;
    }
    return (double)waves * task_ns;
}
