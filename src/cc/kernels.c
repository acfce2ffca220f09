/*
 * kernels.c — every __global__ declaration of the file, described as byte
 * positions of its parts (template header, name, parameters, body), so that
 * emit.c can rebuild it from the original text. Found on the device side,
 * where kernel bodies are what the GPU runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"
#include "corun/corun.h"

char *corun__cc_decl_usr(CXCursor fn)
{
    CXCursor t = clang_getSpecializedCursorTemplate(fn);
    if (!clang_Cursor_isNull(t)) {
        fn = t;
    }
    CXString u = clang_getCursorUSR(fn);
    const char *s = clang_getCString(u);
    char *r = corun__cc_strndup(s ? s : "", s ? strlen(s) : 0);
    clang_disposeString(u);
    return r;
}

corun__cc_decl *corun__cc_decl_first(corun__cc_decls *ks, const char *usr)
{
    for (size_t i = 0; i < ks->n; i++) {
        if (ks->v[i].first && strcmp(ks->v[i].usr, usr) == 0) {
            return &ks->v[i];
        }
    }
    return NULL;
}

static void free_params(corun__cc_param *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].name);
    }
    free(p);
}

void corun__cc_decls_free(corun__cc_decls *ks)
{
    for (size_t i = 0; i < ks->n; i++) {
        free(ks->v[i].name);
        free(ks->v[i].usr);
        free_params(ks->v[i].params, ks->v[i].nparams);
        free_params(ks->v[i].tparams, ks->v[i].ntparams);
    }
    free(ks->v);
    memset(ks, 0, sizeof(*ks));
}

/* Where " = default" begins in [a, b): the "=" at bracket depth 0, moved
 * back over blanks; b when there is none. */
static unsigned default_at(const corun__cc_src *s, unsigned a, unsigned b)
{
    int depth = 0;
    for (size_t j = corun__cc_tok_from(s, a); j < s->ntok && s->tok[j].off < b; j++) {
        if (corun__cc_tok_is(s, j, "(") || corun__cc_tok_is(s, j, "[") ||
            corun__cc_tok_is(s, j, "{") || corun__cc_tok_is(s, j, "<")) {
            depth++;
        } else if (corun__cc_tok_is(s, j, ")") || corun__cc_tok_is(s, j, "]") ||
                   corun__cc_tok_is(s, j, "}") || corun__cc_tok_is(s, j, ">")) {
            depth--;
        } else if (corun__cc_tok_is(s, j, ">>")) {
            depth -= 2;
        } else if (depth <= 0 && corun__cc_tok_is(s, j, "=")) {
            unsigned d = s->tok[j].off;
            while (d > a && (s->text[d - 1] == ' ' || s->text[d - 1] == '\t')) {
                d--;
            }
            return d;
        }
    }
    return b;
}

/* Whether [a, b) holds a "..." token at bracket depth 0. */
static int has_pack(const corun__cc_src *s, unsigned a, unsigned b)
{
    int depth = 0;
    for (size_t j = corun__cc_tok_from(s, a); j < s->ntok && s->tok[j].off < b; j++) {
        if (corun__cc_tok_is(s, j, "(") || corun__cc_tok_is(s, j, "[")) {
            depth++;
        } else if (corun__cc_tok_is(s, j, ")") || corun__cc_tok_is(s, j, "]")) {
            depth--;
        } else if (depth == 0 && corun__cc_tok_is(s, j, "...")) {
            return 1;
        }
    }
    return 0;
}

static int has_ident(const corun__cc_src *s, unsigned a, unsigned b, const char *id)
{
    for (size_t j = corun__cc_tok_from(s, a); j < s->ntok && s->tok[j].off < b; j++) {
        if (corun__cc_tok_is(s, j, id)) {
            return 1;
        }
    }
    return 0;
}

typedef struct find_ctx {
    const corun__cc_tu *t;
    const corun__cc_src *s;
    corun__cc_decls *ks;
    corun__cc_diags *d;
    int rc;
    int kernels;         /* describing kernels (else functions to clone) */
    const char *what;    /* "kernel" or "function", for messages */
    /* the declaration being described */
    corun__cc_decl *k;
    size_t cap_p, cap_t;
} find_ctx;

static int push_param(find_ctx *x, CXCursor c, int tparam)
{
    const corun__cc_src *s = x->s;
    corun__cc_decl *k = x->k;
    corun__cc_param **v = tparam ? &k->tparams : &k->params;
    size_t *n = tparam ? &k->ntparams : &k->nparams;
    size_t *cap = tparam ? &x->cap_t : &x->cap_p;
    long a, b;

    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        corun__cc_param *nv = realloc(*v, nc * sizeof(**v));
        if (nv == NULL) {
            return CORUN_ENOMEM;
        }
        *v = nv;
        *cap = nc;
    }
    corun__cc_param *p = &(*v)[*n];
    memset(p, 0, sizeof(*p));
    corun__cc_extent(x->t, s, c, &a, &b);
    long at = corun__cc_cursor_off(x->t, c, 0);
    if (a < 0 || at < 0) {
        corun__cc_diag_at(x->d, CORUN_CC_ERROR, clang_getCursorLocation(c), "kernel parameter",
                          "kernel '%s': a parameter not written in this file cannot be copied",
                          k->name);
        k->refused = 1;
        return CORUN_OK;
    }
    (*n)++;
    p->start = (unsigned)a;
    p->end = (unsigned)b;
    p->def = default_at(s, p->start, p->end);
    p->pack = has_pack(s, p->start, p->def);
    p->name_at = -1;
    CXString sp = clang_getCursorSpelling(c);
    const char *nm = clang_getCString(sp);
    if (nm != NULL && nm[0] != '\0') {
        p->name = corun__cc_strndup(nm, strlen(nm));
    } else {
        char made[32];
        snprintf(made, sizeof(made), "corun_%c%zu", tparam ? 't' : 'p', *n - 1);
        p->name = corun__cc_strndup(made, strlen(made));
        p->name_at = at;
    }
    clang_disposeString(sp);
    return p->name ? CORUN_OK : CORUN_ENOMEM;
}

static enum CXChildVisitResult param_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    find_ctx *x = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    (void)parent;

    if (kind == CXCursor_ParmDecl) {
        x->rc = push_param(x, c, 0);
    } else if (kind == CXCursor_TemplateTypeParameter || kind == CXCursor_NonTypeTemplateParameter ||
               kind == CXCursor_TemplateTemplateParameter) {
        x->rc = push_param(x, c, 1);
    } else if (kind == CXCursor_CompoundStmt) {
        x->k->body = c;
    }
    return x->rc == CORUN_OK ? CXChildVisit_Continue : CXChildVisit_Break;
}

static void refuse(find_ctx *x, CXCursor c, const char *construct, const char *why)
{
    char what[128];
    const char *p = strstr(construct, "%s"); /* "kernel" or "function" goes there */
    if (p != NULL) {
        snprintf(what, sizeof(what), "%.*s%s%s", (int)(p - construct), construct, x->what, p + 2);
    } else {
        snprintf(what, sizeof(what), "%s", construct);
    }
    corun__cc_diag_at(x->d, CORUN_CC_ERROR, clang_getCursorLocation(c), what, "%s", why);
}

/* Refuses the record being described (x->k), with a diagnostic at c; 0, so
 * that a step locating a part of it can say "not found" in one line. */
static int refuse_record(find_ctx *x, CXCursor c, const char *construct, const char *why)
{
    refuse(x, c, construct, why);
    x->k->refused = 1;
    return 0;
}

/* Whether declaration c can be rewritten where it stands: written out in
 * this file, at namespace scope, not an explicit specialization. Refuses it
 * (without a record) when not; a declaration in a header is skipped
 * silently. name_ex: the offset of its name as invoked. */
static int placeable(find_ctx *x, CXCursor c, CXCursor parent, long name_ex)
{
    long name_sp = corun__cc_cursor_off(x->t, c, 1);

    if (name_ex < 0) {
        return 0; /* declared in a header */
    }
    if (name_sp != name_ex) {
        refuse(x, c, "%s declared by a macro",
               "its text is produced by a macro expansion, so it cannot be rewritten in place; "
               "write it out, or transform the macro's output");
        return 0;
    }
    enum CXCursorKind pk = clang_getCursorKind(parent);
    if (pk != CXCursor_TranslationUnit && pk != CXCursor_Namespace && pk != CXCursor_LinkageSpec) {
        refuse(x, c, "%s declared inside a function or class",
               "corun-cc adds functions next to it, which is only possible at namespace "
               "scope");
        return 0;
    }
    if (clang_getCursorKind(c) == CXCursor_FunctionDecl &&
        !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c))) {
        refuse(x, c, "explicit specialization of a %s template",
               "not supported: make the specialization a separate function or an overload");
        return 0;
    }
    return 1;
}

/* Appends the record of c to x->ks and points x->k at it: its name, its
 * identity, what kind of declaration it is. CORUN_ENOMEM. */
static int new_record(find_ctx *x, CXCursor c)
{
    corun__cc_decls *ks = x->ks;

    if (ks->n == ks->cap) {
        size_t cap = ks->cap ? ks->cap * 2 : 16;
        corun__cc_decl *v = realloc(ks->v, cap * sizeof(*v));
        if (v == NULL) {
            return CORUN_ENOMEM;
        }
        ks->v = v;
        ks->cap = cap;
    }
    corun__cc_decl *k = &ks->v[ks->n++];
    memset(k, 0, sizeof(*k));
    x->k = k;
    k->clone = !x->kernels;
    x->cap_p = x->cap_t = 0;
    k->cursor = c;
    k->body = clang_getNullCursor();
    CXString sp = clang_getCursorSpelling(c);
    k->name = corun__cc_strndup(clang_getCString(sp), strlen(clang_getCString(sp)));
    clang_disposeString(sp);
    k->usr = corun__cc_decl_usr(c);
    if (k->name == NULL || k->usr == NULL) {
        return CORUN_ENOMEM;
    }
    k->is_template = clang_getCursorKind(c) == CXCursor_FunctionTemplate;
    k->is_def = clang_isCursorDefinition(c) != 0;
    k->first = 1;
    for (size_t i = 0; i + 1 < ks->n; i++) {
        if (strcmp(ks->v[i].usr, k->usr) == 0) {
            k->first = 0;
        }
    }
    return CORUN_OK;
}

/* Finds in the text where the declaration starts (its extern "C"
 * included), its name and its parameter list: *ni and *rp are the tokens
 * of the name and of the ")". 0 when one is missing (refused). */
static int locate_head(find_ctx *x, CXCursor c, CXCursor parent, long name_ex, size_t *ni,
                       size_t *rp)
{
    const corun__cc_src *s = x->s;
    corun__cc_decl *k = x->k;
    long a, b;

    corun__cc_extent(x->t, s, c, &a, &b);
    if (a < 0) {
        return refuse_record(x, c, "%s", "its declaration does not lie in this file");
    }
    k->start = (unsigned)a;
    if (clang_getCursorKind(parent) == CXCursor_LinkageSpec) {
        long la, lb;
        corun__cc_extent(x->t, s, parent, &la, &lb);
        size_t i = la >= 0 ? corun__cc_tok_from(s, (unsigned)la) : s->ntok;
        /* extern "C" { ... } vs extern "C" <declaration> */
        if (i + 2 < s->ntok && corun__cc_tok_is(s, i + 2, "{")) {
            k->braced_c = 1;
        } else if (la >= 0) {
            k->start = (unsigned)la;
        }
    }

    if (corun__cc_tok_at(s, (unsigned)name_ex) < 0) {
        return refuse_record(x, c, "%s", "cannot find its name in the file");
    }
    *ni = (size_t)corun__cc_tok_at(s, (unsigned)name_ex);
    k->name_off = (unsigned)name_ex;
    k->name_end = k->name_off + s->tok[*ni].len;
    size_t j = *ni + 1;
    if (corun__cc_tok_is(s, j, "<")) {
        j = corun__cc_tok_match(s, j) + 1;
    }
    if (!corun__cc_tok_is(s, j, "(")) {
        return refuse_record(x, c, "%s", "cannot find its parameter list in the file");
    }
    k->lparen = s->tok[j].off;
    *rp = corun__cc_tok_match(s, j);
    if (*rp >= s->ntok) {
        return refuse_record(x, c, "%s", "cannot find the end of its parameter list");
    }
    k->rparen = s->tok[*rp].off;
    return 1;
}

/* Sets tmpl_end: the end of "template <...>" before the name (token ni),
 * or the start when c is not a template. 0 when refused. */
static int locate_template(find_ctx *x, CXCursor c, size_t ni)
{
    const corun__cc_src *s = x->s;
    corun__cc_decl *k = x->k;

    k->tmpl_end = k->start;
    if (!k->is_template) {
        return 1;
    }
    size_t ti = corun__cc_tok_from(s, k->start);
    while (ti < ni && !corun__cc_tok_is(s, ti, "template")) {
        ti++;
    }
    if (ti >= ni || !corun__cc_tok_is(s, ti + 1, "<")) {
        return refuse_record(x, c, "%s template", "cannot find its template parameter list");
    }
    size_t te = corun__cc_tok_match(s, ti + 1);
    if (te >= ni) {
        return refuse_record(x, c, "%s template",
                             "cannot find the end of its template parameters");
    }
    k->tmpl_end = s->tok[te].off + s->tok[te].len;
    return 1;
}

/* Sets end (and body_end): the body's braces, which must be written in
 * this file, or the ";" after the parameter list (token rp is its ")").
 * 0 when refused. */
static int locate_end(find_ctx *x, CXCursor c, size_t rp)
{
    const corun__cc_src *s = x->s;
    corun__cc_decl *k = x->k;

    if (k->is_def) {
        long ba, bb;
        if (clang_Cursor_isNull(k->body)) {
            return refuse_record(x, c, "%s",
                                 "its definition has no body that libclang could parse");
        }
        corun__cc_extent(x->t, s, k->body, &ba, &bb);
        long bsp = corun__cc_cursor_off(x->t, k->body, 1);
        if (ba < 0 || bsp != ba || !corun__cc_tok_is(s, (size_t)corun__cc_tok_from(s, (unsigned)ba), "{") ||
            bb < 1 || s->text[bb - 1] != '}') {
            return refuse_record(x, k->body, "%s body produced by a macro",
                                 "the braces of the body must be written in this file");
        }
        k->end = (unsigned)ba;
        k->body_end = (unsigned)bb;
        return 1;
    }
    size_t e = rp + 1;
    while (e < s->ntok && !corun__cc_tok_is(s, e, ";")) {
        if (corun__cc_tok_is(s, e, "(")) {
            e = corun__cc_tok_match(s, e);
        }
        e++;
    }
    if (e >= s->ntok) {
        return refuse_record(x, c, "%s declaration", "cannot find the ';' that ends it");
    }
    k->end = s->tok[e].off;
    return 1;
}

/* Notes __launch_bounds__ and refuses what the worker cannot pass on: a
 * __grid_constant__ parameter, a parameter named like one corun-cc adds. */
static void check_params(find_ctx *x)
{
    const corun__cc_src *s = x->s;
    corun__cc_decl *k = x->k;

    k->launch_bounds = has_ident(s, k->start, k->end, "__launch_bounds__") ||
                       has_ident(s, k->start, k->end, "__maxnreg__");
    for (size_t i = 0; i < k->nparams; i++) {
        if (has_ident(s, k->params[i].start, k->params[i].end, "__grid_constant__")) {
            corun__cc_diag_add(x->d, CORUN_CC_ERROR, s->path, corun__cc_src_line(s, k->params[i].start),
                               corun__cc_src_col(s, k->params[i].start), "__grid_constant__ parameter",
                               "kernel '%s': not supported (a block-task gets a copy of each "
                               "parameter)", k->name);
            k->refused = 1;
        }
        const char *pn = k->params[i].name;
        if (strcmp(pn, "blockIdx") == 0 || strcmp(pn, "gridDim") == 0 ||
            (strncmp(pn, "corun_", 6) == 0 && k->params[i].name_at < 0)) {
            corun__cc_diag_add(x->d, CORUN_CC_ERROR, s->path, corun__cc_src_line(s, k->params[i].start),
                               corun__cc_src_col(s, k->params[i].start), "kernel parameter name",
                               "'%s': parameter '%s' clashes with a name corun-cc uses",
                               k->name, pn);
            k->refused = 1;
        }
    }
}

/* Describes declaration c (a kernel, or a function to clone) into x->ks.
 * Sets x->k to the new record, or leaves it NULL when c is not in the file
 * or was refused before a record was made (a record refused later stays,
 * marked refused). */
static int describe(find_ctx *x, CXCursor c)
{
    CXCursor parent = clang_getCursorLexicalParent(c);
    long name_ex = corun__cc_cursor_off(x->t, c, 0);
    size_t ni, rp;

    x->k = NULL;
    if (!placeable(x, c, parent, name_ex)) {
        return CORUN_OK;
    }
    int rc = new_record(x, c);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (!locate_head(x, c, parent, name_ex, &ni, &rp) || !locate_template(x, c, ni)) {
        return CORUN_OK;
    }
    clang_visitChildren(c, param_visit, x);
    if (x->rc != CORUN_OK) {
        return x->rc;
    }
    if (locate_end(x, c, rp)) {
        check_params(x);
    }
    return CORUN_OK;
}

static enum CXChildVisitResult find_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    find_ctx *x = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    (void)parent;

    switch (kind) {
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
        /* a block in a header holds no kernel of this file; skipping them
         * keeps the precompiled CUDA headers (pch.c) from being read in */
        if (corun__cc_cursor_off(x->t, c, 0) >= 0) {
            clang_visitChildren(c, find_visit, x);
        }
        break;
    case CXCursor_UnexposedDecl:
        clang_visitChildren(c, find_visit, x);
        break;
    case CXCursor_FunctionDecl:
    case CXCursor_FunctionTemplate:
        if (corun__cc_has_attr(c, CXCursor_CUDAGlobalAttr)) {
            x->rc = describe(x, c);
        }
        break;
    case CXCursor_StructDecl:
    case CXCursor_ClassDecl:
    case CXCursor_ClassTemplate:
        /* friend kernels */
        if (corun__cc_cursor_off(x->t, c, 0) >= 0) {
            clang_visitChildren(c, find_visit, x);
        }
        break;
    case CXCursor_FriendDecl:
        clang_visitChildren(c, find_visit, x);
        break;
    default:
        break;
    }
    return x->rc == CORUN_OK ? CXChildVisit_Continue : CXChildVisit_Break;
}

int corun__cc_find_kernel_decls(const corun__cc_tu *dev, const corun__cc_src *s,
                                corun__cc_decls *ks, corun__cc_diags *d)
{
    find_ctx x = {dev, s, ks, d, CORUN_OK, 1, "kernel", NULL, 0, 0};

    memset(ks, 0, sizeof(*ks));
    clang_visitChildren(clang_getTranslationUnitCursor(dev->tu), find_visit, &x);
    return x.rc;
}

/* Whether the host-side unit has a function declaration of that name at
 * byte off of the main file. */
static int host_declares(const corun__cc_tu *host, unsigned off, const char *name)
{
    CXSourceLocation loc = clang_getLocationForOffset(host->tu, host->file, off);
    CXCursor c = clang_getCursor(host->tu, loc);
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind != CXCursor_FunctionDecl && kind != CXCursor_FunctionTemplate) {
        c = clang_getCursorSemanticParent(c);
        kind = clang_getCursorKind(c);
    }
    if (kind != CXCursor_FunctionDecl && kind != CXCursor_FunctionTemplate) {
        return 0;
    }
    CXString sp = clang_getCursorSpelling(c);
    int same = strcmp(clang_getCString(sp), name) == 0;
    clang_disposeString(sp);
    return same;
}

int corun__cc_check_host_pass(const corun__cc_tu *host, const corun__cc_tu *dev,
                              corun__cc_decls *ks, corun__cc_diags *d)
{
    for (size_t i = 0; i < ks->n; i++) {
        corun__cc_decl *k = &ks->v[i];
        if (k->refused || k->clone || (!k->first && !k->is_def) ||
            host_declares(host, k->name_off, k->name)) {
            continue;
        }
        corun__cc_diag_at(
            d, CORUN_CC_ERROR, clang_getCursorLocation(k->cursor), "kernel seen by one pass only",
            "kernel '%s': this %s is compiled for the device but not for the host (an #if "
            "__CUDA_ARCH__ around it, an #else with another definition): corun-cc emits the "
            "kernel's worker and launcher here, and the host pass would not have them; keep "
            "one definition for both passes and put the #if inside its body",
            k->name, k->is_def ? "definition" : "first declaration");
        k->refused = 1;
        for (size_t j = 0; j < ks->n; j++) {
            if (strcmp(ks->v[j].usr, k->usr) == 0) {
                ks->v[j].refused = 1;
            }
        }
    }
    (void)dev;
    return CORUN_OK;
}

int corun__cc_describe_function(const corun__cc_tu *dev, const corun__cc_src *s, CXCursor fn,
                                corun__cc_decls *list, corun__cc_diags *d, long *index)
{
    find_ctx x = {dev, s, list, d, CORUN_OK, 0, "function", NULL, 0, 0};

    *index = -1;
    int rc = describe(&x, fn);
    if (rc == CORUN_OK && x.k != NULL && !x.k->refused) {
        *index = (long)(x.k - list->v);
    }
    return rc;
}
