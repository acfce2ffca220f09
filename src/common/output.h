/*
 * output.h — writing what corun makes (corun-cc's -o, the profile store,
 * precompiled headers) without replacing what is not corun's, and standard
 * output whose write errors are errors.
 *
 * What happens to an output PATH depends on what PATH names when it is
 * written:
 *
 *   nothing, or a regular file   written to PATH.tmp.<pid> beside it and
 *                                renamed over it: a reader sees the old
 *                                contents or the new, never a part
 *   a character device or FIFO   written in place (/dev/null, a terminal,
 *                                a pipe), never replaced
 *   a symbolic link              followed: the rules apply to what it
 *                                names, at that file's real path, so the
 *                                link stays and a regular file behind it
 *                                keeps the atomic rename; a link to
 *                                nothing is written through (its target
 *                                created), as the shell's > does
 *   anything else                refused: a directory, a block device, a
 *                                socket
 *
 * Looking and renaming are two steps: a file swapped in between is
 * replaced, which only someone who may write the folder can do.
 *
 * why (why_len bytes) receives a failure's reason in one line; it may be
 * NULL when why_len is 0.
 */
#ifndef CORUN_COMMON_OUTPUT_H
#define CORUN_COMMON_OUTPUT_H

#include <stddef.h>

typedef enum corun__output_how {
    CORUN_OUTPUT_REPLACE,   /* nothing or a regular file: a temporary file renamed over it */
    CORUN_OUTPUT_IN_PLACE,  /* a character device, a FIFO or a link to nothing */
    CORUN_OUTPUT_REFUSE     /* anything else, or a path that cannot be looked at */
} corun__output_how;

/* How path is written, by the rules above. real (real_len bytes) receives
 * the file to write or replace: path itself, or what its links name. On
 * CORUN_OUTPUT_REFUSE why says what path is, or why it cannot be looked
 * at, in words that name it. */
corun__output_how corun__output_resolve(const char *path, char *real, size_t real_len, char *why,
                                        size_t why_len);

/* fsync the temporary file before the rename: a crash then leaves the old
 * file or the new one, never an empty one. */
#define CORUN_OUTPUT_SYNC 1u

/* Writes len bytes of data to path by the rules above (flags: 0 or
 * CORUN_OUTPUT_SYNC). Returns 0, or -1 with errno set and why saying what
 * failed, naming the file; a temporary file is removed on failure. */
int corun__output_write(const char *path, const void *data, size_t len, unsigned flags, char *why,
                        size_t why_len);

/* Renames tmp, a finished file in path's folder that another writer made
 * (libclang saves precompiled headers itself), over path when path may be
 * replaced (CORUN_OUTPUT_REPLACE); otherwise removes tmp. 0, or -1 with
 * why. */
int corun__output_commit(const char *tmp, const char *path, char *why, size_t why_len);

/* Holds each of the descriptors 0, 1 and 2 that the program was started
 * without by /dev/null, opened the wrong way round (reading for 1 and 2,
 * writing for 0), so that no file the program opens takes its number
 * (stdout written into a store) and using it still fails. Call first. */
void corun__stdio_hold(void);

/* Flushes and closes stdout. Returns 0 when everything written reached its
 * file, else the errno value of the failure (when the stream failed earlier
 * and the reason is gone, what an empty write meets, else EIO). A stdout
 * closed by the caller that nothing was written to is no failure. */
int corun__stdout_close(void);

/* A command's exit: closes stdout (corun__stdout_close) and, if output was
 * lost, says so as "WHO: error writing standard output: REASON" and turns
 * a successful status into fail_status. Returns the exit status. */
int corun__stdout_finish(const char *who, int status, int fail_status);

#endif
