/* heap.c — binary min-heap on (time, seq). */
#include <stdlib.h>

#include "common/heap.h"

#include "common/grow.h"
#include "corun/corun.h"

void corun__heap_init(corun__heap *h)
{
    h->v = NULL;
    h->n = 0;
    h->cap = 0;
    h->next_seq = 0;
}

void corun__heap_free(corun__heap *h)
{
    free(h->v);
    corun__heap_init(h);
}

static int before(const corun__hevent *a, const corun__hevent *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

int corun__heap_push(corun__heap *h, const corun__hevent *ev)
{
    size_t i;

    if (corun__grow((void **)&h->v, &h->cap, h->n, sizeof(*h->v), 64) != 0) {
        return CORUN_ENOMEM;
    }
    i = h->n++;
    h->v[i] = *ev;
    h->v[i].seq = h->next_seq++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        corun__hevent tmp;
        if (!before(&h->v[i], &h->v[parent])) {
            break;
        }
        tmp = h->v[i];
        h->v[i] = h->v[parent];
        h->v[parent] = tmp;
        i = parent;
    }
    return CORUN_OK;
}

int corun__heap_pop(corun__heap *h, corun__hevent *out)
{
    size_t i = 0;

    if (h->n == 0) {
        return -1;
    }
    *out = h->v[0];
    h->v[0] = h->v[--h->n];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        corun__hevent tmp;
        if (l < h->n && before(&h->v[l], &h->v[m])) {
            m = l;
        }
        if (r < h->n && before(&h->v[r], &h->v[m])) {
            m = r;
        }
        if (m == i) {
            break;
        }
        tmp = h->v[i];
        h->v[i] = h->v[m];
        h->v[m] = tmp;
        i = m;
    }
    return 0;
}

const corun__hevent *corun__heap_peek(const corun__heap *h)
{
    return h->n ? &h->v[0] : NULL;
}
