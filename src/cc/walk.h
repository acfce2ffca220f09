/*
 * walk.h — the facts checks.c, uniform.c and clones.c share: what each
 * function's body does (walk.c), gathered once per function of the
 * device-side unit, and what a kernel reaches through its calls.
 */
#ifndef CORUN_CC_WALK_H
#define CORUN_CC_WALK_H

#include "cc/cc.h"

#define MAX_DEPTH 512

/* What one function's own body does. */
struct fcall;

typedef struct fnrec {
    CXCursor fn;
    unsigned hash;
    int barrier, shared, warpsync, unresolved;
    int blockidx, grid, dp, asmbad, spin, poll;
    CXCursor blockidx_at, grid_at, dp_at, asm_at, spin_at, poll_at;
    unsigned spin_params;  /* bit i: a loop waits on an atomic or volatile read
                              until it reaches parameter i (a barrier if a
                              caller passes a value of gridDim there) */
    CXCursor spin_param_at;
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
    unsigned grid_args;  /* bit i: argument i is computed from gridDim */
    signed char arg_param[16]; /* argument i is the caller's parameter n, or -1 */
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
    corun__cc_decls *clones;
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
    CXCursor *gvars;       /* local variables given a value of gridDim */
    size_t ngvars, capgvars;
} checker;


typedef struct reach {
    size_t *v;
    size_t n, cap;
} reach;

/* the function table and the walk (walk.c) */
long corun__cc_add_fn(checker *k, CXCursor fn);
/* Walks function i once, recording into kw when it is a kernel's own body. */
void corun__cc_walk_fn(checker *k, size_t i, kernel_walk *kw);
/* Everything function root calls, transitively (root first); 0 when out of
 * memory. */
int corun__cc_collect(checker *k, size_t root, reach *rs);
/* Carries waits on a parameter (fnrec.spin_params) to the callers of rs's
 * functions: one that passes a value of gridDim there has a spin barrier. */
void corun__cc_spin_flow(checker *k, const reach *rs);
/* 'b', 'g', 'd', 't' for the built-ins blockIdx, gridDim, blockDim,
 * threadIdx (not user variables of those names), else 0. */
int corun__cc_builtin_var(CXCursor ref);
int corun__cc_in_coop_groups(CXCursor c);
int corun__cc_is_function(enum CXCursorKind k);
int corun__cc_name_in(const char *name, const char *const *set);
unsigned corun__cc_off_of(const checker *k, CXCursor c);
void corun__cc_fn_name(CXCursor fn, char *out, size_t n);
void corun__cc_refuse_at(checker *k, CXCursor at, const char *construct, const char *fmt, ...)
    CORUN__CC_PRINTF(4, 5);

/* uniform.c: whether expression c has the same value in every thread of a
 * block, while k->kw describes the kernel's body */
int corun__cc_uniform(checker *k, CXCursor c, int depth);

/* clones.c: the clones and rewritten calls a kernel needs; 1 when refused */
int corun__cc_clone_callees(checker *k, corun__cc_decl *kn, reach *rs, int grid_refused);

#endif /* CORUN_CC_WALK_H */
