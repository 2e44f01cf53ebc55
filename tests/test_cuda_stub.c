/* The cuda backend against a stand-in CUDA driver: the test compiles a small libcuda stub
 * (host memory, launches recorded, not run), points CK_CUDA_DRIVER_PATH at it and drives the
 * runtime's cuda path: device selection by compute capability, memory, copies, streams, events,
 * NVRTC compilation for the selected target, module load, launches with large dynamic shared
 * memory and clusters, argument checks, errors. No GPU needed; skipped without NVRTC. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ck_build_info.h"
#include "kernel_harness.h"
#include "rt/runtime_internal.h"

typedef struct stub_tmap {
    int calls, dtype;
    unsigned rank;
    void *addr;
    unsigned long long dims[5], strides[4];
    unsigned box[5], estr[5];
    int interleave, swizzle, l2, oob;
} stub_tmap;

typedef struct stub_rec {
    unsigned grid[3], block[3], shared, cluster[3];
    int launches, ex, attr_set, attr_value;
    unsigned long long arg0;
    int arg2, modules, live_allocs;
} stub_rec;

typedef struct stub_streams {
    void *copy, *sync, *launch;
    int destroyed;
} stub_streams;

static char stub_path[4096];

static int build_stub(void)
{
    char src[4096], cmd[16384];
    const char *tmp = getenv("TMPDIR");
    const char *here = __FILE__, *slash = strrchr(here, '/');
    snprintf(src, sizeof src, "%.*scuda_stub/libcuda_stub.c", slash ? (int)(slash - here + 1) : 0,
             here);
    snprintf(stub_path, sizeof stub_path, "%s/ck-cuda-stub-%d.so", tmp && *tmp ? tmp : "/tmp",
             (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s' -shared -fPIC -O1 -o '%s' '%s'", CK_C_COMPILER_PATH, stub_path,
             src);
    return system(cmd) == 0;
}

static const char *kernel_src =
    "#include \"ck_device.h\"\n"
    "CK_KERNEL void axpy(float *y, const float *x, int n)\n"
    "{\n"
    "    unsigned i = ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();\n"
    "    if (i < (unsigned)n) y[i] += 2.0f * x[i];\n"
    "}\n";

static void test_cuda_backend_with_stub(void)
{
    void *h = dlopen(stub_path, RTLD_NOW | RTLD_NOLOAD);
    ck_device *d = NULL;
    setenv("CK_STUB_CC", "90", 1);
    CHECK_OK(ck_device_open(CK_BACKEND_CUDA, 0, &d));
    if (!d)
        return;
    h = dlopen(stub_path, RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    stub_rec *rec = h ? dlsym(h, "ck_stub_rec") : NULL;
    size_t *param_sizes = h ? dlsym(h, "ck_stub_param_sizes") : NULL;
    CHECK(rec && param_sizes);
    if (!rec || !param_sizes)
        return;
    rec->launches = 0; /* test_stream_wrap_uses_the_callers_stream launched before */
    ck_device_props p;
    CHECK_OK(ck_device_get_props(d, &p));
    CHECK_EQ_STR(p.target, "sm_90a");
    CHECK_EQ_STR(p.name, "Stub GPU");
    CHECK_EQ_INT(p.max_shared_per_block, 232448);
    CHECK_EQ_INT(p.multiprocessors, 132);

    /* memory and copies */
    float host[64], back[64];
    for (int i = 0; i < 64; ++i)
        host[i] = (float)i * 0.5f + 1.0f;
    void *a = NULL, *b = NULL;
    CHECK_OK(ck_malloc(d, sizeof host, &a));
    CHECK_OK(ck_malloc(d, sizeof host, &b));
    CHECK_OK(ck_memcpy_h2d(d, a, host, sizeof host, NULL));
    CHECK_OK(ck_memcpy_d2d(d, b, a, sizeof host, NULL));
    CHECK_OK(ck_memcpy_d2h(d, back, b, sizeof back, NULL));
    CHECK(memcmp(host, back, sizeof host) == 0);
    void *huge = NULL;
    CHECK_STATUS(ck_malloc(d, (size_t)1 << 40, &huge), CK_ERROR_OUT_OF_MEMORY);
    CHECK(huge == NULL);

    /* module: NVRTC compiles for sm_90a, the stub loads the cubin */
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    CHECK_OK(ck_module_load(d, kernel_src, NULL, 0, &m));
    CHECK_EQ_INT(rec->modules, 1);
    CHECK_OK(ck_module_get_kernel(m, "axpy", &k));
    int n = 64;
    void *args[] = {&a, &b, &n};
    size_t sizes[] = {8, 8, 4};
    ck_stream *s = NULL;
    CHECK_OK(ck_stream_create(d, &s));
    ck_launch_config c = {{2, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, s};
    CHECK_OK(ck_launch(k, &c, args, sizes, 3));
    CHECK_EQ_INT(rec->launches, 1);
    CHECK_EQ_INT(rec->ex, 0);
    CHECK_EQ_INT(rec->grid[0], 2);
    CHECK_EQ_INT(rec->block[0], 32);
    CHECK(rec->arg0 == (unsigned long long)(uintptr_t)a);
    CHECK_EQ_INT(rec->arg2, 64);
    /* dynamic shared memory above 48 KiB and a cluster: cuFuncSetAttribute + cuLaunchKernelEx */
    ck_launch_config big = {{4, 2, 1}, {128, 1, 1}, {2, 1, 1}, 100000, s};
    CHECK_OK(ck_launch(k, &big, args, sizes, 3));
    CHECK_EQ_INT(rec->attr_set, 8);
    CHECK_EQ_INT(rec->attr_value, 100000);
    CHECK_EQ_INT(rec->ex, 1);
    CHECK_EQ_INT(rec->cluster[0], 2);
    CHECK_EQ_INT(rec->cluster[1], 1);
    CHECK_EQ_INT(rec->shared, 100000);
    CHECK_EQ_INT(rec->grid[1], 2);
    /* clusters of 16: the non-portable opt-in before the launch */
    ck_launch_config c16 = {{32, 1, 1}, {64, 1, 1}, {16, 1, 1}, 0, s};
    CHECK_OK(ck_launch(k, &c16, args, sizes, 3));
    CHECK_EQ_INT(rec->attr_set, 14);
    CHECK_EQ_INT(rec->attr_value, 1);
    CHECK_EQ_INT(rec->cluster[0], 16);
    /* resident blocks / clusters: the stub's 2 blocks per SM on 132 SMs */
    int active = -1;
    CHECK_OK(ck_kernel_max_active(k, &c, &active));
    CHECK_EQ_INT(active, 264);
    CHECK_OK(ck_kernel_max_active(k, &c16, &active));
    CHECK_EQ_INT(active, 16);
    CHECK_STATUS(ck_kernel_max_active(k, &c, NULL), CK_ERROR_INVALID_ARGUMENT);
    ck_launch_config toobig = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 300000, NULL};
    CHECK_STATUS(ck_launch(k, &toobig, args, sizes, 3), CK_ERROR_INVALID_ARGUMENT);
    ck_launch_config badcluster = {{3, 1, 1}, {32, 1, 1}, {2, 1, 1}, 0, NULL};
    CHECK_STATUS(ck_launch(k, &badcluster, args, sizes, 3), CK_ERROR_INVALID_ARGUMENT);
    /* the driver's parameter sizes are checked, read once at a kernel's first launch: a
     * kernel of another module whose third parameter the driver says has 8 bytes */
    ck_module *m8 = NULL;
    ck_kernel *k8 = NULL;
    char src8[512];
    snprintf(src8, sizeof src8, "%s/* another module */\n", kernel_src);
    CHECK_OK(ck_module_load(d, src8, NULL, 0, &m8));
    CHECK_OK(ck_module_get_kernel(m8, "axpy", &k8));
    param_sizes[2] = 8;
    if (k8) {
        CHECK_STATUS(ck_launch(k8, &c, args, sizes, 3), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "int n") != NULL);
    }
    param_sizes[2] = 4;
    if (k8) /* the sizes were read once: the same kernel still refuses */
        CHECK_STATUS(ck_launch(k8, &c, args, sizes, 3), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_launch(k, &c, args, sizes, 3));
    CHECK_STATUS(ck_launch(k, &c, args, sizes, 2), CK_ERROR_INVALID_ARGUMENT);

    /* tensor maps: cuTensorMapEncodeTiled with the described arguments */
    stub_tmap *tm = h ? dlsym(h, "ck_stub_tmap") : NULL;
    CHECK(tm != NULL);
    ck_tensor_map_desc td;
    memset(&td, 0, sizeof td);
    td.elem_bytes = 2;
    td.rank = 3;
    td.global_address = a;
    td.dims[0] = 64, td.dims[1] = 32, td.dims[2] = 5;
    td.strides[0] = 128, td.strides[1] = 128 * 32;
    td.box[0] = 64, td.box[1] = 16, td.box[2] = 2;
    td.elem_strides[1] = 2;
    td.swizzle = 3;
    ck_tensor_map map;
    memset(&map, 0, sizeof map);
    CHECK_OK(ck_tensor_map_create(d, &td, &map));
    if (tm) {
        CHECK_EQ_INT(tm->calls, 1);
        CHECK_EQ_INT(tm->dtype, 1); /* UINT16 */
        CHECK_EQ_INT(tm->rank, 3);
        CHECK(tm->addr == a);
        CHECK(tm->dims[0] == 64 && tm->dims[1] == 32 && tm->dims[2] == 5);
        CHECK(tm->strides[0] == 128 && tm->strides[1] == 4096);
        CHECK(tm->box[0] == 64 && tm->box[1] == 16 && tm->box[2] == 2);
        CHECK(tm->estr[0] == 1 && tm->estr[1] == 2 && tm->estr[2] == 1); /* 0 means 1 */
        CHECK_EQ_INT(tm->interleave, 0);
        CHECK_EQ_INT(tm->swizzle, 3);
        CHECK_EQ_INT(tm->l2, 2);
        CHECK_EQ_INT(tm->oob, 0);
        CHECK(((const unsigned char *)&map)[0] == 0xA5 &&
              ((const unsigned char *)&map)[127] == 0xA5);
    }
    /* bad input is refused before the driver sees it; a driver failure is reported */
    ck_tensor_map before = map;
    td.box[0] = 128; /* 256 bytes > the 128-byte swizzle span */
    CHECK_STATUS(ck_tensor_map_create(d, &td, &map), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "box[0]*elem_bytes = 256 bytes") != NULL);
    td.box[0] = 64;
    CHECK(memcmp(&before, &map, sizeof map) == 0);
    CHECK(!tm || tm->calls == 1);
    setenv("CK_STUB_TMAP_FAIL", "1", 1);
    CHECK_STATUS(ck_tensor_map_create(d, &td, &map), CK_ERROR_DEVICE);
    CHECK(strstr(ck_last_error(), "cuTensorMapEncodeTiled") != NULL);
    unsetenv("CK_STUB_TMAP_FAIL");

    /* events and timing */
    ck_event *e0 = NULL, *e1 = NULL;
    float ms = 0;
    CHECK_OK(ck_event_create(d, &e0));
    CHECK_OK(ck_event_create(d, &e1));
    CHECK_OK(ck_event_record(e0, s));
    CHECK_OK(ck_event_record(e1, s));
    CHECK_OK(ck_event_synchronize(e1));
    CHECK_OK(ck_event_elapsed_ms(e0, e1, &ms));
    CHECK(ms == 1.5f);
    CHECK_OK(ck_stream_synchronize(s));
    CHECK_OK(ck_device_synchronize(d));
    CHECK_OK(ck_free(d, a));
    CHECK_OK(ck_free(d, b));
    ck_device_close(d);
    CHECK_EQ_INT(rec->modules, 0);
    CHECK_EQ_INT(rec->live_allocs, 0);

    /* compute capabilities: 8.9 -> sm_89, 8.6 -> sm_80, 7.5 and 10.0 refused */
    setenv("CK_STUB_CC", "89", 1);
    CHECK_OK(ck_device_open(CK_BACKEND_CUDA, 0, &d));
    CHECK_OK(ck_device_get_props(d, &p));
    CHECK_EQ_STR(p.target, "sm_89");
    ck_launch_config cl = {{2, 1, 1}, {32, 1, 1}, {2, 1, 1}, 0, NULL};
    CHECK_OK(ck_module_load(d, kernel_src, NULL, 0, &m));
    CHECK_OK(ck_module_get_kernel(m, "axpy", &k));
    CHECK_STATUS(ck_launch(k, &cl, args, sizes, 3), CK_ERROR_UNSUPPORTED);
    ck_device_close(d);
    setenv("CK_STUB_CC", "86", 1);
    CHECK_OK(ck_device_open(CK_BACKEND_CUDA, 0, &d));
    CHECK_OK(ck_device_get_props(d, &p));
    CHECK_EQ_STR(p.target, "sm_80");
    ck_device_close(d);
    setenv("CK_STUB_CC", "75", 1);
    CHECK_STATUS(ck_device_open(CK_BACKEND_CUDA, 0, &d), CK_ERROR_UNSUPPORTED);
    setenv("CK_STUB_CC", "100", 1);
    CHECK_STATUS(ck_device_open(CK_BACKEND_CUDA, 0, &d), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_device_open(CK_BACKEND_CUDA, 3, &d), CK_ERROR_NOT_FOUND);
    setenv("CK_STUB_CC", "90", 1);
    /* AUTO picks the (stub) GPU */
    unsetenv("CK_DEVICE");
    CHECK_OK(ck_device_open(CK_BACKEND_AUTO, 0, &d));
    CHECK_OK(ck_device_get_props(d, &p));
    CHECK_EQ_INT(p.backend, CK_BACKEND_CUDA);
    ck_device_close(d);
}

/* ck_stream_wrap: ck's copies, launches and synchronizations go to the caller's CUstream (a
 * framework's current stream), and destroying the wrapper leaves that stream alone. The launch is
 * checked when NVRTC can compile the kernel. */
static void test_stream_wrap_uses_the_callers_stream(void)
{
    ck_device *d = NULL;
    setenv("CK_STUB_CC", "90", 1);
    CHECK_OK(ck_device_open(CK_BACKEND_CUDA, 0, &d));
    if (!d)
        return;
    void *h = dlopen(stub_path, RTLD_NOW | RTLD_NOLOAD);
    stub_streams *rec = h ? dlsym(h, "ck_stub_streams") : NULL;
    CHECK(rec != NULL);
    if (!rec) {
        ck_device_close(d);
        return;
    }
    void *native = (void *)(uintptr_t)0xabc0; /* never dereferenced by the stub */
    ck_stream *s = NULL;
    CHECK_OK(ck_stream_wrap(d, native, &s));
    float host[16] = {1, 2, 3}, *dev = NULL;
    CHECK_OK(ck_malloc(d, sizeof host, (void **)&dev));
    CHECK_OK(ck_memcpy_h2d(d, dev, host, sizeof host, s));
    CHECK(rec->copy == native);
    CHECK_OK(ck_stream_synchronize(s));
    CHECK(rec->sync == native);
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) == CK_SUCCESS) {
        ck_module *m = NULL;
        ck_kernel *k = NULL;
        CHECK_OK(ck_module_load(d, kernel_src, NULL, 0, &m));
        CHECK_OK(ck_module_get_kernel(m, "axpy", &k));
        int n = 16;
        void *args[] = {&dev, &dev, &n};
        size_t sizes[] = {8, 8, 4};
        ck_launch_config c = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, s};
        CHECK_OK(ck_launch(k, &c, args, sizes, 3));
        CHECK(rec->launch == native);
    }
    /* the wrapper of the default stream is a NULL CUstream */
    ck_stream *def = NULL;
    CHECK_OK(ck_stream_wrap(d, NULL, &def));
    CHECK_OK(ck_memcpy_h2d(d, dev, host, sizeof host, def));
    CHECK(rec->copy == NULL);
    ck_stream_destroy(s);
    CHECK_EQ_INT(rec->destroyed, 0);
    /* a stream of ck's own is destroyed with its wrapper; a borrowed one left at close */
    ck_stream *own = NULL;
    CHECK_OK(ck_stream_create(d, &own));
    ck_stream_destroy(own);
    CHECK_EQ_INT(rec->destroyed, 1);
    CHECK_OK(ck_stream_wrap(d, native, &s));
    CHECK_OK(ck_free(d, dev));
    ck_device_close(d);
    CHECK_EQ_INT(rec->destroyed, 1);
    CHECK_STATUS(ck_stream_wrap(NULL, native, &s), CK_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    if (!build_stub()) {
        printf("could not build the driver stub with %s; skipped\n", CK_C_COMPILER_PATH);
        return CK_TEST_REPORT();
    }
    setenv("CK_CUDA_DRIVER_PATH", stub_path, 1);
    RUN_TEST(test_stream_wrap_uses_the_callers_stream);
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available; the rest is skipped\n");
        remove(stub_path);
        return CK_TEST_REPORT();
    }
    RUN_TEST(test_cuda_backend_with_stub);
    remove(stub_path);
    return CK_TEST_REPORT();
}
