/* support.c — helpers shared by the unit tests. */
#include <stdio.h>
#include <stdlib.h>

#include "support.h"

#include "backends/create.h"
#include "scenario/scenario.h"

void corun_test_mkdtemp(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "/tmp/corun-test-%s-XXXXXX", tag);
    assert_non_null(mkdtemp(dir));
}

void corun_test_rmdir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

const char *corun_test_path(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "%s/%s", CORUN_SOURCE_DIR, rel);
    return buf;
}

int corun_test_make_sim(void *ctx, const corun__scenario *sc, uint64_t seed, corun__backend **out,
                        char *why, size_t why_len)
{
    return corun__backend_create("sim", ctx, &sc->gpu, seed, out, why, why_len);
}
