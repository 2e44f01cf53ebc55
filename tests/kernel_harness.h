/*
 * Helpers for tests that run device kernels: open the device the environment asks for
 * (CK_DEVICE=cuda|host; default cuda when a GPU is usable, else the emulator), read kernel
 * sources from tests/kernels/, launch with a short argument list, and dump results to
 * $CK_TEST_DUMP_DIR/<name>.bin (scripts/gpu-check compares GPU and emulator dumps bit for bit).
 */
#ifndef CK_TESTS_KERNEL_HARNESS_H
#define CK_TESTS_KERNEL_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/runtime.h"
#include "test.h"

#if defined(__GNUC__)
#define CKK_UNUSED __attribute__((unused))
#else
#define CKK_UNUSED
#endif

static ck_device *ckk_device;

/* Open the device once; returns NULL (after printing why) when none can be opened. */
CKK_UNUSED static ck_device *ckk_open(void)
{
    if (ckk_device)
        return ckk_device;
    if (ck_device_open(CK_BACKEND_AUTO, 0, &ckk_device) != CK_SUCCESS) {
        fprintf(stderr, "cannot open a device: %s\n", ck_last_error());
        return NULL;
    }
    ck_device_props p;
    ck_device_get_props(ckk_device, &p);
    printf("device: %s (%s)\n", p.name, p.target);
    return ckk_device;
}

CKK_UNUSED static int ckk_is_host(void)
{
    ck_device_props p;
    return ckk_open() && ck_device_get_props(ckk_device, &p) == CK_SUCCESS &&
           p.backend == CK_BACKEND_HOST;
}

CKK_UNUSED static void ckk_close(void)
{
    ck_device_close(ckk_device);
    ckk_device = NULL;
}

/* The contents of tests/kernels/<name> (malloc'd), located next to this header. */
CKK_UNUSED static char *ckk_read_kernel(const char *name)
{
    char path[4096];
    const char *here = __FILE__;
    const char *slash = strrchr(here, '/');
    snprintf(path, sizeof path, "%.*skernels/%s", slash ? (int)(slash - here + 1) : 0, here, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open kernel source %s\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

/* Kernel `kernel` of tests/kernels/<file>, or NULL (with a failed check). */
CKK_UNUSED static ck_kernel *ckk_kernel(const char *file, const char *kernel)
{
    ck_device *d = ckk_open();
    char *src = ckk_read_kernel(file);
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    if (!d || !src) {
        CHECK_MSG(0, "no device or no source for %s", file);
        free(src);
        return NULL;
    }
    ck_status st = ck_module_load(d, src, NULL, 0, &m);
    CHECK_MSG(st == CK_SUCCESS, "loading %s: %s", file, ck_last_error());
    if (st == CK_SUCCESS) {
        st = ck_module_get_kernel(m, kernel, &k);
        CHECK_MSG(st == CK_SUCCESS, "%s", ck_last_error());
    }
    free(src);
    return k;
}

/* Kernel `kernel` of the generated device C `body` (freed here) after `#include "ck_device.h"`,
 * or NULL (with a failed check). */
CKK_UNUSED static ck_kernel *ckk_source_kernel(char *body, const char *kernel)
{
    ck_device *d = ckk_open();
    size_t len = strlen(body) + 64;
    char *src = malloc(len);
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    if (src)
        snprintf(src, len, "#include \"ck_device.h\"\n%s", body);
    free(body);
    if (!d || !src) {
        CHECK_MSG(0, "no device or no memory for kernel %s", kernel);
        free(src);
        return NULL;
    }
    ck_status st = ck_module_load(d, src, NULL, 0, &m);
    CHECK_MSG(st == CK_SUCCESS, "load: %s", ck_last_error());
    if (st == CK_SUCCESS) {
        st = ck_module_get_kernel(m, kernel, &k);
        CHECK_MSG(st == CK_SUCCESS, "%s", ck_last_error());
    }
    free(src);
    return k;
}

/* Device buffer with `bytes` copied from `host` (or filled with 0x5A when host is NULL). */
CKK_UNUSED static void *ckk_upload(const void *host, size_t bytes)
{
    void *p = NULL;
    if (ck_malloc(ckk_device, bytes, &p) != CK_SUCCESS) {
        CHECK_MSG(0, "ck_malloc: %s", ck_last_error());
        return NULL;
    }
    if (host)
        ck_memcpy_h2d(ckk_device, p, host, bytes, NULL);
    else
        ck_memset_d8(ckk_device, p, 0x5A, bytes, NULL);
    return p;
}

CKK_UNUSED static void ckk_download(void *host, const void *dev, size_t bytes)
{
    CHECK_OK(ck_memcpy_d2h(ckk_device, host, dev, bytes, NULL));
}

/* Launch with n pointer-or-scalar arguments given as (pointer to value, size) pairs. */
CKK_UNUSED static ck_status ckk_launch(ck_kernel *k, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, size_t dyn, int n,
                                       ...)
{
    void *args[16];
    size_t sizes[16];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && i < 16; ++i) {
        args[i] = va_arg(ap, void *);
        sizes[i] = va_arg(ap, size_t);
    }
    va_end(ap);
    ck_launch_config c = {{gx, gy, gz}, {bx, by, bz}, {0, 0, 0}, dyn, NULL};
    if (!k)
        return CK_ERROR_INVALID_ARGUMENT;
    ck_status st = ck_launch(k, &c, args, sizes, n);
    if (st == CK_SUCCESS)
        st = ck_device_synchronize(ckk_device);
    return st;
}

#define CKK_ARG(x) (void *)&(x), sizeof(x)

/* Write `bytes` of `data` to $CK_TEST_DUMP_DIR/<name>.<backend>.bin when the variable is set. */
CKK_UNUSED static void ckk_dump(const char *name, const void *data, size_t bytes)
{
    const char *dir = getenv("CK_TEST_DUMP_DIR");
    if (!dir || !*dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s.bin", dir, name, ckk_is_host() ? "host" : "cuda");
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, bytes, f);
        fclose(f);
    }
}

#endif
