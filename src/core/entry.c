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

bool corun__entry_choose(corun__entry_memo *m, uint32_t budget_ns)
{
    const uint64_t t = m->task_ns, l = m->left_ns;

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

bool corun__entry_decide(corun__entry_memo *m, unsigned setting, bool has_ahead, uint64_t tasks,
                         uint32_t budget_ns)
{
    if (setting == 0 || !has_ahead || tasks > CORUN_AHEAD_MAX_TASKS) {
        return false;
    }
    return setting == 2 || corun__entry_choose(m, budget_ns);
}
