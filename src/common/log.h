/*
 * log.h — logging for the command line and corund (the library never
 * logs: libcorun leaves log.c out). The level is checked before any
 * formatting happens.
 */
#ifndef CORUN_COMMON_LOG_H
#define CORUN_COMMON_LOG_H

typedef enum corun__log_level {
    CORUN_LOG_ERROR,
    CORUN_LOG_WARN,
    CORUN_LOG_INFO,
    CORUN_LOG_DEBUG
} corun__log_level;

extern corun__log_level corun__log_threshold;

/* Lines start "PROG: level: subsystem: " (default PROG "corun"), after
 * the UTC time when stamps is nonzero (corund's log). */
void corun__log_identity(const char *prog, int stamps);
/* Parses "error", "warn", "info", "debug"; returns -1 if unknown. */
int corun__log_parse_level(const char *s);
__attribute__((format(printf, 3, 4))) void corun__log_write(corun__log_level level,
                                                            const char *subsys, const char *fmt,
                                                            ...);

#define CORUN_LOG(level, subsys, ...)                         \
    do {                                                      \
        if ((level) <= corun__log_threshold) {                \
            corun__log_write((level), (subsys), __VA_ARGS__); \
        }                                                     \
    } while (0)

#endif
