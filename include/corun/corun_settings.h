/*
 * corun_settings.h — corun's settings as libcorun reads them, for code that
 * is compiled into other programs (the launch shim, corun_launch.cuh) and
 * cannot see the settings table. `corun config` lists every setting: its
 * CORUN_* variable, bounds, default and meaning.
 */
#ifndef CORUN_SETTINGS_H
#define CORUN_SETTINGS_H

#include <stddef.h>

#include "corun/corun.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes setting `name` ("launch_stats" or "CORUN_LAUNCH_STATS") to buf as
 * text: its CORUN_* variable if set, checked against the table as libcorun
 * checks it, else its default (numbers as %llu or %g). Reads the
 * environment at every call. Returns CORUN_ENOENT for an unknown name,
 * CORUN_EINVAL for a bad value, CORUN_ERANGE if buf cannot hold the value
 * and its NUL; buf is written only on success. */
CORUN_API int corun_setting_get(const char *name, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
