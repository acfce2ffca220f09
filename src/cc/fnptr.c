/*
 * fnptr.c — launches through a function pointer: a <<<...>>> or a
 * cudaLaunchKernel whose kernel is a value (a variable, a parameter, a
 * table entry, a member, a call's result) rather than a kernel's name.
 *
 * Such a pointer can only hold a kernel of its own type. The kernels of
 * this file of that type, declared before the launch (non-template ones:
 * their launchers are plain functions), become a table that the shim
 * (corun_launch.cuh) compares the pointer's value with at run time:
 *
 *   fp<<<g, b>>>(x, n)
 *   ::corun::launch_through(::corun::config(g, b))(fp, {{::ka, ::ka__corun_launch}})(x, n)
 *
 * A value that is none of them (a kernel of another file) is launched as
 * written. The configuration text moves in front of the pointer so that,
 * as in nvcc's own lowering, it is evaluated first, then the pointer, then
 * the arguments. A pointer that no kernel of the file fits is left as it
 * is, with a warning (an error under CORUN_CC_STRICT), as a launch of a
 * kernel of another file is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"
#include "corun/corun.h"

/* Names of kernels listed in a message. */
#define NAMES_SAID 4

struct corun__cc_fnptr_kernel {
    CXCursor host;          /* a host-side declaration: its type */
    corun__cc_decl *first;  /* the record holding its launcher */
    char *qname;            /* "::ns::k": reachable from any scope */
};

typedef struct collect_ctx {
    corun__cc_fnptr *f;
    int rc;
} collect_ctx;

/* "::a::b::name" for a kernel declared in namespaces a::b; anonymous ones
 * are left out (their members are found through the enclosing one). */
static char *qualified(CXCursor c, const char *name)
{
    corun__cc_buf b = {0};
    const char *parts[32];
    CXString held[32];
    int n = 0;
    for (CXCursor p = clang_getCursorSemanticParent(c);
         !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit &&
         n < 32;
         p = clang_getCursorSemanticParent(p)) {
        if (clang_getCursorKind(p) == CXCursor_Namespace && !clang_Cursor_isAnonymous(p)) {
            held[n] = clang_getCursorSpelling(p);
            parts[n] = clang_getCString(held[n]);
            n++;
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        corun__cc_buf_printf(&b, "::%s", parts[i]);
        clang_disposeString(held[i]);
    }
    corun__cc_buf_printf(&b, "::%s", name);
    if (b.oom) {
        corun__cc_buf_free(&b);
        return NULL;
    }
    return b.p;
}

static void add_kernel(collect_ctx *x, CXCursor c)
{
    corun__cc_fnptr *f = x->f;
    char *usr = corun__cc_decl_usr(c);
    if (usr == NULL) {
        x->rc = CORUN_ENOMEM;
        return;
    }
    corun__cc_decl *k = corun__cc_decl_first(f->ks, usr);
    free(usr);
    if (k == NULL || k->is_template || k->refused) {
        return;
    }
    for (size_t i = 0; i < f->n; i++) {
        if (f->v[i].first == k) {
            return; /* declared, then defined */
        }
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        struct corun__cc_fnptr_kernel *v = realloc(f->v, cap * sizeof(*v));
        if (v == NULL) {
            x->rc = CORUN_ENOMEM;
            return;
        }
        f->v = v;
        f->cap = cap;
    }
    char *q = qualified(c, k->name);
    if (q == NULL) {
        x->rc = CORUN_ENOMEM;
        return;
    }
    f->v[f->n].host = c;
    f->v[f->n].first = k;
    f->v[f->n].qname = q;
    f->n++;
}

/* The host side's kernels of the main file, where kernels.c finds them on
 * the device side (namespaces, extern "C" blocks). */
static enum CXChildVisitResult collect_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    collect_ctx *x = data;
    (void)parent;
    switch (clang_getCursorKind(c)) {
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
        if (corun__cc_cursor_off(x->f->t, c, 0) >= 0) {
            clang_visitChildren(c, collect_visit, x);
        }
        break;
    case CXCursor_UnexposedDecl:
        clang_visitChildren(c, collect_visit, x);
        break;
    case CXCursor_FunctionDecl:
        if (corun__cc_cursor_off(x->f->t, c, 0) >= 0 &&
            corun__cc_has_attr(c, CXCursor_CUDAGlobalAttr)) {
            add_kernel(x, c);
        }
        break;
    default:
        break;
    }
    return x->rc == CORUN_OK ? CXChildVisit_Continue : CXChildVisit_Break;
}

static int collect(corun__cc_fnptr *f)
{
    if (f->collected) {
        return CORUN_OK;
    }
    collect_ctx x = {f, CORUN_OK};
    clang_visitChildren(clang_getTranslationUnitCursor(f->t->tu), collect_visit, &x);
    f->collected = 1;
    return x.rc;
}

void corun__cc_fnptr_free(corun__cc_fnptr *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].qname);
    }
    free(f->v);
    f->v = NULL;
    f->n = f->cap = 0;
    f->collected = 0;
}

/* The function type an expression of pointer-to-function (or function, or
 * reference to either) type calls; an invalid type otherwise (a type that
 * depends on a template parameter, a void *, a pointer to a pointer). */
static CXType called_type(CXCursor expr)
{
    CXType t = clang_getCanonicalType(clang_getCursorType(expr));
    if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference) {
        t = clang_getCanonicalType(clang_getPointeeType(t));
    }
    if (t.kind == CXType_Pointer) {
        t = clang_getCanonicalType(clang_getPointeeType(t));
    }
    if (t.kind != CXType_FunctionProto) {
        t.kind = CXType_Invalid;
    }
    return t;
}

/* What a launch through a pointer of function type fn, starting at byte
 * at, may reach: the kernels of the file of that type declared before it
 * (in f->v order, as indices into pick), and how many of that type come
 * after it. */
typedef struct reach {
    size_t *pick;
    size_t n, later;
    size_t first_later; /* index into f->v of one that comes later */
} reach;

static int reach_of(corun__cc_fnptr *f, CXType fn, unsigned at, reach *r)
{
    memset(r, 0, sizeof(*r));
    int rc = collect(f);
    if (rc != CORUN_OK) {
        return rc;
    }
    if (fn.kind == CXType_Invalid || f->n == 0) {
        return CORUN_OK;
    }
    r->pick = malloc(f->n * sizeof(*r->pick));
    if (r->pick == NULL) {
        return CORUN_ENOMEM;
    }
    for (size_t i = 0; i < f->n; i++) {
        CXType kt = clang_getCanonicalType(clang_getCursorType(f->v[i].host));
        if (!clang_equalTypes(kt, fn)) {
            continue;
        }
        /* a launcher in another file of the unit (headers.c) comes first */
        if (f->v[i].first->elsewhere || f->v[i].first->start < at) {
            r->pick[r->n++] = i;
        } else if (r->later++ == 0) {
            r->first_later = i;
        }
    }
    return CORUN_OK;
}

/* Byte offset of loc in the main file where its text is: inside a macro
 * argument, the argument; inside a macro body, the invocation. */
static long file_off(const corun__cc_fnptr *f, CXSourceLocation loc)
{
    CXFile file = NULL;
    unsigned off = 0;
    clang_getFileLocation(loc, &file, NULL, NULL, &off);
    if (file == NULL || !clang_File_isEqual(file, f->t->file)) {
        return -1;
    }
    return (long)off;
}

/* Where a message about launch call points: where its text is in the
 * file, not inside a macro's definition (SEL(i)<<<...>>> with SEL a macro
 * is said at its line). */
static CXSourceLocation where(const corun__cc_fnptr *f, CXCursor call)
{
    CXSourceLocation loc = clang_getCursorLocation(call);
    long off = file_off(f, loc);
    return off < 0 ? loc : clang_getLocationForOffset(f->t->tu, f->t->file, (unsigned)off);
}

/* "'ka', 'kb'" (the first few names, then "..."). */
static void say_names(corun__cc_buf *b, const corun__cc_fnptr *f, const reach *r)
{
    for (size_t i = 0; i < r->n && i < NAMES_SAID; i++) {
        corun__cc_buf_printf(b, "%s'%s'", i ? ", " : "", f->v[r->pick[i]].first->name);
    }
    if (r->n > NAMES_SAID) {
        corun__cc_buf_adds(b, ", ...");
    }
}

/* Says what a launch through a pointer does when no kernel of the file
 * can be its target: a warning, launched as written, or an error under
 * CORUN_CC_STRICT. */
static void say_unchanged(corun__cc_fnptr *f, CXCursor call, CXType fn, const reach *r)
{
    corun__cc_buf why = {0};
    if (fn.kind == CXType_Invalid) {
        corun__cc_buf_adds(&why, "corun-cc cannot read the function type of the pointer (it "
                                 "depends on a template parameter?), so it cannot tell which "
                                 "kernels of this file it may hold");
    } else {
        CXString sp = clang_getTypeSpelling(fn);
        corun__cc_buf_printf(&why, "no kernel of this file declared before it has its type, %s",
                             clang_getCString(sp));
        clang_disposeString(sp);
        if (r->later > 0) {
            corun__cc_buf_printf(&why, " ('%s' has it but is declared after the launch: "
                                       "declare it first)",
                                 f->v[r->first_later].first->name);
        } else {
            corun__cc_buf_adds(&why, ", so it holds a kernel of another file");
        }
    }
    if (why.oom) {
        f->d->oom = 1;
        f->d->errors++;
    } else if (f->d->strict) {
        corun__cc_diag_at(f->d, CORUN_CC_ERROR, where(f, call),
                          "launch through a function pointer",
                          "%s (CORUN_CC_STRICT=1 refuses what would run unchanged)", why.p);
    } else {
        corun__cc_diag_at(f->d, CORUN_CC_WARNING, where(f, call),
                          "launch through a function pointer",
                          "%s; launched unchanged, not through corun", why.p);
    }
    corun__cc_buf_free(&why);
}

static void say_taken(corun__cc_fnptr *f, CXCursor call, const reach *r)
{
    corun__cc_buf b = {0};
    if (r->n == 1) {
        corun__cc_buf_adds(&b, "goes through corun when the pointer holds the kernel of this "
                               "file of its type (");
    } else {
        corun__cc_buf_printf(&b, "goes through corun when the pointer holds one of the %zu "
                                 "kernels of this file of its type (",
                             r->n);
    }
    say_names(&b, f, r);
    corun__cc_buf_adds(&b, "), compared at run time; launched plainly, as written, for any "
                           "other kernel");
    if (r->later > 0) {
        corun__cc_buf_printf(&b, " (also '%s' of this file, declared after the launch)",
                             f->v[r->first_later].first->name);
    }
    if (b.oom) {
        f->d->oom = 1;
        f->d->errors++;
    } else {
        corun__cc_diag_at(f->d, CORUN_CC_WARNING, where(f, call),
                          "launch through a function pointer", "%s", b.p);
    }
    corun__cc_buf_free(&b);
}

/* Whether a and b lie inside the same macro invocations (an invocation
 * that starts at a does not hold it): text inserted at a then stays in the
 * same macro argument as b. */
static int same_invocations(const corun__cc_src *s, unsigned a, unsigned b)
{
    for (size_t i = 0; i < s->nexpansions; i++) {
        const corun__cc_range *r = &s->expansions[i];
        if ((r->start < a && a < r->end) != (r->start <= b && b < r->end)) {
            return 0;
        }
    }
    return 1;
}

/* The kernels a launch `call` through a pointer of type fn may reach, into
 * r, and the launch's extent into at and end. Where it reaches none, that
 * is said (say_unchanged) and r->n is 0: the launch stays as written. */
static int reach_at_call(corun__cc_fnptr *f, CXCursor call, CXType fn, long *at, long *end,
                         reach *r)
{
    corun__cc_extent(f->t, f->s, call, at, end);
    int rc = reach_of(f, fn, *at < 0 ? 0 : (unsigned)*at, r);
    if (rc == CORUN_OK && r->n == 0) {
        say_unchanged(f, call, fn, r);
        free(r->pick);
        r->pick = NULL;
    }
    return rc;
}

/* corun__cc_edit_add, where inserting nothing adds no edit. */
static int add(corun__cc_fnptr *f, unsigned off, unsigned len, const char *text)
{
    if (len == 0 && text[0] == '\0') {
        return CORUN_OK;
    }
    return corun__cc_edit_add(f->e, off, len, text);
}

int corun__cc_fnptr_launch(corun__cc_fnptr *f, CXCursor call, CXCursor cfg, int *rewritten)
{
    const corun__cc_src *s = f->s;
    CXCursor callee = corun__cc_child(call, 0);
    CXType fn = called_type(callee);
    long at, end;
    reach r;

    *rewritten = 0;
    int rc = reach_at_call(f, call, fn, &at, &end, &r);
    if (rc != CORUN_OK || r.n == 0) {
        return rc;
    }
    /* where the pointer's text starts, and the <<< ... >>> that follows */
    long p0 = file_off(f, clang_getRangeStart(clang_getCursorExtent(callee)));
    long lt = corun__cc_cursor_off(f->t, cfg, 1);
    long ltok = lt < 0 ? -1 : corun__cc_tok_at(s, (unsigned)lt);
    size_t close = ltok < 0 ? s->ntok : corun__cc_tok_match(s, (size_t)ltok);
    if (p0 < 0 || ltok < 0 || !corun__cc_tok_is(s, (size_t)ltok, "<<<") || p0 >= lt ||
        close >= s->ntok || !corun__cc_tok_is(s, close, ">>>") ||
        corun__cc_src_define_at(s, (unsigned)p0) != NULL ||
        corun__cc_src_define_at(s, (unsigned)lt) != NULL ||
        corun__cc_src_define_at(s, s->tok[close].off) != NULL ||
        !same_invocations(s, (unsigned)p0, (unsigned)lt)) {
        corun__cc_diag_at(f->d, CORUN_CC_ERROR, where(f, call),
                          "launch through a function pointer in a macro",
                          "the pointer may hold a kernel of this file, but the launch is "
                          "written in a macro definition, or its pointer partly in a macro's "
                          "arguments, which corun-cc does not rewrite for a launch through a "
                          "pointer; write the pointer and the <<<...>>> in the code");
        free(r.pick);
        return CORUN_OK;
    }
    unsigned c0 = s->tok[ltok].off + 3, c1 = s->tok[close].off;
    corun__cc_buf head = {0}, tail = {0};
    corun__cc_buf_adds(&head, "::corun::launch_through(::corun::config(");
    corun__cc_buf_add(&head, s->text + c0, c1 - c0);
    corun__cc_buf_adds(&head, "))(");
    corun__cc_buf_adds(&tail, ", {");
    for (size_t i = 0; i < r.n; i++) {
        const char *q = f->v[r.pick[i]].qname;
        corun__cc_buf_printf(&tail, "%s{%s, %s__corun_launch}", i ? ", " : "", q, q);
    }
    corun__cc_buf_adds(&tail, "})");
    if (head.oom || tail.oom) {
        rc = CORUN_ENOMEM;
    } else {
        rc = add(f, (unsigned)p0, 0, head.p);
        if (rc == CORUN_OK) {
            rc = add(f, s->tok[ltok].off, c1 + 3 - s->tok[ltok].off, tail.p);
        }
    }
    if (rc == CORUN_OK) {
        say_taken(f, call, &r);
        *rewritten = 1;
    }
    corun__cc_buf_free(&head);
    corun__cc_buf_free(&tail);
    free(r.pick);
    return rc;
}

/* The part of cudaLaunchKernel's first argument that still has the
 * pointer's function type, under casts to void * (or arg itself); a null
 * cursor when there is none. */
static CXCursor typed_operand(CXCursor arg)
{
    for (int depth = 0; depth < 16 && !clang_Cursor_isNull(arg); depth++) {
        if (called_type(arg).kind != CXType_Invalid) {
            return arg;
        }
        enum CXCursorKind k = clang_getCursorKind(arg);
        if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr &&
            k != CXCursor_CStyleCastExpr && k != CXCursor_CXXStaticCastExpr &&
            k != CXCursor_CXXReinterpretCastExpr && k != CXCursor_CXXConstCastExpr) {
            break;
        }
        CXCursor next = clang_getNullCursor();
        for (unsigned i = 0, n = corun__cc_nchildren(arg); i < n; i++) {
            CXCursor c = corun__cc_child(arg, i);
            if (clang_isExpression(clang_getCursorKind(c))) {
                next = c; /* the operand; a cast's type comes first, if named */
            }
        }
        arg = next;
    }
    return clang_getNullCursor();
}

int corun__cc_fnptr_launch_kernel(corun__cc_fnptr *f, CXCursor call, CXCursor arg0, int *taken,
                                  int *rewritten)
{
    const corun__cc_src *s = f->s;
    CXCursor op = typed_operand(arg0);
    long at, end, a0, a1, o0, o1;
    reach r;

    *taken = *rewritten = 0;
    if (clang_Cursor_isNull(op)) {
        return CORUN_OK; /* a void * of unknown origin */
    }
    *taken = 1;
    CXType fn = called_type(op);
    int rc = reach_at_call(f, call, fn, &at, &end, &r);
    if (rc != CORUN_OK || r.n == 0) {
        return rc;
    }
    long callee_off = corun__cc_cursor_off(f->t, call, 1);
    long ct = callee_off < 0 ? -1 : corun__cc_tok_at(s, (unsigned)callee_off);
    corun__cc_extent(f->t, s, arg0, &a0, &a1);
    corun__cc_extent(f->t, s, op, &o0, &o1);
    if (ct < 0 || a0 < 0 || o0 < 0 || !corun__cc_tok_is(s, (size_t)ct, "cudaLaunchKernel") ||
        !corun__cc_tok_is(s, (size_t)ct + 1, "(") || corun__cc_src_define_at(s, (unsigned)ct) ||
        corun__cc_src_define_at(s, (unsigned)a0) || o0 < a0 || o1 > a1) {
        corun__cc_diag_at(f->d, CORUN_CC_ERROR, where(f, call),
                          "cudaLaunchKernel through a function pointer",
                          "the pointer may hold a kernel of this file, but only a call written "
                          "out in this file can be sent through corun");
        free(r.pick);
        return CORUN_OK;
    }
    corun__cc_buf tail = {0};
    corun__cc_buf_adds(&tail, ", {");
    for (size_t i = 0; i < r.n; i++) {
        const struct corun__cc_fnptr_kernel *k = &f->v[r.pick[i]];
        corun__cc_buf_adds(&tail, i ? ", {" : "{");
        corun__cc_quote(&tail, k->first->name);
        /* as the launcher registers it (pins.c) */
        corun__cc_buf_printf(&tail, ", %s, %s, %s__corun}",
                             k->first->occupancy_loss ? "CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS" : "0u",
                             k->qname, k->qname);
    }
    corun__cc_buf_adds(&tail, "}");
    if (tail.oom) {
        rc = CORUN_ENOMEM;
    } else {
        /* the casts to void * go: the shim needs the pointer's type */
        rc = add(f, s->tok[ct].off, s->tok[ct].len, "::corun::launch_kernel_through");
        if (rc == CORUN_OK) {
            rc = add(f, (unsigned)a0, (unsigned)(o0 - a0), "");
        }
        if (rc == CORUN_OK) {
            rc = corun__cc_edit_add(f->e, (unsigned)o1, (unsigned)(a1 - o1), tail.p);
        }
    }
    if (rc == CORUN_OK) {
        say_taken(f, call, &r);
        *rewritten = 1;
    }
    corun__cc_buf_free(&tail);
    free(r.pick);
    return rc;
}
