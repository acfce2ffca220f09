/*
 * reads.c — what a libclang parse may read.
 *
 * clang reads whatever an #include (or #embed, or -include) names, as far as
 * it goes: /dev/zero until memory runs out, a FIFO once someone writes to
 * it. libclang 19's C API has no hook on file access, but clang opens every
 * file it reads with open(2) first (llvm::sys::fs::openFile), so corun-cc
 * defines open() itself: a definition in the executable takes the place of
 * libc's for the libraries it loads. While the calling thread is between
 * corun__cc_reads_enter and _leave, a file opened for reading must be a
 * regular file, which is checked with stat before it is opened (opening a
 * FIFO blocks; opening a device may act on it), and its size must keep the
 * parse within its read limit. Otherwise the open fails, clang reports the
 * include as missing, and the refusal is kept for the caller to report.
 * Directories pass (clang skips them while it searches include paths) and
 * are remembered, to say what a "file not found" was.
 */
#define _GNU_SOURCE /* open64, O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cc/cc.h"

static _Thread_local corun__cc_reads *current;

void corun__cc_reads_enter(corun__cc_reads *r)
{
    r->used = 0;
    current = r;
}

void corun__cc_reads_leave(void)
{
    current = NULL;
}

int corun__cc_reads_inside(void)
{
    return current != NULL;
}

static void keep(corun__cc_reads *r, const char *path, int why, const struct stat *st)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].why == why && strcmp(r->v[i].path, path) == 0) {
            return;
        }
    }
    if (r->n == CORUN_CC_READS_KEPT) {
        return;
    }
    for (size_t i = 0; i < r->n && why == CORUN_CC_READ_OVER_LIMIT; i++) {
        if (r->v[i].why == why) {
            return; /* past the limit, every later file is refused too */
        }
    }
    char *p = corun__cc_strndup(path, strlen(path));
    if (p == NULL) {
        return; /* the open still fails: the parse reports the include */
    }
    corun__cc_read_refusal *f = &r->v[r->n++];
    memset(f, 0, sizeof(*f));
    f->path = p;
    f->why = why;
    f->mode = st->st_mode;
    f->size = (uint64_t)st->st_size;
}

/* Whether path may be opened for reading under r; keeps what it refuses
 * and every directory. */
static int admit(corun__cc_reads *r, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        return 1; /* open says why */
    }
    if (S_ISDIR(st.st_mode)) {
        keep(r, path, CORUN_CC_READ_DIRECTORY, &st);
        return 1;
    }
    if (!S_ISREG(st.st_mode)) {
        keep(r, path, CORUN_CC_READ_NOT_REGULAR, &st);
        return 0;
    }
    if (r->limit > 0 && (uint64_t)st.st_size > r->limit - r->used) {
        keep(r, path, CORUN_CC_READ_OVER_LIMIT, &st);
        return 0;
    }
    r->used += (uint64_t)st.st_size;
    return 1;
}

/* libc's open, for this program and the libraries it loads (libLLVM). */
int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    corun__cc_reads *r = current;
    if (r != NULL && (flags & O_ACCMODE) == O_RDONLY && (flags & O_DIRECTORY) == 0 &&
        !admit(r, path)) {
        errno = EACCES;
        return -1;
    }
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int corun__cc_reads_refused(const corun__cc_reads *r)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].why != CORUN_CC_READ_DIRECTORY) {
            return 1;
        }
    }
    return 0;
}

corun__cc_read_refusal *corun__cc_reads_behind(corun__cc_reads *r, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < r->n; i++) {
        const char *p = r->v[i].path;
        size_t len = strlen(p);
        if (len >= n && strcmp(p + len - n, name) == 0 && (len == n || p[len - n - 1] == '/')) {
            return &r->v[i];
        }
    }
    return NULL;
}

const char *corun__cc_file_kind(unsigned mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISREG(mode)  ? "a regular file"
                            : "not a file";
}

/* n bytes in words, into buf. */
static const char *bytes(uint64_t n, char *buf, size_t cap)
{
    if (n >= (1u << 20)) {
        snprintf(buf, cap, "%.1f MiB", (double)n / 1048576.0);
    } else if (n >= (1u << 10)) {
        snprintf(buf, cap, "%.1f KiB", (double)n / 1024.0);
    } else {
        snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
    }
    return buf;
}

void corun__cc_reads_say(const corun__cc_reads *r, const corun__cc_read_refusal *f, char *buf,
                         size_t cap)
{
    char size[32], limit[32];
    if (f->why == CORUN_CC_READ_OVER_LIMIT) {
        snprintf(buf, cap,
                 "'%s' (%s) would take the translation unit past its read limit of %s "
                 "(--read-limit SIZE): refused without reading it",
                 f->path, bytes(f->size, size, sizeof(size)),
                 bytes(r->limit, limit, sizeof(limit)));
    } else if (f->why == CORUN_CC_READ_DIRECTORY) {
        snprintf(buf, cap, "'%s' is a directory, not a file", f->path);
    } else {
        snprintf(buf, cap, "'%s' is %s, not a regular file: refused without reading it",
                 f->path, corun__cc_file_kind(f->mode));
    }
}

void corun__cc_reads_free(corun__cc_reads *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].path);
    }
    r->n = 0;
}
