/* Pooling (ck/pool.h) on the device CK_DEVICE chooses (the emulator in CI) against the direct
 * references (ck_pool_*_reference: loops over the windows, f64), every element: max with int32
 * and int64 indices (values drawn from a few integers, so ties are common, plus NaN and -inf),
 * dilation, ceil_mode, average with and without the padding counted and with a divisor
 * override, 2-D and 3-D, the three types, odd sizes and channel counts; max-pool backward with
 * overlapping windows (stride < kernel), rows no window reaches (kernel < stride), and the
 * refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/pool.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x9001c0ffeeull;

static int es_of(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

static double get(const void *p, ck_dtype t, int64_t i)
{
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * es_of(t), (size_t)es_of(t));
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static void put(void *p, ck_dtype t, int64_t i, double v)
{
    uint64_t code = 0;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    memcpy((char *)p + i * es_of(t), &code, (size_t)es_of(t));
}

static double urand(void)
{
    return (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* max: small integers (ties) with a few NaN and -inf; avg / gradients: uniform in [-1, 1] */
static void fill(void *p, ck_dtype t, int64_t n, int ties)
{
    for (int64_t i = 0; i < n; ++i) {
        double v = urand() * 2 - 1;
        if (ties) {
            double u = urand();
            v = u < 0.01 ? NAN : u < 0.03 ? -INFINITY : floor(v * 4);
        }
        put(p, t, i, v);
    }
}

typedef struct pcase {
    const char *what;
    ck_pool_mode mode;
    int nd, n, c;
    int in[3], ker[3], str[3], dil[3], pad[3];
    int ceil, include_pad, divisor;
    ck_dtype dt;
    ck_pool_index index;
} pcase;

static void problem(const pcase *z, ck_pool_problem *p)
{
    ck_pool_problem_init(p);
    p->mode = z->mode, p->ndim = z->nd, p->n = z->n, p->c = z->c;
    for (int d = 0; d < z->nd; ++d) {
        p->in[d] = z->in[d], p->kernel[d] = z->ker[d], p->pad[d] = z->pad[d];
        p->stride[d] = z->str[d] ? z->str[d] : z->ker[d];
        p->dilation[d] = z->dil[d] ? z->dil[d] : 1;
    }
    p->ceil_mode = z->ceil, p->count_include_pad = z->include_pad;
    p->divisor_override = z->divisor, p->dtype = z->dt, p->index = z->index;
}

static int64_t sizes(const ck_pool_problem *p, int64_t *nx)
{
    int64_t out[3], ny = p->n * p->c;
    *nx = p->n * p->c;
    CHECK_OK(ck_pool_output_lengths(p, out));
    for (int d = 0; d < p->ndim; ++d)
        ny *= out[d], *nx *= p->in[d];
    return ny;
}

static void *dev_copy(const void *h, size_t bytes)
{
    void *d = NULL;
    CHECK_OK(ck_malloc(ck_context_device(g_ctx), bytes ? bytes : 1, &d));
    if (h)
        CHECK_OK(ck_memcpy_h2d(ck_context_device(g_ctx), d, h, bytes, NULL));
    return d;
}

static void *host_copy(const void *d, size_t bytes)
{
    void *h = malloc(bytes);
    CHECK_OK(ck_memcpy_d2h(ck_context_device(g_ctx), h, d, bytes, NULL));
    return h;
}

static int64_t index_at(const void *p, int is, int64_t i)
{
    if (is == 4) {
        int32_t v;
        memcpy(&v, (const char *)p + i * 4, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, (const char *)p + i * 8, 8);
    return v;
}

/* shift: x, y and the indices placed that many elements past a 16-byte boundary */
static void forward_case(const pcase *z, int shift)
{
    ck_pool_problem p;
    problem(z, &p);
    int64_t nx, ny = sizes(&p, &nx);
    int es = es_of(z->dt), is = z->index == CK_POOL_INDEX_I32 ? 4 : z->index ? 8 : 0;
    void *hx = malloc((size_t)nx * es), *ry = malloc((size_t)ny * es),
         *ri = malloc((size_t)ny * (is ? is : 1));
    fill(hx, z->dt, nx, z->mode == CK_POOL_MAX);
    void *dx = dev_copy(NULL, (size_t)nx * es + 16), *dy = dev_copy(NULL, (size_t)ny * es + 16),
         *di = is ? dev_copy(NULL, (size_t)ny * is + 64) : NULL;
    char *x0 = (char *)dx + shift * es, *y0 = (char *)dy + shift * es,
         *i0 = is ? (char *)di + shift * is : NULL;
    CHECK_OK(ck_memcpy_h2d(ck_context_device(g_ctx), x0, hx, (size_t)nx * es, NULL));
    ck_status st = ck_pool_forward(g_ctx, &p, x0, y0, i0);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", z->what, ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    void *gy = host_copy(y0, (size_t)ny * es), *gi = is ? host_copy(i0, (size_t)ny * is) : NULL;
    CHECK_OK(ck_pool_forward_reference(&p, hx, ry, is ? ri : NULL));
    double unit = z->dt == CK_DTYPE_BF16 ? 0x1p-8 : z->dt == CK_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
    int64_t bad = 0;
    for (int64_t e = 0; e < ny; ++e) {
        double v = get(gy, z->dt, e), ref = get(ry, z->dt, e);
        int ok = z->mode == CK_POOL_MAX ? (v == ref || (isnan(v) && isnan(ref)))
                                        : fabs(v - ref) <= unit * fabs(ref) + 0x1p-20;
        if (ok && is)
            ok = index_at(gi, is, e) == index_at(ri, is, e);
        if (!ok && bad++ < 3)
            CHECK_MSG(0, "%s: output %lld: got %.8g (index %lld), reference %.8g (index %lld)",
                      z->what, (long long)e, v, is ? (long long)index_at(gi, is, e) : -1LL, ref,
                      is ? (long long)index_at(ri, is, e) : -1LL);
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld outputs wrong", z->what, (long long)bad, (long long)ny);
    ck_device *dev = ck_context_device(g_ctx);
    ck_free(dev, dx), ck_free(dev, dy);
    if (di)
        ck_free(dev, di);
    free(hx), free(ry), free(ri), free(gy), free(gi);
}

static void backward_case(const pcase *z)
{
    ck_pool_problem p;
    problem(z, &p);
    int64_t nx, ny = sizes(&p, &nx);
    int es = es_of(z->dt), is = z->index == CK_POOL_INDEX_I32 ? 4 : 8;
    void *hx = malloc((size_t)nx * es), *hy = malloc((size_t)ny * es),
         *hi = malloc((size_t)ny * is), *hg = malloc((size_t)ny * es),
         *rdx = malloc((size_t)nx * es);
    fill(hx, z->dt, nx, 1);
    CHECK_OK(ck_pool_forward_reference(&p, hx, hy, hi)); /* the forward's indices */
    fill(hg, z->dt, ny, 0);
    void *dg = dev_copy(hg, (size_t)ny * es), *di = dev_copy(hi, (size_t)ny * is);
    unsigned char *sentinel = malloc((size_t)nx * es);
    memset(sentinel, 0x7f, (size_t)nx * es);
    void *ddx = dev_copy(sentinel, (size_t)nx * es);
    ck_status st = ck_pool_backward(g_ctx, &p, dg, di, ddx);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", z->what, ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    void *got = host_copy(ddx, (size_t)nx * es);
    CHECK_OK(ck_pool_backward_reference(&p, hg, hi, rdx));
    double unit = z->dt == CK_DTYPE_BF16 ? 0x1p-8 : z->dt == CK_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
    int64_t bad = 0, nonzero = 0;
    for (int64_t e = 0; e < nx; ++e) {
        double v = get(got, z->dt, e), ref = get(rdx, z->dt, e);
        nonzero += ref != 0;
        if (!(fabs(v - ref) <= unit * fabs(ref) + 0x1p-18) && bad++ < 3)
            CHECK_MSG(0, "%s: dx element %lld: got %.8g, reference %.8g", z->what, (long long)e, v,
                      ref);
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements wrong", z->what, (long long)bad, (long long)nx);
    CHECK_MSG(nonzero > 0, "%s: the reference gradient is all zeros", z->what);
    ck_device *dev = ck_context_device(g_ctx);
    ck_free(dev, dg), ck_free(dev, di), ck_free(dev, ddx);
    free(hx), free(hy), free(hi), free(hg), free(rdx), free(sentinel), free(got);
}

static void test_pool_max(void)
{
    static const pcase cases[] = {
        {"max 2-D 3x3 s2 p1 ceil bf16 i64",
         CK_POOL_MAX,
         2,
         2,
         16,
         {13, 11},
         {3, 3},
         {2, 2},
         {0},
         {1, 1},
         1,
         0,
         0,
         CK_DTYPE_BF16,
         CK_POOL_INDEX_I64},
        {"max 2-D 3x3 s1 dilation 2 p1 c3 f32 i32",
         CK_POOL_MAX,
         2,
         1,
         3,
         {9, 8},
         {3, 3},
         {1, 1},
         {2, 2},
         {1, 1},
         0,
         0,
         0,
         CK_DTYPE_F32,
         CK_POOL_INDEX_I32},
        {"max 2-D 5x4 s2 dilation 3 p(2,2) c8 bf16 i64",
         CK_POOL_MAX,
         2,
         2,
         8,
         {13, 12},
         {5, 4},
         {2, 2},
         {3, 3},
         {2, 2},
         1,
         0,
         0,
         CK_DTYPE_BF16,
         CK_POOL_INDEX_I64},
        {"max 3-D 2x2x2 s2 c8 f16 no indices",
         CK_POOL_MAX,
         3,
         1,
         8,
         {5, 7, 7},
         {2, 2, 2},
         {0},
         {0},
         {0},
         0,
         0,
         0,
         CK_DTYPE_F16,
         CK_POOL_INDEX_NONE},
        {"max 2-D 2x3 s(3,1) ceil c24 bf16 i32",
         CK_POOL_MAX,
         2,
         3,
         24,
         {8, 5},
         {2, 3},
         {3, 1},
         {0},
         {1, 1},
         1,
         0,
         0,
         CK_DTYPE_BF16,
         CK_POOL_INDEX_I32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        forward_case(&cases[i], 0);
    forward_case(&cases[0], 1); /* pointers past 16-byte boundaries: narrower vectors */
    forward_case(&cases[4], 2);
}

static void test_pool_avg(void)
{
    static const pcase cases[] = {
        {"avg 2-D 3x3 s2 p1 ceil count_include_pad c24 bf16",
         CK_POOL_AVG,
         2,
         2,
         24,
         {7, 9},
         {3, 3},
         {2, 2},
         {0},
         {1, 1},
         1,
         1,
         0,
         CK_DTYPE_BF16,
         CK_POOL_INDEX_NONE},
        {"avg 2-D 3x3 s2 p1 padding not counted c5 f32",
         CK_POOL_AVG,
         2,
         1,
         5,
         {7, 6},
         {3, 3},
         {2, 2},
         {0},
         {1, 1},
         0,
         0,
         0,
         CK_DTYPE_F32,
         CK_POOL_INDEX_NONE},
        {"avg 3-D 2x2x2 s1 p1 divisor 5 c8 f16",
         CK_POOL_AVG,
         3,
         1,
         8,
         {3, 4, 5},
         {2, 2, 2},
         {1, 1, 1},
         {0},
         {1, 1, 1},
         0,
         1,
         5,
         CK_DTYPE_F16,
         CK_POOL_INDEX_NONE},
        {"avg 3-D 3x3x3 s2 p1 ceil not counted c16 bf16",
         CK_POOL_AVG,
         3,
         1,
         16,
         {5, 6, 7},
         {3, 3, 3},
         {2, 2, 2},
         {0},
         {1, 1, 1},
         1,
         0,
         0,
         CK_DTYPE_BF16,
         CK_POOL_INDEX_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        forward_case(&cases[i], 0);
}

static void test_pool_max_backward(void)
{
    static const pcase cases[] = {
        {"max backward 2-D 3x3 s2 p1 (overlapping) bf16 i64",
         CK_POOL_MAX,
         2,
         2,
         16,
         {9, 11},
         {3, 3},
         {2, 2},
         {0},
         {1, 1},
         0,
         0,
         0,
         CK_DTYPE_BF16,
         CK_POOL_INDEX_I64},
        {"max backward 2-D 3x3 s1 dilation 2 c3 f32 i32",
         CK_POOL_MAX,
         2,
         1,
         3,
         {8, 7},
         {3, 3},
         {1, 1},
         {2, 2},
         {1, 0},
         0,
         0,
         0,
         CK_DTYPE_F32,
         CK_POOL_INDEX_I32},
        {"max backward 3-D 1x2x2 s(2,3,2) ceil (rows no window reaches) f16 i64",
         CK_POOL_MAX,
         3,
         1,
         8,
         {5, 7, 6},
         {1, 2, 2},
         {2, 3, 2},
         {0},
         {0},
         1,
         0,
         0,
         CK_DTYPE_F16,
         CK_POOL_INDEX_I64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        backward_case(&cases[i]);
}

static void test_pool_refusals(void)
{
    ck_pool_problem p;
    int64_t out[3];
    ck_pool_problem_init(&p);
    p.in[0] = p.in[1] = 6, p.kernel[0] = p.kernel[1] = 3, p.stride[0] = p.stride[1] = 2;
    CHECK_OK(ck_pool_output_lengths(&p, out));
    CHECK_EQ_INT(out[0], 2);
    p.ceil_mode = 1;
    CHECK_OK(ck_pool_output_lengths(&p, out));
    CHECK_EQ_INT(out[0], 3);
    p.pad[0] = 2;
    CHECK_STATUS(ck_pool_output_lengths(&p, out), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "half") != NULL);
    p.pad[0] = 0, p.stride[1] = 0;
    CHECK_STATUS(ck_pool_output_lengths(&p, out), CK_ERROR_INVALID_ARGUMENT);
    p.stride[1] = 2, p.mode = CK_POOL_AVG, p.dilation[0] = 2;
    CHECK_STATUS(ck_pool_output_lengths(&p, out), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "dilation") != NULL);
    p.dilation[0] = 1, p.index = CK_POOL_INDEX_I32;
    CHECK_STATUS(ck_pool_output_lengths(&p, out), CK_ERROR_UNSUPPORTED);
    p.index = CK_POOL_INDEX_NONE, p.ndim = 1;
    CHECK_STATUS(ck_pool_output_lengths(&p, out), CK_ERROR_UNSUPPORTED);
    p.ndim = 2, p.dtype = CK_DTYPE_I8;
    CHECK_STATUS(ck_pool_output_lengths(&p, out), CK_ERROR_UNSUPPORTED);
    p.dtype = CK_DTYPE_BF16, p.in[0] = 1, p.kernel[0] = 5;
    CHECK_STATUS(ck_pool_output_lengths(&p, out), CK_ERROR_INVALID_ARGUMENT);
    /* backward: max with indices only; pointers */
    ck_pool_problem_init(&p);
    p.in[0] = p.in[1] = 4, p.kernel[0] = p.kernel[1] = 2, p.stride[0] = p.stride[1] = 2;
    void *buf = dev_copy(NULL, 1024);
    char *b = buf;
    CHECK_STATUS(ck_pool_backward(g_ctx, &p, b, b + 256, b + 512), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "indices") != NULL);
    p.index = CK_POOL_INDEX_I64;
    CHECK_STATUS(ck_pool_backward(g_ctx, &p, b, b + 260, b + 512), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "aligned") != NULL);
    CHECK_STATUS(ck_pool_backward(g_ctx, &p, b, b + 256, b + 4), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "overlap") != NULL);
    CHECK_STATUS(ck_pool_forward(g_ctx, &p, NULL, b, b + 256), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_pool_forward(g_ctx, NULL, b, b + 256, b + 512), CK_ERROR_INVALID_ARGUMENT);
    ck_free(ck_context_device(g_ctx), buf);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_pool_refusals);
    RUN_TEST(test_pool_max);
    RUN_TEST(test_pool_avg);
    RUN_TEST(test_pool_max_backward);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
