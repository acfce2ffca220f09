/*
 * edits.c — the rewrite as a list of byte-range replacements of the
 * original text. Everything not covered by an edit is copied unchanged, so
 * comments, formatting and line structure survive.
 */
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"
#include "corun/corun.h"

int corun__cc_edit_add(corun__cc_edits *e, unsigned off, unsigned len, const char *text)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        corun__cc_edit *v = realloc(e->v, cap * sizeof(*v));
        if (v == NULL) {
            return CORUN_ENOMEM;
        }
        e->v = v;
        e->cap = cap;
    }
    char *t = corun__cc_strndup(text, strlen(text));
    if (t == NULL) {
        return CORUN_ENOMEM;
    }
    e->v[e->n].off = off;
    e->v[e->n].len = len;
    e->v[e->n].text = t;
    e->v[e->n].seq = e->n;
    e->n++;
    return CORUN_OK;
}

static int cmp(const void *pa, const void *pb)
{
    const corun__cc_edit *a = pa, *b = pb;
    if (a->off != b->off) {
        return a->off < b->off ? -1 : 1;
    }
    /* at one offset: insertions first, then the replacement */
    if ((a->len == 0) != (b->len == 0)) {
        return a->len == 0 ? -1 : 1;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int same(const corun__cc_edit *a, const corun__cc_edit *b)
{
    return a->off == b->off && a->len == b->len && strcmp(a->text, b->text) == 0;
}

int corun__cc_edits_apply(corun__cc_edits *e, const corun__cc_src *s, const char *prologue,
                          corun__cc_buf *out, corun__cc_diags *d)
{
    qsort(e->v, e->n, sizeof(e->v[0]), cmp);
    /* drop repeats: one macro body edited once per expansion, or the same
     * edit found on both sides of the parse */
    size_t w = 0;
    for (size_t i = 0; i < e->n; i++) {
        int dup = 0;
        for (size_t j = w; j-- > 0 && e->v[j].off == e->v[i].off;) {
            if (same(&e->v[j], &e->v[i])) {
                dup = 1;
                break;
            }
        }
        if (dup) {
            free(e->v[i].text);
        } else {
            e->v[w++] = e->v[i];
        }
    }
    e->n = w;

    corun__cc_buf_adds(out, prologue);
    unsigned cur = 0;
    for (size_t i = 0; i < e->n; i++) {
        const corun__cc_edit *x = &e->v[i];
        if (x->off < cur || x->off + x->len > s->len) {
            corun__cc_diag_add(d, CORUN_CC_ERROR, s->path, corun__cc_src_line(s, x->off),
                               corun__cc_src_col(s, x->off), "conflicting rewrites",
                               "two rewrites of the same text disagree (a macro that expands "
                               "to launches of different forms?)");
            return CORUN_EINVAL;
        }
        corun__cc_buf_add(out, s->text + cur, x->off - cur);
        corun__cc_buf_adds(out, x->text);
        cur = x->off + x->len;
    }
    corun__cc_buf_add(out, s->text + cur, s->len - cur);
    return out->oom ? CORUN_ENOMEM : CORUN_OK;
}

void corun__cc_edits_free(corun__cc_edits *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].text);
    }
    free(e->v);
    memset(e, 0, sizeof(*e));
}
