/*
 * fuzz_proto.c — libFuzzer target: any bytes as what a peer sends over
 * corund's socket, through corun__proto_decode message after message while
 * they decode (what the daemon runs on every client byte). Beyond the
 * sanitizers' reports (no read past the input) it checks the protocol's
 * contract: every answer is OK, EBUSY (only for a message cut short) or
 * EPARSE with a reason; a decoded message encodes again to exactly the bytes
 * it was read from (one canonical form), and those decode again to the same
 * message and size.
 * Seeds: fuzz/corpus/proto/ (scripts/fuzz.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corun/corun.h"
#include "wire/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t again[CORUN_PROTO_MAX_MSG];

/* One decoded message m, read from in[0, used): its encoding is those bytes. */
static void check_canonical(const corun__msg *m, const uint8_t *in, size_t used)
{
    corun__msg back;
    size_t n = corun__proto_encode(m, again, sizeof(again)), used2 = 0;
    char why[CORUN_PROTO_WHY];

    if (n != used || memcmp(again, in, n) != 0) {
        abort();
    }
    if (corun__proto_decode(again, n, &back, &used2, why, sizeof(why)) != CORUN_OK ||
        used2 != used || back.type != m->type || back.seq != m->seq) {
        abort();
    }
    if (m->type == CORUN_MSG_DATA &&
        (back.u.data.len != m->u.data.len ||
         memcmp(back.u.data.data, m->u.data.data, m->u.data.len) != 0)) {
        abort();
    }
    if (strcmp(corun__proto_type_name(m->type), "?") == 0) {
        abort();
    }
}

/* EBUSY only while a valid header waits for its payload, or before a whole header. */
static void check_busy(const uint8_t *in, size_t left)
{
    uint32_t len;

    if (left < CORUN_PROTO_HEADER) {
        return;
    }
    len = (uint32_t)in[8] | (uint32_t)in[9] << 8 | (uint32_t)in[10] << 16 | (uint32_t)in[11] << 24;
    if (len > CORUN_PROTO_MAX_PAYLOAD || left >= CORUN_PROTO_HEADER + (size_t)len) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t at = 0;

    for (;;) {
        corun__msg m;
        char why[CORUN_PROTO_WHY] = "";
        size_t used = 1;
        int rc = corun__proto_decode(data + at, size - at, &m, &used, why, sizeof(why));

        if (rc == CORUN_OK) {
            if (used < CORUN_PROTO_HEADER || used > size - at) {
                abort();
            }
            check_canonical(&m, data + at, used);
            at += used;
            continue;
        }
        if (used != 0) {
            abort();
        }
        if (rc == CORUN_EBUSY) {
            check_busy(data + at, size - at);
        } else if (rc != CORUN_EPARSE || why[0] == '\0') {
            abort();
        }
        break;
    }
    return 0;
}
