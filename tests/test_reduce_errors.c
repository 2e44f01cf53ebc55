/*
 * ck_reduce: refusals with a sentence (bad axes, shapes, dtypes, post-ops on indices, overlap,
 * empty reductions of max/argmax), defined results of empty reductions (sum 0, mean NaN) and of
 * empty outputs (no-op), exact input conversions of every f16/bf16/fp8 code (a max over one
 * element is the conversion, compared bit for bit with ck_convert_to_f32), and an NVRTC sm_90a
 * compile of every kind of generated kernel (skipped without NVRTC).
 */
#include "reduce_harness.h"
#include "rt/runtime_internal.h"

static ck_context *ctx;

static void tensor(ck_tensor *t, void *data, ck_dtype dt, int rank, const int64_t *shape)
{
    CHECK_OK(ck_tensor_init(t, data, dt, rank, shape, NULL));
}

static void test_errors(void)
{
    void *xa = (void *)(uintptr_t)(1u << 20), *ya = (void *)(uintptr_t)(1u << 28);
    int64_t s2[2] = {4, 5}, s1[1] = {4}, s5[1] = {5};
    ck_tensor x, y, y5, yi;
    tensor(&x, xa, CK_DTYPE_F32, 2, s2);
    tensor(&y, ya, CK_DTYPE_F32, 1, s1);
    tensor(&y5, ya, CK_DTYPE_F32, 1, s5);
    tensor(&yi, ya, CK_DTYPE_I32, 1, s1);
    int ax1 = 1, ax0 = 0, bad = 2, neg = -3, rep[2] = {1, -1};
    CHECK_STATUS(ck_reduce(NULL, CK_REDUCE_SUM, &x, &ax1, 1, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, NULL, &ax1, 1, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax1, 1, NULL, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_reduce(ctx, (ck_reduce_op)9, &x, &ax1, 1, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* empty axes: refused, never "reduce all" */
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax1, 0, &x, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "empty") != NULL);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, NULL, 1, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &bad, 1, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "out of range") != NULL);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &neg, 1, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, rep, 2, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "more than once") != NULL);
    /* y shape / rank */
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax0, 1, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_reduce_plan(ctx, CK_REDUCE_SUM, &x, &ax0, 1, &y5, NULL, NULL));
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax1, 1, &x, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* dtypes */
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_ARGMAX, &x, &ax1, 1, &y, NULL), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax1, 1, &yi, NULL), CK_ERROR_UNSUPPORTED);
    ck_tensor xt = x;
    xt.dtype = CK_DTYPE_TF32;
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &xt, &ax1, 1, &y, NULL), CK_ERROR_UNSUPPORTED);
    /* post-ops on indices */
    ck_reduce_options o;
    ck_reduce_options_init(&o);
    o.scale = 2.0;
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_ARGMAX, &x, &ax1, 1, &yi, &o), CK_ERROR_INVALID_ARGUMENT);
    ck_reduce_options_init(&o);
    o.pre = (ck_reduce_pre)7;
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax1, 1, &y, &o), CK_ERROR_INVALID_ARGUMENT);
    ck_reduce_options_init(&o);
    o.flags = 6;
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax1, 1, &y, &o), CK_ERROR_INVALID_ARGUMENT);
    o.flags = CK_REDUCE_FAST;
    CHECK_OK(ck_reduce_plan(ctx, CK_REDUCE_SUM, &x, &ax1, 1, &y, &o, NULL));
    /* overlap and duplicate y addresses */
    ck_tensor yo = y;
    yo.data = (char *)xa + 8;
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax1, 1, &yo, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "overlaps") != NULL);
    ck_tensor yz = y;
    yz.strides[0] = 0;
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax1, 1, &yz, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* rank 7 */
    int64_t s7[7] = {1, 1, 1, 1, 1, 1, 2};
    ck_tensor x7;
    tensor(&x7, xa, CK_DTYPE_F32, 7, s7);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x7, &ax1, 1, &y, NULL), CK_ERROR_UNSUPPORTED);
    /* misaligned data pointer */
    ck_tensor xm = x;
    xm.data = (char *)xa + 2;
    CHECK(ck_reduce(ctx, CK_REDUCE_SUM, &xm, &ax1, 1, &y, NULL) != CK_SUCCESS);
    /* max / argmax over zero elements: refused (PyTorch errors) */
    int64_t s0[2] = {4, 0};
    ck_tensor x0;
    tensor(&x0, NULL, CK_DTYPE_F32, 2, s0);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_MAX, &x0, &ax1, 1, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_ARGMIN, &x0, &ax1, 1, &yi, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    /* names */
    ck_reduce_op op;
    CHECK_OK(ck_reduce_op_from_name("norm2", &op));
    CHECK_EQ_INT(op, CK_REDUCE_NORM2);
    CHECK_STATUS(ck_reduce_op_from_name("median", &op), CK_ERROR_NOT_FOUND);
    CHECK(ck_reduce_op_name((ck_reduce_op)42) == NULL);
}

static void test_empty(void)
{
    ck_device *dev = ck_context_device(ctx);
    int64_t s0[2] = {4, 0}, s1[1] = {4}, se[2] = {0, 6}, s6[1] = {6};
    ck_tensor x0, y, xe, ye;
    float *dy = NULL, h[6];
    CHECK_OK(ck_malloc(dev, 6 * sizeof(float), (void **)&dy));
    tensor(&x0, NULL, CK_DTYPE_F32, 2, s0);
    tensor(&y, dy, CK_DTYPE_F32, 1, s1);
    int ax1 = 1, ax0 = 0;
    CHECK_OK(ck_reduce(ctx, CK_REDUCE_SUM, &x0, &ax1, 1, &y, NULL));
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(dev, h, dy, 4 * sizeof(float), NULL));
    CHECK(h[0] == 0.0f && h[3] == 0.0f);
    CHECK_OK(ck_reduce(ctx, CK_REDUCE_MEAN, &x0, &ax1, 1, &y, NULL));
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(dev, h, dy, 4 * sizeof(float), NULL));
    CHECK(isnan(h[0]) && isnan(h[3]));
    /* no outputs: a no-op, even for max */
    tensor(&xe, NULL, CK_DTYPE_F32, 2, se);
    tensor(&ye, dy, CK_DTYPE_F32, 1, s6);
    int64_t s00[1] = {0};
    ck_tensor yn;
    tensor(&yn, NULL, CK_DTYPE_F32, 1, s00);
    CHECK_OK(ck_reduce(ctx, CK_REDUCE_MAX, &xe, &ax1, 1, &yn, NULL));
    /* x [0, 6] summed over axis 0: six zeros */
    CHECK_OK(ck_reduce(ctx, CK_REDUCE_SUM, &xe, &ax0, 1, &ye, NULL));
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(dev, h, dy, 6 * sizeof(float), NULL));
    CHECK(h[0] == 0.0f && h[5] == 0.0f);
    ck_free(dev, dy);
}

/* max over a length-1 axis is the input conversion: every code of the narrow types. */
static void test_conversions(void)
{
    ck_device *dev = ck_context_device(ctx);
    const ck_dtype types[] = {CK_DTYPE_F16, CK_DTYPE_BF16, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2,
                              CK_DTYPE_FP8_E4M3_FNUZ, CK_DTYPE_I8, CK_DTYPE_U8};
    for (int t = 0; t < 7; ++t) {
        int size = rt_size(types[t]);
        int64_t count = size == 2 ? 65536 : 256;
        int64_t shape[2] = {count, 1}, ys[1] = {count};
        unsigned char *hx = malloc((size_t)(count * size));
        float *hy = malloc(sizeof(float) * (size_t)count);
        for (int64_t i = 0; i < count; ++i)
            rt_put(hx, size, i, (uint64_t)i);
        void *dx = NULL, *dy = NULL;
        CHECK_OK(ck_malloc(dev, (size_t)(count * size), &dx));
        CHECK_OK(ck_malloc(dev, sizeof(float) * (size_t)count, &dy));
        CHECK_OK(ck_memcpy_h2d(dev, dx, hx, (size_t)(count * size), NULL));
        ck_tensor x, y;
        tensor(&x, dx, types[t], 2, shape);
        tensor(&y, dy, CK_DTYPE_F32, 1, ys);
        int ax = 1;
        CHECK_OK(ck_reduce(ctx, CK_REDUCE_MAX, &x, &ax, 1, &y, NULL));
        CHECK_OK(ck_context_synchronize(ctx));
        CHECK_OK(ck_memcpy_d2h(dev, hy, dy, sizeof(float) * (size_t)count, NULL));
        long bad = 0;
        for (int64_t i = 0; i < count; ++i) {
            float want = 0;
            ck_convert_to_f32(types[t], (uint64_t)i, &want);
            uint32_t a, b;
            memcpy(&a, &hy[i], 4);
            memcpy(&b, &want, 4);
            if (!(isnan(want) ? isnan(hy[i]) : a == b) && bad++ < 3)
                CHECK_MSG(0, "%s code 0x%llx: %g (0x%08x), expected %g (0x%08x)",
                          ck_dtype_name(types[t]), (unsigned long long)i, hy[i], a, want, b);
        }
        CHECK_EQ_INT(bad, 0);
        ck_free(dev, dx);
        ck_free(dev, dy);
        free(hx);
        free(hy);
    }
}

static void compile(const char *what, ck_reduce_op op, ck_dtype xt, ck_dtype yt, int rank,
                    const int64_t *shape, const int64_t *strides, int naxes, const int *axes,
                    int which, const ck_reduce_options *opt)
{
    ck_tensor x, y;
    int mask[6] = {0};
    for (int i = 0; i < naxes; ++i)
        mask[axes[i]] = 1;
    int64_t ys[6];
    int yr = 0;
    for (int d = 0; d < rank; ++d)
        if (!mask[d])
            ys[yr++] = shape[d];
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)(1u << 20), xt, rank, shape, strides));
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(1ull << 40), yt, yr, ys, NULL));
    char *src = NULL;
    ck_status st = ck_reduce_source(ctx, op, &x, axes, naxes, &y, opt, which, &src);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", what, ck_last_error());
    if (st != CK_SUCCESS)
        return;
    void *cubin = NULL;
    size_t size = 0;
    st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "%s: NVRTC: %s", what, ck_last_error());
    free(cubin);
    free(src);
}

static void test_nvrtc(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    int64_t big[2] = {16384, 8192}, few[2] = {2, 1 << 22}, s3[3] = {8, 300, 64};
    int ax0 = 0, ax1 = 1, ax01[2] = {0, 2};
    ck_reduce_options o;
    ck_reduce_options_init(&o);
    for (int op = 0; op < 8; ++op) {
        ck_dtype yt = op >= 6 ? CK_DTYPE_I32 : CK_DTYPE_BF16;
        compile("row", (ck_reduce_op)op, CK_DTYPE_BF16, yt, 2, big, NULL, 1, &ax1, 0, &o);
        compile("column", (ck_reduce_op)op, CK_DTYPE_BF16, yt, 2, big, NULL, 1, &ax0, 0, &o);
        if (op != 0 && op != 2 && op != 6)
            continue;
        compile("split row", (ck_reduce_op)op, CK_DTYPE_F32, yt, 2, few, NULL, 1, &ax1, 0, &o);
        compile("combine", (ck_reduce_op)op, CK_DTYPE_F32, yt, 2, few, NULL, 1, &ax1, 1, &o);
        compile("strided", (ck_reduce_op)op, CK_DTYPE_F16, yt, 3, s3, NULL, 2, ax01, 0, &o);
    }
    const ck_dtype xts[] = {CK_DTYPE_F64, CK_DTYPE_F16, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2,
                            CK_DTYPE_FP8_E5M2_FNUZ, CK_DTYPE_I8, CK_DTYPE_U8, CK_DTYPE_I32};
    const ck_dtype yts[] = {CK_DTYPE_F64, CK_DTYPE_F16, CK_DTYPE_FP8_E4M3, CK_DTYPE_F32};
    o.pre = CK_REDUCE_PRE_ABS;
    o.scale = 0.5;
    o.post_sqrt = 1;
    for (int t = 0; t < 8; ++t) {
        compile("types row", CK_REDUCE_MEAN, xts[t], yts[t % 4], 2, big, NULL, 1, &ax1, 0, &o);
        if (t % 4 == 0)
            compile("types combine", CK_REDUCE_SUM, xts[t], yts[t % 4], 2, few, NULL, 1, &ax1, 1,
                    &o);
    }
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    RUN_TEST(test_errors);
    RUN_TEST(test_empty);
    RUN_TEST(test_conversions);
    RUN_TEST(test_nvrtc);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
