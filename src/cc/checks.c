/*
 * checks.c — what a kernel's code does, as the GPU will run it (the device
 * side of the parse), and whether a worker can run it safely.
 *
 * A worker runs the original blocks one after another with a virtual
 * blockIdx/gridDim given to the body as parameters, and may leave between
 * chunks of blocks (preemption, eviction). So corun-cc refuses, with the
 * place and the reason:
 *  - grid-wide synchronisation (cooperative_groups this_grid/grid_group,
 *    clusters): blocks that are not running cannot arrive;
 *  - loops that wait for a count of the grid's blocks (a loop condition
 *    with gridDim next to an atomic or volatile read): the same deadlock,
 *    detected by this pattern only (docs/corun-cc.md says what is missed);
 *  - dynamic parallelism (launches or CUDA runtime calls in device code);
 *  - functions other than the kernel that read blockIdx/gridDim, and inline
 *    PTX that reads %ctaid/%nctaid or exits: they would see the worker;
 *  - a return that some threads of a block may take before a barrier: the
 *    returning threads would reach the worker's barrier instead;
 *  - uses of blockIdx/gridDim that the shadowing parameters do not cover
 *    (address taken, lambdas without a capture-default, local classes).
 * It also decides the worker kind: CORUN_SHARED when the kernel or anything
 * it calls uses a barrier, shared memory or warp-synchronous operations.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"
#include "corun/corun.h"

#define MAX_DEPTH 512

/* What one function's own body does. */
struct fcall;

typedef struct fnrec {
    CXCursor fn;
    unsigned hash;
    int barrier, shared, warpsync, unresolved;
    int blockidx, grid, dp, asmbad, spin, poll;
    CXCursor blockidx_at, grid_at, dp_at, asm_at, spin_at, poll_at;
    char grid_what[64], dp_what[64], asm_what[64];
    size_t *callees;
    size_t ncallees, cap;
    struct fcall *calls; /* calls of functions with a definition in the unit */
    size_t ncalls, capcalls;
    int addr_taken;      /* named other than in a call */
    int walked;
} fnrec;

/* One call in a function's body: the callee's name, and the functions it
 * may reach (several for a name resolved at instantiation). */
typedef struct fcall {
    CXCursor call, ref;
    long targets[4];
    size_t ntargets;
    int nocap_lambda;    /* inside a lambda without a capture-default */
} fcall;

typedef struct ret_rec {
    unsigned off;
    CXCursor at;
    CXCursor *conds;
    size_t nconds;
    CXCursor *loops;
    size_t nloops;
} ret_rec;

typedef struct call_rec {
    unsigned off;
    long callee;       /* fnrec index or -1 */
    int barrier;       /* a barrier itself */
    CXCursor *loops;
    size_t nloops;
} call_rec;

/* Extra records kept while walking a kernel's own body. */
typedef struct kernel_walk {
    ret_rec *rets;
    size_t nrets, caprets;
    call_rec *calls;
    size_t ncalls, capcalls;
    CXCursor *modified;
    size_t nmod, capmod;
    int addr_blockidx, lambda_blockidx, local_class_blockidx, qualified_blockidx;
    CXCursor addr_at, lambda_at, local_at, qualified_at;
} kernel_walk;

typedef struct checker {
    const corun__cc_tu *t;
    const corun__cc_src *s;
    corun__cc_diags *d;
    corun__cc_kernels *clones;
    corun__cc_callsites *sites;
    fnrec *v;
    size_t n, cap;
    int oom;
    /* the walk in progress */
    CXCursor *callee_refs; /* names being called (not taken as values) */
    size_t nrefs, caprefs;
    size_t cur;
    kernel_walk *kw;
    CXCursor stack[MAX_DEPTH];
    size_t depth;
} checker;

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */
/* ------------------------------------------------------------------------ */

static int name_in(const char *name, const char *const *set)
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

/* Functions whose result is the same in every thread given uniform
 * arguments, or block-wide by definition. */
static const char *const uniform_calls[] = {
    "min", "max", "umin", "umax", "llmin", "llmax", "ullmin", "ullmax", "abs", "labs", "llabs",
    "fminf", "fmaxf", "fmin", "fmax", "__syncthreads_count", "__syncthreads_and",
    "__syncthreads_or", NULL};

/* Whether c is declared inside namespace cooperative_groups. */
static int in_cooperative_groups(CXCursor c)
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
static int builtin_var(CXCursor ref)
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

static int is_function_kind(enum CXCursorKind k)
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

static unsigned off_of(const checker *k, CXCursor c)
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

static long add_fn(checker *k, CXCursor fn)
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
    if (clang_Cursor_isNull(ref) || !is_function_kind(clang_getCursorKind(ref))) {
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
    long i = add_fn(k, def);
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

/* Facts of a loop condition: gridDim, an atomic call, a volatile read. */
typedef struct spin_ctx {
    int grid, atomic, vol;
} spin_ctx;

static enum CXChildVisitResult spin_visit(CXCursor c, CXCursor p, CXClientData data)
{
    spin_ctx *x = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    (void)p;
    if (kind == CXCursor_DeclRefExpr && builtin_var(clang_getCursorReferenced(c)) == 'g') {
        x->grid = 1;
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
    if (clang_isExpression(kind) && clang_isVolatileQualifiedType(clang_getCursorType(c))) {
        x->vol = 1;
    }
    return CXChildVisit_Recurse;
}

static void check_loop(checker *k, CXCursor loop, fnrec *r)
{
    enum CXCursorKind kind = clang_getCursorKind(loop);
    unsigned n = corun__cc_nchildren(loop);
    spin_ctx cond = {0, 0, 0}, all = {0, 0, 0};
    (void)k;
    if (n == 0) {
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        CXCursor ch = corun__cc_child(loop, i);
        int is_body = kind == CXCursor_DoStmt ? i == 0 : i == n - 1;
        spin_visit(ch, loop, is_body ? &all : &cond);
        clang_visitChildren(ch, spin_visit, is_body ? &all : &cond);
    }
    if (cond.grid && (cond.atomic || cond.vol || all.atomic || all.vol) && !r->spin) {
        r->spin = 1;
        r->spin_at = loop;
    } else if (!cond.grid && (cond.atomic || cond.vol) && !r->poll) {
        r->poll = 1;
        r->poll_at = loop;
    }
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
    for (int i = 0; i < 8; i++) {
        lhs = strip(lhs);
        if (clang_getCursorKind(lhs) == CXCursor_MemberRefExpr) {
            CXCursor base = corun__cc_child(lhs, 0);
            if (clang_Cursor_isNull(base)) {
                return;
            }
            lhs = base;
            continue;
        }
        break;
    }
    if (clang_getCursorKind(lhs) == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(lhs);
        if (!clang_Cursor_isNull(ref) &&
            !push_cursor(&k->kw->modified, &k->kw->nmod, &k->kw->capmod, ref)) {
            k->oom = 1;
        }
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
    r->off = off_of(k, c);
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
    r->off = off_of(k, c);
    r->at = c;
    size_t cc = 0, cl = 0;
    enclosing(k, c, &r->conds, &r->nconds, &cc, &r->loops, &r->nloops, &cl);
}

static void visit_body(checker *k, CXCursor c);

static enum CXChildVisitResult body_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    checker *k = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    (void)parent;

/* the table may grow while the body is walked: never keep a pointer */
#define R (&k->v[k->cur])
    switch (kind) {
    case CXCursor_CallExpr: {
        CXCursor ref = clang_getCursorReferenced(c);
        CXString sp = clang_getCursorSpelling(c);
        const char *nm = clang_getCString(sp);
        int barrier = 0;
        long callee = -1;
        if (name_in(nm, barrier_names)) {
            R->barrier = barrier = 1;
        }
        if (name_in(nm, warpsync_names)) {
            R->warpsync = 1;
        }
        int grid_sync = name_in(nm, grid_names) && (clang_Cursor_isNull(ref) || in_cooperative_groups(ref));
        if (strcmp(nm, "sync") == 0 && !clang_Cursor_isNull(ref) && in_cooperative_groups(ref)) {
            CXCursor cls = clang_getCursorSemanticParent(ref);
            grid_sync |= corun__cc_spelled(cls, "grid_group") ||
                         corun__cc_spelled(cls, "multi_grid_group") ||
                         corun__cc_spelled(cls, "cluster_group");
        }
        if (grid_sync) {
            if (!R->grid) {
                R->grid = 1;
                R->grid_at = c;
                snprintf(R->grid_what, sizeof(R->grid_what), "cooperative_groups::%s", nm);
            }
        }
        if (strncmp(nm, "cuda", 4) == 0 && nm[4] >= 'A' && nm[4] <= 'Z' && !R->dp) {
            R->dp = 1;
            R->dp_at = c;
            snprintf(R->dp_what, sizeof(R->dp_what), "%s called from device code", nm);
        }
        clang_disposeString(sp);
        CXCursor cref = call_ref(c);
        if (!clang_Cursor_isNull(cref) &&
            !push_cursor(&k->callee_refs, &k->nrefs, &k->caprefs, cref)) {
            k->oom = 1;
        }
        int nocap = 0;
        for (size_t i = k->depth; i-- > 0;) {
            if (clang_getCursorKind(k->stack[i]) == CXCursor_LambdaExpr &&
                !lambda_has_default_capture(k, k->stack[i])) {
                nocap = 1;
            }
        }
        if (!clang_Cursor_isNull(ref) && !is_function_kind(clang_getCursorKind(ref))) {
            R->unresolved = 1; /* through an object or a pointer: op(x), fp(x) */
        } else if (!clang_Cursor_isNull(ref)) {
            long t = add_callee(k, ref);
            callee = t;
            if (t >= 0 && !clang_Cursor_isNull(cref)) {
                record_fcall(k, c, cref, &t, 1, nocap);
            }
        } else {
            /* a dependent call: every candidate the name can mean */
            overload_ctx x = {k, 0, {0, 0, 0, 0}, 0, clang_getNullCursor()};
            CXCursor fe = corun__cc_child(c, 0);
            if (!clang_Cursor_isNull(fe) && overload_visit(fe, c, &x) == CXChildVisit_Recurse) {
                clang_visitChildren(fe, overload_visit, &x);
            }
            if (!x.found) {
                R->unresolved = 1;
            } else if (x.ntargets > 0) {
                record_fcall(k, c, x.ref, x.targets, x.ntargets, nocap);
            }
        }
        record_call(k, c, callee, barrier);
        break;
    }
    case CXCursor_DeclRefExpr: {
        CXCursor ref = clang_getCursorReferenced(c);
        int b = builtin_var(ref);
        if ((b == 'b' || b == 'g') && !R->blockidx) {
            R->blockidx = 1;
            R->blockidx_at = c;
        }
        if ((b == 'b' || b == 'g') && k->kw != NULL && !k->kw->qualified_blockidx) {
            /* ::blockIdx names the hardware index past any shadowing */
            long o = corun__cc_cursor_off(k->t, c, 1);
            size_t ti = o >= 0 ? corun__cc_tok_from(k->s, (unsigned)o) : 0;
            if (o >= 0 && ti > 0 && corun__cc_tok_is(k->s, ti - 1, "::")) {
                k->kw->qualified_blockidx = 1;
                k->kw->qualified_at = c;
            }
        }
        if ((b == 'b' || b == 'g') && k->kw != NULL) {
            for (size_t i = k->depth; i-- > 0;) {
                enum CXCursorKind ak = clang_getCursorKind(k->stack[i]);
                if (ak == CXCursor_LambdaExpr && !lambda_has_default_capture(k, k->stack[i]) &&
                    !k->kw->lambda_blockidx) {
                    k->kw->lambda_blockidx = 1;
                    k->kw->lambda_at = c;
                }
                if ((ak == CXCursor_StructDecl || ak == CXCursor_ClassDecl ||
                     ak == CXCursor_UnionDecl) && !k->kw->local_class_blockidx) {
                    k->kw->local_class_blockidx = 1;
                    k->kw->local_at = c;
                }
            }
        }
        if (!clang_Cursor_isNull(ref) && is_function_kind(clang_getCursorKind(ref))) {
            long t = add_callee(k, ref);
            int called = 0;
            for (size_t i = 0; i < k->nrefs && !called; i++) {
                called = clang_equalCursors(k->callee_refs[i], c);
            }
            if (t >= 0 && !called) {
                k->v[t].addr_taken = 1;
            }
        }
        break;
    }
    case CXCursor_TypeRef:
    case CXCursor_TemplateRef: {
        CXCursor ref = clang_getCursorReferenced(c);
        if (!clang_Cursor_isNull(ref) && in_cooperative_groups(ref)) {
            CXString sp = clang_getCursorSpelling(ref);
            const char *nm = clang_getCString(sp);
            if (name_in(nm, grid_names) && !R->grid) {
                R->grid = 1;
                R->grid_at = c;
                snprintf(R->grid_what, sizeof(R->grid_what), "cooperative_groups::%s", nm);
            } else if (strcmp(nm, "thread_block") == 0) {
                R->barrier = 1;
            } else if (strcmp(nm, "thread_block_tile") == 0 ||
                       strcmp(nm, "coalesced_group") == 0) {
                R->warpsync = 1;
            }
            clang_disposeString(sp);
        }
        break;
    }
    case CXCursor_VarDecl:
        if (corun__cc_has_attr(c, CXCursor_CUDASharedAttr)) {
            R->shared = 1;
        }
        break;
    case CXCursor_AsmStmt:
        check_asm(k, c, R);
        break;
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
    case CXCursor_ForStmt:
        check_loop(k, c, R);
        break;
    case CXCursor_ReturnStmt:
        record_return(k, c);
        break;
    case CXCursor_BinaryOperator:
    case CXCursor_CompoundAssignOperator: {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(c);
        if (op >= CXBinaryOperator_Assign && op <= CXBinaryOperator_OrAssign) {
            note_modified(k, corun__cc_child(c, 0));
        }
        break;
    }
    case CXCursor_UnaryOperator: {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(c);
        if (op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PostDec ||
            op == CXUnaryOperator_PreInc || op == CXUnaryOperator_PreDec ||
            op == CXUnaryOperator_AddrOf) {
            note_modified(k, corun__cc_child(c, 0));
        }
        if (op == CXUnaryOperator_AddrOf && k->kw != NULL) {
            CXCursor sub = strip(corun__cc_child(c, 0));
            int b = clang_getCursorKind(sub) == CXCursor_DeclRefExpr
                        ? builtin_var(clang_getCursorReferenced(sub))
                        : 0;
            if ((b == 'b' || b == 'g') && !k->kw->addr_blockidx) {
                k->kw->addr_blockidx = 1;
                k->kw->addr_at = c;
            }
        }
        break;
    }
    default:
        break;
    }
#undef R
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

static void walk_fn(checker *k, size_t i, kernel_walk *kw)
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
/* block-uniform conditions                                                 */
/* ------------------------------------------------------------------------ */

static int modified(const kernel_walk *kw, CXCursor ref)
{
    for (size_t i = 0; i < kw->nmod; i++) {
        if (clang_equalCursors(kw->modified[i], ref)) {
            return 1;
        }
    }
    return 0;
}

typedef struct uni_ctx {
    checker *k;
    int depth;
    int uniform;
} uni_ctx;

static int uniform(checker *k, CXCursor c, int depth);

static enum CXChildVisitResult uni_visit(CXCursor c, CXCursor p, CXClientData data)
{
    uni_ctx *x = data;
    (void)p;
    if (!uniform(x->k, c, x->depth + 1)) {
        x->uniform = 0;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

/* Whether expression c has the same value in every thread of a block, by
 * rules that are sound for what they accept (docs/corun-cc.md): built-in
 * block values, unmodified parameters and locals initialised from such
 * values, template and enum constants, __constant__ and __shared__
 * variables, and a few pure functions of them. */
static int uniform(checker *k, CXCursor c, int depth)
{
    if (depth > 32) {
        return 0;
    }
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        enum CXCursorKind rk = clang_getCursorKind(ref);
        int b = builtin_var(ref);
        if (b) {
            return b != 't';
        }
        if (corun__cc_spelled(ref, "warpSize")) {
            return 1;
        }
        if (rk == CXCursor_NonTypeTemplateParameter || rk == CXCursor_EnumConstantDecl ||
            is_function_kind(rk)) {
            return 1;
        }
        if (rk == CXCursor_ParmDecl) {
            return !modified(k->kw, ref);
        }
        if (rk == CXCursor_VarDecl) {
            if (corun__cc_has_attr(ref, CXCursor_CUDASharedAttr) ||
                corun__cc_has_attr(ref, CXCursor_CUDAConstantAttr)) {
                return 1;
            }
            if (modified(k->kw, ref)) {
                return 0;
            }
            CXCursor init = clang_Cursor_getVarDeclInitializer(ref);
            if (clang_Cursor_isNull(init)) {
                return 0;
            }
            return uniform(k, init, depth + 1);
        }
        return 0;
    }
    if (kind == CXCursor_CallExpr) {
        CXString sp = clang_getCursorSpelling(c);
        int ok = name_in(clang_getCString(sp), uniform_calls);
        clang_disposeString(sp);
        if (!ok) {
            return 0;
        }
    }
    if (kind == CXCursor_LambdaExpr || kind == CXCursor_StmtExpr) {
        return 0;
    }
    uni_ctx x = {k, depth, 1};
    clang_visitChildren(c, uni_visit, &x);
    return x.uniform;
}

/* ------------------------------------------------------------------------ */
/* per kernel                                                               */
/* ------------------------------------------------------------------------ */

typedef struct reach {
    size_t *v;
    size_t n, cap;
} reach;

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
static int collect(checker *k, size_t root, reach *rs)
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
        walk_fn(k, rs->v[q], NULL);
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

static int call_barriers(checker *k, const call_rec *c, reach *tmp)
{
    if (c->barrier) {
        return 1;
    }
    if (c->callee < 0) {
        return 0;
    }
    if (!collect(k, (size_t)c->callee, tmp)) {
        return 0;
    }
    for (size_t i = 0; i < tmp->n; i++) {
        if (k->v[tmp->v[i]].barrier) {
            return 1;
        }
    }
    return 0;
}

static int shares_loop(const ret_rec *r, const call_rec *c)
{
    for (size_t i = 0; i < r->nloops; i++) {
        for (size_t j = 0; j < c->nloops; j++) {
            if (clang_equalCursors(r->loops[i], c->loops[j])) {
                return 1;
            }
        }
    }
    return 0;
}

CORUN__CC_PRINTF(4, 5)
static void refuse_at(checker *k, CXCursor at, const char *construct, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    corun__cc_diag_at(k->d, CORUN_CC_ERROR, clang_getCursorLocation(at), construct, "%s", msg);
}

static void fn_name(CXCursor fn, char *out, size_t n)
{
    CXString sp = clang_getCursorSpelling(fn);
    snprintf(out, n, "%s", clang_getCString(sp));
    clang_disposeString(sp);
}

/* A top-level declaration named blockIdx or gridDim in the body would clash
 * with the parameter of that name. */
typedef struct top_ctx {
    int clash;
} top_ctx;

static enum CXChildVisitResult top_visit(CXCursor c, CXCursor p, CXClientData data)
{
    top_ctx *x = data;
    (void)p;
    if (clang_getCursorKind(c) == CXCursor_DeclStmt) {
        return CXChildVisit_Recurse;
    }
    if (clang_getCursorKind(c) == CXCursor_VarDecl &&
        (corun__cc_spelled(c, "blockIdx") || corun__cc_spelled(c, "gridDim"))) {
        x->clash = 1;
    }
    return CXChildVisit_Continue;
}

static void free_walk(kernel_walk *kw)
{
    for (size_t i = 0; i < kw->nrets; i++) {
        free(kw->rets[i].conds);
        free(kw->rets[i].loops);
    }
    for (size_t i = 0; i < kw->ncalls; i++) {
        free(kw->calls[i].loops);
    }
    free(kw->rets);
    free(kw->calls);
    free(kw->modified);
}

/* Whether code that a call resolved only at instantiation could reach
 * reads blockIdx: the operator() of a functor or lambda, or another member
 * function, outside the kernels of this file. Asked only when a kernel
 * makes such calls (calls of named functions are followed, and cloned). */
typedef struct outside_ctx {
    checker *k;
    corun__cc_kernels *ks;
    CXCursor at;
    int found;
    int in_member; /* inside a member function or a lambda */
} outside_ctx;

static enum CXChildVisitResult outside_visit(CXCursor c, CXCursor p, CXClientData data)
{
    outside_ctx *x = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    (void)p;
    if (kind == CXCursor_CXXMethod || kind == CXCursor_LambdaExpr ||
        kind == CXCursor_ConversionFunction) {
        int saved = x->in_member;
        x->in_member = 1;
        clang_visitChildren(c, outside_visit, x);
        x->in_member = saved;
        return x->found ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    if (kind == CXCursor_DeclRefExpr && x->in_member) {
        int b = builtin_var(clang_getCursorReferenced(c));
        long o = corun__cc_cursor_off(x->k->t, c, 0);
        if ((b == 'b' || b == 'g') && o >= 0) {
            for (size_t i = 0; i < x->ks->n; i++) {
                const corun__cc_kernel *kk = &x->ks->v[i];
                if (kk->is_def && (unsigned)o >= kk->end && (unsigned)o < kk->body_end) {
                    return CXChildVisit_Continue;
                }
            }
            x->found = 1;
            x->at = c;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

static long pos_in(const reach *rs, long fn)
{
    for (size_t j = 0; j < rs->n; j++) {
        if ((long)rs->v[j] == fn) {
            return (long)j;
        }
    }
    return -1;
}

/* Why function def cannot be given a clone, or NULL when it can. */
static const char *not_cloneable(checker *k, const fnrec *r)
{
    if (corun__cc_cursor_off(k->t, r->fn, 0) < 0) {
        return "it is defined in another file";
    }
    enum CXCursorKind kind = clang_getCursorKind(r->fn);
    if (kind != CXCursor_FunctionDecl && kind != CXCursor_FunctionTemplate) {
        return "it is a member function";
    }
    if (r->addr_taken) {
        return "its address is taken, so calls through the pointer would miss the clone";
    }
    return NULL;
}

static int has_clone(const corun__cc_kernels *clones, const char *usr)
{
    for (size_t i = 0; i < clones->n; i++) {
        if (strcmp(clones->v[i].usr, usr) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Describes function r for cloning (its first declaration too, when that
 * comes earlier in the file). 0 when it cannot be rewritten. */
static int describe_clone(checker *k, const fnrec *r)
{
    char *usr = corun__cc_kernel_usr(r->fn);
    if (usr == NULL) {
        k->oom = 1;
        return 0;
    }
    int have = has_clone(k->clones, usr);
    free(usr);
    if (have) {
        return 1;
    }
    long idx = -1;
    CXCursor first = clang_getCanonicalCursor(r->fn);
    if (!clang_equalCursors(first, r->fn) && corun__cc_cursor_off(k->t, first, 0) >= 0 &&
        corun__cc_cursor_off(k->t, first, 0) < corun__cc_cursor_off(k->t, r->fn, 0)) {
        if (corun__cc_describe_function(k->t, k->s, first, k->clones, k->d, &idx) != CORUN_OK) {
            k->oom = 1;
            return 0;
        }
        if (idx < 0) {
            return 0;
        }
    }
    if (corun__cc_describe_function(k->t, k->s, r->fn, k->clones, k->d, &idx) != CORUN_OK) {
        k->oom = 1;
        return 0;
    }
    return idx >= 0;
}

/* Records the call f(...) of a clone as a call of f__corun(blockIdx,
 * gridDim, ...). 0, with a refusal, when the call cannot be edited. */
static int add_site(checker *k, const corun__cc_kernel *kn, const fcall *c)
{
    const corun__cc_src *s = k->s;
    char name[256];
    fn_name(c->ref, name, sizeof(name));
    if (c->nocap_lambda) {
        refuse_at(k, c->call, "call in a lambda without a capture-default",
                  "kernel '%s': '%s' is given the block-task's blockIdx/gridDim, which the "
                  "lambda must capture; write [&] or [=]",
                  kn->name, name);
        return 0;
    }
    long sp = corun__cc_cursor_off(k->t, c->ref, 1);
    long ex = corun__cc_cursor_off(k->t, c->ref, 0);
    long ti = sp >= 0 ? corun__cc_tok_at(s, (unsigned)sp) : -1;
    size_t lp = ti >= 0 ? (size_t)ti + 1 : 0;
    if (ti >= 0 && corun__cc_tok_is(s, lp, "<")) {
        lp = corun__cc_tok_match(s, lp) + 1;
    }
    if (sp < 0 || sp != ex || ti < 0 || corun__cc_src_define_at(s, (unsigned)sp) != NULL ||
        !corun__cc_tok_is(s, (size_t)ti, name) || !corun__cc_tok_is(s, lp, "(")) {
        refuse_at(k, c->call, "call of a function that reads blockIdx/gridDim",
                  "kernel '%s': the call of '%s' is not written out in this file (a macro?), so "
                  "it cannot be given the block-task's blockIdx/gridDim",
                  kn->name, name);
        return 0;
    }
    corun__cc_callsites *v = k->sites;
    unsigned name_end = s->tok[ti].off + s->tok[ti].len;
    for (size_t i = 0; i < v->n; i++) {
        if (v->v[i].name_end == name_end) {
            return 1;
        }
    }
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        corun__cc_callsite *nv = realloc(v->v, cap * sizeof(*nv));
        if (nv == NULL) {
            k->oom = 1;
            return 0;
        }
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n].name_end = name_end;
    v->v[v->n].args_at = s->tok[lp].off + 1;
    v->v[v->n].has_args = !corun__cc_tok_is(s, lp + 1, ")");
    v->n++;
    return 1;
}

/* Functions the kernel reaches that read blockIdx/gridDim, or call ones
 * that do, would see the worker's values: each gets a clone that takes
 * the block-task's values as parameters, f__corun(blockIdx, gridDim, ...),
 * called instead from the kernel's body and from the other clones. Returns
 * 1 when that is impossible (refused). */
static int clone_callees(checker *k, corun__cc_kernel *kn, reach *rs, int grid_refused)
{
    unsigned char *need = calloc(rs->n ? rs->n : 1, 1);
    int refused = 0;
    char fname[256];

    if (need == NULL) {
        k->oom = 1;
        return 1;
    }
    for (size_t q = 1; q < rs->n; q++) {
        need[q] = (unsigned char)k->v[rs->v[q]].blockidx;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t q = 1; q < rs->n; q++) {
            const fnrec *r = &k->v[rs->v[q]];
            for (size_t c = 0; c < r->ncalls && !need[q]; c++) {
                for (size_t t = 0; t < r->calls[c].ntargets; t++) {
                    long j = pos_in(rs, r->calls[c].targets[t]);
                    if (j > 0 && need[j]) {
                        need[q] = 1;
                        changed = 1;
                    }
                }
            }
        }
    }
    for (size_t q = 1; q < rs->n && !refused; q++) {
        const fnrec *r = &k->v[rs->v[q]];
        if (!need[q]) {
            continue;
        }
        if (grid_refused && in_cooperative_groups(r->fn)) {
            refused = 1; /* cooperative_groups' grid code: already said */
            break;
        }
        fn_name(r->fn, fname, sizeof(fname));
        const char *why = not_cloneable(k, r);
        if (why == NULL && !describe_clone(k, r)) {
            why = "it cannot be rewritten (see above)";
        }
        if (why != NULL) {
            refuse_at(k, r->blockidx ? r->blockidx_at : r->fn,
                      "__device__ function reading blockIdx/gridDim",
                      "'%s', called from kernel '%s', %s blockIdx or gridDim, and %s; in a "
                      "worker it would see the worker's values, not the block-task's: pass "
                      "them as parameters",
                      fname, kn->name, r->blockidx ? "reads the built-in" : "calls code reading",
                      why);
            refused = 1;
        }
    }
    /* the calls to rewrite: in the kernel's body and in the clones */
    for (size_t q = 0; q < rs->n && !refused; q++) {
        const fnrec *r = &k->v[rs->v[q]];
        if (q > 0 && !need[q]) {
            continue;
        }
        for (size_t c = 0; c < r->ncalls && !refused; c++) {
            int hit = 0;
            for (size_t t = 0; t < r->calls[c].ntargets; t++) {
                long j = pos_in(rs, r->calls[c].targets[t]);
                hit |= j > 0 && need[j];
            }
            if (hit && !add_site(k, kn, &r->calls[c])) {
                refused = 1;
            }
        }
    }
    free(need);
    return refused;
}

static void check_one(checker *k, corun__cc_kernel *kn, corun__cc_kernels *ks, int *outside_done,
                      outside_ctx *outside, reach *rs, reach *tmp)
{
    kernel_walk kw;
    char fname[256];

    memset(&kw, 0, sizeof(kw));
    long root = add_fn(k, kn->cursor);
    if (root < 0) {
        return;
    }
    /* the kernel itself is walked with the extra records */
    k->v[root].walked = 0;
    walk_fn(k, (size_t)root, &kw);
    if (k->oom || !collect(k, (size_t)root, rs)) {
        k->oom = 1;
        free_walk(&kw);
        return;
    }
    /* one error per kind of problem, at its first place in this file if
     * it has one (a use in a header is the consequence of one here) */
    long best[4] = {-1, -1, -1, -1}; /* grid, dp, spin, asm */
    int best_here[4] = {0, 0, 0, 0};
    for (size_t q = 0; q < rs->n; q++) {
        fnrec *r = &k->v[rs->v[q]];
        kn->shared |= r->barrier || r->shared || r->warpsync;
        const int has[4] = {r->grid, r->dp, r->spin, r->asmbad};
        const CXCursor at[4] = {r->grid_at, r->dp_at, r->spin_at, r->asm_at};
        for (int c = 0; c < 4; c++) {
            int here = has[c] && corun__cc_cursor_off(k->t, at[c], 1) >= 0;
            if (has[c] && (best[c] < 0 || (here && !best_here[c]))) {
                best[c] = (long)rs->v[q];
                best_here[c] = here;
            }
        }
    }
    int refused = 0;
    if (best[0] >= 0) {
        fnrec *r = &k->v[best[0]];
        refuse_at(k, r->grid_at, "grid-wide synchronisation",
                  "kernel '%s' uses %s: a corun kernel runs only some of its blocks at a "
                  "time (and may be preempted between them), so blocks waiting for the "
                  "whole grid would wait forever",
                  kn->name, r->grid_what);
        refused = 1;
    }
    if (best[1] >= 0) {
        fnrec *r = &k->v[best[1]];
        refuse_at(k, r->dp_at, "dynamic parallelism",
                  "kernel '%s': %s; corun cannot schedule or preempt work started from the "
                  "GPU",
                  kn->name, r->dp_what);
        refused = 1;
    }
    if (best[2] >= 0) {
        refuse_at(k, k->v[best[2]].spin_at, "cross-block spin barrier",
                  "kernel '%s' loops until a count reaches gridDim (an atomic or volatile "
                  "read beside gridDim): it waits for blocks that may not be running, which "
                  "deadlocks when workers run fewer blocks than the grid or are evicted",
                  kn->name);
        refused = 1;
    }
    for (size_t q = 0; q < rs->n; q++) {
        fnrec *r = &k->v[rs->v[q]];
        if (r->poll) {
            corun__cc_diag_at(k->d, CORUN_CC_WARNING, clang_getCursorLocation(r->poll_at),
                              "loop polling memory",
                              "kernel '%s' waits in a loop on an atomic or volatile value: safe "
                              "under corun if it waits for earlier blocks (or for a lock), but a "
                              "wait for a later block deadlocks when one worker runs both",
                              kn->name);
            break;
        }
    }
    if (best[3] >= 0) {
        fnrec *r = &k->v[best[3]];
        fn_name(r->fn, fname, sizeof(fname));
        char in[300] = "";
        if (best[3] != (long)rs->v[0]) {
            snprintf(in, sizeof(in), " (in '%s')", fname);
        }
        refuse_at(k, r->asm_at, r->asm_what,
                  "kernel '%s'%s: %s", kn->name, in,
                  strstr(r->asm_what, "exit")
                      ? "a thread that exits leaves the worker, not the block-task"
                      : "in a worker the hardware registers describe the worker, not the "
                        "block-task");
        refused = 1;
    }
    refused |= clone_callees(k, kn, rs, best[0] >= 0);
    if (kw.addr_blockidx) {
        refuse_at(k, kw.addr_at, "address of blockIdx/gridDim",
                  "kernel '%s': the body's blockIdx/gridDim become parameters, whose address "
                  "differs from the built-in's",
                  kn->name);
        refused = 1;
    }
    if (kw.qualified_blockidx) {
        refuse_at(k, kw.qualified_at, "::blockIdx or ::gridDim",
                  "kernel '%s': the qualified name reaches the hardware value past the "
                  "body's blockIdx/gridDim parameters, and in a worker that is the worker's "
                  "index, not the block-task's",
                  kn->name);
        refused = 1;
    }
    if (kw.lambda_blockidx) {
        refuse_at(k, kw.lambda_at, "blockIdx in a lambda without a capture-default",
                  "kernel '%s': blockIdx/gridDim become parameters of the body, which a lambda "
                  "must capture; write [&] or [=]",
                  kn->name);
        refused = 1;
    }
    if (kw.local_class_blockidx) {
        refuse_at(k, kw.local_at, "blockIdx in a local class",
                  "kernel '%s': blockIdx/gridDim become parameters of the body, which a local "
                  "class cannot use",
                  kn->name);
        refused = 1;
    }

    /* returns some threads may take before a barrier */
    for (size_t i = 0; i < kw.nrets && !refused; i++) {
        const ret_rec *rr = &kw.rets[i];
        int later_barrier = 0;
        unsigned bar_off = 0;
        for (size_t j = 0; j < kw.ncalls && !later_barrier; j++) {
            const call_rec *cr = &kw.calls[j];
            if ((cr->off > rr->off || shares_loop(rr, cr)) && call_barriers(k, cr, tmp)) {
                later_barrier = 1;
                bar_off = cr->off;
            }
        }
        if (!later_barrier) {
            continue;
        }
        for (size_t j = 0; j < rr->nconds; j++) {
            kernel_walk *saved = k->kw;
            k->kw = &kw;
            int u = uniform(k, rr->conds[j], 0);
            k->kw = saved;
            if (!u) {
                char msg[900];
                snprintf(msg, sizeof(msg),
                         "kernel '%s': this return may be taken by some threads of a block but "
                         "not others, and a barrier follows (line %u); in a worker the "
                         "returning threads would reach the worker's own barrier and break the "
                         "block's; make the condition depend only on blockIdx, gridDim, "
                         "blockDim and unmodified parameters, or restructure",
                         kn->name, corun__cc_src_line(k->s, bar_off));
                corun__cc_diag_at(k->d, CORUN_CC_ERROR, clang_getCursorLocation(rr->at),
                                  "return before __syncthreads", "%s", msg);
                refused = 1;
                break;
            }
        }
    }

    /* calls resolved only at instantiation may reach code reading blockIdx */
    int unresolved = 0;
    for (size_t q = 0; q < rs->n; q++) {
        unresolved |= k->v[rs->v[q]].unresolved;
    }
    if (unresolved && !refused) {
        if (!*outside_done) {
            *outside_done = 1;
            clang_visitChildren(clang_getTranslationUnitCursor(k->t->tu), outside_visit, outside);
        }
        if (outside->found) {
            char where[64];
            snprintf(where, sizeof(where), "line %u",
                     corun__cc_src_line(k->s, off_of(k, outside->at)));
            refuse_at(k, kn->cursor, "call that cannot be resolved",
                      "kernel '%s' makes calls that are resolved only when its template is "
                      "instantiated (a functor or lambda argument), and a member function or "
                      "lambda outside the kernels reads blockIdx/gridDim (%s); corun-cc cannot "
                      "prove the kernel does not reach it",
                      kn->name, where);
            refused = 1;
        }
    }

    top_ctx top = {0};
    clang_visitChildren(kn->body, top_visit, &top);
    kn->wrap_body = top.clash;
    kn->refused |= refused;
    free_walk(&kw);
}

int corun__cc_check_kernels(const corun__cc_tu *dev, const corun__cc_src *s,
                            corun__cc_kernels *ks, corun__cc_kernels *clones,
                            corun__cc_callsites *sites, corun__cc_diags *d)
{
    checker k;
    reach rs = {0}, tmp = {0};
    int outside_done = 0;

    memset(&k, 0, sizeof(k));
    k.t = dev;
    k.s = s;
    k.d = d;
    k.clones = clones;
    k.sites = sites;
    outside_ctx outside = {&k, ks, clang_getNullCursor(), 0, 0};
    for (size_t i = 0; i < ks->n && !k.oom; i++) {
        corun__cc_kernel *kn = &ks->v[i];
        if (kn->is_def && !kn->refused) {
            check_one(&k, kn, ks, &outside_done, &outside, &rs, &tmp);
        }
    }
    /* declarations share their definition's kind */
    for (size_t i = 0; i < ks->n; i++) {
        for (size_t j = 0; j < ks->n; j++) {
            if (ks->v[j].is_def && strcmp(ks->v[i].usr, ks->v[j].usr) == 0) {
                ks->v[i].shared = ks->v[j].shared;
                ks->v[i].refused |= ks->v[j].refused;
            }
        }
    }
    for (size_t i = 0; i < k.n; i++) {
        free(k.v[i].callees);
        free(k.v[i].calls);
    }
    free(k.v);
    free(k.callee_refs);
    free(rs.v);
    free(tmp.v);
    return k.oom ? CORUN_ENOMEM : CORUN_OK;
}
