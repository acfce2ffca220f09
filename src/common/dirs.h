/*
 * dirs.h — creating folders.
 */
#ifndef CORUN_COMMON_DIRS_H
#define CORUN_COMMON_DIRS_H

#include <stddef.h>

/* mkdir -p dir (mode 0755 for what it creates). 0 when dir exists
 * afterwards; else -1 with errno set and, when failed is not NULL, the
 * folder that could not be made written into failed. */
int corun__mkdir_p(const char *dir, char *failed, size_t failed_len);

#endif
