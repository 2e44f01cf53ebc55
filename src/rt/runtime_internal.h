/* Objects of the runtime (include/ck/runtime.h) shared by its backends. Internal. */
#ifndef CK_SRC_RT_RUNTIME_INTERNAL_H
#define CK_SRC_RT_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include "ck/runtime.h"
#include "rt/kernel_sig.h"
#include "rt/module_cache.h"

struct ck_cuda_api; /* the driver entry points (cuda_backend.c) */

struct ck_device {
    ck_backend backend;
    ck_device_props props;
    /* cuda */
    const struct ck_cuda_api *cu;
    int cu_device;
    void *cu_context;
    void *flush_buffer; /* L2 flush scratch (timing) */
    size_t flush_bytes;
    /* host: live allocations */
    void **allocs;
    size_t *alloc_bytes; /* size of each allocation: copies are checked against it */
    size_t alloc_count, alloc_cap;
    ck_module *modules;
    ck_stream *streams;
    ck_event *events;
};

struct ck_kernel {
    ck_module *module;
    const ck_kernel_sig *sig;
    void (*run)(const void *);       /* host */
    const size_t *layout;            /* host: {count, size, align, offset0, size0, ...} */
    void *cu_function;               /* cuda */
    size_t cu_dyn_shared_set;        /* MAX_DYNAMIC_SHARED_SIZE_BYTES already set */
    int cu_static_shared;            /* its static __shared__ bytes; -1 until read */
    int cu_nonportable_set;          /* NON_PORTABLE_CLUSTER_SIZE_ALLOWED already set */
    const size_t *arg_sizes_checked; /* cuda: the sizes of the launch being checked */
    /* cuda: the compiled kernel's parameter sizes (cuFuncGetParamInfo, read at the first
     * launch; -1 until then, 0 when the driver cannot tell) */
    int cu_param_known;
    uint32_t cu_param_size[CK_SIG_MAX_PARAMS];
};

struct ck_module {
    ck_module *next;
    ck_device *device;
    ck_hash128 key;
    ck_kernel_sig *sigs;
    int sig_count;
    ck_kernel *kernels;
    void *so_handle; /* host */
    void *cu_module; /* cuda */
};

struct ck_stream {
    ck_device *device;
    ck_stream *next;
    void *cu;     /* CUstream (NULL: the legacy default stream) */
    int borrowed; /* ck_stream_wrap: the caller owns `cu`; destroy frees only the wrapper */
};

struct ck_event {
    ck_device *device;
    ck_event *next;
    void *cu;
    double host_ms; /* host: time of record */
    int recorded;
};

/* ---- cuda backend (cuda_backend.c) ---- */
ck_status ck_cuda_open(ck_device *dev, int ordinal);
void ck_cuda_close(ck_device *dev);
/* 1 when the driver loads, initialises and reports at least one GPU. */
int ck_cuda_usable(void);
ck_status ck_cuda_sync(ck_device *dev);
ck_status ck_cuda_malloc(ck_device *dev, size_t bytes, void **ptr);
ck_status ck_cuda_free(ck_device *dev, void *ptr);
/* kind: 0 h2d, 1 d2h, 2 d2d */
ck_status ck_cuda_memcpy(ck_device *dev, int kind, void *dst, const void *src, size_t bytes,
                         ck_stream *stream);
ck_status ck_cuda_memset(ck_device *dev, void *dst, unsigned char v, size_t bytes,
                         ck_stream *stream);
ck_status ck_cuda_stream_create(ck_device *dev, ck_stream *s);
ck_status ck_cuda_stream_sync(ck_stream *s);
void ck_cuda_stream_destroy(ck_stream *s);
ck_status ck_cuda_event_create(ck_device *dev, ck_event *e);
ck_status ck_cuda_event_record(ck_event *e, ck_stream *s);
ck_status ck_cuda_event_sync(ck_event *e);
ck_status ck_cuda_event_elapsed(const ck_event *a, const ck_event *b, float *ms);
void ck_cuda_event_destroy(ck_event *e);
ck_status ck_cuda_module_load(ck_device *dev, const void *cubin, void **module);
void ck_cuda_module_unload(ck_device *dev, void *module);
ck_status ck_cuda_get_function(ck_device *dev, void *module, const char *name, void **fn);
ck_status ck_cuda_max_active(ck_kernel *k, const ck_launch_config *cfg, int *count);
ck_status ck_cuda_launch(ck_kernel *k, const ck_launch_config *cfg, void *const *args,
                         int arg_count);

/* cuTensorMapEncodeTiled on the device's context; the enum arguments are the driver's
 * (CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
 * CUtensorMapFloatOOBfill). `map`: 128 bytes, 64-byte aligned. CK_ERROR_UNSUPPORTED when the
 * driver lacks it. */
ck_status ck_cuda_tensor_map_encode_tiled(ck_device *dev, int dtype, unsigned rank,
                                          void *global_address, const uint64_t *dims,
                                          const uint64_t *strides, const uint32_t *box,
                                          const uint32_t *elem_strides, int interleave, int swizzle,
                                          int l2_promotion, int oob_fill, void *map);

/* ---- NVRTC (nvrtc.c) ---- */
ck_status ck_nvrtc_version(int *major, int *minor);
/* 1 once NVRTC is loaded in this process. */
int ck_nvrtc_loaded(void);
/* The file of the loaded NVRTC (loads it). */
ck_status ck_nvrtc_library_path(char *path, size_t size);
/* NVRTC's version for kernel cache keys (nvrtc_stamp.c): from the stamp the last load left in
 * the module cache when that library file is unchanged, so a process whose kernels are all
 * cached never loads NVRTC (milliseconds); otherwise ck_nvrtc_version, and the stamp is renewed. */
ck_status ck_nvrtc_version_for_key(int *major, int *minor);
/* Compile `source` for `arch` ("sm_90a") into a cubin (*cubin malloc'd). CK_ERROR_COMPILE holds
 * the log and names the file the source was written to. */
ck_status ck_nvrtc_compile(const char *source, const char *arch, const char *const *options,
                           int option_count, void **cubin, size_t *size);

#endif
