/*
 * fuzz_settings.c — libFuzzer target: any bytes as a setting, the way
 * `corun --set NAME=VALUE` and a CORUN_* variable give one: the whole input
 * through corun__settings_assign, and the part after the first '=' (the
 * whole input if there is none) as the value of every setting of the table
 * through corun__settings_set. Beyond the sanitizers' reports it checks the
 * parser's contract: a refused value says why and changes nothing; an
 * accepted one, printed as `corun config` prints it, is accepted again to
 * the same printed value. An accepted PROFILE_PATH is also expanded to the
 * store's file name (corun__pstore_path: "~/", "%h"), into a short and a
 * long buffer: a name that fits is returned whole, one that does not is
 * refused.
 * Seeds: fuzz/corpus/settings/ (scripts/fuzz.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/profile_store.h"
#include "core/settings.h"
#include "corun/corun.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static corun__settings defaults;
static int have_defaults;

static void check_refused(int rc, const char *why, const corun__settings *s)
{
    if (rc == CORUN_OK || why[0] == '\0' || memcmp(s, &defaults, sizeof(*s)) != 0) {
        abort();
    }
}

static void check_profile_path(const char *setting)
{
    static const size_t lens[] = {16, 4096};
    char path[4096], why[512];
    size_t k;

    for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        int rc;
        why[0] = '\0';
        memset(path, 0x7f, sizeof(path));
        rc = corun__pstore_path(setting, path, lens[k], why, sizeof(why));
        if (rc == CORUN_OK ? strnlen(path, lens[k]) >= lens[k]
                           : (rc != CORUN_ENOENT && rc != CORUN_ERANGE && rc != CORUN_ENOMEM) ||
                                 (rc == CORUN_ERANGE && why[0] == '\0')) {
            abort();
        }
    }
}

/* The value through setting i, and its printed form back through it. */
static void check_value(size_t i, const char *value)
{
    const corun__setting_info *in = corun__settings_info(i);
    corun__settings s = defaults, again = defaults;
    char why[512] = "", shown[CORUN_SETTING_STR_MAX + 64], shown_again[sizeof(shown)];
    int rc = corun__settings_set(&s, in->name, value, why, sizeof(why));

    if (rc != CORUN_OK) {
        check_refused(rc, why, &s);
        return;
    }
    if (!corun__settings_given(&s, in->env)) {
        abort();
    }
    corun__settings_format(&s, i, shown, sizeof(shown));
    if (corun__settings_set(&again, in->env, shown, why, sizeof(why)) != CORUN_OK) {
        abort();
    }
    corun__settings_format(&again, i, shown_again, sizeof(shown_again));
    if (strcmp(shown, shown_again) != 0) {
        abort();
    }
    if (in->type != CORUN_SETTING_DBL && memcmp(&s, &again, sizeof(s)) != 0) {
        abort(); /* names and whole numbers print exactly */
    }
    if (strcmp(in->name, "profile_path") == 0) {
        check_profile_path(s.profile_path);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    corun__settings s;
    char why[512] = "";
    char *text = malloc(size + 1);
    const char *value;
    size_t i;

    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    if (!have_defaults) {
        corun__settings_default(&defaults);
        have_defaults = 1;
    }
    s = defaults;
    if (corun__settings_assign(&s, text, why, sizeof(why)) != CORUN_OK) {
        check_refused(CORUN_EINVAL, why, &s);
    }
    value = strchr(text, '=') != NULL ? strchr(text, '=') + 1 : text;
    for (i = 0; i < corun__settings_count(); i++) {
        check_value(i, value);
    }
    free(text);
    return 0;
}
