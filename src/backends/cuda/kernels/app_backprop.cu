/*
 * app_backprop.cu — gpu/apps/backprop's kernel bpnn_adjust_weights_cuda as a
 * scenario builtin (builtin.c): the program as corun-cc transforms it, whose
 * kernel body (bpnn_adjust_weights_cuda__corun_body) is the program's own,
 * under entry points of C names the backend looks up. The build passes the
 * transformed file's folder with -I (CMakeLists.txt).
 */
#define main corun_app_backprop_main
#include "backprop.cu"
#undef main

#include "corun/corun_device.cuh"

#define app_backprop__corun_body bpnn_adjust_weights_cuda__corun_body
CORUN_KERNELS_EX(app_backprop,
                 (const float *delta, int hid, const float *ly, int num_blocks, float *w,
                  float *oldw),
                 (delta, hid, ly, num_blocks, w, oldw), CORUN_SHARED, )
