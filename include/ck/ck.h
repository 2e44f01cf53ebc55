/*
 * ck/ck.h - the client API of ck (Composable Kernels in C).
 *
 * Include this one header. It declares status codes and errors (ck/status.h),
 * the numeric types (ck/types.h), the version (ck/version.h), the system query and the
 * runtime (ck/runtime.h: devices, memory, kernel modules, launches, tensor maps), the
 * context and tensor descriptions (ck/context.h) and the operations: copy, cast and elementwise
 * (ck/elementwise.h), permute (ck/permute.h), reduce (ck/reduce.h), softmax and top-k softmax
 * (ck/softmax.h), layernorm, RMSNorm and row quantization (ck/norm.h), fused attention
 * forward (ck/attention.h).
 */
#ifndef CK_CK_H
#define CK_CK_H

#include <stddef.h>

#include "ck/attention.h"
#include "ck/context.h"
#include "ck/conv.h"
#include "ck/elementwise.h"
#include "ck/gemm.h"
#include "ck/im2col.h"
#include "ck/norm.h"
#include "ck/permute.h"
#include "ck/pool.h"
#include "ck/reduce.h"
#include "ck/runtime.h"
#include "ck/softmax.h"
#include "ck/status.h"
#include "ck/tune.h"
#include "ck/tuning.h"
#include "ck/types.h"
#include "ck/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the library actually linked, e.g. "0.1.0" (compare with CK_VERSION_STRING). */
const char *ck_version(void);

/* Build options of the linked library, one line (build type, compiler, sanitizers). */
const char *ck_build_options(void);

enum { CK_MAX_DEVICES = 16, CK_PATH_MAX = 4096 };

/* One GPU as the CUDA driver reports it. */
typedef struct ck_device_info {
    char name[256];
    int cc_major, cc_minor; /* compute capability, e.g. 9.0 */
    int multiprocessors;
    size_t memory_bytes;
} ck_device_info;

/* What this process can use, found at run time (nothing is linked at build time). */
typedef struct ck_system_info {
    int cuda_driver_found;        /* libcuda could be loaded and cuInit succeeded */
    int cuda_driver_version;      /* e.g. 13000 for CUDA 13.0; 0 if not found */
    char cuda_driver_status[512]; /* why the driver is unusable, or its library path */
    int nvrtc_found;
    int nvrtc_major, nvrtc_minor;
    char nvrtc_status[512]; /* why NVRTC is unusable, or its library path */
    int device_count;       /* GPUs listed in devices[] (at most CK_MAX_DEVICES) */
    ck_device_info devices[CK_MAX_DEVICES];
    int host_compiler_found; /* the C compiler the CPU emulator uses */
    char host_compiler[CK_PATH_MAX];
    char cache_dir[CK_PATH_MAX]; /* kernel cache directory ($CK_CACHE_DIR or ~/.cache/ck) */
} ck_system_info;

/* Probe the CUDA driver, NVRTC, GPUs, the emulator's compiler and the cache
 * directory. Absent components are reported in `info`, not as errors; the call
 * fails only for a null `info` (CK_ERROR_INVALID_ARGUMENT) or when no cache
 * directory can be determined (CK_ERROR_NOT_FOUND). */
ck_status ck_query_system(ck_system_info *info);

/* The kernel cache directory: $CK_CACHE_DIR, else $XDG_CACHE_HOME/ck, else $HOME/.cache/ck.
 * Writes a NUL-terminated path of at most `size` bytes. Does not create it. */
ck_status ck_cache_dir(char *path, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* CK_CK_H */
