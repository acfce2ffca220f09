/*
 * thread.c — the threads libclang runs on, and what a crash on them prints.
 *
 * libclang parses on a thread of its own (8 MiB of stack) unless
 * LIBCLANG_NOTHREADS is set, and installs crash-recovery handlers without
 * SA_ONSTACK (a stack overflow then faults again inside them) unless
 * LIBCLANG_DISABLE_CRASH_RECOVERY is. corun-cc sets both, so every libclang
 * call runs on a thread made here, which has:
 *   - a large stack (deeply nested code recurses deeply in clang), mapped
 *     here with a guard zone below it: a fault in the zone is an overflow;
 *   - an alternate signal stack of its own, large enough that LLVM keeps it
 *     when it first registers its signal handlers (it does so when it writes
 *     a file: the precompiled header) instead of installing a malloc'd one.
 *     The alternate stack the thread had before (AddressSanitizer's) is put
 *     back before the thread ends: ASan unmaps the alternate stack a thread
 *     has at its end as its own, and unmapping LLVM's heap block fails.
 * The fault handler runs on that alternate stack: a fault in a guard zone
 * refuses the file, a fault inside a libclang call (reads.c knows when one
 * is in progress) is reported as a libclang crash; both exit 1 with nothing
 * written. Other faults go to the handler that was there before (the
 * default, or ASan's).
 */
#define _GNU_SOURCE /* sigaltstack, MAP_NORESERVE, MAP_STACK */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cc/cc.h"
#include "corun/corun.h"

/* Below each stack; a single libclang frame larger than this would skip it
 * and fault as a crash rather than an overflow. */
#define GUARD_BYTES ((size_t)4 << 20)
/* LLVM replaces an alternate stack smaller than MINSIGSTKSZ + 64 KiB; this
 * is more, with room for ASan's report of a fault that is not ours. */
#define ALT_BYTES ((size_t)256 << 10)
/* Threads with a stack at once: the transformation and the device parse. */
#define MAX_THREADS 8

static struct {
    _Atomic uintptr_t lo, hi;
} guards[MAX_THREADS];

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NFATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))
static struct sigaction previous[NFATAL];
static const char *crash_file = "input";
static atomic_int dying;

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static size_t alt_bytes(void)
{
    long min = sysconf(_SC_MINSIGSTKSZ);
    long page = sysconf(_SC_PAGESIZE);
    return round_up(ALT_BYTES + (size_t)(min > 0 ? min : MINSIGSTKSZ), (size_t)page);
}

static void say(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0) {
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

static int in_guard(uintptr_t a)
{
    for (size_t i = 0; i < MAX_THREADS; i++) {
        uintptr_t lo = atomic_load(&guards[i].lo), hi = atomic_load(&guards[i].hi);
        if (lo < hi && a >= lo && a < hi) {
            return 1;
        }
    }
    return 0;
}

/* Async-signal-safe: writes, _exit, sigaction and raise only. Not
 * instrumented: ASan would warn that _exit leaves from a stack it does not
 * know (the alternate one). */
__attribute__((no_sanitize_address)) static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int overflow = (sig == SIGSEGV || sig == SIGBUS) && si->si_code > 0 &&
                   in_guard((uintptr_t)si->si_addr);
    if (overflow || corun__cc_reads_inside()) {
        if (atomic_exchange(&dying, 1)) {
            for (;;) {
                pause(); /* the other parse thread is saying it already */
            }
        }
        if (overflow) {
            say("corun-cc: ");
            say(crash_file);
            say(": refused: the code is nested too deeply for the parser (stack overflow; "
                "--parse-stack SIZE gives it more)\n");
        } else {
            char num[8];
            size_t n = sizeof(num) - 1;
            num[n] = '\0';
            for (int v = sig; v > 0 && n > 0; v /= 10) {
                num[--n] = (char)('0' + v % 10);
            }
            say("corun-cc: libclang crashed while parsing ");
            say(crash_file);
            say(" (signal ");
            say(num + n);
            say(")\n");
        }
        _exit(1);
    }
    for (size_t i = 0; i < NFATAL; i++) {
        if (fatal_signals[i] == sig) {
            sigaction(sig, &previous[i], NULL);
        }
    }
    if (si->si_code <= 0) {
        raise(sig); /* sent, not a fault: returning would not repeat it */
    }
}

int corun__cc_libclang_setup(const char *file)
{
    if (setenv("LIBCLANG_NOTHREADS", "1", 1) != 0 ||
        setenv("LIBCLANG_DISABLE_CRASH_RECOVERY", "1", 1) != 0) {
        return CORUN_ENOMEM;
    }
    crash_file = file;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NFATAL; i++) {
        if (sigaction(fatal_signals[i], &sa, &previous[i]) != 0) {
            return CORUN_EINVAL;
        }
    }
    return CORUN_OK;
}

/* Enters t's guard zone in the table, if there is room (without, an
 * overflow on t is reported as a crash). lo is the claim and hi is set
 * last, so the handler never sees a zone [0, hi). */
static void claim_slot(corun__cc_thread *t)
{
    for (int i = 0; i < MAX_THREADS && t->slot < 0; i++) {
        uintptr_t none = 0;
        if (atomic_compare_exchange_strong(&guards[i].lo, &none, (uintptr_t)t->map)) {
            atomic_store(&guards[i].hi, (uintptr_t)t->map + GUARD_BYTES);
            t->slot = i;
        }
    }
}

static void free_slot(corun__cc_thread *t)
{
    if (t->slot >= 0) {
        atomic_store(&guards[t->slot].hi, 0);
        atomic_store(&guards[t->slot].lo, 0);
        t->slot = -1;
    }
}

static void *thread_main(void *arg)
{
    corun__cc_thread *t = arg;
    pthread_setname_np(pthread_self(), t->name);
    size_t alt = alt_bytes();
    stack_t ours, before;
    memset(&ours, 0, sizeof(ours));
    memset(&before, 0, sizeof(before));
    ours.ss_size = alt;
    ours.ss_sp = mmap(NULL, alt, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int swapped = ours.ss_sp != MAP_FAILED && sigaltstack(&ours, &before) == 0;

    void *r = t->fn(t->arg);

    if (swapped) {
        sigaltstack(&before, NULL); /* ASan unmaps the one a thread ends with */
    }
    if (ours.ss_sp != MAP_FAILED) {
        munmap(ours.ss_sp, alt);
    }
    return r;
}

int corun__cc_thread_start(corun__cc_thread *t, const char *name, size_t stack,
                           void *(*fn)(void *), void *arg)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    memset(t, 0, sizeof(*t));
    t->name = name;
    t->fn = fn;
    t->arg = arg;
    t->slot = -1;
    stack = round_up(stack, page);
    t->len = GUARD_BYTES + stack;
    /* reserved, not committed: only the pages a parse touches cost memory */
    void *m = mmap(NULL, t->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                   -1, 0);
    if (m == MAP_FAILED) {
        return CORUN_ENOMEM;
    }
    t->map = m;
    if (mprotect(t->map + GUARD_BYTES, stack, PROT_READ | PROT_WRITE) != 0) {
        goto out_unmap;
    }
    claim_slot(t);
    pthread_attr_t a;
    if (pthread_attr_init(&a) != 0) {
        goto out_free_slot;
    }
    int rc = pthread_attr_setstack(&a, t->map + GUARD_BYTES, stack);
    if (rc == 0) {
        rc = pthread_create(&t->th, &a, thread_main, t);
    }
    pthread_attr_destroy(&a);
    if (rc == 0) {
        return CORUN_OK;
    }
out_free_slot:
    free_slot(t);
out_unmap:
    munmap(t->map, t->len);
    t->map = NULL;
    return CORUN_ENOMEM;
}

void *corun__cc_thread_join(corun__cc_thread *t)
{
    void *r = NULL;
    pthread_join(t->th, &r);
    free_slot(t);
    munmap(t->map, t->len);
    t->map = NULL;
    return r;
}
