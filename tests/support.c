/* support.c — helpers shared by the unit tests. */
#include <stdio.h>

#include "support.h"

const char *corun_test_path(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "%s/%s", CORUN_SOURCE_DIR, rel);
    return buf;
}
