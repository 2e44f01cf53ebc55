/* ck_query_system: what this process can use, probed at run time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck_build_info.h"
#include "core/error.h"
#include "rt/dynlib.h"

typedef int CUresult_;
typedef int CUdevice_;

static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};
static const char *const nvrtc_names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                          "libnvrtc.so.11.2", NULL};
static const char *const cuda_dirs[] = {"/usr/local/cuda/lib64",
                                        "/usr/local/cuda/targets/x86_64-linux/lib",
                                        "/usr/lib/x86_64-linux-gnu", "/usr/lib64", NULL};

const char *ck_version(void)
{
    return CK_VERSION_STRING;
}
const char *ck_build_options(void)
{
    return CK_BUILD_OPTIONS_STRING;
}

ck_status ck_cache_dir(char *path, size_t size)
{
    CK_REQUIRE_NOT_NULL(path, "ck_cache_dir");
    const char *env = getenv("CK_CACHE_DIR");
    int n;
    if (env && *env)
        n = snprintf(path, size, "%s", env);
    else if ((env = getenv("XDG_CACHE_HOME")) && *env)
        n = snprintf(path, size, "%s/ck", env);
    else if ((env = getenv("HOME")) && *env)
        n = snprintf(path, size, "%s/.cache/ck", env);
    else
        return ck_fail(CK_ERROR_NOT_FOUND,
                       "ck_cache_dir: no cache directory: none of CK_CACHE_DIR, XDG_CACHE_HOME "
                       "and HOME is set; set CK_CACHE_DIR.");
    if (n < 0 || (size_t)n >= size)
        return ck_fail(CK_ERROR_OVERFLOW,
                       "ck_cache_dir: the cache directory path needs %d bytes but the buffer "
                       "holds %zu.",
                       n + 1, size);
    return CK_SUCCESS;
}

static void probe_cuda(ck_system_info *info)
{
    void *lib = NULL;
    char found[256];
    ck_status st = ck_dynlib_open("the CUDA driver (libcuda)", "CK_CUDA_DRIVER_PATH", cuda_names,
                                  NULL, &lib, found, sizeof found);
    if (st != CK_SUCCESS) {
        snprintf(info->cuda_driver_status, sizeof info->cuda_driver_status, "%s", ck_last_error());
        return;
    }
    CUresult_ (*cuInit)(unsigned) = NULL;
    CUresult_ (*cuDriverGetVersion)(int *) = NULL;
    CUresult_ (*cuDeviceGetCount)(int *) = NULL;
    CUresult_ (*cuDeviceGet)(CUdevice_ *, int) = NULL;
    CUresult_ (*cuDeviceGetName)(char *, int, CUdevice_) = NULL;
    CUresult_ (*cuDeviceGetAttribute)(int *, int, CUdevice_) = NULL;
    CUresult_ (*cuDeviceTotalMem)(size_t *, CUdevice_) = NULL;
    const char *w = "the CUDA driver";
    if (ck_dynlib_symbol(lib, w, "cuInit", &cuInit) ||
        ck_dynlib_symbol(lib, w, "cuDriverGetVersion", &cuDriverGetVersion) ||
        ck_dynlib_symbol(lib, w, "cuDeviceGetCount", &cuDeviceGetCount) ||
        ck_dynlib_symbol(lib, w, "cuDeviceGet", &cuDeviceGet) ||
        ck_dynlib_symbol(lib, w, "cuDeviceGetName", &cuDeviceGetName) ||
        ck_dynlib_symbol(lib, w, "cuDeviceGetAttribute", &cuDeviceGetAttribute) ||
        ck_dynlib_symbol(lib, w, "cuDeviceTotalMem_v2", &cuDeviceTotalMem)) {
        snprintf(info->cuda_driver_status, sizeof info->cuda_driver_status, "%s", ck_last_error());
        ck_dynlib_close(lib);
        return;
    }
    cuDriverGetVersion(&info->cuda_driver_version);
    int rc = cuInit(0);
    if (rc != 0) {
        snprintf(info->cuda_driver_status, sizeof info->cuda_driver_status,
                 "%s loaded but cuInit failed with CUDA error %d (no usable GPU or driver "
                 "mismatch).",
                 found, rc);
        ck_dynlib_close(lib);
        return;
    }
    info->cuda_driver_found = 1;
    snprintf(info->cuda_driver_status, sizeof info->cuda_driver_status, "%s", found);
    int count = 0;
    if (cuDeviceGetCount(&count) != 0)
        count = 0;
    for (int i = 0; i < count && i < CK_MAX_DEVICES; ++i) {
        CUdevice_ dev;
        ck_device_info *d = &info->devices[info->device_count];
        if (cuDeviceGet(&dev, i) != 0)
            continue;
        cuDeviceGetName(d->name, (int)sizeof d->name, dev);
        cuDeviceGetAttribute(&d->cc_major, 75, dev);        /* COMPUTE_CAPABILITY_MAJOR */
        cuDeviceGetAttribute(&d->cc_minor, 76, dev);        /* COMPUTE_CAPABILITY_MINOR */
        cuDeviceGetAttribute(&d->multiprocessors, 16, dev); /* MULTIPROCESSOR_COUNT */
        cuDeviceTotalMem(&d->memory_bytes, dev);
        info->device_count++;
    }
    ck_dynlib_close(lib);
}

static void probe_nvrtc(ck_system_info *info)
{
    void *lib = NULL;
    char found[256];
    if (ck_dynlib_open("NVRTC (libnvrtc)", "CK_NVRTC_PATH", nvrtc_names, cuda_dirs, &lib, found,
                       sizeof found) != CK_SUCCESS) {
        snprintf(info->nvrtc_status, sizeof info->nvrtc_status, "%s", ck_last_error());
        return;
    }
    int (*nvrtcVersion)(int *, int *) = NULL;
    if (ck_dynlib_symbol(lib, "NVRTC", "nvrtcVersion", &nvrtcVersion) != CK_SUCCESS ||
        nvrtcVersion(&info->nvrtc_major, &info->nvrtc_minor) != 0) {
        snprintf(info->nvrtc_status, sizeof info->nvrtc_status, "%s", ck_last_error());
        ck_dynlib_close(lib);
        return;
    }
    info->nvrtc_found = 1;
    snprintf(info->nvrtc_status, sizeof info->nvrtc_status, "%s", found);
    /* NVRTC keeps process-lifetime state from its first call; unloading it would orphan that
     * memory, so once initialised it stays loaded (dlopen reference counting makes repeated
     * probes cheap). */
}

/* The emulator compiles kernels with $CK_HOST_CC, else the compiler ck was built with, else cc. */
static void probe_host_compiler(ck_system_info *info)
{
    const char *candidates[3] = {getenv("CK_HOST_CC"), CK_C_COMPILER_PATH, "cc"};
    for (int i = 0; i < 3; ++i) {
        const char *c = candidates[i];
        if (!c || !*c)
            continue;
        if (strchr(c, '/')) {
            if (access(c, X_OK) == 0) {
                snprintf(info->host_compiler, sizeof info->host_compiler, "%s", c);
                info->host_compiler_found = 1;
                return;
            }
            continue;
        }
        const char *path = getenv("PATH");
        while (path && *path) {
            const char *end = strchr(path, ':');
            size_t len = end ? (size_t)(end - path) : strlen(path);
            char full[CK_PATH_MAX];
            snprintf(full, sizeof full, "%.*s/%s", (int)len, path, c);
            if (len && access(full, X_OK) == 0) {
                snprintf(info->host_compiler, sizeof info->host_compiler, "%s", full);
                info->host_compiler_found = 1;
                return;
            }
            path = end ? end + 1 : NULL;
        }
    }
    snprintf(info->host_compiler, sizeof info->host_compiler,
             "no C compiler found (set CK_HOST_CC)");
}

ck_status ck_query_system(ck_system_info *info)
{
    CK_REQUIRE_NOT_NULL(info, "ck_query_system");
    memset(info, 0, sizeof *info);
    probe_cuda(info);
    probe_nvrtc(info);
    probe_host_compiler(info);
    ck_status st = ck_cache_dir(info->cache_dir, sizeof info->cache_dir);
    if (st == CK_SUCCESS)
        ck_clear_error(); /* probe failures are reported in info, not as the call's error */
    return st;
}
