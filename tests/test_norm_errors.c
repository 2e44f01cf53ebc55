/* norm: refused inputs come back with a sentence, zero rows is a no-op, and the generated
 * kernels compile with NVRTC for sm_90a (skipped when NVRTC is absent). */
#include <stdio.h>
#include <stdlib.h>

#include "norm_test_util.h"
#include "ops/norm/norm_internal.h"
#include "rt/runtime_internal.h"

static ck_context *ctx;

static void test_errors(void)
{
    nt_buf x, y, g, yq, big, bigg, sc;
    CHECK(nt_alloc(ctx, &x, CK_DTYPE_BF16, 4, 64, 64, 0));
    CHECK(nt_alloc(ctx, &y, CK_DTYPE_BF16, 4, 64, 64, 0));
    CHECK(nt_alloc(ctx, &g, CK_DTYPE_F32, 1, 64, 64, 1));
    CHECK(nt_alloc(ctx, &yq, CK_DTYPE_I8, 4, 64, 64, 0));
    CHECK(nt_alloc(ctx, &sc, CK_DTYPE_F32, 1, 4, 4, 1));
    CHECK(nt_alloc(ctx, &big, CK_DTYPE_BF16, 1, 65537, 65537, 0));
    CHECK(nt_alloc(ctx, &bigg, CK_DTYPE_F32, 1, 65537, 65537, 1));
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_LAYERNORM;
    d.epsilon = 1e-5f;
    d.x = &x.ten;
    d.y = &y.ten;
    d.gamma = &g.ten;
    CHECK_OK(ck_norm_forward(ctx, &d));
    CHECK_STATUS(ck_norm_forward(NULL, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_norm_forward(ctx, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* mismatched shapes */
    ck_tensor y2 = y.ten;
    y2.shape[1] = 32;
    d.y = &y2;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.y = &y.ten;
    ck_tensor g2 = g.ten;
    g2.shape[0] = 63;
    d.gamma = &g2;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.gamma = NULL;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.gamma = &g.ten;
    /* strided hidden dimension, overlapping rows */
    ck_tensor xs = x.ten;
    xs.shape[1] = 32;
    xs.strides[1] = 2;
    ck_tensor ys = y.ten;
    ys.shape[1] = 32;
    d.x = &xs;
    d.y = &ys;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_UNSUPPORTED);
    ck_tensor xo = x.ten;
    xo.strides[0] = 16;
    d.x = &xo;
    d.y = &y.ten;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_UNSUPPORTED);
    d.x = &x.ten;
    /* aliasing output */
    d.y = &x.ten;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_UNSUPPORTED);
    d.y = &y.ten;
    /* dtypes */
    ck_tensor xi = x.ten;
    xi.dtype = CK_DTYPE_I32;
    d.x = &xi;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_UNSUPPORTED);
    d.x = &x.ten;
    /* quantized y without y_scale, y_scale without quantized y, smooth without quant */
    d.y = &yq.ten;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.y_scale = &sc.ten;
    CHECK_OK(ck_norm_forward(ctx, &d));
    d.y = &y.ten;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.y_scale = NULL;
    d.smooth = &g.ten;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.smooth = NULL;
    /* residual_out without residual; beta for rmsnorm; bad epsilon; bad kind */
    d.residual_out = &yq.ten;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.residual_out = NULL;
    d.kind = CK_NORM_RMSNORM;
    d.beta = &g.ten;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.beta = NULL;
    d.epsilon = NAN;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.epsilon = 1e-5f;
    d.kind = (ck_norm_kind)7;
    CHECK_STATUS(ck_norm_forward(ctx, &d), CK_ERROR_INVALID_ARGUMENT);
    d.kind = CK_NORM_LAYERNORM;
    /* smoothquant needs a quantized y */
    CHECK_STATUS(ck_smoothquant(ctx, &x.ten, NULL, &y.ten, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_smoothquant(ctx, &x.ten, NULL, &yq.ten, &sc.ten));
    /* hidden size beyond the maximum */
    CHECK_STATUS(ck_rmsnorm2d_forward(ctx, &big.ten, &bigg.ten, 1e-5f, &big.ten),
                 CK_ERROR_UNSUPPORTED);
    /* empty hidden dimension with rows; zero rows is a no-op */
    ck_tensor e = x.ten, ge = g.ten;
    e.shape[1] = 0;
    ge.shape[0] = 0;
    CHECK_STATUS(ck_layernorm2d_forward(ctx, &e, &ge, NULL, 1e-5f, &e), CK_ERROR_INVALID_ARGUMENT);
    ck_tensor z = x.ten, zy = y.ten;
    z.shape[0] = 0;
    zy.shape[0] = 0;
    CHECK_OK(ck_layernorm2d_forward(ctx, &z, &g.ten, NULL, 1e-5f, &zy));
    /* rank >= 3 viewed as rows: [2, 2, 64] */
    ck_tensor x3 = x.ten, y3 = y.ten;
    int64_t sh3[3] = {2, 2, 64};
    CHECK_OK(ck_tensor_init(&x3, x.dev, CK_DTYPE_BF16, 3, sh3, NULL));
    CHECK_OK(ck_tensor_init(&y3, y.dev, CK_DTYPE_BF16, 3, sh3, NULL));
    CHECK_OK(ck_layernorm2d_forward(ctx, &x3, &g.ten, NULL, 1e-5f, &y3));
    /* backward: missing statistics, rmsnorm with dbeta */
    ck_norm_backward_desc b;
    memset(&b, 0, sizeof b);
    b.kind = CK_NORM_LAYERNORM;
    b.dy = &x.ten;
    b.x = &x.ten;
    b.gamma = &g.ten;
    b.rstd = &sc.ten;
    b.dx = &y.ten;
    CHECK_STATUS(ck_norm_backward(ctx, &b), CK_ERROR_INVALID_ARGUMENT);
    b.kind = CK_NORM_RMSNORM;
    CHECK_OK(ck_norm_backward(ctx, &b));
    b.dbeta = &g.ten;
    CHECK_STATUS(ck_norm_backward(ctx, &b), CK_ERROR_INVALID_ARGUMENT);
    b.dbeta = NULL;
    b.dx = &x.ten; /* aliases the inputs */
    CHECK_STATUS(ck_norm_backward(ctx, &b), CK_ERROR_UNSUPPORTED);
    CHECK_OK(ck_context_synchronize(ctx));
    nt_free(ctx, &x);
    nt_free(ctx, &y);
    nt_free(ctx, &g);
    nt_free(ctx, &yq);
    nt_free(ctx, &sc);
    nt_free(ctx, &big);
    nt_free(ctx, &bigg);
}

/* The generated kernels of several instances compile with NVRTC for sm_90a. */
static void test_nvrtc(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    struct {
        int kind;
        int64_t n;
        int vec, xt, yt, gt, bt, rt, ot, st;
    } fw[] = {
        {0, 8192, 8, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_DTYPE_BF16, -1, -1, -1},
        {1, 8192, 8, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_DTYPE_F32, -1, CK_DTYPE_BF16, CK_DTYPE_BF16,
         -1},
        {1, 65536, 8, CK_DTYPE_BF16, CK_DTYPE_I8, CK_DTYPE_BF16, -1, CK_DTYPE_BF16, CK_DTYPE_BF16,
         CK_DTYPE_F32},
        {0, 17, 1, CK_DTYPE_F16, CK_DTYPE_FP8_E4M3, CK_DTYPE_F16, CK_DTYPE_F32, -1, -1, CK_DTYPE_F32},
        {2, 4096, 4, CK_DTYPE_F32, CK_DTYPE_I8, -1, -1, -1, -1, CK_DTYPE_F32},
        {0, 65536, 8, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_DTYPE_BF16, -1, -1, -1},
        {0, 32768, 8, CK_DTYPE_F16, CK_DTYPE_FP8_E4M3, CK_DTYPE_F32, -1, -1, -1, CK_DTYPE_F32},
        {1, 1024, 8, CK_DTYPE_BF16, CK_DTYPE_F16, CK_DTYPE_BF16, -1, -1, -1, -1},
        {0, 100, 4, CK_DTYPE_F32, CK_DTYPE_F32, CK_DTYPE_F32, CK_DTYPE_F32, -1, -1, -1},
    };
    for (size_t j = 0; j < 2 * (sizeof fw / sizeof fw[0]); ++j) {
        size_t i = j / 2; /* each without and with clusters (CK_NORM_CLUSTER opts in) */
        if (j % 2)
            setenv("CK_NORM_CLUSTER", "4,256", 1);
        else
            unsetenv("CK_NORM_CLUSTER");
        ck_norm_instance in;
        ck_norm_pick_fwd(fw[i].n, fw[i].vec, 16384, fw[i].vec == 8 && fw[i].xt != 0 && fw[i].rt < 0
                             ? (fw[i].xt == CK_DTYPE_BF16 ? 2 : 1)
                             : 0,
                         1, &in);
        in.fp8cvt = 1; /* sm_90a converts to fp8 e4m3 in one instruction */
        unsetenv("CK_NORM_CLUSTER");
        char *src = ck_norm_fwd_source(fw[i].kind, fw[i].n, &in, fw[i].xt, fw[i].yt, fw[i].gt,
                                       fw[i].bt, fw[i].rt, fw[i].ot, fw[i].st, fw[i].kind == 0, 1);
        CHECK(src != NULL);
        void *cubin = NULL;
        size_t size = 0;
        ck_status st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
        CHECK_MSG(st == CK_SUCCESS, "forward %zu (clusters %zu): %s", i, j % 2, ck_last_error());
        free(cubin);
        free(src);
    }
    struct {
        int kind;
        int64_t n;
        int vec, xt, gt, dgt, dbt;
    } bw[] = {
        {0, 8192, 8, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_DTYPE_F32, CK_DTYPE_F32},
        {1, 1023, 1, CK_DTYPE_F16, CK_DTYPE_F32, CK_DTYPE_F16, -1},
        {0, 65536, 4, CK_DTYPE_F32, CK_DTYPE_F32, -1, -1},
    };
    for (size_t i = 0; i < sizeof bw / sizeof bw[0]; ++i) {
        ck_norm_instance in;
        ck_norm_pick(bw[i].n, bw[i].vec, 16384, 132, &in);
        if (i == 0) { /* the ring and the combine's slices, as on an H100 with dgamma */
            in.ring = 3;
            in.cache = 0;
            in.cslices = 16;
        }
        char *src = ck_norm_bwd_source(bw[i].kind, bw[i].n, &in, bw[i].xt, bw[i].xt, bw[i].gt,
                                       bw[i].xt, bw[i].dgt, bw[i].dbt);
        CHECK(src != NULL);
        void *cubin = NULL;
        size_t size = 0;
        ck_status st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
        CHECK_MSG(st == CK_SUCCESS, "backward %zu: %s", i, ck_last_error());
        free(cubin);
        free(src);
    }
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    RUN_TEST(test_errors);
    RUN_TEST(test_nvrtc);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
