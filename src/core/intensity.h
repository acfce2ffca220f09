/*
 * intensity.h — Slate's kernel classes (§III-B) and its pairing table
 * (Table I).
 *
 * A kernel's compute and memory intensity are each Low, Medium or High,
 * from the rates it achieves alone on the whole GPU relative to the device's
 * peaks: FLOP/s over peak FLOP/s, DRAM bytes/s over peak bytes/s (settings
 * SLATE_COMPUTE_MED/HIGH, SLATE_MEM_MED/HIGH; the defaults place Slate's
 * Table II benchmarks in the classes the paper gives them). Memory intensity
 * comes first: a Medium or High memory kernel is M_M or H_M whatever its
 * compute; a Low memory kernel is L_C, M_C or H_C by its compute.
 */
#ifndef CORUN_CORE_INTENSITY_H
#define CORUN_CORE_INTENSITY_H

#include <stdbool.h>

#include "core/settings.h"

typedef enum corun__level { CORUN_LEVEL_LOW, CORUN_LEVEL_MED, CORUN_LEVEL_HIGH } corun__level;

typedef enum corun__kclass {
    CORUN_KCLASS_LC,  /* low memory, low compute */
    CORUN_KCLASS_MC,  /* low memory, medium compute */
    CORUN_KCLASS_HC,  /* low memory, high compute */
    CORUN_KCLASS_MM,  /* medium memory */
    CORUN_KCLASS_HM,  /* high memory */
    CORUN_KCLASS_UNKNOWN /* never profiled */
} corun__kclass;

/* LOW below med, HIGH from high on, else MED. */
corun__level corun__level_of(double frac, double med, double high);
corun__kclass corun__kclass_of(double flop_frac, double bw_frac, const corun__settings *set);
/* "L_C", "M_C", "H_C", "M_M", "H_M", "unknown". */
const char *corun__kclass_name(corun__kclass c);

/* Table I: may `candidate` co-run with `running`, the kernel already on the
 * GPU? The row is the running kernel, the column the candidate, as Slate
 * examines "if the next kernel J_k+1 is complementary to J_k". The published
 * table is not symmetric in two cells (H_C with M_M, H_C with H_M); reading
 * it by rows keeps both as printed. An unknown kernel co-runs with nothing. */
bool corun__slate_complementary(corun__kclass running, corun__kclass candidate);

#endif
