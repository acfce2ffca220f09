/*
 * profile_store.c — the kernel profile store: records in memory, the file
 * format, and the writers' lock (see profile_store.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/dirs.h"
#include "common/output.h"
#include "core/profile_store.h"
#include "corun/corun.h"

#define MAGIC "corun-profiles 1"
#define MAX_FILE (256u << 20)

/* ---- records -------------------------------------------------------------- */

void corun__pstore_init(corun__pstore *ps)
{
    memset(ps, 0, sizeof(*ps));
}

void corun__pstore_free(corun__pstore *ps)
{
    free(ps->runs);
    free(ps->profs);
    memset(ps, 0, sizeof(*ps));
}

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
    size_t c;
    void *p;

    if (need <= *cap) {
        return CORUN_OK;
    }
    c = *cap ? *cap * 2 : 64;
    while (c < need) {
        c *= 2;
    }
    p = realloc(*v, c * elem);
    if (p == NULL) {
        return CORUN_ENOMEM;
    }
    *v = p;
    *cap = c;
    return CORUN_OK;
}

int corun__pstore_add_run(corun__pstore *ps, const corun__prun *r)
{
    int rc;

    if (r->kernel[0] == '\0' || r->backend[0] == '\0' || !(r->dur_ns > 0)) {
        return CORUN_EINVAL;
    }
    rc = grow((void **)&ps->runs, &ps->cap_runs, ps->nruns + 1, sizeof(*ps->runs));
    if (rc != CORUN_OK) {
        return rc;
    }
    ps->runs[ps->nruns] = *r;
    ps->runs[ps->nruns].kernel[sizeof(r->kernel) - 1] = '\0';
    ps->runs[ps->nruns].backend[sizeof(r->backend) - 1] = '\0';
    ps->nruns++;
    return CORUN_OK;
}

static corun__pprof *find_prof(const corun__pstore *ps, const char *backend, const char *kernel)
{
    size_t i;

    for (i = 0; i < ps->nprofs; i++) {
        if (strcmp(ps->profs[i].backend, backend) == 0 &&
            strcmp(ps->profs[i].kernel, kernel) == 0) {
            return &ps->profs[i];
        }
    }
    return NULL;
}

const corun__pprof *corun__pstore_find_prof(const corun__pstore *ps, const char *backend,
                                            const char *kernel)
{
    return find_prof(ps, backend, kernel);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double corun__pstore_own_rate(const corun__pstore *ps, const char *backend, const char *kernel,
                              double grid, double block)
{
    double *rate, own = 0;
    size_t i, n = 0;

    rate = malloc((ps->nruns ? ps->nruns : 1) * sizeof(*rate));
    if (rate == NULL) {
        return 0;
    }
    /* the latest: runs are kept in the order they were recorded */
    for (i = ps->nruns; i-- > 0 && n < CORUN_PSTORE_OWN_LATEST;) {
        const corun__prun *r = &ps->runs[i];
        if (r->grid == grid && r->block == block && r->dur_ns > 0 &&
            strcmp(r->kernel, kernel) == 0 && strcmp(r->backend, backend) == 0) {
            rate[n++] = r->grid / r->dur_ns;
        }
    }
    if (n > 0) {
        qsort(rate, n, sizeof(*rate), cmp_double);
        own = n > 3 ? rate[n - 2] : n % 2 ? rate[n / 2] : 0.5 * (rate[0] + rate[1]);
    }
    free(rate);
    return own;
}

int corun__pstore_add_prof(corun__pstore *ps, const corun__pprof *p)
{
    corun__pprof *have;
    int rc;

    if (p->kernel[0] == '\0' || p->backend[0] == '\0' || p->samples == 0 ||
        !(p->flop_frac >= 0) || !(p->bw_frac >= 0)) {
        return CORUN_EINVAL;
    }
    have = find_prof(ps, p->backend, p->kernel);
    if (have != NULL) {
        double n0 = have->samples, n1 = p->samples, n = n0 + n1;
        have->flop_frac = (have->flop_frac * n0 + p->flop_frac * n1) / n;
        have->bw_frac = (have->bw_frac * n0 + p->bw_frac * n1) / n;
        have->dur_ns = (have->dur_ns * n0 + p->dur_ns * n1) / n;
        have->samples = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
        return CORUN_OK;
    }
    rc = grow((void **)&ps->profs, &ps->cap_profs, ps->nprofs + 1, sizeof(*ps->profs));
    if (rc != CORUN_OK) {
        return rc;
    }
    ps->profs[ps->nprofs] = *p;
    ps->profs[ps->nprofs].kernel[sizeof(p->kernel) - 1] = '\0';
    ps->profs[ps->nprofs].backend[sizeof(p->backend) - 1] = '\0';
    ps->nprofs++;
    return CORUN_OK;
}

/* Keeps the newest CORUN_PSTORE_MAX_RUNS runs of each kernel and backend. */
static int trim_runs(corun__pstore *ps)
{
    typedef struct key {
        const char *backend, *kernel;
        size_t kept;
    } key;
    key *keys = NULL;
    size_t nkeys = 0, capkeys = 0, i, j, out;
    unsigned char *keep;

    if (ps->nruns <= CORUN_PSTORE_MAX_RUNS) {
        return CORUN_OK;
    }
    keep = calloc(ps->nruns, 1);
    if (keep == NULL) {
        return CORUN_ENOMEM;
    }
    for (i = ps->nruns; i-- > 0;) {
        const corun__prun *r = &ps->runs[i];
        for (j = 0; j < nkeys; j++) {
            if (strcmp(keys[j].backend, r->backend) == 0 &&
                strcmp(keys[j].kernel, r->kernel) == 0) {
                break;
            }
        }
        if (j == nkeys) {
            if (grow((void **)&keys, &capkeys, nkeys + 1, sizeof(*keys)) != CORUN_OK) {
                free(keep);
                free(keys);
                return CORUN_ENOMEM;
            }
            keys[nkeys++] = (key){r->backend, r->kernel, 0};
        }
        if (keys[j].kept < CORUN_PSTORE_MAX_RUNS) {
            keys[j].kept++;
            keep[i] = 1;
        }
    }
    for (i = 0, out = 0; i < ps->nruns; i++) {
        if (keep[i]) {
            ps->runs[out++] = ps->runs[i];
        }
    }
    ps->nruns = out;
    free(keep);
    free(keys);
    return CORUN_OK;
}

/* ---- text, in the C locale ------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int len;

    if (b->oom) {
        return;
    }
    for (;;) {
        size_t room = b->cap - b->n;
        va_start(ap, fmt);
        len = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
        va_end(ap);
        if (len < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)len < room) {
            b->n += (size_t)len;
            return;
        }
        if (grow((void **)&b->p, &b->cap, b->n + (size_t)len + 1, 1) != CORUN_OK) {
            b->oom = 1;
            return;
        }
    }
}

#define FNV_INIT 0xcbf29ce484222325ull

static uint64_t fnv1a(uint64_t h, const char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Kernel names may hold any byte; in the file they are one word. */
static void put_name(sbuf *b, const char *name)
{
    const unsigned char *s = (const unsigned char *)name;

    for (; *s; s++) {
        if (*s <= 0x20 || *s >= 0x7f || *s == '%') {
            sb_printf(b, "%%%02X", *s);
        } else {
            sb_printf(b, "%c", *s);
        }
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

static int get_name(const char *word, char *out, size_t len)
{
    size_t n = 0;

    while (*word) {
        int c = (unsigned char)*word;
        if (c == '%') {
            int hi = hexval(word[1]), lo = hi >= 0 ? hexval(word[2]) : -1;
            if (lo < 0) {
                return -1;
            }
            c = hi * 16 + lo;
            word += 3;
        } else {
            word++;
        }
        if (c == 0 || n + 1 >= len) {
            return -1;
        }
        out[n++] = (char)c;
    }
    if (n == 0) {
        return -1;
    }
    out[n] = '\0';
    return 0;
}

static int get_num(const char *word, double lo, double hi, double *out)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(word, &end);
    if (errno != 0 || end == word || *end != '\0' || !(v >= lo && v <= hi)) {
        return -1;
    }
    *out = v;
    return 0;
}

/* The store as text, end line included. */
static int serialize(const corun__pstore *ps, sbuf *b)
{
    size_t i, body;

    sb_printf(b, "%s\n# corun kernel profiles: see docs/policies.md. Do not edit: a checksum "
                 "guards this file.\n",
              MAGIC);
    for (i = 0; i < ps->nruns; i++) {
        const corun__prun *r = &ps->runs[i];
        sb_printf(b, "run %s ", r->backend);
        put_name(b, r->kernel);
        sb_printf(b, " %.17g %.17g %.17g %.17g %.17g\n", r->grid, r->block, r->size, r->smem,
                  r->dur_ns);
    }
    for (i = 0; i < ps->nprofs; i++) {
        const corun__pprof *p = &ps->profs[i];
        sb_printf(b, "prof %s ", p->backend);
        put_name(b, p->kernel);
        sb_printf(b, " %.17g %.17g %.17g %u\n", p->flop_frac, p->bw_frac, p->dur_ns, p->samples);
    }
    body = b->n;
    sb_printf(b, "end %zu %016llx\n", ps->nruns + ps->nprofs,
              (unsigned long long)(b->oom ? 0 : fnv1a(FNV_INIT, b->p, body)));
    return b->oom ? CORUN_ENOMEM : CORUN_OK;
}

#define MAX_WORDS 10

/* Splits a line (modified in place) into blank-separated words. */
static size_t split(char *line, char **w)
{
    size_t n = 0;
    char *p = line;

    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r') {
            *p++ = '\0';
        }
        if (*p == '\0') {
            break;
        }
        if (n == MAX_WORDS) {
            return MAX_WORDS + 1;
        }
        w[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r') {
            p++;
        }
    }
    return n;
}

static int parse_backend(const char *word, char *out, size_t len)
{
    if (strlen(word) >= len) {
        return -1;
    }
    snprintf(out, len, "%s", word);
    return 0;
}

/* A "run" record's words (w[1..7]) into ps. CORUN_EPARSE when malformed,
 * CORUN_ENOMEM. */
static int parse_run(char **w, corun__pstore *ps)
{
    corun__prun r;
    double x[5];

    memset(&r, 0, sizeof(r));
    if (parse_backend(w[1], r.backend, sizeof(r.backend)) != 0 ||
        get_name(w[2], r.kernel, sizeof(r.kernel)) != 0 ||
        get_num(w[3], 1, 1e12, &x[0]) != 0 || get_num(w[4], 1, 1e9, &x[1]) != 0 ||
        get_num(w[5], 0, 1e30, &x[2]) != 0 || get_num(w[6], 0, 1e12, &x[3]) != 0 ||
        get_num(w[7], 1e-9, 1e18, &x[4]) != 0) {
        return CORUN_EPARSE;
    }
    r.grid = x[0];
    r.block = x[1];
    r.size = x[2];
    r.smem = x[3];
    r.dur_ns = x[4];
    return corun__pstore_add_run(ps, &r) == CORUN_OK ? CORUN_OK : CORUN_ENOMEM;
}

/* A "prof" record's words (w[1..6]) into ps. CORUN_EPARSE when malformed,
 * CORUN_ENOMEM. */
static int parse_prof(char **w, corun__pstore *ps)
{
    corun__pprof pr;
    double x[4];

    memset(&pr, 0, sizeof(pr));
    if (parse_backend(w[1], pr.backend, sizeof(pr.backend)) != 0 ||
        get_name(w[2], pr.kernel, sizeof(pr.kernel)) != 0 ||
        get_num(w[3], 0, 1e6, &x[0]) != 0 || get_num(w[4], 0, 1e6, &x[1]) != 0 ||
        get_num(w[5], 0, 1e18, &x[2]) != 0 || get_num(w[6], 1, UINT32_MAX, &x[3]) != 0) {
        return CORUN_EPARSE;
    }
    pr.flop_frac = x[0];
    pr.bw_frac = x[1];
    pr.dur_ns = x[2];
    pr.samples = (uint32_t)x[3];
    /* Profiles are unique per key in a file written by corun; a repeat is
     * merged, not an error. */
    return corun__pstore_add_prof(ps, &pr) == CORUN_OK ? CORUN_OK : CORUN_ENOMEM;
}

/* The end line's words (w[1], w[2]) against what came before it: records
 * read, and the checksum of every byte before the end line. */
static int parse_end(char **w, size_t lineno, size_t records, uint64_t sum, char *err,
                     size_t err_len)
{
    char *e = NULL;
    unsigned long long count, file_sum = 0;
    int ok;

    errno = 0;
    count = strtoull(w[1], &e, 10);
    ok = errno == 0 && *e == '\0';
    if (ok) {
        file_sum = strtoull(w[2], &e, 16);
        ok = errno == 0 && *e == '\0' && strlen(w[2]) == 16;
    }
    if (!ok) {
        snprintf(err, err_len, "line %zu: malformed end line", lineno);
        return CORUN_EPARSE;
    }
    if (count != records) {
        snprintf(err, err_len, "line %zu: the file says %llu records, it holds %zu", lineno,
                 count, records);
        return CORUN_EPARSE;
    }
    if (file_sum != sum) {
        snprintf(err, err_len, "line %zu: checksum mismatch (the file was changed)", lineno);
        return CORUN_EPARSE;
    }
    return CORUN_OK;
}

/* Parses a whole file, NUL-free; on failure says why in err ("line 7: ..."). */
static int parse(char *text, size_t len, corun__pstore *ps, char *err, size_t err_len)
{
    size_t lineno = 0, records = 0;
    char *p = text, *end = text + len;
    uint64_t sum_before, sum = FNV_INIT;
    int seen_end = 0;

    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line = p, *w[MAX_WORDS];
        size_t n;
        int rc;

        if (nl == NULL) {
            snprintf(err, err_len, "line %zu: no end of line (truncated file)", lineno + 1);
            return CORUN_EPARSE;
        }
        /* The checksum covers the bytes as they are in the file, so it is
         * taken before the line is cut into words. */
        sum_before = sum;
        sum = fnv1a(sum, line, (size_t)(nl - line) + 1);
        *nl = '\0';
        p = nl + 1;
        lineno++;
        if (seen_end) {
            snprintf(err, err_len, "line %zu: text after the end line", lineno);
            return CORUN_EPARSE;
        }
        if (lineno == 1) {
            if (strcmp(line, MAGIC) != 0) {
                snprintf(err, err_len, "line 1: not a corun profile store (expected '%s')", MAGIC);
                return CORUN_EPARSE;
            }
            continue;
        }
        if (line[0] == '#') {
            continue;
        }
        n = split(line, w);
        if (n == 0) {
            continue;
        }
        if (strcmp(w[0], "end") == 0 && n == 3) {
            rc = parse_end(w, lineno, records, sum_before, err, err_len);
            if (rc != CORUN_OK) {
                return rc;
            }
            seen_end = 1;
            continue;
        }
        if (strcmp(w[0], "run") == 0 && n == 8) {
            rc = parse_run(w, ps);
        } else if (strcmp(w[0], "prof") == 0 && n == 7) {
            rc = parse_prof(w, ps);
        } else {
            rc = CORUN_EPARSE;
        }
        if (rc == CORUN_EPARSE) {
            snprintf(err, err_len, "line %zu: malformed record", lineno);
        }
        if (rc != CORUN_OK) {
            return rc;
        }
        records++;
    }
    if (lineno == 0) {
        snprintf(err, err_len, "empty file");
        return CORUN_EPARSE;
    }
    if (!seen_end) {
        snprintf(err, err_len, "no end line (truncated file)");
        return CORUN_EPARSE;
    }
    return CORUN_OK;
}

/* Numbers are written and read in the C locale, whatever the program set. */
typedef struct c_locale {
    locale_t c, old;
} c_locale;

static int c_locale_enter(c_locale *l)
{
    l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (l->c == (locale_t)0) {
        return CORUN_ENOMEM;
    }
    l->old = uselocale(l->c);
    return CORUN_OK;
}

static void c_locale_leave(c_locale *l)
{
    uselocale(l->old);
    freelocale(l->c);
}

int corun__pstore_parse(char *text, size_t len, corun__pstore *ps, char *err, size_t err_len)
{
    c_locale loc;
    int rc;

    corun__pstore_free(ps);
    if (memchr(text, '\0', len) != NULL) {
        snprintf(err, err_len, "binary data in the file");
        return CORUN_EPARSE;
    }
    rc = c_locale_enter(&loc);
    if (rc == CORUN_OK) {
        rc = parse(text, len, ps, err, err_len);
        c_locale_leave(&loc);
    }
    if (rc != CORUN_OK) {
        corun__pstore_free(ps);
    }
    return rc;
}

int corun__pstore_format(const corun__pstore *ps, char **text, size_t *len)
{
    sbuf b = {NULL, 0, 0, 0};
    c_locale loc;
    int rc = c_locale_enter(&loc);

    if (rc == CORUN_OK) {
        rc = serialize(ps, &b);
        c_locale_leave(&loc);
    }
    if (rc != CORUN_OK) {
        free(b.p);
        b.p = NULL;
        b.n = 0;
    }
    *text = b.p;
    *len = b.n;
    return rc;
}

/* ---- files ---------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static void say(char *note, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (note == NULL || len == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(note, len, fmt, ap);
    va_end(ap);
}

/* Reads a whole file. CORUN_ENOENT if it does not exist. */
static int read_file(const char *path, char **text, size_t *len, char *note, size_t note_len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;

    *text = NULL;
    *len = 0;
    if (f == NULL) {
        if (errno == ENOENT) {
            return CORUN_ENOENT;
        }
        say(note, note_len, "%s: %s", path, strerror(errno));
        return CORUN_EIO;
    }
    for (;;) {
        size_t got;
        if (grow((void **)&buf, &cap, n + 65536 + 1, 1) != CORUN_OK) {
            free(buf);
            fclose(f);
            return CORUN_ENOMEM;
        }
        got = fread(buf + n, 1, 65536, f);
        n += got;
        if (got < 65536) {
            break;
        }
        if (n > MAX_FILE) {
            break; /* parsed as corrupt: no store grows this large */
        }
    }
    if (ferror(f)) {
        say(note, note_len, "%s: read error", path);
        free(buf);
        fclose(f);
        return CORUN_EIO;
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return CORUN_OK;
}

/* Reads and parses path into *ps (emptied first). CORUN_ENOENT: no file;
 * CORUN_EPARSE: corrupt, with why in err. */
static int load_file(const char *path, corun__pstore *ps, char *err, size_t err_len)
{
    char *text;
    size_t len;
    int rc;

    corun__pstore_free(ps);
    rc = read_file(path, &text, &len, err, err_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    rc = corun__pstore_parse(text, len, ps, err, err_len);
    free(text);
    return rc;
}

/* Takes the writers' lock: an exclusive flock of PATH.lock. Returns the
 * descriptor, or -1 (with why in note). */
static int lock_store(const char *path, char *note, size_t note_len)
{
    char lp[4096];
    int fd;

    if ((size_t)snprintf(lp, sizeof(lp), "%s.lock", path) >= sizeof(lp)) {
        say(note, note_len, "%s: path too long", path);
        return -1;
    }
    fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        say(note, note_len, "%s: %s", lp, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            say(note, note_len, "%s: cannot lock: %s", lp, strerror(errno));
            close(fd);
            return -1;
        }
    }
    return fd;
}

static void unlock_store(int fd)
{
    (void)flock(fd, LOCK_UN);
    close(fd);
}

/* Renames a corrupt store out of the way (lock held): the file itself, in
 * its own folder when path is a link to it (the link stays); a device or
 * FIFO is never moved (common/output.h). */
static int set_aside(const char *path, const char *why, char *note, size_t note_len)
{
    char real[4096], dst[4200];
    struct stat st;
    long t = (long)time(NULL);
    int i;

    if (corun__output_resolve(path, real, sizeof(real), NULL, 0) != CORUN_OUTPUT_REPLACE ||
        lstat(real, &st) != 0) {
        say(note, note_len, "%s is corrupt (%s) and not a regular file: not moved aside", path,
            why);
        return CORUN_EIO;
    }
    snprintf(dst, sizeof(dst), "%s.corrupt-%ld", real, t);
    for (i = 1; stat(dst, &st) == 0 && i < 1000; i++) {
        snprintf(dst, sizeof(dst), "%s.corrupt-%ld-%d", real, t, i);
    }
    if (rename(real, dst) != 0) {
        say(note, note_len, "%s is corrupt (%s) and cannot be moved aside: %s", path, why,
            strerror(errno));
        return CORUN_EIO;
    }
    say(note, note_len, "%s was corrupt (%s): moved to %s; starting a new store", path, why, dst);
    return CORUN_OK;
}

/* Loads with the lock held; a corrupt file is set aside. */
static int load_locked(const char *path, corun__pstore *ps, char *note, size_t note_len)
{
    char err[256] = "";
    int rc = load_file(path, ps, err, sizeof(err));

    if (rc == CORUN_ENOENT) {
        return CORUN_OK;
    }
    if (rc == CORUN_EPARSE) {
        return set_aside(path, err, note, note_len);
    }
    if (rc == CORUN_EIO) {
        say(note, note_len, "%s", err);
    }
    return rc;
}

int corun__pstore_read(const char *path, corun__pstore *ps, char *note, size_t note_len)
{
    char err[256] = "";
    int rc;

    corun__pstore_init(ps);
    if (note != NULL && note_len > 0) {
        note[0] = '\0';
    }
    rc = load_file(path, ps, err, sizeof(err));
    if (rc == CORUN_ENOENT) {
        return CORUN_OK;
    }
    if (rc == CORUN_EPARSE) {
        say(note, note_len, "%s is corrupt (%s)", path, err);
    } else if (rc == CORUN_EIO) {
        say(note, note_len, "%s", err);
    }
    return rc;
}

int corun__pstore_load(const char *path, corun__pstore *ps, char *note, size_t note_len)
{
    int rc = corun__pstore_read(path, ps, note, note_len);
    int fd;

    if (rc != CORUN_EPARSE) {
        return rc;
    }
    /* Corrupt as read without the lock: look again under it, since a
     * writer may have replaced the file meanwhile, and set it aside only if
     * it is still corrupt. */
    if (note != NULL && note_len > 0) {
        note[0] = '\0';
    }
    fd = lock_store(path, note, note_len);
    if (fd < 0) {
        return CORUN_EIO;
    }
    rc = load_locked(path, ps, note, note_len);
    unlock_store(fd);
    return rc;
}

/* mkdir -p of the directory part of path. */
static int make_parent(const char *path, char *note, size_t note_len)
{
    char dir[4096], failed[4096];
    char *p;

    if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir)) {
        say(note, note_len, "%s: path too long", path);
        return CORUN_EIO;
    }
    p = strrchr(dir, '/');
    if (p == NULL || p == dir) {
        return CORUN_OK;
    }
    *p = '\0';
    if (corun__mkdir_p(dir, failed, sizeof(failed)) != 0) {
        say(note, note_len, "cannot create %s: %s", failed, strerror(errno));
        return CORUN_EIO;
    }
    return CORUN_OK;
}

/* Whether the first n runs of ps hold one equal to r in every field: a
 * training repeated with the same seed on a backend that repeats itself
 * (the simulator) measures nothing new. */
static bool holds_run(const corun__pstore *ps, size_t n, const corun__prun *r)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const corun__prun *h = &ps->runs[i];
        if (h->dur_ns == r->dur_ns && h->grid == r->grid && h->block == r->block &&
            h->size == r->size && h->smem == r->smem && strcmp(h->kernel, r->kernel) == 0 &&
            strcmp(h->backend, r->backend) == 0) {
            return true;
        }
    }
    return false;
}

int corun__pstore_merge(const char *path, const corun__pstore *add, char *note, size_t note_len)
{
    corun__pstore cur;
    char *text = NULL;
    size_t i, len = 0, nheld;
    int rc, fd;

    if (note != NULL && note_len > 0) {
        note[0] = '\0';
    }
    rc = make_parent(path, note, note_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    fd = lock_store(path, note, note_len);
    if (fd < 0) {
        return CORUN_EIO;
    }
    corun__pstore_init(&cur);
    rc = load_locked(path, &cur, note, note_len);
    if (rc != CORUN_OK) {
        goto out_unlock;
    }
    nheld = cur.nruns;
    for (i = 0; i < add->nruns && rc == CORUN_OK; i++) {
        if (!holds_run(&cur, nheld, &add->runs[i])) {
            rc = corun__pstore_add_run(&cur, &add->runs[i]);
        }
    }
    for (i = 0; i < add->nprofs && rc == CORUN_OK; i++) {
        rc = corun__pstore_add_prof(&cur, &add->profs[i]);
    }
    if (rc == CORUN_OK) {
        rc = trim_runs(&cur);
    }
    if (rc == CORUN_OK) {
        rc = corun__pstore_format(&cur, &text, &len);
    }
    if (rc == CORUN_OK) {
        rc = corun__output_write(path, text, len, CORUN_OUTPUT_SYNC, note, note_len) == 0
                 ? CORUN_OK
                 : CORUN_EIO;
    }
    free(text);
out_unlock:
    corun__pstore_free(&cur);
    unlock_store(fd);
    return rc;
}

/* ---- the file's name ------------------------------------------------------ */

int corun__pstore_path(const char *setting, char *out, size_t len, char *why, size_t why_len)
{
    char host[256] = "localhost";
    sbuf b = {NULL, 0, 0, 0};
    const char *p = setting;
    int rc = CORUN_OK;

    if (setting[0] == '\0' || strcasecmp(setting, "off") == 0) {
        return CORUN_ENOENT;
    }
    if (strncmp(p, "~/", 2) == 0) {
        struct passwd pw, *res = NULL;
        char buf[4096];
        const char *home = getenv("HOME");
        if (home == NULL || home[0] != '/') {
            if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) != 0 || res == NULL ||
                pw.pw_dir == NULL || pw.pw_dir[0] == '\0') {
                say(why, why_len, "PROFILE_PATH '%s': the user has no home directory", setting);
                return CORUN_ENOENT;
            }
            home = pw.pw_dir;
        }
        sb_printf(&b, "%s/", home);
        p += 2;
    }
    if (gethostname(host, sizeof(host)) != 0) {
        snprintf(host, sizeof(host), "localhost");
    }
    host[sizeof(host) - 1] = '\0';
    for (; *p; p++) {
        if (p[0] == '%' && p[1] == 'h') {
            sb_printf(&b, "%s", host);
            p++;
        } else {
            sb_printf(&b, "%c", *p);
        }
    }
    if (b.oom) {
        rc = CORUN_ENOMEM;
    } else if (b.n >= len) {
        say(why, why_len, "PROFILE_PATH '%s' expands to more than %zu characters", setting,
            len - 1);
        rc = CORUN_ERANGE;
    } else {
        memcpy(out, b.p, b.n);
        out[b.n] = '\0';
    }
    free(b.p);
    return rc;
}

int corun__pstore_load_setting(const char *setting, corun__pstore *ps, char *note,
                               size_t note_len)
{
    char path[4096];
    int rc = corun__pstore_path(setting, path, sizeof(path), note, note_len);

    if (rc != CORUN_OK) {
        corun__pstore_init(ps);
        return rc == CORUN_ENOENT ? CORUN_OK : rc;
    }
    return corun__pstore_load(path, ps, note, note_len);
}
