/*
 * proto.c — the wire protocol of proto.h: each type's payload layout in one
 * table (wire kind, place in the C struct, bounds) that encoding, decoding
 * and the checks all walk; then the transport over a Unix stream socket.
 *
 * The encoding is canonical: a message has exactly one byte form (strings
 * are zero-padded after their NUL, and decoding refuses any other padding),
 * so encode(decode(b)) == b for every b that decodes. fuzz/fuzz_proto.c
 * checks it.
 *
 * Nothing here prints or allocates.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "corun/corun.h"
#include "wire/proto.h"

/* ---- the layout table ------------------------------------------------------ */

typedef enum kind {
    K_U8,
    K_U32,
    K_I32,
    K_I64,
    K_U64,
    K_F64,
    K_STR,  /* n bytes: a NUL within, printable ASCII before it, zeros after */
    K_BYTES /* DATA only: u32 length, then that many bytes (corun__msg_data) */
} kind;

typedef enum check {
    C_ANY,
    C_RANGE,  /* lo <= v <= hi, each element (a double: also finite) */
    C_ABOVE,  /* a double: finite, lo < v <= hi */
    C_MIN,    /* a double: finite, v >= lo */
    C_BLOCK,  /* u32[3]: each >= 1, product <= hi */
    C_FLAGS,  /* no bit outside hi */
    C_STATUS, /* a corun_status */
    C_TEXT,   /* a string, empty allowed */
    C_NAME    /* a string, not empty */
} check;

typedef struct field {
    const char *name;
    uint16_t off;  /* in the member of corun__msg's union */
    uint8_t kind;
    uint8_t check;
    uint16_t n;    /* elements (1 for a scalar); K_STR: bytes of the field */
    int64_t lo, hi;
} field;

typedef struct layout {
    uint16_t type;
    const char *name;
    const field *f;
    size_t nf;
} layout;

#define AT(st, m) #m, offsetof(st, m)
#define STR(st, m, chk) {AT(st, m), K_STR, chk, sizeof(((st *)0)->m), 0, 0}
#define TIMEOUT_MAX 1000000000
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static const field hello_f[] = {
    {AT(corun__msg_hello, pid), K_U32, C_ANY, 1, 0, 0},
    {AT(corun__msg_hello, gpu), K_U32, C_ANY, 1, 0, 0},
    {AT(corun__msg_hello, cls), K_U8, C_RANGE, 1, CORUN_CLASS_BATCH, CORUN_CLASS_LS},
    {AT(corun__msg_hello, priority), K_I32, C_RANGE, 1, -1000, 1000},
    {AT(corun__msg_hello, weight), K_U32, C_RANGE, 1, 0, 1000000},
    {AT(corun__msg_hello, capsm), K_U32, C_RANGE, 1, 0, CORUN_PROTO_MAX_CAPSM},
    STR(corun__msg_hello, command, C_TEXT),
};

static const field welcome_f[] = {
    {AT(corun__msg_welcome, client), K_U32, C_ANY, 1, 0, 0},
    {AT(corun__msg_welcome, sm_count), K_U32, C_ANY, 1, 0, 0},
    STR(corun__msg_welcome, backend, C_TEXT),
    STR(corun__msg_welcome, policy, C_TEXT),
    STR(corun__msg_welcome, mode, C_TEXT),
    STR(corun__msg_welcome, gpu_name, C_TEXT),
};

static const field register_f[] = {
    {AT(corun__msg_register, kernel), K_U32, C_ANY, 1, 0, 0},
    STR(corun__msg_register, name, C_NAME),
    {AT(corun__msg_register, task_us), K_F64, C_ABOVE, 1, 0, 1000000000},
    {AT(corun__msg_register, regs), K_U32, C_RANGE, 1, 0, 255},
    {AT(corun__msg_register, ahead), K_U8, C_RANGE, 1, 0, 1},
    {AT(corun__msg_register, flags), K_U32, C_FLAGS, 1, 0, CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS},
};

static const field launch_f[] = {
    {AT(corun__msg_launch, kernel), K_U32, C_ANY, 1, 0, 0},
    {AT(corun__msg_launch, job), K_U32, C_ANY, 1, 0, 0},
    {AT(corun__msg_launch, grid), K_U32, C_RANGE, 3, 1, CORUN_PROTO_MAX_DIM},
    {AT(corun__msg_launch, block), K_U32, C_BLOCK, 3, 1, CORUN_PROTO_MAX_BLOCK},
    {AT(corun__msg_launch, smem), K_U32, C_RANGE, 1, 0, 1 << 20},
    {AT(corun__msg_launch, cls), K_U8, C_RANGE, 1, CORUN_CLASS_BATCH, CORUN_CLASS_LS},
    {AT(corun__msg_launch, capsm), K_U32, C_RANGE, 1, 0, CORUN_PROTO_MAX_CAPSM},
    {AT(corun__msg_launch, priority), K_I32, C_RANGE, 1, -1000, 1000},
    {AT(corun__msg_launch, weight), K_U32, C_RANGE, 1, 0, 1000000},
    {AT(corun__msg_launch, size_hint), K_F64, C_MIN, 1, 0, 0},
};

/* The job messages share one layout; only capsm's and timeout_ms's bounds differ. */
#define JOB_FIELDS(capsm_max, timeout_min)                                              \
    {AT(corun__msg_job, job), K_U32, C_ANY, 1, 0, 0},                                   \
        {AT(corun__msg_job, capsm), K_U32, C_RANGE, 1, 0, capsm_max},                   \
        {AT(corun__msg_job, timeout_ms), K_I64, C_RANGE, 1, timeout_min, TIMEOUT_MAX}
static const field wait_f[] = {JOB_FIELDS(0, INT64_MIN)};
static const field job_f[] = {JOB_FIELDS(0, -TIMEOUT_MAX)};
static const field job_capsm_f[] = {JOB_FIELDS(CORUN_PROTO_MAX_CAPSM, -TIMEOUT_MAX)};

static const field trace_f[] = {
    {AT(corun__msg_trace, ms), K_U32, C_RANGE, 1, 1, 3600000},
};

static const field reply_f[] = {
    {AT(corun__msg_reply, status), K_I32, C_STATUS, 1, 0, 0},
    STR(corun__msg_reply, why, C_TEXT),
    {AT(corun__msg_reply, v), K_U64, C_ANY, 6, 0, 0},
};

static const field data_f[] = {
    {"data", 0, K_BYTES, C_RANGE, 1, 0, CORUN_PROTO_MAX_PAYLOAD - 4},
};

static const layout layouts[] = {
    {CORUN_MSG_HELLO, "HELLO", hello_f, NFIELDS(hello_f)},
    {CORUN_MSG_REGISTER, "REGISTER", register_f, NFIELDS(register_f)},
    {CORUN_MSG_LAUNCH, "LAUNCH", launch_f, NFIELDS(launch_f)},
    {CORUN_MSG_WAIT, "WAIT", wait_f, NFIELDS(wait_f)},
    {CORUN_MSG_PREEMPT, "PREEMPT", job_f, NFIELDS(job_f)},
    {CORUN_MSG_RESUME, "RESUME", job_capsm_f, NFIELDS(job_capsm_f)},
    {CORUN_MSG_RESIZE, "RESIZE", job_capsm_f, NFIELDS(job_capsm_f)},
    {CORUN_MSG_PROGRESS, "PROGRESS", job_f, NFIELDS(job_f)},
    {CORUN_MSG_RELEASE, "RELEASE", job_f, NFIELDS(job_f)},
    {CORUN_MSG_STATUS, "STATUS", NULL, 0},
    {CORUN_MSG_TRACE, "TRACE", trace_f, NFIELDS(trace_f)},
    {CORUN_MSG_BYE, "BYE", NULL, 0},
    {CORUN_MSG_MIRROR, "MIRROR", NULL, 0},
    {CORUN_MSG_WELCOME, "WELCOME", welcome_f, NFIELDS(welcome_f)},
    {CORUN_MSG_REPLY, "REPLY", reply_f, NFIELDS(reply_f)},
    {CORUN_MSG_DATA, "DATA", data_f, NFIELDS(data_f)},
};

/* The largest header and payload without DATA's bytes (REPLY's: 324 bytes),
 * what corun__proto_send encodes on its stack. */
#define HEAD_MAX 512u

static const layout *layout_of(unsigned type)
{
    size_t i;

    for (i = 0; i < NFIELDS(layouts); i++) {
        if (layouts[i].type == type) {
            return &layouts[i];
        }
    }
    return NULL;
}

/* Bytes of one element on the wire and in the struct (the same for every
 * kind); a K_STR is n one-byte elements, K_BYTES counts its length word. */
static size_t width(const field *f)
{
    switch ((kind)f->kind) {
    case K_U8:
    case K_STR:
        return 1;
    case K_U32:
    case K_I32:
    case K_BYTES:
        return 4;
    case K_I64:
    case K_U64:
    case K_F64:
        return 8;
    }
    return 0;
}

/* The payload's size in bytes: the table's fields plus, for DATA, its bytes. */
static size_t payload_size(const layout *L, const corun__msg *m)
{
    size_t i, n = 0;

    for (i = 0; i < L->nf; i++) {
        n += width(&L->f[i]) * L->f[i].n;
        if (L->f[i].kind == K_BYTES) {
            n += m->u.data.len;
        }
    }
    return n;
}

/* ---- little-endian bytes --------------------------------------------------- */

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* Two's complement back to signed, without implementation-defined casts. */
static int32_t to_i32(uint32_t u)
{
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

static int64_t to_i64(uint64_t u)
{
    return u <= INT64_MAX ? (int64_t)u : (int64_t)(u - 0x8000000000000000u) + INT64_MIN;
}

/* ---- one element between the wire (w) and the struct (s) ------------------- */

static void load(kind k, const uint8_t *w, uint8_t *s)
{
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    int64_t i64;
    double d;

    switch (k) {
    case K_U8:
    case K_STR:
        *s = *w;
        break;
    case K_U32:
        u32 = get32(w);
        memcpy(s, &u32, sizeof(u32));
        break;
    case K_I32:
        i32 = to_i32(get32(w));
        memcpy(s, &i32, sizeof(i32));
        break;
    case K_I64:
        i64 = to_i64(get64(w));
        memcpy(s, &i64, sizeof(i64));
        break;
    case K_U64:
        u64 = get64(w);
        memcpy(s, &u64, sizeof(u64));
        break;
    case K_F64:
        u64 = get64(w);
        memcpy(&d, &u64, sizeof(d));
        memcpy(s, &d, sizeof(d));
        break;
    case K_BYTES:
        break;
    }
}

static void store(kind k, const uint8_t *s, uint8_t *w)
{
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    int64_t i64;

    switch (k) {
    case K_U8:
    case K_STR:
        *w = *s;
        break;
    case K_U32:
        memcpy(&u32, s, sizeof(u32));
        put32(w, u32);
        break;
    case K_I32:
        memcpy(&i32, s, sizeof(i32));
        put32(w, (uint32_t)i32);
        break;
    case K_I64:
        memcpy(&i64, s, sizeof(i64));
        put64(w, (uint64_t)i64);
        break;
    case K_U64:
    case K_F64: /* a double's IEEE-754 bits, as they are */
        memcpy(&u64, s, sizeof(u64));
        put64(w, u64);
        break;
    case K_BYTES:
        break;
    }
}

/* An integer element as int64 (not for K_U64, which is never bounded). */
static int64_t int_at(kind k, const uint8_t *s)
{
    uint32_t u32;
    int32_t i32;
    int64_t i64;

    switch (k) {
    case K_U8:
        return *s;
    case K_U32:
        memcpy(&u32, s, sizeof(u32));
        return u32;
    case K_I32:
        memcpy(&i32, s, sizeof(i32));
        return i32;
    case K_I64:
        memcpy(&i64, s, sizeof(i64));
        return i64;
    default:
        return 0;
    }
}

/* ---- the checks, shared by encode and decode -------------------------------- */

__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t why_len, const char *fmt,
                                                    ...)
{
    va_list ap;

    if (why != NULL && why_len > 0) {
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return CORUN_EPARSE;
}

static bool known_status(int64_t v)
{
    switch (v) {
#define CORUN__STATUS_CASE(name, value, msg) case value:
        CORUN_STATUS_MAP(CORUN__STATUS_CASE)
#undef CORUN__STATUS_CASE
        return true;
    default:
        return false;
    }
}

/* A string field in the struct: a NUL within, printable ASCII before it. */
static int check_text(const layout *L, const field *f, const uint8_t *s, char *why, size_t why_len)
{
    const uint8_t *nul = memchr(s, 0, f->n);
    size_t i;

    if (nul == NULL) {
        return bad(why, why_len, "%s: %s has no NUL within its %u bytes", L->name, f->name, f->n);
    }
    for (i = 0; s + i < nul; i++) {
        if (s[i] < 0x20 || s[i] > 0x7e) {
            return bad(why, why_len, "%s: %s has the non-printable byte 0x%02x at %zu", L->name,
                       f->name, s[i], i);
        }
    }
    if (f->check == C_NAME && nul == s) {
        return bad(why, why_len, "%s: %s is empty", L->name, f->name);
    }
    return CORUN_OK;
}

/* Each element of a bounded number (C_RANGE, C_ABOVE, C_MIN) within its bounds. */
static int check_number(const layout *L, const field *f, const uint8_t *s, char *why,
                        size_t why_len)
{
    uint16_t i;

    for (i = 0; i < f->n; i++) {
        const uint8_t *e = s + i * width(f);
        char name[48];
        double d = 0;
        int64_t v = 0;
        bool ok;

        if (f->kind == K_F64) {
            memcpy(&d, e, sizeof(d));
            ok = isfinite(d) && (f->check == C_ABOVE ? d > (double)f->lo : d >= (double)f->lo) &&
                 (f->check == C_MIN || d <= (double)f->hi);
        } else {
            v = int_at((kind)f->kind, e);
            ok = v >= f->lo && v <= f->hi;
        }
        if (ok) {
            continue;
        }
        if (f->n > 1) {
            snprintf(name, sizeof(name), "%s[%u]", f->name, i);
        } else {
            snprintf(name, sizeof(name), "%s", f->name);
        }
        if (f->kind != K_F64) {
            return bad(why, why_len, "%s: %s %lld is outside [%lld, %lld]", L->name, name,
                       (long long)v, (long long)f->lo, (long long)f->hi);
        }
        if (!isfinite(d)) {
            return bad(why, why_len, "%s: %s %g is not finite", L->name, name, d);
        }
        if (f->check == C_MIN) {
            return bad(why, why_len, "%s: %s %g is below %lld", L->name, name, d, (long long)f->lo);
        }
        return bad(why, why_len, "%s: %s %g is outside %c%lld, %lld]", L->name, name, d,
                   f->check == C_ABOVE ? '(' : '[', (long long)f->lo, (long long)f->hi);
    }
    return CORUN_OK;
}

/* One field of m against its check; decode calls it as each field is read. */
static int check_field(const layout *L, const field *f, const corun__msg *m, char *why,
                       size_t why_len)
{
    const uint8_t *s = (const uint8_t *)&m->u + f->off;
    uint32_t d[3];
    uint64_t threads;
    int64_t v;

    switch ((check)f->check) {
    case C_ANY:
        return CORUN_OK;
    case C_TEXT:
    case C_NAME:
        return check_text(L, f, s, why, why_len);
    case C_RANGE:
        if (f->kind == K_BYTES) {
            if (m->u.data.len > f->hi) {
                return bad(why, why_len, "%s: %u bytes are more than %lld", L->name,
                           m->u.data.len, (long long)f->hi);
            }
            if (m->u.data.len > 0 && m->u.data.data == NULL) {
                return bad(why, why_len, "%s: %u bytes at NULL", L->name, m->u.data.len);
            }
            return CORUN_OK;
        }
        return check_number(L, f, s, why, why_len);
    case C_ABOVE:
    case C_MIN:
        return check_number(L, f, s, why, why_len);
    case C_BLOCK:
        memcpy(d, s, sizeof(d));
        if (d[0] == 0 || d[1] == 0 || d[2] == 0) {
            return bad(why, why_len, "%s: %s %ux%ux%u has a zero dimension", L->name, f->name,
                       d[0], d[1], d[2]);
        }
        threads = (uint64_t)d[0] * d[1];
        if (threads > (uint64_t)f->hi || threads * d[2] > (uint64_t)f->hi) {
            return bad(why, why_len, "%s: %s %ux%ux%u has more than %lld threads", L->name,
                       f->name, d[0], d[1], d[2], (long long)f->hi);
        }
        return CORUN_OK;
    case C_FLAGS:
        v = int_at((kind)f->kind, s);
        if ((v & ~f->hi) != 0) {
            return bad(why, why_len, "%s: %s 0x%llx has unknown bits 0x%llx", L->name, f->name,
                       (unsigned long long)v, (unsigned long long)(v & ~f->hi));
        }
        return CORUN_OK;
    case C_STATUS:
        v = int_at((kind)f->kind, s);
        if (!known_status(v)) {
            return bad(why, why_len, "%s: %s %lld is not a corun_status", L->name, f->name,
                       (long long)v);
        }
        return CORUN_OK;
    }
    return bad(why, why_len, "%s: %s has no check", L->name, f->name);
}

/* m against its type's table. CORUN_OK with *out its layout, or CORUN_EPARSE. */
static int check_msg(const corun__msg *m, const layout **out, char *why, size_t why_len)
{
    const layout *L = layout_of(m->type);
    size_t i;
    int rc;

    if (L == NULL) {
        return bad(why, why_len, "unknown message type %u", m->type);
    }
    for (i = 0; i < L->nf; i++) {
        rc = check_field(L, &L->f[i], m, why, why_len);
        if (rc != CORUN_OK) {
            return rc;
        }
    }
    *out = L;
    return CORUN_OK;
}

/* ---- encode and decode ----------------------------------------------------- */

/* Writes m's header and payload, but not DATA's bytes, into buf (cap bytes).
 * Returns the bytes written, or 0 if they do not fit. m is checked already. */
static size_t put_head(const layout *L, const corun__msg *m, uint8_t *buf, size_t cap)
{
    size_t plen = payload_size(L, m), at = CORUN_PROTO_HEADER, i;
    uint16_t k;

    if (cap < CORUN_PROTO_HEADER + plen - (m->type == CORUN_MSG_DATA ? m->u.data.len : 0)) {
        return 0;
    }
    put32(buf, CORUN_PROTO_MAGIC);
    put16(buf + 4, CORUN_PROTO_VERSION);
    put16(buf + 6, m->type);
    put32(buf + 8, (uint32_t)plen);
    put32(buf + 12, m->seq);
    for (i = 0; i < L->nf; i++) {
        const field *f = &L->f[i];
        const uint8_t *s = (const uint8_t *)&m->u + f->off;
        size_t w = width(f);
        bool past_nul = false;

        if (f->kind == K_BYTES) {
            put32(buf + at, m->u.data.len);
            at += 4;
            continue;
        }
        for (k = 0; k < f->n; k++) {
            /* strings: zeros after the NUL, whatever the struct holds there */
            if (past_nul) {
                buf[at] = 0;
            } else {
                store((kind)f->kind, s + k * w, buf + at);
            }
            past_nul = past_nul || (f->kind == K_STR && s[k] == 0);
            at += w;
        }
    }
    return at;
}

size_t corun__proto_encode(const corun__msg *m, uint8_t *buf, size_t cap)
{
    const layout *L = NULL;
    size_t n, size;

    if (check_msg(m, &L, NULL, 0) != CORUN_OK) {
        return 0;
    }
    size = CORUN_PROTO_HEADER + payload_size(L, m);
    if (size > cap) {
        return 0;
    }
    n = put_head(L, m, buf, cap);
    if (m->type == CORUN_MSG_DATA && m->u.data.len > 0) {
        memcpy(buf + n, m->u.data.data, m->u.data.len);
    }
    return size;
}

/* Reads L's fields from the payload p (plen bytes, its size checked) into m,
 * checking each as it comes, and what only the wire can break: zeros after a
 * string's NUL, DATA's length word. */
static int read_fields(const layout *L, const uint8_t *p, uint32_t plen, corun__msg *m, char *why,
                       size_t why_len)
{
    size_t i, at = 0;
    uint16_t k;
    int rc;

    for (i = 0; i < L->nf; i++) {
        const field *f = &L->f[i];
        uint8_t *s = (uint8_t *)&m->u + f->off;
        size_t w = width(f);

        if (f->kind == K_BYTES) {
            m->u.data.len = get32(p + at);
            m->u.data.data = (const char *)(p + at + 4);
            if (m->u.data.len != plen - at - 4) {
                return bad(why, why_len, "%s: length word %u, but %u bytes follow it", L->name,
                           m->u.data.len, (unsigned)(plen - at - 4));
            }
            at += 4 + m->u.data.len;
        } else {
            for (k = 0; k < f->n; k++) {
                load((kind)f->kind, p + at, s + k * w);
                at += w;
            }
        }
        rc = check_field(L, f, m, why, why_len);
        if (rc != CORUN_OK) {
            return rc;
        }
        if (f->kind == K_STR) {
            const uint8_t *nul = memchr(s, 0, f->n);
            for (k = (uint16_t)(nul - s); k < f->n; k++) {
                if (s[k] != 0) {
                    return bad(why, why_len, "%s: %s has the byte 0x%02x after its NUL", L->name,
                               f->name, s[k]);
                }
            }
        }
    }
    return CORUN_OK;
}

int corun__proto_decode(const uint8_t *buf, size_t len, corun__msg *out, size_t *used, char *why,
                        size_t why_len)
{
    corun__msg m;
    const layout *L = NULL;
    uint32_t plen;
    size_t want;
    int rc;

    *used = 0;
    if (len < CORUN_PROTO_HEADER) {
        return CORUN_EBUSY;
    }
    if (get32(buf) != CORUN_PROTO_MAGIC) {
        return bad(why, why_len, "bad magic 0x%08x: not corun's protocol", get32(buf));
    }
    if (get16(buf + 4) != CORUN_PROTO_VERSION) {
        return bad(why, why_len, "protocol version %u, this side speaks %u", get16(buf + 4),
                   CORUN_PROTO_VERSION);
    }
    memset(&m, 0, sizeof(m));
    m.type = get16(buf + 6);
    m.seq = get32(buf + 12);
    plen = get32(buf + 8);
    L = layout_of(m.type);
    if (L == NULL) {
        return bad(why, why_len, "unknown message type %u", m.type);
    }
    if (plen > CORUN_PROTO_MAX_PAYLOAD) {
        return bad(why, why_len, "%s: payload of %u bytes is over the limit of %u", L->name, plen,
                   CORUN_PROTO_MAX_PAYLOAD);
    }
    want = payload_size(L, &m); /* DATA: its length word alone, m's len being 0 */
    if (m.type == CORUN_MSG_DATA ? plen < want : plen != want) {
        return bad(why, why_len, "%s: payload of %u bytes, expected %s%zu", L->name, plen,
                   m.type == CORUN_MSG_DATA ? "at least " : "", want);
    }
    if (len - CORUN_PROTO_HEADER < plen) {
        return CORUN_EBUSY;
    }
    rc = read_fields(L, buf + CORUN_PROTO_HEADER, plen, &m, why, why_len);
    if (rc != CORUN_OK) {
        return rc;
    }
    *out = m;
    *used = CORUN_PROTO_HEADER + plen;
    return CORUN_OK;
}

void corun__proto_str(char *dst, size_t cap, const char *src)
{
    size_t i = 0;

    if (cap == 0) {
        return;
    }
    for (; src != NULL && i + 1 < cap && src[i] != '\0'; i++) {
        dst[i] = src[i] >= 0x20 && src[i] <= 0x7e ? src[i] : '?';
    }
    memset(dst + i, 0, cap - i);
}

const char *corun__proto_type_name(unsigned type)
{
    const layout *L = layout_of(type);

    return L != NULL ? L->name : "?";
}

/* ---- transport ------------------------------------------------------------- */

int corun__proto_connect(const char *path, int *fd, char *why, size_t why_len)
{
    struct sockaddr_un sa;
    size_t n = strlen(path);
    int s, rc;

    if (n == 0 || n >= sizeof(sa.sun_path)) {
        bad(why, why_len, "socket path '%s' is %zu bytes; a Unix socket's holds 1 to %zu", path,
            n, sizeof(sa.sun_path) - 1);
        return CORUN_EINVAL;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, n + 1);
    s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        bad(why, why_len, "cannot make a socket for %s: %s", path, strerror(errno));
        return CORUN_EIO;
    }
    /* A Unix stream connect interrupted while it waits stays unconnected: ask again. */
    do {
        rc = connect(s, (const struct sockaddr *)&sa, sizeof(sa));
    } while (rc != 0 && errno == EINTR);
    if (rc == 0 || errno == EISCONN) {
        *fd = s;
        return CORUN_OK;
    }
    rc = errno == ENOENT || errno == ECONNREFUSED ? CORUN_ENOENT : CORUN_EIO;
    bad(why, why_len, "%s %s: %s", rc == CORUN_ENOENT ? "nothing listens at" : "cannot connect to",
        path, strerror(errno));
    close(s);
    return rc;
}

/* Writes every byte of iov[0, cnt) to fd; waits when a non-blocking fd is full. */
static int write_all(int fd, struct iovec *iov, int cnt, int pass)
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;

    while (cnt > 0) {
        struct msghdr mh;
        ssize_t w;

        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = iov;
        mh.msg_iovlen = (size_t)cnt;
        if (pass >= 0) {
            /* the descriptor rides on the message's first bytes, sent once */
            struct cmsghdr *c;
            memset(&ctl, 0, sizeof(ctl));
            mh.msg_control = ctl.b;
            mh.msg_controllen = sizeof(ctl.b);
            c = CMSG_FIRSTHDR(&mh);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(c), &pass, sizeof(int));
        }
        w = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (w > 0) {
            pass = -1;
        }
        if (w < 0) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            if (errno == EINTR) {
                continue;
            }
            if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
                (poll(&pf, 1, -1) >= 0 || errno == EINTR)) {
                continue;
            }
            return CORUN_EIO;
        }
        while (cnt > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            cnt--;
        }
        if (cnt > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return CORUN_OK;
}

static int send_msg(int fd, const corun__msg *m, int pass);

int corun__proto_send(int fd, const corun__msg *m)
{
    return send_msg(fd, m, -1);
}

int corun__proto_send_fd(int fd, const corun__msg *m, int pass)
{
    return pass < 0 ? CORUN_EINVAL : send_msg(fd, m, pass);
}

static int send_msg(int fd, const corun__msg *m, int pass)
{
    uint8_t head[HEAD_MAX];
    struct iovec iov[2];
    const layout *L = NULL;
    int cnt = 1;

    if (check_msg(m, &L, NULL, 0) != CORUN_OK) {
        return CORUN_EINVAL;
    }
    iov[0].iov_base = head;
    iov[0].iov_len = put_head(L, m, head, sizeof(head));
    if (iov[0].iov_len == 0) {
        return CORUN_EINVAL; /* a table grown past HEAD_MAX */
    }
    if (m->type == CORUN_MSG_DATA && m->u.data.len > 0) {
        iov[1].iov_base = (void *)(uintptr_t)m->u.data.data;
        iov[1].iov_len = m->u.data.len;
        cnt = 2;
    }
    return write_all(fd, iov, cnt, pass);
}

/* Forgets the message handed out last (proto.h: its bytes live until the next call). */
static void drop_held(corun__proto_rx *rx)
{
    if (rx->hold > 0) {
        size_t hold = rx->hold < rx->len ? rx->hold : rx->len;
        memmove(rx->buf, rx->buf + hold, rx->len - hold);
        rx->len -= hold;
        rx->hold = 0;
    }
}

int corun__proto_take(corun__proto_rx *rx, corun__msg *out, char *why, size_t why_len)
{
    size_t used;
    int rc;

    drop_held(rx);
    rc = corun__proto_decode(rx->buf, rx->len, out, &used, why, why_len);
    if (rc == CORUN_OK) {
        rx->hold = used;
    }
    return rc;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is readable (or hung up) or the deadline (< 0: none) passed. */
static int wait_readable(int fd, int64_t deadline)
{
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int wait = -1, n;

        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            wait = left <= 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
        }
        n = poll(&pf, 1, wait);
        if (n > 0) {
            return pf.revents & POLLNVAL ? CORUN_EIO : CORUN_OK;
        }
        if (n == 0 && wait == 0) {
            return CORUN_ETIMEDOUT;
        }
        if (n < 0 && errno != EINTR) {
            return CORUN_EIO;
        }
    }
}

/* read() into rx's free space that also takes a descriptor passed along
 * (SCM_RIGHTS): the last one is kept in rx, any earlier one closed. flags:
 * recvmsg's (MSG_DONTWAIT for the daemon's non-blocking reads). */
static ssize_t read_keep_fd(int fd, corun__proto_rx *rx, int flags)
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int) * 4)];
    } ctl;
    struct iovec iov = {rx->buf + rx->len, sizeof(rx->buf) - rx->len};
    struct msghdr mh;
    struct cmsghdr *c;
    ssize_t n;

    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.b;
    mh.msg_controllen = sizeof(ctl.b);
    n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | flags);
    if (n < 0 && errno == ENOTSOCK) {
        return read(fd, rx->buf + rx->len, sizeof(rx->buf) - rx->len);
    }
    for (c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c != NULL; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k, nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (k = 0; k < nfd; k++) {
                int got;
                memcpy(&got, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
                if (rx->fd_plus1 > 0) {
                    close(rx->fd_plus1 - 1);
                }
                rx->fd_plus1 = got + 1;
            }
        }
    }
    return n;
}

int corun__proto_recv(int fd, corun__proto_rx *rx, corun__msg *out, int timeout_ms, char *why,
                      size_t why_len)
{
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    int rc;

    for (;;) {
        ssize_t n;

        rc = corun__proto_take(rx, out, why, why_len);
        if (rc != CORUN_EBUSY) {
            return rc;
        }
        if (rx->len == sizeof(rx->buf)) {
            return CORUN_EIO; /* cannot be: a whole message fits the buffer */
        }
        rc = wait_readable(fd, deadline);
        if (rc != CORUN_OK) {
            return rc;
        }
        n = read_keep_fd(fd, rx, 0);
        if (n > 0) {
            rx->len += (size_t)n;
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
            return CORUN_EIO;
        }
    }
}

int corun__proto_take_fd(corun__proto_rx *rx)
{
    int fd = rx->fd_plus1 - 1;

    rx->fd_plus1 = 0;
    return fd;
}

int corun__proto_fill(int fd, corun__proto_rx *rx)
{
    drop_held(rx);
    if (rx->len == sizeof(rx->buf)) {
        return CORUN_OK; /* full: a whole message waits to be taken */
    }
    for (;;) {
        /* a client's MIRROR passes its file along */
        ssize_t n = read_keep_fd(fd, rx, MSG_DONTWAIT);
        if (n > 0) {
            rx->len += (size_t)n;
            return CORUN_OK;
        }
        if (n == 0) {
            return CORUN_EIO;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return CORUN_EBUSY;
        }
        if (errno != EINTR) {
            return CORUN_EIO;
        }
    }
}
