/*
 * grow.h — room for one more element in a growing array.
 */
#ifndef CORUN_COMMON_GROW_H
#define CORUN_COMMON_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* When *v (n elements of elem bytes used, *cap allocated) is full, doubles
 * its capacity, from first. Returns 0, or -1 out of memory (*v and *cap
 * unchanged). */
static inline int corun__grow(void **v, size_t *cap, size_t n, size_t elem, size_t first)
{
    size_t c;
    void *p;

    if (n < *cap) {
        return 0;
    }
    c = *cap ? *cap * 2 : first;
    p = realloc(*v, c * elem);
    if (p == NULL) {
        return -1;
    }
    *v = p;
    *cap = c;
    return 0;
}

#endif
