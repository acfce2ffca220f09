/*
 * pins.c — keeping a worker's occupancy. The worker loop adds registers
 * and a little shared memory around the body; where that makes the worker
 * fit fewer blocks per SM than the plain kernel at some block size, the
 * worker gets __maxnreg__(R): the most registers, up to what it wants, at
 * which it fits as many blocks per SM as the plain kernel at every block
 * size (registers are allocated per warp in units, so R is often above the
 * plain kernel's count). corun-nvcc makes a first device compile with
 * --resource-usage and gives its report here (names demangled with c++filt
 * when available); where that placed a pin, a second compile of the pinned
 * file gives another, and a pinned entry that spills there (more than its
 * plain kernel) loses its pin: spills in the hot loop cost more than the
 * blocks the pin keeps. A kernel whose worker so loses its pin is
 * registered with CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS, so it still runs as
 * workers, at fewer blocks per SM. A worker that needs no pin but used
 * exactly the last register of its plain kernel's occupancy step (above the
 * plain kernel's count) gets __maxnreg__ one below it, unless that spills
 * (docs/decisions/0037).
 *
 * Report lines used:
 *   ptxas info : Compiling entry function 'NAME' for 'sm_90'
 *   ptxas info : Function properties for NAME
 *       F bytes stack frame, S bytes spill stores, L bytes spill loads
 *   ptxas info : Used R registers, ... S bytes smem
 * NAME is "void k<32>(float*, int)" or "k(float*)" demangled, or the
 * symbol itself for extern "C" kernels (and mangled names without c++filt,
 * which are then matched by kernel name only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/cc.h"
#include "corun/corun.h"

typedef struct entry {
    char *name;     /* as reported */
    char *arch;
    unsigned regs, smem;
    unsigned spill_st, spill_ld; /* bytes of spill stores and loads */
} entry;

typedef struct report {
    entry *v;
    size_t n, cap;
} report;

static void report_free(report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].name);
        free(r->v[i].arch);
    }
    free(r->v);
}

/* Appends an entry; 0 when out of memory (name and arch are then freed). */
static int report_add(report *r, char *name, char *arch, unsigned regs, unsigned smem,
                      const unsigned spill[2])
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        entry *v = realloc(r->v, cap * sizeof(*v));
        if (v == NULL) {
            free(name);
            free(arch);
            return 0;
        }
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n] = (entry){name, arch, regs, smem, spill[0], spill[1]};
    r->n++;
    return 1;
}

/* The bytes of shared memory a "Used" line names, 0 if none. */
static unsigned smem_of(const char *used)
{
    const char *s = strstr(used, "bytes smem");
    if (s == NULL) {
        return 0;
    }
    while (s > used && s[-1] == ' ') {
        s--;
    }
    while (s > used && s[-1] >= '0' && s[-1] <= '9') {
        s--;
    }
    return (unsigned)strtoul(s, NULL, 10);
}

/* The spill line that follows "Function properties for NAME" belongs to
 * the entry being compiled when NAME is its name: before its "Used" line
 * (nvcc 12, 13) it waits in spill[], after it the entry takes it. */
static void take_spills(report *r, const char *props, const char *cur, const char *line,
                        unsigned spill[2])
{
    unsigned frame, st, ld;
    if (sscanf(line, " %u bytes stack frame, %u bytes spill stores, %u bytes spill loads", &frame,
               &st, &ld) != 3) {
        return;
    }
    if (cur != NULL && strcmp(props, cur) == 0) {
        spill[0] = st;
        spill[1] = ld;
    } else if (cur == NULL && r->n > 0 && strcmp(props, r->v[r->n - 1].name) == 0) {
        r->v[r->n - 1].spill_st = st;
        r->v[r->n - 1].spill_ld = ld;
    }
}

static int read_report(const char *path, report *r, corun__cc_diags *d)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    char *cur = NULL, *arch = NULL, *props = NULL;
    unsigned spill[2] = {0, 0};
    int rc = CORUN_OK;

    if (f == NULL) {
        corun__cc_diag_add(d, CORUN_CC_ERROR, path, 0, 0, "resource usage report",
                           "cannot open");
        return CORUN_EIO;
    }
    while (rc == CORUN_OK && fgets(line, sizeof(line), f) != NULL) {
        char *p = strstr(line, "Compiling entry function '");
        if (p != NULL) {
            p += strlen("Compiling entry function '");
            char *q = strstr(p, "' for '");
            if (q == NULL) {
                continue;
            }
            free(cur);
            free(arch);
            cur = corun__cc_strndup(p, (size_t)(q - p));
            q += strlen("' for '");
            char *e = strchr(q, '\'');
            arch = corun__cc_strndup(q, e ? (size_t)(e - q) : strlen(q));
            spill[0] = spill[1] = 0;
            continue;
        }
        if ((p = strstr(line, "Function properties for ")) != NULL) {
            p += strlen("Function properties for ");
            free(props);
            props = corun__cc_strndup(p, strcspn(p, "\r\n"));
            continue;
        }
        if (props != NULL && strstr(line, "bytes spill stores") != NULL) {
            take_spills(r, props, cur, line, spill);
            free(props);
            props = NULL;
            continue;
        }
        p = strstr(line, "Used ");
        if (p != NULL && cur != NULL && strstr(p, "registers") != NULL) {
            unsigned regs = 0;
            if (sscanf(p, "Used %u registers", &regs) != 1) {
                continue;
            }
            char *a = arch ? corun__cc_strndup(arch, strlen(arch)) : NULL;
            rc = report_add(r, cur, a, regs, smem_of(p), spill) ? CORUN_OK : CORUN_ENOMEM;
            cur = NULL;
        }
    }
    free(cur);
    free(arch);
    free(props);
    fclose(f);
    return rc;
}

/* The function name of a reported entry without qualifiers, template
 * arguments or parameters: "void ns::k<32>(float*)" -> "k". */
static void base_name(const char *full, char *out, size_t n)
{
    const char *s = full;
    if (strncmp(s, "void ", 5) == 0) {
        s += 5;
    }
    size_t len = strcspn(s, "<(");
    const char *start = s;
    for (const char *p = s; p < s + len; p++) {
        if (p[0] == ':' && p[1] == ':') {
            start = p + 2;
        }
    }
    size_t m = (size_t)(s + len - start);
    if (m >= n) {
        m = n - 1;
    }
    memcpy(out, start, m);
    out[m] = '\0';
}

/* A worker entry's demangled name with "__corun" (or "__corun_ahead") and
 * the corun_worker_arg parameter taken out: equal to its plain kernel's. */
static void plain_form(const char *worker, char *out, size_t n)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s", worker);
    char *p = strstr(tmp, "__corun_ahead");
    size_t cut = 13;
    if (p == NULL) {
        p = strstr(tmp, "__corun");
        cut = 7;
    }
    if (p != NULL) {
        memmove(p, p + cut, strlen(p + cut) + 1);
    }
    if ((p = strstr(tmp, "(corun_worker_arg, ")) != NULL) {
        memmove(p + 1, p + 19, strlen(p + 19) + 1);
    } else if ((p = strstr(tmp, "(corun_worker_arg)")) != NULL) {
        memmove(p + 1, p + 17, strlen(p + 17) + 1);
    }
    snprintf(out, n, "%s", tmp);
}

/* A kernel's worker entries: NAME__corun and NAME__corun_ahead. */
enum { WORKER, AHEAD, NKINDS };

/* Which entry of kernel kname's worker e is (WORKER or AHEAD), or -1: by
 * function name when demangled (or extern "C"), by the length-prefixed name
 * inside a mangled one. */
static int entry_kind(const entry *e, const char *kname)
{
    char bn[512], w[300], mangled[320];

    base_name(e->name, bn, sizeof(bn));
    for (int kind = WORKER; kind < NKINDS; kind++) {
        snprintf(w, sizeof(w), "%s__corun%s", kname, kind == AHEAD ? "_ahead" : "");
        snprintf(mangled, sizeof(mangled), "%zu%s", strlen(w), w);
        if (strcmp(bn, w) == 0 || (strncmp(e->name, "_Z", 2) == 0 && strstr(e->name, mangled))) {
            return kind;
        }
    }
    return -1;
}

/* The plain kernel of worker entry w of kernel kname, of the same
 * architecture, or NULL where there is none or more than one. */
static const entry *plain_of(const report *r, const entry *w, const char *kname)
{
    char bn[512], pf[4096];
    const entry *plain = NULL;
    int candidates = 0;

    plain_form(w->name, pf, sizeof(pf));
    for (size_t p = 0; p < r->n; p++) {
        if (r->v[p].arch && w->arch && strcmp(r->v[p].arch, w->arch) != 0) {
            continue;
        }
        if (strcmp(r->v[p].name, pf) == 0) {
            return &r->v[p];
        }
        base_name(r->v[p].name, bn, sizeof(bn));
        if (strcmp(bn, kname) == 0 && strncmp(r->v[p].name, "_Z", 2) == 0) {
            plain = &r->v[p]; /* mangled: by name only */
            candidates++;
        }
    }
    return candidates == 1 ? plain : NULL;
}

static unsigned blocks(const corun_gpu_desc *g, unsigned threads, unsigned regs, unsigned smem)
{
    corun_kernel_shape s;
    corun_occupancy o;
    char why[128];

    memset(&s, 0, sizeof(s));
    s.threads_per_block = threads;
    s.regs_per_thread = regs ? regs : 1;
    s.smem_static = smem;
    if (corun_occupancy_calc(g, &s, &o, why, sizeof(why)) != CORUN_OK) {
        return 0;
    }
    return o.blocks_per_sm;
}

/* The first block size from `from` threads up at which the worker fits
 * fewer blocks per SM than the plain kernel, or 0; *pb and *wb are the two
 * counts there. */
static unsigned loss_at(const corun_gpu_desc *g, const entry *plain, unsigned wregs,
                        unsigned wsmem, unsigned from, unsigned *pb, unsigned *wb)
{
    for (unsigned t = from; t <= 1024; t += 32) {
        unsigned a = blocks(g, t, plain->regs, plain->smem);
        unsigned b = blocks(g, t, wregs, wsmem);
        if (a > 0 && b < a) {
            *pb = a;
            *wb = b;
            return t;
        }
    }
    return 0;
}

/* The pin of worker entry w: the most registers, at most what it wants,
 * at which it fits as many blocks per SM as at the plain kernel's count at
 * every block size loss_at checks (where its shared memory costs a block,
 * registers cannot help, the plain kernel's count no more than any);
 * w->regs where it needs none. */
static unsigned pin_of(const corun_gpu_desc *g, const entry *plain, const entry *w)
{
    entry base = *plain;
    unsigned r = w->regs, pb, wb;

    base.smem = w->smem;
    while (r > plain->regs && loss_at(g, &base, r, w->smem, 32, &pb, &wb) != 0) {
        r--;
    }
    return r;
}

/* What a kernel's worker needs, from the first report. */
typedef struct need {
    unsigned pin;           /* the registers it is limited to; 0: no pin needed */
    unsigned step;          /* no pin needed, and a worker entry used exactly the most
                               registers that keep its plain kernel's blocks per SM,
                               more than the plain kernel's: that count; else 0 */
    unsigned plain, worker; /* registers of the pair that needs it */
    unsigned at, pb, wb;    /* a block size where the worker loses, blocks per SM there */
    int smem_loss;          /* shared memory costs a block: 2 at >= 128 threads, 1 below only */
    unsigned smem_at;
    int link;               /* a cap on counts the device link sets: said only if it spills */
} need;

/* The most registers a thread may have (sm_90). */
#define MAX_REGS 255u

/* Fills n from kernel kname's worker entries, every instantiation and
 * architecture (the smallest needed pin wins). NAME__corun decides alone;
 * its ahead entry takes the same pin. link: the report's counts are not
 * final (corun__cc_pins_from_report); each worker is taken as wanting
 * MAX_REGS, so it gets the cap that keeps its plain kernel's blocks.
 * n->step comes from the last entry at its step; a cap below another
 * instantiation's step changes nothing there or spills and is dropped. */
static void kernel_need(const corun_gpu_desc *g, const report *r, const char *kname, int link,
                        need *n)
{
    memset(n, 0, sizeof(*n));
    for (size_t i = 0; i < r->n; i++) {
        entry wl;
        const entry *w = &r->v[i], *plain;
        unsigned pb, wb, pin;
        if (entry_kind(w, kname) != WORKER || (plain = plain_of(r, w, kname)) == NULL) {
            continue;
        }
        if (link) {
            wl = *w;
            wl.regs = MAX_REGS;
            w = &wl;
        }
        if (loss_at(g, plain, w->regs, w->smem, 32, &pb, &wb) == 0) {
            if (!link && w->regs > plain->regs) {
                entry most = *w;
                most.regs = MAX_REGS;
                if (pin_of(g, plain, &most) == w->regs) {
                    n->step = w->regs;
                }
            }
            continue;
        }
        unsigned ts = loss_at(g, plain, plain->regs, w->smem, 32, &pb, &wb);
        if (ts != 0) {
            /* the plain kernel's registers would not help: shared memory.
             * Warn where blocks are of a common size (>= 128 threads). */
            unsigned big = loss_at(g, plain, plain->regs, w->smem, 128, &pb, &wb);
            if (n->smem_loss == 0 || (big != 0 && n->smem_loss == 1)) {
                n->smem_loss = big != 0 ? 2 : 1;
                n->smem_at = big != 0 ? big : ts;
            }
        }
        pin = pin_of(g, plain, w);
        if (pin < w->regs && (n->pin == 0 || pin < n->pin)) {
            n->pin = pin;
            n->plain = plain->regs;
            n->worker = w->regs;
            n->link = link;
            /* say it at a common block size when it happens there */
            n->at = loss_at(g, plain, w->regs, w->smem, 256, &n->pb, &n->wb);
            if (n->at == 0) {
                n->at = loss_at(g, plain, w->regs, w->smem, 32, &n->pb, &n->wb);
            }
        }
    }
}

/* Bytes spilled (stores, loads) by kernel kname's pinned entries of each
 * kind where they spill more than their plain kernel, from the pinned
 * build's report p (of several instantiations, the most); 0 where none. */
static void kernel_spills(const report *p, const char *kname, unsigned sp[NKINDS][2])
{
    memset(sp, 0, NKINDS * sizeof(sp[0]));
    for (size_t i = 0; i < p->n; i++) {
        const entry *e = &p->v[i];
        int kind = entry_kind(e, kname);
        if (kind < 0 || (e->spill_st == 0 && e->spill_ld == 0)) {
            continue;
        }
        const entry *plain = plain_of(p, e, kname);
        if (plain != NULL && e->spill_st <= plain->spill_st && e->spill_ld <= plain->spill_ld) {
            continue;
        }
        if (e->spill_st + e->spill_ld > sp[kind][0] + sp[kind][1]) {
            sp[kind][0] = e->spill_st;
            sp[kind][1] = e->spill_ld;
        }
    }
}

/* Says what became of kernel k's pin (n, the spills sp of its pinned
 * entries) and where shared memory costs it a block. */
static void say(corun__cc_diags *d, const corun__cc_src *s, const corun__cc_decl *k,
                const need *n, unsigned sp[NKINDS][2])
{
    unsigned line = corun__cc_src_line(s, k->name_off), col = corun__cc_src_col(s, k->name_off);
    int spills_w = sp[WORKER][0] + sp[WORKER][1] > 0, spills_a = sp[AHEAD][0] + sp[AHEAD][1] > 0;
    char ahead[128] = "";

    if (n->pin > 0 && k->launch_bounds) {
        corun__cc_diag_add(d, CORUN_CC_WARNING, s->path, line, col, "occupancy",
                           "kernel '%s': its worker needs %u registers against %u and fits "
                           "%u instead of %u blocks per SM at %u threads; __maxnreg__ "
                           "cannot be combined with its __launch_bounds__, so corun will "
                           "launch it plain where it would lose occupancy",
                           k->name, n->worker, n->plain, n->wb, n->pb, n->at);
    } else if (spills_w) {
        if (spills_a) {
            snprintf(ahead, sizeof(ahead),
                     ", and so does its ahead entry (stores %u bytes, loads %u)", sp[AHEAD][0],
                     sp[AHEAD][1]);
        }
        corun__cc_diag_add(d, CORUN_CC_WARNING, s->path, line, col, "occupancy",
                           "kernel '%s': its worker needs %u registers against %u; limited to "
                           "%u it spills (stores %u bytes, loads %u)%s, so it is not pinned and "
                           "runs at %u instead of %u blocks per SM at %u threads (registered "
                           "with CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS)",
                           k->name, n->worker, n->plain, n->pin, sp[WORKER][0], sp[WORKER][1],
                           ahead, n->wb, n->pb, n->at);
    } else if (n->pin > 0 && !n->link) {
        corun__cc_diag_add(d, CORUN_CC_NOTE, s->path, line, col, "occupancy",
                           "kernel '%s': worker limited to %u registers (it used %u and "
                           "would fit %u instead of %u blocks per SM at %u threads)",
                           k->name, n->pin, n->worker, n->wb, n->pb, n->at);
        if (spills_a) {
            corun__cc_diag_add(d, CORUN_CC_WARNING, s->path, line, col, "occupancy",
                               "kernel '%s': its ahead entry, limited to %u registers, spills "
                               "(stores %u bytes, loads %u), so it is not pinned; corun runs "
                               "the worker where it would fit fewer blocks per SM",
                               k->name, n->pin, sp[AHEAD][0], sp[AHEAD][1]);
        }
    }
    if (n->smem_loss) {
        corun__cc_diag_add(d, n->smem_loss == 2 ? CORUN_CC_WARNING : CORUN_CC_NOTE, s->path,
                           line, col, "occupancy",
                           "kernel '%s': the worker's shared memory (the loop's state) "
                           "costs a block per SM at %u threads%s; corun launches it plain "
                           "where it would lose occupancy",
                           k->name, n->smem_at,
                           n->smem_loss == 2 ? "" : " (but not at 128 or more)");
    }
}

int corun__cc_pins_from_report(const char *path, const char *pinned_path, int link,
                               const corun__cc_src *s, corun__cc_decls *ks, corun__cc_diags *d)
{
    report r = {0}, pinned = {0};
    corun_gpu_desc g;

    int rc = read_report(path, &r, d);
    if (rc == CORUN_OK && pinned_path != NULL) {
        rc = read_report(pinned_path, &pinned, d);
    }
    corun_gpu_desc_h100(&g);
    for (size_t i = 0; rc == CORUN_OK && i < ks->n; i++) {
        corun__cc_decl *k = &ks->v[i];
        unsigned sp[NKINDS][2] = {{0, 0}, {0, 0}};
        need n;
        if (!k->is_def || k->refused) {
            continue;
        }
        kernel_need(&g, &r, k->name, link, &n);
        if (n.pin == 0 && n.step > 0 && !k->launch_bounds) {
            /* A worker at the last register of its occupancy step is
             * compiled one below it (docs/decisions/0037): there ptxas issued
             * a DRAM-bound body's loads in two rounds. Not where it then
             * spills more than its plain kernel. The ahead entry stays. */
            unsigned capped[NKINDS][2];
            kernel_spills(&pinned, k->name, capped);
            if (capped[WORKER][0] + capped[WORKER][1] == 0) {
                k->maxnreg[WORKER] = n.step - 1;
            }
        }
        if (n.pin > 0 && !k->launch_bounds) {
            kernel_spills(&pinned, k->name, sp);
            for (int kind = WORKER; kind < NKINDS; kind++) {
                k->maxnreg[kind] = sp[kind][0] + sp[kind][1] > 0 ? 0 : n.pin;
            }
            k->maxnreg[2] = k->maxnreg[WORKER]; /* the grid form (emit.c) */
            if (k->maxnreg[WORKER] == 0) {
                /* the launcher is at the first declaration */
                corun__cc_decl *first = k->usr ? corun__cc_decl_first(ks, k->usr) : NULL;
                k->occupancy_loss = 1;
                if (first != NULL) {
                    first->occupancy_loss = 1;
                }
            }
        }
        say(d, s, k, &n, sp);
    }
    report_free(&r);
    report_free(&pinned);
    return rc;
}
