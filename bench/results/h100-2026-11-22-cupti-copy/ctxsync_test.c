/* one-off: does corun's driver table's cuCtxSynchronize wait, and return 0? */
#include <stdio.h>
#include "backends/cuda/cuda_api.h"
int main(void)
{
    char why[256];
    const corun__cu *cu = corun__cu_load(why, sizeof(why));
    CUdevice dev; CUcontext ctx;
    if (!cu) { printf("load: %s\n", why); return 1; }
    cu->cuDeviceGet(&dev, 0);
    cu->cuDevicePrimaryCtxRetain(&ctx, dev);
    cu->cuCtxSetCurrent(ctx);
    CUresult r = cu->cuCtxSynchronize();
    printf("cuCtxSynchronize() = %d (0 = success)\n", (int)r);
    return r != 0;
}
