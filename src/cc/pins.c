/*
 * pins.c — keeping a worker's occupancy. The worker loop adds registers
 * and a little shared memory around the body; where that makes the worker
 * fit fewer blocks per SM than the plain kernel at some block size, the
 * worker gets __maxnreg__(registers of the plain kernel). corun-nvcc makes a
 * first device compile with --resource-usage and gives its report here
 * (names demangled with c++filt when available).
 *
 * Report lines used:
 *   ptxas info : Compiling entry function 'NAME' for 'sm_90'
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

static int read_report(const char *path, report *r, corun__cc_diags *d)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    char *cur = NULL, *arch = NULL;

    if (f == NULL) {
        corun__cc_diag_add(d, CORUN_CC_ERROR, path, 0, 0, "resource usage report",
                           "cannot open");
        return CORUN_EIO;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
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
            continue;
        }
        p = strstr(line, "Used ");
        if (p != NULL && cur != NULL && strstr(p, "registers") != NULL) {
            unsigned regs = 0, smem = 0;
            if (sscanf(p, "Used %u registers", &regs) != 1) {
                continue;
            }
            char *s = strstr(p, "bytes smem");
            if (s != NULL) {
                while (s > p && s[-1] == ' ') {
                    s--;
                }
                while (s > p && s[-1] >= '0' && s[-1] <= '9') {
                    s--;
                }
                smem = (unsigned)strtoul(s, NULL, 10);
            }
            if (r->n == r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 32;
                entry *v = realloc(r->v, cap * sizeof(*v));
                if (v == NULL) {
                    break;
                }
                r->v = v;
                r->cap = cap;
            }
            r->v[r->n].name = cur;
            r->v[r->n].arch = arch ? corun__cc_strndup(arch, strlen(arch)) : NULL;
            r->v[r->n].regs = regs;
            r->v[r->n].smem = smem;
            r->n++;
            cur = NULL;
        }
    }
    free(cur);
    free(arch);
    fclose(f);
    return CORUN_OK;
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

/* The worker's demangled name with "__corun" and the corun_worker_arg
 * parameter taken out: equal to its plain kernel's. */
static void plain_form(const char *worker, char *out, size_t n)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s", worker);
    char *p = strstr(tmp, "__corun");
    if (p != NULL) {
        memmove(p, p + 7, strlen(p + 7) + 1);
    }
    if ((p = strstr(tmp, "(corun_worker_arg, ")) != NULL) {
        memmove(p + 1, p + 19, strlen(p + 19) + 1);
    } else if ((p = strstr(tmp, "(corun_worker_arg)")) != NULL) {
        memmove(p + 1, p + 17, strlen(p + 17) + 1);
    }
    snprintf(out, n, "%s", tmp);
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

int corun__cc_pins_from_report(const char *path, const corun__cc_src *s, corun__cc_decls *ks,
                               corun__cc_diags *d)
{
    report r = {0};
    corun_gpu_desc g;
    char bn[512], pf[4096];

    int rc = read_report(path, &r, d);
    if (rc != CORUN_OK) {
        return rc;
    }
    corun_gpu_desc_h100(&g);
    for (size_t i = 0; i < ks->n; i++) {
        corun__cc_decl *k = &ks->v[i];
        if (!k->is_def || k->refused) {
            continue;
        }
        unsigned pin = 0, need_plain = 0, need_worker = 0, at = 0, pb = 0, wb = 0;
        int smem_loss = 0;
        unsigned smem_at = 0;
        char worker_name[300];
        snprintf(worker_name, sizeof(worker_name), "%s__corun", k->name);
        for (size_t w = 0; w < r.n; w++) {
            base_name(r.v[w].name, bn, sizeof(bn));
            if (strcmp(bn, worker_name) != 0 && strstr(r.v[w].name, worker_name) == NULL) {
                continue;
            }
            plain_form(r.v[w].name, pf, sizeof(pf));
            const entry *plain = NULL;
            int candidates = 0;
            for (size_t p = 0; p < r.n; p++) {
                if (r.v[p].arch && r.v[w].arch && strcmp(r.v[p].arch, r.v[w].arch) != 0) {
                    continue;
                }
                if (strcmp(r.v[p].name, pf) == 0) {
                    plain = &r.v[p];
                    candidates = 1;
                    break;
                }
                base_name(r.v[p].name, bn, sizeof(bn));
                if (strcmp(bn, k->name) == 0 && strncmp(r.v[p].name, "_Z", 2) == 0) {
                    plain = &r.v[p]; /* mangled: by name only */
                    candidates++;
                }
            }
            if (plain == NULL || candidates != 1) {
                continue;
            }
            unsigned t = loss_at(&g, plain, r.v[w].regs, r.v[w].smem, 32, &pb, &wb);
            if (t == 0) {
                continue;
            }
            unsigned ps = 0, ws = 0;
            unsigned ts = loss_at(&g, plain, plain->regs, r.v[w].smem, 32, &ps, &ws);
            if (ts != 0) {
                /* the plain kernel's registers would not help: shared memory.
                 * Warn where blocks are of a common size (>= 128 threads). */
                unsigned big = loss_at(&g, plain, plain->regs, r.v[w].smem, 128, &ps, &ws);
                if (smem_loss == 0 || (big != 0 && smem_loss == 1)) {
                    smem_loss = big != 0 ? 2 : 1;
                    smem_at = big != 0 ? big : ts;
                }
            }
            if (r.v[w].regs > plain->regs && (pin == 0 || plain->regs < pin)) {
                pin = plain->regs;
                need_plain = plain->regs;
                need_worker = r.v[w].regs;
                /* say it at a common block size when it happens there */
                at = loss_at(&g, plain, r.v[w].regs, r.v[w].smem, 256, &pb, &wb);
                if (at == 0) {
                    at = loss_at(&g, plain, r.v[w].regs, r.v[w].smem, 32, &pb, &wb);
                }
            }
        }
        unsigned line = corun__cc_src_line(s, k->name_off), col = corun__cc_src_col(s, k->name_off);
        if (pin > 0 && k->launch_bounds) {
            corun__cc_diag_add(d, CORUN_CC_WARNING, s->path, line, col, "occupancy",
                               "kernel '%s': its worker needs %u registers against %u and fits "
                               "%u instead of %u blocks per SM at %u threads; __maxnreg__ "
                               "cannot be combined with its __launch_bounds__, so corun will "
                               "launch it plain where it would lose occupancy",
                               k->name, need_worker, need_plain, wb, pb, at);
        } else if (pin > 0) {
            k->maxnreg = pin;
            corun__cc_diag_add(d, CORUN_CC_NOTE, s->path, line, col, "occupancy",
                               "kernel '%s': worker limited to %u registers (it used %u and "
                               "would fit %u instead of %u blocks per SM at %u threads)",
                               k->name, pin, need_worker, wb, pb, at);
        }
        if (smem_loss) {
            corun__cc_diag_add(d, smem_loss == 2 ? CORUN_CC_WARNING : CORUN_CC_NOTE, s->path, line,
                               col, "occupancy",
                               "kernel '%s': the worker's shared memory (the loop's state) "
                               "costs a block per SM at %u threads%s; corun launches it plain "
                               "where it would lose occupancy",
                               k->name, smem_at, smem_loss == 2 ? "" : " (but not at 128 or more)");
        }
    }
    report_free(&r);
    return CORUN_OK;
}
