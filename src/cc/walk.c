/*
 * walk.c — what each function's body does, on the device side of the
 * parse: calls (resolved, or every candidate of a name resolved at
 * instantiation), reads of the built-in blockIdx/gridDim, barriers, shared
 * memory, warp-synchronous operations, grid synchronisation, device-side
 * runtime calls, inline PTX, loops that spin or poll, returns and the
 * conditions around them. Each function is walked once; a kernel's own body
 * also records what checks.c needs to judge its returns and uses of
 * blockIdx.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/walk.h"
#include "corun/corun.h"

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */
/* ------------------------------------------------------------------------ */

int corun__cc_name_in(const char *name, const char *const *set)
{
    for (size_t i = 0; set[i] != NULL; i++) {
        if (strcmp(name, set[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static const char *const barrier_names[] = {
    "__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or",
    "__barrier_sync", "__barrier_sync_count", "this_thread_block", NULL};

static const char *const warpsync_names[] = {
    "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync",
    "__match_all_sync", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync", "tiled_partition",
    "coalesced_threads", NULL};

static const char *const grid_names[] = {"this_grid", "this_multi_grid", "this_cluster",
                                         "grid_group", "multi_grid_group", "cluster_group",
                                         NULL};

/* Whether c is declared inside namespace cooperative_groups. */
int corun__cc_in_coop_groups(CXCursor c)
{
    for (int i = 0; i < 16 && !clang_Cursor_isNull(c); i++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_TranslationUnit) {
            break;
        }
        if (k == CXCursor_Namespace && corun__cc_spelled(c, "cooperative_groups")) {
            return 1;
        }
        c = clang_getCursorSemanticParent(c);
    }
    return 0;
}

/* blockIdx / gridDim / blockDim / threadIdx as the CUDA built-ins (not a
 * user variable of that name): 'b','g','d','t', or 0. */
int corun__cc_builtin_var(CXCursor ref)
{
    if (clang_getCursorKind(ref) != CXCursor_VarDecl) {
        return 0;
    }
    CXString ts = clang_getTypeSpelling(clang_getCursorType(ref));
    const char *t = clang_getCString(ts);
    int r = 0;
    if (strstr(t, "__cuda_builtin_blockIdx_t")) {
        r = 'b';
    } else if (strstr(t, "__cuda_builtin_gridDim_t")) {
        r = 'g';
    } else if (strstr(t, "__cuda_builtin_blockDim_t")) {
        r = 'd';
    } else if (strstr(t, "__cuda_builtin_threadIdx_t")) {
        r = 't';
    }
    clang_disposeString(ts);
    return r;
}

static CXCursor strip(CXCursor c)
{
    for (int i = 0; i < 16; i++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        unsigned n = corun__cc_nchildren(c);
        if ((k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr &&
             k != CXCursor_CStyleCastExpr && k != CXCursor_CXXStaticCastExpr) ||
            n == 0) {
            break;
        }
        /* a cast's operand is its last child (a TypeRef may come first) */
        c = corun__cc_child(c, n - 1);
    }
    return c;
}

/* Whether inner's definition lies inside outer's (a lambda in a body). */
static int nested_in(CXCursor inner, CXCursor outer)
{
    CXSourceRange ri = clang_getCursorExtent(inner), ro = clang_getCursorExtent(outer);
    CXFile fi = NULL, fo = NULL, fo2 = NULL;
    unsigned i0, o0, o1;
    clang_getExpansionLocation(clang_getRangeStart(ri), &fi, NULL, NULL, &i0);
    clang_getExpansionLocation(clang_getRangeStart(ro), &fo, NULL, NULL, &o0);
    clang_getExpansionLocation(clang_getRangeEnd(ro), &fo2, NULL, NULL, &o1);
    return fi && fo && fo2 && clang_File_isEqual(fi, fo) && clang_File_isEqual(fo, fo2) &&
           i0 > o0 && i0 < o1;
}

int corun__cc_is_function(enum CXCursorKind k)
{
    return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod ||
           k == CXCursor_FunctionTemplate || k == CXCursor_Constructor ||
           k == CXCursor_Destructor || k == CXCursor_ConversionFunction;
}

static int push_cursor(CXCursor **v, size_t *n, size_t *cap, CXCursor c)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        CXCursor *nv = realloc(*v, nc * sizeof(**v));
        if (nv == NULL) {
            return 0;
        }
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = c;
    return 1;
}

unsigned corun__cc_off_of(const checker *k, CXCursor c)
{
    long o = corun__cc_cursor_off(k->t, c, 0);
    return o < 0 ? 0 : (unsigned)o;
}

/* ------------------------------------------------------------------------ */
/* the function table                                                       */
/* ------------------------------------------------------------------------ */

static long find_fn(checker *k, CXCursor fn)
{
    unsigned h = clang_hashCursor(fn);
    for (size_t i = 0; i < k->n; i++) {
        if (k->v[i].hash == h && clang_equalCursors(k->v[i].fn, fn)) {
            return (long)i;
        }
    }
    return -1;
}

long corun__cc_add_fn(checker *k, CXCursor fn)
{
    long i = find_fn(k, fn);
    if (i >= 0) {
        return i;
    }
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        fnrec *v = realloc(k->v, cap * sizeof(*v));
        if (v == NULL) {
            k->oom = 1;
            return -1;
        }
        k->v = v;
        k->cap = cap;
    }
    fnrec *r = &k->v[k->n];
    memset(r, 0, sizeof(*r));
    r->fn = fn;
    r->hash = clang_hashCursor(fn);
    return (long)k->n++;
}

/* An implicit instantiation of a function template is walked (and cloned)
 * as its template, whose text it is; an explicit specialization has its
 * own text and stays itself. */
static CXCursor pattern(CXCursor def)
{
    if (clang_Cursor_isNull(def)) {
        return def;
    }
    CXCursor t = clang_getSpecializedCursorTemplate(def);
    if (clang_Cursor_isNull(t)) {
        return def;
    }
    CXCursor td = clang_getCursorDefinition(t);
    if (clang_Cursor_isNull(td)) {
        td = t;
    }
    return clang_equalLocations(clang_getCursorLocation(def), clang_getCursorLocation(td)) ? td
                                                                                         : def;
}

/* Adds the function ref names (if it has a body to walk) to the current
 * function's callees; its index, or -1. */
static long add_callee(checker *k, CXCursor ref)
{
    if (clang_Cursor_isNull(ref) || !corun__cc_is_function(clang_getCursorKind(ref))) {
        return -1;
    }
    CXCursor def = pattern(clang_getCursorDefinition(ref));
    if (clang_Cursor_isNull(def)) {
        return -1; /* a builtin or declared only: nothing to walk */
    }
    /* kernels are not callees (a launch from device code is refused) */
    if (corun__cc_has_attr(def, CXCursor_CUDAGlobalAttr)) {
        return -1;
    }
    /* a lambda defined in this body is walked as part of it */
    if (nested_in(def, k->v[k->cur].fn)) {
        return -1;
    }
    long i = corun__cc_add_fn(k, def);
    if (i < 0) {
        return -1;
    }
    fnrec *r = &k->v[k->cur];
    for (size_t j = 0; j < r->ncallees; j++) {
        if (r->callees[j] == (size_t)i) {
            return i;
        }
    }
    if (r->ncallees == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        size_t *v = realloc(r->callees, cap * sizeof(*v));
        if (v == NULL) {
            k->oom = 1;
            return -1;
        }
        r->callees = v;
        r->cap = cap;
    }
    r->callees[r->ncallees++] = (size_t)i;
    return i;
}

/* The name a call calls: the DeclRefExpr or OverloadedDeclRef under its
 * callee expression, or a null cursor. */
static CXCursor call_ref(CXCursor call)
{
    CXCursor c = corun__cc_child(call, 0);
    for (int i = 0; i < 8 && !clang_Cursor_isNull(c); i++) {
        enum CXCursorKind kind = clang_getCursorKind(c);
        if (kind == CXCursor_OverloadedDeclRef ||
            (kind == CXCursor_DeclRefExpr && !clang_Cursor_isNull(clang_getCursorReferenced(c)))) {
            return c;
        }
        if (kind != CXCursor_UnexposedExpr && kind != CXCursor_DeclRefExpr &&
            kind != CXCursor_ParenExpr) {
            break;
        }
        c = corun__cc_child(c, 0);
    }
    return clang_getNullCursor();
}

static void call_args(checker *k, CXCursor call, fcall *f);

static void record_fcall(checker *k, CXCursor call, CXCursor ref, const long *targets, size_t n,
                         int nocap)
{
    fnrec *r = &k->v[k->cur];
    if (r->ncalls == r->capcalls) {
        size_t cap = r->capcalls ? r->capcalls * 2 : 8;
        fcall *v = realloc(r->calls, cap * sizeof(*v));
        if (v == NULL) {
            k->oom = 1;
            return;
        }
        r->calls = v;
        r->capcalls = cap;
    }
    fcall *f = &r->calls[r->ncalls++];
    f->call = call;
    f->ref = ref;
    f->ntargets = n > 4 ? 4 : n;
    memcpy(f->targets, targets, f->ntargets * sizeof(long));
    f->nocap_lambda = nocap;
    call_args(k, call, f);
}

/* ------------------------------------------------------------------------ */
/* walking one function body                                                */
/* ------------------------------------------------------------------------ */

typedef struct overload_ctx {
    checker *k;
    int found;
    long targets[4];
    size_t ntargets;
    CXCursor ref;
} overload_ctx;

static enum CXChildVisitResult overload_visit(CXCursor c, CXCursor p, CXClientData data)
{
    overload_ctx *x = data;
    (void)p;
    if (clang_getCursorKind(c) == CXCursor_OverloadedDeclRef) {
        unsigned n = clang_getNumOverloadedDecls(c);
        for (unsigned i = 0; i < n; i++) {
            long t = add_callee(x->k, clang_getOverloadedDecl(c, i));
            if (t >= 0 && x->ntargets < 4) {
                x->targets[x->ntargets++] = t;
            }
        }
        x->found = 1;
        x->ref = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Scans an asm statement's string literals for instructions that read the
 * hardware block index or end the thread. */
static void check_asm(checker *k, CXCursor c, fnrec *r)
{
    CXToken *toks = NULL;
    unsigned n = 0;
    clang_tokenize(k->t->tu, clang_getCursorExtent(c), &toks, &n);
    for (unsigned i = 0; i < n; i++) {
        if (clang_getTokenKind(toks[i]) != CXToken_Literal) {
            continue;
        }
        CXString sp = clang_getTokenSpelling(k->t->tu, toks[i]);
        const char *lit = clang_getCString(sp);
        const char *what = NULL;
        if (strstr(lit, "%ctaid") || strstr(lit, "%nctaid")) {
            what = "inline PTX reading %ctaid/%nctaid";
        } else if (strstr(lit, "%clusterid") || strstr(lit, "%nclusterid") ||
                   strstr(lit, "%cluster_ctaid")) {
            what = "inline PTX reading cluster registers";
        } else if (strstr(lit, "exit;") || strstr(lit, "exit ;")) {
            what = "inline PTX exit";
        }
        if (strstr(lit, "bar.") || strstr(lit, "barrier.")) {
            r->barrier = 1;
        }
        if (strstr(lit, "shfl.") || strstr(lit, "vote.") || strstr(lit, "bar.warp")) {
            r->warpsync = 1;
        }
        if (what != NULL && !r->asmbad) {
            r->asmbad = 1;
            r->asm_at = c;
            snprintf(r->asm_what, sizeof(r->asm_what), "%s", what);
        }
        clang_disposeString(sp);
    }
    clang_disposeTokens(k->t->tu, toks, n);
}

/* What an lvalue names (x, x.f, x.f.g: x), or a null cursor. */
static CXCursor lvalue_ref(CXCursor lhs)
{
    for (int i = 0; i < 8; i++) {
        lhs = strip(lhs);
        if (clang_getCursorKind(lhs) != CXCursor_MemberRefExpr) {
            break;
        }
        lhs = corun__cc_child(lhs, 0);
        if (clang_Cursor_isNull(lhs)) {
            return lhs;
        }
    }
    return clang_getCursorKind(lhs) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(lhs)
                                                            : clang_getNullCursor();
}

/* Whether ref names a variable or parameter local to a function. */
static int is_local(CXCursor ref)
{
    enum CXCursorKind kind = clang_getCursorKind(ref);
    if (kind == CXCursor_ParmDecl) {
        return 1;
    }
    return kind == CXCursor_VarDecl &&
           corun__cc_is_function(clang_getCursorKind(clang_getCursorSemanticParent(ref)));
}

static int in_list(const CXCursor *v, size_t n, CXCursor c)
{
    for (size_t i = 0; i < n; i++) {
        if (clang_equalCursors(v[i], c)) {
            return 1;
        }
    }
    return 0;
}

/* Facts of one part of a loop (its condition, increment or body), or of an
 * expression: gridDim (read, or through a local variable given a value of
 * it), an atomic call, a volatile read; the local variables it reads; the
 * local variables it advances (++, --, op=, x = f(x)): a loop that advances
 * what its condition reads counts or strides, it does not wait. */
typedef struct spin_ctx {
    checker *k;
    int grid, atomic, vol;
    CXCursor *refs, *adv;
    size_t nrefs, caprefs, nadv, capadv;
} spin_ctx;

static enum CXChildVisitResult refs_visit(CXCursor c, CXCursor p, CXClientData data)
{
    CXCursor *target = data;
    (void)p;
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
        clang_equalCursors(clang_getCursorReferenced(c), *target)) {
        *target = clang_getNullCursor();
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* The local variable an lvalue names (x, x.f), or a null cursor. */
static CXCursor lvalue_var(CXCursor lhs)
{
    CXCursor ref = lvalue_ref(lhs);
    return !clang_Cursor_isNull(ref) && is_local(ref) ? ref : clang_getNullCursor();
}

static void note_advance(spin_ctx *x, CXCursor var)
{
    if (!clang_Cursor_isNull(var) && !push_cursor(&x->adv, &x->nadv, &x->capadv, var)) {
        x->k->oom = 1;
    }
}

static enum CXChildVisitResult spin_visit(CXCursor c, CXCursor p, CXClientData data)
{
    spin_ctx *x = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    (void)p;
    if (kind == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        if (corun__cc_builtin_var(ref) == 'g' ||
            (!clang_Cursor_isNull(ref) && in_list(x->k->gvars, x->k->ngvars, ref))) {
            x->grid = 1;
        }
        if (!clang_Cursor_isNull(ref) && is_local(ref) &&
            !push_cursor(&x->refs, &x->nrefs, &x->caprefs, ref)) {
            x->k->oom = 1;
        }
    }
    if (kind == CXCursor_CallExpr) {
        CXString sp = clang_getCursorSpelling(c);
        const char *nm = clang_getCString(sp);
        if (strncmp(nm, "atomic", 6) == 0 || strncmp(nm, "__atomic", 8) == 0 ||
            strncmp(nm, "__nv_atomic", 11) == 0 || strcmp(nm, "load") == 0) {
            x->atomic = 1;
        }
        clang_disposeString(sp);
    }
    if (kind == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(c);
        if (op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PostDec ||
            op == CXUnaryOperator_PreInc || op == CXUnaryOperator_PreDec) {
            note_advance(x, lvalue_var(corun__cc_child(c, 0)));
        }
    }
    if (kind == CXCursor_CompoundAssignOperator) {
        note_advance(x, lvalue_var(corun__cc_child(c, 0)));
    }
    if (kind == CXCursor_BinaryOperator &&
        clang_getCursorBinaryOperatorKind(c) == CXBinaryOperator_Assign) {
        CXCursor var = lvalue_var(corun__cc_child(c, 0));
        CXCursor rhs = corun__cc_child(c, 1), seen = var;
        if (!clang_Cursor_isNull(var) && !clang_Cursor_isNull(rhs)) {
            refs_visit(rhs, c, &seen);
            if (!clang_Cursor_isNull(seen)) {
                clang_visitChildren(rhs, refs_visit, &seen);
            }
            if (clang_Cursor_isNull(seen)) {
                note_advance(x, var); /* x = f(x) */
            }
        }
    }
    if (clang_isExpression(kind) && clang_isVolatileQualifiedType(clang_getCursorType(c))) {
        x->vol = 1;
    }
    return CXChildVisit_Recurse;
}

static void spin_scan(spin_ctx *x, CXCursor c, CXCursor parent)
{
    spin_visit(c, parent, x);
    clang_visitChildren(c, spin_visit, x);
}

static void spin_free(spin_ctx *x)
{
    free(x->refs);
    free(x->adv);
}

/* The spelling offset where c begins. */
static unsigned start_off(CXCursor c)
{
    unsigned off = 0;
    clang_getSpellingLocation(clang_getRangeStart(clang_getCursorExtent(c)), NULL, NULL, NULL,
                              &off);
    return off;
}

/* Which children of a for statement (all but its body) are its condition
 * and its increment, by the top-level semicolons of its header; 0 when the
 * header cannot be read so (a macro spells it). */
static int for_parts(checker *k, CXCursor loop, unsigned n, int *cond_i, int *inc_i)
{
    CXToken *toks = NULL;
    unsigned nt = 0, semi[2] = {0, 0}, close = 0;
    int ns = 0, depth = 0;

    *cond_i = *inc_i = -1;
    clang_tokenize(k->t->tu, clang_getCursorExtent(loop), &toks, &nt);
    for (unsigned i = 0; i < nt && close == 0; i++) {
        CXString sp = clang_getTokenSpelling(k->t->tu, toks[i]);
        const char *t = clang_getCString(sp);
        unsigned off = 0;
        clang_getSpellingLocation(clang_getTokenLocation(k->t->tu, toks[i]), NULL, NULL, NULL,
                                  &off);
        if (strcmp(t, "(") == 0) {
            depth++;
        } else if (strcmp(t, ")") == 0 && --depth == 0) {
            close = off;
        } else if (strcmp(t, ";") == 0 && depth == 1 && ns < 2) {
            semi[ns++] = off;
        }
        clang_disposeString(sp);
    }
    clang_disposeTokens(k->t->tu, toks, nt);
    if (ns < 2 || close == 0) {
        return 0;
    }
    for (unsigned i = 0; i + 1 < n; i++) {
        unsigned off = start_off(corun__cc_child(loop, i));
        if (off > semi[0] && off < semi[1]) {
            *cond_i = (int)i;
        } else if (off > semi[1] && off < close) {
            *inc_i = (int)i;
        }
    }
    return 1;
}

/* The index of parameter p of function fn, or -1. */
static int param_index(CXCursor fn, CXCursor p)
{
    int n = clang_Cursor_getNumArguments(fn);
    for (int i = 0; i < n && i < 32; i++) {
        if (clang_equalCursors(clang_Cursor_getArgument(fn, (unsigned)i), p)) {
            return i;
        }
    }
    return -1;
}

/* A loop that waits: nothing it advances (in its increment or body) is
 * read by its condition. One that waits until an atomic or volatile read
 * reaches a value of gridDim is a cross-block spin barrier; one that waits
 * on such a read otherwise polls (and, if the condition reads a parameter,
 * is a barrier where a caller passes gridDim there: corun__cc_spin_flow). */
static void check_loop(checker *k, CXCursor loop, fnrec *r)
{
    enum CXCursorKind kind = clang_getCursorKind(loop);
    unsigned n = corun__cc_nchildren(loop);
    spin_ctx cond = {.k = k};
    spin_ctx rest = {.k = k};
    int cond_i = -1, inc_i = -1, parts = 0, waits = 1;
    if (n == 0) {
        return;
    }
    if (kind == CXCursor_ForStmt) {
        parts = for_parts(k, loop, n, &cond_i, &inc_i);
    }
    for (unsigned i = 0; i < n; i++) {
        CXCursor ch = corun__cc_child(loop, i);
        int is_body = kind == CXCursor_DoStmt ? i == 0 : i == n - 1;
        int is_cond = parts ? (int)i == cond_i : !is_body;
        if (parts && !is_body && !is_cond && (int)i != inc_i) {
            continue; /* the initialisation runs once */
        }
        spin_scan(is_cond ? &cond : &rest, ch, loop);
    }
    for (size_t i = 0; i < cond.nrefs && waits; i++) {
        waits = !in_list(rest.adv, rest.nadv, cond.refs[i]) &&
                !in_list(cond.adv, cond.nadv, cond.refs[i]);
    }
    if (waits && cond.grid && (cond.atomic || cond.vol || rest.atomic || rest.vol) && !r->spin) {
        r->spin = 1;
        r->spin_at = loop;
    } else if (waits && !cond.grid && (cond.atomic || cond.vol)) {
        if (!r->poll) {
            r->poll = 1;
            r->poll_at = loop;
        }
        for (size_t i = 0; i < cond.nrefs; i++) {
            int pi = clang_getCursorKind(cond.refs[i]) == CXCursor_ParmDecl
                         ? param_index(r->fn, cond.refs[i])
                         : -1;
            if (pi >= 0) {
                if (r->spin_params == 0) {
                    r->spin_param_at = loop;
                }
                r->spin_params |= 1u << pi;
            }
        }
    }
    spin_free(&cond);
    spin_free(&rest);
}

/* Which of a call's arguments are computed from gridDim, and which are the
 * walked function's own parameters (for corun__cc_spin_flow). */
static void call_args(checker *k, CXCursor call, fcall *f)
{
    int n = clang_Cursor_getNumArguments(call);

    f->grid_args = 0;
    memset(f->arg_param, -1, sizeof(f->arg_param));
    for (int i = 0; i < n && i < 16; i++) {
        spin_ctx x = {.k = k};
        CXCursor a = clang_Cursor_getArgument(call, (unsigned)i);
        if (clang_Cursor_isNull(a)) {
            continue;
        }
        spin_scan(&x, a, call);
        if (x.grid) {
            f->grid_args |= 1u << i;
        }
        for (size_t j = 0; j < x.nrefs && f->arg_param[i] < 0; j++) {
            if (clang_getCursorKind(x.refs[j]) == CXCursor_ParmDecl) {
                int pi = param_index(k->v[k->cur].fn, x.refs[j]);
                f->arg_param[i] = (signed char)(pi >= 0 && pi < 32 ? pi : -1);
            }
        }
        spin_free(&x);
    }
}

void corun__cc_spin_flow(checker *k, const reach *rs)
{
    for (int changed = 1, round = 0; changed && round < 64; round++) {
        changed = 0;
        for (size_t q = 0; q < rs->n; q++) {
            fnrec *r = &k->v[rs->v[q]];
            for (size_t c = 0; c < r->ncalls; c++) {
                const fcall *f = &r->calls[c];
                for (size_t t = 0; t < f->ntargets; t++) {
                    const fnrec *callee = f->targets[t] >= 0 ? &k->v[f->targets[t]] : NULL;
                    unsigned bits = callee != NULL ? callee->spin_params : 0;
                    for (int i = 0; bits != 0 && i < 16; i++) {
                        if ((bits & (1u << i)) == 0) {
                            continue;
                        }
                        if ((f->grid_args & (1u << i)) != 0 && !r->spin) {
                            r->spin = 1;
                            r->spin_at = callee->spin_param_at;
                            changed = 1;
                        } else if (f->arg_param[i] >= 0 &&
                                   (r->spin_params & (1u << f->arg_param[i])) == 0) {
                            if (r->spin_params == 0) {
                                r->spin_param_at = callee->spin_param_at;
                            }
                            r->spin_params |= 1u << f->arg_param[i];
                            changed = 1;
                        }
                    }
                }
            }
        }
    }
}

/* A local variable given a value computed from gridDim (declared with it,
 * or assigned it): var's condition reads count as gridDim's. */
static void note_grid_value(checker *k, CXCursor var, CXCursor value)
{
    spin_ctx x = {.k = k};
    if (clang_Cursor_isNull(var) || clang_Cursor_isNull(value)) {
        return;
    }
    spin_scan(&x, value, var);
    if (x.grid && !in_list(k->gvars, k->ngvars, var) &&
        !push_cursor(&k->gvars, &k->ngvars, &k->capgvars, var)) {
        k->oom = 1;
    }
    spin_free(&x);
}

static int lambda_has_default_capture(checker *k, CXCursor lambda)
{
    long a, b;
    corun__cc_extent(k->t, k->s, lambda, &a, &b);
    if (a < 0) {
        return 1; /* not in this file: cannot tell, nvcc will say */
    }
    size_t i = corun__cc_tok_from(k->s, (unsigned)a);
    if (!corun__cc_tok_is(k->s, i, "[")) {
        return 1;
    }
    if (corun__cc_tok_is(k->s, i + 1, "=")) {
        return 1;
    }
    return corun__cc_tok_is(k->s, i + 1, "&") &&
           (corun__cc_tok_is(k->s, i + 2, ",") || corun__cc_tok_is(k->s, i + 2, "]"));
}

static void note_modified(checker *k, CXCursor lhs)
{
    if (k->kw == NULL) {
        return;
    }
    CXCursor ref = lvalue_ref(lhs);
    if (!clang_Cursor_isNull(ref) &&
        !push_cursor(&k->kw->modified, &k->kw->nmod, &k->kw->capmod, ref)) {
        k->oom = 1;
    }
}

/* The enclosing statements of the node being visited that decide whether
 * it runs: loops (all their parts) and the conditions of if/switch. */
static void enclosing(checker *k, CXCursor node, CXCursor **conds, size_t *nconds,
                      size_t *capc, CXCursor **loops, size_t *nloops, size_t *capl)
{
    CXCursor inner = node;
    for (size_t i = k->depth; i-- > 0;) {
        CXCursor a = k->stack[i];
        enum CXCursorKind kind = clang_getCursorKind(a);
        if (kind == CXCursor_LambdaExpr) {
            break;
        }
        if (kind == CXCursor_WhileStmt || kind == CXCursor_ForStmt ||
            kind == CXCursor_DoStmt || kind == CXCursor_CXXForRangeStmt) {
            if (!push_cursor(loops, nloops, capl, a)) {
                k->oom = 1;
            }
        }
        if (kind == CXCursor_IfStmt || kind == CXCursor_SwitchStmt || kind == CXCursor_WhileStmt ||
            kind == CXCursor_ForStmt || kind == CXCursor_DoStmt ||
            kind == CXCursor_CXXForRangeStmt) {
            unsigned n = corun__cc_nchildren(a);
            for (unsigned j = 0; j < n; j++) {
                CXCursor ch = corun__cc_child(a, j);
                if (clang_equalCursors(ch, inner)) {
                    continue;
                }
                enum CXCursorKind ck = clang_getCursorKind(ch);
                if (ck == CXCursor_CompoundStmt || ck == CXCursor_NullStmt ||
                    ck == CXCursor_ReturnStmt) {
                    continue;
                }
                if (kind == CXCursor_IfStmt && clang_isStatement(ck) &&
                    ck != CXCursor_DeclStmt) {
                    continue;
                }
                if (!push_cursor(conds, nconds, capc, ch)) {
                    k->oom = 1;
                }
            }
        }
        inner = a;
    }
}

static int in_lambda(const checker *k)
{
    for (size_t i = 0; i < k->depth; i++) {
        if (clang_getCursorKind(k->stack[i]) == CXCursor_LambdaExpr) {
            return 1;
        }
    }
    return 0;
}

static void record_call(checker *k, CXCursor c, long callee, int barrier)
{
    kernel_walk *kw = k->kw;
    if (kw == NULL) {
        return;
    }
    if (kw->ncalls == kw->capcalls) {
        size_t cap = kw->capcalls ? kw->capcalls * 2 : 16;
        call_rec *v = realloc(kw->calls, cap * sizeof(*v));
        if (v == NULL) {
            k->oom = 1;
            return;
        }
        kw->calls = v;
        kw->capcalls = cap;
    }
    call_rec *r = &kw->calls[kw->ncalls++];
    memset(r, 0, sizeof(*r));
    r->off = corun__cc_off_of(k, c);
    r->callee = callee;
    r->barrier = barrier;
    CXCursor *conds = NULL, *loops = NULL;
    size_t nc = 0, cc = 0, nl = 0, cl = 0;
    enclosing(k, c, &conds, &nc, &cc, &loops, &nl, &cl);
    free(conds);
    r->loops = loops;
    r->nloops = nl;
}

static void record_return(checker *k, CXCursor c)
{
    kernel_walk *kw = k->kw;
    if (kw == NULL || in_lambda(k)) {
        return;
    }
    if (kw->nrets == kw->caprets) {
        size_t cap = kw->caprets ? kw->caprets * 2 : 8;
        ret_rec *v = realloc(kw->rets, cap * sizeof(*v));
        if (v == NULL) {
            k->oom = 1;
            return;
        }
        kw->rets = v;
        kw->caprets = cap;
    }
    ret_rec *r = &kw->rets[kw->nrets++];
    memset(r, 0, sizeof(*r));
    r->off = corun__cc_off_of(k, c);
    r->at = c;
    size_t cc = 0, cl = 0;
    enclosing(k, c, &r->conds, &r->nconds, &cc, &r->loops, &r->nloops, &cl);
}

static void visit_body(checker *k, CXCursor c);

/* The record of the function being walked. The table may grow while its
 * body is walked (add_callee): take it anew after anything that adds a
 * function, never keep it. */
static fnrec *walked(checker *k)
{
    return &k->v[k->cur];
}

/* Grid synchronisation through cooperative_groups::nm at c (the first
 * place is kept). */
static void note_grid(fnrec *r, CXCursor c, const char *nm)
{
    if (!r->grid) {
        r->grid = 1;
        r->grid_at = c;
        snprintf(r->grid_what, sizeof(r->grid_what), "cooperative_groups::%s", nm);
    }
}

/* What call c of nm (ref: what it names) does by its name: a barrier, a
 * warp-synchronous operation, grid synchronisation, a CUDA runtime call
 * from device code. Whether it is a barrier. */
static int note_call_kind(fnrec *r, CXCursor c, CXCursor ref, const char *nm)
{
    int barrier = 0;

    if (corun__cc_name_in(nm, barrier_names)) {
        r->barrier = barrier = 1;
    }
    if (corun__cc_name_in(nm, warpsync_names)) {
        r->warpsync = 1;
    }
    int grid_sync = corun__cc_name_in(nm, grid_names) && (clang_Cursor_isNull(ref) || corun__cc_in_coop_groups(ref));
    if (strcmp(nm, "sync") == 0 && !clang_Cursor_isNull(ref) && corun__cc_in_coop_groups(ref)) {
        CXCursor cls = clang_getCursorSemanticParent(ref);
        grid_sync |= corun__cc_spelled(cls, "grid_group") ||
                     corun__cc_spelled(cls, "multi_grid_group") ||
                     corun__cc_spelled(cls, "cluster_group");
    }
    if (grid_sync) {
        note_grid(r, c, nm);
    }
    if (strncmp(nm, "cuda", 4) == 0 && nm[4] >= 'A' && nm[4] <= 'Z' && !r->dp) {
        r->dp = 1;
        r->dp_at = c;
        snprintf(r->dp_what, sizeof(r->dp_what), "%s called from device code", nm);
    }
    return barrier;
}

/* Whether the node being visited lies inside a lambda without a
 * capture-default. */
static int in_nocap_lambda(checker *k)
{
    int nocap = 0;

    for (size_t i = k->depth; i-- > 0;) {
        if (clang_getCursorKind(k->stack[i]) == CXCursor_LambdaExpr &&
            !lambda_has_default_capture(k, k->stack[i])) {
            nocap = 1;
        }
    }
    return nocap;
}

/* Adds what call c may reach to the walked function's callees and calls
 * (ref: what the call names; cref: the name as written). The callee's
 * index, or -1 when the call names no one function with a body. */
static long follow_call(checker *k, CXCursor c, CXCursor ref, CXCursor cref, int nocap)
{
    if (!clang_Cursor_isNull(ref) && !corun__cc_is_function(clang_getCursorKind(ref))) {
        walked(k)->unresolved = 1; /* through an object or a pointer: op(x), fp(x) */
        return -1;
    }
    if (!clang_Cursor_isNull(ref)) {
        long t = add_callee(k, ref);
        if (t >= 0 && !clang_Cursor_isNull(cref)) {
            record_fcall(k, c, cref, &t, 1, nocap);
        }
        return t;
    }
    /* a dependent call: every candidate the name can mean */
    overload_ctx x = {k, 0, {0, 0, 0, 0}, 0, clang_getNullCursor()};
    CXCursor fe = corun__cc_child(c, 0);
    if (!clang_Cursor_isNull(fe) && overload_visit(fe, c, &x) == CXChildVisit_Recurse) {
        clang_visitChildren(fe, overload_visit, &x);
    }
    if (!x.found) {
        walked(k)->unresolved = 1;
    } else if (x.ntargets > 0) {
        record_fcall(k, c, x.ref, x.targets, x.ntargets, nocap);
    }
    return -1;
}

static void visit_call(checker *k, CXCursor c)
{
    CXCursor ref = clang_getCursorReferenced(c);
    CXString sp = clang_getCursorSpelling(c);
    int barrier = note_call_kind(walked(k), c, ref, clang_getCString(sp));
    clang_disposeString(sp);
    CXCursor cref = call_ref(c);
    if (!clang_Cursor_isNull(cref) &&
        !push_cursor(&k->callee_refs, &k->nrefs, &k->caprefs, cref)) {
        k->oom = 1;
    }
    long callee = follow_call(k, c, ref, cref, in_nocap_lambda(k));
    record_call(k, c, callee, barrier);
}

/* A use c of blockIdx/gridDim in a kernel's own body that the body's
 * parameters of those names would not cover: ::blockIdx, one in a lambda
 * without a capture-default, one in a local class (the first of each). */
static void note_unshadowed(checker *k, CXCursor c)
{
    kernel_walk *kw = k->kw;

    if (!kw->qualified_blockidx) {
        /* ::blockIdx names the hardware index past any shadowing */
        long o = corun__cc_cursor_off(k->t, c, 1);
        size_t ti = o >= 0 ? corun__cc_tok_from(k->s, (unsigned)o) : 0;
        if (o >= 0 && ti > 0 && corun__cc_tok_is(k->s, ti - 1, "::")) {
            kw->qualified_blockidx = 1;
            kw->qualified_at = c;
        }
    }
    for (size_t i = k->depth; i-- > 0;) {
        enum CXCursorKind ak = clang_getCursorKind(k->stack[i]);
        if (ak == CXCursor_LambdaExpr && !lambda_has_default_capture(k, k->stack[i]) &&
            !kw->lambda_blockidx) {
            kw->lambda_blockidx = 1;
            kw->lambda_at = c;
        }
        if ((ak == CXCursor_StructDecl || ak == CXCursor_ClassDecl ||
             ak == CXCursor_UnionDecl) && !kw->local_class_blockidx) {
            kw->local_class_blockidx = 1;
            kw->local_at = c;
        }
    }
}

static void visit_decl_ref(checker *k, CXCursor c)
{
    CXCursor ref = clang_getCursorReferenced(c);
    int b = corun__cc_builtin_var(ref);

    if ((b == 'b' || b == 'g') && !walked(k)->blockidx) {
        walked(k)->blockidx = 1;
        walked(k)->blockidx_at = c;
    }
    if ((b == 'b' || b == 'g') && k->kw != NULL) {
        note_unshadowed(k, c);
    }
    if (!clang_Cursor_isNull(ref) && corun__cc_is_function(clang_getCursorKind(ref))) {
        long t = add_callee(k, ref);
        int called = 0;
        for (size_t i = 0; i < k->nrefs && !called; i++) {
            called = clang_equalCursors(k->callee_refs[i], c);
        }
        if (t >= 0 && !called) {
            k->v[t].addr_taken = 1;
        }
    }
}

/* A cooperative_groups type: a grid group, a block, a warp-level group. */
static void visit_type_ref(checker *k, CXCursor c)
{
    CXCursor ref = clang_getCursorReferenced(c);
    if (clang_Cursor_isNull(ref) || !corun__cc_in_coop_groups(ref)) {
        return;
    }
    fnrec *r = walked(k);
    CXString sp = clang_getCursorSpelling(ref);
    const char *nm = clang_getCString(sp);
    if (corun__cc_name_in(nm, grid_names)) {
        note_grid(r, c, nm);
    } else if (strcmp(nm, "thread_block") == 0) {
        r->barrier = 1;
    } else if (strcmp(nm, "thread_block_tile") == 0 || strcmp(nm, "coalesced_group") == 0) {
        r->warpsync = 1;
    }
    clang_disposeString(sp);
}

/* ++, -- and & modify their operand; &blockIdx is refused in a kernel. */
static void visit_unary(checker *k, CXCursor c)
{
    enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(c);
    if (op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PostDec ||
        op == CXUnaryOperator_PreInc || op == CXUnaryOperator_PreDec ||
        op == CXUnaryOperator_AddrOf) {
        note_modified(k, corun__cc_child(c, 0));
    }
    if (op == CXUnaryOperator_AddrOf && k->kw != NULL) {
        CXCursor sub = strip(corun__cc_child(c, 0));
        int b = clang_getCursorKind(sub) == CXCursor_DeclRefExpr
                    ? corun__cc_builtin_var(clang_getCursorReferenced(sub))
                    : 0;
        if ((b == 'b' || b == 'g') && !k->kw->addr_blockidx) {
            k->kw->addr_blockidx = 1;
            k->kw->addr_at = c;
        }
    }
}

static enum CXChildVisitResult body_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    checker *k = data;
    (void)parent;

    switch (clang_getCursorKind(c)) {
    case CXCursor_CallExpr:
        visit_call(k, c);
        break;
    case CXCursor_DeclRefExpr:
        visit_decl_ref(k, c);
        break;
    case CXCursor_TypeRef:
    case CXCursor_TemplateRef:
        visit_type_ref(k, c);
        break;
    case CXCursor_VarDecl: {
        if (corun__cc_has_attr(c, CXCursor_CUDASharedAttr)) {
            walked(k)->shared = 1;
        }
        unsigned nc = corun__cc_nchildren(c);
        CXCursor init = nc > 0 ? corun__cc_child(c, nc - 1) : clang_getNullCursor();
        if (!clang_Cursor_isNull(init) && clang_isExpression(clang_getCursorKind(init))) {
            note_grid_value(k, c, init);
        }
        break;
    }
    case CXCursor_AsmStmt:
        check_asm(k, c, walked(k));
        break;
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
    case CXCursor_ForStmt:
        check_loop(k, c, walked(k));
        break;
    case CXCursor_ReturnStmt:
        record_return(k, c);
        break;
    case CXCursor_BinaryOperator:
    case CXCursor_CompoundAssignOperator: {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(c);
        if (op >= CXBinaryOperator_Assign && op <= CXBinaryOperator_OrAssign) {
            note_modified(k, corun__cc_child(c, 0));
            note_grid_value(k, lvalue_var(corun__cc_child(c, 0)), corun__cc_child(c, 1));
        }
        break;
    }
    case CXCursor_UnaryOperator:
        visit_unary(k, c);
        break;
    default:
        break;
    }
    visit_body(k, c);
    return CXChildVisit_Continue;
}

/* Visits the children of c with c on the ancestor stack. */
static void visit_body(checker *k, CXCursor c)
{
    if (k->depth >= MAX_DEPTH) {
        return;
    }
    k->stack[k->depth++] = c;
    clang_visitChildren(c, body_visit, k);
    k->depth--;
}

void corun__cc_walk_fn(checker *k, size_t i, kernel_walk *kw)
{
    if (k->v[i].walked) {
        return;
    }
    k->v[i].walked = 1;
    size_t saved_cur = k->cur;
    kernel_walk *saved_kw = k->kw;
    size_t saved_depth = k->depth;
    k->cur = i;
    k->kw = kw;
    k->depth = 0;
    visit_body(k, k->v[i].fn);
    k->cur = saved_cur;
    k->kw = saved_kw;
    k->depth = saved_depth;
}

/* ------------------------------------------------------------------------ */

/* per kernel                                                               */
/* ------------------------------------------------------------------------ */


static int reached(const reach *rs, size_t i)
{
    for (size_t j = 0; j < rs->n; j++) {
        if (rs->v[j] == i) {
            return 1;
        }
    }
    return 0;
}

/* Everything the function at index root calls, transitively (root first). */
int corun__cc_collect(checker *k, size_t root, reach *rs)
{
    rs->n = 0;
    if (rs->cap == 0) {
        rs->v = malloc(16 * sizeof(size_t));
        if (rs->v == NULL) {
            return 0;
        }
        rs->cap = 16;
    }
    rs->v[rs->n++] = root;
    for (size_t q = 0; q < rs->n; q++) {
        corun__cc_walk_fn(k, rs->v[q], NULL);
        if (k->oom) {
            return 0;
        }
        fnrec *r = &k->v[rs->v[q]];
        for (size_t j = 0; j < r->ncallees; j++) {
            size_t c = r->callees[j];
            if (reached(rs, c)) {
                continue;
            }
            if (rs->n == rs->cap) {
                size_t *nv = realloc(rs->v, rs->cap * 2 * sizeof(size_t));
                if (nv == NULL) {
                    return 0;
                }
                rs->v = nv;
                rs->cap *= 2;
            }
            rs->v[rs->n++] = c;
        }
    }
    return 1;
}


CORUN__CC_PRINTF(4, 5)
void corun__cc_refuse_at(checker *k, CXCursor at, const char *construct, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    corun__cc_diag_at(k->d, CORUN_CC_ERROR, clang_getCursorLocation(at), construct, "%s", msg);
}

void corun__cc_fn_name(CXCursor fn, char *out, size_t n)
{
    CXString sp = clang_getCursorSpelling(fn);
    snprintf(out, n, "%s", clang_getCString(sp));
    clang_disposeString(sp);
}

