/*
 * heap.h — a binary min-heap of timed events, ordered by (time, seq) so
 * events at equal times come out in insertion order: runs are deterministic.
 */
#ifndef CORUN_COMMON_HEAP_H
#define CORUN_COMMON_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct corun__hevent {
    uint64_t time;
    uint64_t seq;
    uint32_t kind;
    uint32_t a;      /* payload, meaning chosen by the user */
    uint64_t b;
    void *p;
} corun__hevent;

typedef struct corun__heap {
    corun__hevent *v;
    size_t n, cap;
    uint64_t next_seq;
} corun__heap;

void corun__heap_init(corun__heap *h);
void corun__heap_free(corun__heap *h);
/* Returns 0, or CORUN_ENOMEM (nothing inserted). ev->seq is assigned. */
int corun__heap_push(corun__heap *h, const corun__hevent *ev);
/* Removes the earliest event into *out; returns 0, or -1 when empty. */
int corun__heap_pop(corun__heap *h, corun__hevent *out);
/* The earliest event, or NULL when empty. */
const corun__hevent *corun__heap_peek(const corun__heap *h);

#endif
