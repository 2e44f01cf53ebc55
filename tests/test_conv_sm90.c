/* Forward convolution on the GEMM's sm90 pipeline (ck/conv.h, src/ops/conv/policy.c): A =
 * im2col(X) copied by the producer warpgroup with cp.async from the im2col copy window (each
 * thread arriving on the stage's full mbarrier when its copies land), W by TMA, wgmma, the GEMM's
 * epilogue; and the 1x1 stride-1 unpadded forward as a plain GEMM. On the device CK_DEVICE
 * chooses (the emulator in CI, which runs the sm90 family). Every output element of random
 * inputs against the direct f64 reference (ck_conv_reference_value), over 1-D/2-D/3-D, groups,
 * strides, dilations, asymmetric padding, filters 1, 3, 5, 7, bf16/f16/f32 (tf32), several
 * tiles per block of the persistent grid (the stage ring wraps), bias + residual + activation;
 * and the policy's routes and reasons: forward with C of a group not a multiple of 8 (16-bit)
 * and the backward directions stay on sm80, saying why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/conv.h"
#include "ops/conv/conv_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x5eed90c0a7e1ull;

static int es_of(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

static void fill(void *p, ck_dtype t, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        double u = (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1;
        uint64_t code = 0;
        ck_convert_from_f64(t, u, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        memcpy((char *)p + i * es_of(t), &code, (size_t)es_of(t));
    }
}

static double get(const void *p, ck_dtype t, int64_t i)
{
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * es_of(t), (size_t)es_of(t));
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static double unit(ck_dtype t)
{
    return t == CK_DTYPE_BF16 ? 0x1p-8 : t == CK_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
}

static double act(ck_gemm_activation a, double x)
{
    switch (a) {
    case CK_GEMM_ACT_RELU:
        return x > 0 ? x : 0;
    case CK_GEMM_ACT_SILU:
        return x / (1 + exp(-x));
    default:
        return x;
    }
}

/* A forward problem: ndim spatial dims (outermost first), channels per group c -> k. */
static ck_conv_problem fwd(int ndim, int n, int g, int c, int k, const int *in, const int *fil,
                           ck_dtype t)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.ndim = ndim;
    p.n = n, p.g = g, p.c = (int64_t)g * c, p.k = (int64_t)g * k;
    for (int d = 0; d < ndim; ++d)
        p.in[d] = in[d], p.filter[d] = fil[d];
    p.in_dtype = p.wei_dtype = p.out_dtype = t;
    p.bias_dtype = p.residual_dtype = CK_DTYPE_F32;
    return p;
}

/* Plan with `pick`, expect `route`, run on random inputs and compare every element of the
 * direction's output (Y, dX or dW). */
static void run_case(const char *what, const ck_conv_problem *pp, int pick, ck_conv_route route)
{
    ck_conv_problem p = *pp;
    int64_t nx, nw, ny;
    ck_status st = ck_conv_tensor_elements(&p, &nx, &nw, &ny);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", what, ck_last_error());
    if (st)
        return;
    ck_conv_plan *plan = NULL;
    st = ck_conv_plan_create_ex(g_ctx, &p, pick, &plan);
    CHECK_MSG(st == CK_SUCCESS, "%s: plan: %s", what, ck_last_error());
    if (st)
        return;
    char desc[256];
    CHECK_OK(ck_conv_plan_describe(plan, desc, sizeof desc));
    CHECK_MSG(ck_conv_plan_route(plan) == route, "%s: route %s, expected %s (%s)", what,
              ck_conv_route_name(ck_conv_plan_route(plan)), ck_conv_route_name(route), desc);
    int ei = es_of(p.in_dtype), eo = es_of(p.out_dtype);
    size_t sx = (size_t)nx * ei, sw = (size_t)nw * ei, sy = (size_t)ny * eo, sb = (size_t)p.k * 4;
    void *hx = malloc(sx), *hw = malloc(sw), *hy = malloc(sy), *hb = malloc(sb),
         *hr = malloc((size_t)ny * 4), *got = NULL;
    int fwd = p.direction == CK_CONV_FWD, bww = p.direction == CK_CONV_BWD_WEIGHT;
    fill(hx, p.in_dtype, nx);
    fill(hw, p.wei_dtype, nw);
    fill(hy, p.out_dtype, ny);
    fill(hb, CK_DTYPE_F32, p.k);
    fill(hr, CK_DTYPE_F32, ny);
    /* the output's bits start as garbage: unwritten elements show */
    memset(fwd ? hy : bww ? hw : hx, 0x7f, fwd ? sy : bww ? sw : sx);
    ck_dtype ot = fwd ? p.out_dtype : p.in_dtype;
    int64_t no = fwd ? ny : bww ? nw : nx;
    got = malloc((size_t)no * es_of(ot));
    ck_device *dev = ck_context_device(g_ctx);
    void *dx, *dw, *dy, *db = NULL, *dr = NULL;
    CHECK_OK(ck_malloc(dev, sx, &dx));
    CHECK_OK(ck_malloc(dev, sw, &dw));
    CHECK_OK(ck_malloc(dev, sy, &dy));
    CHECK_OK(ck_memcpy_h2d(dev, dx, hx, sx, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dw, hw, sw, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dy, hy, sy, NULL));
    if (p.bias) {
        CHECK_OK(ck_malloc(dev, sb, &db));
        CHECK_OK(ck_memcpy_h2d(dev, db, hb, sb, NULL));
    }
    if (p.residual) {
        CHECK_OK(ck_malloc(dev, (size_t)ny * 4, &dr));
        CHECK_OK(ck_memcpy_h2d(dev, dr, hr, (size_t)ny * 4, NULL));
    }
    ck_conv_args a;
    ck_conv_args_init(&a);
    a.x = dx, a.w = dw, a.y = dy, a.bias = db, a.residual = dr, a.alpha = 0.75f;
    for (int r = 0; r < 2 && !st; ++r) /* twice: split-K's counters reset themselves */
        st = ck_conv_plan_execute(plan, &a);
    CHECK_MSG(st == CK_SUCCESS, "%s: execute: %s", what, ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, got, fwd ? dy : bww ? dw : dx, (size_t)no * es_of(ot), NULL));
    ck_conv_args h;
    ck_conv_args_init(&h);
    h.x = hx, h.w = hw, h.y = hy, h.bias = hb, h.residual = hr, h.alpha = a.alpha;
    int64_t bad = 0;
    for (int64_t e = 0; e < no; ++e) {
        double mag = 0, ref = act(p.activation, ck_conv_reference_value(&p, &h, e, &mag));
        /* output rounding, f32 accumulation; f32 inputs: tf32 truncation of both factors */
        double tol = 2 * unit(ot) * fabs(ref) + 1e-6 + mag * 0x1p-18 +
                     (p.in_dtype == CK_DTYPE_F32 ? mag * 0x1p-9 : 0);
        double v = get(got, ot, e);
        if (!(fabs(v - ref) <= tol) && bad++ < 3)
            CHECK_MSG(0, "%s: element %lld: got %.8g, reference %.8g (tol %.3g)", what,
                      (long long)e, v, ref, tol);
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements wrong (%s)", what, (long long)bad, (long long)no,
              desc);
    ck_free(dev, dx);
    ck_free(dev, dw);
    ck_free(dev, dy);
    if (db)
        ck_free(dev, db);
    if (dr)
        ck_free(dev, dr);
    free(hx), free(hw), free(hy), free(hb), free(hr), free(got);
    ck_conv_plan_destroy(plan);
}

static void pad(ck_conv_problem *p, int d, int l, int r)
{
    p->pad_left[d] = l, p->pad_right[d] = r;
}

static void test_fwd_2d(void)
{
    const int in7[2] = {7, 7}, in13[2] = {13, 13}, f3[2] = {3, 3}, f5[2] = {5, 5}, f7[2] = {7, 7};
    /* 3x3 pad 1 on 7x7, c 8 -> k 16 */
    ck_conv_problem p = fwd(2, 2, 1, 8, 16, in7, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    run_case("2-D 3x3 pad 1 7x7 bf16", &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
    /* 5x5 stride 2, asymmetric padding, 2 groups, f16 */
    p = fwd(2, 1, 2, 16, 8, in13, f5, CK_DTYPE_F16);
    p.stride[0] = p.stride[1] = 2;
    pad(&p, 0, 2, 1), pad(&p, 1, 0, 3);
    run_case("2-D 5x5 stride 2 pad (2,1)x(0,3) g2 f16", &p, CK_CONV_PICK_SM90_SMALLEST,
             CK_CONV_ROUTE_SM90);
    /* 7x7 dilation 2, stride (1, 3), one-sided padding, k 24 */
    p = fwd(2, 1, 1, 8, 24, in13, f7, CK_DTYPE_BF16);
    p.dilation[0] = p.dilation[1] = 2;
    p.stride[1] = 3;
    pad(&p, 0, 3, 0), pad(&p, 1, 6, 2);
    run_case("2-D 7x7 dilation 2 stride (1,3)", &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
}

/* Several output tiles per block of the persistent grid and several K tiles per output tile:
 * the stage ring wraps while the producers' copies and the consumers' wgmma overlap. M = 676
 * (6 tiles of 128), N = 2 x 72 (groups, 2 tiles of 64 each), K = 9 * 40 = 360 (6 K tiles). */
static void test_fwd_many_tiles(void)
{
    const int in[2] = {13, 13}, f3[2] = {3, 3};
    ck_conv_problem p = fwd(2, 4, 2, 40, 72, in, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    run_case("2-D 3x3 n4 g2 c40 k72 (24 tiles, ring wraps)", &p, CK_CONV_PICK_SM90_SMALLEST,
             CK_CONV_ROUTE_SM90);
    run_case("the same with the policy's instance", &p, CK_CONV_PICK_POLICY, CK_CONV_ROUTE_SM90);
}

static void test_fwd_1d_3d_f32(void)
{
    const int w13[1] = {13}, f5[1] = {5};
    ck_conv_problem p = fwd(1, 2, 2, 8, 8, w13, f5, CK_DTYPE_F16);
    p.stride[0] = 2, p.dilation[0] = 2;
    pad(&p, 0, 3, 2);
    run_case("1-D 5 stride 2 dilation 2 g2 f16", &p, CK_CONV_PICK_SM90_SMALLEST,
             CK_CONV_ROUTE_SM90);
    const int in3[3] = {5, 7, 7}, f333[3] = {3, 3, 3};
    p = fwd(3, 1, 1, 16, 8, in3, f333, CK_DTYPE_BF16);
    p.stride[1] = 2;
    pad(&p, 0, 1, 1), pad(&p, 1, 0, 1), pad(&p, 2, 1, 0);
    run_case("3-D 3x3x3 stride (1,2,1) bf16", &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
    p.in_dtype = p.wei_dtype = p.out_dtype = CK_DTYPE_F32;
    p.c = 4; /* f32: 4-element (16-byte) runs */
    run_case("3-D 3x3x3 f32 (tf32) c4", &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
}

/* 1x1: stride 1 unpadded is a plain GEMM (X as A); with a stride it is not (loader). */
static void test_fwd_1x1(void)
{
    const int in[2] = {7, 9}, f1[2] = {1, 1};
    ck_conv_problem p = fwd(2, 3, 2, 16, 24, in, f1, CK_DTYPE_BF16);
    run_case("1x1 stride 1 g2: a plain GEMM (sm90 family)", &p, CK_CONV_PICK_SM90_SMALLEST,
             CK_CONV_ROUTE_GEMM);
    run_case("1x1 stride 1 g2: the GEMM policy's instance", &p, CK_CONV_PICK_POLICY,
             CK_CONV_ROUTE_GEMM);
    p.stride[0] = p.stride[1] = 2;
    run_case("1x1 stride 2: the im2col loader", &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
}

/* The GEMM's epilogue on the sm90 route: bias, residual and relu to bf16 (the generic
 * epilogue: a residual), bias and silu to f32, bias alone to bf16 (the TMA store). */
static void test_fwd_epilogue(void)
{
    const int in[2] = {7, 7}, f3[2] = {3, 3};
    ck_conv_problem p = fwd(2, 2, 2, 8, 16, in, f3, CK_DTYPE_BF16);
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    p.bias = p.residual = 1, p.activation = CK_GEMM_ACT_RELU;
    run_case("bias + residual + relu, bf16 out", &p, CK_CONV_PICK_SM90_SMALLEST,
             CK_CONV_ROUTE_SM90);
    p.residual = 0, p.out_dtype = CK_DTYPE_F32, p.activation = CK_GEMM_ACT_SILU;
    run_case("bias + silu, f32 out", &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
    p.out_dtype = CK_DTYPE_BF16, p.activation = CK_GEMM_ACT_NONE;
    run_case("bias, bf16 out (TMA store)", &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
}

/* The policy's other routes, each with its reason in the kernel's header comment. */
static void expect_reason(const char *what, const ck_conv_problem *p, const char *route,
                          const char *reason)
{
    ck_device_props props;
    CHECK_OK(ck_device_get_props(ck_context_device(g_ctx), &props));
    char *src = NULL;
    ck_status st = ck_conv_source(p, &props, CK_CONV_PICK_POLICY, &src);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", what, ck_last_error());
    if (st)
        return;
    const char *pol = strstr(src, "Policy: ");
    CHECK_MSG(pol && strncmp(pol + 8, route, strlen(route)) == 0, "%s: route not %s: %.200s", what,
              route, pol ? pol : src);
    CHECK_MSG(strstr(src, reason) != NULL, "%s: no '%s' in: %.300s", what, reason, pol ? pol : src);
    free(src);
}

static void test_policy_reasons(void)
{
    const int in[2] = {7, 7}, f3[2] = {3, 3};
    ck_conv_problem p = fwd(2, 1, 1, 3, 8, in, f3, CK_DTYPE_BF16);
    expect_reason("fwd c3", &p, "sm80", "16-byte runs");
    p = fwd(2, 1, 16, 1, 1, in, f3, CK_DTYPE_BF16);
    expect_reason("depthwise", &p, "depthwise", "G = C = K = 16");
    p.direction = CK_CONV_BWD_WEIGHT;
    expect_reason("depthwise bwd weight", &p, "depthwise", "fixed-order partial sums");
    p.direction = CK_CONV_BWD_DATA, p.stride[0] = 2;
    expect_reason("depthwise bwd data stride 2", &p, "depthwise", "per residue class");
    p.direction = CK_CONV_FWD, p.stride[0] = 1, p.k = 32; /* a channel multiplier: the GEMM */
    expect_reason("channel multiplier 2", &p, "sm80", "depthwise not used: 1 input and 2 output");
    p = fwd(2, 1, 1, 8, 8, in, f3, CK_DTYPE_BF16);
    p.direction = CK_CONV_BWD_DATA;
    expect_reason("bwd data stride 1", &p, "sm90", "A = dY's view and B = W's view");
    p.stride[0] = 2;
    expect_reason("bwd data stride 2", &p, "sm90", "A = dY's view and B = W's view");
    p.stride[0] = 1;
    p.direction = CK_CONV_BWD_WEIGHT;
    expect_reason("bwd weight", &p, "sm90", "B = im2col(X)");
    p.in_dtype = p.wei_dtype = p.out_dtype = CK_DTYPE_F32;
    expect_reason("bwd weight f32", &p, "sm80", "16-bit types only");
    p.in_dtype = p.wei_dtype = p.out_dtype = CK_DTYPE_BF16;
    p.direction = CK_CONV_BWD_DATA;
    p.k = 4;
    expect_reason("bwd data k4", &p, "sm80", "dY rows in 16-byte runs");
    p.k = 8;
    p.direction = CK_CONV_FWD;
    p.in_dtype = p.wei_dtype = p.out_dtype = CK_DTYPE_F32;
    p.compute = CK_GEMM_COMPUTE_F32;
    expect_reason("fwd 3xTF32", &p, "sm80", "3xTF32");
    p.compute = CK_GEMM_COMPUTE_DEFAULT;
    expect_reason("fwd f32", &p, "sm90", "sm90: forward on sm_90a");
}

/* Backward data of stride 1 (one residue class: dX a plain matrix) and backward weight on the
 * sm90 route: both operands through loaders (dY's view with its negative-coefficient embed, W's
 * view in N-major boxes), and B = im2col(X) in N-major boxes with dY by TMA (M-major). */
static void backward(ck_conv_direction dir, const char *t)
{
    char what[160];
    const int in7[2] = {7, 7}, in13[2] = {13, 13}, f3[2] = {3, 3}, f5[2] = {5, 5};
    ck_conv_problem p = fwd(2, 2, 1, 8, 16, in7, f3, CK_DTYPE_BF16);
    p.direction = dir;
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    snprintf(what, sizeof what, "%s 2-D 3x3 pad 1 7x7", t);
    run_case(what, &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
    p = fwd(2, 1, 2, 16, 8, in13, f5, CK_DTYPE_F16);
    p.direction = dir;
    p.dilation[0] = 2;
    pad(&p, 0, 3, 1), pad(&p, 1, 0, 4);
    snprintf(what, sizeof what, "%s 2-D 5x5 dilation (2,1) pad (3,1)x(0,4) g2 f16", t);
    run_case(what, &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
    const int w13[1] = {13}, f7[1] = {7};
    p = fwd(1, 3, 2, 8, 24, w13, f7, CK_DTYPE_BF16);
    p.direction = dir;
    pad(&p, 0, 2, 5);
    snprintf(what, sizeof what, "%s 1-D 7 pad (2,5) g2", t);
    run_case(what, &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
    const int in3[3] = {5, 7, 7}, f333[3] = {3, 3, 3};
    p = fwd(3, 1, 1, 16, 8, in3, f333, CK_DTYPE_BF16);
    p.direction = dir;
    pad(&p, 0, 1, 1), pad(&p, 1, 0, 1), pad(&p, 2, 1, 0);
    if (dir == CK_CONV_BWD_WEIGHT)
        p.stride[1] = 2;
    snprintf(what, sizeof what, "%s 3-D 3x3x3", t);
    run_case(what, &p, CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
    /* several tiles and K tiles (the ring wraps), the policy's instance */
    const int in11[2] = {11, 11};
    p = fwd(2, 4, 2, 72, 40, in11, f3, CK_DTYPE_BF16);
    p.direction = dir;
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    snprintf(what, sizeof what, "%s 2-D 3x3 n4 g2 c72 k40, the policy's instance", t);
    run_case(what, &p, CK_CONV_PICK_POLICY, CK_CONV_ROUTE_SM90);
}

/* K split 3 ways (the deterministic split-K of the sm90 family: partial sums in a workspace,
 * added in a fixed order by the last split) with the loaders: backward weight's long
 * reduction over N * out, and a forward; each run twice (the counters reset themselves). */
static void test_split_k(void)
{
    const int in[2] = {13, 11}, f3[2] = {3, 3};
    ck_conv_problem p = fwd(2, 4, 1, 8, 16, in, f3, CK_DTYPE_BF16);
    p.direction = CK_CONV_BWD_WEIGHT;
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 1);
    run_case("bwd-weight 3x3 n4 13x11 (572 x 3 split)", &p, CK_CONV_PICK_SM90_SPLIT,
             CK_CONV_ROUTE_SM90);
    p.direction = CK_CONV_FWD;
    p.c = 64;
    run_case("fwd 3x3 c64 (K 576, split 3)", &p, CK_CONV_PICK_SM90_SPLIT, CK_CONV_ROUTE_SM90);
}

static void test_bwd_data(void)
{
    backward(CK_CONV_BWD_DATA, "bwd-data");
}

/* Strided backward data: one implicit GEMM per residue class, each storing its rows of dX
 * through the class's dX view from the wgmma accumulator (the sm90 route's own epilogue), rows
 * no tap reaches zero-filled first. */
static void test_bwd_data_strided(void)
{
    const int in13[2] = {13, 12}, f3[2] = {3, 3}, f5[2] = {5, 5}, f1[2] = {1, 1};
    ck_conv_problem p = fwd(2, 2, 1, 8, 16, in13, f3, CK_DTYPE_BF16);
    p.direction = CK_CONV_BWD_DATA;
    p.stride[0] = p.stride[1] = 2;
    pad(&p, 0, 1, 1), pad(&p, 1, 1, 0);
    run_case("bwd-data 3x3 stride 2 (4 classes)", &p, CK_CONV_PICK_SM90_SMALLEST,
             CK_CONV_ROUTE_SM90);
    p = fwd(2, 1, 2, 16, 8, in13, f5, CK_DTYPE_F16);
    p.direction = CK_CONV_BWD_DATA;
    p.stride[0] = 2, p.stride[1] = 3, p.dilation[0] = 2;
    pad(&p, 0, 4, 1), pad(&p, 1, 2, 3);
    run_case("bwd-data 5x5 stride (2,3) dilation (2,1) g2 f16 (rows without taps)", &p,
             CK_CONV_PICK_SM90_SMALLEST, CK_CONV_ROUTE_SM90);
    p = fwd(2, 2, 1, 72, 40, in13, f1, CK_DTYPE_BF16);
    p.direction = CK_CONV_BWD_DATA;
    p.stride[0] = p.stride[1] = 2;
    run_case("bwd-data 1x1 stride 2 c72, the policy's instance", &p, CK_CONV_PICK_POLICY,
             CK_CONV_ROUTE_SM90);
}

static void test_bwd_weight(void)
{
    backward(CK_CONV_BWD_WEIGHT, "bwd-weight");
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    ck_device_props props;
    CHECK_OK(ck_device_get_props(ck_context_device(g_ctx), &props));
    if (props.backend == CK_BACKEND_CUDA && strcmp(props.target, "sm_90a") != 0) {
        printf("device %s is not sm_90a; skipped\n", props.target);
        ck_context_destroy(g_ctx);
        return 0;
    }
    printf("device: %s (%s), seed 0x%016llx\n", props.name, props.target,
           (unsigned long long)g_rng);
    RUN_TEST(test_policy_reasons);
    RUN_TEST(test_fwd_2d);
    RUN_TEST(test_fwd_many_tiles);
    RUN_TEST(test_fwd_1d_3d_f32);
    RUN_TEST(test_fwd_1x1);
    RUN_TEST(test_fwd_epilogue);
    RUN_TEST(test_bwd_data);
    RUN_TEST(test_bwd_data_strided);
    RUN_TEST(test_bwd_weight);
    RUN_TEST(test_split_k);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
