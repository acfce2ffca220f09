/*
 * cuda_api.h — the CUDA driver API, loaded at run time.
 *
 * libcuda.so.1 is opened with dlopen and every entry point is fetched with
 * cuGetProcAddress (the driver's own supported way), so a corun built with
 * nvcc still runs, on the simulator, on a machine with no NVIDIA driver.
 * The table's fields carry the versioned names cuda.h maps to
 * (cu->cuMemAlloc is cuMemAlloc_v2), so calls read like the API.
 */
#ifndef CORUN_BACKENDS_CUDA_API_H
#define CORUN_BACKENDS_CUDA_API_H

#include <cuda.h>

#define CORUN_CU_FUNCS(X)                             \
    X(cuInit)                                         \
    X(cuDriverGetVersion)                             \
    X(cuGetErrorName)                                 \
    X(cuGetErrorString)                               \
    X(cuDeviceGet)                                    \
    X(cuDeviceGetCount)                               \
    X(cuDeviceGetName)                                \
    X(cuDeviceGetAttribute)                           \
    X(cuDevicePrimaryCtxRetain)                       \
    X(cuDevicePrimaryCtxRelease)                      \
    X(cuCtxSetCurrent)                                \
    X(cuCtxGetCurrent)                                \
    X(cuCtxGetDevice)                                 \
    X(cuCtxSynchronize)                               \
    X(cuCtxGetStreamPriorityRange)                    \
    X(cuStreamCreateWithPriority)                     \
    X(cuStreamDestroy)                                \
    X(cuStreamSynchronize)                            \
    X(cuStreamQuery)                                  \
    X(cuStreamWriteValue32)                           \
    X(cuStreamWriteValue64)                           \
    X(cuStreamWaitValue32)                            \
    X(cuStreamWaitEvent)                              \
    X(cuStreamIsCapturing)                            \
    X(cuDeviceGetDevResource)                         \
    X(cuDevSmResourceSplitByCount)                    \
    X(cuDevResourceGenerateDesc)                      \
    X(cuGreenCtxCreate)                               \
    X(cuGreenCtxDestroy)                              \
    X(cuGreenCtxStreamCreate)                         \
    X(cuLaunchKernel)                                 \
    X(cuMemAlloc)                                     \
    X(cuMemFree)                                      \
    X(cuMemAllocHost)                                 \
    X(cuMemFreeHost)                                  \
    X(cuMemHostAlloc)                                 \
    X(cuMemHostGetDevicePointer)                      \
    X(cuMemHostRegister)                              \
    X(cuMemHostUnregister)                            \
    X(cuMemcpyHtoD)                                   \
    X(cuMemcpyDtoH)                                   \
    X(cuMemcpyHtoDAsync)                              \
    X(cuMemcpyDtoHAsync)                              \
    X(cuMemsetD8)                                     \
    X(cuMemsetD32Async)                               \
    X(cuMemsetD8Async)                                \
    X(cuModuleLoadData)                               \
    X(cuModuleUnload)                                 \
    X(cuModuleGetFunction)                            \
    X(cuFuncGetAttribute)                             \
    X(cuFuncSetAttribute)                             \
    X(cuFuncGetParamInfo)                             \
    X(cuFuncGetName)                                  \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor)    \
    X(cuEventCreate)                                  \
    X(cuEventDestroy)                                 \
    X(cuEventRecord)                                  \
    X(cuEventSynchronize)                             \
    X(cuEventQuery)                                   \
    X(cuEventElapsedTime)                             \
    X(cuIpcGetMemHandle)                              \
    X(cuIpcOpenMemHandle)                             \
    X(cuIpcCloseMemHandle)

typedef struct corun__cu {
#define CORUN__CU_FIELD(name) __typeof__(&name) name;
    CORUN_CU_FUNCS(CORUN__CU_FIELD)
#undef CORUN__CU_FIELD
    int driver_version;
} corun__cu;

/* Loads the driver once per process (thread-safe). Returns NULL, with the
 * reason in why, if there is no usable driver. */
const corun__cu *corun__cu_load(char *why, size_t why_len);

/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for r, in buf. */
const char *corun__cu_describe(const corun__cu *cu, CUresult r, char *buf, size_t len);

#endif
