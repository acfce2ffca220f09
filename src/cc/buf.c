/* buf.c — growable, NUL-terminated text for building the output. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"

void corun__cc_buf_free(corun__cc_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* Makes room for n more bytes and the terminator; 0 on failure. */
static int reserve(corun__cc_buf *b, size_t n)
{
    if (b->oom) {
        return 0;
    }
    if (b->len + n + 1 <= b->cap) {
        return 1;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) {
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void corun__cc_buf_add(corun__cc_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n)) {
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void corun__cc_buf_adds(corun__cc_buf *b, const char *s)
{
    corun__cc_buf_add(b, s, strlen(s));
}

void corun__cc_buf_printf(corun__cc_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];

    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        corun__cc_buf_add(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *corun__cc_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}
