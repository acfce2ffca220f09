/*
 * clones.c — functions a kernel reaches that read blockIdx/gridDim get a
 * clone taking the block-task's values, f__corun(blockIdx, gridDim, ...),
 * and their calls from the kernel's body and from other clones are
 * recorded for emit.c to rewrite (docs/corun-cc.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/walk.h"
#include "corun/corun.h"

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

static int has_clone(const corun__cc_decls *clones, const char *usr)
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
    char *usr = corun__cc_decl_usr(r->fn);
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
static int add_site(checker *k, const corun__cc_decl *kn, const fcall *c)
{
    const corun__cc_src *s = k->s;
    char name[256];
    corun__cc_fn_name(c->ref, name, sizeof(name));
    if (c->nocap_lambda) {
        corun__cc_refuse_at(k, c->call, "call in a lambda without a capture-default",
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
        corun__cc_refuse_at(k, c->call, "call of a function that reads blockIdx/gridDim",
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
int corun__cc_clone_callees(checker *k, corun__cc_decl *kn, reach *rs, int grid_refused)
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
        if (grid_refused && corun__cc_in_coop_groups(r->fn)) {
            refused = 1; /* cooperative_groups' grid code: already said */
            break;
        }
        corun__cc_fn_name(r->fn, fname, sizeof(fname));
        const char *why = not_cloneable(k, r);
        if (why == NULL && !describe_clone(k, r)) {
            why = "it cannot be rewritten (see above)";
        }
        if (why != NULL) {
            corun__cc_refuse_at(k, r->blockidx ? r->blockidx_at : r->fn,
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

