/*
 * rng.h — a small, seedable, reproducible PRNG (xoshiro256**, seeded by
 * splitmix64) and the distributions corun's simulator and scenarios draw
 * from. The same seed gives the same sequence on every platform.
 */
#ifndef CORUN_COMMON_RNG_H
#define CORUN_COMMON_RNG_H

#include <stdint.h>

typedef struct corun__rng {
    uint64_t s[4];
} corun__rng;

void corun__rng_seed(corun__rng *r, uint64_t seed);
uint64_t corun__rng_u64(corun__rng *r);
/* Uniform in [0, 1). */
double corun__rng_unit(corun__rng *r);
/* Uniform in [lo, hi). */
double corun__rng_uniform(corun__rng *r, double lo, double hi);
/* Exponential with the given mean. */
double corun__rng_exp(corun__rng *r, double mean);
/* Normal (Box-Muller). */
double corun__rng_normal(corun__rng *r, double mean, double sd);

#endif
