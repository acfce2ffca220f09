/* diag.c — the problems corun-cc found, kept until main.c prints them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"

static int same(const corun__cc_diag *a, const char *file, unsigned line, unsigned col,
                const char *text)
{
    if ((a->file == NULL) != (file == NULL)) {
        return 0;
    }
    if (file != NULL && strcmp(a->file, file) != 0) {
        return 0;
    }
    return a->line == line && a->col == col && strcmp(a->text, text) == 0;
}

static void add_text(corun__cc_diags *d, corun__cc_severity sev, const char *file, unsigned line,
                     unsigned col, const char *text)
{
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i].sev == sev && same(&d->v[i], file, line, col, text)) {
            return;
        }
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        corun__cc_diag *v = realloc(d->v, cap * sizeof(*v));
        if (v == NULL) {
            d->oom = 1;
            d->errors++;
            return;
        }
        d->v = v;
        d->cap = cap;
    }
    corun__cc_diag *g = &d->v[d->n];
    g->sev = sev;
    g->line = line;
    g->col = col;
    g->file = file ? corun__cc_strndup(file, strlen(file)) : NULL;
    g->text = corun__cc_strndup(text, strlen(text));
    if ((file && g->file == NULL) || g->text == NULL) {
        free(g->file);
        free(g->text);
        d->oom = 1;
        d->errors++;
        return;
    }
    d->n++;
    if (sev == CORUN_CC_ERROR) {
        d->errors++;
    }
}

CORUN__CC_PRINTF(7, 0)
static void vadd(corun__cc_diags *d, corun__cc_severity sev, const char *file, unsigned line,
                 unsigned col, const char *construct, const char *fmt, va_list ap)
{
    corun__cc_buf b = {0};

    corun__cc_buf_printf(&b, "%s: ", construct);
    char small[1024];
    vsnprintf(small, sizeof(small), fmt, ap);
    corun__cc_buf_adds(&b, small);
    if (d->demote && sev == CORUN_CC_ERROR && !d->strict) {
        /* a header's refusal leaves what it concerns plain, the rest goes on */
        sev = CORUN_CC_WARNING;
        corun__cc_buf_adds(&b, "; in an included file, so left as it is, not through corun");
    }
    if (b.oom) {
        d->oom = 1;
        d->errors++;
    } else {
        add_text(d, sev, file, line, col, b.p);
    }
    corun__cc_buf_free(&b);
}

void corun__cc_diag_add(corun__cc_diags *d, corun__cc_severity sev, const char *file,
                        unsigned line, unsigned col, const char *construct, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vadd(d, sev, file, line, col, construct, fmt, ap);
    va_end(ap);
}

void corun__cc_diag_at(corun__cc_diags *d, corun__cc_severity sev, CXSourceLocation loc,
                       const char *construct, const char *fmt, ...)
{
    CXFile f = NULL;
    unsigned line = 0, col = 0;
    va_list ap;

    clang_getSpellingLocation(loc, &f, &line, &col, NULL);
    CXString name = clang_getFileName(f);
    const char *file = f ? clang_getCString(name) : NULL;
    va_start(ap, fmt);
    vadd(d, sev, file, line, col, construct, fmt, ap);
    va_end(ap);
    clang_disposeString(name);
}

static int cmp(const void *pa, const void *pb)
{
    const corun__cc_diag *a = pa, *b = pb;
    int c;

    if (a->file && b->file && (c = strcmp(a->file, b->file)) != 0) {
        return c;
    }
    if (a->line != b->line) {
        return a->line < b->line ? -1 : 1;
    }
    if (a->col != b->col) {
        return a->col < b->col ? -1 : 1;
    }
    return (int)a->sev - (int)b->sev;
}

void corun__cc_diags_sort(corun__cc_diags *d)
{
    if (d->n > 1) {
        qsort(d->v, d->n, sizeof(d->v[0]), cmp);
    }
}

void corun__cc_diags_free(corun__cc_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].file);
        free(d->v[i].text);
    }
    free(d->v);
    memset(d, 0, sizeof(*d));
}
