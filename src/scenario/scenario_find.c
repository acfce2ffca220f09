/*
 * scenario_find.c — where a scenario named on the command line is, from any
 * working directory: the path as given, CORUN_SCENARIOS, the installed
 * scenarios beside the program, the source tree's (bench/scenarios/).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scenario/scenario.h"

/* Set by the build (CMakeLists.txt): the installed scenarios relative to
 * the installed programs, and the source tree's bench/scenarios. */
#ifndef CORUN_SCENARIOS_FROM_BINDIR
#define CORUN_SCENARIOS_FROM_BINDIR "../share/corun/scenarios"
#endif
#ifndef CORUN_SCENARIOS_SOURCE_DIR
#define CORUN_SCENARIOS_SOURCE_DIR ""
#endif

/* The installed scenarios beside the running program; 0 on success. */
static int installed_dir(char *buf, size_t len)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    char *slash;
    int w;

    if (n <= 0) {
        return -1;
    }
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash == NULL) {
        return -1;
    }
    *slash = '\0';
    w = snprintf(buf, len, "%s/%s", exe, CORUN_SCENARIOS_FROM_BINDIR);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

int corun__scenario_dir(const corun__settings *s, size_t i, char *buf, size_t len)
{
    const char *dirs[3];
    char installed[4096];
    size_t n = 0;

    if (s->scenarios[0] != '\0') {
        dirs[n++] = s->scenarios;
    }
    if (installed_dir(installed, sizeof(installed)) == 0) {
        dirs[n++] = installed;
    }
    if (CORUN_SCENARIOS_SOURCE_DIR[0] != '\0') {
        dirs[n++] = CORUN_SCENARIOS_SOURCE_DIR;
    }
    if (i >= n) {
        return -1;
    }
    snprintf(buf, len, "%s", dirs[i]);
    return 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir/rel, or dir/rel.json when rel lacks the extension: the first that is
 * a regular file goes to path. Returns 1 if one is. */
static int try_dir(const char *dir, const char *rel, char *path, size_t len)
{
    size_t n = strlen(rel);

    snprintf(path, len, "%s/%s", dir, rel);
    if (is_file(path)) {
        return 1;
    }
    if (n > 5 && strcmp(rel + n - 5, ".json") == 0) {
        return 0;
    }
    snprintf(path, len, "%s/%s.json", dir, rel);
    return is_file(path);
}

int corun__scenario_find(const char *name, const corun__settings *s, char *path, size_t len,
                         char *why, size_t why_len)
{
    static const char *const prefixes[] = {"./bench/scenarios/", "bench/scenarios/", "./scenarios/",
                                            "scenarios/"};
    const char *rel = name;
    char dir[4096], looked[1024] = "";
    size_t i, used = 0;
    struct stat st;

    if (name[0] == '/' || stat(name, &st) == 0) {
        snprintf(path, len, "%s", name);
        return CORUN_OK;
    }
    for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        if (strncmp(rel, prefixes[i], strlen(prefixes[i])) == 0) {
            rel += strlen(prefixes[i]);
            break;
        }
    }
    for (i = 0; corun__scenario_dir(s, i, dir, sizeof(dir)) == 0; i++) {
        if (try_dir(dir, rel, path, len)) {
            return CORUN_OK;
        }
        if (used < sizeof(looked)) {
            used += (size_t)snprintf(looked + used, sizeof(looked) - used, ", %s", dir);
        }
    }
    snprintf(why, why_len, "no scenario '%s': not a file here, nor in %s%s", name,
             looked[0] ? looked + 2 : "any scenario folder",
             s->scenarios[0] ? "" : " (CORUN_SCENARIOS adds a folder)");
    return CORUN_ENOENT;
}

int corun__scenario_default_dir(const corun__settings *s, char *buf, size_t len)
{
    struct stat st;
    size_t i;

    for (i = 0; corun__scenario_dir(s, i, buf, len) == 0; i++) {
        if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) {
            return CORUN_OK;
        }
    }
    return CORUN_ENOENT;
}
