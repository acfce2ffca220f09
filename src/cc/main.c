/*
 * main.c — the corun-cc command line:
 *
 *   corun-cc in.cu -o out.cu [--check] [-I DIR] [-D NAME[=V]] [-U NAME]
 *            [-include FILE] [-isystem DIR] [-std=c++17] [--cuda-path DIR]
 *            [--line-name NAME]
 *            [--resource-usage FILE [--pinned-usage FILE] [--link-allocated]]
 *            [--header-dir DIR [--header-tag TAG]] [--deps FILE]
 *            [--pch-dir DIR | --no-pch] [--read-limit SIZE] [--parse-stack SIZE] [-v]
 *   corun-cc --setting NAME [--setting NAME...]
 *
 * Exit status: 0 transformed (or nothing to transform: the output is a
 * byte-for-byte copy), 1 refused (every reason printed as
 * file:line:col: error: corun-cc: <construct>: <reason>; nothing written;
 * also code nested too deeply for the parser and a crash inside libclang,
 * said in one line each), 2 bad command line, 3 out of memory or cannot
 * write (the output, or anything on stdout). The transformation runs on a
 * thread of thread.c, the main thread only reads the command line and
 * waits.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cc/cc.h"
#include "common/output.h"
#include "core/settings.h"
#include "corun/corun.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: corun-cc IN.cu -o OUT.cu [options]\n"
            "\n"
            "Rewrites a CUDA file so its kernels run as corun workers (preemptible and\n"
            "resizable) and its host launches go through the corun scheduler. What cannot\n"
            "be made safe is refused with file:line:col and the reason.\n"
            "\n"
            "options:\n"
            "  -o FILE              where to write the result (- for stdout): a regular\n"
            "                       file is replaced whole, a link followed, a device or\n"
            "                       FIFO written in place, a directory refused\n"
            "  --check              analyse and report only; write nothing\n"
            "  -I DIR, -D N[=V], -U N, -include FILE, -isystem DIR, -std=STD\n"
            "                       preprocessor and language flags, as given to nvcc\n"
            "  --cuda-path DIR      CUDA installation (default /usr/local/cuda)\n"
            "  --line-name NAME     file name for #line directives (default: IN.cu as given)\n"
            "  --resource-usage F   ptxas --resource-usage report of a first transformed\n"
            "                       build: pins workers that would lose occupancy, and\n"
            "                       caps one below it a worker at the last register of\n"
            "                       its occupancy step\n"
            "  --pinned-usage F     the same of the build so pinned: a worker that spills\n"
            "                       there is left unpinned or uncapped (with\n"
            "                       --resource-usage)\n"
            "  --link-allocated     the reports are of relocatable device code (-rdc; from\n"
            "                       -Xptxas -v), whose registers the device link sets:\n"
            "                       every worker is capped at the most registers that keep\n"
            "                       its plain kernel's blocks per SM\n"
            "  --header-dir DIR     also transform the project's headers (included files\n"
            "                       that are not system or CUDA headers): each one changed\n"
            "                       is written into DIR as NAME.corun.EXT, and the output's\n"
            "                       #include names it; compile with -I DIR and -I for\n"
            "                       IN.cu's folder\n"
            "  --header-tag TAG     name the copies NAME.corun-TAG.EXT (letters, digits,\n"
            "                       '-', '_'): copies of several inputs on one include path\n"
            "  --deps FILE          write the project's headers the file includes, one real\n"
            "                       path a line: what the output depends on besides IN.cu\n"
            "  --pch-dir DIR        where clang's CUDA headers are kept precompiled, one\n"
            "                       file (~7 MB) per side and flag set, 32 at most (default\n"
            "                       $CORUN_CACHE/cc-pch, $CORUN_CACHE defaulting to\n"
            "                       ${XDG_CACHE_HOME:-~/.cache}/corun)\n"
            "  --no-pch             parse the CUDA headers every time (slower, writes nothing)\n"
            "  --read-limit SIZE    most bytes one parse may read: the file, its includes\n"
            "                       and the CUDA headers (default 256M; 0: no limit); an\n"
            "                       include past it, or one that is not a regular file\n"
            "                       (/dev/zero, a FIFO), refuses the file unread\n"
            "  --parse-stack SIZE   stack of each parse (default 512M, reserved, used as\n"
            "                       needed): code nested deeper than it fits is refused\n"
            "  -v                   print what was transformed and how long it took\n"
            "  --setting NAME       print a corun setting as corun-cc and corun-nvcc use it\n"
            "                       (its CORUN_* variable, checked, else its default; cache:\n"
            "                       the folder) and exit; repeated: one line each, in order;\n"
            "                       2 for an unknown name or a bad value\n"
            "  --version, --help\n"
            "\n"
            "SIZE: bytes, or with K, M or G (binary: 512M = 512 MiB)\n"
            "\n"
            "exit status: 0 written (a file without kernels is copied unchanged),\n"
            "1 refused (also nested too deeply, or libclang crashed), 2 bad command\n"
            "line, 3 cannot write or out of memory\n");
}

/* The cache folder of corun-cc and corun-nvcc (docs/corun-cc.md): setting
 * CACHE, or where it is empty ${XDG_CACHE_HOME:-~/.cache}/corun. Returns
 * CORUN_OK, or with why: CORUN_EINVAL (a bad CORUN_CACHE), CORUN_ENOENT
 * (nothing names a folder), CORUN_ERANGE (longer than cap). */
static int cache_dir(char *buf, size_t cap, char *why, size_t why_len)
{
    char c[CORUN_SETTING_STR_MAX];
    const char *x = getenv("XDG_CACHE_HOME");
    const char *h = getenv("HOME");
    int n;

    if (corun__settings_read_one("cache", c, sizeof(c), why, why_len) != CORUN_OK) {
        return CORUN_EINVAL;
    }
    if (c[0] != '\0') {
        n = snprintf(buf, cap, "%s", c);
    } else if (x != NULL && x[0] != '\0') {
        n = snprintf(buf, cap, "%s/corun", x);
    } else if (h != NULL && h[0] != '\0') {
        n = snprintf(buf, cap, "%s/.cache/corun", h);
    } else {
        snprintf(why, why_len, "no cache folder: CORUN_CACHE, XDG_CACHE_HOME and HOME are unset");
        return CORUN_ENOENT;
    }
    if (n < 0 || (size_t)n >= cap) {
        snprintf(why, why_len, "the cache folder's name is longer than %zu bytes", cap);
        return CORUN_ERANGE;
    }
    return CORUN_OK;
}

/* $CORUN_CACHE/cc-pch (cache_dir); NULL when no folder can be named. */
static const char *default_pch_dir(char *buf, size_t cap)
{
    char why[256];
    int rc = cache_dir(buf, cap, why, sizeof(why));
    size_t n;

    if (rc == CORUN_EINVAL) {
        fprintf(stderr, "corun-cc: warning: %s: headers not precompiled\n", why);
    }
    if (rc != CORUN_OK || (n = strlen(buf)) + sizeof("/cc-pch") > cap) {
        return NULL;
    }
    memcpy(buf + n, "/cc-pch", sizeof("/cc-pch"));
    return buf;
}

/* --setting NAME...: each setting on a line of its own, in order, as
 * corun-cc and corun-nvcc use it: its CORUN_* variable, checked against the
 * settings table, else its default; for cache the folder (cache_dir). All
 * or nothing: an unknown name or a bad value prints only why, on stderr.
 * Returns the exit status (2 for a bad name or value). */
static int print_settings(const char *const *names, size_t n)
{
    char(*v)[4096] = calloc(n, sizeof(*v));
    char why[512];
    size_t i;
    int rc = CORUN_OK;

    if (v == NULL) {
        fprintf(stderr, "corun-cc: out of memory\n");
        return 3;
    }
    for (i = 0; i < n && rc == CORUN_OK; i++) {
        const corun__setting_info *in = corun__settings_find(names[i]);
        if (in == NULL) {
            snprintf(why, sizeof(why), "unknown setting '%s' (corun config lists them)", names[i]);
            rc = CORUN_ENOENT;
        } else if (strcmp(in->name, "cache") == 0) {
            rc = cache_dir(v[i], sizeof(v[i]), why, sizeof(why));
        } else {
            rc = corun__settings_read_one(in->name, v[i], sizeof(v[i]), why, sizeof(why));
        }
        if (rc == CORUN_OK && strchr(v[i], '\n') != NULL) {
            snprintf(why, sizeof(why), "%s: a value with a line break cannot be printed as a line",
                     in->env);
            rc = CORUN_EINVAL;
        }
    }
    if (rc != CORUN_OK) {
        fprintf(stderr, "corun-cc: %s\n", why);
        free(v);
        return 2;
    }
    for (i = 0; i < n; i++) {
        printf("%s\n", v[i]);
    }
    free(v);
    return 0;
}

static const char *pch_said(const corun__cc_tu *t)
{
    return t->pch == CORUN_CC_PCH_LOADED  ? "precompiled"
           : t->pch == CORUN_CC_PCH_BUILT ? "precompiled now"
                                          : "parsed";
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void print_diags(corun__cc_diags *d)
{
    corun__cc_diags_sort(d);
    for (size_t i = 0; i < d->n; i++) {
        const corun__cc_diag *g = &d->v[i];
        const char *sev = g->sev == CORUN_CC_ERROR     ? "error"
                          : g->sev == CORUN_CC_WARNING ? "warning"
                                                       : "note";
        if (g->file && g->line > 0) {
            fprintf(stderr, "%s:%u:%u: %s: corun-cc: %s\n", g->file, g->line, g->col, sev,
                    g->text);
        } else if (g->file) {
            fprintf(stderr, "%s: %s: corun-cc: %s\n", g->file, sev, g->text);
        } else {
            fprintf(stderr, "%s: corun-cc: %s\n", sev, g->text);
        }
    }
    if (d->oom) {
        fprintf(stderr, "error: corun-cc: out of memory while recording diagnostics\n");
    }
}

/* Writes data to path by the rules of common/output.h: a regular file is
 * replaced through a temporary one, so a reader never sees a half-written
 * output; a device or FIFO is written in place. For - (stdout) main checks
 * the writes when it closes it. */
static int write_out(const char *path, const char *data, size_t n)
{
    char why[PATH_MAX + 256];

    if (strcmp(path, "-") == 0) {
        (void)fwrite(data, 1, n, stdout);
        return CORUN_OK;
    }
    if (corun__output_write(path, data, n, 0, why, sizeof(why)) != 0) {
        fprintf(stderr, "corun-cc: %s\n", why);
        return CORUN_EIO;
    }
    return CORUN_OK;
}

/* Accepts "-I DIR" and "-IDIR" (likewise -D, -U, -isystem, -include);
 * stores one or two argv entries in cflags. 0 when a is not such a flag,
 * -1 when its value is missing. */
static int take_cflag(int argc, char **argv, int *i, const char **cflags, size_t *n)
{
    static const char *const joined[] = {"-I", "-D", "-U", NULL};
    static const char *const separate[] = {"-isystem", "-include", "-I", "-D", "-U", NULL};
    const char *a = argv[*i];

    if (strncmp(a, "-std=", 5) == 0) {
        cflags[(*n)++] = a;
        return 1;
    }
    for (size_t k = 0; separate[k]; k++) {
        if (strcmp(a, separate[k]) == 0) {
            if (*i + 1 >= argc) {
                return -1;
            }
            cflags[(*n)++] = a;
            cflags[(*n)++] = argv[++*i];
            return 1;
        }
    }
    for (size_t k = 0; joined[k]; k++) {
        if (strncmp(a, joined[k], 2) == 0 && a[2] != '\0') {
            cflags[(*n)++] = a;
            return 1;
        }
    }
    return 0;
}

/* A SIZE of the command line: digits, then nothing (bytes) or K, M or G
 * (binary). 0 when it is not one. */
static int parse_size(const char *a, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(a, &end, 10);
    unsigned shift = 0;
    if (errno != 0 || end == a || a[0] == '-') {
        return 0;
    }
    if (*end == 'K' || *end == 'k') {
        shift = 10;
    } else if (*end == 'M' || *end == 'm') {
        shift = 20;
    } else if (*end == 'G' || *end == 'g') {
        shift = 30;
    }
    if ((shift > 0 && end[1] != '\0') || (shift == 0 && *end != '\0') ||
        v > (UINT64_MAX >> shift)) {
        return 0;
    }
    *out = (uint64_t)v << shift;
    return 1;
}

typedef struct run {
    corun__cc_opts o;
    int verbose;
    int status; /* the exit status */
} run;

/* Writes the copies of the headers, the deps list and the output (in that
 * order: a build that finds the output finds what it includes); CORUN_OK
 * or CORUN_EIO, said. */
static int write_all(const corun__cc_opts *o, const corun__cc_headers *hs, const char *data,
                     size_t n)
{
    char why[PATH_MAX + 256];

    if (o->header_dir != NULL && corun__cc_headers_write(hs, o->header_dir, why, sizeof(why)) !=
                                     CORUN_OK) {
        fprintf(stderr, "corun-cc: %s\n", why);
        return CORUN_EIO;
    }
    if (o->deps != NULL) {
        corun__cc_buf deps = {0};
        int rc = corun__cc_headers_deps(hs, &deps);
        rc = rc == CORUN_OK ? write_out(o->deps, deps.p, deps.len) : rc;
        corun__cc_buf_free(&deps);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    return write_out(o->out, data, n);
}

/* Reads, parses, analyses and rewrites r->o.in (and, with a header folder,
 * the project's headers it includes), prints the diagnostics and writes
 * the output; sets r->status. On a thread of corun__cc_thread_start, whose
 * stack the host-side parse uses. */
static void *transform(void *arg)
{
    run *r = arg;
    const corun__cc_opts *o = &r->o;
    double t0 = now_ms(), t_parse = 0;
    corun__cc_diags d = {0};
    corun__cc_src src;
    d.strict = o->strict;
    corun__cc_tu host = {0}, dev = {0};
    corun__cc_decls ks = {0}, clones = {0}, seen = {0};
    corun__cc_callsites sites = {0};
    corun__cc_headers hs = {0};
    corun__cc_edits e = {0};
    corun__cc_buf out = {0};
    size_t nlaunches = 0;
    int parsed = 0;
    int rc = corun__cc_src_read(&src, o->in, o->read_limit, &d);
    if (rc == CORUN_OK) {
        rc = corun__cc_parse(o, &host, &dev, &d);
        parsed = 1;
        t_parse = now_ms() - t0;
    }
    if (rc == CORUN_OK) {
        rc = corun__cc_src_index(&src, host.tu, host.file);
    }
    if (rc == CORUN_OK) {
        rc = corun__cc_find_kernel_decls(&dev, &src, &ks, &d);
    }
    if (rc == CORUN_OK) {
        rc = corun__cc_check_host_pass(&host, &dev, &ks, &d);
    }
    if (rc == CORUN_OK && (o->header_dir != NULL || o->deps != NULL)) {
        rc = corun__cc_headers_find(o, &host, &dev, &hs);
    }
    if (rc == CORUN_OK && o->header_dir != NULL) {
        rc = corun__cc_headers_kernels(o, &dev, &hs, &d);
    }
    if (rc == CORUN_OK && ks.n > 0) {
        rc = corun__cc_check_kernels(&dev, &src, &ks, &clones, &sites, &d);
    }
    if (rc == CORUN_OK && ks.n > 0 && o->resource_usage != NULL) {
        rc = corun__cc_pins_from_report(o->resource_usage, o->pinned_usage, o->link_allocated,
                                        &src, &ks, &d);
    }
    if (rc == CORUN_OK) {
        rc = corun__cc_headers_link(&hs, &ks);
    }
    if (rc == CORUN_OK) {
        rc = corun__cc_headers_visible(&hs, &ks, -1, &seen);
    }
    if (rc == CORUN_OK) {
        /* also in a file with no kernel of its own: its launches of kernels
         * defined elsewhere are said, and what corun cannot take refused */
        rc = corun__cc_rewrite_launches(&host, &dev, &src, &seen, &e, &d, &nlaunches);
    }
    if (rc == CORUN_OK && o->header_dir != NULL) {
        rc = corun__cc_headers_launches(o, &hs, &ks, &d);
    }
    if (rc == CORUN_OK && ks.n > 0) {
        rc = corun__cc_emit_kernels(&src, &ks, &clones, &sites, o->line_name, &e, &d);
    }
    if (rc == CORUN_OK && o->header_dir != NULL) {
        rc = corun__cc_headers_emit(o, &hs, &e, &d);
    }
    /* nothing to change: the output is the input, byte for byte */
    int nothing = rc == CORUN_OK && e.n == 0;
    if (rc == CORUN_OK && !nothing && d.errors == 0) {
        corun__cc_buf pro = {0};
        corun__cc_buf_adds(&pro, "#include \"corun/corun_launch.cuh\"\n#line 1 ");
        corun__cc_quote(&pro, o->line_name);
        corun__cc_buf_adds(&pro, "\n");
        rc = pro.oom ? CORUN_ENOMEM : corun__cc_edits_apply(&e, &src, pro.p, &out, &d);
        corun__cc_buf_free(&pro);
    }

    int status = 0;
    if (d.errors > 0 || rc == CORUN_EPARSE || rc == CORUN_EINVAL || rc == CORUN_EIO) {
        status = 1;
    } else if (rc != CORUN_OK) {
        fprintf(stderr, "corun-cc: %s\n", corun_strerror(rc));
        status = 3;
    }
    print_diags(&d);
    if (status == 0 && !o->check_only) {
        int w = nothing ? write_all(o, &hs, src.text, src.len) : write_all(o, &hs, out.p, out.len);
        status = w == CORUN_OK ? 0 : 3;
    }
    if (r->verbose) {
        size_t defs = 0, copies = corun__cc_headers_copied(&hs);
        for (size_t i = 0; i < ks.n; i++) {
            defs += ks.v[i].is_def;
        }
        for (size_t i = 0; i < hs.n; i++) {
            for (size_t j = 0; hs.v[i].copied && j < hs.v[i].ks.n; j++) {
                defs += hs.v[i].ks.v[j].is_def && !hs.v[i].ks.v[j].refused;
            }
            nlaunches += hs.v[i].copied ? hs.v[i].nlaunches : 0;
        }
        fprintf(stderr,
                "corun-cc: %s: %zu kernel%s, %zu launch%s rewritten, %zu header%s copied, "
                "%.0f ms (parse %.0f; CUDA headers: host %s, device %s)%s\n",
                o->in, defs, defs == 1 ? "" : "s", nlaunches, nlaunches == 1 ? "" : "es", copies,
                copies == 1 ? "" : "s", now_ms() - t0, t_parse, pch_said(&host), pch_said(&dev),
                status == 1 ? " (refused)" : "");
    }

    corun__cc_buf_free(&out);
    corun__cc_edits_free(&e);
    free(seen.v);
    corun__cc_headers_free(&hs);
    corun__cc_decls_free(&ks);
    corun__cc_decls_free(&clones);
    free(sites.v);
    if (parsed) {
        corun__cc_tu_free(&host);
        corun__cc_tu_free(&dev);
    }
    corun__cc_src_free(&src);
    corun__cc_diags_free(&d);
    r->status = status;
    return NULL;
}

/* What the command line sets besides r->o. */
typedef struct args {
    int no_pch;
    const char *pch_dir; /* --pch-dir, or NULL: the default */
    uint64_t stack;      /* --parse-stack */
    const char **settings; /* --setting names (room for every argument) */
    size_t nsettings;
} args;

/* Whether option a takes the next argument as its value. */
static int takes_value(const char *a)
{
    return strcmp(a, "-o") == 0 || strcmp(a, "--cuda-path") == 0 ||
           strcmp(a, "--line-name") == 0 || strcmp(a, "--resource-usage") == 0 ||
           strcmp(a, "--pinned-usage") == 0 || strcmp(a, "--header-dir") == 0 ||
           strcmp(a, "--header-tag") == 0 ||
           strcmp(a, "--deps") == 0 ||
           strcmp(a, "--pch-dir") == 0 || strcmp(a, "--read-limit") == 0 ||
           strcmp(a, "--parse-stack") == 0;
}

/* Sets option a (one that takes_value) to v; 0 when v is not a size it
 * takes (or, for --header-tag, not a tag). */
static int set_value(run *r, args *x, const char *a, const char *v)
{
    corun__cc_opts *o = &r->o;

    if (strcmp(a, "-o") == 0) {
        o->out = v;
    } else if (strcmp(a, "--cuda-path") == 0) {
        o->cuda_path = v;
    } else if (strcmp(a, "--line-name") == 0) {
        o->line_name = v;
    } else if (strcmp(a, "--pch-dir") == 0) {
        x->pch_dir = v;
    } else if (strcmp(a, "--resource-usage") == 0) {
        o->resource_usage = v;
    } else if (strcmp(a, "--pinned-usage") == 0) {
        o->pinned_usage = v;
    } else if (strcmp(a, "--header-dir") == 0) {
        o->header_dir = v;
    } else if (strcmp(a, "--header-tag") == 0) {
        o->header_tag = v;
        return v[0] != '\0' && strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_") == strlen(v);
    } else if (strcmp(a, "--deps") == 0) {
        o->deps = v;
    } else if (strcmp(a, "--read-limit") == 0) {
        return parse_size(v, &o->read_limit);
    } else {
        return parse_size(v, &x->stack) && x->stack >= CORUN_CC_STACK_MIN &&
               x->stack <= CORUN_CC_STACK_MAX;
    }
    return 1;
}

/* Reads the command line into r (r->o.cflags has room for every argument)
 * and x. -1 to go on, or the exit status once --help, --version or
 * --setting is answered or a mistake said. */
static int parse_args(int argc, char **argv, run *r, args *x)
{
    corun__cc_opts *o = &r->o;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int t;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("corun-cc %s (libclang: ", CORUN_CC_VERSION);
            CXString v = clang_getClangVersion();
            printf("%s)\n", clang_getCString(v));
            clang_disposeString(v);
            return 0;
        } else if (takes_value(a)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "corun-cc: %s needs a value\n", a);
                return 2;
            }
            const char *v = argv[++i];
            if (!set_value(r, x, a, v)) {
                fprintf(stderr, "corun-cc: %s %s: %s\n", a, v,
                        strcmp(a, "--header-tag") == 0 ? "letters, digits, '-' and '_' only"
                        : a[2] == 'p'                  ? "not a size from 1M to 64G"
                                                       : "not a size");
                return 2;
            }
        } else if (strcmp(a, "--setting") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "corun-cc: --setting needs a name\n");
                return 2;
            }
            x->settings[x->nsettings++] = argv[++i];
        } else if (strcmp(a, "--check") == 0) {
            o->check_only = 1;
        } else if (strcmp(a, "--no-pch") == 0) {
            x->no_pch = 1;
        } else if (strcmp(a, "--link-allocated") == 0) {
            o->link_allocated = 1;
        } else if (strcmp(a, "-v") == 0) {
            r->verbose = 1;
        } else if ((t = take_cflag(argc, argv, &i, o->cflags, &o->ncflags)) != 0) {
            if (t < 0) {
                fprintf(stderr, "corun-cc: %s needs a value\n", a);
                return 2;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "corun-cc: unknown option '%s' (see --help)\n", a);
            return 2;
        } else if (o->in == NULL) {
            o->in = a;
        } else {
            fprintf(stderr, "corun-cc: more than one input ('%s' and '%s')\n", o->in, a);
            return 2;
        }
    }
    if (x->nsettings > 0) {
        return print_settings(x->settings, x->nsettings);
    }
    if (o->in == NULL || (o->out == NULL && !o->check_only)) {
        fprintf(stderr, "corun-cc: %s\n", o->in == NULL ? "no input file" : "no output (-o FILE)");
        usage(stderr);
        return 2;
    }
    if ((o->pinned_usage != NULL || o->link_allocated) && o->resource_usage == NULL) {
        fprintf(stderr, "corun-cc: %s needs --resource-usage\n",
                o->pinned_usage != NULL ? "--pinned-usage" : "--link-allocated");
        return 2;
    }
    return -1;
}

/* Transforms on a thread whose stack the parse may use; the exit status. */
static int transform_on_thread(run *r, uint64_t stack)
{
    corun__cc_thread th;
    int rc = corun__cc_libclang_setup(r->o.in);
    if (rc != CORUN_OK) {
        fprintf(stderr, "corun-cc: cannot set up libclang: %s\n", corun_strerror(rc));
        return 3;
    }
    rc = corun__cc_thread_start(&th, "cc-transform", r->o.parse_stack, transform, r);
    if (rc != CORUN_OK) {
        fprintf(stderr, "corun-cc: cannot start the parser with a stack of %llu MiB: %s\n",
                (unsigned long long)(stack >> 20), corun_strerror(rc));
        return 3;
    }
    corun__cc_thread_join(&th);
    return r->status;
}

/* Reads the command line and runs the transformation; returns the exit
 * status. */
static int cc_main(int argc, char **argv)
{
    run r;
    corun__cc_opts *o = &r.o;
    args x = {0, NULL, CORUN_CC_STACK_DEFAULT, NULL, 0};
    char default_pch[4096];
    const char **cflags = calloc((size_t)argc * 2 + 1, sizeof(char *));

    memset(&r, 0, sizeof(r));
    x.settings = calloc((size_t)argc, sizeof(char *));
    if (cflags == NULL || x.settings == NULL) {
        fprintf(stderr, "corun-cc: out of memory\n");
        free(cflags);
        free(x.settings);
        return 3;
    }
    o->cflags = cflags;
    o->read_limit = CORUN_CC_READ_LIMIT_DEFAULT;
    int status = parse_args(argc, argv, &r, &x);
    if (status < 0) {
        if (o->line_name == NULL) {
            o->line_name = o->in;
        }
        if (!x.no_pch) {
            o->pch_dir = x.pch_dir != NULL ? x.pch_dir
                                           : default_pch_dir(default_pch, sizeof(default_pch));
        }
        o->parse_stack = (size_t)x.stack;
        char strict[8], why[256];
        if (corun__settings_read_one("cc_strict", strict, sizeof(strict), why, sizeof(why)) !=
            CORUN_OK) {
            fprintf(stderr, "corun-cc: %s\n", why);
            status = 2;
        } else {
            o->strict = strcmp(strict, "1") == 0;
            status = transform_on_thread(&r, x.stack);
        }
    }
    free(cflags);
    free(x.settings);
    return status;
}

int main(int argc, char **argv)
{
    corun__stdio_hold();
    return corun__stdout_finish("corun-cc", cc_main(argc, argv), 3);
}
