/* log.c — leveled logging to stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

corun__log_level corun__log_threshold = CORUN_LOG_WARN;
static const char *log_prog = "corun";
static int log_stamps;

void corun__log_identity(const char *prog, int stamps)
{
    log_prog = prog;
    log_stamps = stamps;
}

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

    if (log_stamps) {
        char at[32];
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(stderr, "%s.%03ldZ ", at, ts.tv_nsec / 1000000);
    }
    fprintf(stderr, "%s: %s: %s: ", log_prog, tags[level], subsys);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
