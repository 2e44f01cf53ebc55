/* The cuda backend: the CUDA driver API loaded with dlopen (no link-time dependency). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "rt/dynlib.h"
#include "rt/runtime_internal.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct {
    unsigned x, y, z;
} cu_dim3;
/* CUlaunchAttribute: id (4 bytes) + pad to 8 + a 64-byte value union. */
typedef struct {
    int id;
    char pad[4];
    union {
        char bytes[64];
        cu_dim3 cluster_dim;
    } value;
} cu_launch_attribute;
typedef struct {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
    void *stream;
    cu_launch_attribute *attrs;
    unsigned num_attrs;
} cu_launch_config;

enum {
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CU_STREAM_NON_BLOCKING = 1
};

struct ck_cuda_api {
    CUresult (*init)(unsigned);
    CUresult (*device_count)(int *);
    CUresult (*device_get)(int *, int);
    CUresult (*device_name)(char *, int, int);
    CUresult (*device_attr)(int *, int, int);
    CUresult (*device_mem)(size_t *, int);
    CUresult (*ctx_retain)(void **, int);
    CUresult (*ctx_release)(int);
    CUresult (*ctx_set)(void *);
    CUresult (*ctx_get)(void **); /* optional: skips a cuCtxSetCurrent that changes nothing */
    CUresult (*ctx_sync)(void);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*h2d)(CUdeviceptr, const void *, size_t, void *);
    CUresult (*d2h)(void *, CUdeviceptr, size_t, void *);
    CUresult (*d2d)(CUdeviceptr, CUdeviceptr, size_t, void *);
    CUresult (*memset8)(CUdeviceptr, unsigned char, size_t, void *);
    CUresult (*stream_create)(void **, unsigned);
    CUresult (*stream_destroy)(void *);
    CUresult (*stream_sync)(void *);
    CUresult (*event_create)(void **, unsigned);
    CUresult (*event_record)(void *, void *);
    CUresult (*event_sync)(void *);
    CUresult (*event_elapsed)(float *, void *, void *);
    CUresult (*event_destroy)(void *);
    CUresult (*module_load)(void **, const void *);
    CUresult (*module_unload)(void *);
    CUresult (*module_function)(void **, void *, const char *);
    CUresult (*func_set_attr)(void *, int, int);
    CUresult (*func_get_attr)(int *, int, void *);
    CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       void *, void **, void **);
    CUresult (*launch_ex)(const cu_launch_config *, void *, void **, void **);
    CUresult (*error_string)(CUresult, const char **);
    CUresult (*func_param_info)(void *, size_t, size_t *, size_t *); /* CUDA 12.4+, optional */
    CUresult (*occ_clusters)(int *, void *, const cu_launch_config *);  /* CUDA 12.0+, optional */
    CUresult (*occ_blocks)(int *, void *, int, size_t);
    CUresult (*tmap_encode_tiled)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *,
                                  const uint32_t *, const uint32_t *, int, int, int,
                                  int); /* CUDA 12.0+, optional */
};

static struct ck_cuda_api cu;
static ck_status load_status = CK_SUCCESS;
static char load_message[1024];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};

static void load(void)
{
    void *h = NULL;
    char found[256];
    const char *w = "the CUDA driver";
    ck_status st = ck_dynlib_open("the CUDA driver (libcuda)", "CK_CUDA_DRIVER_PATH", cuda_names,
                                  NULL, &h, found, sizeof found);
    if (st == CK_SUCCESS &&
        (ck_dynlib_symbol(h, w, "cuInit", &cu.init) ||
         ck_dynlib_symbol(h, w, "cuDeviceGetCount", &cu.device_count) ||
         ck_dynlib_symbol(h, w, "cuDeviceGet", &cu.device_get) ||
         ck_dynlib_symbol(h, w, "cuDeviceGetName", &cu.device_name) ||
         ck_dynlib_symbol(h, w, "cuDeviceGetAttribute", &cu.device_attr) ||
         ck_dynlib_symbol(h, w, "cuDeviceTotalMem_v2", &cu.device_mem) ||
         ck_dynlib_symbol(h, w, "cuDevicePrimaryCtxRetain", &cu.ctx_retain) ||
         ck_dynlib_symbol(h, w, "cuDevicePrimaryCtxRelease_v2", &cu.ctx_release) ||
         ck_dynlib_symbol(h, w, "cuCtxSetCurrent", &cu.ctx_set) ||
         ck_dynlib_symbol(h, w, "cuCtxSynchronize", &cu.ctx_sync) ||
         ck_dynlib_symbol(h, w, "cuMemAlloc_v2", &cu.mem_alloc) ||
         ck_dynlib_symbol(h, w, "cuMemFree_v2", &cu.mem_free) ||
         ck_dynlib_symbol(h, w, "cuMemcpyHtoDAsync_v2", &cu.h2d) ||
         ck_dynlib_symbol(h, w, "cuMemcpyDtoHAsync_v2", &cu.d2h) ||
         ck_dynlib_symbol(h, w, "cuMemcpyDtoDAsync_v2", &cu.d2d) ||
         ck_dynlib_symbol(h, w, "cuMemsetD8Async", &cu.memset8) ||
         ck_dynlib_symbol(h, w, "cuStreamCreate", &cu.stream_create) ||
         ck_dynlib_symbol(h, w, "cuStreamDestroy_v2", &cu.stream_destroy) ||
         ck_dynlib_symbol(h, w, "cuStreamSynchronize", &cu.stream_sync) ||
         ck_dynlib_symbol(h, w, "cuEventCreate", &cu.event_create) ||
         ck_dynlib_symbol(h, w, "cuEventRecord", &cu.event_record) ||
         ck_dynlib_symbol(h, w, "cuEventSynchronize", &cu.event_sync) ||
         ck_dynlib_symbol(h, w, "cuEventDestroy_v2", &cu.event_destroy) ||
         ck_dynlib_symbol(h, w, "cuModuleLoadData", &cu.module_load) ||
         ck_dynlib_symbol(h, w, "cuModuleUnload", &cu.module_unload) ||
         ck_dynlib_symbol(h, w, "cuModuleGetFunction", &cu.module_function) ||
         ck_dynlib_symbol(h, w, "cuFuncSetAttribute", &cu.func_set_attr) ||
         ck_dynlib_symbol(h, w, "cuFuncGetAttribute", &cu.func_get_attr) ||
         ck_dynlib_symbol(h, w, "cuLaunchKernel", &cu.launch) ||
         ck_dynlib_symbol(h, w, "cuLaunchKernelEx", &cu.launch_ex) ||
         ck_dynlib_symbol(h, w, "cuOccupancyMaxActiveBlocksPerMultiprocessor", &cu.occ_blocks) ||
         ck_dynlib_symbol(h, w, "cuGetErrorString", &cu.error_string))) {
        st = CK_ERROR_BACKEND_UNAVAILABLE;
    }
    if (st == CK_SUCCESS) { /* optional entry points */
        if (ck_dynlib_symbol(h, w, "cuCtxGetCurrent", &cu.ctx_get) != CK_SUCCESS)
            cu.ctx_get = NULL;
        if (ck_dynlib_symbol(h, w, "cuFuncGetParamInfo", &cu.func_param_info) != CK_SUCCESS)
            cu.func_param_info = NULL;
        if (ck_dynlib_symbol(h, w, "cuOccupancyMaxActiveClusters", &cu.occ_clusters) != CK_SUCCESS)
            cu.occ_clusters = NULL;
        if (ck_dynlib_symbol(h, w, "cuTensorMapEncodeTiled", &cu.tmap_encode_tiled) != CK_SUCCESS)
            cu.tmap_encode_tiled = NULL;
        ck_clear_error();
    }
    /* cuEventElapsedTime_v2 (CUDA 12.8+) or the original entry point */
    if (st == CK_SUCCESS &&
        ck_dynlib_symbol(h, w, "cuEventElapsedTime_v2", &cu.event_elapsed) != CK_SUCCESS)
        st = ck_dynlib_symbol(h, w, "cuEventElapsedTime", &cu.event_elapsed);
    if (st == CK_SUCCESS) {
        CUresult rc = cu.init(0);
        if (rc != 0)
            st = ck_fail(CK_ERROR_BACKEND_UNAVAILABLE,
                         "the CUDA driver (%s) loaded but cuInit failed with CUDA error %d: no "
                         "usable GPU or a driver mismatch.",
                         found, rc);
    }
    if (st != CK_SUCCESS) {
        if (h)
            ck_dynlib_close(h);
        load_status = st;
        snprintf(load_message, sizeof load_message, "%s", ck_last_error());
    }
}

static ck_status ensure(void)
{
    pthread_once(&load_once, load);
    if (load_status != CK_SUCCESS)
        return ck_fail(load_status, "%s", load_message);
    return CK_SUCCESS;
}

int ck_cuda_usable(void)
{
    int n = 0;
    if (ensure() != CK_SUCCESS || cu.device_count(&n) != 0)
        return 0;
    return n > 0;
}

/* A CK_ERROR_* for CUresult `rc` of `what`, with the driver's words. */
static ck_status cu_fail(CUresult rc, const char *what)
{
    const char *s = NULL;
    if (cu.error_string)
        cu.error_string(rc, &s);
    return ck_fail(rc == CUDA_ERROR_OUT_OF_MEMORY ? CK_ERROR_OUT_OF_MEMORY
                   : (rc >= 700 && rc < 800)      ? CK_ERROR_LAUNCH
                                                  : CK_ERROR_DEVICE,
                   "%s failed with CUDA error %d (%s).", what, rc, s ? s : "unknown");
}

#define CU_CALL(expr, what)                                                                        \
    do {                                                                                           \
        CUresult rc_ = (expr);                                                                     \
        if (rc_ != 0)                                                                              \
            return cu_fail(rc_, (what));                                                           \
    } while (0)

/* The device's context current on the calling thread (every call that uses it runs this;
 * with a context already current, as in a loop of launches, only a read). */
static ck_status make_current(ck_device *dev)
{
    void *cur = NULL;
    if (cu.ctx_get && cu.ctx_get(&cur) == 0 && cur == dev->cu_context && cur)
        return CK_SUCCESS;
    CU_CALL(cu.ctx_set(dev->cu_context), "cuCtxSetCurrent");
    return CK_SUCCESS;
}

ck_status ck_cuda_open(ck_device *dev, int ordinal)
{
    ck_status st = ensure();
    if (st != CK_SUCCESS)
        return st;
    int count = 0, d = 0;
    CU_CALL(cu.device_count(&count), "cuDeviceGetCount");
    if (count == 0)
        return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE,
                       "the CUDA driver reports no GPU; use CK_DEVICE=host for the emulator.");
    if (ordinal < 0 || ordinal >= count)
        return ck_fail(CK_ERROR_NOT_FOUND,
                       "ck_device_open: GPU ordinal %d does not exist; this machine has %d "
                       "(0 to %d).",
                       ordinal, count, count - 1);
    CU_CALL(cu.device_get(&d, ordinal), "cuDeviceGet");
    ck_device_props *p = &dev->props;
    int v = 0;
    cu.device_name(p->name, (int)sizeof p->name, d);
    cu.device_attr(&p->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    cu.device_attr(&p->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    cu.device_attr(&p->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
    if (cu.device_attr(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d) == 0)
        p->max_shared_per_block = (size_t)v;
    if (cu.device_attr(&v, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d) == 0)
        p->l2_bytes = (size_t)v;
    if (cu.device_attr(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, d) == 0)
        p->shared_per_sm = (size_t)v;
    if (cu.device_attr(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, d) == 0)
        p->max_threads_per_sm = v;
    if (cu.device_attr(&v, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, d) == 0)
        p->regs_per_sm = v;
    cu.device_mem(&p->memory_bytes, d);
    int cc = p->cc_major * 10 + p->cc_minor;
    if (p->cc_major >= 10)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "GPU %d (%s) has compute capability %d.%d; ck generates code for sm_80, "
                       "sm_89 and sm_90a (compute capability 8.0 to 9.0), which does not run on "
                       "it.",
                       ordinal, p->name, p->cc_major, p->cc_minor);
    if (cc >= 90)
        snprintf(p->target, sizeof p->target, "sm_90a");
    else if (cc >= 89)
        snprintf(p->target, sizeof p->target, "sm_89");
    else if (cc >= 80)
        snprintf(p->target, sizeof p->target, "sm_80");
    else
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "GPU %d (%s) has compute capability %d.%d; ck supports 8.0 and newer "
                       "(sm_80, sm_89, sm_90a).",
                       ordinal, p->name, p->cc_major, p->cc_minor);
    CU_CALL(cu.ctx_retain(&dev->cu_context, d), "cuDevicePrimaryCtxRetain");
    dev->cu = &cu;
    dev->cu_device = d;
    return make_current(dev);
}

void ck_cuda_close(ck_device *dev)
{
    if (!dev->cu_context)
        return;
    cu.ctx_set(dev->cu_context);
    cu.ctx_sync();
    if (dev->flush_buffer)
        cu.mem_free((CUdeviceptr)(uintptr_t)dev->flush_buffer);
    cu.ctx_release(dev->cu_device);
    dev->cu_context = NULL;
}

ck_status ck_cuda_sync(ck_device *dev)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.ctx_sync(), "cuCtxSynchronize (a kernel or copy failed)");
    return CK_SUCCESS;
}

ck_status ck_cuda_malloc(ck_device *dev, size_t bytes, void **ptr)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    CUdeviceptr p = 0;
    CUresult rc = cu.mem_alloc(&p, bytes);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY,
                       "ck_malloc: the GPU has no room for %zu bytes (of %zu in total).", bytes,
                       dev->props.memory_bytes);
    if (rc != 0)
        return cu_fail(rc, "cuMemAlloc");
    *ptr = (void *)(uintptr_t)p;
    return CK_SUCCESS;
}

ck_status ck_cuda_free(ck_device *dev, void *ptr)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.mem_free((CUdeviceptr)(uintptr_t)ptr),
            "cuMemFree (was the pointer from ck_malloc?)");
    return CK_SUCCESS;
}

static ck_status finish(void *stream)
{
    if (stream)
        return CK_SUCCESS;
    CU_CALL(cu.stream_sync(NULL), "cuStreamSynchronize");
    return CK_SUCCESS;
}

ck_status ck_cuda_memcpy(ck_device *dev, int kind, void *dst, const void *src, size_t bytes,
                         ck_stream *stream)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    void *s = stream ? stream->cu : NULL;
    if (kind == 0)
        CU_CALL(cu.h2d((CUdeviceptr)(uintptr_t)dst, src, bytes, s), "cuMemcpyHtoDAsync");
    else if (kind == 1)
        CU_CALL(cu.d2h(dst, (CUdeviceptr)(uintptr_t)src, bytes, s), "cuMemcpyDtoHAsync");
    else
        CU_CALL(cu.d2d((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes, s),
                "cuMemcpyDtoDAsync");
    return finish(s);
}

ck_status ck_cuda_memset(ck_device *dev, void *dst, unsigned char v, size_t bytes,
                         ck_stream *stream)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    void *s = stream ? stream->cu : NULL;
    CU_CALL(cu.memset8((CUdeviceptr)(uintptr_t)dst, v, bytes, s), "cuMemsetD8Async");
    return finish(s);
}

ck_status ck_cuda_stream_create(ck_device *dev, ck_stream *s)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.stream_create(&s->cu, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return CK_SUCCESS;
}

ck_status ck_cuda_stream_sync(ck_stream *s)
{
    ck_status st = make_current(s->device);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.stream_sync(s->cu), "cuStreamSynchronize (a kernel or copy failed)");
    return CK_SUCCESS;
}

void ck_cuda_stream_destroy(ck_stream *s)
{
    if (s->cu && make_current(s->device) == CK_SUCCESS)
        cu.stream_destroy(s->cu);
}

ck_status ck_cuda_event_create(ck_device *dev, ck_event *e)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.event_create(&e->cu, 0), "cuEventCreate");
    return CK_SUCCESS;
}

ck_status ck_cuda_event_record(ck_event *e, ck_stream *s)
{
    ck_status st = make_current(e->device);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.event_record(e->cu, s ? s->cu : NULL), "cuEventRecord");
    return CK_SUCCESS;
}

ck_status ck_cuda_event_sync(ck_event *e)
{
    ck_status st = make_current(e->device);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.event_sync(e->cu), "cuEventSynchronize");
    return CK_SUCCESS;
}

ck_status ck_cuda_event_elapsed(const ck_event *a, const ck_event *b, float *ms)
{
    ck_status st = make_current(a->device);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.event_elapsed(ms, a->cu, b->cu), "cuEventElapsedTime");
    return CK_SUCCESS;
}

void ck_cuda_event_destroy(ck_event *e)
{
    if (e->cu && make_current(e->device) == CK_SUCCESS)
        cu.event_destroy(e->cu);
}

ck_status ck_cuda_module_load(ck_device *dev, const void *cubin, void **module)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.module_load(module, cubin), "cuModuleLoadData");
    return CK_SUCCESS;
}

void ck_cuda_module_unload(ck_device *dev, void *module)
{
    if (module && make_current(dev) == CK_SUCCESS)
        cu.module_unload(module);
}

ck_status ck_cuda_get_function(ck_device *dev, void *module, const char *name, void **fn)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    CU_CALL(cu.module_function(fn, module, name), "cuModuleGetFunction");
    return CK_SUCCESS;
}

/* The launch attribute of a cluster shape. */
static cu_launch_attribute cluster_attr(const unsigned *c)
{
    cu_launch_attribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.cluster_dim.x = c[0];
    attr.value.cluster_dim.y = c[1];
    attr.value.cluster_dim.z = c[2];
    return attr;
}

/* More than 48 KiB of shared memory in all (the kernel's static __shared__ arrays plus the
 * launch's dynamic bytes) needs the kernel's opt-in for the dynamic part, once per size. */
static ck_status allow_shared(ck_kernel *k, size_t bytes)
{
    if (bytes <= k->cu_dyn_shared_set)
        return CK_SUCCESS;
    if (k->cu_static_shared < 0) {
        int st = 0;
        CU_CALL(cu.func_get_attr(&st, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->cu_function),
                "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
        k->cu_static_shared = st;
    }
    if (bytes + (size_t)k->cu_static_shared <= 48u * 1024u)
        return CK_SUCCESS;
    CU_CALL(cu.func_set_attr(k->cu_function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             (int)bytes),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    k->cu_dyn_shared_set = bytes;
    return CK_SUCCESS;
}

/* Clusters of more than 8 blocks (16 on sm_90) need the kernel's non-portable opt-in. */
static ck_status allow_cluster(ck_kernel *k, unsigned cluster_blocks)
{
    if (cluster_blocks <= 8 || k->cu_nonportable_set)
        return CK_SUCCESS;
    CU_CALL(cu.func_set_attr(k->cu_function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
            "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)");
    k->cu_nonportable_set = 1;
    return CK_SUCCESS;
}

/* The launch's argument sizes against the compiled kernel's parameters, which the driver is
 * asked for once per kernel (a query per argument per launch cost microseconds per call). */
static ck_status check_param_sizes(ck_kernel *k, int arg_count)
{
    if (k->cu_param_known < 0) {
        k->cu_param_known = 0;
        int n = arg_count < CK_SIG_MAX_PARAMS ? arg_count : CK_SIG_MAX_PARAMS;
        for (int i = 0; cu.func_param_info && i < n; ++i) {
            size_t off = 0, size = 0;
            if (cu.func_param_info(k->cu_function, (size_t)i, &off, &size) != 0)
                break;
            k->cu_param_size[i] = (uint32_t)size;
            k->cu_param_known = i + 1;
        }
    }
    for (int i = 0; i < arg_count && i < k->cu_param_known; ++i)
        if (k->cu_param_size[i] != k->arg_sizes_checked[i])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_launch: argument %d of kernel '%s' has %zu bytes but parameter "
                           "'%s' has %u.",
                           i, k->sig->name, k->arg_sizes_checked[i], k->sig->params[i],
                           (unsigned)k->cu_param_size[i]);
    return CK_SUCCESS;
}

ck_status ck_cuda_launch(ck_kernel *k, const ck_launch_config *cfg, void *const *args,
                         int arg_count)
{
    ck_device *dev = k->module->device;
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    if ((st = check_param_sizes(k, arg_count)) != CK_SUCCESS)
        return st;
    if ((st = allow_shared(k, cfg->dynamic_shared_bytes)) != CK_SUCCESS)
        return st;
    unsigned g[3], b[3], c[3];
    int clusters = 0;
    for (int i = 0; i < 3; ++i) {
        g[i] = cfg->grid[i] ? cfg->grid[i] : 1;
        b[i] = cfg->block[i] ? cfg->block[i] : 1;
        c[i] = cfg->cluster[i] ? cfg->cluster[i] : 1;
        clusters |= c[i] > 1;
    }
    void *s = cfg->stream ? cfg->stream->cu : NULL;
    if (!clusters) {
        CU_CALL(cu.launch(k->cu_function, g[0], g[1], g[2], b[0], b[1], b[2],
                          (unsigned)cfg->dynamic_shared_bytes, s, (void **)args, NULL),
                "cuLaunchKernel");
        return CK_SUCCESS;
    }
    st = allow_cluster(k, c[0] * c[1] * c[2]);
    if (st != CK_SUCCESS)
        return st;
    cu_launch_attribute attr = cluster_attr(c);
    cu_launch_config lc = {g[0], g[1],  g[2], b[0], b[1], b[2], (unsigned)cfg->dynamic_shared_bytes,
                           s,    &attr, 1};
    CU_CALL(cu.launch_ex(&lc, k->cu_function, (void **)args, NULL), "cuLaunchKernelEx");
    return CK_SUCCESS;
}

ck_status ck_cuda_max_active(ck_kernel *k, const ck_launch_config *cfg, int *count)
{
    ck_device *d = k->module->device;
    ck_status st = make_current(d);
    if (st != CK_SUCCESS)
        return st;
    unsigned b = 1, c[3], cb = 1;
    for (int i = 0; i < 3; ++i) {
        b *= cfg->block[i] ? cfg->block[i] : 1;
        c[i] = cfg->cluster[i] ? cfg->cluster[i] : 1;
        cb *= c[i];
    }
    if ((st = allow_shared(k, cfg->dynamic_shared_bytes)) != CK_SUCCESS)
        return st;
    if (cb == 1) {
        int per_sm = 0;
        CU_CALL(cu.occ_blocks(&per_sm, k->cu_function, (int)b, cfg->dynamic_shared_bytes),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        *count = per_sm * d->props.multiprocessors;
        return CK_SUCCESS;
    }
    if ((st = allow_cluster(k, cb)) != CK_SUCCESS)
        return st;
    if (!cu.occ_clusters)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "the CUDA driver has no cuOccupancyMaxActiveClusters (CUDA 12.0 or newer "
                       "is needed to count resident clusters).");
    cu_launch_attribute attr = cluster_attr(c);
    /* the grid only has to be a multiple of the cluster shape here */
    cu_launch_config lc = {c[0],
                           c[1],
                           c[2],
                           cfg->block[0] ? cfg->block[0] : 1,
                           cfg->block[1] ? cfg->block[1] : 1,
                           cfg->block[2] ? cfg->block[2] : 1,
                           (unsigned)cfg->dynamic_shared_bytes,
                           NULL,
                           &attr,
                           1};
    CU_CALL(cu.occ_clusters(count, k->cu_function, &lc), "cuOccupancyMaxActiveClusters");
    return CK_SUCCESS;
}

ck_status ck_cuda_tensor_map_encode_tiled(ck_device *dev, int dtype, unsigned rank,
                                          void *global_address, const uint64_t *dims,
                                          const uint64_t *strides, const uint32_t *box,
                                          const uint32_t *elem_strides, int interleave, int swizzle,
                                          int l2_promotion, int oob_fill, void *map)
{
    ck_status st = make_current(dev);
    if (st != CK_SUCCESS)
        return st;
    if (!cu.tmap_encode_tiled)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12.0 or newer is "
                       "needed for tensor maps).");
    if (((uintptr_t)map % 64) != 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "tensor map: the 128-byte map must be 64-byte aligned (it is at %p).", map);
    CU_CALL(cu.tmap_encode_tiled(map, dtype, rank, global_address, dims, strides, box, elem_strides,
                                 interleave, swizzle, l2_promotion, oob_fill),
            "cuTensorMapEncodeTiled");
    return CK_SUCCESS;
}
