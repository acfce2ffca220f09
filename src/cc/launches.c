/*
 * launches.c — every host launch of a kernel of this file becomes a call of
 * the kernel's launcher (emit.c writes it next to the kernel):
 *
 *   k<T><<<g, b, smem, s>>>(x, y)
 *   k__corun_launch<T>(::corun::config(g, b, smem, s), x, y)
 *
 * by four small edits at the tokens' spelling positions: "__corun_launch"
 * after the name, "<<<", ">>>" and the "(" of the arguments. Because the
 * launcher has the kernel's own template and function parameters, explicit
 * template arguments, deduction, overloads and argument conversions work
 * as for the launch it replaces. Launches written inside a macro are edited
 * in the macro's definition, or at its invocation when the kernel name is a
 * macro argument used once; forms that cannot be edited the same way for
 * every expansion are refused.
 *
 * cudaLaunchKernel and cudaFuncSetAttribute/CacheConfig naming a kernel of
 * this file are sent to the shim with the worker added; launches through a
 * function pointer go to fnptr.c; cooperative and attribute launches,
 * cudaLaunchKernel given a void * and launches from device code are
 * refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"
#include "corun/corun.h"

typedef enum ctx_kind { CTX_HOST, CTX_DEVICE, CTX_HD } ctx_kind;

typedef struct launch_ctx {
    const corun__cc_tu *t;
    const corun__cc_src *s;
    corun__cc_decls *ks;
    corun__cc_edits *e;
    corun__cc_diags *d;
    int rc;
    ctx_kind where;
    size_t rewritten;
    corun__cc_fnptr fp;
} launch_ctx;

static void refuse(launch_ctx *x, CXCursor at, const char *construct, const char *why)
{
    corun__cc_diag_at(x->d, CORUN_CC_ERROR, clang_getCursorLocation(at), construct, "%s", why);
}

static void warn(launch_ctx *x, CXCursor at, const char *construct, const char *why,
                 const char *name)
{
    corun__cc_diag_at(x->d, CORUN_CC_WARNING, clang_getCursorLocation(at), construct,
                      "kernel '%s': %s", name, why);
}

static void edit(launch_ctx *x, unsigned off, unsigned len, const char *text)
{
    if (x->rc == CORUN_OK) {
        x->rc = corun__cc_edit_add(x->e, off, len, text);
    }
}

/* The cursor naming the callee: a DeclRefExpr or an OverloadedDeclRef
 * (a name in a template, resolved at instantiation). */
typedef struct ref_ctx {
    CXCursor found;
} ref_ctx;

static enum CXChildVisitResult ref_visit(CXCursor c, CXCursor p, CXClientData data)
{
    ref_ctx *x = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    (void)p;
    if (k == CXCursor_OverloadedDeclRef ||
        (k == CXCursor_DeclRefExpr && !clang_Cursor_isNull(clang_getCursorReferenced(c)))) {
        x->found = c;
        return CXChildVisit_Break;
    }
    if (k == CXCursor_DeclRefExpr || k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr ||
        k == CXCursor_CStyleCastExpr || k == CXCursor_CXXStaticCastExpr ||
        k == CXCursor_CXXReinterpretCastExpr || k == CXCursor_UnaryOperator) {
        return CXChildVisit_Recurse;
    }
    return CXChildVisit_Continue;
}

static CXCursor callee_ref(CXCursor expr)
{
    ref_ctx x = {clang_getNullCursor()};
    if (ref_visit(expr, expr, &x) == CXChildVisit_Recurse) {
        clang_visitChildren(expr, ref_visit, &x);
    }
    return x.found;
}

/* The first declaration (which holds the launcher) of the kernel of this
 * file that ref names. *why explains a NULL result: 0 not a function,
 * 1 a kernel declared elsewhere, 2 not a kernel. */
static corun__cc_decl *first_decl_of(launch_ctx *x, CXCursor ref, int *why)
{
    CXCursor decl;
    *why = 0;
    if (clang_getCursorKind(ref) == CXCursor_DeclRefExpr &&
        clang_getCursorKind(clang_getCursorReferenced(ref)) == CXCursor_OverloadedDeclRef) {
        ref = clang_getCursorReferenced(ref); /* a dependent name */
    }
    if (clang_getCursorKind(ref) == CXCursor_OverloadedDeclRef) {
        corun__cc_decl *found = NULL;
        unsigned n = clang_getNumOverloadedDecls(ref);
        for (unsigned i = 0; i < n; i++) {
            decl = clang_getOverloadedDecl(ref, i);
            char *usr = corun__cc_decl_usr(decl);
            corun__cc_decl *k = usr ? corun__cc_decl_first(x->ks, usr) : NULL;
            free(usr);
            if (k == NULL) {
                *why = corun__cc_has_attr(decl, CXCursor_CUDAGlobalAttr) ? 1 : 2;
                return NULL;
            }
            found = found ? found : k;
        }
        return found;
    }
    decl = clang_getCursorReferenced(ref);
    enum CXCursorKind k = clang_getCursorKind(decl);
    if (k != CXCursor_FunctionDecl && k != CXCursor_FunctionTemplate) {
        return NULL;
    }
    char *usr = corun__cc_decl_usr(decl);
    corun__cc_decl *kn = usr ? corun__cc_decl_first(x->ks, usr) : NULL;
    free(usr);
    if (kn == NULL) {
        CXCursor t = clang_getSpecializedCursorTemplate(decl);
        CXCursor g = clang_Cursor_isNull(t) ? decl : t;
        *why = corun__cc_has_attr(g, CXCursor_CUDAGlobalAttr) ||
                       corun__cc_has_attr(decl, CXCursor_CUDAGlobalAttr)
                   ? 1
                   : 2;
    }
    return kn;
}

/* Name of the macro whose top-level invocation covers off, written into
 * out; 0 when off is not inside an invocation. */
static int invocation_at(const corun__cc_src *s, unsigned off, char *out, size_t n)
{
    for (size_t i = 0; i < s->nexpansions; i++) {
        const corun__cc_range *r = &s->expansions[i];
        if (r->start <= off && off < r->end) {
            size_t j = corun__cc_tok_from(s, r->start);
            if (j >= s->ntok) {
                return 0;
            }
            snprintf(out, n, "%.*s", (int)s->tok[j].len, s->text + s->tok[j].off);
            return 1;
        }
    }
    return 0;
}

static void define_name(const corun__cc_src *s, const corun__cc_define *def, char *out, size_t n)
{
    size_t j = corun__cc_tok_from(s, def->r.start);
    snprintf(out, n, "%.*s", j < s->ntok ? (int)s->tok[j].len : 0,
             j < s->ntok ? s->text + s->tok[j].off : "");
}

/* Occurrences of identifier token t (of define def) in def's body. */
static int uses_in_body(const corun__cc_src *s, const corun__cc_define *def, size_t t)
{
    int n = 0;
    for (size_t j = corun__cc_tok_from(s, def->body); j < s->ntok && s->tok[j].off < def->r.end;
         j++) {
        if (s->tok[j].len == s->tok[t].len &&
            memcmp(s->text + s->tok[j].off, s->text + s->tok[t].off, s->tok[t].len) == 0) {
            n++;
        }
    }
    return n;
}

/* Whether identifier token t names a parameter of function-like def. */
static int is_macro_param(const corun__cc_src *s, const corun__cc_define *def, size_t t)
{
    if (!def->function_like) {
        return 0;
    }
    size_t j = corun__cc_tok_from(s, def->r.start) + 2;
    for (; j < s->ntok && s->tok[j].off < def->body; j++) {
        if (s->tok[j].len == s->tok[t].len &&
            memcmp(s->text + s->tok[j].off, s->text + s->tok[t].off, s->tok[t].len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Edits for "name" of a launch or API call: where "__corun_launch" (or
 * another suffix) goes. Returns the offset, or -1 with a refusal. */
static long name_edit_at(launch_ctx *x, CXCursor at, long name_off, const corun__cc_define *ltd,
                         size_t launch_tok, const char *kname, int *paste_tok)
{
    const corun__cc_src *s = x->s;
    const corun__cc_define *ntd = corun__cc_src_define_at(s, (unsigned)name_off);
    char mname[128], iname[128];

    *paste_tok = -1;
    if (ntd == ltd) {
        return name_off; /* both in the file, or both in one macro body */
    }
    if (ltd == NULL) {
        refuse(x, at, "kernel named by a macro",
               "the kernel's name comes from a macro definition while the launch is "
               "written outside it, so the name cannot be changed for this launch only");
        return -1;
    }
    if (ntd != NULL) {
        refuse(x, at, "launch through nested macros",
               "the kernel's name and the <<<...>>> are written in different macro "
               "definitions");
        return -1;
    }
    /* the name is a macro argument at an invocation of ltd's macro */
    define_name(s, ltd, mname, sizeof(mname));
    if (!invocation_at(s, (unsigned)name_off, iname, sizeof(iname)) ||
        strcmp(iname, mname) != 0) {
        refuse(x, at, "launch through nested macros",
               "the kernel's name reaches the macro that launches it through another macro");
        return -1;
    }
    size_t p = launch_tok;
    while (p > 0 && corun__cc_tok_is(s, p - 1, ">")) {
        /* k<T><<<...: walk back over the template arguments */
        int depth = 0;
        size_t q = p - 1;
        for (;; q--) {
            if (corun__cc_tok_is(s, q, ">")) {
                depth++;
            } else if (corun__cc_tok_is(s, q, "<")) {
                depth--;
            }
            if (depth == 0 || q == 0) {
                break;
            }
        }
        p = q;
    }
    if (p == 0 || s->tok[p - 1].kind != CXToken_Identifier || !is_macro_param(s, ltd, p - 1)) {
        refuse(x, at, "launch in a macro",
               "the token before <<< in the macro body is not the macro parameter that names "
               "the kernel; corun-cc cannot rewrite this form");
        return -1;
    }
    if (uses_in_body(s, ltd, p - 1) == 1) {
        return name_off;
    }
    /* the parameter is used elsewhere too (e.g. #kernel): paste in the body */
    size_t nt = (size_t)corun__cc_tok_at(s, (unsigned)name_off);
    if (!corun__cc_tok_is(s, nt + 1, ",") && !corun__cc_tok_is(s, nt + 1, ")")) {
        refuse(x, at, "launch in a macro",
               "the macro uses its kernel parameter more than once and this invocation "
               "passes more than a name (template arguments?), so neither the invocation nor "
               "the macro can be rewritten for the launch alone");
        return -1;
    }
    (void)kname;
    *paste_tok = (int)(p - 1);
    return -1;
}

/* Whether the callee or kernel argument whose name callee_ref found (ref,
 * null when none) is a value rather than a function's name: a variable, a
 * parameter, a member, a table entry, a call's result (fnptr.c). */
static int by_value(CXCursor ref)
{
    if (clang_Cursor_isNull(ref)) {
        return 1;
    }
    if (clang_getCursorKind(ref) == CXCursor_OverloadedDeclRef) {
        return 0;
    }
    enum CXCursorKind dk = clang_getCursorKind(clang_getCursorReferenced(ref));
    return dk != CXCursor_FunctionDecl && dk != CXCursor_FunctionTemplate &&
           dk != CXCursor_OverloadedDeclRef;
}

/* The first declaration of the kernel that launch call runs (ref: the
 * name it launches), or NULL, refused or warned of, when the launch cannot
 * go through corun: not declared in this file, a refused kernel, before
 * the kernel's first declaration here. */
static corun__cc_decl *launched_decl(launch_ctx *x, CXCursor call, CXCursor ref)
{
    const corun__cc_src *s = x->s;
    int why = 0;

    CXString nsp = clang_getCursorSpelling(ref);
    char kname[256];
    snprintf(kname, sizeof(kname), "%s", clang_getCString(nsp));
    clang_disposeString(nsp);

    corun__cc_decl *kn = first_decl_of(x, ref, &why);
    if (kn == NULL) {
        if (why == 1 && x->d->strict) {
            corun__cc_diag_at(x->d, CORUN_CC_ERROR, clang_getCursorLocation(call),
                              "launch of a kernel defined elsewhere",
                              "kernel '%s': not declared in this file, so it has no worker "
                              "form here (CORUN_CC_STRICT=1 refuses what would run unchanged)",
                              kname);
        } else if (why == 1) {
            warn(x, call, "launch of a kernel defined elsewhere",
                 "not declared in this file, so it has no worker form here; launched "
                 "unchanged, not through corun",
                 kname);
        } else {
            refuse(x, call, "launch of something that is not a kernel",
                   "corun-cc cannot tell which kernel runs");
        }
        return NULL;
    }
    if (kn->refused) {
        return NULL;
    }
    long launch_at, launch_end;
    corun__cc_extent(x->t, s, call, &launch_at, &launch_end);
    /* a record of another file (headers.c) precedes the launch: C++ wants
     * the kernel declared first */
    if (!kn->elsewhere && launch_at >= 0 && (unsigned)launch_at < kn->start) {
        warn(x, call, "launch before the kernel's declaration in this file",
             "first declared outside this file (a header?), so its launcher does not exist "
             "here yet; launched unchanged, not through corun",
             kn->name);
        return NULL;
    }
    return kn;
}

/* How many arguments of launch call the parser sees written (not default
 * arguments it fills in). */
static unsigned explicit_args(launch_ctx *x, CXCursor call)
{
    unsigned nargs = 0, nch = corun__cc_nchildren(call);
    for (unsigned i = 2; i < nch; i++) {
        long a0, a1;
        corun__cc_extent(x->t, x->s, corun__cc_child(call, i), &a0, &a1);
        CXSourceRange r = clang_getCursorExtent(corun__cc_child(call, i));
        if (!clang_Range_isNull(r) && !(a0 >= 0 && a0 == a1)) {
            nargs++;
        }
    }
    return nargs;
}

static void do_launch(launch_ctx *x, CXCursor call, CXCursor cfg)
{
    const corun__cc_src *s = x->s;
    CXCursor ref = callee_ref(corun__cc_child(call, 0));
    if (by_value(ref)) {
        int rewritten = 0;
        if (x->rc == CORUN_OK) {
            x->rc = corun__cc_fnptr_launch(&x->fp, call, cfg, &rewritten);
        }
        x->rewritten += (size_t)rewritten;
        return;
    }
    corun__cc_decl *kn = launched_decl(x, call, ref);
    if (kn == NULL) {
        return;
    }
    long name_off = corun__cc_cursor_off(x->t, ref, 1);
    long lt = corun__cc_cursor_off(x->t, cfg, 1);
    if (name_off < 0 || lt < 0) {
        warn(x, call, "launch written in another file",
             "the launch is spelled in an included file, which corun-cc does not rewrite; "
             "launched unchanged, not through corun",
             kn->name);
        return;
    }
    long nt = corun__cc_tok_at(s, (unsigned)name_off);
    long ltok = corun__cc_tok_at(s, (unsigned)lt);
    if (nt < 0 || ltok < 0 || !corun__cc_tok_is(s, (size_t)ltok, "<<<") ||
        s->tok[nt].len != strlen(kn->name) ||
        memcmp(s->text + s->tok[nt].off, kn->name, s->tok[nt].len) != 0) {
        refuse(x, call, "launch", "cannot find the kernel's name and <<< in the text");
        return;
    }
    size_t close = corun__cc_tok_match(s, (size_t)ltok);
    const corun__cc_define *ltd = corun__cc_src_define_at(s, (unsigned)lt);
    if (close >= s->ntok || !corun__cc_tok_is(s, close, ">>>") ||
        !corun__cc_tok_is(s, close + 1, "(") ||
        corun__cc_src_define_at(s, s->tok[close + 1].off) != ltd) {
        refuse(x, call, "launch", "cannot find the >>> and the argument list in the text");
        return;
    }
    /* explicit arguments seen by the parser vs "()" in the text */
    unsigned nargs = explicit_args(x, call);
    int empty = corun__cc_tok_is(s, close + 2, ")");
    if (!empty && nargs == 0) {
        refuse(x, call, "launch in a macro",
               "the macro's argument list expands to nothing here, while the macro is written "
               "for arguments; corun-cc cannot rewrite both cases");
        return;
    }

    int paste = -1;
    long at = name_edit_at(x, call, name_off, ltd, (size_t)ltok, kn->name, &paste);
    if (at < 0 && paste < 0) {
        return;
    }
    if (paste >= 0) {
        char t[256];
        snprintf(t, sizeof(t), "%.*s##__corun_launch", (int)s->tok[paste].len,
                 s->text + s->tok[paste].off);
        edit(x, s->tok[paste].off, s->tok[paste].len, t);
    } else {
        edit(x, (unsigned)at + s->tok[nt].len, 0, "__corun_launch");
    }
    edit(x, s->tok[ltok].off, 3, "(::corun::config(");
    edit(x, s->tok[close].off, 3, ")");
    edit(x, s->tok[close + 1].off, 1, empty ? "" : ", ");
    x->rewritten++;
}

/* cudaLaunchKernel(k, ...), cudaFuncSetAttribute(k, ...) and
 * cudaFuncSetCacheConfig(k, ...): the shim function shim gets the worker
 * and the kernel's name in front of the original arguments. */
static void do_api(launch_ctx *x, CXCursor call, const char *api, const char *shim, int named)
{
    const corun__cc_src *s = x->s;
    CXCursor arg0 = corun__cc_child(call, 1);
    CXCursor ref = clang_Cursor_isNull(arg0) ? arg0 : callee_ref(arg0);
    int why = 0;
    char msg[512];

    corun__cc_decl *kn = clang_Cursor_isNull(ref) ? NULL : first_decl_of(x, ref, &why);
    if (kn == NULL) {
        if (why == 1) {
            CXString sp = clang_getCursorSpelling(ref);
            snprintf(msg, sizeof(msg), "%s of a kernel declared outside this file: left unchanged",
                     api);
            warn(x, call, api, msg, clang_getCString(sp));
            clang_disposeString(sp);
        } else if (strcmp(api, "cudaLaunchKernel") == 0 && by_value(ref)) {
            int taken = 0, rewritten = 0;
            if (x->rc == CORUN_OK) {
                x->rc = corun__cc_fnptr_launch_kernel(&x->fp, call, arg0, &taken, &rewritten);
            }
            x->rewritten += (size_t)rewritten;
            if (!taken) {
                refuse(x, call, "kernel launched by pointer",
                       "cudaLaunchKernel is given a pointer without a function type (a void "
                       "*), so corun-cc cannot tell which kernels of this file it may hold; "
                       "pass the kernel's name, or a pointer of the kernel's function type");
            }
        } else if (strcmp(api, "cudaLaunchKernel") == 0) {
            refuse(x, call, "kernel launched by pointer",
                   "cudaLaunchKernel is given a pointer that is not a kernel of this file by "
                   "name, so corun-cc cannot tell which kernel runs or give it a worker; "
                   "launch it with <<<...>>> or pass the kernel's name");
        }
        return;
    }
    if (kn->refused) {
        return;
    }
    long callee_off = corun__cc_cursor_off(x->t, call, 1);
    long a0, a1;
    corun__cc_extent(x->t, s, arg0, &a0, &a1);
    long name_off = corun__cc_cursor_off(x->t, ref, 1);
    long ct = callee_off < 0 ? -1 : corun__cc_tok_at(s, (unsigned)callee_off);
    if (ct < 0 || a0 < 0 || name_off < 0 || !corun__cc_tok_is(s, (size_t)ct, api) ||
        !corun__cc_tok_is(s, (size_t)ct + 1, "(") || corun__cc_src_define_at(s, (unsigned)ct) ||
        corun__cc_src_define_at(s, (unsigned)a0) || (unsigned)name_off < (unsigned)a0 ||
        (unsigned)name_off >= (unsigned)a1) {
        snprintf(msg, sizeof(msg),
                 "kernel '%s': only a call written out in this file, with the kernel named in "
                 "its first argument, can be sent through corun",
                 kn->name);
        refuse(x, call, api, msg);
        return;
    }
    long nt = corun__cc_tok_at(s, (unsigned)name_off);
    corun__cc_buf b = {0};
    if (named) {
        corun__cc_quote(&b, kn->name);
        /* as the launcher registers it (pins.c) */
        corun__cc_buf_adds(&b, kn->occupancy_loss ? ", CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS, " : ", ");
    }
    corun__cc_buf_adds(&b, "(const void *)(");
    corun__cc_buf_add(&b, s->text + a0, (size_t)(name_off - a0) + s->tok[nt].len);
    corun__cc_buf_adds(&b, "__corun");
    unsigned rest = (unsigned)name_off + s->tok[nt].len;
    corun__cc_buf_add(&b, s->text + rest, (size_t)a1 - rest);
    corun__cc_buf_adds(&b, "), ");
    if (b.oom) {
        x->rc = CORUN_ENOMEM;
    } else {
        edit(x, s->tok[ct].off, s->tok[ct].len, shim);
        edit(x, (unsigned)a0, 0, b.p);
        x->rewritten++;
    }
    corun__cc_buf_free(&b);
}

static void do_call(launch_ctx *x, CXCursor call)
{
    CXCursor second = corun__cc_child(call, 1);
    int launch = clang_getCursorKind(second) == CXCursor_CallExpr &&
                 (corun__cc_spelled(second, "__cudaPushCallConfiguration") ||
                  corun__cc_spelled(second, "cudaConfigureCall"));

    if (launch) {
        if (x->where == CTX_DEVICE || (x->t->device && x->where == CTX_HD)) {
            refuse(x, call, "dynamic parallelism",
                   "a kernel launched from device code cannot be scheduled or preempted by "
                   "corun");
        } else if (!x->t->device) {
            do_launch(x, call, second);
        }
        return;
    }
    if (x->t->device || x->where == CTX_DEVICE) {
        return;
    }
    CXString sp = clang_getCursorSpelling(call);
    const char *nm = clang_getCString(sp);
    if (strcmp(nm, "cudaLaunchKernel") == 0) {
        do_api(x, call, nm, "::corun::launch_kernel", 1);
    } else if (strcmp(nm, "cudaFuncSetAttribute") == 0) {
        do_api(x, call, nm, "::corun::func_set_attribute", 0);
    } else if (strcmp(nm, "cudaFuncSetCacheConfig") == 0) {
        do_api(x, call, nm, "::corun::func_set_cache_config", 0);
    } else if (strncmp(nm, "cudaLaunchCooperativeKernel", 27) == 0 ||
               strcmp(nm, "cuLaunchCooperativeKernel") == 0) {
        refuse(x, call, "cooperative launch",
               "a cooperative launch promises that all blocks run at once (grid-wide "
               "synchronisation), which a corun kernel does not");
    } else if (strncmp(nm, "cudaLaunchKernelEx", 18) == 0) {
        CXCursor r = callee_ref(corun__cc_child(call, 2));
        int why = 0;
        if (!clang_Cursor_isNull(r) && first_decl_of(x, r, &why) != NULL) {
            refuse(x, call, "launch with attributes (cudaLaunchKernelEx)",
                   "not supported for kernels corun transforms (clusters, cooperative and "
                   "other launch attributes change how blocks run together); use <<<...>>>");
        }
    }
    clang_disposeString(sp);
}

static ctx_kind fn_context(CXCursor fn)
{
    int g = corun__cc_has_attr(fn, CXCursor_CUDAGlobalAttr);
    int dv = corun__cc_has_attr(fn, CXCursor_CUDADeviceAttr);
    int h = corun__cc_has_attr(fn, CXCursor_CUDAHostAttr);
    if (g || (dv && !h)) {
        return CTX_DEVICE;
    }
    return dv && h ? CTX_HD : CTX_HOST;
}

static enum CXChildVisitResult launch_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    launch_ctx *x = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    (void)parent;

    if (clang_getCursorKind(parent) == CXCursor_TranslationUnit &&
        corun__cc_cursor_off(x->t, c, 0) < 0) {
        return CXChildVisit_Continue; /* declared in a header */
    }
    if (k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate ||
        k == CXCursor_CXXMethod || k == CXCursor_Constructor || k == CXCursor_Destructor ||
        k == CXCursor_ConversionFunction) {
        ctx_kind saved = x->where;
        x->where = fn_context(c);
        clang_visitChildren(c, launch_visit, x);
        x->where = saved;
        return CXChildVisit_Continue;
    }
    if (k == CXCursor_CallExpr) {
        do_call(x, c);
    }
    return x->rc == CORUN_OK ? CXChildVisit_Recurse : CXChildVisit_Break;
}

int corun__cc_rewrite_launches(const corun__cc_tu *host, const corun__cc_tu *dev,
                               const corun__cc_src *s, corun__cc_decls *ks,
                               corun__cc_edits *e, corun__cc_diags *d, size_t *nlaunches)
{
    launch_ctx x = {host, s, ks, e, d, CORUN_OK, CTX_HOST, 0, {host, s, ks, e, d, NULL, 0, 0, 0}};
    clang_visitChildren(clang_getTranslationUnitCursor(host->tu), launch_visit, &x);
    corun__cc_fnptr_free(&x.fp);
    *nlaunches = x.rewritten;
    if (x.rc != CORUN_OK) {
        return x.rc;
    }
    /* device-side launches are refused before they reach fnptr.c */
    launch_ctx y = {dev, s, ks, e, d, CORUN_OK, CTX_HOST, 0, {dev, s, ks, e, d, NULL, 0, 0, 0}};
    clang_visitChildren(clang_getTranslationUnitCursor(dev->tu), launch_visit, &y);
    corun__cc_fnptr_free(&y.fp);
    return y.rc;
}
