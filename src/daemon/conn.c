/*
 * conn.c — sending to one connection (daemon_int.h): a message, a reply,
 * text in DATA pieces. A client that cannot take what is sent is marked
 * closing; the event loop (server.c) drops it at the end of its turn.
 */
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "daemon/daemon_int.h"

#define SUB "conn"

uint64_t corun__dnow(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void corun__dsend(corun__dclient *c, corun__msg *m)
{
    int rc;

    if (c->closing) {
        return;
    }
    rc = corun__proto_send(c->fd, m);
    if (rc != CORUN_OK) {
        CORUN_LOG(CORUN_LOG_INFO, SUB, "client %u (pid %d): cannot send %s: %s", c->id,
                  (int)c->pid, corun__proto_type_name(m->type), corun_strerror(rc));
        c->closing = true;
    }
}

void corun__dsend_fd(corun__dclient *c, corun__msg *m, int pass)
{
    int rc;

    if (c->closing) {
        return;
    }
    rc = corun__proto_send_fd(c->fd, m, pass);
    if (rc != CORUN_OK) {
        CORUN_LOG(CORUN_LOG_INFO, SUB, "client %u (pid %d): cannot send %s: %s", c->id,
                  (int)c->pid, corun__proto_type_name(m->type), corun_strerror(rc));
        c->closing = true;
    }
}

void corun__dreply(corun__dclient *c, uint32_t seq, int status, const char *why,
                   const uint64_t v[6])
{
    corun__msg m;

    memset(&m, 0, sizeof(m));
    m.type = CORUN_MSG_REPLY;
    m.seq = seq;
    m.u.reply.status = status;
    corun__proto_str(m.u.reply.why, sizeof(m.u.reply.why), why != NULL ? why : "");
    if (v != NULL) {
        memcpy(m.u.reply.v, v, sizeof(m.u.reply.v));
    }
    corun__dsend(c, &m);
}

void corun__dsend_text(corun__dclient *c, uint32_t seq, const char *text, size_t len)
{
    const size_t piece = CORUN_PROTO_MAX_PAYLOAD - 4;
    corun__msg m;
    size_t at;

    for (at = 0; at < len && !c->closing; at += piece) {
        memset(&m, 0, sizeof(m));
        m.type = CORUN_MSG_DATA;
        m.seq = seq;
        m.u.data.data = text + at;
        m.u.data.len = (uint32_t)(len - at < piece ? len - at : piece);
        corun__dsend(c, &m);
    }
    corun__dreply(c, seq, CORUN_OK, "", NULL);
}
