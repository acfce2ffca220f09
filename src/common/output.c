/*
 * output.c — writing outputs and standard output (output.h).
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include "common/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ONLY "only regular files are replaced; devices and FIFOs are written in place"

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* Copies name into real; -1 with errno ENAMETOOLONG if it does not fit. */
static int name_into(char *real, size_t real_len, const char *name)
{
    if ((size_t)snprintf(real, real_len, "%s", name) >= real_len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

corun__output_how corun__output_resolve(const char *path, char *real, size_t real_len, char *why,
                                        size_t why_len)
{
    char target[PATH_MAX];
    const char *at = path;
    struct stat st;

    if (lstat(path, &st) != 0) {
        if (errno != ENOENT || name_into(real, real_len, path) != 0) {
            goto out_cannot;
        }
        return CORUN_OUTPUT_REPLACE; /* nothing there yet */
    }
    if (S_ISLNK(st.st_mode)) {
        if (realpath(path, target) == NULL) {
            if (errno != ENOENT || name_into(real, real_len, path) != 0) {
                goto out_cannot;
            }
            return CORUN_OUTPUT_IN_PLACE; /* a link to nothing: written through, as > does */
        }
        if (stat(target, &st) != 0) {
            goto out_cannot;
        }
        at = target;
    }
    if (name_into(real, real_len, at) != 0) {
        goto out_cannot;
    }
    if (S_ISREG(st.st_mode)) {
        return CORUN_OUTPUT_REPLACE;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        return CORUN_OUTPUT_IN_PLACE;
    }
    if (at == path) {
        snprintf(why, why_len, "cannot write %s: it is %s (" ONLY ")", path, kind_of(st.st_mode));
    } else {
        snprintf(why, why_len, "cannot write %s: it links to %s, %s (" ONLY ")", path, at,
                 kind_of(st.st_mode));
    }
    return CORUN_OUTPUT_REFUSE;

out_cannot:
    snprintf(why, why_len, "cannot write %s: %s", path, strerror(errno));
    return CORUN_OUTPUT_REFUSE;
}

/* Writes all of data to fd and closes it, syncing first if asked; name is
 * the file's, for why. */
static int write_all(int fd, const char *name, const void *data, size_t len, int sync,
                     char *why, size_t why_len)
{
    const char *p = data;
    size_t off = 0;

    while (off < len) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            snprintf(why, why_len, "cannot write %s: %s", name, strerror(w < 0 ? errno : EIO));
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    if (sync && fsync(fd) != 0) {
        snprintf(why, why_len, "cannot write %s: fsync: %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    if (close(fd) != 0) {
        snprintf(why, why_len, "cannot write %s: close: %s", name, strerror(errno));
        return -1;
    }
    return 0;
}

/* Renames tmp over real, or removes tmp. */
static int rename_over(const char *tmp, const char *real, char *why, size_t why_len)
{
    if (rename(tmp, real) != 0) {
        snprintf(why, why_len, "cannot rename %s to %s: %s", tmp, real, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int corun__output_write(const char *path, const void *data, size_t len, unsigned flags, char *why,
                        size_t why_len)
{
    char real[PATH_MAX], tmp[PATH_MAX + 32];
    corun__output_how how = corun__output_resolve(path, real, sizeof(real), why, why_len);
    int fd;

    if (how == CORUN_OUTPUT_REFUSE) {
        return -1;
    }
    if (how == CORUN_OUTPUT_IN_PLACE) {
        /* O_TRUNC: Linux truncates regular files only (a link to nothing
         * may have gained one since it was looked at). */
        fd = open(real, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0666);
        if (fd < 0) {
            snprintf(why, why_len, "cannot write %s: %s", path, strerror(errno));
            return -1;
        }
        return write_all(fd, path, data, len, 0, why, why_len);
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", real, (long)getpid());
    unlink(tmp); /* left by a writer that died with the same process id */
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        snprintf(why, why_len, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (write_all(fd, tmp, data, len, (flags & CORUN_OUTPUT_SYNC) != 0, why, why_len) != 0) {
        unlink(tmp);
        return -1;
    }
    return rename_over(tmp, real, why, why_len);
}

int corun__output_commit(const char *tmp, const char *path, char *why, size_t why_len)
{
    char real[PATH_MAX];
    corun__output_how how = corun__output_resolve(path, real, sizeof(real), why, why_len);

    if (how == CORUN_OUTPUT_REPLACE) {
        return rename_over(tmp, real, why, why_len);
    }
    if (how == CORUN_OUTPUT_IN_PLACE) {
        snprintf(why, why_len, "%s is a device, a FIFO or a link to nothing: not replaced", path);
    }
    unlink(tmp);
    return -1;
}

void corun__stdio_hold(void)
{
    int fd;

    for (fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            /* the lowest free number: fd itself */
            (void)open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        }
    }
}

int corun__stdout_close(void)
{
    int err = 0;

    errno = 0;
    if (fflush(stdout) != 0) {
        err = errno != 0 ? errno : EIO;
    } else if (ferror(stdout)) {
        /* A write failed earlier and its reason is gone (a large write
         * goes past the buffer): an empty write still meets it on a
         * device that refuses writes (/dev/full: ENOSPC) or a descriptor
         * that cannot be written (EBADF); a regular file takes it. */
        errno = 0;
        err = write(fileno(stdout), "", 0) < 0 && errno != 0 ? errno : EIO;
    }
    if (fclose(stdout) != 0 && err == 0 && errno != EBADF) {
        err = errno;
    }
    return err;
}

int corun__stdout_finish(const char *who, int status, int fail_status)
{
    const int err = corun__stdout_close();

    if (err == 0) {
        return status;
    }
    fprintf(stderr, "%s: error writing standard output: %s\n", who, strerror(err));
    return status != 0 ? status : fail_status;
}
