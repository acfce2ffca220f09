/*
 * uniform.c — whether a condition has the same value in every thread of a
 * block, by rules that are sound for what they accept: a return under a
 * condition that passes may come before a barrier (checks.c).
 */
#include <stdio.h>
#include <string.h>

#include "cc/walk.h"
#include "corun/corun.h"

/* Functions whose result is the same in every thread given uniform
 * arguments, or block-wide by definition. */
static const char *const uniform_calls[] = {
    "min", "max", "umin", "umax", "llmin", "llmax", "ullmin", "ullmax", "abs", "labs", "llabs",
    "fminf", "fmaxf", "fmin", "fmax", "__syncthreads_count", "__syncthreads_and",
    "__syncthreads_or", NULL};

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

static enum CXChildVisitResult uni_visit(CXCursor c, CXCursor p, CXClientData data)
{
    uni_ctx *x = data;
    (void)p;
    if (!corun__cc_uniform(x->k, c, x->depth + 1)) {
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
int corun__cc_uniform(checker *k, CXCursor c, int depth)
{
    if (depth > 32) {
        return 0;
    }
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        enum CXCursorKind rk = clang_getCursorKind(ref);
        int b = corun__cc_builtin_var(ref);
        if (b) {
            return b != 't';
        }
        if (corun__cc_spelled(ref, "warpSize")) {
            return 1;
        }
        if (rk == CXCursor_NonTypeTemplateParameter || rk == CXCursor_EnumConstantDecl ||
            corun__cc_is_function(rk)) {
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
            return corun__cc_uniform(k, init, depth + 1);
        }
        return 0;
    }
    if (kind == CXCursor_CallExpr) {
        CXString sp = clang_getCursorSpelling(c);
        int ok = corun__cc_name_in(clang_getCString(sp), uniform_calls);
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
