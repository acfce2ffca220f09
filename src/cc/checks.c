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
 *  - functions reading blockIdx/gridDim that cannot be cloned (clones.c),
 *    and inline PTX that reads %ctaid/%nctaid or exits: they would see the
 *    worker;
 *  - a return that some threads of a block may take before a barrier: the
 *    returning threads would reach the worker's barrier instead;
 *  - uses of blockIdx/gridDim that the shadowing parameters do not cover
 *    (address taken, lambdas without a capture-default, local classes).
 * It also decides the worker kind: CORUN_SHARED when the kernel or anything
 * it calls uses a barrier, shared memory or warp-synchronous operations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/walk.h"
#include "corun/corun.h"

static int call_barriers(checker *k, const call_rec *c, reach *tmp)
{
    if (c->barrier) {
        return 1;
    }
    if (c->callee < 0) {
        return 0;
    }
    if (!corun__cc_collect(k, (size_t)c->callee, tmp)) {
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
    corun__cc_decls *ks;
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
        int b = corun__cc_builtin_var(clang_getCursorReferenced(c));
        long o = corun__cc_cursor_off(x->k->t, c, 0);
        if ((b == 'b' || b == 'g') && o >= 0) {
            for (size_t i = 0; i < x->ks->n; i++) {
                const corun__cc_decl *kk = &x->ks->v[i];
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

/* The problems a reached function can have, in the order they are reported. */
enum { PROBLEM_GRID, PROBLEM_DP, PROBLEM_SPIN, PROBLEM_ASM, PROBLEMS };

/* For each kind of problem, the function of rs to report it at: the first
 * that has it, or the first whose place lies in this file if one does (a
 * use in a header is the consequence of one here); -1 when none has it.
 * Also sets kn->shared from what the functions use. */
static void first_places(checker *k, corun__cc_decl *kn, const reach *rs, long best[PROBLEMS])
{
    int best_here[PROBLEMS] = {0};

    for (int c = 0; c < PROBLEMS; c++) {
        best[c] = -1;
    }
    for (size_t q = 0; q < rs->n; q++) {
        fnrec *r = &k->v[rs->v[q]];
        kn->shared |= r->barrier || r->shared || r->warpsync;
        const int has[PROBLEMS] = {r->grid, r->dp, r->spin, r->asmbad};
        const CXCursor at[PROBLEMS] = {r->grid_at, r->dp_at, r->spin_at, r->asm_at};
        for (int c = 0; c < PROBLEMS; c++) {
            int here = has[c] && corun__cc_cursor_off(k->t, at[c], 1) >= 0;
            if (has[c] && (best[c] < 0 || (here && !best_here[c]))) {
                best[c] = (long)rs->v[q];
                best_here[c] = here;
            }
        }
    }
}

/* Refuses what the functions the kernel reaches do (one error per kind of
 * problem, at best[kind]) and warns of a loop polling memory; 1 when
 * refused. */
static int refuse_reached(checker *k, const corun__cc_decl *kn, const reach *rs,
                          const long best[PROBLEMS])
{
    int refused = 0;

    if (best[PROBLEM_GRID] >= 0) {
        fnrec *r = &k->v[best[PROBLEM_GRID]];
        corun__cc_refuse_at(k, r->grid_at, "grid-wide synchronisation",
                  "kernel '%s' uses %s: a corun kernel runs only some of its blocks at a "
                  "time (and may be preempted between them), so blocks waiting for the "
                  "whole grid would wait forever",
                  kn->name, r->grid_what);
        refused = 1;
    }
    if (best[PROBLEM_DP] >= 0) {
        fnrec *r = &k->v[best[PROBLEM_DP]];
        corun__cc_refuse_at(k, r->dp_at, "dynamic parallelism",
                  "kernel '%s': %s; corun cannot schedule or preempt work started from the "
                  "GPU",
                  kn->name, r->dp_what);
        refused = 1;
    }
    if (best[PROBLEM_SPIN] >= 0) {
        corun__cc_refuse_at(k, k->v[best[PROBLEM_SPIN]].spin_at, "cross-block spin barrier",
                  "kernel '%s' loops until a count reaches gridDim (an atomic or volatile "
                  "read beside gridDim): it waits for blocks that may not be running, which "
                  "deadlocks when workers run fewer blocks than the grid or are evicted",
                  kn->name);
        refused = 1;
    }
    for (size_t q = 0; q < rs->n && best[PROBLEM_SPIN] < 0; q++) {
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
    if (best[PROBLEM_ASM] >= 0) {
        fnrec *r = &k->v[best[PROBLEM_ASM]];
        char fname[256];
        corun__cc_fn_name(r->fn, fname, sizeof(fname));
        char in[300] = "";
        if (best[PROBLEM_ASM] != (long)rs->v[0]) {
            snprintf(in, sizeof(in), " (in '%s')", fname);
        }
        corun__cc_refuse_at(k, r->asm_at, r->asm_what,
                  "kernel '%s'%s: %s", kn->name, in,
                  strstr(r->asm_what, "exit")
                      ? "a thread that exits leaves the worker, not the block-task"
                      : "in a worker the hardware registers describe the worker, not the "
                        "block-task");
        refused = 1;
    }
    return refused;
}

/* Refuses uses of blockIdx/gridDim in the kernel's own body that the
 * body's parameters of those names do not cover; 1 when refused. */
static int refuse_unshadowed(checker *k, const corun__cc_decl *kn, const kernel_walk *kw)
{
    int refused = 0;

    if (kw->addr_blockidx) {
        corun__cc_refuse_at(k, kw->addr_at, "address of blockIdx/gridDim",
                  "kernel '%s': the body's blockIdx/gridDim become parameters, whose address "
                  "differs from the built-in's",
                  kn->name);
        refused = 1;
    }
    if (kw->qualified_blockidx) {
        corun__cc_refuse_at(k, kw->qualified_at, "::blockIdx or ::gridDim",
                  "kernel '%s': the qualified name reaches the hardware value past the "
                  "body's blockIdx/gridDim parameters, and in a worker that is the worker's "
                  "index, not the block-task's",
                  kn->name);
        refused = 1;
    }
    if (kw->lambda_blockidx) {
        corun__cc_refuse_at(k, kw->lambda_at, "blockIdx in a lambda without a capture-default",
                  "kernel '%s': blockIdx/gridDim become parameters of the body, which a lambda "
                  "must capture; write [&] or [=]",
                  kn->name);
        refused = 1;
    }
    if (kw->local_class_blockidx) {
        corun__cc_refuse_at(k, kw->local_at, "blockIdx in a local class",
                  "kernel '%s': blockIdx/gridDim become parameters of the body, which a local "
                  "class cannot use",
                  kn->name);
        refused = 1;
    }
    return refused;
}

/* Refuses the first return of the kernel's body that some threads of a
 * block may take before a barrier; 1 when refused. */
static int refuse_divergent_return(checker *k, const corun__cc_decl *kn, kernel_walk *kw,
                                   reach *tmp)
{
    for (size_t i = 0; i < kw->nrets; i++) {
        const ret_rec *rr = &kw->rets[i];
        int later_barrier = 0;
        unsigned bar_off = 0;
        for (size_t j = 0; j < kw->ncalls && !later_barrier; j++) {
            const call_rec *cr = &kw->calls[j];
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
            k->kw = kw;
            int u = corun__cc_uniform(k, rr->conds[j], 0);
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
                return 1;
            }
        }
    }
    return 0;
}

/* Refuses a kernel whose calls are resolved only at instantiation when a
 * member function or lambda outside the kernels reads blockIdx/gridDim
 * (looked for once per file: *outside_done); 1 when refused. */
static int refuse_unresolved(checker *k, const corun__cc_decl *kn, const reach *rs,
                             int *outside_done, outside_ctx *outside)
{
    int unresolved = 0;

    for (size_t q = 0; q < rs->n; q++) {
        unresolved |= k->v[rs->v[q]].unresolved;
    }
    if (!unresolved) {
        return 0;
    }
    if (!*outside_done) {
        *outside_done = 1;
        clang_visitChildren(clang_getTranslationUnitCursor(k->t->tu), outside_visit, outside);
    }
    if (!outside->found) {
        return 0;
    }
    char where[64];
    snprintf(where, sizeof(where), "line %u",
             corun__cc_src_line(k->s, corun__cc_off_of(k, outside->at)));
    corun__cc_refuse_at(k, kn->cursor, "call that cannot be resolved",
              "kernel '%s' makes calls that are resolved only when its template is "
              "instantiated (a functor or lambda argument), and a member function or "
              "lambda outside the kernels reads blockIdx/gridDim (%s); corun-cc cannot "
              "prove the kernel does not reach it",
              kn->name, where);
    return 1;
}

static void check_one(checker *k, corun__cc_decl *kn, int *outside_done, outside_ctx *outside,
                      reach *rs, reach *tmp)
{
    kernel_walk kw;
    long best[PROBLEMS];

    memset(&kw, 0, sizeof(kw));
    long root = corun__cc_add_fn(k, kn->cursor);
    if (root < 0) {
        return;
    }
    /* the kernel itself is walked with the extra records */
    k->v[root].walked = 0;
    corun__cc_walk_fn(k, (size_t)root, &kw);
    if (k->oom || !corun__cc_collect(k, (size_t)root, rs)) {
        k->oom = 1;
        free_walk(&kw);
        return;
    }
    corun__cc_spin_flow(k, rs);
    first_places(k, kn, rs, best);
    int refused = refuse_reached(k, kn, rs, best);
    refused |= corun__cc_clone_callees(k, kn, rs, best[PROBLEM_GRID] >= 0);
    refused |= refuse_unshadowed(k, kn, &kw);
    if (!refused) {
        refused = refuse_divergent_return(k, kn, &kw, tmp);
    }
    if (!refused) {
        refused = refuse_unresolved(k, kn, rs, outside_done, outside);
    }

    top_ctx top = {0};
    clang_visitChildren(kn->body, top_visit, &top);
    kn->wrap_body = top.clash;
    kn->refused |= refused;
    free_walk(&kw);
}

int corun__cc_check_kernels(const corun__cc_tu *dev, const corun__cc_src *s,
                            corun__cc_decls *ks, corun__cc_decls *clones,
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
        corun__cc_decl *kn = &ks->v[i];
        if (kn->is_def && !kn->refused) {
            check_one(&k, kn, &outside_done, &outside, &rs, &tmp);
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
    free(k.gvars);
    free(rs.v);
    free(tmp.v);
    return k.oom ? CORUN_ENOMEM : CORUN_OK;
}

