/*
 * json_num.h — a double as a JSON value.
 */
#ifndef CORUN_COMMON_JSON_NUM_H
#define CORUN_COMMON_JSON_NUM_H

#include <math.h>

#include <jansson.h>

/* v as a JSON real, or null when v is NaN or infinite: JSON has no number
 * for those, and a figure that does not exist (a mean over nothing, a ratio
 * to zero) is null. jansson's json_real() and json_pack's "f" return NULL
 * there instead, which json_object_set_new() and json_array_append_new()
 * drop without a word. Returns a new reference, or NULL out of memory. */
static inline json_t *corun__json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

#endif
