/*
 * app_md5search.cu — gpu/apps/md5search's kernel FindKeyWithDigest_Kernel as
 * a scenario builtin (builtin.c): the program as corun-cc transforms it,
 * whose kernel body (FindKeyWithDigest_Kernel__corun_body) is the
 * program's own, under entry points of C names the backend looks up. The
 * build passes the transformed file's folder with -I (CMakeLists.txt).
 */
#define main corun_app_md5search_main
#include "md5search.cu"
#undef main

#include "corun/corun_device.cuh"

#define app_md5search__corun_body FindKeyWithDigest_Kernel__corun_body
CORUN_KERNELS_EX(app_md5search,
                 (uint4 target, int keyspace, int *foundIndex, int *partialIndex,
                  unsigned int *partialCount, unsigned int *blockSignature),
                 (target, keyspace, foundIndex, partialIndex, partialCount, blockSignature),
                 CORUN_SHARED, )
