/*
 * ck/runtime.h - devices, memory, streams, events, kernel modules and launches, one interface
 * over two backends:
 *   cuda  the CUDA driver API and NVRTC, loaded with dlopen at run time (nothing is linked);
 *   host  ck's CPU emulator: the same kernel source compiled by the system C compiler against
 *         the host prelude, threads of a block run as cooperative fibers. "Device memory" is
 *         ordinary host memory.
 *
 * Kernel sources are device C (see src/device/ck_device.h): they #include "ck_device.h" and
 * declare kernels as `CK_KERNEL void name(parameters)`. Compiled modules are cached in memory
 * and on disk (ck_cache_dir()), keyed by a hash of the source, the prelude, the target, the
 * compiler and the options.
 *
 * Kernel arguments are passed like cuLaunchKernel's kernelParams: an array of pointers to the
 * argument values, plus their sizes, which ck checks against the parameter list it read from
 * the source (both backends), so a wrong count or size is an error, not a crash.
 *
 * All functions return CK_SUCCESS or an error status with a sentence (ck_last_error()).
 * Objects are not thread-safe unless stated; a device may be used from one thread at a time.
 */
#ifndef CK_RUNTIME_H
#define CK_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "ck/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ck_backend {
    CK_BACKEND_AUTO = 0, /* $CK_DEVICE (cuda|host) if set; else cuda when a GPU is usable,
                            else host (logged at info level) */
    CK_BACKEND_CUDA = 1,
    CK_BACKEND_HOST = 2
} ck_backend;

typedef struct ck_device ck_device;
typedef struct ck_stream ck_stream;
typedef struct ck_event ck_event;
typedef struct ck_module ck_module;
typedef struct ck_kernel ck_kernel;

typedef struct ck_device_props {
    ck_backend backend;          /* CK_BACKEND_CUDA or CK_BACKEND_HOST */
    char name[256];              /* GPU name, or "ck CPU emulator" */
    int cc_major, cc_minor;      /* compute capability (the emulator reports 9.0) */
    char target[16];             /* "sm_80", "sm_89", "sm_90a" or "host" */
    int multiprocessors;         /* SMs, or worker threads of the emulator */
    size_t memory_bytes;         /* device memory (0 for the emulator) */
    size_t max_shared_per_block; /* dynamic shared memory a launch may request */
    size_t l2_bytes;             /* L2 cache size (0 for the emulator) */
    size_t shared_per_sm;        /* shared memory of one SM (the emulator: that of an H100) */
    int max_threads_per_sm;      /* resident threads per SM (the emulator: 2048) */
    int regs_per_sm;             /* 32-bit registers per SM (the emulator: 65536) */
} ck_device_props;

/* Open device `ordinal` of `backend`. CK_BACKEND_AUTO follows $CK_DEVICE, else picks cuda when
 * the driver and a GPU are usable, else host. Errors: CK_ERROR_BACKEND_UNAVAILABLE (no driver,
 * no GPU, no NVRTC, no host compiler), CK_ERROR_UNSUPPORTED (compute capability below 8.0),
 * CK_ERROR_NOT_FOUND (ordinal), CK_ERROR_INVALID_ARGUMENT. Close with ck_device_close. */
ck_status ck_device_open(ck_backend backend, int ordinal, ck_device **device);

/* Release the device and everything created from it (modules, streams, events, memory). */
void ck_device_close(ck_device *device);

ck_status ck_device_get_props(const ck_device *device, ck_device_props *props);

/* Wait for all work of the device. */
ck_status ck_device_synchronize(ck_device *device);

/* Device memory (256-byte aligned). ck_free(NULL) succeeds. */
ck_status ck_malloc(ck_device *device, size_t bytes, void **ptr);
ck_status ck_free(ck_device *device, void *ptr);

/* Copies. A NULL stream is synchronous (returns when the copy is done); with a stream the copy
 * is ordered on it (host memory must stay valid until the stream is synchronized). */
ck_status ck_memcpy_h2d(ck_device *device, void *dst, const void *src, size_t bytes,
                        ck_stream *stream);
ck_status ck_memcpy_d2h(ck_device *device, void *dst, const void *src, size_t bytes,
                        ck_stream *stream);
ck_status ck_memcpy_d2d(ck_device *device, void *dst, const void *src, size_t bytes,
                        ck_stream *stream);
ck_status ck_memset_d8(ck_device *device, void *dst, unsigned char value, size_t bytes,
                       ck_stream *stream);

ck_status ck_stream_create(ck_device *device, ck_stream **stream);

/* A ck_stream over a stream the caller created and keeps (for interoperation: a framework's
 * current stream, e.g. torch.cuda.current_stream().cuda_stream), so that ck's launches and
 * copies are ordered with the caller's work without synchronization. On the cuda backend
 * `native` is a CUstream of the device's primary context (the context of the CUDA runtime, as
 * PyTorch and CuPy use it; ck_device_open retains that same context), or NULL for the legacy
 * default stream. The emulator has no native streams and accepts only NULL. The caller keeps
 * the native stream alive while the wrapper is used; ck_stream_destroy (or closing the device)
 * frees the wrapper only. Errors: CK_ERROR_INVALID_ARGUMENT (null device or out pointer, a
 * non-NULL native stream on the emulator), CK_ERROR_OUT_OF_MEMORY. */
ck_status ck_stream_wrap(ck_device *device, void *native, ck_stream **stream);
ck_status ck_stream_synchronize(ck_stream *stream);
void ck_stream_destroy(ck_stream *stream);

/* Events mark a point of a stream (NULL: the default stream); elapsed time in milliseconds
 * between two recorded, completed events. */
ck_status ck_event_create(ck_device *device, ck_event **event);
ck_status ck_event_record(ck_event *event, ck_stream *stream);
ck_status ck_event_synchronize(ck_event *event);
ck_status ck_event_elapsed_ms(const ck_event *start, const ck_event *end, float *ms);
void ck_event_destroy(ck_event *event);

/* Compile (or fetch from the cache) a kernel source for the device. `options` are passed to
 * the compiler of both backends; use only portable ones: -DNAME or -DNAME=VALUE. The module is
 * owned by the device (valid until ck_device_close); loading the same source and options again
 * returns the same module. CK_ERROR_COMPILE: the message holds the compiler log and names the
 * file where the failing source was written. */
ck_status ck_module_load(ck_device *device, const char *source, const char *const *options,
                         int option_count, ck_module **module);

/* The kernel `name` (declared with CK_KERNEL in the source). Owned by the module.
 * CK_ERROR_NOT_FOUND lists the kernels the module has. */
ck_status ck_module_get_kernel(ck_module *module, const char *name, ck_kernel **kernel);

/* Number of parameters of the kernel as declared in its source. */
int ck_kernel_param_count(const ck_kernel *kernel);

typedef struct ck_launch_config {
    unsigned grid[3];            /* blocks per grid; 0 entries are treated as 1 */
    unsigned block[3];           /* threads per block; 0 entries are treated as 1 */
    unsigned cluster[3];         /* blocks per cluster (sm_90); all 0 or 1: no clusters */
    size_t dynamic_shared_bytes; /* may exceed 48 KiB up to the device's limit */
    ck_stream *stream;           /* NULL: default stream */
} ck_launch_config;

/* Launch `kernel`. args[i] points to the value of parameter i, arg_sizes[i] is its size; the
 * count and sizes must match the parameter list (CK_ERROR_INVALID_ARGUMENT otherwise). The host
 * backend runs the launch to completion; the cuda backend queues it on the stream. Failures in
 * the kernel (emulator: deadlock, trap, misaligned vector access) give CK_ERROR_LAUNCH. */
ck_status ck_launch(ck_kernel *kernel, const ck_launch_config *config, void *const *args,
                    const size_t *arg_sizes, int arg_count);

/* How many blocks of `kernel` (clusters, where config->cluster asks for them) can be resident on
 * the device at once with this block shape, cluster shape and dynamic shared memory (the grid is
 * ignored): the size of a persistent grid that runs in one wave. The cuda backend asks the
 * driver (cuOccupancyMaxActiveClusters / ...MaxActiveBlocksPerMultiprocessor x SMs); the
 * emulator runs any grid and answers 0 (no limit). */
ck_status ck_kernel_max_active(ck_kernel *kernel, const ck_launch_config *config, int *count);

/* ---- timing (CK's flush_cache and rotating_buffer) ---------------------------------------- */
typedef struct ck_timing_options {
    int warmup;         /* untimed runs first (default 0 means 0) */
    int repetitions;    /* timed runs (at least 1) */
    int flush_l2;       /* before every timed run, overwrite a buffer twice the L2 size */
    int rotating_count; /* the callback is told rotation = iteration % rotating_count (>= 1) */
} ck_timing_options;

typedef struct ck_timing_result {
    float median_ms, min_ms, max_ms, mean_ms;
    int repetitions;
} ck_timing_result;

/* The work to time: enqueue one run on `stream`, using the inputs of `rotation`. */
typedef ck_status (*ck_timed_fn)(void *user, ck_stream *stream, int rotation);

/* Time `fn`: warm-up runs, then each timed run between two events on `stream` (flushing L2
 * before each when asked); fills `result` with the median and spread. */
ck_status ck_time_runs(ck_device *device, ck_stream *stream, const ck_timing_options *options,
                       ck_timed_fn fn, void *user, ck_timing_result *result);

/* Rotating inputs: copies[0] = src and copies[1..count-1] new device buffers holding the same
 * `bytes` (so successive timed runs read different memory, not L2-resident data). Free
 * copies[1..] with ck_rotating_free. count 1..64. */
ck_status ck_rotating_copies(ck_device *device, void *src, size_t bytes, int count, void **copies);
void ck_rotating_free(ck_device *device, void **copies, int count);

/* ---- tensor maps (the tensor memory accelerator, TMA) ------------------------------------- */
/* A tiled view of a global tensor for the ck_tma_* operations of kernels: a box of up to 256
 * elements per dimension is copied between global and shared memory (elements outside the tensor
 * read as zero), optionally swizzled. Dimension 0 is contiguous. */
typedef struct ck_tensor_map_desc {
    unsigned elem_bytes;        /* element size: 1, 2, 4 or 8 bytes (the engine moves bits) */
    unsigned rank;              /* number of dimensions, 1..5 */
    const void *global_address; /* device memory of `device` (ck_malloc), 16-byte aligned */
    uint64_t dims[5];           /* elements per dimension, 1..2^32 */
    uint64_t strides[4];        /* strides[i]: bytes between indices of dimension i+1; a
                                   non-zero multiple of 16 below 2^40 */
    uint32_t box[5];            /* box elements per dimension, 1..256; box[0] * elem_bytes a
                                   multiple of 16 and, with a swizzle, at most its span */
    uint32_t elem_strides[5];   /* traversal step per dimension, 1..8 (0 means 1) */
    int swizzle;                /* 0 none, 1 32-byte, 2 64-byte, 3 128-byte (CK_SWIZZLE_*) */
} ck_tensor_map_desc;

/* The 128-byte map a kernel receives by value (`CK_GRID_CONSTANT const ck_tensor_map map`, the
 * same type as in src/device/ck_device_tensor.h): the driver's CUtensorMap on the cuda backend,
 * the emulator's description on the host backend. */
#ifndef CK_TENSOR_MAP_DEFINED
#define CK_TENSOR_MAP_DEFINED 1
typedef struct ck_tensor_map {
#ifdef __cplusplus
    alignas(64) unsigned long long opaque[16];
#else
    _Alignas(64) unsigned long long opaque[16];
#endif
} ck_tensor_map;
#endif

/* Encode `desc` for `device` into *map: cuTensorMapEncodeTiled (no interleave, 128-byte L2
 * promotion, out-of-bounds elements zero) on cuda, the emulator's encoding on host. Invalid
 * fields: CK_ERROR_INVALID_ARGUMENT naming the field, its value and what is accepted; a driver
 * without tensor maps: CK_ERROR_UNSUPPORTED. *map is untouched on error. */
ck_status ck_tensor_map_create(ck_device *device, const ck_tensor_map_desc *desc,
                               ck_tensor_map *map);

/* ---- cache -------------------------------------------------------------------------------- */
typedef struct ck_cache_entry {
    char file[256]; /* name inside ck_cache_dir() */
    char kind[16];  /* "cubin", "host-so" or "unknown" */
    size_t bytes;
    long long mtime; /* seconds since the epoch */
    int valid;       /* header and checksum verified */
} ck_cache_entry;

/* Entries of the on-disk module cache. *entries is malloc'd (free with free()). An absent cache
 * directory gives zero entries. Entries are opened without following links or blocking: one
 * that is not a regular file of this user, unwritable by others, is listed as not valid. */
ck_status ck_cache_list(ck_cache_entry **entries, int *count);

/* Delete every entry of the on-disk module cache (kernels, and the index of generated sources
 * that lets a new process skip generating a cached kernel's source); *removed receives the
 * number of kernels deleted. An
 * entry that cannot be removed does not stop the others: CK_ERROR_IO afterwards, naming how
 * many failed and why the first did. */
ck_status ck_cache_clear(int *removed);

#ifdef __cplusplus
}
#endif
#endif /* CK_RUNTIME_H */
