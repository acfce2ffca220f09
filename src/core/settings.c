/* settings.c — parsing and checking of the settings table. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/settings.h"
#include "corun/corun.h"

static const corun__setting_info table[] = {
#define CORUN__SET_INFO(N, f, T, d, lo, hi, allowed, help) \
    {"CORUN_" #N, #f, CORUN_SETTING_##T, d, lo, hi, allowed, help, offsetof(corun__settings, f)},
    CORUN_SETTINGS(CORUN__SET_INFO)
#undef CORUN__SET_INFO
};

#define NSETTINGS (sizeof(table) / sizeof(table[0]))

_Static_assert(NSETTINGS <= 8 * sizeof(((corun__settings *)0)->given),
               "corun__settings.given has a bit per setting");

/* Setting i's bit in s->given. */
static void given_set(corun__settings *s, size_t i)
{
    s->given[i / 64] |= UINT64_C(1) << (i % 64);
}

static int given_has(const corun__settings *s, size_t i)
{
    return (s->given[i / 64] >> (i % 64) & 1) != 0;
}

size_t corun__settings_count(void)
{
    return NSETTINGS;
}

const corun__setting_info *corun__settings_info(size_t i)
{
    return i < NSETTINGS ? &table[i] : NULL;
}

static int in_list(const char *list, const char *v)
{
    size_t n = strlen(v);
    const char *p = list;

    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) {
            return 1;
        }
        if (!e) {
            break;
        }
        p = e + 1;
    }
    return 0;
}

int corun__parse_whole(const char *text, uint64_t *out)
{
    unsigned long long v;
    char *end = NULL;

    if (!isdigit((unsigned char)text[0])) {
        return -1; /* strtoull would take blanks, a sign */
    }
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') {
        return -1;
    }
    *out = v;
    return 0;
}

int corun__parse_decimal(const char *text, double *out)
{
    char *end = NULL;
    double v;

    if (text[0] == '\0' || strspn(text, "0123456789+-.eE") != strlen(text)) {
        return -1; /* strtod would take blanks, hex, inf and nan */
    }
    errno = 0;
    v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v)) {
        return -1;
    }
    *out = v;
    return 0;
}

/* A number as text: whole numbers in digits ("1048576", not "1.04858e+06"),
 * others in the fewest digits that read back the same. */
static void format_number(double v, char *buf, size_t len)
{
    if (v == floor(v) && fabs(v) <= 1e15) {
        snprintf(buf, len, "%.0f", v);
    } else {
        snprintf(buf, len, "%.15g", v);
        if (strtod(buf, NULL) != v) {
            snprintf(buf, len, "%.17g", v);
        }
    }
}

static void format_bounds(const corun__setting_info *in, char *buf, size_t len)
{
    char lo[32], hi[32];

    if (in->type == CORUN_SETTING_STR) {
        snprintf(buf, len, "%s", in->allowed[0] ? in->allowed : in->min > 0 ? "not empty" : "-");
        return;
    }
    format_number(in->min, lo, sizeof(lo));
    format_number(in->max, hi, sizeof(hi));
    snprintf(buf, len, "[%s, %s]", lo, hi);
}

/* Parses text into setting i of *s. */
static int parse_one(corun__settings *s, const corun__setting_info *in, const char *text, char *why,
                     size_t why_len)
{
    void *field = (char *)s + in->offset;
    char bounds[CORUN_SETTING_STR_MAX];
    uint64_t u;
    double d;

    format_bounds(in, bounds, sizeof(bounds));
    switch (in->type) {
    case CORUN_SETTING_STR:
        if (in->allowed[0] != '\0' && !in_list(in->allowed, text)) {
            snprintf(why, why_len, "%s: '%s' is not one of %s", in->env, text, in->allowed);
            return CORUN_EINVAL;
        }
        if ((double)strlen(text) < in->min) {
            snprintf(why, why_len, "%s: empty (corun config says what it takes)", in->env);
            return CORUN_EINVAL;
        }
        if (strlen(text) >= CORUN_SETTING_STR_MAX) {
            snprintf(why, why_len, "%s: value longer than %d characters", in->env,
                     CORUN_SETTING_STR_MAX - 1);
            return CORUN_EINVAL;
        }
        snprintf((char *)field, CORUN_SETTING_STR_MAX, "%s", text);
        return CORUN_OK;
    case CORUN_SETTING_UINT:
        if (corun__parse_whole(text, &u) != 0) {
            snprintf(why, why_len, "%s: '%s' is not a whole number in %s", in->env, text, bounds);
            return CORUN_EINVAL;
        }
        if ((double)u < in->min || (double)u > in->max) {
            snprintf(why, why_len, "%s: %s is outside %s", in->env, text, bounds);
            return CORUN_EINVAL;
        }
        *(uint64_t *)field = u;
        return CORUN_OK;
    case CORUN_SETTING_DBL:
        if (corun__parse_decimal(text, &d) != 0) {
            snprintf(why, why_len, "%s: '%s' is not a decimal number in %s", in->env, text,
                     bounds);
            return CORUN_EINVAL;
        }
        if (d < in->min || d > in->max) {
            snprintf(why, why_len, "%s: %s is outside %s", in->env, text, bounds);
            return CORUN_EINVAL;
        }
        *(double *)field = d;
        return CORUN_OK;
    }
    return CORUN_EINVAL;
}

void corun__settings_default(corun__settings *s)
{
    char why[128];
    size_t i;

    memset(s, 0, sizeof(*s));
    for (i = 0; i < NSETTINGS; i++) {
        (void)parse_one(s, &table[i], table[i].def, why, sizeof(why));
    }
}

int corun__settings_load_env(corun__settings *s, char *why, size_t why_len)
{
    corun__settings tmp = *s;
    size_t i;

    for (i = 0; i < NSETTINGS; i++) {
        const char *v = getenv(table[i].env);
        if (v != NULL) {
            int rc = parse_one(&tmp, &table[i], v, why, why_len);
            if (rc != CORUN_OK) {
                return rc;
            }
            given_set(&tmp, i);
        }
    }
    *s = tmp;
    return CORUN_OK;
}

/* The index of the setting named by field or variable, or NSETTINGS. */
static size_t find(const char *name)
{
    size_t i;

    for (i = 0; i < NSETTINGS; i++) {
        if (strcasecmp(name, table[i].name) == 0 || strcasecmp(name, table[i].env) == 0) {
            break;
        }
    }
    return i;
}

const corun__setting_info *corun__settings_find(const char *name)
{
    size_t i = find(name);

    return i < NSETTINGS ? &table[i] : NULL;
}

int corun__settings_set(corun__settings *s, const char *name, const char *value, char *why,
                        size_t why_len)
{
    size_t i = find(name);
    int rc;

    if (i == NSETTINGS) {
        snprintf(why, why_len, "unknown setting '%s' (corun config lists them)", name);
        return CORUN_ENOENT;
    }
    rc = parse_one(s, &table[i], value, why, why_len);
    if (rc == CORUN_OK) {
        given_set(s, i);
    }
    return rc;
}

int corun__settings_assign(corun__settings *s, const char *assignment, char *why, size_t why_len)
{
    char name[128];
    const char *eq = strchr(assignment, '=');
    size_t n = eq != NULL ? (size_t)(eq - assignment) : 0;

    if (n == 0 || n >= sizeof(name)) {
        snprintf(why, why_len, "a setting is NAME=VALUE, got '%s'", assignment);
        return CORUN_EINVAL;
    }
    memcpy(name, assignment, n);
    name[n] = '\0';
    return corun__settings_set(s, name, eq + 1, why, why_len);
}

int corun__settings_given(const corun__settings *s, const char *name)
{
    size_t i = find(name);

    return i < NSETTINGS && given_has(s, i);
}

int corun__settings_read_one(const char *name, char *buf, size_t len, char *why, size_t why_len)
{
    corun__settings one;
    char text[CORUN_SETTING_STR_MAX];
    const char *v;
    size_t i = find(name);
    int rc;

    if (i == NSETTINGS) {
        snprintf(why, why_len, "unknown setting '%s' (corun config lists them)", name);
        return CORUN_ENOENT;
    }
    memset(&one, 0, sizeof(one));
    v = getenv(table[i].env);
    rc = parse_one(&one, &table[i], v != NULL ? v : table[i].def, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    corun__settings_format(&one, i, text, sizeof(text));
    if (strlen(text) >= len) {
        snprintf(why, why_len, "%s: value longer than %zu characters", table[i].env,
                 len > 0 ? len - 1 : 0);
        return CORUN_ERANGE;
    }
    memcpy(buf, text, strlen(text) + 1);
    return CORUN_OK;
}

void corun__settings_format(const corun__settings *s, size_t i, char *buf, size_t len)
{
    const void *field;

    if (i >= NSETTINGS) {
        snprintf(buf, len, "?");
        return;
    }
    field = (const char *)s + table[i].offset;
    switch (table[i].type) {
    case CORUN_SETTING_STR:
        snprintf(buf, len, "%s", (const char *)field);
        break;
    case CORUN_SETTING_UINT:
        snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)field);
        break;
    case CORUN_SETTING_DBL:
        format_number(*(const double *)field, buf, len);
        break;
    }
}

void corun__settings_bounds(size_t i, char *buf, size_t len)
{
    if (i >= NSETTINGS) {
        snprintf(buf, len, "?");
        return;
    }
    format_bounds(&table[i], buf, len);
}
