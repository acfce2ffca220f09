/* intensity.c — Slate's kernel classes and Table I (intensity.h). */
#include "core/intensity.h"

corun__level corun__level_of(double frac, double med, double high)
{
    if (frac >= high) {
        return CORUN_LEVEL_HIGH;
    }
    return frac >= med ? CORUN_LEVEL_MED : CORUN_LEVEL_LOW;
}

corun__kclass corun__kclass_of(double flop_frac, double bw_frac, const corun__settings *set)
{
    corun__level mem = corun__level_of(bw_frac, set->slate_mem_med, set->slate_mem_high);
    corun__level comp = corun__level_of(flop_frac, set->slate_compute_med, set->slate_compute_high);

    if (mem == CORUN_LEVEL_HIGH) {
        return CORUN_KCLASS_HM;
    }
    if (mem == CORUN_LEVEL_MED) {
        return CORUN_KCLASS_MM;
    }
    return comp == CORUN_LEVEL_HIGH ? CORUN_KCLASS_HC
           : comp == CORUN_LEVEL_MED ? CORUN_KCLASS_MC
                                     : CORUN_KCLASS_LC;
}

const char *corun__kclass_name(corun__kclass c)
{
    static const char *const names[] = {"L_C", "M_C", "H_C", "M_M", "H_M", "unknown"};

    return (unsigned)c <= CORUN_KCLASS_UNKNOWN ? names[c] : "unknown";
}

bool corun__slate_complementary(corun__kclass running, corun__kclass candidate)
{
    /* Slate, Table I: 1 = corun, 0 = solo. Rows: the running kernel;
     * columns: the candidate; order L_C, M_C, H_C, M_M, H_M. */
    static const unsigned char table[5][5] = {
        /* L_C */ {1, 1, 0, 1, 1},
        /* M_C */ {1, 1, 0, 0, 1},
        /* H_C */ {0, 0, 0, 0, 1},
        /* M_M */ {1, 0, 1, 0, 0},
        /* H_M */ {1, 1, 0, 0, 0},
    };

    if ((unsigned)running >= CORUN_KCLASS_UNKNOWN || (unsigned)candidate >= CORUN_KCLASS_UNKNOWN) {
        return false;
    }
    return table[running][candidate] != 0;
}
