/*
 * mirror.c — corund's side of a client's signal mirrors. See mirror.h.
 */
#define _GNU_SOURCE /* F_GET_SEALS */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/ctl.h"
#include "corun/corun.h"
#include "wire/mirror.h"

int corun__mirror_open(int fd, uint8_t **base, char *why, size_t why_len)
{
    struct stat st;
    int seals;
    void *p;

    *base = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "the mirrors' file is not a regular file");
        return CORUN_EINVAL;
    }
    seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
        snprintf(why, why_len, "the mirrors' file is not sealed against shrinking");
        return CORUN_EINVAL;
    }
    if ((uint64_t)st.st_size < CORUN_MIRROR_BYTES) {
        snprintf(why, why_len, "the mirrors' file holds %lld bytes, not %zu",
                 (long long)st.st_size, CORUN_MIRROR_BYTES);
        return CORUN_EINVAL;
    }
    p = mmap(NULL, CORUN_MIRROR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(why, why_len, "the mirrors' file cannot be mapped: %s", strerror(errno));
        return CORUN_EIO;
    }
    *base = p;
    return CORUN_OK;
}

void corun__mirror_close(uint8_t *base)
{
    if (base != NULL) {
        munmap(base, CORUN_MIRROR_BYTES);
    }
}

void corun__mirror_range(uint8_t *base, uint32_t slot, uint32_t lo, uint32_t hi)
{
    const corun__ctl_write w[2] = {
        {offsetof(corun_ctl, sm_hi_inv), 4, (uint32_t)~hi},
        {offsetof(corun_ctl, sm_lo), 4, lo},
    };

    if (base != NULL && slot < CORUN_MIRROR_SLOTS) {
        /* through an integer: the stride keeps every mirror aligned */
        corun__ctl_mirror((volatile corun_mirror *)(uintptr_t)(base + (size_t)slot *
                                                                          CORUN_MIRROR_STRIDE),
                          w, 2);
    }
}
