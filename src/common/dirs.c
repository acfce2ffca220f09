/*
 * dirs.c — creating folders (dirs.h).
 */
#include "common/dirs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int corun__mkdir_p(const char *dir, char *failed, size_t failed_len)
{
    char p[PATH_MAX];
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof(p)) {
        errno = n == 0 ? ENOENT : ENAMETOOLONG;
        if (failed != NULL && failed_len > 0) {
            snprintf(failed, failed_len, "%s", dir);
        }
        return -1;
    }
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] == '/' || p[i] == '\0') {
            char c = p[i];
            p[i] = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                if (failed != NULL && failed_len > 0) {
                    snprintf(failed, failed_len, "%s", p);
                }
                return -1;
            }
            p[i] = c;
        }
    }
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            return 0;
        }
        errno = ENOTDIR;
    }
    if (failed != NULL && failed_len > 0) {
        snprintf(failed, failed_len, "%s", dir);
    }
    return -1;
}
