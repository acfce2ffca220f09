/*
 * corun_launch_stub.c — link-time stand-ins for the stream-ordered launch
 * API (corun.h) while libcorun does not define it yet: the tests link
 * transformed programs against it to prove they link. Every call reports
 * that no GPU runtime is available, so the launch shim runs plain kernels.
 * Never part of the library; the tests use it only when libcorun.so lacks
 * these symbols.
 */
#include <stddef.h>

#include "corun/corun.h"

corun_ctx *corun_default_ctx(void)
{
    return NULL;
}

int corun_kernel_get(corun_ctx *ctx, const corun_kernel_desc *d, corun_kernel **out)
{
    (void)ctx;
    (void)d;
    (void)out;
    return CORUN_ENODEV;
}

int corun_launch_stream(corun_ctx *ctx, corun_kernel *k, corun_dim3 grid, corun_dim3 block,
                        uint32_t smem, void **args, const corun_launch_attr *attr, void *stream,
                        corun_job **out)
{
    (void)ctx;
    (void)k;
    (void)grid;
    (void)block;
    (void)smem;
    (void)args;
    (void)attr;
    (void)stream;
    (void)out;
    return CORUN_ENODEV;
}
