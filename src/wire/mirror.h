/*
 * mirror.h — corund's side of a client's signal mirrors (corun_ctl.h, the
 * relay). A coordinated client passes the file of its control blocks'
 * mirrors with MIRROR (SCM_RIGHTS); the daemon maps it, once it has checked
 * that it is a file sealed against shrinking that holds every mirror (a
 * client's file must not cut the daemon short: a store past its end would
 * kill the daemon), and stores an SM range into a block's mirror before it
 * writes the block itself (share.c), so the kernel's relay picks it up in
 * ~2 us. The file is the client's to scribble on: the daemon only writes it.
 */
#ifndef CORUN_WIRE_MIRROR_H
#define CORUN_WIRE_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "corun/corun_ctl.h"

/* Maps fd's mirrors (read and write, shared). CORUN_OK with *base, or
 * CORUN_EINVAL with why (not a regular file, not sealed against shrinking,
 * too small) or CORUN_EIO (mmap failed). fd stays the caller's. */
int corun__mirror_open(int fd, uint8_t **base, char *why, size_t why_len);
void corun__mirror_close(uint8_t *base);

/* Stores SM range [lo, hi] into the mirror of block `slot` (< CORUN_MIRROR_SLOTS),
 * as the signal's words are written: widen first, then narrow. */
void corun__mirror_range(uint8_t *base, uint32_t slot, uint32_t lo, uint32_t hi);

#endif
