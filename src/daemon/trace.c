/*
 * trace.c — a Chrome / Perfetto trace being recorded (TRACE): events kept
 * as JSON objects in one array, written out as {"traceEvents": [...]}.
 * Times are the GPU scheduler's clock in microseconds.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json_num.h"
#include "daemon/daemon_int.h"

/* A trace keeps at most this many events; later ones are dropped (counted). */
#define TRACE_MAX_EVENTS 1000000u

struct corun__dtrace {
    json_t *events;
    size_t dropped;
};

corun__dtrace *corun__dtrace_new(void)
{
    corun__dtrace *t = calloc(1, sizeof(*t));

    if (t == NULL) {
        return NULL;
    }
    t->events = json_array();
    if (t->events == NULL) {
        free(t);
        return NULL;
    }
    return t;
}

void corun__dtrace_free(corun__dtrace *t)
{
    if (t != NULL) {
        json_decref(t->events);
        free(t);
    }
}

void corun__dtrace_event(corun__dtrace *t, const char *ph, const char *name, uint32_t pid,
                         uint32_t tid, uint64_t ts_ns, uint64_t dur_ns, json_t *args)
{
    json_t *e;

    if (json_array_size(t->events) >= TRACE_MAX_EVENTS) {
        t->dropped++;
        json_decref(args);
        return;
    }
    e = json_pack("{s:s, s:s, s:I, s:I, s:o}", "name", name, "ph", ph, "pid", (json_int_t)pid,
                  "tid", (json_int_t)tid, "ts", corun__json_num((double)ts_ns / 1e3));
    if (e == NULL) {
        json_decref(args);
        return;
    }
    if (strcmp(ph, "X") == 0) {
        json_object_set_new(e, "dur", corun__json_num((double)dur_ns / 1e3));
    } else if (strcmp(ph, "i") == 0) {
        json_object_set_new(e, "s", json_string("t"));
    }
    if (args != NULL) {
        json_object_set_new(e, "args", args);
    }
    json_array_append_new(t->events, e);
}

size_t corun__dtrace_count(const corun__dtrace *t)
{
    return json_array_size(t->events);
}

char *corun__dtrace_dump(corun__dtrace *t, size_t *len)
{
    json_t *root = json_pack("{s:O, s:s, s:{s:I}}", "traceEvents", t->events, "displayTimeUnit",
                             "ms", "otherData", "dropped_events", (json_int_t)t->dropped);
    char *text = root != NULL ? json_dumps(root, JSON_COMPACT) : NULL;

    json_decref(root);
    if (text != NULL) {
        *len = strlen(text);
    }
    return text;
}
