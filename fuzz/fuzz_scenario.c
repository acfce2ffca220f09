/*
 * fuzz_scenario.c — libFuzzer target: any bytes as a scenario file's text,
 * through corun__scenario_parse (what `corun sim --scenario FILE` reads).
 * Beyond the sanitizers' reports it checks the loader's contract: a scenario
 * it accepts is within the documented bounds, every application and kernel
 * named; a refusal says why, naming the file.
 * Seeds: bench/scenarios/ and fuzz/corpus/scenario/ (scripts/fuzz.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corun/corun.h"
#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_accepted(const corun__scenario *sc)
{
    size_t i;

    if (sc->napps < 1 || sc->napps > CORUN_SCENARIO_MAX_APPS ||
        !(sc->duration_ns >= 1e3 && sc->duration_ns <= 1e13) ||
        sc->reserve_capsm > sc->gpu.sm_count || memchr(sc->name, '\0', sizeof(sc->name)) == NULL) {
        abort();
    }
    for (i = 0; i < sc->napps; i++) {
        const corun__app *a = &sc->apps[i];
        const corun_dim3 *g = &a->kernel.grid, *b = &a->kernel.block;
        if (memchr(a->name, '\0', sizeof(a->name)) == NULL || a->attr.capsm > sc->gpu.sm_count ||
            g->x < 1 || g->y < 1 || g->z < 1 || b->x < 1 || b->y < 1 || b->z < 1 ||
            (uint64_t)b->x * b->y * b->z > 1024 || a->arrival.nat > CORUN_SCENARIO_MAX_AT ||
            a->kernel.name[0] == '\0') {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static corun__scenario sc;
    char why[512] = "";
    char *text = malloc(size + 1);
    int rc;

    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    rc = corun__scenario_parse(text, "fuzz", &sc, why, sizeof(why));
    if (rc == CORUN_OK) {
        check_accepted(&sc);
    } else if (rc != CORUN_EPARSE || strncmp(why, "fuzz:", 5) != 0) {
        abort();
    }
    free(text);
    return 0;
}
