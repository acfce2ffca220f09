/* test_proto.c — the daemon's wire protocol (src/wire/proto.h): every
 * type round trip, every bound refused by decode and by encode, strings in
 * their one canonical form, partial and back-to-back messages, bad headers;
 * then the transport over socketpairs (whole and split messages, DATA,
 * timeout, peer gone, the non-blocking fill/take) and connect. The wire
 * offsets below are written out by hand, apart from proto.c's table, so a
 * changed layout shows here. Last, the event ring of a coordinated client's
 * page (src/wire/channel.h): order, a full ring, bad events, four threads.
 * And the daemon's checks of a client's signal mirrors (src/wire/mirror.h). */
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#include "support.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "corun/corun.h"
#include "wire/channel.h"
#include "wire/mirror.h"
#include "wire/proto.h"

#define H CORUN_PROTO_HEADER

static const uint16_t all_types[] = {
    CORUN_MSG_HELLO,   CORUN_MSG_REGISTER, CORUN_MSG_LAUNCH,  CORUN_MSG_WAIT,
    CORUN_MSG_PREEMPT, CORUN_MSG_RESUME,   CORUN_MSG_RESIZE,  CORUN_MSG_PROGRESS,
    CORUN_MSG_RELEASE, CORUN_MSG_STATUS,   CORUN_MSG_TRACE,   CORUN_MSG_BYE,
    CORUN_MSG_MIRROR,  CORUN_MSG_WELCOME,  CORUN_MSG_REPLY,   CORUN_MSG_DATA,
};
#define NTYPES (sizeof(all_types) / sizeof(all_types[0]))

static const char data_text[] = "{\"clients\": [1, 2, 3]}";

/* A valid message of each type, every field away from zero where it may be. */
static void sample(uint16_t type, corun__msg *m)
{
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->seq = 1000u + type;
    switch (type) {
    case CORUN_MSG_HELLO:
        m->u.hello.pid = 4242;
        m->u.hello.gpu = 1;
        m->u.hello.cls = CORUN_CLASS_LS;
        m->u.hello.priority = -7;
        m->u.hello.weight = 3;
        m->u.hello.capsm = 12;
        corun__proto_str(m->u.hello.command, sizeof(m->u.hello.command), "train.py --epochs 3");
        break;
    case CORUN_MSG_WELCOME:
        m->u.welcome.client = 9;
        m->u.welcome.sm_count = 132;
        corun__proto_str(m->u.welcome.backend, sizeof(m->u.welcome.backend), "sim");
        corun__proto_str(m->u.welcome.policy, sizeof(m->u.welcome.policy), "smguard");
        corun__proto_str(m->u.welcome.mode, sizeof(m->u.welcome.mode), "time-sliced");
        corun__proto_str(m->u.welcome.gpu_name, sizeof(m->u.welcome.gpu_name),
                         "NVIDIA H100 80GB HBM3");
        break;
    case CORUN_MSG_REGISTER:
        m->u.reg.kernel = 77;
        corun__proto_str(m->u.reg.name, sizeof(m->u.reg.name), "gemm<128>");
        m->u.reg.task_us = 12.5;
        m->u.reg.regs = 96;
        m->u.reg.ahead = 1;
        m->u.reg.flags = CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS;
        break;
    case CORUN_MSG_LAUNCH:
        m->u.launch.kernel = 77;
        m->u.launch.job = 5;
        m->u.launch.grid[0] = 1000;
        m->u.launch.grid[1] = 2;
        m->u.launch.grid[2] = 1;
        m->u.launch.block[0] = 32;
        m->u.launch.block[1] = 32;
        m->u.launch.block[2] = 1;
        m->u.launch.smem = 4096;
        m->u.launch.cls = CORUN_CLASS_BATCH;
        m->u.launch.capsm = 64;
        m->u.launch.priority = -3;
        m->u.launch.weight = 2;
        m->u.launch.size_hint = 1e6;
        break;
    case CORUN_MSG_WAIT:
        m->u.job.job = 5;
        m->u.job.timeout_ms = -1;
        break;
    case CORUN_MSG_PREEMPT:
    case CORUN_MSG_PROGRESS:
    case CORUN_MSG_RELEASE:
        m->u.job.job = 6;
        m->u.job.timeout_ms = -1000;
        break;
    case CORUN_MSG_RESUME:
    case CORUN_MSG_RESIZE:
        m->u.job.job = 7;
        m->u.job.capsm = 40;
        break;
    case CORUN_MSG_TRACE:
        m->u.trace.ms = 250;
        break;
    case CORUN_MSG_REPLY:
        m->u.reply.status = CORUN_EBUSY;
        corun__proto_str(m->u.reply.why, sizeof(m->u.reply.why), "the job is busy");
        m->u.reply.v[0] = 1;
        m->u.reply.v[1] = 2;
        m->u.reply.v[2] = 3;
        m->u.reply.v[3] = 4;
        m->u.reply.v[4] = 1ull << 40;
        m->u.reply.v[5] = UINT64_MAX;
        break;
    case CORUN_MSG_DATA:
        m->u.data.data = data_text;
        m->u.data.len = (uint32_t)strlen(data_text);
        break;
    default:
        break;
    }
}

static void assert_msg_equal(const corun__msg *a, const corun__msg *b)
{
    int i;

    assert_int_equal(a->type, b->type);
    assert_int_equal(a->seq, b->seq);
    switch (a->type) {
    case CORUN_MSG_HELLO:
        assert_int_equal(a->u.hello.pid, b->u.hello.pid);
        assert_int_equal(a->u.hello.gpu, b->u.hello.gpu);
        assert_int_equal(a->u.hello.cls, b->u.hello.cls);
        assert_int_equal(a->u.hello.priority, b->u.hello.priority);
        assert_int_equal(a->u.hello.weight, b->u.hello.weight);
        assert_int_equal(a->u.hello.capsm, b->u.hello.capsm);
        assert_string_equal(a->u.hello.command, b->u.hello.command);
        break;
    case CORUN_MSG_WELCOME:
        assert_int_equal(a->u.welcome.client, b->u.welcome.client);
        assert_int_equal(a->u.welcome.sm_count, b->u.welcome.sm_count);
        assert_string_equal(a->u.welcome.backend, b->u.welcome.backend);
        assert_string_equal(a->u.welcome.policy, b->u.welcome.policy);
        assert_string_equal(a->u.welcome.mode, b->u.welcome.mode);
        assert_string_equal(a->u.welcome.gpu_name, b->u.welcome.gpu_name);
        break;
    case CORUN_MSG_REGISTER:
        assert_int_equal(a->u.reg.kernel, b->u.reg.kernel);
        assert_string_equal(a->u.reg.name, b->u.reg.name);
        assert_true(a->u.reg.task_us == b->u.reg.task_us);
        assert_int_equal(a->u.reg.regs, b->u.reg.regs);
        assert_int_equal(a->u.reg.ahead, b->u.reg.ahead);
        assert_int_equal(a->u.reg.flags, b->u.reg.flags);
        break;
    case CORUN_MSG_LAUNCH:
        assert_int_equal(a->u.launch.kernel, b->u.launch.kernel);
        assert_int_equal(a->u.launch.job, b->u.launch.job);
        for (i = 0; i < 3; i++) {
            assert_int_equal(a->u.launch.grid[i], b->u.launch.grid[i]);
            assert_int_equal(a->u.launch.block[i], b->u.launch.block[i]);
        }
        assert_int_equal(a->u.launch.smem, b->u.launch.smem);
        assert_int_equal(a->u.launch.cls, b->u.launch.cls);
        assert_int_equal(a->u.launch.capsm, b->u.launch.capsm);
        assert_int_equal(a->u.launch.priority, b->u.launch.priority);
        assert_int_equal(a->u.launch.weight, b->u.launch.weight);
        assert_true(a->u.launch.size_hint == b->u.launch.size_hint);
        break;
    case CORUN_MSG_WAIT:
    case CORUN_MSG_PREEMPT:
    case CORUN_MSG_RESUME:
    case CORUN_MSG_RESIZE:
    case CORUN_MSG_PROGRESS:
    case CORUN_MSG_RELEASE:
        assert_int_equal(a->u.job.job, b->u.job.job);
        assert_int_equal(a->u.job.capsm, b->u.job.capsm);
        assert_true(a->u.job.timeout_ms == b->u.job.timeout_ms);
        break;
    case CORUN_MSG_TRACE:
        assert_int_equal(a->u.trace.ms, b->u.trace.ms);
        break;
    case CORUN_MSG_REPLY:
        assert_int_equal(a->u.reply.status, b->u.reply.status);
        assert_string_equal(a->u.reply.why, b->u.reply.why);
        for (i = 0; i < 6; i++) {
            assert_true(a->u.reply.v[i] == b->u.reply.v[i]);
        }
        break;
    case CORUN_MSG_DATA:
        assert_int_equal(a->u.data.len, b->u.data.len);
        assert_memory_equal(a->u.data.data, b->u.data.data, a->u.data.len);
        break;
    default:
        break;
    }
}

/* Decodes exactly n bytes from a heap copy of its own size (ASan sees any read past it). */
static int decode_exact(const uint8_t *bytes, size_t n, corun__msg *out, size_t *used, char *why,
                        size_t why_len)
{
    uint8_t *copy = malloc(n > 0 ? n : 1);
    int rc;

    assert_non_null(copy);
    if (n > 0) {
        memcpy(copy, bytes, n);
    }
    rc = corun__proto_decode(copy, n, out, used, why, why_len);
    if (rc == CORUN_OK && out->type == CORUN_MSG_DATA) {
        /* out points into copy: check it before copy goes */
        assert_true((const uint8_t *)out->u.data.data >= copy &&
                    (const uint8_t *)out->u.data.data + out->u.data.len <= copy + n);
        out->u.data.data = (const char *)bytes + ((const uint8_t *)out->u.data.data - copy);
    }
    free(copy);
    return rc;
}

static void put_le(uint8_t *p, uint64_t v, size_t size)
{
    size_t i;

    for (i = 0; i < size; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint64_t dbits(double d)
{
    uint64_t u;

    memcpy(&u, &d, sizeof(u));
    return u;
}

/* ---- encoding ---------------------------------------------------------------- */

static void round_trip_every_type(void **state)
{
    static const size_t payload[] = {
        [CORUN_MSG_HELLO] = 85,  [CORUN_MSG_REGISTER] = 85, [CORUN_MSG_LAUNCH] = 57,
        [CORUN_MSG_WAIT] = 16,   [CORUN_MSG_PREEMPT] = 16,  [CORUN_MSG_RESUME] = 16,
        [CORUN_MSG_RESIZE] = 16, [CORUN_MSG_PROGRESS] = 16, [CORUN_MSG_RELEASE] = 16,
        [CORUN_MSG_STATUS] = 0,  [CORUN_MSG_TRACE] = 4,     [CORUN_MSG_BYE] = 0,
        [CORUN_MSG_MIRROR] = 0,
        [CORUN_MSG_WELCOME] = 168, [CORUN_MSG_REPLY] = 308, [CORUN_MSG_DATA] = 0,
    };
    uint8_t buf[CORUN_PROTO_MAX_MSG];
    corun__msg m, back;
    char why[256];
    size_t i, n, used;

    for (i = 0; i < NTYPES; i++) {
        sample(all_types[i], &m);
        n = corun__proto_encode(&m, buf, sizeof(buf));
        if (all_types[i] == CORUN_MSG_DATA) {
            assert_int_equal(n, H + 4 + strlen(data_text));
        } else {
            assert_int_equal(n, H + payload[all_types[i]]);
        }
        /* the header, byte by byte */
        assert_memory_equal(buf, "CRND\x01\x00", 6);
        assert_int_equal(buf[6] | buf[7] << 8, all_types[i]);
        assert_int_equal((size_t)(buf[8] | buf[9] << 8 | buf[10] << 16), n - H);
        assert_int_equal(buf[12] | buf[13] << 8, 1000 + all_types[i]);
        why[0] = '\0';
        assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_OK);
        assert_int_equal(used, n);
        assert_msg_equal(&m, &back);
        assert_string_equal(corun__proto_type_name(all_types[i]),
                            corun__proto_type_name(back.type));
        /* a buffer one byte short is refused */
        assert_int_equal(corun__proto_encode(&m, buf, n - 1), 0);
    }
    /* fields little-endian at their place: LAUNCH's priority at 41, size_hint at 49 */
    sample(CORUN_MSG_LAUNCH, &m);
    n = corun__proto_encode(&m, buf, sizeof(buf));
    assert_memory_equal(buf + H + 41, "\xfd\xff\xff\xff", 4);
    assert_memory_equal(buf + H + 49, "\x00\x00\x00\x00\x80\x84\x2e\x41", 8); /* 1e6 */
    assert_int_equal(n, H + 57);
}

static void type_names(void **state)
{
    assert_string_equal(corun__proto_type_name(CORUN_MSG_LAUNCH), "LAUNCH");
    assert_string_equal(corun__proto_type_name(CORUN_MSG_DATA), "DATA");
    assert_string_equal(corun__proto_type_name(0), "?");
    assert_string_equal(corun__proto_type_name(CORUN_MSG_MIRROR), "MIRROR");
    assert_string_equal(corun__proto_type_name(14), "?");
    assert_string_equal(corun__proto_type_name(70000), "?");
}

static void strings_copied_safely(void **state)
{
    char f[8];

    memset(f, 'x', sizeof(f));
    corun__proto_str(f, sizeof(f), "a\tb\x7f" "cdefgh");
    assert_string_equal(f, "a?b?cde");
    corun__proto_str(f, sizeof(f), "ab");
    assert_memory_equal(f, "ab\0\0\0\0\0\0", 8);
    corun__proto_str(f, sizeof(f), NULL);
    assert_memory_equal(f, "\0\0\0\0\0\0\0\0", 8);
    corun__proto_str(f, 1, "abc");
    assert_int_equal(f[0], 0);
}

/* ---- bounds -------------------------------------------------------------------- */

typedef struct bound_case {
    uint16_t type;
    size_t wire;     /* the field's offset in the payload */
    size_t mem;      /* its offset in corun__msg */
    size_t size;     /* 1, 4 or 8 bytes */
    uint64_t value;  /* its bits */
    int ok;          /* the value is within bounds */
    const char *why; /* part of decode's sentence when not ok */
} bound_case;

#define MEM(m) offsetof(corun__msg, u.m)

static void set_mem(corun__msg *m, const bound_case *c)
{
    uint8_t u8 = (uint8_t)c->value;
    uint32_t u32 = (uint32_t)c->value;
    uint64_t u64 = c->value;
    uint8_t *p = (uint8_t *)m + c->mem;

    if (c->size == 1) {
        memcpy(p, &u8, 1);
    } else if (c->size == 4) {
        memcpy(p, &u32, 4);
    } else {
        memcpy(p, &u64, 8);
    }
}

static void every_bound(void **state)
{
    const uint64_t neg = (uint64_t)-1;
    const bound_case cases[] = {
        {CORUN_MSG_HELLO, 8, MEM(hello.cls), 1, 2, 0, "HELLO: cls 2 is outside [0, 1]"},
        {CORUN_MSG_HELLO, 8, MEM(hello.cls), 1, 0, 1, NULL},
        {CORUN_MSG_HELLO, 9, MEM(hello.priority), 4, 1001, 0, "HELLO: priority 1001"},
        {CORUN_MSG_HELLO, 9, MEM(hello.priority), 4, neg - 1000, 0, "HELLO: priority -1001"},
        {CORUN_MSG_HELLO, 9, MEM(hello.priority), 4, neg - 999, 1, NULL},
        {CORUN_MSG_HELLO, 9, MEM(hello.priority), 4, 1000, 1, NULL},
        {CORUN_MSG_HELLO, 13, MEM(hello.weight), 4, 1000001, 0, "HELLO: weight 1000001"},
        {CORUN_MSG_HELLO, 13, MEM(hello.weight), 4, 1000000, 1, NULL},
        {CORUN_MSG_HELLO, 17, MEM(hello.capsm), 4, 4097, 0, "HELLO: capsm 4097"},
        {CORUN_MSG_HELLO, 17, MEM(hello.capsm), 4, 4096, 1, NULL},
        {CORUN_MSG_REGISTER, 68, MEM(reg.task_us), 8, dbits(0), 0, "REGISTER: task_us 0"},
        {CORUN_MSG_REGISTER, 68, MEM(reg.task_us), 8, dbits(-1), 0, "REGISTER: task_us -1"},
        {CORUN_MSG_REGISTER, 68, MEM(reg.task_us), 8, dbits(1e9 + 1), 0, "REGISTER: task_us"},
        {CORUN_MSG_REGISTER, 68, MEM(reg.task_us), 8, dbits(NAN), 0, "not finite"},
        {CORUN_MSG_REGISTER, 68, MEM(reg.task_us), 8, dbits(INFINITY), 0, "not finite"},
        {CORUN_MSG_REGISTER, 68, MEM(reg.task_us), 8, dbits(1e9), 1, NULL},
        {CORUN_MSG_REGISTER, 68, MEM(reg.task_us), 8, dbits(1e-300), 1, NULL},
        {CORUN_MSG_REGISTER, 76, MEM(reg.regs), 4, 256, 0, "REGISTER: regs 256"},
        {CORUN_MSG_REGISTER, 76, MEM(reg.regs), 4, 255, 1, NULL},
        {CORUN_MSG_REGISTER, 80, MEM(reg.ahead), 1, 2, 0, "REGISTER: ahead 2"},
        {CORUN_MSG_REGISTER, 80, MEM(reg.ahead), 1, 0, 1, NULL},
        {CORUN_MSG_REGISTER, 81, MEM(reg.flags), 4, 2, 0, "REGISTER: flags 0x2 has unknown"},
        {CORUN_MSG_REGISTER, 81, MEM(reg.flags), 4, 1u << 31, 0, "REGISTER: flags"},
        {CORUN_MSG_REGISTER, 81, MEM(reg.flags), 4, 0, 1, NULL},
        {CORUN_MSG_LAUNCH, 8, MEM(launch.grid[0]), 4, 0, 0, "LAUNCH: grid[0] 0"},
        {CORUN_MSG_LAUNCH, 16, MEM(launch.grid[2]), 4, 0x80000000u, 0, "LAUNCH: grid[2]"},
        {CORUN_MSG_LAUNCH, 12, MEM(launch.grid[1]), 4, CORUN_PROTO_MAX_DIM, 1, NULL},
        {CORUN_MSG_LAUNCH, 20, MEM(launch.block[0]), 4, 0, 0, "LAUNCH: block 0x32x1 has a zero"},
        {CORUN_MSG_LAUNCH, 28, MEM(launch.block[2]), 4, 2, 0,
         "LAUNCH: block 32x32x2 has more than 1024 threads"},
        {CORUN_MSG_LAUNCH, 28, MEM(launch.block[2]), 4, 0xffffffffu, 0, "more than 1024"},
        {CORUN_MSG_LAUNCH, 24, MEM(launch.block[1]), 4, 0xffffffffu, 0, "more than 1024"},
        {CORUN_MSG_LAUNCH, 32, MEM(launch.smem), 4, (1u << 20) + 1, 0, "LAUNCH: smem 1048577"},
        {CORUN_MSG_LAUNCH, 32, MEM(launch.smem), 4, 1u << 20, 1, NULL},
        {CORUN_MSG_LAUNCH, 36, MEM(launch.cls), 1, 255, 0, "LAUNCH: cls 255"},
        {CORUN_MSG_LAUNCH, 36, MEM(launch.cls), 1, 1, 1, NULL},
        {CORUN_MSG_LAUNCH, 37, MEM(launch.capsm), 4, 4097, 0, "LAUNCH: capsm 4097"},
        {CORUN_MSG_LAUNCH, 41, MEM(launch.priority), 4, 1001, 0, "LAUNCH: priority 1001"},
        {CORUN_MSG_LAUNCH, 41, MEM(launch.priority), 4, 0x80000000u, 0, "LAUNCH: priority -2147"},
        {CORUN_MSG_LAUNCH, 45, MEM(launch.weight), 4, 1000001, 0, "LAUNCH: weight 1000001"},
        {CORUN_MSG_LAUNCH, 49, MEM(launch.size_hint), 8, dbits(-1), 0, "LAUNCH: size_hint -1"},
        {CORUN_MSG_LAUNCH, 49, MEM(launch.size_hint), 8, dbits(-INFINITY), 0, "not finite"},
        {CORUN_MSG_LAUNCH, 49, MEM(launch.size_hint), 8, dbits(NAN), 0, "not finite"},
        {CORUN_MSG_LAUNCH, 49, MEM(launch.size_hint), 8, dbits(0), 1, NULL},
        {CORUN_MSG_LAUNCH, 49, MEM(launch.size_hint), 8, dbits(1e300), 1, NULL},
        {CORUN_MSG_WAIT, 4, MEM(job.capsm), 4, 1, 0, "WAIT: capsm 1"},
        {CORUN_MSG_WAIT, 8, MEM(job.timeout_ms), 8, 1000000001, 0, "WAIT: timeout_ms"},
        {CORUN_MSG_WAIT, 8, MEM(job.timeout_ms), 8, 1000000000, 1, NULL},
        {CORUN_MSG_WAIT, 8, MEM(job.timeout_ms), 8, 1ull << 63, 1, NULL}, /* INT64_MIN */
        {CORUN_MSG_PREEMPT, 4, MEM(job.capsm), 4, 1, 0, "PREEMPT: capsm 1"},
        {CORUN_MSG_PREEMPT, 8, MEM(job.timeout_ms), 8, neg - 1000000000, 0, "PREEMPT: timeout_ms"},
        {CORUN_MSG_PREEMPT, 8, MEM(job.timeout_ms), 8, neg - 999999999, 1, NULL},
        {CORUN_MSG_PROGRESS, 4, MEM(job.capsm), 4, 64, 0, "PROGRESS: capsm 64"},
        {CORUN_MSG_RELEASE, 8, MEM(job.timeout_ms), 8, 1000000001, 0, "RELEASE: timeout_ms"},
        {CORUN_MSG_RESUME, 4, MEM(job.capsm), 4, 4097, 0, "RESUME: capsm 4097"},
        {CORUN_MSG_RESUME, 4, MEM(job.capsm), 4, 4096, 1, NULL},
        {CORUN_MSG_RESIZE, 4, MEM(job.capsm), 4, 4097, 0, "RESIZE: capsm 4097"},
        {CORUN_MSG_RESIZE, 4, MEM(job.capsm), 4, 0, 1, NULL},
        {CORUN_MSG_TRACE, 0, MEM(trace.ms), 4, 0, 0, "TRACE: ms 0"},
        {CORUN_MSG_TRACE, 0, MEM(trace.ms), 4, 3600001, 0, "TRACE: ms 3600001"},
        {CORUN_MSG_TRACE, 0, MEM(trace.ms), 4, 3600000, 1, NULL},
        {CORUN_MSG_TRACE, 0, MEM(trace.ms), 4, 1, 1, NULL},
        {CORUN_MSG_REPLY, 0, MEM(reply.status), 4, 1, 0, "REPLY: status 1 is not"},
        {CORUN_MSG_REPLY, 0, MEM(reply.status), 4, neg - 15, 0, "REPLY: status -16"},
        {CORUN_MSG_REPLY, 0, MEM(reply.status), 4, neg - 14, 1, NULL}, /* ECANCELED */
        {CORUN_MSG_REPLY, 0, MEM(reply.status), 4, 0, 1, NULL},
    };
    uint8_t buf[1024], enc[1024];
    corun__msg m, back;
    char why[256];
    size_t i, n, used;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const bound_case *c = &cases[i];
        sample(c->type, &m);
        n = corun__proto_encode(&m, buf, sizeof(buf));
        assert_true(n > H + c->wire + c->size - 1);
        put_le(buf + H + c->wire, c->value, c->size);
        set_mem(&m, c);
        why[0] = '\0';
        used = 99;
        if (c->ok) {
            assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_OK);
            assert_int_equal(used, n);
            assert_msg_equal(&m, &back);
            /* and encode writes exactly those bytes */
            assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), n);
            assert_memory_equal(enc, buf, n);
        } else {
            assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
            assert_int_equal(used, 0);
            if (strstr(why, c->why) == NULL) {
                fail_msg("case %zu: why \"%s\" does not say \"%s\"", i, why, c->why);
            }
            assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), 0);
        }
    }
}

/* Every status of corun.h is a REPLY's; the numbers around them are not. */
static void reply_statuses(void **state)
{
    static const int known[] = {
#define CORUN__TEST_STATUS(name, value, msg) value,
        CORUN_STATUS_MAP(CORUN__TEST_STATUS)
#undef CORUN__TEST_STATUS
    };
    uint8_t buf[512];
    corun__msg m;
    int v, k, is_known;

    for (v = -40; v <= 40; v++) {
        is_known = 0;
        for (k = 0; k < (int)(sizeof(known) / sizeof(known[0])); k++) {
            is_known |= known[k] == v;
        }
        sample(CORUN_MSG_REPLY, &m);
        m.u.reply.status = v;
        assert_int_equal(corun__proto_encode(&m, buf, sizeof(buf)) != 0, is_known);
    }
}

/* ---- strings --------------------------------------------------------------------- */

static void strings_canonical(void **state)
{
    uint8_t buf[512], enc[512];
    corun__msg m, back;
    char why[256];
    size_t n, used;
    const size_t cmd = H + 21; /* HELLO's command */

    sample(CORUN_MSG_HELLO, &m);
    n = corun__proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(n, H + 85);

    /* no NUL in the field */
    memset(buf + cmd, 'a', CORUN_PROTO_NAME);
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "HELLO: command has no NUL"));
    memset(m.u.hello.command, 'a', sizeof(m.u.hello.command));
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), 0);

    /* a control byte before the NUL */
    corun__proto_str(m.u.hello.command, sizeof(m.u.hello.command), "abcdef");
    assert_int_equal(corun__proto_encode(&m, buf, sizeof(buf)), n);
    buf[cmd + 3] = 0x01;
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "HELLO: command has the non-printable byte 0x01 at 3"));
    m.u.hello.command[3] = 0x01;
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), 0);
    m.u.hello.command[3] = 0x7f;
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), 0);
    m.u.hello.command[3] = (char)0xc3;
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), 0);

    /* something after the NUL: refused on the wire, zeroed by encode */
    corun__proto_str(m.u.hello.command, sizeof(m.u.hello.command), "abcdef");
    assert_int_equal(corun__proto_encode(&m, buf, sizeof(buf)), n);
    buf[cmd + 40] = 'z';
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "HELLO: command has the byte 0x7a after its NUL"));
    buf[cmd + 40] = 0;
    m.u.hello.command[40] = 'z';
    m.u.hello.command[63] = 1;
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), n);
    assert_memory_equal(enc, buf, n);

    /* a whole field of text but the last byte, and an empty one */
    memset(m.u.hello.command, '~', sizeof(m.u.hello.command) - 1);
    m.u.hello.command[63] = '\0';
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), n);
    assert_int_equal(decode_exact(enc, n, &back, &used, why, sizeof(why)), CORUN_OK);
    assert_int_equal(strlen(back.u.hello.command), 63);
    m.u.hello.command[0] = '\0';
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), n);

    /* REGISTER's name may not be empty */
    sample(CORUN_MSG_REGISTER, &m);
    n = corun__proto_encode(&m, buf, sizeof(buf));
    memset(buf + H + 4, 0, CORUN_PROTO_NAME);
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "REGISTER: name is empty"));
    m.u.reg.name[0] = '\0';
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), 0);

    /* the strings of WELCOME and REPLY are checked too */
    sample(CORUN_MSG_WELCOME, &m);
    m.u.welcome.gpu_name[2] = '\n';
    assert_int_equal(corun__proto_encode(&m, enc, sizeof(enc)), 0);
    sample(CORUN_MSG_REPLY, &m);
    n = corun__proto_encode(&m, buf, sizeof(buf));
    buf[H + 4 + CORUN_PROTO_WHY - 1] = 'x';
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "REPLY: why has the byte 0x78 after its NUL"));
}

/* ---- framing ---------------------------------------------------------------------- */

/* Every prefix of every message is "read more", never a read past its end. */
static void truncated_is_busy(void **state)
{
    uint8_t buf[CORUN_PROTO_MAX_MSG];
    corun__msg m, back;
    char why[256];
    size_t i, n, k, used;

    for (i = 0; i < NTYPES; i++) {
        sample(all_types[i], &m);
        n = corun__proto_encode(&m, buf, sizeof(buf));
        for (k = 0; k < n; k++) {
            used = 7;
            assert_int_equal(decode_exact(buf, k, &back, &used, why, sizeof(why)), CORUN_EBUSY);
            assert_int_equal(used, 0);
        }
        assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_OK);
    }
}

static void back_to_back(void **state)
{
    uint8_t buf[2048];
    corun__msg a, b, c, back;
    char why[256];
    size_t na, nb, nc, used, at = 0;

    sample(CORUN_MSG_LAUNCH, &a);
    sample(CORUN_MSG_DATA, &b);
    sample(CORUN_MSG_BYE, &c);
    na = corun__proto_encode(&a, buf, sizeof(buf));
    nb = corun__proto_encode(&b, buf + na, sizeof(buf) - na);
    nc = corun__proto_encode(&c, buf + na + nb, sizeof(buf) - na - nb);
    assert_true(na > 0 && nb > 0 && nc == H);

    assert_int_equal(decode_exact(buf, na + nb + nc, &back, &used, why, sizeof(why)), CORUN_OK);
    assert_int_equal(used, na);
    assert_msg_equal(&a, &back);
    at += used;
    assert_int_equal(corun__proto_decode(buf + at, na + nb + nc - at, &back, &used, why,
                                         sizeof(why)),
                     CORUN_OK);
    assert_int_equal(used, nb);
    assert_msg_equal(&b, &back);
    assert_ptr_equal(back.u.data.data, (const char *)buf + at + H + 4);
    at += used;
    assert_int_equal(decode_exact(buf + at, na + nb + nc - at, &back, &used, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(used, nc);
    assert_int_equal(back.type, CORUN_MSG_BYE);
    at += used;
    assert_int_equal(decode_exact(buf + at, 0, &back, &used, why, sizeof(why)), CORUN_EBUSY);
}

static void bad_headers(void **state)
{
    uint8_t buf[512], hdr[H];
    corun__msg m, back;
    char why[256];
    size_t n, used;

    sample(CORUN_MSG_TRACE, &m);
    n = corun__proto_encode(&m, buf, sizeof(buf));

    buf[0] ^= 1;
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "bad magic"));
    buf[0] ^= 1;
    buf[4] = 2;
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "version 2"));
    buf[4] = 1;
    buf[6] = 14;
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "unknown message type 14"));
    buf[6] = 0;
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    buf[6] = CORUN_MSG_TRACE;
    buf[7] = 1; /* 256 + 11 */
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    buf[7] = 0;

    /* a length that does not match the type: refused from the header alone */
    put_le(buf + 8, 5, 4);
    assert_int_equal(decode_exact(buf, H, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "TRACE: payload of 5 bytes, expected 4"));
    put_le(buf + 8, 3, 4);
    assert_int_equal(decode_exact(buf, H, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    put_le(buf + 8, 4, 4);
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_OK);

    /* every fixed-size type refuses one byte more or less */
    for (size_t i = 0; i < NTYPES; i++) {
        sample(all_types[i], &m);
        n = corun__proto_encode(&m, buf, sizeof(buf));
        if (all_types[i] == CORUN_MSG_DATA) {
            continue;
        }
        put_le(buf + 8, n - H + 1, 4);
        assert_int_equal(decode_exact(buf, n + 1, &back, &used, why, sizeof(why)), CORUN_EPARSE);
        if (n > H) {
            put_le(buf + 8, n - H - 1, 4);
            assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
        }
    }

    /* a payload over the limit: refused at once, never waited for */
    sample(CORUN_MSG_DATA, &m);
    assert_int_equal(corun__proto_encode(&m, hdr, sizeof(hdr)), 0);
    n = corun__proto_encode(&m, buf, sizeof(buf));
    memcpy(hdr, buf, H);
    put_le(hdr + 8, CORUN_PROTO_MAX_PAYLOAD + 1, 4);
    assert_int_equal(decode_exact(hdr, H, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "DATA: payload of 65537 bytes is over the limit"));
    put_le(hdr + 8, 0xffffffffu, 4);
    assert_int_equal(decode_exact(hdr, H, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    put_le(hdr + 8, CORUN_PROTO_MAX_PAYLOAD, 4);
    assert_int_equal(decode_exact(hdr, H, &back, &used, why, sizeof(why)), CORUN_EBUSY);

    /* DATA: a payload without room for its length word, or a word that lies */
    put_le(buf + 8, 3, 4);
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    put_le(buf + 8, n - H, 4);
    put_le(buf + H, strlen(data_text) - 1, 4);
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "DATA: length word"));
    put_le(buf + H, strlen(data_text), 4);
    assert_int_equal(decode_exact(buf, n, &back, &used, why, sizeof(why)), CORUN_OK);
}

static void encode_refuses(void **state)
{
    static uint8_t big[CORUN_PROTO_MAX_MSG + 8];
    static char bytes[CORUN_PROTO_MAX_PAYLOAD];
    corun__msg m;
    char why[256];
    size_t used;

    sample(CORUN_MSG_BYE, &m);
    m.type = 14;
    assert_int_equal(corun__proto_encode(&m, big, sizeof(big)), 0);
    m.type = 0;
    assert_int_equal(corun__proto_encode(&m, big, sizeof(big)), 0);

    /* DATA: the largest piece, one byte more, and bytes at NULL */
    m.type = CORUN_MSG_DATA;
    m.u.data.data = bytes;
    m.u.data.len = CORUN_PROTO_MAX_PAYLOAD - 4;
    assert_int_equal(corun__proto_encode(&m, big, sizeof(big)), CORUN_PROTO_MAX_MSG);
    assert_int_equal(corun__proto_decode(big, CORUN_PROTO_MAX_MSG, &m, &used, why, sizeof(why)),
                     CORUN_OK);
    assert_int_equal(m.u.data.len, CORUN_PROTO_MAX_PAYLOAD - 4);
    m.u.data.len = CORUN_PROTO_MAX_PAYLOAD - 3;
    assert_int_equal(corun__proto_encode(&m, big, sizeof(big)), 0);
    m.u.data.data = NULL;
    m.u.data.len = 1;
    assert_int_equal(corun__proto_encode(&m, big, sizeof(big)), 0);
    m.u.data.len = 0;
    assert_int_equal(corun__proto_encode(&m, big, sizeof(big)), H + 4);
    assert_int_equal(corun__proto_send(-1, &(corun__msg){.type = 99}), CORUN_EINVAL);
}

/* ---- transport -------------------------------------------------------------------- */

static void pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void write_bytes(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        assert_true(w > 0);
        p += w;
        n -= (size_t)w;
    }
}

static int64_t ms_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void send_recv(void **state)
{
    static corun__proto_rx rx;
    static char big[60000];
    corun__msg m, back, first;
    char why[256];
    int sv[2];
    size_t i;

    pair(sv);
    rx.len = rx.hold = 0;
    for (i = 0; i < sizeof(big); i++) {
        big[i] = (char)(i * 7);
    }
    for (i = 0; i < NTYPES; i++) {
        sample(all_types[i], &m);
        assert_int_equal(corun__proto_send(sv[0], &m), CORUN_OK);
    }
    sample(CORUN_MSG_DATA, &m);
    m.u.data.data = big;
    m.u.data.len = sizeof(big);
    assert_int_equal(corun__proto_send(sv[0], &m), CORUN_OK);

    for (i = 0; i < NTYPES; i++) {
        sample(all_types[i], &m);
        assert_int_equal(corun__proto_recv(sv[1], &rx, &back, 1000, why, sizeof(why)), CORUN_OK);
        assert_msg_equal(&m, &back);
        if (i == 0) {
            first = back;
        }
    }
    assert_int_equal(corun__proto_recv(sv[1], &rx, &back, 1000, why, sizeof(why)), CORUN_OK);
    assert_int_equal(back.type, CORUN_MSG_DATA);
    assert_int_equal(back.u.data.len, sizeof(big));
    assert_memory_equal(back.u.data.data, big, sizeof(big));
    assert_int_equal(rx.len, rx.hold); /* nothing else read */
    assert_string_equal(first.u.hello.command, "train.py --epochs 3");

    /* nothing more: the timeout, the held message dropped */
    assert_int_equal(corun__proto_recv(sv[1], &rx, &back, 0, why, sizeof(why)), CORUN_ETIMEDOUT);
    assert_int_equal(rx.len, 0);
    close(sv[0]);
    close(sv[1]);
}

static void split_and_timeout(void **state)
{
    static corun__proto_rx rx;
    uint8_t buf[512];
    corun__msg m, back;
    char why[256];
    int sv[2];
    size_t n;
    int64_t t0;

    pair(sv);
    rx.len = rx.hold = 0;
    t0 = ms_now();
    assert_int_equal(corun__proto_recv(sv[1], &rx, &back, 60, why, sizeof(why)), CORUN_ETIMEDOUT);
    assert_true(ms_now() - t0 >= 55);

    sample(CORUN_MSG_LAUNCH, &m);
    n = corun__proto_encode(&m, buf, sizeof(buf));
    /* inside the header, then inside the payload, then the rest */
    write_bytes(sv[0], buf, 7);
    assert_int_equal(corun__proto_recv(sv[1], &rx, &back, 20, why, sizeof(why)), CORUN_ETIMEDOUT);
    write_bytes(sv[0], buf + 7, 20);
    assert_int_equal(corun__proto_recv(sv[1], &rx, &back, 20, why, sizeof(why)), CORUN_ETIMEDOUT);
    assert_int_equal(rx.len, 27);
    write_bytes(sv[0], buf + 27, n - 27);
    assert_int_equal(corun__proto_recv(sv[1], &rx, &back, 1000, why, sizeof(why)), CORUN_OK);
    assert_msg_equal(&m, &back);

    /* a malformed message: EPARSE with why */
    buf[0] = 'X';
    write_bytes(sv[0], buf, n);
    assert_int_equal(corun__proto_recv(sv[1], &rx, &back, 1000, why, sizeof(why)), CORUN_EPARSE);
    assert_non_null(strstr(why, "bad magic"));
    close(sv[0]);
    close(sv[1]);
}

static void peer_gone(void **state)
{
    static corun__proto_rx rx;
    uint8_t buf[512];
    corun__msg m, back;
    char why[256];
    int sv[2];
    size_t n;

    /* closed with half a message sent */
    pair(sv);
    rx.len = rx.hold = 0;
    sample(CORUN_MSG_REPLY, &m);
    n = corun__proto_encode(&m, buf, sizeof(buf));
    write_bytes(sv[0], buf, n / 2);
    close(sv[0]);
    assert_int_equal(corun__proto_recv(sv[1], &rx, &back, -1, why, sizeof(why)), CORUN_EIO);
    /* sending to a closed peer: EIO, no SIGPIPE */
    assert_int_equal(corun__proto_send(sv[1], &m), CORUN_EIO);
    close(sv[1]);
    assert_int_equal(corun__proto_send(sv[1], &m), CORUN_EIO);
}

static void fill_and_take(void **state)
{
    static corun__proto_rx rx;
    static uint8_t buf[2 * CORUN_PROTO_MAX_MSG];
    static char big[CORUN_PROTO_MAX_PAYLOAD - 4];
    corun__msg m, back;
    char why[256];
    int sv[2], rc;
    size_t n = 0, cut;

    pair(sv);
    assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
    rx.len = rx.hold = 0;
    assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_EBUSY);
    assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_EBUSY);

    /* two messages and a half in one write */
    sample(CORUN_MSG_HELLO, &m);
    n += corun__proto_encode(&m, buf + n, sizeof(buf) - n);
    sample(CORUN_MSG_WAIT, &m);
    n += corun__proto_encode(&m, buf + n, sizeof(buf) - n);
    cut = n + 10;
    sample(CORUN_MSG_LAUNCH, &m);
    n += corun__proto_encode(&m, buf + n, sizeof(buf) - n);
    write_bytes(sv[0], buf, cut);
    assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_OK);
    assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_OK);
    assert_int_equal(back.type, CORUN_MSG_HELLO);
    assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_OK);
    assert_int_equal(back.type, CORUN_MSG_WAIT);
    assert_int_equal(back.u.job.timeout_ms, -1);
    assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_EBUSY);
    assert_int_equal(rx.len, 10);
    assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_EBUSY);
    write_bytes(sv[0], buf + cut, n - cut);
    assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_OK);
    assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_OK);
    assert_msg_equal(&m, &back);

    /* a descriptor passed along (a client's MIRROR) is kept, as recv keeps it */
    {
        int p[2], got;
        assert_int_equal(pipe(p), 0);
        sample(CORUN_MSG_MIRROR, &m);
        assert_int_equal(corun__proto_send_fd(sv[0], &m, p[1]), CORUN_OK);
        assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_OK);
        assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_OK);
        assert_int_equal(back.type, CORUN_MSG_MIRROR);
        got = corun__proto_take_fd(&rx);
        assert_true(got >= 0);
        assert_int_equal(write(got, "x", 1), 1); /* the pipe's write end, here */
        assert_int_equal(read(p[0], why, 1), 1);
        assert_int_equal(corun__proto_take_fd(&rx), -1);
        close(got);
        close(p[0]);
        close(p[1]);
    }

    /* the largest DATA fills the buffer whole; fill then reads nothing until it is taken */
    memset(big, 'q', sizeof(big));
    m.type = CORUN_MSG_DATA;
    m.u.data.data = big;
    m.u.data.len = sizeof(big);
    n = corun__proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(n, CORUN_PROTO_MAX_MSG);
    sample(CORUN_MSG_BYE, &m);
    n += corun__proto_encode(&m, buf + n, sizeof(buf) - n);
    write_bytes(sv[0], buf, n);
    do {
        rc = corun__proto_fill(sv[1], &rx);
        assert_true(rc == CORUN_OK || rc == CORUN_EBUSY);
    } while (rx.len < sizeof(rx.buf));
    assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_OK);
    assert_int_equal(rx.len, sizeof(rx.buf));
    assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_OK);
    assert_int_equal(back.type, CORUN_MSG_DATA);
    assert_int_equal(back.u.data.len, sizeof(big));
    assert_memory_equal(back.u.data.data, big, sizeof(big));
    assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_OK);
    assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_OK);
    assert_int_equal(back.type, CORUN_MSG_BYE);

    /* a malformed message, then the peer gone */
    write_bytes(sv[0], (const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18);
    assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_OK);
    assert_int_equal(corun__proto_take(&rx, &back, why, sizeof(why)), CORUN_EPARSE);
    close(sv[0]);
    rx.len = 0;
    assert_int_equal(corun__proto_fill(sv[1], &rx), CORUN_EIO);
    close(sv[1]);
}

static void connect_paths(void **state)
{
    struct sockaddr_un sa;
    char dir[256], path[400], why[256], longp[200];
    corun__msg m, back;
    static corun__proto_rx rx;
    int fd = -1, lfd, cfd;

    corun_test_mkdtemp(dir, sizeof(dir), "proto");
    snprintf(path, sizeof(path), "%s/corund.sock", dir);
    why[0] = '\0';
    assert_int_equal(corun__proto_connect(path, &fd, why, sizeof(why)), CORUN_ENOENT);
    assert_non_null(strstr(why, path));
    assert_int_equal(fd, -1);

    memset(longp, 'p', sizeof(longp) - 1);
    longp[0] = '/';
    longp[sizeof(longp) - 1] = '\0';
    assert_int_equal(corun__proto_connect(longp, &fd, why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "bytes"));
    assert_int_equal(corun__proto_connect("", &fd, why, sizeof(why)), CORUN_EINVAL);

    /* a listener: connected, close-on-exec, and a message goes through */
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(lfd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    assert_true(strlen(path) < sizeof(sa.sun_path));
    memcpy(sa.sun_path, path, strlen(path) + 1);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    /* bound, not listening: refused, which is "nothing listens" */
    assert_int_equal(corun__proto_connect(path, &fd, why, sizeof(why)), CORUN_ENOENT);
    assert_int_equal(listen(lfd, 4), 0);
    assert_int_equal(corun__proto_connect(path, &fd, why, sizeof(why)), CORUN_OK);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    cfd = accept(lfd, NULL, NULL);
    assert_true(cfd >= 0);
    sample(CORUN_MSG_STATUS, &m);
    assert_int_equal(corun__proto_send(fd, &m), CORUN_OK);
    rx.len = rx.hold = 0;
    assert_int_equal(corun__proto_recv(cfd, &rx, &back, 1000, why, sizeof(why)), CORUN_OK);
    assert_msg_equal(&m, &back);
    close(cfd);
    close(fd);
    close(lfd);
    corun_test_rmdir(dir);
}

/* ---- the channel's event ring ---------------------------------------------- */

static corun__channel ring_ch;

static corun__chan_event ring_ev(uint32_t kind, uint64_t n)
{
    corun__chan_event e;

    memset(&e, 0, sizeof(e));
    e.kind = kind;
    e.t_ns = n;
    snprintf(e.kernel, sizeof(e.kernel), "k%llu", (unsigned long long)n);
    return e;
}

static void ring_order_full_and_bad(void **state)
{
    corun__chan_event e, out;
    uint64_t tail = 0, i;

    (void)state;
    memset(&ring_ch, 0, sizeof(ring_ch));
    corun__channel_ring_init(&ring_ch);
    assert_false(corun__channel_pop(&ring_ch, &tail, &out)); /* empty */
    for (i = 0; i < CORUN_CHANNEL_RING; i++) {
        e = ring_ev(CORUN_CHAN_LAUNCH, i);
        assert_true(corun__channel_push(&ring_ch, &e));
    }
    e = ring_ev(CORUN_CHAN_END, 9999);
    assert_false(corun__channel_push(&ring_ch, &e)); /* full: dropped, counted */
    assert_int_equal(atomic_load(&ring_ch.dropped), 1);
    for (i = 0; i < CORUN_CHANNEL_RING / 2; i++) {
        assert_true(corun__channel_pop(&ring_ch, &tail, &out));
        assert_int_equal(out.t_ns, i);
        assert_int_equal(out.kind, CORUN_CHAN_LAUNCH);
    }
    /* the freed slots take more, around the end of the array */
    for (i = 0; i < CORUN_CHANNEL_RING / 2; i++) {
        e = ring_ev(CORUN_CHAN_END, 1000 + i);
        assert_true(corun__channel_push(&ring_ch, &e));
    }
    for (i = 0; i < CORUN_CHANNEL_RING; i++) {
        assert_true(corun__channel_pop(&ring_ch, &tail, &out));
        assert_int_equal(out.t_ns, i < CORUN_CHANNEL_RING / 2 ? CORUN_CHANNEL_RING / 2 + i
                                                              : 1000 + i - CORUN_CHANNEL_RING / 2);
    }
    assert_false(corun__channel_pop(&ring_ch, &tail, &out));
    /* what a client scribbles: an unknown kind, a name without its NUL */
    e = ring_ev(77, 1);
    memset(e.kernel, 'x', sizeof(e.kernel));
    assert_true(corun__channel_push(&ring_ch, &e));
    assert_true(corun__channel_pop(&ring_ch, &tail, &out));
    assert_int_equal(out.kind, 0);
    assert_int_equal(strlen(out.kernel), sizeof(out.kernel) - 1);
    /* a slot whose sequence the client broke reads as empty, not as an event */
    e = ring_ev(CORUN_CHAN_LAUNCH, 2);
    assert_true(corun__channel_push(&ring_ch, &e));
    atomic_store(&ring_ch.ring[tail % CORUN_CHANNEL_RING].seq, 12345);
    assert_false(corun__channel_pop(&ring_ch, &tail, &out));
}

#define RING_THREADS 4
#define RING_EACH 20000

static void *ring_producer(void *arg)
{
    const uint64_t id = (uint64_t)(uintptr_t)arg;
    uint64_t i;

    for (i = 0; i < RING_EACH; i++) {
        corun__chan_event e = ring_ev(CORUN_CHAN_END, id << 32 | i);
        (void)corun__channel_push(&ring_ch, &e);
    }
    return NULL;
}

/* Four threads push while one pops: every event is popped once or counted
 * as dropped, and each thread's events come out in its order. */
static void ring_threads(void **state)
{
    pthread_t t[RING_THREADS];
    uint64_t tail = 0, got = 0, next[RING_THREADS] = {0};
    corun__chan_event out;
    unsigned i, running = RING_THREADS;

    (void)state;
    memset(&ring_ch, 0, sizeof(ring_ch));
    corun__channel_ring_init(&ring_ch);
    for (i = 0; i < RING_THREADS; i++) {
        assert_int_equal(pthread_create(&t[i], NULL, ring_producer, (void *)(uintptr_t)i), 0);
    }
    for (;;) {
        if (corun__channel_pop(&ring_ch, &tail, &out)) {
            const uint64_t id = out.t_ns >> 32, n = out.t_ns & 0xffffffffu;
            assert_true(id < RING_THREADS);
            assert_true(n >= next[id]); /* in its thread's order, some dropped between */
            next[id] = n + 1;
            got++;
        } else if (running == 0) {
            break;
        } else if (atomic_load(&ring_ch.head) - tail == 0 &&
                   got + atomic_load(&ring_ch.dropped) == (uint64_t)RING_THREADS * RING_EACH) {
            for (i = 0; i < RING_THREADS; i++) {
                pthread_join(t[i], NULL);
            }
            running = 0;
        }
    }
    assert_int_equal(got + atomic_load(&ring_ch.dropped), (uint64_t)RING_THREADS * RING_EACH);
    assert_true(got > 0);
}

/* A memfd of n bytes, sealed against shrinking if sealed. */
static int mirror_file(size_t n, bool sealed)
{
    int fd = memfd_create("test-mirror", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)n), 0);
    if (sealed) {
        assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    }
    return fd;
}

/* corund maps a client's mirrors (MIRROR) only from a regular file sealed
 * against shrinking that holds them all: a file the client could cut short
 * would kill the daemon at its next store. It stores an SM range into the
 * block's mirror, widened first, and nothing beyond the last block. */
static void mirrors_checked_before_mapped(void **state)
{
    uint8_t *base = NULL;
    char why[256];
    int fd, p[2];
    (void)state;

    fd = mirror_file(CORUN_MIRROR_BYTES, false);
    assert_int_equal(corun__mirror_open(fd, &base, why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "not sealed"));
    assert_null(base);
    close(fd);
    fd = mirror_file(CORUN_MIRROR_BYTES - 1, true);
    assert_int_equal(corun__mirror_open(fd, &base, why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "bytes"));
    close(fd);
    assert_int_equal(pipe(p), 0);
    assert_int_equal(corun__mirror_open(p[0], &base, why, sizeof(why)), CORUN_EINVAL);
    assert_non_null(strstr(why, "not a regular file"));
    close(p[0]);
    close(p[1]);

    fd = mirror_file(CORUN_MIRROR_BYTES, true);
    assert_int_equal(corun__mirror_open(fd, &base, why, sizeof(why)), CORUN_OK);
    assert_non_null(base);
    assert_int_not_equal(ftruncate(fd, 4096), 0); /* the client cannot cut it short */
    corun__mirror_range(base, 5, 8, 120);
    corun__mirror_range(base, CORUN_MIRROR_SLOTS, 1, 2); /* past the last block: nothing */
    {
        corun_mirror m;
        memcpy(&m, base + 5 * CORUN_MIRROR_STRIDE, sizeof(m));
        assert_int_equal(m.halt_gen, 0);
        assert_int_equal(m.evict_below, 0);
        assert_int_equal(m.sm_lo, 8);
        assert_int_equal(m.sm_hi_inv, ~120u);
    }
    {
        /* what the client sees through its own mapping */
        uint8_t *mine = mmap(NULL, CORUN_MIRROR_BYTES, PROT_READ, MAP_SHARED, fd, 0);
        assert_true(mine != MAP_FAILED);
        assert_memory_equal(mine + 5 * CORUN_MIRROR_STRIDE, base + 5 * CORUN_MIRROR_STRIDE,
                            sizeof(corun_mirror));
        munmap(mine, CORUN_MIRROR_BYTES);
    }
    corun__mirror_close(base);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mirrors_checked_before_mapped),
        cmocka_unit_test(round_trip_every_type),
        cmocka_unit_test(type_names),
        cmocka_unit_test(strings_copied_safely),
        cmocka_unit_test(every_bound),
        cmocka_unit_test(reply_statuses),
        cmocka_unit_test(strings_canonical),
        cmocka_unit_test(truncated_is_busy),
        cmocka_unit_test(back_to_back),
        cmocka_unit_test(bad_headers),
        cmocka_unit_test(encode_refuses),
        cmocka_unit_test(send_recv),
        cmocka_unit_test(split_and_timeout),
        cmocka_unit_test(peer_gone),
        cmocka_unit_test(fill_and_take),
        cmocka_unit_test(connect_paths),
        cmocka_unit_test(ring_order_full_and_bad),
        cmocka_unit_test(ring_threads),
    };
    /* a send to a closed peer must not need this; the test would die of SIGPIPE */
    signal(SIGPIPE, SIG_DFL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
