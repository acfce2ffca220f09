/*
 * parse.c — libclang on the input, once as the host compiler sees it and
 * once as the device compiler does (__CUDA_ARCH__ defined), so code on both
 * sides of #ifdef __CUDA_ARCH__ is analysed. The two parses run in
 * parallel: each takes most of corun-cc's time, most of it in the CUDA
 * headers clang includes first, which come precompiled when they can
 * (pch.c).
 *
 * libclang 19's CUDA wrappers include texture_fetch_functions.h, which CUDA
 * 13 no longer ships, and device-side parsing of host launches needs a
 * declaration of cudaConfigureCall; both are given as in-memory files.
 *
 * Each side parses on a thread of thread.c (the host side on the caller's,
 * the device side on one started here) under its own read limit (reads.c);
 * a file reads.c refused is reported at the #include that named it.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cc/cc.h"
#include "corun/corun.h"

#define VDIR CORUN_CC_VIRTUAL_DIR

/* Host code nvcc accepts and clang's CUDA headers do not declare: nvcc's
 * math_functions.h and .hpp give host code max and min of the integer and
 * floating types (and their mixes), umin/umax/llmin/llmax/ullmin/ullmax and
 * sincos of float. Every other function those headers declare for host and
 * device parses with clang's headers too (tests/cc/host_math.cu calls each).
 * Declarations for the parse only, on both sides (the device side parses
 * host functions too); the output never includes them (nvcc brings its
 * own). docs/corun-cc.md lists what else nvcc accepts and corun-cc does
 * not. */
#define HOST_PRELUDE \
    "__host__ unsigned int umax(unsigned int, unsigned int);\n" \
    "__host__ unsigned int umin(unsigned int, unsigned int);\n" \
    "__host__ long long llmax(long long, long long);\n" \
    "__host__ long long llmin(long long, long long);\n" \
    "__host__ unsigned long long ullmax(unsigned long long, unsigned long long);\n" \
    "__host__ unsigned long long ullmin(unsigned long long, unsigned long long);\n" \
    "__host__ void sincos(float, float *, float *);\n" \
    "__host__ int max(int, int);\n" \
    "__host__ unsigned int max(unsigned int, unsigned int);\n" \
    "__host__ unsigned int max(int, unsigned int);\n" \
    "__host__ unsigned int max(unsigned int, int);\n" \
    "__host__ long max(long, long);\n" \
    "__host__ unsigned long max(unsigned long, unsigned long);\n" \
    "__host__ unsigned long max(long, unsigned long);\n" \
    "__host__ unsigned long max(unsigned long, long);\n" \
    "__host__ long long max(long long, long long);\n" \
    "__host__ unsigned long long max(unsigned long long, unsigned long long);\n" \
    "__host__ unsigned long long max(long long, unsigned long long);\n" \
    "__host__ unsigned long long max(unsigned long long, long long);\n" \
    "__host__ float max(float, float);\n" \
    "__host__ double max(double, double);\n" \
    "__host__ double max(float, double);\n" \
    "__host__ double max(double, float);\n" \
    "__host__ int min(int, int);\n" \
    "__host__ unsigned int min(unsigned int, unsigned int);\n" \
    "__host__ unsigned int min(int, unsigned int);\n" \
    "__host__ unsigned int min(unsigned int, int);\n" \
    "__host__ long min(long, long);\n" \
    "__host__ unsigned long min(unsigned long, unsigned long);\n" \
    "__host__ unsigned long min(long, unsigned long);\n" \
    "__host__ unsigned long min(unsigned long, long);\n" \
    "__host__ long long min(long long, long long);\n" \
    "__host__ unsigned long long min(unsigned long long, unsigned long long);\n" \
    "__host__ unsigned long long min(long long, unsigned long long);\n" \
    "__host__ unsigned long long min(unsigned long long, long long);\n" \
    "__host__ float min(float, float);\n" \
    "__host__ double min(double, double);\n" \
    "__host__ double min(float, double);\n" \
    "__host__ double min(double, float);\n"

static const char host_prelude[] = HOST_PRELUDE;

static const char device_prelude[] =
    "extern \"C\" int cudaConfigureCall(dim3, dim3, unsigned long = 0, cudaStream_t = 0);\n"
    HOST_PRELUDE;

typedef struct parse_job {
    const corun__cc_opts *o;
    corun__cc_tu *t;
    corun__cc_reads reads;
    int rc;
    char cuda_arg[4200];
    char cccl[4200];
    char ver[5][40];        /* -D__CUDACC_VER_{MAJOR,MINOR,BUILD}__=N and
                               __CUDA_API_VER_{MAJOR,MINOR}__, or "" */
} parse_job;

/* The side's libclang arguments into argv; the count. pch: the
 * precompiled header to load, or "" for the arguments that build one
 * (without the file's own -include flags, which come after it), or NULL
 * for a parse without. */
static int side_args(const parse_job *j, const char **argv, const char *pch)
{
    const corun__cc_opts *o = j->o;
    int n = 0;
    int have_std = 0;

    argv[n++] = "-x";
    argv[n++] = "cuda";
    argv[n++] = "--cuda-gpu-arch=sm_90";
    argv[n++] = j->t->device ? "--cuda-device-only" : "--cuda-host-only";
    argv[n++] = "-nocudalib";
    argv[n++] = j->cuda_arg;
    argv[n++] = "-isystem";
    argv[n++] = VDIR;
    if (j->cccl[0] != '\0') {
        argv[n++] = "-isystem";
        argv[n++] = j->cccl;
    }
    argv[n++] = "-Wno-unknown-cuda-version";
    argv[n++] = "-ferror-limit=0";
    /* What nvcc defines and clang does not, so the file's own #if on them
     * takes nvcc's branch (the arch: the one corun-cc parses for). */
    for (int i = 0; i < 5; i++) {
        if (j->ver[i][0] != '\0') {
            argv[n++] = j->ver[i];
        }
    }
    argv[n++] = "-D__CUDA_ARCH_LIST__=900";
    if (pch != NULL && pch[0] != '\0') {
        argv[n++] = "-include-pch";
        argv[n++] = pch;
    }
    for (size_t i = 0; i < o->ncflags && n < 60 + 2 * 250; i++) {
        if (strncmp(o->cflags[i], "-std=", 5) == 0) {
            have_std = 1;
        }
        if (pch != NULL && pch[0] == '\0' && strcmp(o->cflags[i], "-include") == 0) {
            i++;
            continue;
        }
        argv[n++] = o->cflags[i];
    }
    if (!have_std) {
        argv[n++] = "-std=c++17";
    }
    if (pch == NULL) {
        argv[n++] = "-include";
        argv[n++] = j->t->device ? VDIR "/corun_device_prelude.h" : VDIR "/corun_host_prelude.h";
    }
    return n;
}

static enum CXErrorCode parse_with(parse_job *j, const char *pch, struct CXUnsavedFile *files,
                                   unsigned nfiles)
{
    const char *argv[64 + 2 * 256];
    int n = side_args(j, argv, pch);

    /* entered first: a crash in createIndex is libclang's too */
    corun__cc_reads_enter(&j->reads);
    j->t->index = clang_createIndex(0, 0);
    enum CXErrorCode e = clang_parseTranslationUnit2(
        j->t->index, j->o->in, argv, n, files, nfiles,
        CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_KeepGoing, &j->t->tu);
    corun__cc_reads_leave();
    return e;
}

/* Disposes of the unit and its index, keeps which side it is. */
static void free_unit(corun__cc_tu *t)
{
    if (t->tu) {
        clang_disposeTranslationUnit(t->tu);
    }
    if (t->index) {
        clang_disposeIndex(t->index);
    }
    t->tu = NULL;
    t->index = NULL;
    t->file = NULL;
}

static void *parse_side(void *arg)
{
    parse_job *j = arg;
    /* the last file is what the precompiled header holds: nothing but what
     * clang includes first, and on the device side the prelude */
    struct CXUnsavedFile files[4] = {
        {VDIR "/texture_fetch_functions.h", "", 0},
        {VDIR "/corun_device_prelude.h", device_prelude, sizeof(device_prelude) - 1},
        {VDIR "/corun_host_prelude.h", host_prelude, sizeof(host_prelude) - 1},
        {VDIR "/corun_cc_pch.h", j->t->device ? device_prelude : host_prelude,
         j->t->device ? sizeof(device_prelude) - 1 : sizeof(host_prelude) - 1},
    };
    enum CXErrorCode e = CXError_Failure;
    char pch[PATH_MAX];

    if (j->o->pch_dir != NULL) {
        const char *argv[64 + 2 * 256];
        int n = side_args(j, argv, "");
        j->t->pch =
            corun__cc_pch_get(j->o->pch_dir, argv, n, files, 4, &j->reads, pch, sizeof(pch));
    }
    if (j->t->pch != CORUN_CC_PCH_NONE) {
        e = parse_with(j, pch, files, 4);
        if ((e != CXError_Success || j->t->tu == NULL || corun__cc_pch_rejected(j->t->tu)) &&
            !corun__cc_reads_refused(&j->reads)) {
            unlink(pch); /* the next run builds it anew */
            free_unit(j->t);
            j->t->pch = CORUN_CC_PCH_NONE;
        }
    }
    if (j->t->pch == CORUN_CC_PCH_NONE) {
        e = parse_with(j, NULL, files, 3);
    }
    if (e != CXError_Success || j->t->tu == NULL) {
        j->rc = CORUN_EPARSE;
        return NULL;
    }
    j->t->file = clang_getFile(j->t->tu, j->o->in);
    j->rc = j->t->file ? CORUN_OK : CORUN_EPARSE;
    return NULL;
}

static int already(const corun__cc_diags *d, CXSourceLocation loc, const char *msg)
{
    CXFile f = NULL;
    unsigned line = 0, col = 0;
    clang_getSpellingLocation(loc, &f, &line, &col, NULL);
    size_t n = strlen(msg);
    for (size_t i = 0; i < d->n; i++) {
        const corun__cc_diag *g = &d->v[i];
        if (g->line == line && g->col == col && strncmp(g->text, "parse error: ", 13) == 0 &&
            strncmp(g->text + 13, msg, n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The file named in clang's "'NAME' file not found" or "cannot open file
 * 'NAME': ...", into buf; 0 when m is neither. */
static int file_named(const char *m, char *buf, size_t cap)
{
    static const char cannot[] = "cannot open file '";
    const char *start = NULL, *end = NULL;
    if (m[0] == '\'') {
        start = m + 1;
        end = strstr(start, "' file not found");
    } else if (strncmp(m, cannot, sizeof(cannot) - 1) == 0) {
        start = m + sizeof(cannot) - 1;
        end = strstr(start, "': ");
    }
    if (end == NULL || (size_t)(end - start) >= cap) {
        return 0;
    }
    memcpy(buf, start, (size_t)(end - start));
    buf[end - start] = '\0';
    return 1;
}

/* Records the unit's errors; the device side's only when the host side did
 * not report the same. clang's complaint about a kernel referenced from a
 * kernel is what dynamic parallelism looks like to it: said as such. An
 * include clang could not open or find because reads.c refused it (or it
 * named a directory) is said as such; when reads.c refused a file, clang's
 * other errors follow from it and are left out. */
static void record_errors(const corun__cc_tu *t, corun__cc_reads *r, corun__cc_diags *d)
{
    char name[PATH_MAX], why[PATH_MAX + 200];
    int refused = corun__cc_reads_refused(r);
    unsigned n = clang_getNumDiagnostics(t->tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic g = clang_getDiagnostic(t->tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(g);
        if (sev >= CXDiagnostic_Error) {
            CXString msg = clang_getDiagnosticSpelling(g);
            const char *m = clang_getCString(msg);
            CXSourceLocation loc = clang_getDiagnosticLocation(g);
            corun__cc_read_refusal *f = NULL;
            if (file_named(m, name, sizeof(name))) {
                f = corun__cc_reads_behind(r, name);
            }
            if (f != NULL) {
                corun__cc_reads_say(r, f, why, sizeof(why));
                corun__cc_diag_at(d, CORUN_CC_ERROR, loc, "include", "%s", why);
                f->reported = 1;
            } else if (refused) {
                /* what follows from a refused file */
            } else if (strncmp(m, "reference to __global__ function", 32) == 0) {
                corun__cc_diag_at(d, CORUN_CC_ERROR, loc, "dynamic parallelism",
                                  "a kernel launched from device code cannot be scheduled or "
                                  "preempted by corun");
            } else if (!t->device || !already(d, loc, m)) {
                corun__cc_diag_at(d, CORUN_CC_ERROR, loc, "parse error", "%s%s", m,
                                  t->device ? " (device side)" : "");
            }
            clang_disposeString(msg);
        }
        clang_disposeDiagnostic(g);
    }
}

/* The refusals of r that no message of clang's pointed to, for the whole
 * file. */
static void record_refusals(corun__cc_reads *r, corun__cc_diags *d, const char *in)
{
    char why[PATH_MAX + 200];
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].why != CORUN_CC_READ_DIRECTORY && !r->v[i].reported) {
            corun__cc_reads_say(r, &r->v[i], why, sizeof(why));
            corun__cc_diag_add(d, CORUN_CC_ERROR, in, 0, 0, "include", "%s", why);
        }
    }
}

/* CUDA_VERSION of the installation's cuda.h (13000 for 13.0), or 0. */
static int cuda_version(const char *cuda_path)
{
    static const char key[] = "#define CUDA_VERSION ";
    char path[PATH_MAX], buf[65536];
    int v = 0;

    if (snprintf(path, sizeof(path), "%s/include/cuda.h", cuda_path) >= (int)sizeof(path)) {
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *at = strstr(buf, key);
    if (at != NULL) {
        v = atoi(at + sizeof(key) - 1);
    }
    return v > 0 ? v : 0;
}

int corun__cc_parse(const corun__cc_opts *o, corun__cc_tu *host, corun__cc_tu *dev,
                    corun__cc_diags *d)
{
    parse_job jobs[2];
    corun__cc_thread th;
    const char *cp = o->cuda_path ? o->cuda_path : "/usr/local/cuda";
    int rc = CORUN_OK;

    memset(host, 0, sizeof(*host));
    memset(dev, 0, sizeof(*dev));
    dev->device = 1;
    /* nvcc's __CUDACC_VER_BUILD__ is its own build number, which the
     * installation's headers do not say: 0 here. */
    const int cv = cuda_version(cp);
    for (int i = 0; i < 2; i++) {
        memset(&jobs[i], 0, sizeof(jobs[i]));
        jobs[i].o = o;
        jobs[i].t = i == 0 ? host : dev;
        jobs[i].reads.limit = o->read_limit;
        snprintf(jobs[i].cuda_arg, sizeof(jobs[i].cuda_arg), "--cuda-path=%s", cp);
        snprintf(jobs[i].cccl, sizeof(jobs[i].cccl), "%s/include/cccl", cp);
        if (access(jobs[i].cccl, R_OK) != 0) {
            jobs[i].cccl[0] = '\0';
        }
        if (cv > 0) {
            snprintf(jobs[i].ver[0], sizeof(jobs[i].ver[0]), "-D__CUDACC_VER_MAJOR__=%d",
                     cv / 1000);
            snprintf(jobs[i].ver[1], sizeof(jobs[i].ver[1]), "-D__CUDACC_VER_MINOR__=%d",
                     cv % 1000 / 10);
            snprintf(jobs[i].ver[2], sizeof(jobs[i].ver[2]), "-D__CUDACC_VER_BUILD__=0");
            snprintf(jobs[i].ver[3], sizeof(jobs[i].ver[3]), "-D__CUDA_API_VER_MAJOR__=%d",
                     cv / 1000);
            snprintf(jobs[i].ver[4], sizeof(jobs[i].ver[4]), "-D__CUDA_API_VER_MINOR__=%d",
                     cv % 1000 / 10);
        }
    }
    int threaded = corun__cc_thread_start(&th, "cc-device-parse", o->parse_stack, parse_side,
                                          &jobs[1]) == CORUN_OK;
    parse_side(&jobs[0]);
    if (threaded) {
        corun__cc_thread_join(&th);
    } else {
        parse_side(&jobs[1]);
    }
    for (int i = 0; i < 2; i++) {
        if (jobs[i].rc == CORUN_OK) {
            record_errors(jobs[i].t, &jobs[i].reads, d);
        } else if (corun__cc_reads_refused(&jobs[i].reads)) {
            rc = CORUN_EPARSE; /* the refusal says why */
        } else {
            corun__cc_diag_add(d, CORUN_CC_ERROR, o->in, 0, 0, "parse error",
                               "libclang could not parse the file (%s side)",
                               i == 0 ? "host" : "device");
            rc = CORUN_EPARSE;
        }
        record_refusals(&jobs[i].reads, d, o->in);
    }
    corun__cc_reads_free(&jobs[0].reads);
    corun__cc_reads_free(&jobs[1].reads);
    return rc;
}

void corun__cc_tu_free(corun__cc_tu *t)
{
    free_unit(t);
    memset(t, 0, sizeof(*t));
}

long corun__cc_off(const corun__cc_tu *t, CXSourceLocation loc, int spelling)
{
    CXFile f = NULL;
    unsigned off = 0;

    if (spelling) {
        clang_getSpellingLocation(loc, &f, NULL, NULL, &off);
    } else {
        clang_getExpansionLocation(loc, &f, NULL, NULL, &off);
    }
    if (f == NULL || !clang_File_isEqual(f, t->file)) {
        return -1;
    }
    return (long)off;
}

long corun__cc_cursor_off(const corun__cc_tu *t, CXCursor c, int spelling)
{
    return corun__cc_off(t, clang_getCursorLocation(c), spelling);
}

void corun__cc_extent(const corun__cc_tu *t, const corun__cc_src *s, CXCursor c, long *start,
                      long *end)
{
    CXSourceRange r = clang_getCursorExtent(c);
    *start = corun__cc_off(t, clang_getRangeStart(r), 0);
    *end = corun__cc_off(t, clang_getRangeEnd(r), 0);
    if (*start < 0 || *end < 0 || *end < *start) {
        *start = *end = -1;
        return;
    }
    /* An extent that ends inside a macro invocation ends where the
     * invocation does. */
    long e = (long)corun__cc_src_expansion_end(s, (unsigned)*end);
    if (e == *end && *end > 0) {
        e = (long)corun__cc_src_expansion_end(s, (unsigned)*end - 1);
        if (e < *end) {
            e = *end;
        }
    }
    *end = e;
}

int corun__cc_spelled(CXCursor c, const char *name)
{
    CXString s = clang_getCursorSpelling(c);
    int eq = strcmp(clang_getCString(s), name) == 0;
    clang_disposeString(s);
    return eq;
}

typedef struct nth_ctx {
    unsigned want, seen;
    CXCursor found;
} nth_ctx;

static enum CXChildVisitResult nth_visit(CXCursor c, CXCursor p, CXClientData data)
{
    nth_ctx *x = data;
    (void)p;
    if (x->seen++ == x->want) {
        x->found = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

CXCursor corun__cc_child(CXCursor c, unsigned i)
{
    nth_ctx x = {i, 0, clang_getNullCursor()};
    clang_visitChildren(c, nth_visit, &x);
    return x.found;
}

static enum CXChildVisitResult count_visit(CXCursor c, CXCursor p, CXClientData data)
{
    (void)c;
    (void)p;
    (*(unsigned *)data)++;
    return CXChildVisit_Continue;
}

unsigned corun__cc_nchildren(CXCursor c)
{
    unsigned n = 0;
    clang_visitChildren(c, count_visit, &n);
    return n;
}

typedef struct attr_ctx {
    enum CXCursorKind kind;
    int found;
} attr_ctx;

static enum CXChildVisitResult attr_visit(CXCursor c, CXCursor p, CXClientData data)
{
    attr_ctx *x = data;
    (void)p;
    if (clang_getCursorKind(c) == x->kind) {
        x->found = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

int corun__cc_has_attr(CXCursor c, enum CXCursorKind kind)
{
    attr_ctx x = {kind, 0};
    clang_visitChildren(c, attr_visit, &x);
    return x.found;
}
