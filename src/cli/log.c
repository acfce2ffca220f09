/* log.c — leveled logging to stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/log.h"

corun__log_level corun__log_threshold = CORUN_LOG_WARN;

int corun__log_parse_level(const char *s)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    int i;

    for (i = 0; i < 4; i++) {
        if (strcmp(s, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

void corun__log_write(corun__log_level level, const char *subsys, const char *fmt, ...)
{
    static const char *const tags[] = {"error", "warning", "info", "debug"};
    va_list ap;

    fprintf(stderr, "corun: %s: %s: ", tags[level], subsys);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
