/* The runtime's public API (include/ck/runtime.h): devices, memory, streams, events, modules,
 * launches, dispatched to the cuda backend or the emulator. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ck/ck.h"
#include "core/error.h"
#include "rt/emulator.h"
#include "rt/host_compile.h"
#include "rt/runtime_internal.h"

#define REQUIRE_DEVICE(d, fn) CK_REQUIRE_NOT_NULL(d, fn)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ------------------------------------------------------------------ devices */
static ck_status choose_backend(ck_backend *backend)
{
    if (*backend == CK_BACKEND_CUDA || *backend == CK_BACKEND_HOST)
        return CK_SUCCESS;
    if (*backend != CK_BACKEND_AUTO)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_device_open: backend %d is not one of CK_BACKEND_AUTO (0), "
                       "CK_BACKEND_CUDA (1), CK_BACKEND_HOST (2).",
                       (int)*backend);
    const char *env = getenv("CK_DEVICE");
    if (env && *env) {
        if (strcmp(env, "cuda") == 0)
            *backend = CK_BACKEND_CUDA;
        else if (strcmp(env, "host") == 0)
            *backend = CK_BACKEND_HOST;
        else
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "environment variable CK_DEVICE='%s' is not accepted; use 'cuda' or "
                           "'host'.",
                           env);
        return CK_SUCCESS;
    }
    int major = 0, minor = 0;
    if (ck_cuda_usable() && ck_nvrtc_version_for_key(&major, &minor) == CK_SUCCESS) {
        *backend = CK_BACKEND_CUDA;
    } else {
        CK_LOG(CK_LOG_INFO,
               "no usable GPU or NVRTC (%s); running kernels on the CPU emulator (set "
               "CK_DEVICE=cuda to make this an error).",
               ck_last_error());
        ck_clear_error();
        *backend = CK_BACKEND_HOST;
    }
    return CK_SUCCESS;
}

ck_status ck_device_open(ck_backend backend, int ordinal, ck_device **device)
{
    CK_REQUIRE_NOT_NULL(device, "ck_device_open");
    *device = NULL;
    ck_status st = choose_backend(&backend);
    if (st != CK_SUCCESS)
        return st;
    ck_device *d = calloc(1, sizeof *d);
    if (!d)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_device_open: no memory.");
    d->backend = backend;
    d->props.backend = backend;
    if (backend == CK_BACKEND_CUDA) {
        st = ck_cuda_open(d, ordinal);
        if (st != CK_SUCCESS) {
            ck_cuda_close(d);
            free(d);
            return ck_fail_context(st, "ck_device_open(cuda)");
        }
    } else {
        char cc[CK_PATH_MAX];
        if (ordinal != 0) {
            free(d);
            return ck_fail(CK_ERROR_NOT_FOUND,
                           "ck_device_open: the emulator has one device, ordinal 0; %d was "
                           "requested.",
                           ordinal);
        }
        if ((st = ck_host_compiler(cc, sizeof cc)) != CK_SUCCESS) {
            free(d);
            return st;
        }
        snprintf(d->props.name, sizeof d->props.name, "ck CPU emulator");
        snprintf(d->props.target, sizeof d->props.target, "host");
        d->props.cc_major = 9;
        d->props.cc_minor = 0;
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        d->props.multiprocessors = n > 0 ? (int)n : 1;
        d->props.max_shared_per_block = CK_EMU_MAX_SHARED_BYTES;
    }
    *device = d;
    return CK_SUCCESS;
}

static void module_free(ck_module *m)
{
    if (m->so_handle)
        dlclose(m->so_handle);
    if (m->cu_module)
        ck_cuda_module_unload(m->device, m->cu_module);
    free(m->kernels);
    free(m->sigs);
    free(m);
}

void ck_device_close(ck_device *d)
{
    if (!d)
        return;
    while (d->events) {
        ck_event *e = d->events;
        d->events = e->next;
        if (d->backend == CK_BACKEND_CUDA)
            ck_cuda_event_destroy(e);
        free(e);
    }
    while (d->streams) {
        ck_stream *s = d->streams;
        d->streams = s->next;
        if (d->backend == CK_BACKEND_CUDA && !s->borrowed)
            ck_cuda_stream_destroy(s);
        free(s);
    }
    while (d->modules) {
        ck_module *m = d->modules;
        d->modules = m->next;
        module_free(m);
    }
    for (size_t i = 0; i < d->alloc_count; ++i)
        free(d->allocs[i]);
    free(d->allocs);
    free(d->alloc_bytes);
    if (d->backend == CK_BACKEND_CUDA)
        ck_cuda_close(d);
    free(d);
}

ck_status ck_device_get_props(const ck_device *device, ck_device_props *props)
{
    REQUIRE_DEVICE(device, "ck_device_get_props");
    CK_REQUIRE_NOT_NULL(props, "ck_device_get_props");
    *props = device->props;
    return CK_SUCCESS;
}

ck_status ck_device_synchronize(ck_device *device)
{
    REQUIRE_DEVICE(device, "ck_device_synchronize");
    return device->backend == CK_BACKEND_CUDA ? ck_cuda_sync(device) : CK_SUCCESS;
}

/* ------------------------------------------------------------------ memory */
ck_status ck_malloc(ck_device *d, size_t bytes, void **ptr)
{
    REQUIRE_DEVICE(d, "ck_malloc");
    CK_REQUIRE_NOT_NULL(ptr, "ck_malloc");
    *ptr = NULL;
    if (bytes == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_malloc: 'bytes' is 0; ask for at least 1.");
    if (d->backend == CK_BACKEND_CUDA)
        return ck_cuda_malloc(d, bytes, ptr);
    if (bytes > ((size_t)1 << 40))
        return ck_fail(CK_ERROR_OUT_OF_MEMORY,
                       "ck_malloc: %zu bytes is more than the emulator allows (1 TiB).", bytes);
    if (d->alloc_count == d->alloc_cap) {
        size_t cap = d->alloc_cap ? d->alloc_cap * 2 : 64;
        void **g = realloc(d->allocs, cap * sizeof *g);
        if (g)
            d->allocs = g;
        size_t *gb = g ? realloc(d->alloc_bytes, cap * sizeof *gb) : NULL;
        if (!gb)
            return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_malloc: no memory.");
        d->alloc_bytes = gb;
        d->alloc_cap = cap;
    }
    /* `bytes` rounded up to 16 only, so AddressSanitizer sees overruns in kernels; the 16 lets
     * an emulated TMA store write the whole last 16-byte chunk of a row, as the H100 does */
    void *p = NULL;
    if (posix_memalign(&p, 256, (bytes + 15) / 16 * 16) != 0)
        p = NULL;
    if (!p)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY,
                       "ck_malloc: the host has no room for %zu bytes of emulated device memory.",
                       bytes);
    d->alloc_bytes[d->alloc_count] = bytes;
    d->allocs[d->alloc_count++] = p;
    *ptr = p;
    return CK_SUCCESS;
}

ck_status ck_free(ck_device *d, void *ptr)
{
    REQUIRE_DEVICE(d, "ck_free");
    if (!ptr)
        return CK_SUCCESS;
    if (d->backend == CK_BACKEND_CUDA)
        return ck_cuda_free(d, ptr);
    for (size_t i = 0; i < d->alloc_count; ++i) {
        if (d->allocs[i] == ptr) {
            free(ptr);
            --d->alloc_count;
            d->allocs[i] = d->allocs[d->alloc_count];
            d->alloc_bytes[i] = d->alloc_bytes[d->alloc_count];
            return CK_SUCCESS;
        }
    }
    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                   "ck_free: pointer %p was not returned by ck_malloc on this device (or was "
                   "freed already).",
                   ptr);
}

/* Emulator: [p, p + bytes) must lie inside one ck_malloc allocation of this device (as the
 * CUDA driver refuses a copy past the end of an allocation). */
static ck_status check_range(const ck_device *d, const void *p, size_t bytes, const char *fn,
                             const char *arg)
{
    uintptr_t q = (uintptr_t)p;
    for (size_t i = 0; i < d->alloc_count; ++i) {
        uintptr_t a = (uintptr_t)d->allocs[i];
        if (q < a || q - a >= d->alloc_bytes[i])
            continue;
        size_t room = d->alloc_bytes[i] - (size_t)(q - a);
        if (bytes <= room)
            return CK_SUCCESS;
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %zu bytes at argument '%s' (%p) run past the end of its allocation "
                       "of %zu bytes, which has %zu bytes left from there; at most %zu are "
                       "accepted.",
                       fn, bytes, arg, p, d->alloc_bytes[i], room, room);
    }
    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                   "%s: argument '%s' (%p) is not inside memory returned by ck_malloc on this "
                   "device (or it was freed already).",
                   fn, arg, p);
}

static ck_status copy(ck_device *d, int kind, void *dst, const void *src, size_t bytes,
                      ck_stream *s, const char *fn)
{
    REQUIRE_DEVICE(d, fn);
    if (bytes == 0)
        return CK_SUCCESS;
    if (!dst || !src)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' is NULL; a valid pointer is "
                       "required.",
                       fn, dst ? "src" : "dst");
    if (d->backend == CK_BACKEND_CUDA)
        return ck_cuda_memcpy(d, kind, dst, src, bytes, s);
    ck_status st = kind == 1 ? CK_SUCCESS : check_range(d, dst, bytes, fn, "dst");
    if (st == CK_SUCCESS && kind != 0)
        st = check_range(d, src, bytes, fn, "src");
    if (st != CK_SUCCESS)
        return st;
    memmove(dst, src, bytes);
    return CK_SUCCESS;
}

ck_status ck_memcpy_h2d(ck_device *d, void *dst, const void *src, size_t n, ck_stream *s)
{
    return copy(d, 0, dst, src, n, s, "ck_memcpy_h2d");
}
ck_status ck_memcpy_d2h(ck_device *d, void *dst, const void *src, size_t n, ck_stream *s)
{
    return copy(d, 1, dst, src, n, s, "ck_memcpy_d2h");
}
ck_status ck_memcpy_d2d(ck_device *d, void *dst, const void *src, size_t n, ck_stream *s)
{
    return copy(d, 2, dst, src, n, s, "ck_memcpy_d2d");
}

ck_status ck_memset_d8(ck_device *d, void *dst, unsigned char v, size_t bytes, ck_stream *s)
{
    REQUIRE_DEVICE(d, "ck_memset_d8");
    CK_REQUIRE_NOT_NULL(dst, "ck_memset_d8");
    if (d->backend == CK_BACKEND_CUDA)
        return ck_cuda_memset(d, dst, v, bytes, s);
    if (bytes == 0)
        return CK_SUCCESS;
    ck_status st = check_range(d, dst, bytes, "ck_memset_d8", "dst");
    if (st != CK_SUCCESS)
        return st;
    memset(dst, v, bytes);
    return CK_SUCCESS;
}

/* ------------------------------------------------------------------ streams and events */
ck_status ck_stream_create(ck_device *d, ck_stream **stream)
{
    REQUIRE_DEVICE(d, "ck_stream_create");
    CK_REQUIRE_NOT_NULL(stream, "ck_stream_create");
    ck_stream *s = calloc(1, sizeof *s);
    if (!s)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_stream_create: no memory.");
    s->device = d;
    if (d->backend == CK_BACKEND_CUDA) {
        ck_status st = ck_cuda_stream_create(d, s);
        if (st != CK_SUCCESS) {
            free(s);
            return st;
        }
    }
    s->next = d->streams;
    d->streams = s;
    *stream = s;
    return CK_SUCCESS;
}

ck_status ck_stream_wrap(ck_device *d, void *native, ck_stream **stream)
{
    REQUIRE_DEVICE(d, "ck_stream_wrap");
    CK_REQUIRE_NOT_NULL(stream, "ck_stream_wrap");
    *stream = NULL;
    if (d->backend != CK_BACKEND_CUDA && native)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_stream_wrap: argument 'native' = %p, but the CPU emulator has no "
                       "native streams; accepted there: NULL (the emulator runs each launch to "
                       "completion).",
                       native);
    ck_stream *s = calloc(1, sizeof *s);
    if (!s)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_stream_wrap: no memory.");
    s->device = d;
    s->cu = native;
    s->borrowed = 1;
    s->next = d->streams;
    d->streams = s;
    *stream = s;
    return CK_SUCCESS;
}

ck_status ck_stream_synchronize(ck_stream *s)
{
    CK_REQUIRE_NOT_NULL(s, "ck_stream_synchronize");
    return s->device->backend == CK_BACKEND_CUDA ? ck_cuda_stream_sync(s) : CK_SUCCESS;
}

void ck_stream_destroy(ck_stream *s)
{
    if (!s)
        return;
    ck_stream **pp = &s->device->streams;
    while (*pp && *pp != s)
        pp = &(*pp)->next;
    if (*pp)
        *pp = s->next;
    if (s->device->backend == CK_BACKEND_CUDA && !s->borrowed)
        ck_cuda_stream_destroy(s);
    free(s);
}

ck_status ck_event_create(ck_device *d, ck_event **event)
{
    REQUIRE_DEVICE(d, "ck_event_create");
    CK_REQUIRE_NOT_NULL(event, "ck_event_create");
    ck_event *e = calloc(1, sizeof *e);
    if (!e)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_event_create: no memory.");
    e->device = d;
    if (d->backend == CK_BACKEND_CUDA) {
        ck_status st = ck_cuda_event_create(d, e);
        if (st != CK_SUCCESS) {
            free(e);
            return st;
        }
    }
    e->next = d->events;
    d->events = e;
    *event = e;
    return CK_SUCCESS;
}

ck_status ck_event_record(ck_event *e, ck_stream *s)
{
    CK_REQUIRE_NOT_NULL(e, "ck_event_record");
    if (s && s->device != e->device)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_event_record: the stream belongs to another device than the event.");
    e->recorded = 1;
    if (e->device->backend == CK_BACKEND_CUDA)
        return ck_cuda_event_record(e, s);
    e->host_ms = now_ms();
    return CK_SUCCESS;
}

ck_status ck_event_synchronize(ck_event *e)
{
    CK_REQUIRE_NOT_NULL(e, "ck_event_synchronize");
    return e->device->backend == CK_BACKEND_CUDA ? ck_cuda_event_sync(e) : CK_SUCCESS;
}

ck_status ck_event_elapsed_ms(const ck_event *a, const ck_event *b, float *ms)
{
    CK_REQUIRE_NOT_NULL(a, "ck_event_elapsed_ms");
    CK_REQUIRE_NOT_NULL(b, "ck_event_elapsed_ms");
    CK_REQUIRE_NOT_NULL(ms, "ck_event_elapsed_ms");
    if (!a->recorded || !b->recorded)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_event_elapsed_ms: the %s event was never recorded; record both first.",
                       a->recorded ? "end" : "start");
    if (a->device->backend == CK_BACKEND_CUDA)
        return ck_cuda_event_elapsed(a, b, ms);
    *ms = (float)(b->host_ms - a->host_ms);
    return CK_SUCCESS;
}

void ck_event_destroy(ck_event *e)
{
    if (!e)
        return;
    ck_event **pp = &e->device->events;
    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp)
        *pp = e->next;
    if (e->device->backend == CK_BACKEND_CUDA)
        ck_cuda_event_destroy(e);
    free(e);
}
