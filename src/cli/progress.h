/*
 * progress.h — what a long command (demo, sim, experiment, profile
 * training) says on stderr while it runs.
 *
 * Progress goes to stderr only, so a command's standard output is the same
 * with it or without it; --quiet turns it off (every command that runs long
 * takes --quiet). Errors and warnings are not progress and are printed
 * whatever --quiet says.
 *
 * On a terminal the step under way is one line rewritten in place ("\r"),
 * redrawn at most every CORUN__PROGRESS_REDRAW_S seconds; anywhere else (a
 * log, a pipe) a step is one line when it starts and nothing is rewritten.
 * A line that stays (a result, a note) first ends the one being rewritten.
 */
#ifndef CORUN_CLI_PROGRESS_H
#define CORUN_CLI_PROGRESS_H

#define CORUN__PROGRESS_REDRAW_S 0.1

typedef struct corun__progress {
    int on;            /* not --quiet */
    int tty;           /* stderr is a terminal */
    int open;          /* a rewritten line is on screen, not ended */
    const char *step;  /* what runs now (not owned), or NULL */
    double t0;         /* when the command started, for elapsed times */
    double drawn;      /* when the rewritten line was last drawn */
} corun__progress;

/* Starts: prints "HEADER" (printf-style) as the first line unless quiet. */
__attribute__((format(printf, 3, 4))) void corun__progress_begin(corun__progress *p, int quiet,
                                                                 const char *fmt, ...);
/* A new step: on a terminal the rewritten line shows "running STEP"; else a
 * line "  running STEP". step must outlive the step. */
void corun__progress_step(corun__progress *p, const char *step);
/* How far the current step is, in [0, 1]: on a terminal, redraws the line
 * (rate-limited); elsewhere nothing. Fits corun__run_env.progress (ctx is
 * the corun__progress). */
void corun__progress_fraction(void *ctx, double done);
/* A line that stays, "  LINE" (printf-style). */
__attribute__((format(printf, 2, 3))) void corun__progress_line(corun__progress *p,
                                                                const char *fmt, ...);
/* Ends a rewritten line, if one is on screen, so an error message starts a
 * line of its own. Also when quiet (then it does nothing). */
void corun__progress_break(corun__progress *p);
/* Done: "  done in S s" on a line of its own. */
void corun__progress_end(corun__progress *p);
/* Seconds since corun__progress_begin. */
double corun__progress_elapsed(const corun__progress *p);

#endif
