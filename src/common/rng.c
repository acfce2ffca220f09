/* rng.c — xoshiro256** by Blackman and Vigna (public domain algorithm). */
#include <math.h>

#include "common/rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void corun__rng_seed(corun__rng *r, uint64_t seed)
{
    uint64_t x = seed;
    int i;

    for (i = 0; i < 4; i++) {
        r->s[i] = splitmix64(&x);
    }
}

uint64_t corun__rng_u64(corun__rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double corun__rng_unit(corun__rng *r)
{
    return (double)(corun__rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

double corun__rng_uniform(corun__rng *r, double lo, double hi)
{
    return lo + (hi - lo) * corun__rng_unit(r);
}

double corun__rng_exp(corun__rng *r, double mean)
{
    return -mean * log(1.0 - corun__rng_unit(r));
}

double corun__rng_normal(corun__rng *r, double mean, double sd)
{
    const double two_pi = 6.283185307179586;
    double u1 = 1.0 - corun__rng_unit(r);
    double u2 = corun__rng_unit(r);

    return mean + sd * sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}
