/* A stand-in for the CUDA driver (libcuda) used by tests/test_cuda_stub.c: host memory, launches
 * recorded (not run), compute capability from $CK_STUB_CC. Built by the test at run time. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
typedef int R;
typedef unsigned long long P;
typedef struct {
    int id;
    char pad[4];
    union {
        char b[64];
        struct {
            unsigned x, y, z;
        } c;
    } v;
} A;
typedef struct {
    unsigned gx, gy, gz, bx, by, bz, sh;
    void *s;
    A *attrs;
    unsigned na;
} C;
struct rec {
    unsigned grid[3], block[3], shared, cluster[3];
    int launches, ex, attr_set;
    int attr_value;
    unsigned long long arg0;
    int arg2;
    int modules, live_allocs;
};
__attribute__((visibility("default"))) struct rec ck_stub_rec;
/* The streams the driver was last given (ck_stream_wrap's test). */
struct streams {
    void *copy, *sync, *launch;
    int destroyed;
};
__attribute__((visibility("default"))) struct streams ck_stub_streams;
__attribute__((visibility("default"))) size_t ck_stub_param_sizes[8] = {8, 8, 4};
static int cc(void)
{
    const char *e = getenv("CK_STUB_CC");
    return e ? atoi(e) : 90;
}
R cuInit(unsigned f)
{
    (void)f;
    return 0;
}
R cuDeviceGetCount(int *n)
{
    *n = 1;
    return 0;
}
R cuDeviceGet(int *d, int o)
{
    *d = o;
    return 0;
}
R cuDeviceGetName(char *n, int l, int d)
{
    (void)d;
    snprintf(n, (size_t)l, "Stub GPU");
    return 0;
}
R cuDeviceGetAttribute(int *v, int a, int d)
{
    (void)d;
    *v = a == 75   ? cc() / 10
         : a == 76 ? cc() % 10
         : a == 16 ? 132
         : a == 97 ? 232448
         : a == 38 ? 50331648
                   : 0;
    return 0;
}
R cuDeviceTotalMem_v2(size_t *b, int d)
{
    (void)d;
    *b = (size_t)80 << 30;
    return 0;
}
R cuDevicePrimaryCtxRetain(void **c, int d)
{
    (void)d;
    *c = (void *)0x1234;
    return 0;
}
R cuDevicePrimaryCtxRelease_v2(int d)
{
    (void)d;
    return 0;
}
static void *current_ctx;
R cuCtxSetCurrent(void *c)
{
    if (c != (void *)0x1234)
        return 201;
    current_ctx = c;
    return 0;
}
R cuCtxGetCurrent(void **c)
{
    *c = current_ctx;
    return 0;
}
R cuCtxSynchronize(void)
{
    return 0;
}
R cuMemAlloc_v2(P *p, size_t n)
{
    if (n > ((size_t)1 << 36))
        return 2;
    *p = (P)(size_t)malloc(n);
    ck_stub_rec.live_allocs++;
    return 0;
}
R cuMemFree_v2(P p)
{
    free((void *)(size_t)p);
    ck_stub_rec.live_allocs--;
    return 0;
}
R cuMemcpyHtoDAsync_v2(P d, const void *s, size_t n, void *st)
{
    ck_stub_streams.copy = st;
    memcpy((void *)(size_t)d, s, n);
    return 0;
}
R cuMemcpyDtoHAsync_v2(void *d, P s, size_t n, void *st)
{
    (void)st;
    memcpy(d, (void *)(size_t)s, n);
    return 0;
}
R cuMemcpyDtoDAsync_v2(P d, P s, size_t n, void *st)
{
    (void)st;
    memmove((void *)(size_t)d, (void *)(size_t)s, n);
    return 0;
}
R cuMemsetD8Async(P d, unsigned char v, size_t n, void *st)
{
    (void)st;
    memset((void *)(size_t)d, v, n);
    return 0;
}
R cuStreamCreate(void **s, unsigned f)
{
    (void)f;
    *s = malloc(1);
    return 0;
}
R cuStreamDestroy_v2(void *s)
{
    ck_stub_streams.destroyed++;
    free(s);
    return 0;
}
R cuStreamSynchronize(void *s)
{
    ck_stub_streams.sync = s;
    return 0;
}
R cuEventCreate(void **e, unsigned f)
{
    (void)f;
    *e = calloc(1, sizeof(float));
    return 0;
}
static float clock_ms;
R cuEventRecord(void *e, void *s)
{
    (void)s;
    clock_ms += 1.5f;
    *(float *)e = clock_ms;
    return 0;
}
R cuEventSynchronize(void *e)
{
    (void)e;
    return 0;
}
R cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
    *ms = *(float *)b - *(float *)a;
    return 0;
}
R cuEventDestroy_v2(void *e)
{
    free(e);
    return 0;
}
R cuModuleLoadData(void **m, const void *img)
{
    if (memcmp(img, "\177ELF", 4))
        return 200;
    *m = malloc(1);
    ck_stub_rec.modules++;
    return 0;
}
R cuModuleUnload(void *m)
{
    free(m);
    ck_stub_rec.modules--;
    return 0;
}
R cuModuleGetFunction(void **f, void *m, const char *n)
{
    static char function;
    (void)m;
    (void)n;
    *f = &function;
    return 0;
}
R cuFuncGetAttribute(int *v, int a, void *f)
{
    (void)a, (void)f;
    *v = 0; /* no static shared memory */
    return 0;
}
R cuFuncSetAttribute(void *f, int a, int v)
{
    (void)f;
    ck_stub_rec.attr_set = a;
    ck_stub_rec.attr_value = v;
    return 0;
}
R cuFuncGetParamInfo(void *f, size_t i, size_t *o, size_t *s)
{
    (void)f;
    if (i >= 3 || getenv("CK_STUB_NO_PARAM_INFO")) /* bench/call_overhead.c: sizes unknown */
        return 1;
    *o = i * 8;
    *s = ck_stub_param_sizes[i];
    return 0;
}
static void rec(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                unsigned sh, void **params)
{
    ck_stub_rec.grid[0] = gx;
    ck_stub_rec.grid[1] = gy;
    ck_stub_rec.grid[2] = gz;
    ck_stub_rec.block[0] = bx;
    ck_stub_rec.block[1] = by;
    ck_stub_rec.block[2] = bz;
    ck_stub_rec.shared = sh;
    static int any_args = -1; /* bench/call_overhead.c: kernels of any parameter list */
    if (any_args < 0)
        any_args = getenv("CK_STUB_NO_PARAM_INFO") != NULL;
    if (!any_args) {
        memcpy(&ck_stub_rec.arg0, params[0], 8);
        memcpy(&ck_stub_rec.arg2, params[2], 4);
    }
    ck_stub_rec.launches++;
}
R cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                 unsigned bz, unsigned sh, void *s, void **p, void **x)
{
    (void)f;
    (void)x;
    ck_stub_streams.launch = s;
    rec(gx, gy, gz, bx, by, bz, sh, p);
    ck_stub_rec.ex = 0;
    return 0;
}
R cuLaunchKernelEx(const C *c, void *f, void **p, void **x)
{
    (void)f;
    (void)x;
    rec(c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->sh, p);
    ck_stub_rec.ex = 1;
    if (c->na != 1 || c->attrs[0].id != 4)
        return 1;
    ck_stub_rec.cluster[0] = c->attrs[0].v.c.x;
    ck_stub_rec.cluster[1] = c->attrs[0].v.c.y;
    ck_stub_rec.cluster[2] = c->attrs[0].v.c.z;
    return 0;
}
/* occupancy: 2 blocks per SM; a resident cluster per 2 x 132 / (blocks per cluster) */
R cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int b, size_t sh)
{
    (void)f;
    (void)b;
    (void)sh;
    *n = 2;
    return 0;
}
R cuOccupancyMaxActiveClusters(int *n, void *f, const C *c)
{
    (void)f;
    if (c->na != 1 || c->attrs[0].id != 4)
        return 1;
    *n = 264 / (int)(c->attrs[0].v.c.x * c->attrs[0].v.c.y * c->attrs[0].v.c.z);
    return 0;
}
R cuGetErrorString(R e, const char **s)
{
    *s = e == 2 ? "out of memory" : "stub error";
    return 0;
}
R cuDriverGetVersion(int *v)
{
    *v = 13000;
    return 0;
}
/* cuTensorMapEncodeTiled: records its arguments, fills the map with a pattern; $CK_STUB_TMAP_FAIL
 * makes it fail with CUDA_ERROR_INVALID_VALUE (1). */
struct tmap_rec {
    int calls, dtype;
    unsigned rank;
    void *addr;
    unsigned long long dims[5], strides[4];
    unsigned box[5], estr[5];
    int interleave, swizzle, l2, oob;
};
__attribute__((visibility("default"))) struct tmap_rec ck_stub_tmap;
R cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr,
                         const unsigned long long *dims, const unsigned long long *strides,
                         const unsigned *box, const unsigned *estr, int interleave, int swizzle,
                         int l2, int oob)
{
    if (getenv("CK_STUB_TMAP_FAIL"))
        return 1;
    ck_stub_tmap.calls++;
    ck_stub_tmap.dtype = dtype;
    ck_stub_tmap.rank = rank;
    ck_stub_tmap.addr = addr;
    for (unsigned i = 0; i < rank && i < 5; ++i) {
        ck_stub_tmap.dims[i] = dims[i];
        ck_stub_tmap.box[i] = box[i];
        ck_stub_tmap.estr[i] = estr[i];
        if (i + 1 < rank)
            ck_stub_tmap.strides[i] = strides[i];
    }
    ck_stub_tmap.interleave = interleave;
    ck_stub_tmap.swizzle = swizzle;
    ck_stub_tmap.l2 = l2;
    ck_stub_tmap.oob = oob;
    memset(map, 0xA5, 128);
    return 0;
}
