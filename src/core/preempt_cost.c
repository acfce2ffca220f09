/* preempt_cost.c — measured preemption overheads per kernel (preempt_cost.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/preempt_cost.h"

void corun__pcost_init(corun__pcost_table *t, double default_ns)
{
    memset(t, 0, sizeof(*t));
    t->default_ns = default_ns;
}

void corun__pcost_free(corun__pcost_table *t)
{
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

static corun__pcost *find(const corun__pcost_table *t, const char *name)
{
    size_t i;

    for (i = 0; i < t->n; i++) {
        if (strcmp(t->v[i].name, name) == 0) {
            return &t->v[i];
        }
    }
    return NULL;
}

double corun__pcost_get(const corun__pcost_table *t, const char *name)
{
    const corun__pcost *c = find(t, name);

    return c != NULL ? c->ns : t->default_ns;
}

void corun__pcost_add(corun__pcost_table *t, const char *name, double sample_ns)
{
    corun__pcost *c = find(t, name);

    if (!(sample_ns >= 0)) {
        return;
    }
    if (c == NULL) {
        if (t->n == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 16;
            corun__pcost *v = realloc(t->v, cap * sizeof(*v));
            if (v == NULL) {
                return;
            }
            t->v = v;
            t->cap = cap;
        }
        c = &t->v[t->n++];
        memset(c, 0, sizeof(*c));
        snprintf(c->name, sizeof(c->name), "%s", name);
        c->ns = sample_ns;
        c->samples = 1;
        return;
    }
    c->ns = 0.75 * c->ns + 0.25 * sample_ns;
    if (c->samples < UINT32_MAX) {
        c->samples++;
    }
}
