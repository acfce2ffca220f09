/* progress.c — progress of a long command on stderr (progress.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"

/* "\r" then erase to the end of the line: the rewritten line starts again. */
#define REWRITE "\r\033[K"

void corun__progress_begin(corun__progress *p, int quiet, const char *fmt, ...)
{
    va_list ap;

    memset(p, 0, sizeof(*p));
    p->on = !quiet;
    p->tty = isatty(STDERR_FILENO);
    p->t0 = corun__cli_now_s();
    if (!p->on) {
        return;
    }
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Draws the rewritten line, cut to the terminal's width: a line that wraps
 * could not be rewritten. done < 0: no percentage yet. */
static void draw(corun__progress *p, double done)
{
    char line[256], pct[8] = "";
    struct winsize ws;
    size_t width = sizeof(line) - 1;

    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && ws.ws_col <= width) {
        width = ws.ws_col - 1u;
    }
    if (done >= 0) {
        snprintf(pct, sizeof(pct), " %3.0f%%", done * 100);
    }
    snprintf(line, sizeof(line), "  [%6.1f s]%s running%s%s", corun__progress_elapsed(p), pct,
             p->step != NULL ? " " : "", p->step != NULL ? p->step : "");
    line[width] = '\0';
    fprintf(stderr, REWRITE "%s", line);
    fflush(stderr);
    p->open = 1;
    p->drawn = corun__cli_now_s();
}

void corun__progress_step(corun__progress *p, const char *step)
{
    p->step = step;
    if (!p->on) {
        return;
    }
    if (p->tty) {
        draw(p, -1);
    } else {
        fprintf(stderr, "  running %s\n", step);
    }
}

void corun__progress_fraction(void *ctx, double done)
{
    corun__progress *p = ctx;

    if (p->on && p->tty && corun__cli_now_s() - p->drawn >= CORUN__PROGRESS_REDRAW_S) {
        draw(p, done < 0 ? 0 : done > 1 ? 1 : done);
    }
}

void corun__progress_break(corun__progress *p)
{
    if (p->open) {
        fputs(REWRITE, stderr);
        p->open = 0;
    }
}

void corun__progress_line(corun__progress *p, const char *fmt, ...)
{
    va_list ap;

    if (!p->on) {
        return;
    }
    corun__progress_break(p);
    fputs("  ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void corun__progress_end(corun__progress *p)
{
    corun__progress_line(p, "done in %.1f s", corun__progress_elapsed(p));
}

double corun__progress_elapsed(const corun__progress *p)
{
    return corun__cli_now_s() - p->t0;
}
