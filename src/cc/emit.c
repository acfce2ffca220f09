/*
 * emit.c — the text that turns a kernel into its corun form (the expanded
 * form of CORUN_BODY/CORUN_KERNELS in corun_device.cuh). For
 *
 *   template <int B> __global__ void k(float *a, int n) { BODY }
 *
 * the declaration's head is replaced in place, so BODY keeps its lines:
 *
 *   template <int B> static __device__ __forceinline__ void
 *   k__corun_body(float *a, int n, const uint3 blockIdx, const dim3 gridDim) { BODY }
 *
 * and after the body follow, each under a #line naming the kernel's line:
 *   - the plain kernel, the original head calling the body with the
 *     built-in blockIdx/gridDim;
 *   - the worker k__corun(const corun_worker_arg, float *a, int n), whose
 *     loop calls the body once per block-task with the virtual index;
 *   - for a kernel that uses barriers or shared memory (CORUN_SHARED), the
 *     same worker once more as k__corun_ahead, around the loop that claims a
 *     task ahead (corun_worker_loop_ahead), which the runtime picks per
 *     launch;
 *   - the grid form k__corun_grid(const corun_worker_arg, float *a, int n),
 *     a block per task (corun_grid_block), which the runtime may launch as
 *     a kernel's first grid;
 *   - at the kernel's first declaration, the host launcher
 *     k__corun_launch(const ::corun::config &, float *a, int n) that
 *     launches.c sends every <<<...>>> to.
 * Inside BODY, blockIdx and gridDim (also where a user macro writes them)
 * now name the body's parameters, which shadow the built-ins: the same
 * replacement the papers make by rewriting the tokens, without touching
 * them. A return ends the block-task. Text is copied from the original, so
 * attributes, templates, default arguments and comments carry over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"
#include "corun/corun.h"

void corun__cc_quote(corun__cc_buf *b, const char *s)
{
    corun__cc_buf_add(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            corun__cc_buf_add(b, "\\", 1);
        }
        corun__cc_buf_add(b, s, 1);
    }
    corun__cc_buf_add(b, "\"", 1);
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

typedef struct render_ev {
    unsigned off;
    int skip; /* 0: insert an invented name, 1: leave out a default argument */
    const corun__cc_param *p;
} render_ev;

static int ev_cmp(const void *pa, const void *pb)
{
    const render_ev *x = pa, *y = pb;
    if (x->off != y->off) {
        return x->off < y->off ? -1 : 1;
    }
    return x->skip - y->skip;
}

/* Copies [a, b) of the original, inserting invented parameter names and,
 * with nodef, leaving out default arguments. */
static void render(corun__cc_buf *out, const corun__cc_src *s, const corun__cc_decl *k,
                   unsigned a, unsigned b, int nodef)
{
    size_t cap = 2 * (k->nparams + k->ntparams) + 1, n = 0;
    render_ev *ev = malloc(cap * sizeof(*ev));
    if (ev == NULL) {
        out->oom = 1;
        return;
    }
    for (int tp = 0; tp < 2; tp++) {
        const corun__cc_param *v = tp ? k->tparams : k->params;
        size_t nv = tp ? k->ntparams : k->nparams;
        for (size_t i = 0; i < nv; i++) {
            if (v[i].name_at >= (long)a && v[i].name_at <= (long)b) {
                ev[n++] = (render_ev){(unsigned)v[i].name_at, 0, &v[i]};
            }
            if (nodef && v[i].def < v[i].end && v[i].def >= a && v[i].def < b) {
                ev[n++] = (render_ev){v[i].def, 1, &v[i]};
            }
        }
    }
    qsort(ev, n, sizeof(*ev), ev_cmp);
    unsigned p = a;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].off < p) {
            continue; /* inside a default already left out */
        }
        corun__cc_buf_add(out, s->text + p, ev[i].off - p);
        p = ev[i].off;
        if (ev[i].skip) {
            p = ev[i].p->end < b ? ev[i].p->end : b;
            continue;
        }
        if (p > 0 && s->text[p - 1] != ' ' && s->text[p - 1] != '\t' && s->text[p - 1] != '\n') {
            corun__cc_buf_adds(out, " ");
        }
        corun__cc_buf_adds(out, ev[i].p->name);
        if (p < s->len && (ident_char(s->text[p]) || s->text[p] == '=')) {
            corun__cc_buf_adds(out, " ");
        }
    }
    corun__cc_buf_add(out, s->text + p, b - p);
    free(ev);
}

static void targs(corun__cc_buf *b, const corun__cc_decl *k)
{
    if (!k->is_template) {
        return;
    }
    corun__cc_buf_adds(b, "<");
    for (size_t i = 0; i < k->ntparams; i++) {
        corun__cc_buf_printf(b, "%s%s%s", i ? ", " : "", k->tparams[i].name,
                             k->tparams[i].pack ? "..." : "");
    }
    corun__cc_buf_adds(b, ">");
}

static void args(corun__cc_buf *b, const corun__cc_decl *k)
{
    for (size_t i = 0; i < k->nparams; i++) {
        corun__cc_buf_printf(b, "%s%s%s", i ? ", " : "", k->params[i].name,
                             k->params[i].pack ? "..." : "");
    }
}

static void params(corun__cc_buf *b, const corun__cc_src *s, const corun__cc_decl *k, int nodef)
{
    if (k->nparams > 0) {
        render(b, s, k, k->params[0].start, k->params[k->nparams - 1].end, nodef);
    }
}

/* "template <...>" and what separates it from the rest of the head. */
static void tmpl(corun__cc_buf *b, const corun__cc_src *s, const corun__cc_decl *k, int nodef)
{
    if (!k->is_template) {
        return;
    }
    render(b, s, k, k->start, k->tmpl_end, nodef);
    int nl = 0;
    for (unsigned i = k->tmpl_end; i < k->name_off; i++) {
        nl |= s->text[i] == '\n';
    }
    corun__cc_buf_adds(b, nl ? "\n" : " ");
}

static void line_directive(corun__cc_buf *b, unsigned line, const char *file)
{
    corun__cc_buf_printf(b, "#line %u ", line);
    corun__cc_quote(b, file);
    corun__cc_buf_adds(b, "\n");
}

/* A kernel's entries besides the plain one: the worker k__corun, its ahead
 * entry k__corun_ahead (CORUN_SHARED kernels only) and the grid form
 * k__corun_grid (pins.c sets k->maxnreg in this order; the runtime uses the
 * grid form only where its occupancy is the plain kernel's). */
enum { ENTRY_WORKER, ENTRY_AHEAD, ENTRY_GRID, ENTRY_KINDS };
static const char *const entry_suffix[ENTRY_KINDS] = {"", "_ahead", "_grid"};

static int entry_emitted(const corun__cc_decl *k, int kind)
{
    return kind != ENTRY_AHEAD || k->shared;
}

/* The head of entry `kind` of k, up to and excluding its body or ";". */
static void worker_head(corun__cc_buf *b, const corun__cc_src *s, const corun__cc_decl *k,
                        int kind)
{
    unsigned pre = k->is_template ? k->tmpl_end : k->start;
    unsigned pin = k->maxnreg[kind];
    if (k->is_template) {
        render(b, s, k, k->start, k->tmpl_end, 1);
    }
    render(b, s, k, pre, k->name_off, 1);
    if (pin > 0) {
        corun__cc_buf_printf(b, "__maxnreg__(%u) ", pin);
    }
    corun__cc_buf_printf(b, "%s__corun%s", k->name, entry_suffix[kind]);
    render(b, s, k, k->name_end, k->lparen, 1);
    corun__cc_buf_adds(b, "(const corun_worker_arg corun_wa");
    if (k->nparams > 0) {
        corun__cc_buf_adds(b, ", ");
        params(b, s, k, 1);
    }
    corun__cc_buf_adds(b, ")");
    render(b, s, k, k->rparen + 1, k->end, 1);
}

static void launcher(corun__cc_buf *b, const corun__cc_src *s, const corun__cc_decl *k)
{
    tmpl(b, s, k, 0);
    corun__cc_buf_printf(b, "static __host__ inline void %s__corun_launch(const ::corun::config &corun_cfg",
                         k->name);
    if (k->nparams > 0) {
        corun__cc_buf_adds(b, ", ");
        params(b, s, k, 0);
    }
    corun__cc_buf_adds(b, ")\n{\n    static ::corun::kernel_slot corun_slot");
    if (k->occupancy_loss) {
        corun__cc_buf_adds(b, "(CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS)");
    }
    corun__cc_buf_adds(b, ";\n    ::corun::launch<");
    for (size_t i = 0; i < k->nparams; i++) {
        corun__cc_buf_printf(b, "%sdecltype(%s)%s", i ? ", " : "", k->params[i].name,
                             k->params[i].pack ? "..." : "");
    }
    corun__cc_buf_adds(b, ">(corun_slot, corun_cfg, ");
    corun__cc_quote(b, k->name);
    corun__cc_buf_printf(b, ", %s", k->name);
    targs(b, k);
    corun__cc_buf_printf(b, ", %s__corun", k->name);
    targs(b, k);
    if (k->shared) {
        corun__cc_buf_printf(b, ", %s__corun_ahead", k->name);
        targs(b, k);
    } else {
        corun__cc_buf_adds(b, ", nullptr");
    }
    corun__cc_buf_printf(b, ", %s__corun_grid", k->name);
    targs(b, k);
    if (k->nparams > 0) {
        corun__cc_buf_adds(b, ", ");
        args(b, k);
    }
    corun__cc_buf_adds(b, ");\n}\n");
}

static int count_nl(const char *p, size_t n)
{
    int c = 0;
    for (size_t i = 0; i < n; i++) {
        c += p[i] == '\n';
    }
    return c;
}

static int emit_definition(const corun__cc_src *s, corun__cc_decl *k, const char *file,
                           corun__cc_edits *e)
{
    corun__cc_buf head = {0}, after = {0};
    unsigned kline = corun__cc_src_line(s, k->start);
    int rc;

    /* the body function's head, in place of the kernel's */
    tmpl(&head, s, k, 1);
    corun__cc_buf_printf(&head, "static __device__ __forceinline__ void %s__corun_body(", k->name);
    if (k->nparams > 0) {
        params(&head, s, k, 1);
        corun__cc_buf_adds(&head, ", ");
    }
    corun__cc_buf_adds(&head, "const uint3 blockIdx, const dim3 gridDim)");
    int missing = count_nl(s->text + k->start, k->end - k->start) -
                  (head.p ? count_nl(head.p, head.len) : 0);
    for (int i = 0; i < missing; i++) {
        corun__cc_buf_adds(&head, "\n");
    }
    if (missing <= 0) {
        corun__cc_buf_adds(&head, " ");
    }
    if (k->wrap_body) {
        /* the body declares its own blockIdx/gridDim at its top level: one
         * more block lets it shadow the parameters as it shadowed the
         * built-ins */
        corun__cc_buf_adds(&head, "{");
    }

    /* then plain kernel, worker and launcher */
    if (k->wrap_body) {
        corun__cc_buf_adds(&after, "}");
    }
    corun__cc_buf_adds(&after, "\n");
    line_directive(&after, kline, file);
    render(&after, s, k, k->start, k->end, 0);
    corun__cc_buf_printf(&after, "{\n    %s__corun_body", k->name);
    targs(&after, k);
    corun__cc_buf_adds(&after, "(");
    args(&after, k);
    corun__cc_buf_adds(&after, k->nparams ? ", blockIdx, gridDim);\n}\n" : "blockIdx, gridDim);\n}\n");
    for (int kind = 0; kind < ENTRY_KINDS; kind++) {
        if (!entry_emitted(k, kind)) {
            continue;
        }
        line_directive(&after, kline, file);
        worker_head(&after, s, k, kind);
        if (kind == ENTRY_AHEAD) {
            corun__cc_buf_adds(&after, "{\n    corun_worker_loop_ahead(corun_wa, ");
        } else if (kind == ENTRY_GRID) {
            corun__cc_buf_adds(&after, "{\n    corun_grid_block(corun_wa, ");
        } else {
            corun__cc_buf_printf(&after, "{\n    corun_worker_loop<%s>(corun_wa, ",
                                 k->shared ? "CORUN_SHARED" : "CORUN_PLAIN");
        }
        corun__cc_buf_printf(&after,
                             "[&](const uint3 corun_b, const dim3 corun_g) {\n        %s__corun_body",
                             k->name);
        targs(&after, k);
        corun__cc_buf_adds(&after, "(");
        args(&after, k);
        corun__cc_buf_adds(&after, k->nparams ? ", corun_b, corun_g);\n    });\n}\n"
                                              : "corun_b, corun_g);\n    });\n}\n");
    }
    if (k->first) {
        line_directive(&after, kline, file);
        launcher(&after, s, k);
    }
    line_directive(&after, corun__cc_src_line(s, k->body_end - 1), file);

    if (head.oom || after.oom) {
        rc = CORUN_ENOMEM;
    } else {
        rc = corun__cc_edit_add(e, k->start, k->end - k->start, head.p);
        if (rc == CORUN_OK) {
            rc = corun__cc_edit_add(e, k->body_end, 0, after.p);
        }
    }
    corun__cc_buf_free(&head);
    corun__cc_buf_free(&after);
    return rc;
}

/* A declaration that is the kernel's first in the file: the worker's
 * declaration and the launcher follow it. */
static int emit_declaration(const corun__cc_src *s, corun__cc_decl *k, const char *file,
                            corun__cc_edits *e)
{
    corun__cc_buf after = {0};
    unsigned kline = corun__cc_src_line(s, k->start);

    corun__cc_buf_adds(&after, "\n");
    for (int kind = 0; kind < ENTRY_KINDS; kind++) {
        if (!entry_emitted(k, kind)) {
            continue;
        }
        line_directive(&after, kline, file);
        worker_head(&after, s, k, kind);
        corun__cc_buf_adds(&after, ";\n");
    }
    line_directive(&after, kline, file);
    launcher(&after, s, k);
    line_directive(&after, corun__cc_src_line(s, k->end), file);
    int rc = after.oom ? CORUN_ENOMEM : corun__cc_edit_add(e, k->end + 1, 0, after.p);
    corun__cc_buf_free(&after);
    return rc;
}

/* "template __global__ void k<16>(float *, int);" (and "extern template")
 * instantiates the plain kernel; the same for the worker follows it. */
static int emit_instantiations(const corun__cc_src *s, corun__cc_decls *ks, const char *file,
                               corun__cc_edits *e)
{
    for (size_t i = 0; i + 1 < s->ntok; i++) {
        if (!corun__cc_tok_is(s, i, "template") || corun__cc_tok_is(s, i + 1, "<") ||
            corun__cc_src_define_at(s, s->tok[i].off) != NULL) {
            continue;
        }
        size_t start = i > 0 && corun__cc_tok_is(s, i - 1, "extern") ? i - 1 : i;
        const corun__cc_decl *k = NULL;
        size_t name = 0, semi = i + 1;
        for (; semi < s->ntok && !corun__cc_tok_is(s, semi, ";") && !corun__cc_tok_is(s, semi, "{");
             semi++) {
            for (size_t j = 0; k == NULL && j < ks->n; j++) {
                if (ks->v[j].is_template && corun__cc_tok_is(s, semi, ks->v[j].name) &&
                    (corun__cc_tok_is(s, semi + 1, "<") || corun__cc_tok_is(s, semi + 1, "("))) {
                    k = &ks->v[j];
                    name = semi;
                }
            }
        }
        if (k == NULL || semi >= s->ntok || !corun__cc_tok_is(s, semi, ";") || k->refused) {
            continue;
        }
        size_t lp = name + 1;
        if (corun__cc_tok_is(s, lp, "<")) {
            lp = corun__cc_tok_match(s, lp) + 1;
        }
        if (!corun__cc_tok_is(s, lp, "(")) {
            continue;
        }
        size_t rp = corun__cc_tok_match(s, lp);
        if (rp >= semi) {
            continue;
        }
        int none = rp == lp + 1 || (rp == lp + 2 && corun__cc_tok_is(s, lp + 1, "void"));
        corun__cc_buf b = {0};
        unsigned from = s->tok[start].off;
        unsigned name_end = s->tok[name].off + s->tok[name].len;
        corun__cc_buf_adds(&b, "\n");
        for (int kind = 0; kind < ENTRY_KINDS; kind++) {
            if (!entry_emitted(k, kind)) {
                continue;
            }
            corun__cc_buf_add(&b, s->text + from, name_end - from);
            corun__cc_buf_adds(&b, "__corun");
            corun__cc_buf_adds(&b, entry_suffix[kind]);
            corun__cc_buf_add(&b, s->text + name_end, s->tok[lp].off + 1 - name_end);
            corun__cc_buf_adds(&b, "const corun_worker_arg");
            if (none) {
                corun__cc_buf_add(&b, s->text + s->tok[rp].off,
                                  s->tok[semi].off + 1 - s->tok[rp].off);
            } else {
                corun__cc_buf_adds(&b, ", ");
                corun__cc_buf_add(&b, s->text + s->tok[lp].off + 1,
                                  s->tok[semi].off - s->tok[lp].off);
            }
            corun__cc_buf_adds(&b, "\n");
        }
        line_directive(&b, corun__cc_src_line(s, s->tok[semi].off), file);
        int rc = b.oom ? CORUN_ENOMEM : corun__cc_edit_add(e, s->tok[semi].off + 1, 0, b.p);
        corun__cc_buf_free(&b);
        if (rc != CORUN_OK) {
            return rc;
        }
        i = semi;
    }
    return CORUN_OK;
}

/* Copies [a, b) of the original with the calls in sites rewritten. */
static void render_sites(corun__cc_buf *out, const corun__cc_src *s,
                         const corun__cc_callsites *sites, unsigned a, unsigned b)
{
    unsigned p = a;
    for (;;) {
        /* the next insertion point at or after p */
        unsigned next = b;
        const corun__cc_callsite *at = NULL;
        int args = 0;
        for (size_t i = 0; i < sites->n; i++) {
            const corun__cc_callsite *c = &sites->v[i];
            if (c->name_end >= p && c->name_end < next) {
                next = c->name_end;
                at = c;
                args = 0;
            }
            if (c->args_at >= p && c->args_at < next) {
                next = c->args_at;
                at = c;
                args = 1;
            }
        }
        corun__cc_buf_add(out, s->text + p, next - p);
        if (at == NULL) {
            return;
        }
        if (args) {
            corun__cc_buf_adds(out, at->has_args ? "blockIdx, gridDim, " : "blockIdx, gridDim");
        } else {
            corun__cc_buf_adds(out, "__corun");
        }
        p = next;
        /* the same offset is not both a name end and an argument start */
        if (p == b) {
            return;
        }
        corun__cc_buf_add(out, s->text + p, 1);
        p++;
    }
}

/* f__corun's head: f's, with blockIdx and gridDim as first parameters. */
static void clone_head(corun__cc_buf *b, const corun__cc_src *s, const corun__cc_decl *k,
                       int nodef)
{
    render(b, s, k, k->start, k->name_off, nodef);
    corun__cc_buf_printf(b, "%s__corun", k->name);
    render(b, s, k, k->name_end, k->lparen, nodef);
    corun__cc_buf_adds(b, "(const uint3 blockIdx, const dim3 gridDim");
    if (k->nparams > 0) {
        corun__cc_buf_adds(b, ", ");
        params(b, s, k, nodef);
    }
    corun__cc_buf_adds(b, ")");
    render(b, s, k, k->rparen + 1, k->end, nodef);
}

static int emit_clones(const corun__cc_src *s, const corun__cc_decls *clones,
                       const corun__cc_callsites *sites, const char *file, corun__cc_edits *e)
{
    for (size_t i = 0; i < clones->n; i++) {
        const corun__cc_decl *c = &clones->v[i];
        corun__cc_buf b = {0};
        unsigned at;
        if (c->refused || (!c->is_def && !c->first)) {
            continue;
        }
        corun__cc_buf_adds(&b, "\n");
        line_directive(&b, corun__cc_src_line(s, c->start), file);
        clone_head(&b, s, c, !c->first);
        if (c->is_def) {
            render_sites(&b, s, sites, c->end, c->body_end);
            corun__cc_buf_adds(&b, "\n");
            line_directive(&b, corun__cc_src_line(s, c->body_end - 1), file);
            at = c->body_end;
        } else {
            corun__cc_buf_adds(&b, ";\n");
            line_directive(&b, corun__cc_src_line(s, c->end), file);
            at = c->end + 1;
        }
        int rc = b.oom ? CORUN_ENOMEM : corun__cc_edit_add(e, at, 0, b.p);
        corun__cc_buf_free(&b);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    /* calls outside the clones' bodies (in kernels) are rewritten in place */
    for (size_t i = 0; i < sites->n; i++) {
        const corun__cc_callsite *c = &sites->v[i];
        int in_clone = 0;
        for (size_t j = 0; j < clones->n && !in_clone; j++) {
            const corun__cc_decl *f = &clones->v[j];
            in_clone = f->is_def && c->name_end > f->end && c->name_end < f->body_end;
        }
        if (in_clone) {
            continue;
        }
        int rc = corun__cc_edit_add(e, c->name_end, 0, "__corun");
        if (rc == CORUN_OK) {
            rc = corun__cc_edit_add(e, c->args_at, 0,
                                    c->has_args ? "blockIdx, gridDim, " : "blockIdx, gridDim");
        }
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    return CORUN_OK;
}

int corun__cc_emit_kernels(const corun__cc_src *s, corun__cc_decls *ks,
                           const corun__cc_decls *clones, const corun__cc_callsites *sites,
                           const char *line_name, corun__cc_edits *e, corun__cc_diags *d)
{
    int crc = emit_clones(s, clones, sites, line_name, e);
    if (crc != CORUN_OK) {
        return crc;
    }
    (void)d;
    for (size_t i = 0; i < ks->n; i++) {
        corun__cc_decl *k = &ks->v[i];
        int rc = CORUN_OK;
        if (k->refused) {
            continue;
        }
        if (k->is_def) {
            rc = emit_definition(s, k, line_name, e);
        } else if (k->first) {
            rc = emit_declaration(s, k, line_name, e);
        }
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    return emit_instantiations(s, ks, line_name, e);
}
