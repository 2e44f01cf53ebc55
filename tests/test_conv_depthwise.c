/* The direct depthwise convolution route (G = C = K; src/ops/conv/depthwise.c) on the device
 * CK_DEVICE chooses (the emulator in CI): the policy routes depthwise problems to it, and every
 * element of the written tensor of random inputs is checked against the direct f64 reference
 * (ck_conv_reference_value): 1-D/2-D/3-D, filters 1/3/5/7, strides 1-2, dilation 2, asymmetric
 * padding, odd sizes (1, 7, 13), channel counts that take vectors of 8, 4, 2 and 1 and more
 * channels than one block covers, bf16/f16/f32, the forward epilogue (bias, residual,
 * activation, output cast), backward data (stride 1, and strided: per residue class, rows no
 * tap reaches zeroed), backward weight (fixed-order partial sums: two runs give the same bits);
 * channel multipliers and CK_CONV_ROUTE=gemm keep the implicit GEMM with the reason;
 * CK_CONV_DW_STRIP, CK_CONV_DW_WGRAD_BLOCKS and CK_CONV_DW_MIN_BLOCKS. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/conv.h"
#include "ops/conv/conv_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0xd3e7c0a7d1ull;

static int es_of(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

/* uniform in [-1, 1) (never zero-filled), rounded to the type */
static void *random_tensor(ck_dtype t, int64_t n)
{
    char *p = malloc((size_t)(n > 0 ? n : 1) * es_of(t));
    for (int64_t i = 0; p && i < n; ++i) {
        double u = (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1;
        uint64_t code = 0;
        ck_convert_from_f64(t, u, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        memcpy(p + i * es_of(t), &code, (size_t)es_of(t));
    }
    return p;
}

static double get(const void *p, ck_dtype t, int64_t i)
{
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * es_of(t), (size_t)es_of(t));
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static double act(ck_gemm_activation a, double x)
{
    switch (a) {
    case CK_GEMM_ACT_RELU:
        return x > 0 ? x : 0;
    case CK_GEMM_ACT_SILU:
        return x / (1 + exp(-x));
    case CK_GEMM_ACT_SIGMOID:
        return 1 / (1 + exp(-x));
    case CK_GEMM_ACT_GELU_ERF:
        return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    default:
        return x;
    }
}

/* A depthwise problem: g channels, spatial lengths in[] / filter f[] of ndim dims (outermost
 * first), stride 1, dilation 1, no padding, type t everywhere. */
static ck_conv_problem dw(ck_conv_direction dir, int ndim, int n, int g, const int *in,
                          const int *f, ck_dtype t)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.direction = dir;
    p.ndim = ndim;
    p.n = n, p.g = p.c = p.k = g;
    for (int d = 0; d < ndim; ++d)
        p.in[d] = in[d], p.filter[d] = f[d];
    p.in_dtype = p.wei_dtype = p.out_dtype = t;
    return p;
}

static void pad(ck_conv_problem *p, int d, int l, int r)
{
    p->pad_left[d] = l, p->pad_right[d] = r;
}

/* Plan with the policy, expect route `want`, run, compare every element of the written tensor
 * with the reference. */
static void run_case(const char *what, const ck_conv_problem *p, ck_conv_route want)
{
    int64_t nx, nw, ny;
    ck_status st = ck_conv_tensor_elements(p, &nx, &nw, &ny);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", what, ck_last_error());
    ck_conv_plan *plan = NULL;
    if (!st)
        st = ck_conv_plan_create(g_ctx, p, &plan);
    CHECK_MSG(st == CK_SUCCESS, "%s: plan: %s", what, ck_last_error());
    if (st)
        return;
    CHECK_MSG(ck_conv_plan_route(plan) == want, "%s: route %s, expected %s", what,
              ck_conv_route_name(ck_conv_plan_route(plan)), ck_conv_route_name(want));
    int fwd = p->direction == CK_CONV_FWD, bww = p->direction == CK_CONV_BWD_WEIGHT;
    ck_dtype rt = p->residual_dtype, bt = p->bias_dtype;
    ck_dtype ot = fwd ? p->out_dtype : bww ? p->wei_dtype : p->in_dtype;
    void *h[5] = {random_tensor(p->in_dtype, nx), random_tensor(p->wei_dtype, nw),
                  random_tensor(p->out_dtype, ny), random_tensor(bt, p->g), random_tensor(rt, ny)};
    size_t sz[5] = {(size_t)nx * es_of(p->in_dtype), (size_t)nw * es_of(p->wei_dtype),
                    (size_t)ny * es_of(p->out_dtype), (size_t)p->g * es_of(bt),
                    (size_t)ny * es_of(rt)};
    ck_device *dev = ck_context_device(g_ctx);
    void *d[5] = {0};
    for (int i = 0; i < 5; ++i) {
        CHECK_OK(ck_malloc(dev, sz[i], &d[i]));
        CHECK_OK(ck_memcpy_h2d(dev, d[i], h[i], sz[i], NULL));
    }
    ck_conv_args a;
    ck_conv_args_init(&a);
    a.x = d[0], a.w = d[1], a.y = d[2], a.bias = p->bias ? d[3] : NULL;
    a.residual = p->residual ? d[4] : NULL;
    a.alpha = 0.75f;
    st = ck_conv_plan_execute(plan, &a);
    CHECK_MSG(st == CK_SUCCESS, "%s: execute: %s", what, ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    int oi = fwd ? 2 : bww ? 1 : 0;
    int64_t no = fwd ? ny : bww ? nw : nx;
    void *got = malloc(sz[oi]), *again = malloc(sz[oi]);
    CHECK_OK(ck_memcpy_d2h(dev, got, d[oi], sz[oi], NULL));
    /* a second run gives the same bits (backward weight: the fixed-order sums) */
    CHECK_OK(ck_conv_plan_execute(plan, &a));
    CHECK_OK(ck_context_synchronize(g_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, again, d[oi], sz[oi], NULL));
    CHECK_MSG(memcmp(got, again, sz[oi]) == 0, "%s: a second run differs", what);
    ck_conv_args ha = a;
    ha.x = h[0], ha.w = h[1], ha.y = h[2], ha.bias = h[3], ha.residual = h[4];
    double unit = ot == CK_DTYPE_BF16 ? 0x1p-8 : ot == CK_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
    int64_t bad = 0;
    for (int64_t e = 0; e < no; ++e) {
        double mag = 0, ref = act(p->activation, ck_conv_reference_value(p, &ha, e, &mag));
        double tol = 2 * unit * fabs(ref) + 1e-6 + mag * (bww ? 0x1p-17 : 0x1p-20);
        double v = get(got, ot, e);
        if (!(fabs(v - ref) <= tol) && bad++ < 3)
            CHECK_MSG(0, "%s: element %lld: got %.8g, reference %.8g (tol %.3g)", what,
                      (long long)e, v, ref, tol);
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements wrong", what, (long long)bad, (long long)no);
    for (int i = 0; i < 5; ++i) {
        ck_free(dev, d[i]);
        free(h[i]);
    }
    free(got);
    free(again);
    ck_conv_plan_destroy(plan);
}

static void test_fwd_2d(void)
{
    const int in7[2] = {7, 7}, in13[2] = {13, 13}, f3[2] = {3, 3}, f5[2] = {5, 5}, f7[2] = {7, 7},
              f1[2] = {1, 1};
    /* 3x3 pad 1, 16 channels of bf16: two vectors of 8 */
    ck_conv_problem p = dw(CK_CONV_FWD, 2, 2, 16, in7, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    run_case("fwd 3x3 pad 1 7x7 g16 bf16", &p, CK_CONV_ROUTE_DEPTHWISE);
    /* 5x5 stride 2, asymmetric padding, 13x13, 12 channels of f16 (vectors of 4) */
    p = dw(CK_CONV_FWD, 2, 1, 12, in13, f5, CK_DTYPE_F16);
    p.stride[0] = p.stride[1] = 2;
    pad(&p, 0, 2, 1), pad(&p, 1, 0, 3);
    run_case("fwd 5x5 stride 2 pad (2,1)x(0,3) 13x13 g12 f16", &p, CK_CONV_ROUTE_DEPTHWISE);
    /* 7x7 dilation 2, stride (1, 2), padding on one side, f32 (vectors of 4), 6 channels (2) */
    p = dw(CK_CONV_FWD, 2, 1, 6, in13, f7, CK_DTYPE_F32);
    p.dilation[0] = p.dilation[1] = 2, p.stride[1] = 2;
    pad(&p, 0, 3, 0), pad(&p, 1, 6, 2);
    run_case("fwd 7x7 dilation 2 stride (1,2) 13x13 g6 f32", &p, CK_CONV_ROUTE_DEPTHWISE);
    /* 1x1, 5 channels (one at a time), 13x13 stride 2 */
    p = dw(CK_CONV_FWD, 2, 3, 5, in13, f1, CK_DTYPE_BF16);
    p.stride[0] = p.stride[1] = 2;
    run_case("fwd 1x1 stride 2 g5 bf16", &p, CK_CONV_ROUTE_DEPTHWISE);
    /* more channels than a block covers (32 threads x 8): 264 = 256 + 8, 3x3 stride 2 */
    const int in5[2] = {5, 7};
    p = dw(CK_CONV_FWD, 2, 1, 264, in5, f3, CK_DTYPE_BF16);
    p.stride[0] = p.stride[1] = 2;
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 0);
    run_case("fwd 3x3 stride 2 g264 bf16", &p, CK_CONV_ROUTE_DEPTHWISE);
}

static void test_fwd_1d_3d(void)
{
    const int w13[1] = {13}, f5[1] = {5}, in3[3] = {5, 7, 7}, f3[3] = {3, 3, 3};
    const int in1[3] = {1, 1, 7}, f113[3] = {1, 1, 3};
    ck_conv_problem p = dw(CK_CONV_FWD, 1, 2, 40, w13, f5, CK_DTYPE_BF16);
    p.stride[0] = 2, p.dilation[0] = 2;
    pad(&p, 0, 3, 2);
    run_case("fwd 1-D 5 stride 2 dilation 2 g40 bf16", &p, CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_FWD, 3, 1, 8, in3, f3, CK_DTYPE_F16);
    p.stride[1] = 2;
    pad(&p, 0, 1, 1), pad(&p, 1, 0, 1), pad(&p, 2, 1, 0);
    run_case("fwd 3-D 3x3x3 stride (1,2,1) g8 f16", &p, CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_FWD, 3, 3, 8, in1, f113, CK_DTYPE_BF16);
    pad(&p, 2, 2, 0);
    run_case("fwd 3-D 1x1x3 on 1x1x7 g8", &p, CK_CONV_ROUTE_DEPTHWISE);
}

/* act(alpha * acc + residual + bias) and the output cast */
static void test_fwd_epilogue(void)
{
    const int in7[2] = {7, 9}, f3[2] = {3, 3};
    ck_conv_problem p = dw(CK_CONV_FWD, 2, 2, 24, in7, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    p.bias = p.residual = 1, p.activation = CK_GEMM_ACT_RELU;
    p.bias_dtype = CK_DTYPE_BF16, p.residual_dtype = CK_DTYPE_F32;
    run_case("fwd bias (bf16) + residual (f32) + relu, bf16 out", &p, CK_CONV_ROUTE_DEPTHWISE);
    p.in_dtype = p.wei_dtype = CK_DTYPE_F16, p.out_dtype = CK_DTYPE_F32;
    p.activation = CK_GEMM_ACT_SILU, p.bias_dtype = CK_DTYPE_F32;
    p.residual_dtype = CK_DTYPE_F16;
    run_case("fwd f16 in, bias + residual (f16) + silu, f32 out", &p, CK_CONV_ROUTE_DEPTHWISE);
    p.out_dtype = CK_DTYPE_BF16, p.residual = 0, p.activation = CK_GEMM_ACT_GELU_ERF;
    run_case("fwd f16 in, bias + gelu, bf16 out", &p, CK_CONV_ROUTE_DEPTHWISE);
}

static void test_bwd_data(void)
{
    const int in13[2] = {13, 11}, f3[2] = {3, 3}, f5[2] = {5, 5};
    ck_conv_problem p = dw(CK_CONV_BWD_DATA, 2, 2, 16, in13, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    run_case("bwd-data 3x3 pad 1 g16 bf16", &p, CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_BWD_DATA, 2, 1, 12, in13, f5, CK_DTYPE_F32);
    p.dilation[0] = p.dilation[1] = 2;
    pad(&p, 0, 0, 3), pad(&p, 1, 8, 1);
    run_case("bwd-data 5x5 dilation 2 pad (0,3)x(8,1) g12 f32", &p, CK_CONV_ROUTE_DEPTHWISE);
    const int in3[3] = {3, 5, 7}, f333[3] = {3, 3, 3};
    p = dw(CK_CONV_BWD_DATA, 3, 1, 8, in3, f333, CK_DTYPE_F16);
    pad(&p, 0, 1, 0), pad(&p, 1, 2, 1), pad(&p, 2, 1, 1);
    p.dilation[1] = 2;
    run_case("bwd-data 3-D 3x3x3 g8 f16", &p, CK_CONV_ROUTE_DEPTHWISE);
}

/* Strided backward data: one launch per residue class of the stride (conv's classes), rows that
 * no tap reaches zeroed */
static void test_bwd_data_strided(void)
{
    const int in13[2] = {13, 11}, f3[2] = {3, 3}, f5[2] = {5, 5}, f1[2] = {1, 1};
    ck_conv_problem p = dw(CK_CONV_BWD_DATA, 2, 2, 16, in13, f3, CK_DTYPE_BF16);
    p.stride[0] = p.stride[1] = 2;
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    run_case("bwd-data 3x3 stride 2 pad 1 g16 bf16", &p, CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_BWD_DATA, 2, 1, 12, in13, f5, CK_DTYPE_F16);
    p.stride[0] = 2, p.stride[1] = 3, p.dilation[0] = 2;
    pad(&p, 0, 3, 1), pad(&p, 1, 0, 2);
    run_case("bwd-data 5x5 stride (2,3) dilation (2,1) asymmetric pad g12 f16", &p,
             CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_BWD_DATA, 2, 2, 6, in13, f1, CK_DTYPE_F32);
    p.stride[0] = p.stride[1] = 2;
    run_case("bwd-data 1x1 stride 2 g6 f32 (classes no tap reaches)", &p, CK_CONV_ROUTE_DEPTHWISE);
    const int w13[1] = {13}, x3[1] = {3}, in3[3] = {3, 7, 9}, f333[3] = {3, 3, 3};
    p = dw(CK_CONV_BWD_DATA, 1, 2, 40, w13, x3, CK_DTYPE_BF16);
    p.stride[0] = 3, p.dilation[0] = 2;
    pad(&p, 0, 2, 0);
    run_case("bwd-data 1-D 3 stride 3 dilation 2 g40", &p, CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_BWD_DATA, 3, 1, 8, in3, f333, CK_DTYPE_BF16);
    p.stride[1] = p.stride[2] = 2;
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 0), pad(&p, 2, 0, 1);
    run_case("bwd-data 3-D 3x3x3 stride (1,2,2) g8", &p, CK_CONV_ROUTE_DEPTHWISE);
}

/* dW = alpha * sum over N * out of dY X: partials per block, summed in a fixed order */
static void test_bwd_weight(void)
{
    const int in13[2] = {13, 11}, f3[2] = {3, 3}, f5[2] = {5, 5}, f7[2] = {7, 7};
    ck_conv_problem p = dw(CK_CONV_BWD_WEIGHT, 2, 3, 16, in13, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    run_case("bwd-weight 3x3 pad 1 n3 g16 bf16", &p, CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_BWD_WEIGHT, 2, 2, 12, in13, f5, CK_DTYPE_F16);
    p.stride[0] = p.stride[1] = 2, p.dilation[1] = 2;
    pad(&p, 0, 2, 1), pad(&p, 1, 0, 3);
    run_case("bwd-weight 5x5 stride 2 dilation (1,2) asymmetric pad g12 f16", &p,
             CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_BWD_WEIGHT, 2, 1, 264, in13, f7, CK_DTYPE_F32);
    pad(&p, 0, 3, 3), pad(&p, 1, 0, 6);
    run_case("bwd-weight 7x7 g264 f32 (partial channel block)", &p, CK_CONV_ROUTE_DEPTHWISE);
    const int w13[1] = {13}, x3[1] = {3}, in3[3] = {3, 5, 7}, f333[3] = {3, 3, 3};
    p = dw(CK_CONV_BWD_WEIGHT, 1, 2, 5, w13, x3, CK_DTYPE_BF16);
    p.stride[0] = 2;
    pad(&p, 0, 1, 0);
    run_case("bwd-weight 1-D 3 stride 2 g5 bf16", &p, CK_CONV_ROUTE_DEPTHWISE);
    p = dw(CK_CONV_BWD_WEIGHT, 3, 1, 8, in3, f333, CK_DTYPE_F16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 0), pad(&p, 2, 0, 1);
    run_case("bwd-weight 3-D 3x3x3 g8 f16", &p, CK_CONV_ROUTE_DEPTHWISE);
    /* fewer lanes than strips: 1798 strips of one output (8 channels: 256 lanes a block), 2
     * lane blocks (6 blocks over 3 filter rows), so each thread walks up to 4 strips */
    const int in29[2] = {29, 31};
    p = dw(CK_CONV_BWD_WEIGHT, 2, 2, 8, in29, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    setenv("CK_CONV_DW_WGRAD_BLOCKS", "6", 1);
    setenv("CK_CONV_DW_STRIP", "1", 1);
    run_case("bwd-weight 3x3 n2 29x31 g8, 2 lane blocks of 4 strips a thread", &p,
             CK_CONV_ROUTE_DEPTHWISE);
    unsetenv("CK_CONV_DW_STRIP");
    setenv("CK_CONV_DW_WGRAD_BLOCKS", "x", 1);
    ck_conv_plan *plan = NULL;
    CHECK_STATUS(ck_conv_plan_create(g_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "CK_CONV_DW_WGRAD_BLOCKS") != NULL);
    unsetenv("CK_CONV_DW_WGRAD_BLOCKS");
}

/* What the direct route does not take: the implicit GEMM, with the reason in its sentence. */
static void expect_gemm_route(const char *what, const ck_conv_problem *p, const char *phrase)
{
    ck_conv_prob q;
    char why[384];
    CHECK_OK(ck_conv_prob_make(p, &q));
    CHECK_MSG(ck_conv_dw_refuses(&q, why, sizeof why), "%s: the direct route took it", what);
    CHECK_MSG(strstr(why, phrase) != NULL, "%s: reason \"%s\" lacks \"%s\"", what, why, phrase);
}

static void test_routes(void)
{
    const int in7[2] = {7, 7}, f3[2] = {3, 3};
    ck_conv_problem p = dw(CK_CONV_FWD, 2, 1, 8, in7, f3, CK_DTYPE_BF16);
    p.k = 16; /* channel multiplier 2 */
    expect_gemm_route("channel multiplier 2", &p, "one of each");
    p.k = 8;
    setenv("CK_CONV_ROUTE", "gemm", 1);
    expect_gemm_route("CK_CONV_ROUTE=gemm", &p, "CK_CONV_ROUTE=gemm");
    unsetenv("CK_CONV_ROUTE");
    /* the tests' picks of GEMM routes keep the implicit GEMM (test_conv's depthwise cases) */
    p = dw(CK_CONV_BWD_DATA, 2, 1, 8, in7, f3, CK_DTYPE_BF16);
    p.stride[0] = p.stride[1] = 2;
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    ck_conv_plan *plan = NULL;
    CHECK_OK(ck_conv_plan_create_ex(g_ctx, &p, CK_CONV_PICK_SM80_SMALLEST, &plan));
    CHECK(plan && ck_conv_plan_route(plan) == CK_CONV_ROUTE_SM80);
    ck_conv_plan_destroy(plan);
}

/* The strip switch: other strips give the same results; a bad value is refused. */
static void test_strip_switch(void)
{
    const int in9[2] = {6, 9}, f3[2] = {3, 3};
    ck_conv_problem p = dw(CK_CONV_FWD, 2, 1, 8, in9, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    p.stride[1] = 2;
    setenv("CK_CONV_DW_STRIP", "1", 1);
    run_case("fwd strip 1", &p, CK_CONV_ROUTE_DEPTHWISE);
    setenv("CK_CONV_DW_STRIP", "3", 1);
    run_case("fwd strip 3 stride (1,2)", &p, CK_CONV_ROUTE_DEPTHWISE);
    setenv("CK_CONV_DW_MIN_BLOCKS", "2", 1);
    run_case("fwd strip 3, launch bounds of 2 blocks", &p, CK_CONV_ROUTE_DEPTHWISE);
    setenv("CK_CONV_DW_MIN_BLOCKS", "9", 1);
    ck_conv_plan *bad = NULL;
    CHECK_STATUS(ck_conv_plan_create(g_ctx, &p, &bad), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "CK_CONV_DW_MIN_BLOCKS") != NULL);
    unsetenv("CK_CONV_DW_MIN_BLOCKS");
    setenv("CK_CONV_DW_STRIP", "0", 1);
    ck_conv_plan *plan = NULL;
    CHECK_STATUS(ck_conv_plan_create(g_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "CK_CONV_DW_STRIP") != NULL);
    CHECK(plan == NULL);
    unsetenv("CK_CONV_DW_STRIP");
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    unsetenv("CK_CONV_ROUTE");
    unsetenv("CK_CONV_DW_STRIP");
    unsetenv("CK_CONV_DW_WGRAD_BLOCKS");
    unsetenv("CK_CONV_DW_MIN_BLOCKS");
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_fwd_2d);
    RUN_TEST(test_fwd_1d_3d);
    RUN_TEST(test_fwd_epilogue);
    RUN_TEST(test_bwd_data);
    RUN_TEST(test_bwd_data_strided);
    RUN_TEST(test_bwd_weight);
    RUN_TEST(test_routes);
    RUN_TEST(test_strip_switch);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
