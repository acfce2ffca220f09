/*
 * headers.c — kernels kept in the project's own headers. Real projects
 * define kernels in a header (k.cuh, *_kernel.cu) that a .cu file includes
 * and launches; transforming the .cu file alone would leave those kernels
 * and their launches plain.
 *
 * A project header is a file the unit includes that clang does not count
 * as a system header (found through -isystem or the default folders) and
 * that is not in CUDA's header folders. With a header folder
 * (--header-dir), each one is analysed as the input is, through views of
 * the same two units (corun__cc_tu with the header as its file): its
 * kernels become body, plain kernel, worker and launcher, its launches go
 * through corun, and a header so changed is written into the folder as a
 * copy, "k.cuh" as "k.corun.cuh" (a name no other include finds by
 * chance). Every #include that names it, in the input and in other copies,
 * is pointed at the copy; a header that includes a copy is copied for that
 * alone, up to the input. In a copy, a quoted #include of a project file
 * that is not copied names that file by its path from the input's folder,
 * since it is no longer beside it. Copies start with corun's launch header
 * and a #line naming the original, so messages and __FILE__ point into it.
 *
 * A header is written only when the build can be pointed at its copy: each
 * #include on the way from the input spells the name out (not a macro, not
 * #include_next) and none is in a system header or on the command line
 * (-include). Otherwise its kernels and launches are left as they are, with
 * a warning. Problems in a header are warnings (errors under
 * CORUN_CC_STRICT, through the diagnostics' demote flag): what they
 * concern stays as it is, the rest of the header is transformed, and
 * launches of a kernel left so are said as launches of a kernel defined
 * elsewhere.
 *
 * A kernel declared in several files of the unit gets one launcher, at its
 * first declaration in the unit's order (corun__cc_headers_link); a
 * definition refused in one file refuses the kernel in all.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cc/cc.h"
#include "common/output.h"
#include "corun/corun.h"

/* A file name that an #include or #line can hold between quotes. */
static int writable_name(const char *s)
{
    return strpbrk(s, "\"\\\n") == NULL;
}

static char *dup_str(const char *s)
{
    return corun__cc_strndup(s, strlen(s));
}

/* f's real path (clang's, else realpath's, else its name); caller frees. */
static char *real_name(CXFile f)
{
    CXString r = clang_File_tryGetRealPathName(f);
    const char *p = clang_getCString(r);
    char *out = NULL;
    if (p != NULL && p[0] != '\0') {
        out = dup_str(p);
    } else {
        CXString n = clang_getFileName(f);
        char buf[PATH_MAX];
        const char *name = clang_getCString(n);
        out = dup_str(name != NULL && realpath(name, buf) != NULL ? buf : name ? name : "");
        clang_disposeString(n);
    }
    clang_disposeString(r);
    return out;
}

long corun__cc_headers_index(const corun__cc_headers *hs, CXFile f)
{
    if (f == NULL) {
        return -1;
    }
    char *real = real_name(f);
    long found = -1;
    for (size_t i = 0; real != NULL && i < hs->n; i++) {
        if (strcmp(hs->v[i].real, real) == 0) {
            found = (long)i;
            break;
        }
    }
    free(real);
    return found;
}

/* ------------------------------------------------------------------------ */
/* Which files are the project's, and how they are included                 */
/* ------------------------------------------------------------------------ */

typedef struct find_ctx {
    corun__cc_headers *hs;
    const corun__cc_tu *t;          /* the side being looked at */
    const corun__cc_tu *host, *dev;
    char cuda[2][PATH_MAX + 16];    /* CUDA's header folders, real paths, "/" ended */
    int rc;
} find_ctx;

/* Whether f is a file of the project: not a system header, not in CUDA's
 * header folders (a -I naming them makes them no system headers), not one
 * of corun-cc's in-memory files. */
static int project_file(const find_ctx *x, CXFile f, const char *real)
{
    if (clang_Location_isInSystemHeader(clang_getLocationForOffset(x->t->tu, f, 0))) {
        return 0;
    }
    if (strncmp(real, CORUN_CC_VIRTUAL_DIR "/", sizeof(CORUN_CC_VIRTUAL_DIR)) == 0) {
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        if (x->cuda[i][0] != '\0' && strncmp(real, x->cuda[i], strlen(x->cuda[i])) == 0) {
            return 0;
        }
    }
    return 1;
}

/* Marks h as one the build cannot be pointed at a copy of, saying why at
 * loc (the first reason is kept). */
static void unreachable(corun__cc_header *h, CXSourceLocation loc, const char *why)
{
    if (h->unreachable == NULL) {
        h->unreachable = why;
        h->why_at = loc;
    }
}

/* clang_getInclusions' visitor: each file of one side, with the #include
 * locations that bring it in (stack[0] the innermost). Records a project
 * file, where it enters the unit, and whether what includes it first can
 * be pointed at a copy. */
static void inclusion_visit(CXFile f, CXSourceLocation *stack, unsigned len, CXClientData data)
{
    find_ctx *x = data;
    corun__cc_headers *hs = x->hs;

    if (len == 0 || x->rc != CORUN_OK) {
        return; /* the input itself */
    }
    char *real = real_name(f);
    if (real == NULL) {
        x->rc = CORUN_ENOMEM;
        return;
    }
    if (!project_file(x, f, real)) {
        free(real);
        return;
    }
    long i = corun__cc_headers_index(hs, f);
    corun__cc_header *h;
    if (i < 0) {
        if (hs->n == hs->cap) {
            size_t cap = hs->cap ? hs->cap * 2 : 16;
            corun__cc_header *v = realloc(hs->v, cap * sizeof(*v));
            if (v == NULL) {
                free(real);
                x->rc = CORUN_ENOMEM;
                return;
            }
            hs->v = v;
            hs->cap = cap;
        }
        h = &hs->v[hs->n++];
        memset(h, 0, sizeof(*h));
        h->real = real;
        CXString n = clang_getFileName(f);
        h->name = dup_str(clang_getCString(n) ? clang_getCString(n) : real);
        clang_disposeString(n);
        h->host = *x->host;
        h->dev = *x->dev;
        h->host.file = h->dev.file = NULL;
        h->at = malloc(len * sizeof(unsigned));
        if (h->name == NULL || h->at == NULL) {
            x->rc = CORUN_ENOMEM;
            return;
        }
        /* from the input down to the #include that brings it in */
        for (unsigned k = 0; k < len; k++) {
            unsigned off = 0;
            clang_getExpansionLocation(stack[len - 1 - k], NULL, NULL, NULL, &off);
            h->at[k] = off;
        }
        h->nat = len;
        if (!writable_name(h->real) || !writable_name(h->name)) {
            unreachable(h, stack[0], "its name cannot be written between the quotes of an "
                                     "#include");
        }
    } else {
        free(real);
        h = &hs->v[i];
    }
    if (x->t->device) {
        h->dev.file = f;
    } else {
        h->host.file = f;
    }
    CXFile by = NULL;
    clang_getExpansionLocation(stack[0], &by, NULL, NULL, NULL);
    if (by == NULL) {
        unreachable(h, stack[0], "it is included from the command line (-include)");
    } else if (clang_Location_isInSystemHeader(stack[0])) {
        unreachable(h, stack[0], "a system header includes it");
    }
}

/* The name an #include spells: [*a, *b) of the including file's text,
 * quotes or angle brackets included; 0 when it is not spelled out (a
 * macro) or the directive is not a plain #include. */
static int spelled_name(const corun__cc_tu *t, CXCursor c, unsigned *a, unsigned *b)
{
    CXToken *tok = NULL;
    unsigned n = 0, i = 0;
    int ok = 0;

    clang_tokenize(t->tu, clang_getCursorExtent(c), &tok, &n);
    while (i < n && clang_getTokenKind(tok[i]) == CXToken_Punctuation) {
        i++; /* "#" */
    }
    if (i + 1 < n) {
        CXString kw = clang_getTokenSpelling(t->tu, tok[i]);
        CXString nm = clang_getTokenSpelling(t->tu, tok[i + 1]);
        const char *k = clang_getCString(kw), *m = clang_getCString(nm);
        if (strcmp(k, "include") == 0 && (m[0] == '"' || strcmp(m, "<") == 0)) {
            size_t last = i + 1;
            if (m[0] == '<') {
                while (last < n) {
                    CXString e = clang_getTokenSpelling(t->tu, tok[last]);
                    int close = strcmp(clang_getCString(e), ">") == 0;
                    clang_disposeString(e);
                    if (close) {
                        break;
                    }
                    last++;
                }
            }
            if (last < n) {
                CXSourceRange r0 = clang_getTokenExtent(t->tu, tok[i + 1]);
                CXSourceRange r1 = clang_getTokenExtent(t->tu, tok[last]);
                clang_getSpellingLocation(clang_getRangeStart(r0), NULL, NULL, NULL, a);
                clang_getSpellingLocation(clang_getRangeEnd(r1), NULL, NULL, NULL, b);
                ok = *b > *a;
            }
        }
        clang_disposeString(kw);
        clang_disposeString(nm);
    }
    clang_disposeTokens(t->tu, tok, n);
    return ok;
}

/* Records each #include, in the input or a project header, of a project
 * header, with where its name is spelled; one that does not spell the name
 * makes the header unreachable. */
static enum CXChildVisitResult include_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    find_ctx *x = data;
    corun__cc_headers *hs = x->hs;
    (void)parent;

    if (clang_getCursorKind(c) != CXCursor_InclusionDirective) {
        return CXChildVisit_Continue;
    }
    CXSourceLocation loc = clang_getCursorLocation(c);
    if (clang_Location_isInSystemHeader(loc)) {
        return CXChildVisit_Continue;
    }
    CXFile in = NULL;
    clang_getExpansionLocation(loc, &in, NULL, NULL, NULL);
    long from = -1;
    if (in == NULL) {
        return CXChildVisit_Continue;
    }
    if (!clang_File_isEqual(in, x->t->file)) {
        from = corun__cc_headers_index(hs, in);
        if (from < 0) {
            return CXChildVisit_Continue;
        }
    }
    long to = corun__cc_headers_index(hs, clang_getIncludedFile(c));
    if (to < 0) {
        return CXChildVisit_Continue;
    }
    unsigned a = 0, b = 0;
    int spelled = spelled_name(x->t, c, &a, &b);
    if (!spelled) {
        unreachable(&hs->v[to], loc, "an #include names it through a macro or is not a plain "
                                     "#include (#include_next, #import)");
        return CXChildVisit_Continue;
    }
    for (size_t i = 0; i < hs->ninc; i++) {
        if (hs->inc[i].from == from && hs->inc[i].name_start == a) {
            return CXChildVisit_Continue; /* seen on the other side */
        }
    }
    if (hs->ninc == hs->capinc) {
        size_t cap = hs->capinc ? hs->capinc * 2 : 16;
        corun__cc_include *v = realloc(hs->inc, cap * sizeof(*v));
        if (v == NULL) {
            x->rc = CORUN_ENOMEM;
            return CXChildVisit_Break;
        }
        hs->inc = v;
        hs->capinc = cap;
    }
    hs->inc[hs->ninc++] = (corun__cc_include){from, to, a, b};
    return CXChildVisit_Continue;
}

/* Whether position a (offsets from the input down) comes before b in the
 * unit. */
static int before(const unsigned *a, size_t na, const unsigned *b, size_t nb)
{
    for (size_t i = 0; i < na && i < nb; i++) {
        if (a[i] != b[i]) {
            return a[i] < b[i];
        }
    }
    return na < nb;
}

static int header_cmp(const void *pa, const void *pb)
{
    const corun__cc_header *a = pa, *b = pb;
    return before(a->at, a->nat, b->at, b->nat) ? -1 : before(b->at, b->nat, a->at, a->nat);
}

/* The real path of folder dir/sub, "/" ended, into out; "" when there
 * is none. */
static void folder(const char *dir, const char *sub, char *out)
{
    char path[PATH_MAX + 16], real[PATH_MAX];
    out[0] = '\0';
    snprintf(path, sizeof(path), "%s/%s", dir, sub);
    if (realpath(path, real) != NULL) {
        snprintf(out, PATH_MAX + 16, "%s/", real);
    }
}

int corun__cc_headers_find(const corun__cc_opts *o, const corun__cc_tu *host,
                           const corun__cc_tu *dev, corun__cc_headers *hs)
{
    const char *cp = o->cuda_path ? o->cuda_path : "/usr/local/cuda";
    find_ctx x;

    memset(hs, 0, sizeof(*hs));
    memset(&x, 0, sizeof(x));
    x.hs = hs;
    x.host = host;
    x.dev = dev;
    folder(cp, "include", x.cuda[0]);
    folder(cp, "targets", x.cuda[1]);
    for (int i = 0; i < 2 && x.rc == CORUN_OK; i++) {
        x.t = i == 0 ? host : dev;
        clang_getInclusions(x.t->tu, inclusion_visit, &x);
    }
    if (x.rc != CORUN_OK) {
        return x.rc;
    }
    /* in the unit's order: copies are named in it */
    if (hs->n > 1) {
        qsort(hs->v, hs->n, sizeof(hs->v[0]), header_cmp);
    }
    for (int i = 0; i < 2 && x.rc == CORUN_OK; i++) {
        x.t = i == 0 ? host : dev;
        clang_visitChildren(clang_getTranslationUnitCursor(x.t->tu), include_visit, &x);
    }
    if (x.rc != CORUN_OK) {
        return x.rc;
    }
    /* a header included by one the build cannot be pointed at cannot be
     * reached either */
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < hs->ninc; i++) {
            const corun__cc_include *c = &hs->inc[i];
            if (c->from >= 0 && hs->v[c->from].unreachable != NULL &&
                hs->v[c->to].unreachable == NULL) {
                unreachable(&hs->v[c->to], hs->v[c->from].why_at,
                            "it is included by a header that cannot be replaced by a copy");
                changed = 1;
            }
        }
    }
    return CORUN_OK;
}

int corun__cc_headers_deps(const corun__cc_headers *hs, corun__cc_buf *out)
{
    corun__cc_buf_add(out, "", 0);
    for (size_t i = 0; i < hs->n; i++) {
        if (strchr(hs->v[i].real, '\n') == NULL) {
            corun__cc_buf_printf(out, "%s\n", hs->v[i].real);
        }
    }
    return out->oom ? CORUN_ENOMEM : CORUN_OK;
}

/* ------------------------------------------------------------------------ */
/* Kernels of headers                                                       */
/* ------------------------------------------------------------------------ */

typedef struct scan_ctx {
    corun__cc_headers *hs;
} scan_ctx;

/* Marks each header that declares a kernel (device side). System code is
 * skipped whole, which keeps the precompiled CUDA headers unread. */
static enum CXChildVisitResult scan_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    scan_ctx *x = data;
    (void)parent;

    if (clang_Location_isInSystemHeader(clang_getCursorLocation(c))) {
        return CXChildVisit_Continue;
    }
    switch (clang_getCursorKind(c)) {
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
    case CXCursor_UnexposedDecl:
    case CXCursor_StructDecl:
    case CXCursor_ClassDecl:
    case CXCursor_ClassTemplate:
    case CXCursor_FriendDecl:
        return CXChildVisit_Recurse;
    case CXCursor_FunctionDecl:
    case CXCursor_FunctionTemplate:
        if (corun__cc_has_attr(c, CXCursor_CUDAGlobalAttr)) {
            CXFile f = NULL;
            clang_getExpansionLocation(clang_getCursorLocation(c), &f, NULL, NULL, NULL);
            long i = corun__cc_headers_index(x->hs, f);
            if (i >= 0) {
                x->hs->v[i].kernels = 1;
            }
        }
        return CXChildVisit_Continue;
    default:
        return CXChildVisit_Continue;
    }
}

/* Reads and indexes h's text, once. */
static int read_header(const corun__cc_opts *o, corun__cc_header *h, corun__cc_diags *d)
{
    if (h->read) {
        return CORUN_OK;
    }
    int rc = corun__cc_src_read(&h->src, h->name, o->read_limit, d);
    if (rc == CORUN_OK) {
        const corun__cc_tu *t = h->host.file != NULL ? &h->host : &h->dev;
        rc = corun__cc_src_index(&h->src, t->tu, t->file);
    }
    h->read = rc == CORUN_OK;
    return rc;
}

static void say_unreachable(const corun__cc_header *h, const char *what, corun__cc_diags *d)
{
    corun__cc_diag_at(d, CORUN_CC_WARNING, h->why_at, "header left as it is",
                      "%s: %s, not through corun: %s, so corun-cc cannot point the build at a "
                      "transformed copy",
                      h->name, what, h->unreachable);
}

int corun__cc_headers_kernels(const corun__cc_opts *o, const corun__cc_tu *dev,
                              corun__cc_headers *hs, corun__cc_diags *d)
{
    scan_ctx x = {hs};
    int rc = CORUN_OK;

    clang_visitChildren(clang_getTranslationUnitCursor(dev->tu), scan_visit, &x);
    for (size_t i = 0; i < hs->n && rc == CORUN_OK; i++) {
        corun__cc_header *h = &hs->v[i];
        if (!h->kernels) {
            continue;
        }
        if (h->unreachable != NULL) {
            say_unreachable(h, "its kernels stay as they are", d);
            continue;
        }
        if (h->dev.file == NULL) {
            continue; /* kernels of the host side only: kernels.c finds none */
        }
        rc = read_header(o, h, d);
        d->demote = 1;
        if (rc == CORUN_OK) {
            rc = corun__cc_find_kernel_decls(&h->dev, &h->src, &h->ks, d);
        }
        if (rc == CORUN_OK && h->host.file == NULL) {
            for (size_t k = 0; k < h->ks.n; k++) {
                corun__cc_diag_at(d, CORUN_CC_ERROR, clang_getCursorLocation(h->ks.v[k].cursor),
                                  "kernel seen by one pass only",
                                  "kernel '%s': its header is included for the device only",
                                  h->ks.v[k].name);
                h->ks.v[k].refused = 1;
            }
        } else if (rc == CORUN_OK) {
            rc = corun__cc_check_host_pass(&h->host, &h->dev, &h->ks, d);
        }
        if (rc == CORUN_OK) {
            rc = corun__cc_check_kernels(&h->dev, &h->src, &h->ks, &h->clones, &h->sites, d);
        }
        if (rc == CORUN_OK && o->resource_usage != NULL) {
            rc = corun__cc_pins_from_report(o->resource_usage, o->pinned_usage,
                                            o->link_allocated, &h->src, &h->ks, d);
        }
        d->demote = 0;
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* One kernel, several files                                                */
/* ------------------------------------------------------------------------ */

typedef struct rec_ref {
    corun__cc_decl *k;
    const unsigned *at; /* the file's place in the unit */
    size_t nat;
} rec_ref;

/* Whether record a comes before record b in the unit (include chains
 * deeper than 63 compare by depth only). */
static int rec_before(const rec_ref *a, const rec_ref *b)
{
    size_t na = a->nat + 1, nb = b->nat + 1;
    unsigned pa[64], pb[64];
    if (na > 64 || nb > 64) {
        return a->nat < b->nat;
    }
    for (size_t i = 0; i < a->nat; i++) {
        pa[i] = a->at[i];
    }
    for (size_t i = 0; i < b->nat; i++) {
        pb[i] = b->at[i];
    }
    pa[a->nat] = a->k->start;
    pb[b->nat] = b->k->start;
    return before(pa, na, pb, nb);
}

int corun__cc_headers_link(corun__cc_headers *hs, corun__cc_decls *ks)
{
    size_t n = ks->n;
    for (size_t i = 0; i < hs->n; i++) {
        n += hs->v[i].ks.n;
    }
    if (n == ks->n) {
        return CORUN_OK; /* no kernel in a header */
    }
    rec_ref *r = malloc(n * sizeof(*r));
    if (r == NULL) {
        return CORUN_ENOMEM;
    }
    n = 0;
    for (size_t j = 0; j < ks->n; j++) {
        r[n++] = (rec_ref){&ks->v[j], NULL, 0};
    }
    for (size_t i = 0; i < hs->n; i++) {
        for (size_t j = 0; j < hs->v[i].ks.n; j++) {
            r[n++] = (rec_ref){&hs->v[i].ks.v[j], hs->v[i].at, hs->v[i].nat};
        }
    }
    for (size_t i = 0; i < n; i++) {
        corun__cc_decl *a = r[i].k;
        for (size_t j = 0; j < n; j++) {
            corun__cc_decl *b = r[j].k;
            if (i == j || strcmp(a->usr, b->usr) != 0) {
                continue;
            }
            /* a definition decides for every declaration: its worker's kind,
             * and whether there is a worker at all */
            if (b->is_def) {
                a->shared = b->shared;
                if (b->refused && !a->refused) {
                    a->refused = a->refused_elsewhere = 1;
                }
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        corun__cc_decl *a = r[i].k;
        if (!a->first || a->refused) {
            continue;
        }
        /* one launcher per kernel: at its first declaration in the unit */
        for (size_t j = 0; j < n; j++) {
            corun__cc_decl *b = r[j].k;
            if (i != j && b->first && !b->refused && strcmp(a->usr, b->usr) == 0 &&
                rec_before(&r[j], &r[i])) {
                a->first = 0;
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        corun__cc_decl *a = r[i].k;
        for (size_t j = 0; a->is_def && a->occupancy_loss && j < n; j++) {
            corun__cc_decl *b = r[j].k;
            if (b->first && strcmp(a->usr, b->usr) == 0) {
                b->occupancy_loss = 1;
            }
        }
    }
    free(r);
    return CORUN_OK;
}

/* Appends the records of list that launches may use to out (room made by
 * the caller): all but those refused, or with own, all but those refused
 * by another file (the input's own refusals are errors already, and its
 * launches of them need no word more). Records of another file are marked
 * elsewhere. */
static void add_visible(corun__cc_decls *out, const corun__cc_decls *list, int own, int input)
{
    for (size_t j = 0; j < list->n; j++) {
        const corun__cc_decl *k = &list->v[j];
        if (k->refused_elsewhere || (k->refused && !(own && input))) {
            continue;
        }
        out->v[out->n] = *k;
        out->v[out->n++].elsewhere = !own;
    }
}

int corun__cc_headers_visible(const corun__cc_headers *hs, const corun__cc_decls *ks, long self,
                              corun__cc_decls *out)
{
    size_t n = ks->n;
    for (size_t i = 0; i < hs->n; i++) {
        n += hs->v[i].ks.n;
    }
    memset(out, 0, sizeof(*out));
    out->v = malloc((n ? n : 1) * sizeof(*out->v));
    if (out->v == NULL) {
        return CORUN_ENOMEM;
    }
    out->cap = n;
    add_visible(out, ks, self < 0, 1);
    for (size_t i = 0; i < hs->n; i++) {
        add_visible(out, &hs->v[i].ks, (long)i == self, 0);
    }
    return CORUN_OK;
}

/* ------------------------------------------------------------------------ */
/* Launches in headers                                                      */
/* ------------------------------------------------------------------------ */

int corun__cc_headers_launches(const corun__cc_opts *o, corun__cc_headers *hs,
                               const corun__cc_decls *ks, corun__cc_diags *d)
{
    for (size_t i = 0; i < hs->n; i++) {
        corun__cc_header *h = &hs->v[i];
        corun__cc_decls seen;
        /* a side that does not include the header finds nothing in it */
        int rc = read_header(o, h, d);
        if (rc == CORUN_OK) {
            rc = corun__cc_headers_visible(hs, ks, (long)i, &seen);
        }
        if (rc != CORUN_OK) {
            return rc;
        }
        d->demote = 1;
        rc = corun__cc_rewrite_launches(&h->host, &h->dev, &h->src, &seen, &h->e, d,
                                        &h->nlaunches);
        d->demote = 0;
        free(seen.v);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    return CORUN_OK;
}

/* ------------------------------------------------------------------------ */
/* Copies                                                                   */
/* ------------------------------------------------------------------------ */

/* "k.cuh" -> "k.corun.cuh" ("k.corun-TAG.cuh" with a tag), or
 * "k.N.corun.cuh" when another copy has that name; NULL when out of
 * memory. */
static char *copy_name(const corun__cc_headers *hs, const char *real, const char *tag)
{
    const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    const char *dot = strrchr(base, '.');
    size_t stem = dot != NULL && dot != base ? (size_t)(dot - base) : strlen(base);
    const char *ext = base + stem;
    for (unsigned n = 1;; n++) {
        corun__cc_buf b = {0};
        corun__cc_buf_printf(&b, "%.*s.", (int)stem, base);
        if (n > 1) {
            corun__cc_buf_printf(&b, "%u.", n);
        }
        corun__cc_buf_printf(&b, "corun%s%s%s", tag ? "-" : "", tag ? tag : "", ext);
        if (b.oom) {
            corun__cc_buf_free(&b);
            return NULL;
        }
        int taken = 0;
        for (size_t i = 0; i < hs->n && !taken; i++) {
            taken = hs->v[i].copy != NULL && strcmp(hs->v[i].copy, b.p) == 0;
        }
        if (!taken) {
            return b.p;
        }
        corun__cc_buf_free(&b);
    }
}

/* Which headers are copied: those with edits, then those that include a
 * copy (the copy is found only through an #include pointed at it). */
static int choose_copies(corun__cc_headers *hs, const char *tag, corun__cc_diags *d)
{
    for (size_t i = 0; i < hs->n; i++) {
        corun__cc_header *h = &hs->v[i];
        h->copied = h->e.n > 0;
        if (h->copied && h->unreachable != NULL) {
            say_unreachable(h, "its launches stay as they are", d);
            corun__cc_edits_free(&h->e);
            h->copied = 0;
        }
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < hs->ninc; i++) {
            const corun__cc_include *c = &hs->inc[i];
            if (c->from >= 0 && hs->v[c->to].copied && !hs->v[c->from].copied) {
                hs->v[c->from].copied = 1;
                changed = 1;
            }
        }
    }
    for (size_t i = 0; i < hs->n; i++) {
        if (hs->v[i].copied) {
            hs->v[i].copy = copy_name(hs, hs->v[i].real, tag);
            if (hs->v[i].copy == NULL) {
                return CORUN_ENOMEM;
            }
        }
    }
    return CORUN_OK;
}

/* The path of file from folder base (both real paths); caller frees. */
static char *relative(const char *base, const char *file)
{
    size_t nb = strlen(base), common = 0;
    if (strncmp(base, file, nb) == 0 && file[nb] == '/') {
        common = nb + 1; /* file lies under base */
    } else {
        for (size_t i = 0; base[i] != '\0' && base[i] == file[i]; i++) {
            if (base[i] == '/') {
                common = i + 1;
            }
        }
    }
    corun__cc_buf b = {0};
    corun__cc_buf_add(&b, "", 0);
    /* one "../" per folder of base below the common one */
    if (common < nb) {
        corun__cc_buf_adds(&b, "../");
        for (const char *p = base + common; *p != '\0'; p++) {
            if (*p == '/') {
                corun__cc_buf_adds(&b, "../");
            }
        }
    }
    corun__cc_buf_adds(&b, file + common);
    if (b.oom) {
        corun__cc_buf_free(&b);
        return NULL;
    }
    return b.p;
}

/* Points the #include directives of the input and of the copies at the
 * copies. In a copy, a quoted #include of a project file that stays is no
 * longer beside it: it names that file from the input's folder (base),
 * which the build searches (corun-nvcc gives -I for it), and which, unlike
 * a real path, holds where the tree is carried to another machine. */
static int point_includes(corun__cc_headers *hs, const char *base, corun__cc_edits *main_e)
{
    for (size_t i = 0; i < hs->ninc; i++) {
        const corun__cc_include *c = &hs->inc[i];
        const corun__cc_header *to = &hs->v[c->to];
        corun__cc_edits *e = c->from < 0 ? main_e : &hs->v[c->from].e;
        if (c->from >= 0 && !hs->v[c->from].copied) {
            continue;
        }
        char *rel = NULL;
        const char *name = NULL;
        if (to->copied) {
            name = to->copy;
        } else if (c->from >= 0 && hs->v[c->from].src.text[c->name_start] == '"') {
            name = rel = relative(base, to->real);
            if (rel == NULL) {
                return CORUN_ENOMEM;
            }
        }
        if (name == NULL) {
            continue;
        }
        corun__cc_buf b = {0};
        corun__cc_buf_printf(&b, "\"%s\"", name);
        int rc = b.oom ? CORUN_ENOMEM
                       : corun__cc_edit_add(e, c->name_start, c->name_end - c->name_start, b.p);
        corun__cc_buf_free(&b);
        free(rel);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    return CORUN_OK;
}

int corun__cc_headers_emit(const corun__cc_opts *o, corun__cc_headers *hs,
                           corun__cc_edits *main_e, corun__cc_diags *d)
{
    int rc = CORUN_OK;
    for (size_t i = 0; i < hs->n && rc == CORUN_OK; i++) {
        corun__cc_header *h = &hs->v[i];
        if (h->ks.n > 0) {
            rc = corun__cc_emit_kernels(&h->src, &h->ks, &h->clones, &h->sites, h->name, &h->e, d);
        }
    }
    if (rc == CORUN_OK) {
        rc = choose_copies(hs, o->header_tag, d);
    }
    for (size_t i = 0; i < hs->n && rc == CORUN_OK; i++) {
        if (hs->v[i].copied) {
            rc = read_header(o, &hs->v[i], d); /* an including header: read now */
        }
    }
    char base[PATH_MAX];
    if (rc == CORUN_OK && realpath(o->in, base) == NULL) {
        snprintf(base, sizeof(base), "%s", o->in);
    }
    if (rc == CORUN_OK) {
        char *slash = strrchr(base, '/');
        if (slash != NULL) {
            *slash = '\0';
        } else {
            snprintf(base, sizeof(base), ".");
        }
        rc = point_includes(hs, base, main_e);
    }
    for (size_t i = 0; i < hs->n && rc == CORUN_OK; i++) {
        corun__cc_header *h = &hs->v[i];
        if (!h->copied) {
            continue;
        }
        corun__cc_buf pro = {0};
        corun__cc_buf_adds(&pro, "#include \"corun/corun_launch.cuh\"\n#line 1 ");
        corun__cc_quote(&pro, h->name);
        corun__cc_buf_adds(&pro, "\n");
        rc = pro.oom ? CORUN_ENOMEM : corun__cc_edits_apply(&h->e, &h->src, pro.p, &h->out, d);
        corun__cc_buf_free(&pro);
    }
    return rc;
}

int corun__cc_headers_write(const corun__cc_headers *hs, const char *dir, char *why, size_t cap)
{
    int made = 0;
    for (size_t i = 0; i < hs->n; i++) {
        const corun__cc_header *h = &hs->v[i];
        if (!h->copied) {
            continue;
        }
        if (!made && mkdir(dir, 0777) != 0 && errno != EEXIST) {
            snprintf(why, cap, "cannot create the header folder %s: %s", dir, strerror(errno));
            return CORUN_EIO;
        }
        made = 1;
        corun__cc_buf path = {0};
        corun__cc_buf_printf(&path, "%s/%s", dir, h->copy);
        if (path.oom) {
            return CORUN_ENOMEM;
        }
        int w = corun__output_write(path.p, h->out.p, h->out.len, 0, why, cap);
        corun__cc_buf_free(&path);
        if (w != 0) {
            return CORUN_EIO;
        }
    }
    return CORUN_OK;
}

size_t corun__cc_headers_copied(const corun__cc_headers *hs)
{
    size_t n = 0;
    for (size_t i = 0; i < hs->n; i++) {
        n += hs->v[i].copied;
    }
    return n;
}

void corun__cc_headers_free(corun__cc_headers *hs)
{
    for (size_t i = 0; i < hs->n; i++) {
        corun__cc_header *h = &hs->v[i];
        free(h->name);
        free(h->real);
        free(h->at);
        free(h->copy);
        corun__cc_src_free(&h->src);
        corun__cc_decls_free(&h->ks);
        corun__cc_decls_free(&h->clones);
        free(h->sites.v);
        corun__cc_edits_free(&h->e);
        corun__cc_buf_free(&h->out);
    }
    free(hs->v);
    free(hs->inc);
    memset(hs, 0, sizeof(*hs));
}
