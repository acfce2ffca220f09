/*
 * thread.c — the threads libclang runs on.
 *
 * libclang parses on a thread of its own unless LIBCLANG_NOTHREADS is set;
 * corun-cc sets it, so every libclang call runs on a thread made here,
 * which has an alternate signal stack of its own for as long as it runs.
 * That stack is large enough that LLVM keeps it when it first registers its
 * signal handlers (it does so when it writes a file: the precompiled
 * header) instead of installing a malloc'd one, and the alternate stack
 * the thread had before (AddressSanitizer's) is put back before the thread
 * ends: ASan unmaps the alternate stack a thread has at its end as its own,
 * and unmapping LLVM's heap block fails ("unable to unmap").
 */
#define _GNU_SOURCE /* sigaltstack, pthread_setname_np */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cc/cc.h"
#include "corun/corun.h"

/* LLVM replaces an alternate stack smaller than MINSIGSTKSZ + 64 KiB; this
 * is more, with room for ASan's report of a fault. */
#define ALT_BYTES ((size_t)256 << 10)

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

int corun__cc_libclang_setup(void)
{
    return setenv("LIBCLANG_NOTHREADS", "1", 1) == 0 ? CORUN_OK : CORUN_ENOMEM;
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
    memset(t, 0, sizeof(*t));
    t->name = name;
    t->fn = fn;
    t->arg = arg;
    pthread_attr_t a;
    if (pthread_attr_init(&a) != 0) {
        return CORUN_ENOMEM;
    }
    int rc = pthread_attr_setstacksize(&a, stack);
    if (rc == 0) {
        rc = pthread_create(&t->th, &a, thread_main, t);
    }
    pthread_attr_destroy(&a);
    return rc == 0 ? CORUN_OK : CORUN_ENOMEM;
}

void *corun__cc_thread_join(corun__cc_thread *t)
{
    void *r = NULL;
    pthread_join(t->th, &r);
    return r;
}
