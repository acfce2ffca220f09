/*
 * fuzz_profile.c — libFuzzer target: any bytes as the profile store's file,
 * through corun__pstore_parse (what every reader of the store runs). Beyond
 * the sanitizers' reports it checks the format's contract: a refused text
 * says why and leaves the store empty; an accepted one, written back with
 * corun__pstore_format, parses again to the same records.
 * Seeds: fuzz/corpus/profile/ (scripts/fuzz.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/profile_store.h"
#include "corun/corun.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_run(const corun__prun *a, const corun__prun *b)
{
    return strcmp(a->backend, b->backend) == 0 && strcmp(a->kernel, b->kernel) == 0 &&
           a->grid == b->grid && a->block == b->block && a->size == b->size &&
           a->smem == b->smem && a->dur_ns == b->dur_ns;
}

static int same_prof(const corun__pprof *a, const corun__pprof *b)
{
    return strcmp(a->backend, b->backend) == 0 && strcmp(a->kernel, b->kernel) == 0 &&
           a->flop_frac == b->flop_frac && a->bw_frac == b->bw_frac && a->dur_ns == b->dur_ns &&
           a->samples == b->samples;
}

/* parse(format(ps)) == ps */
static void check_round_trip(const corun__pstore *ps)
{
    corun__pstore again;
    char *text = NULL, err[256] = "";
    size_t len = 0, i;

    if (corun__pstore_format(ps, &text, &len) != CORUN_OK) {
        return; /* out of memory */
    }
    corun__pstore_init(&again);
    if (corun__pstore_parse(text, len, &again, err, sizeof(err)) != CORUN_OK ||
        again.nruns != ps->nruns || again.nprofs != ps->nprofs) {
        abort();
    }
    for (i = 0; i < ps->nruns; i++) {
        if (!same_run(&ps->runs[i], &again.runs[i])) {
            abort();
        }
    }
    for (i = 0; i < ps->nprofs; i++) {
        if (!same_prof(&ps->profs[i], &again.profs[i])) {
            abort();
        }
    }
    corun__pstore_free(&again);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    corun__pstore ps;
    char err[256] = "";
    /* exactly size bytes, so that a read past the text is reported */
    char *text = malloc(size > 0 ? size : 1);
    int rc;

    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    corun__pstore_init(&ps);
    rc = corun__pstore_parse(text, size, &ps, err, sizeof(err));
    if (rc == CORUN_OK) {
        check_round_trip(&ps);
    } else if (rc != CORUN_EPARSE || err[0] == '\0' || ps.nruns != 0 || ps.nprofs != 0) {
        abort();
    }
    corun__pstore_free(&ps);
    free(text);
    return 0;
}
