/* source.c — the file being transformed: its text, lines, raw tokens and
 * the ranges of its macro definitions and invocations. Every edit corun-cc
 * makes is a byte range of this text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cc/cc.h"
#include "corun/corun.h"

int corun__cc_src_read(corun__cc_src *s, const char *path, uint64_t limit, corun__cc_diags *d)
{
    corun__cc_buf b = {0};
    char chunk[65536];
    size_t n;
    struct stat st;

    memset(s, 0, sizeof(*s));
    s->path = path;
    /* stat first: opening a FIFO would wait for a writer */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        corun__cc_diag_add(d, CORUN_CC_ERROR, path, 0, 0, "input",
                           "%s, not a regular file: refused without reading it",
                           corun__cc_file_kind(st.st_mode));
        return CORUN_EIO;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        corun__cc_diag_add(d, CORUN_CC_ERROR, path, 0, 0, "input", "cannot open: %s",
                           strerror(errno));
        return CORUN_EIO;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && (limit == 0 || b.len <= limit)) {
        corun__cc_buf_add(&b, chunk, n);
    }
    int bad = ferror(f);
    fclose(f);
    if (limit > 0 && b.len > limit) {
        corun__cc_buf_free(&b);
        corun__cc_diag_add(d, CORUN_CC_ERROR, path, 0, 0, "input",
                           "more than the read limit of %.1f MiB (--read-limit SIZE)",
                           (double)limit / 1048576.0);
        return CORUN_EIO;
    }
    if (bad || b.oom) {
        corun__cc_buf_free(&b);
        corun__cc_diag_add(d, CORUN_CC_ERROR, path, 0, 0, "input", "cannot read");
        return bad ? CORUN_EIO : CORUN_ENOMEM;
    }
    if (b.p == NULL) {
        corun__cc_buf_add(&b, "", 0);
    }
    if (b.oom) {
        return CORUN_ENOMEM;
    }
    s->text = b.p;
    s->len = b.len;
    size_t lines = 1;
    for (size_t i = 0; i < s->len; i++) {
        lines += s->text[i] == '\n';
    }
    s->line_start = malloc(lines * sizeof(unsigned));
    if (s->line_start == NULL) {
        return CORUN_ENOMEM;
    }
    s->line_start[0] = 0;
    s->nlines = 1;
    for (size_t i = 0; i < s->len; i++) {
        if (s->text[i] == '\n') {
            s->line_start[s->nlines++] = (unsigned)(i + 1);
        }
    }
    return CORUN_OK;
}

void corun__cc_src_free(corun__cc_src *s)
{
    free(s->text);
    free(s->line_start);
    free(s->tok);
    free(s->defines);
    free(s->expansions);
    memset(s, 0, sizeof(*s));
}

unsigned corun__cc_src_line(const corun__cc_src *s, unsigned off)
{
    size_t lo = 0, hi = s->nlines;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (s->line_start[mid] <= off) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return (unsigned)lo + 1;
}

unsigned corun__cc_src_col(const corun__cc_src *s, unsigned off)
{
    return off - s->line_start[corun__cc_src_line(s, off) - 1] + 1;
}

size_t corun__cc_tok_from(const corun__cc_src *s, unsigned off)
{
    size_t lo = 0, hi = s->ntok;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->tok[mid].off < off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

long corun__cc_tok_at(const corun__cc_src *s, unsigned off)
{
    size_t i = corun__cc_tok_from(s, off);
    return i < s->ntok && s->tok[i].off == off ? (long)i : -1;
}

int corun__cc_tok_is(const corun__cc_src *s, size_t i, const char *t)
{
    if (i >= s->ntok) {
        return 0;
    }
    size_t n = strlen(t);
    return s->tok[i].len == n && memcmp(s->text + s->tok[i].off, t, n) == 0;
}

static int is_open(const corun__cc_src *s, size_t j)
{
    return corun__cc_tok_is(s, j, "(") || corun__cc_tok_is(s, j, "[") ||
           corun__cc_tok_is(s, j, "{") || corun__cc_tok_is(s, j, "<<<");
}

static int is_close(const corun__cc_src *s, size_t j)
{
    return corun__cc_tok_is(s, j, ")") || corun__cc_tok_is(s, j, "]") ||
           corun__cc_tok_is(s, j, "}") || corun__cc_tok_is(s, j, ">>>");
}

/* Index of the token that closes the bracket opened by token i ("(", "[",
 * "{", "<<<", or "<" of a template list, where ">>" closes two), or ntok. */
size_t corun__cc_tok_match(const corun__cc_src *s, size_t i)
{
    int depth = 0, angle = 0;
    int angled = corun__cc_tok_is(s, i, "<");

    for (size_t j = i; j < s->ntok; j++) {
        if (is_open(s, j)) {
            depth++;
        } else if (is_close(s, j)) {
            if (--depth < 0) {
                return s->ntok;
            }
            if (depth == 0 && !angled) {
                return j;
            }
        } else if (angled && depth == 0) {
            if (corun__cc_tok_is(s, j, "<")) {
                angle++;
            } else if (corun__cc_tok_is(s, j, ">")) {
                if (--angle == 0) {
                    return j;
                }
            } else if (corun__cc_tok_is(s, j, ">>")) {
                angle -= 2;
                if (angle <= 0) {
                    return j;
                }
            }
        }
    }
    return s->ntok;
}

const corun__cc_define *corun__cc_src_define_at(const corun__cc_src *s, unsigned off)
{
    size_t lo = 0, hi = s->ndefines;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->defines[mid].r.end <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < s->ndefines && s->defines[lo].r.start <= off && off < s->defines[lo].r.end) {
        return &s->defines[lo];
    }
    return NULL;
}

unsigned corun__cc_src_expansion_end(const corun__cc_src *s, unsigned off)
{
    size_t lo = 0, hi = s->nexpansions;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->expansions[mid].end <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < s->nexpansions && s->expansions[lo].start <= off && off < s->expansions[lo].end) {
        return s->expansions[lo].end;
    }
    return off;
}

typedef struct index_ctx {
    corun__cc_src *s;
    CXFile file;
    size_t cap_def, cap_exp;
    int oom;
} index_ctx;

static int range_in_file(index_ctx *x, CXSourceRange r, unsigned *a, unsigned *b)
{
    CXFile f1 = NULL, f2 = NULL;
    clang_getSpellingLocation(clang_getRangeStart(r), &f1, NULL, NULL, a);
    clang_getSpellingLocation(clang_getRangeEnd(r), &f2, NULL, NULL, b);
    return f1 && f2 && clang_File_isEqual(f1, x->file) && clang_File_isEqual(f2, x->file) &&
           *a <= *b;
}

static enum CXChildVisitResult index_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    index_ctx *x = data;
    corun__cc_src *s = x->s;
    enum CXCursorKind k = clang_getCursorKind(c);
    unsigned a, b;
    (void)parent;

    if (k != CXCursor_MacroDefinition && k != CXCursor_MacroExpansion) {
        return CXChildVisit_Continue;
    }
    if (!range_in_file(x, clang_getCursorExtent(c), &a, &b)) {
        return CXChildVisit_Continue;
    }
    if (k == CXCursor_MacroDefinition) {
        if (s->ndefines == x->cap_def) {
            size_t cap = x->cap_def ? x->cap_def * 2 : 64;
            corun__cc_define *v = realloc(s->defines, cap * sizeof(*v));
            if (v == NULL) {
                x->oom = 1;
                return CXChildVisit_Break;
            }
            s->defines = v;
            x->cap_def = cap;
        }
        corun__cc_define *def = &s->defines[s->ndefines++];
        def->r.start = a;
        def->r.end = b;
        def->function_like = clang_Cursor_isMacroFunctionLike(c) != 0;
        /* the body starts after the name, and after ")" of a parameter list */
        size_t i = corun__cc_tok_from(s, a) + 1;
        if (def->function_like) {
            while (i < s->ntok && s->tok[i].off < b && !corun__cc_tok_is(s, i, ")")) {
                i++;
            }
            i++;
        }
        def->body = i < s->ntok && s->tok[i].off < b ? s->tok[i].off : b;
    } else {
        if (s->nexpansions == x->cap_exp) {
            size_t cap = x->cap_exp ? x->cap_exp * 2 : 64;
            corun__cc_range *v = realloc(s->expansions, cap * sizeof(*v));
            if (v == NULL) {
                x->oom = 1;
                return CXChildVisit_Break;
            }
            s->expansions = v;
            x->cap_exp = cap;
        }
        s->expansions[s->nexpansions].start = a;
        s->expansions[s->nexpansions].end = b;
        s->nexpansions++;
    }
    return CXChildVisit_Continue;
}

int corun__cc_src_index(corun__cc_src *s, CXTranslationUnit tu, CXFile file)
{
    CXSourceRange all = clang_getRange(clang_getLocationForOffset(tu, file, 0),
                                       clang_getLocationForOffset(tu, file, (unsigned)s->len));
    CXToken *toks = NULL;
    unsigned n = 0;

    clang_tokenize(tu, all, &toks, &n);
    s->tok = malloc((n ? n : 1) * sizeof(*s->tok));
    if (s->tok == NULL) {
        clang_disposeTokens(tu, toks, n);
        return CORUN_ENOMEM;
    }
    s->ntok = 0;
    for (unsigned i = 0; i < n; i++) {
        CXSourceRange r = clang_getTokenExtent(tu, toks[i]);
        unsigned a, b;
        clang_getSpellingLocation(clang_getRangeStart(r), NULL, NULL, NULL, &a);
        clang_getSpellingLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &b);
        if (b < a || b > s->len) {
            continue;
        }
        s->tok[s->ntok].off = a;
        s->tok[s->ntok].len = b - a;
        s->tok[s->ntok].kind = clang_getTokenKind(toks[i]);
        s->ntok++;
    }
    clang_disposeTokens(tu, toks, n);

    index_ctx x = {s, file, 0, 0, 0};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), index_visit, &x);
    return x.oom ? CORUN_ENOMEM : CORUN_OK;
}
