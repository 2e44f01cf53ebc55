/* NVRTC, loaded with dlopen: compiling device C to cubins with the embedded prelude headers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlinfo */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck/ck.h"
#include "core/error.h"
#include "rt/dynlib.h"
#include "rt/embedded_headers.h"
#include "rt/runtime_internal.h"

typedef struct nvrtc_api {
    int (*version)(int *, int *);
    int (*create)(void **, const char *, const char *, int, const char *const *,
                  const char *const *);
    int (*destroy)(void **);
    int (*compile)(void *, int, const char *const *);
    int (*log_size)(void *, size_t *);
    int (*log)(void *, char *);
    int (*cubin_size)(void *, size_t *);
    int (*cubin)(void *, char *);
    const char *(*error_string)(int);
} nvrtc_api;

static nvrtc_api api;
static void *lib_handle; /* the loaded library (kept open for the process) */
static ck_status load_status = CK_SUCCESS;
static char load_message[1024];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static const char *const nvrtc_names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                          "libnvrtc.so.11.2", NULL};
static const char *const nvrtc_dirs[] = {"/usr/local/cuda/lib64",
                                         "/usr/local/cuda/targets/x86_64-linux/lib",
                                         "/usr/lib/x86_64-linux-gnu", "/usr/lib64", NULL};

static void load(void)
{
    void *h = NULL;
    char found[256];
    const char *w = "NVRTC";
    ck_status st = ck_dynlib_open("NVRTC (libnvrtc)", "CK_NVRTC_PATH", nvrtc_names, nvrtc_dirs, &h,
                                  found, sizeof found);
    if (st == CK_SUCCESS && (ck_dynlib_symbol(h, w, "nvrtcVersion", &api.version) ||
                             ck_dynlib_symbol(h, w, "nvrtcCreateProgram", &api.create) ||
                             ck_dynlib_symbol(h, w, "nvrtcDestroyProgram", &api.destroy) ||
                             ck_dynlib_symbol(h, w, "nvrtcCompileProgram", &api.compile) ||
                             ck_dynlib_symbol(h, w, "nvrtcGetProgramLogSize", &api.log_size) ||
                             ck_dynlib_symbol(h, w, "nvrtcGetProgramLog", &api.log) ||
                             ck_dynlib_symbol(h, w, "nvrtcGetCUBINSize", &api.cubin_size) ||
                             ck_dynlib_symbol(h, w, "nvrtcGetCUBIN", &api.cubin) ||
                             ck_dynlib_symbol(h, w, "nvrtcGetErrorString", &api.error_string))) {
        st = CK_ERROR_BACKEND_UNAVAILABLE;
        ck_dynlib_close(h); /* the library is kept open for the process otherwise */
    }
    if (st != CK_SUCCESS) {
        load_status = st;
        snprintf(load_message, sizeof load_message, "%s", ck_last_error());
    } else {
        __atomic_store_n(&lib_handle, h, __ATOMIC_RELEASE);
    }
}


static ck_status ensure(void)
{
    pthread_once(&load_once, load);
    if (load_status != CK_SUCCESS)
        return ck_fail(load_status, "%s", load_message);
    return CK_SUCCESS;
}

int ck_nvrtc_loaded(void)
{
    return __atomic_load_n(&lib_handle, __ATOMIC_ACQUIRE) != NULL;
}

ck_status ck_nvrtc_library_path(char *path, size_t size)
{
    ck_status st = ensure();
    if (st != CK_SUCCESS)
        return st;
    struct link_map *lm = NULL;
    if (dlinfo(lib_handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !lm->l_name[0] ||
        (size_t)snprintf(path, size, "%s", lm->l_name) >= size)
        return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE, "the path of the loaded NVRTC is unknown.");
    return CK_SUCCESS;
}

ck_status ck_nvrtc_version(int *major, int *minor)
{
    ck_status st = ensure();
    if (st != CK_SUCCESS)
        return st;
    if (api.version(major, minor) != 0)
        return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE, "nvrtcVersion failed.");
    return CK_SUCCESS;
}

/* Write the failing source to a file; returns its path in `path` (empty if impossible). */
static void keep_source(const char *source, char *path, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, size, "%s/ck-nvrtc-XXXXXX.cu", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemps(path, 3);
    if (fd < 0) {
        snprintf(path, size, "(could not be written)");
        return;
    }
    size_t n = strlen(source), off = 0;
    while (off < n) {
        ssize_t w = write(fd, source + off, n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(fd);
}

ck_status ck_nvrtc_compile(const char *source, const char *arch, const char *const *options,
                           int option_count, void **cubin, size_t *size)
{
    *cubin = NULL;
    *size = 0;
    ck_status st = ensure();
    if (st != CK_SUCCESS)
        return st;
    int count = ck_embedded_header_count, nh = 0;
    const char **names = malloc(sizeof(char *) * (size_t)(2 * count + 1));
    const char **datas = malloc(sizeof(char *) * (size_t)(2 * count + 1));
    const char **opts = malloc(sizeof(char *) * (size_t)(option_count + 8));
    if (!names || !datas || !opts) {
        free(names);
        free(datas);
        free(opts);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "NVRTC: no memory for the compile options.");
    }
    /* Each header under its path relative to src/device, and also under its file name when
     * that is unique, so that headers including siblings by file name resolve as well. */
    for (int i = 0; i < count; ++i) {
        names[nh] = ck_embedded_headers[i].name;
        datas[nh++] = ck_embedded_headers[i].data;
    }
    for (int i = 0; i < count; ++i) {
        const char *base = strrchr(ck_embedded_headers[i].name, '/');
        if (!base)
            continue;
        base++;
        int clash = 0;
        for (int j = 0; j < count; ++j) {
            const char *other = strrchr(ck_embedded_headers[j].name, '/');
            other = other ? other + 1 : ck_embedded_headers[j].name;
            clash |= j != i && strcmp(other, base) == 0;
        }
        if (!clash) {
            names[nh] = base;
            datas[nh++] = ck_embedded_headers[i].data;
        }
    }
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    int no = 0;
    opts[no++] = archopt;
    opts[no++] = "--std=c++17";
    opts[no++] = "-lineinfo";
    for (int i = 0; i < option_count; ++i)
        opts[no++] = options[i];
    void *prog = NULL;
    int rc = api.create(&prog, source, "kernel.cu", nh, datas, names);
    if (rc != 0) {
        st = ck_fail(CK_ERROR_COMPILE, "NVRTC could not create a program: %s.",
                     api.error_string(rc));
        goto done;
    }
    rc = api.compile(prog, no, opts);
    if (rc != 0) {
        size_t ls = 0;
        char *log = NULL;
        if (api.log_size(prog, &ls) == 0 && ls && (log = malloc(ls + 1)) != NULL &&
            api.log(prog, log) == 0)
            log[ls] = '\0';
        char path[CK_PATH_MAX];
        keep_source(source, path, sizeof path);
        st = ck_fail(CK_ERROR_COMPILE,
                     "NVRTC failed to compile the kernel source for %s (%s); the source is in "
                     "%s. Compiler log:\n%.1500s",
                     arch, api.error_string(rc), path, log ? log : "(no log)");
        free(log);
        goto done;
    }
    size_t n = 0;
    char *bin = NULL;
    if (api.cubin_size(prog, &n) != 0 || n == 0 || !(bin = malloc(n)) ||
        api.cubin(prog, bin) != 0) {
        free(bin);
        st = ck_fail(CK_ERROR_COMPILE, "NVRTC compiled the source for %s but gave no cubin.", arch);
        goto done;
    }
    *cubin = bin;
    *size = n;
done:
    if (prog)
        api.destroy(&prog);
    free(names);
    free(datas);
    free(opts);
    return st;
}
