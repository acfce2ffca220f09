/*
 * proto.h — the wire protocol between libcorun (a client process) and corund,
 * over one Unix stream socket per client.
 *
 * Framing. Every message is a 16-byte header and a payload:
 *   u32 magic (CORUN_PROTO_MAGIC), u16 version (CORUN_PROTO_VERSION),
 *   u16 type (corun__msg_type), u32 len (payload bytes, <= CORUN_PROTO_MAX_PAYLOAD),
 *   u32 seq (the request's number; a reply carries its request's)
 * All integers little-endian, fixed width, packed with no padding; doubles as
 * their IEEE-754 bits in a u64; strings as fixed-size fields that hold a NUL
 * within the field and nothing but printable ASCII before it. The payload
 * layout of each type is written once, in proto.c's table.
 *
 * Conversation. A client speaks first (HELLO); the daemon answers WELCOME
 * or REPLY with an error and closes. An observer (`corun status`, `corun
 * trace`) sends STATUS or TRACE with no HELLO and is never listed as a
 * client. After that every request gets
 * exactly one REPLY with its seq, in the order asked, except STATUS and
 * TRACE, whose answer is DATA messages (JSON text in pieces) ending with a
 * REPLY. WAIT is answered when the job has finished or its timeout passed.
 * The daemon never sends anything unasked.
 *
 * Trust. The daemon decodes every client byte with corun__proto_decode,
 * which checks every field against the bounds below; a message that fails
 * ends that client's connection only (its jobs are halted and dropped), and
 * nothing in it reaches the scheduler. Jobs are named by ids the client
 * chose, looked up in that client's own table: a client cannot name another
 * client's job. The daemon takes the peer's pid, uid and gid from
 * SO_PEERCRED, never from a message (HELLO's pid is only checked against it).
 *
 * Nothing here prints or allocates.
 */
#ifndef CORUN_WIRE_PROTO_H
#define CORUN_WIRE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define CORUN_PROTO_MAGIC 0x444e5243u /* "CRND" little-endian */
#define CORUN_PROTO_VERSION 1u
#define CORUN_PROTO_HEADER 16u
#define CORUN_PROTO_MAX_PAYLOAD 65536u
#define CORUN_PROTO_MAX_MSG (CORUN_PROTO_HEADER + CORUN_PROTO_MAX_PAYLOAD)

#define CORUN_PROTO_NAME 64u  /* kernel names, commands, GPU names (with the NUL) */
#define CORUN_PROTO_WORD 32u  /* backend, policy, mode names (with the NUL) */
#define CORUN_PROTO_WHY 256u  /* an error's sentence (with the NUL) */
/* Largest value of a grid or block dimension and of a CapSM count. */
#define CORUN_PROTO_MAX_DIM 2147483647u
#define CORUN_PROTO_MAX_BLOCK 1024u
#define CORUN_PROTO_MAX_CAPSM 4096u

typedef enum corun__msg_type {
    /* client -> daemon */
    CORUN_MSG_HELLO = 1,    /* first message: who the client is, its defaults */
    CORUN_MSG_REGISTER = 2, /* a simulated kernel (corun_sim_kernel_register) */
    CORUN_MSG_LAUNCH = 3,   /* a launch of a registered kernel (corun_launch) */
    CORUN_MSG_WAIT = 4,     /* answer when job `job` has finished, or after timeout_ms */
    CORUN_MSG_PREEMPT = 5,
    CORUN_MSG_RESUME = 6,   /* capsm: 0 = what it asked for */
    CORUN_MSG_RESIZE = 7,
    CORUN_MSG_PROGRESS = 8, /* REPLY: tasks, claimed, done, live, task_ns, capsm */
    CORUN_MSG_RELEASE = 9,
    CORUN_MSG_STATUS = 10,  /* DATA: the daemon's state as JSON (status.h schema) */
    CORUN_MSG_TRACE = 11,   /* DATA: a Chrome trace of the next `ms` milliseconds */
    CORUN_MSG_BYE = 12,     /* the client leaves; its unfinished jobs are halted */
    CORUN_MSG_MIRROR = 13,  /* a coordinated client's signal mirrors (mirror.h): their
                               file passed along (SCM_RIGHTS); REPLY */
    /* daemon -> client */
    CORUN_MSG_WELCOME = 64,
    CORUN_MSG_REPLY = 65,
    CORUN_MSG_DATA = 66
} corun__msg_type;

typedef struct corun__msg_hello {
    uint32_t pid;                    /* checked against SO_PEERCRED */
    uint32_t gpu;                    /* device ordinal the client uses */
    uint8_t cls;                     /* corun_class: its launches' default class */
    int32_t priority;                /* default priority, [-1000, 1000] */
    uint32_t weight;                 /* default weight, [0, 1000000] */
    uint32_t capsm;                  /* default reservation / quota, [0, MAX_CAPSM] */
    char command[CORUN_PROTO_NAME];  /* the program's name, for status */
} corun__msg_hello;

typedef struct corun__msg_welcome {
    uint32_t client;                 /* the daemon's number for this connection */
    uint32_t sm_count;
    char backend[CORUN_PROTO_WORD];  /* "sim", "cuda" */
    char policy[CORUN_PROTO_WORD];
    char mode[CORUN_PROTO_WORD];     /* "sim", "mps", "time-sliced" */
    char gpu_name[CORUN_PROTO_NAME];
} corun__msg_welcome;

typedef struct corun__msg_register {
    uint32_t kernel;                 /* the client's id for it, unique per connection */
    char name[CORUN_PROTO_NAME];     /* not empty */
    double task_us;                  /* finite, (0, 1e9] */
    uint32_t regs;                   /* [0, 255] */
    uint8_t ahead;                   /* 0 or 1 */
    uint32_t flags;                  /* CORUN_KERNEL_* bits only */
} corun__msg_register;

typedef struct corun__msg_launch {
    uint32_t kernel;                 /* a REGISTERed id */
    uint32_t job;                    /* the client's id for the job, unique among its live jobs */
    uint32_t grid[3];                /* each [1, MAX_DIM] */
    uint32_t block[3];               /* each >= 1, product <= MAX_BLOCK */
    uint32_t smem;                   /* dynamic shared memory, [0, 1 << 20] */
    uint8_t cls;                     /* corun_class */
    uint32_t capsm;                  /* [0, MAX_CAPSM] */
    int32_t priority;                /* [-1000, 1000] */
    uint32_t weight;                 /* [0, 1000000] */
    double size_hint;                /* finite, >= 0 */
} corun__msg_launch;

/* WAIT, PREEMPT, RESUME, RESIZE, PROGRESS, RELEASE */
typedef struct corun__msg_job {
    uint32_t job;
    uint32_t capsm;                  /* RESUME, RESIZE: [0, MAX_CAPSM]; else 0 */
    int64_t timeout_ms;              /* WAIT: < 0 no limit, else <= 1e9; others send 0
                                        (any |v| <= 1e9 is accepted) */
} corun__msg_job;

typedef struct corun__msg_trace {
    uint32_t ms;                     /* [1, 3600000] */
} corun__msg_trace;

typedef struct corun__msg_reply {
    int32_t status;                  /* a corun_status */
    char why[CORUN_PROTO_WHY];       /* the error's sentence, "" on success */
    uint64_t v[6];                   /* results: PROGRESS fills tasks, claimed, done,
                                        live, task_ns, capsm; others 0 */
} corun__msg_reply;

/* A piece of a STATUS or TRACE answer; `data` points into the decoded buffer. */
typedef struct corun__msg_data {
    const char *data;
    uint32_t len;                    /* <= MAX_PAYLOAD - 4 */
} corun__msg_data;

typedef struct corun__msg {
    uint16_t type;                   /* corun__msg_type */
    uint32_t seq;
    union {
        corun__msg_hello hello;
        corun__msg_welcome welcome;
        corun__msg_register reg;
        corun__msg_launch launch;
        corun__msg_job job;          /* WAIT, PREEMPT, RESUME, RESIZE, PROGRESS, RELEASE */
        corun__msg_trace trace;
        corun__msg_reply reply;
        corun__msg_data data;
        /* STATUS, BYE, MIRROR: no payload */
    } u;
} corun__msg;

/* Encodes m into buf (cap bytes). Returns the message's size, or 0 if m
 * breaks the bounds above (the same checks as decoding) or cap is short. */
size_t corun__proto_encode(const corun__msg *m, uint8_t *buf, size_t cap);

/* Decodes the message at the start of buf[0, len).
 *  - CORUN_OK: *out holds it, *used its size in bytes;
 *  - CORUN_EBUSY: buf holds only part of a message so far (*used = 0): read more;
 *  - CORUN_EPARSE: malformed (bad magic or version, unknown type, a length
 *    that does not match the type, a field out of bounds, a string without
 *    its NUL or with a non-printable byte); why says which, *used = 0.
 * Never reads outside buf; out->u.data.data points into buf. */
int corun__proto_decode(const uint8_t *buf, size_t len, corun__msg *out, size_t *used, char *why,
                        size_t why_len);

/* Copies a string into a protocol field of `cap` bytes: truncated to fit,
 * non-printable bytes replaced by '?', NUL-terminated. */
void corun__proto_str(char *dst, size_t cap, const char *src);

/* The name of a message type ("LAUNCH"), or "?" for an unknown one. */
const char *corun__proto_type_name(unsigned type);

/* ---- blocking transport over a connected stream socket ------------------- */

/* A receive buffer: bytes read and not yet decoded. */
typedef struct corun__proto_rx {
    uint8_t buf[CORUN_PROTO_MAX_MSG];
    size_t len;  /* bytes in buf */
    size_t hold; /* bytes of the message last handed out, dropped at the next call */
    int fd_plus1; /* 1 + a descriptor corun__proto_recv received along (SCM_RIGHTS); 0: none */
} corun__proto_rx;

/* Connects to the daemon's socket at path (blocking, close-on-exec).
 * CORUN_OK with *fd; CORUN_ENOENT when nothing listens there (no such
 * file, or connection refused), CORUN_EIO for other failures (permission:
 * why names the path and the errno text). */
int corun__proto_connect(const char *path, int *fd, char *why, size_t why_len);

/* Encodes m and writes all of it to fd (MSG_NOSIGNAL: a closed peer gives
 * CORUN_EIO, never SIGPIPE). CORUN_EINVAL if m breaks the bounds. */
int corun__proto_send(int fd, const corun__msg *m);

/* corun__proto_send with descriptor `pass` sent along (SCM_RIGHTS; the
 * daemon's WELCOME carries the shared channel, channel.h). */
int corun__proto_send_fd(int fd, const corun__msg *m, int pass);

/* The descriptor the last corun__proto_recv calls received along, or -1;
 * the caller owns it (the rx forgets it). */
int corun__proto_take_fd(corun__proto_rx *rx);

/* Reads from fd until one whole message is decoded into *out (its data,
 * for DATA, stays valid until the next call with rx). timeout_ms < 0 waits
 * without limit. CORUN_OK; CORUN_ETIMEDOUT; CORUN_EIO when the peer closed
 * or the read failed; CORUN_EPARSE (why says what) for a malformed message,
 * after which the connection must be closed. */
int corun__proto_recv(int fd, corun__proto_rx *rx, corun__msg *out, int timeout_ms, char *why,
                      size_t why_len);

/* Non-blocking side of the daemon: one read() of what fd has into rx
 * (CORUN_OK, CORUN_EIO at end of stream or error, CORUN_EBUSY when nothing
 * was there), keeping a descriptor passed along as corun__proto_recv does,
 * then corun__proto_take pops decoded messages off rx's front (the decode
 * contract above; CORUN_EBUSY when no whole message is left). */
int corun__proto_fill(int fd, corun__proto_rx *rx);
int corun__proto_take(corun__proto_rx *rx, corun__msg *out, char *why, size_t why_len);

#endif
