/* Convolution as implicit GEMM (ck/conv.h): forward and backward weight on the GEMM's sm80
 * pipeline with the im2col operand read through a generated copy window, on the device
 * CK_DEVICE chooses (the emulator in CI). Every output element of random inputs is checked
 * against the direct f64 reference (ck_conv_reference_value) over 1-D/2-D/3-D, groups (1, 2,
 * depthwise), strides, dilations, asymmetric padding, filter sizes 1..7 and odd spatial sizes;
 * the im2col descriptor against the reference document's worked example (7.15: a 6x6 image, 3x3
 * windows, descriptor (4,4,3,3) strides (6,1,6,1) merged into (16, 9)); bad input refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/conv.h"
#include "ck/tile.h"
#include "ops/conv/conv_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x5eed0c0a7e1cull;

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
    case CK_GEMM_ACT_SIGMOID:
        return 1 / (1 + exp(-x));
    default:
        return x;
    }
}

typedef struct ccase {
    ck_conv_direction dir;
    int ndim;
    int n, g, c, k;
    int in[3], fil[3], str[3], dil[3], pl[3], pr[3];
    ck_dtype dt, out;
    int bias, residual;
    ck_gemm_activation act;
} ccase;

static ccase base2(ck_conv_direction dir, int n, int g, int c, int k, int h, int w, int y, int x)
{
    ccase z;
    memset(&z, 0, sizeof z);
    z.dir = dir, z.ndim = 2, z.n = n, z.g = g, z.c = c, z.k = k;
    z.in[0] = h, z.in[1] = w, z.fil[0] = y, z.fil[1] = x;
    for (int d = 0; d < 3; ++d)
        z.str[d] = z.dil[d] = 1;
    z.dt = z.out = CK_DTYPE_BF16;
    return z;
}

static void to_problem(const ccase *z, ck_conv_problem *p)
{
    ck_conv_problem_init(p);
    p->direction = z->dir;
    p->ndim = z->ndim;
    p->n = z->n, p->g = z->g, p->c = (int64_t)z->g * z->c, p->k = (int64_t)z->g * z->k;
    for (int d = 0; d < z->ndim; ++d) {
        p->in[d] = z->in[d], p->filter[d] = z->fil[d], p->stride[d] = z->str[d];
        p->dilation[d] = z->dil[d], p->pad_left[d] = z->pl[d], p->pad_right[d] = z->pr[d];
    }
    p->in_dtype = p->wei_dtype = z->dt;
    p->out_dtype = z->dir == CK_CONV_FWD ? z->out : z->dt;
    p->bias = z->bias, p->residual = z->residual, p->activation = z->act;
    p->bias_dtype = p->residual_dtype = CK_DTYPE_F32;
}

/* Run one case on the device and compare every element of the written tensor. */
static void run_case(const char *what, const ccase *z)
{
    ck_conv_problem p;
    to_problem(z, &p);
    int64_t nx, nw, ny;
    ck_status st = ck_conv_tensor_elements(&p, &nx, &nw, &ny);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", what, ck_last_error());
    if (st)
        return;
    ck_conv_plan *plan = NULL;
    st = ck_conv_plan_create_ex(g_ctx, &p, 1, &plan); /* the smallest tile: quick to compile */
    CHECK_MSG(st == CK_SUCCESS, "%s: plan: %s", what, ck_last_error());
    if (st)
        return;
    int ei = es_of(p.in_dtype), eo = es_of(p.out_dtype);
    size_t sx = (size_t)nx * ei, sw = (size_t)nw * ei, sy = (size_t)ny * eo, sb = (size_t)p.k * 4;
    void *hx = malloc(sx), *hw = malloc(sw), *hy = malloc(sy), *hb = malloc(sb),
         *hr = malloc((size_t)ny * 4);
    fill(hx, p.in_dtype, nx);
    fill(hw, p.wei_dtype, nw);
    fill(hy, p.out_dtype, ny);
    fill(hb, CK_DTYPE_F32, p.k);
    fill(hr, CK_DTYPE_F32, ny);
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
    a.x = dx, a.w = dw, a.y = dy, a.bias = db, a.residual = dr;
    st = ck_conv_plan_execute(plan, &a);
    CHECK_MSG(st == CK_SUCCESS, "%s: execute: %s", what, ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    /* the written tensor and its type */
    int fwd = p.direction == CK_CONV_FWD, bww = p.direction == CK_CONV_BWD_WEIGHT;
    void *out = fwd ? hy : bww ? hw : hx, *dout = fwd ? dy : bww ? dw : dx;
    ck_dtype ot = fwd ? p.out_dtype : p.in_dtype;
    int64_t no = fwd ? ny : bww ? nw : nx;
    void *got = malloc((size_t)no * es_of(ot));
    CHECK_OK(ck_memcpy_d2h(dev, got, dout, (size_t)no * es_of(ot), NULL));
    ck_conv_args h;
    ck_conv_args_init(&h);
    h.x = hx, h.w = hw, h.y = hy, h.bias = hb, h.residual = hr;
    (void)out;
    int64_t bad = 0;
    for (int64_t e = 0; e < no; ++e) {
        double mag = 0, ref = act(p.activation, ck_conv_reference_value(&p, &h, e, &mag));
        double tol = 2 * unit(ot) * fabs(ref) + 1e-6 + mag * 0x1p-18 +
                     (p.in_dtype == CK_DTYPE_F32 ? mag * 0x1p-10 : 0);
        double v = get(got, ot, e);
        if (!(fabs(v - ref) <= tol)) {
            if (bad++ < 3)
                CHECK_MSG(0, "%s: element %lld: got %.8g, reference %.8g (tol %.3g)", what,
                          (long long)e, v, ref, tol);
        }
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements wrong", what, (long long)bad, (long long)no);
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

static ccase base1(ck_conv_direction dir, int n, int g, int c, int k, int w, int x)
{
    ccase z = base2(dir, n, g, c, k, w, 1, x, 1);
    z.ndim = 1;
    z.in[1] = z.fil[1] = 0;
    return z;
}

static ccase base3(ck_conv_direction dir, int n, int g, int c, int k, int d, int h, int w, int f)
{
    ccase z = base2(dir, n, g, c, k, d, h, f, f);
    z.ndim = 3;
    z.in[2] = w, z.fil[2] = f;
    return z;
}

static void pad(ccase *z, int d, int l, int r)
{
    z->pl[d] = l, z->pr[d] = r;
}

/* Forward and backward weight share the cases: the shapes below run in both directions. */
static void shapes(ck_conv_direction dir)
{
    const char *t = dir == CK_CONV_FWD        ? "fwd"
                    : dir == CK_CONV_BWD_DATA ? "bwd-data"
                                              : "bwd-weight";
    char what[160];
    ccase z;
    /* 2-D 3x3, pad 1, 7x7 (odd), c 8 -> k 16 */
    z = base2(dir, 2, 1, 8, 16, 7, 7, 3, 3);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    snprintf(what, sizeof what, "%s 2-D 3x3 pad 1 7x7", t);
    run_case(what, &z);
    /* stride 2, asymmetric padding, 13x13, 5x5 filter, 2 groups */
    z = base2(dir, 1, 2, 8, 8, 13, 13, 5, 5);
    z.str[0] = z.str[1] = 2;
    pad(&z, 0, 2, 1), pad(&z, 1, 0, 3);
    snprintf(what, sizeof what, "%s 2-D 5x5 stride 2 pad (2,1)x(0,3) g2 13x13", t);
    run_case(what, &z);
    /* dilation 2, 7x7 filter on 13x13, pad 3 left only, stride (1, 3) */
    z = base2(dir, 1, 1, 8, 8, 13, 13, 7, 7);
    z.dil[0] = z.dil[1] = 2;
    z.str[1] = 3;
    pad(&z, 0, 3, 0), pad(&z, 1, 6, 2);
    snprintf(what, sizeof what, "%s 2-D 7x7 dilation 2 stride (1,3) 13x13", t);
    run_case(what, &z);
    /* depthwise 3x3 (g = 16, c = k = 1): scalar copies */
    z = base2(dir, 2, 16, 1, 1, 7, 7, 3, 3);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    snprintf(what, sizeof what, "%s 2-D depthwise 3x3 g16", t);
    run_case(what, &z);
    /* 1-D: width 13, filter 5, stride 2, dilation 2, pad (3, 2), c 4 (8-byte runs), g 2, f16 */
    z = base1(dir, 2, 2, 4, 8, 13, 5);
    z.dt = z.out = CK_DTYPE_F16;
    z.str[0] = 2, z.dil[0] = 2;
    pad(&z, 0, 3, 2);
    snprintf(what, sizeof what, "%s 1-D 5 stride 2 dilation 2 g2", t);
    run_case(what, &z);
    /* 3-D: 5x7x7 with a 3x3x3 filter, pad (1,1) (0,1) (1,0), stride (1,2,1), f32 (TF32) */
    z = base3(dir, 1, 1, 8, 8, 5, 7, 7, 3);
    z.str[1] = 2;
    pad(&z, 0, 1, 1), pad(&z, 1, 0, 1), pad(&z, 2, 1, 0);
    z.dt = z.out = CK_DTYPE_F32;
    snprintf(what, sizeof what, "%s 3-D 3x3x3 f32", t);
    run_case(what, &z);
    /* 3-D of depth 1 with a 1x1x3 filter (spatial size 1, filter 1), c 24 -> k 8 (3 runs) */
    z = base3(dir, 3, 1, 24, 8, 1, 1, 7, 1);
    z.fil[2] = 3;
    pad(&z, 2, 2, 0);
    snprintf(what, sizeof what, "%s 3-D 1x1x3 on 1x1x7", t);
    run_case(what, &z);
    /* odd channel counts: c 3 (an RGB stem), k 5, 7x7 stride (2, 1) on 13x13 */
    z = base2(dir, 1, 1, 3, 5, 13, 13, 7, 7);
    z.str[0] = 2;
    pad(&z, 0, 3, 3), pad(&z, 1, 3, 3);
    snprintf(what, sizeof what, "%s 2-D 7x7 c3 stem", t);
    run_case(what, &z);
}

static void test_fwd_shapes(void)
{
    shapes(CK_CONV_FWD);
}

static void test_bwd_weight_shapes(void)
{
    shapes(CK_CONV_BWD_WEIGHT);
}

/* The GEMM's epilogue: bias per output channel, residual, activation, output cast. */
static void test_bwd_data_shapes(void)
{
    shapes(CK_CONV_BWD_DATA);
}

static void test_fwd_epilogue(void)
{
    ccase z = base2(CK_CONV_FWD, 2, 2, 8, 8, 7, 7, 3, 3);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    z.bias = 1, z.residual = 1, z.act = CK_GEMM_ACT_RELU;
    run_case("fwd bias + residual + relu, bf16 out", &z);
    z.out = CK_DTYPE_F32, z.act = CK_GEMM_ACT_SILU;
    run_case("fwd bias + residual + silu, f32 out", &z);
}

/* Reference 7.15.4-7.15.5: a 6x6 image, 3x3 windows: the windows descriptor (4,4,3,3) with
 * strides (6,1,6,1) merged into the 16 x 9 im2col matrix. ck's im2col descriptor of that
 * convolution (n 1, c 1, no padding) must have those lengths and give every (window, patch)
 * element the same offset; and 7.15.7's multi-channel form (CIn 3: strides (W*CIn, CIn,
 * W*CIn, CIn, 1) over [OutH, OutW, K, K, CIn]) likewise. */
static void test_im2col_worked_example(void)
{
    for (int cin = 1; cin <= 3; cin += 2) {
        ck_conv_problem p;
        ck_conv_problem_init(&p);
        p.c = cin;
        p.in[0] = p.in[1] = 6;
        p.filter[0] = p.filter[1] = 3;
        ck_descriptor *d = NULL;
        CHECK_OK(ck_conv_im2col_descriptor(&p, &d));
        if (!d)
            return;
        CHECK_EQ_INT(ck_descriptor_ndim(d), 2);
        CHECK_EQ_INT(ck_descriptor_length(d, 0).v, 16);
        CHECK_EQ_INT(ck_descriptor_length(d, 1).v, 9 * cin);
        int bad = 0;
        for (int64_t m = 0; m < 16; ++m)
            for (int64_t k = 0; k < 9 * cin; ++k) {
                int64_t idx[2] = {m, k}, off = -1, c = k % cin, patch = k / cin;
                int valid = 0;
                CHECK_OK(ck_descriptor_calculate_offset(d, idx, &off));
                CHECK_OK(ck_descriptor_is_valid_index(d, idx, &valid));
                /* windows descriptor: shape (4,4,3,3[,CIn]), strides (W,1,W,1)*CIn (+1 for c) */
                int64_t want = ((m / 4) * 6 + (m % 4) + (patch / 3) * 6 + (patch % 3)) * cin + c;
                bad += off != want || !valid;
            }
        CHECK_MSG(bad == 0, "CIn %d: %d im2col offsets differ from the worked example", cin, bad);
        ck_descriptor_destroy(d);
    }
}

/* Padding appears in the descriptor as validity: the padded border reads as invalid (zero). */
static void test_im2col_padding_validity(void)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.in[0] = p.in[1] = 4;
    p.filter[0] = p.filter[1] = 3;
    p.pad_left[0] = p.pad_left[1] = 1;
    p.pad_right[0] = p.pad_right[1] = 1;
    ck_descriptor *d = NULL;
    CHECK_OK(ck_conv_im2col_descriptor(&p, &d));
    if (!d)
        return;
    int bad = 0;
    for (int64_t m = 0; m < 16; ++m)
        for (int64_t k = 0; k < 9; ++k) {
            int64_t idx[2] = {m, k}, off = -1;
            int valid = 0;
            int64_t hi = m / 4 + k / 3 - 1, wi = m % 4 + k % 3 - 1;
            int inside = hi >= 0 && hi < 4 && wi >= 0 && wi < 4;
            CHECK_OK(ck_descriptor_is_valid_index(d, idx, &valid));
            if (inside)
                CHECK_OK(ck_descriptor_calculate_offset(d, idx, &off));
            bad += valid != inside || (inside && off != hi * 4 + wi);
        }
    CHECK_MSG(bad == 0, "%d padded im2col elements wrong", bad);
    ck_descriptor_destroy(d);
}

static void expect_refused(const char *what, const ck_conv_problem *p, ck_status want,
                           const char *phrase)
{
    ck_conv_plan *plan = NULL;
    ck_status st = ck_conv_plan_create(g_ctx, p, &plan);
    CHECK_MSG(st == want, "%s: status %d, expected %d", what, (int)st, (int)want);
    CHECK_MSG(strstr(ck_last_error(), phrase) != NULL, "%s: message \"%s\" lacks \"%s\"", what,
              ck_last_error(), phrase);
    CHECK(plan == NULL);
    ck_conv_plan_destroy(plan);
}

static void test_bad_input(void)
{
    ck_conv_problem p0, p;
    ck_conv_problem_init(&p0); /* the first forward shape: one kernel for both tests */
    p0.n = 2;
    p0.c = 8, p0.k = 16;
    p0.in[0] = p0.in[1] = 7;
    p0.filter[0] = p0.filter[1] = 3;
    p0.pad_left[0] = p0.pad_left[1] = p0.pad_right[0] = p0.pad_right[1] = 1;
    p = p0, p.out[0] = 6;
    expect_refused("output size mismatch", &p, CK_ERROR_INVALID_ARGUMENT, "does not match");
    p = p0, p.stride[1] = 0;
    expect_refused("zero stride", &p, CK_ERROR_INVALID_ARGUMENT, "stride[1]");
    p = p0, p.stride[0] = -2;
    expect_refused("negative stride", &p, CK_ERROR_INVALID_ARGUMENT, "stride[0]");
    p = p0, p.dilation[0] = 0;
    expect_refused("zero dilation", &p, CK_ERROR_INVALID_ARGUMENT, "dilation[0]");
    p = p0, p.g = 3;
    expect_refused("channels not divisible by groups", &p, CK_ERROR_INVALID_ARGUMENT,
                   "divisible by the groups");
    p = p0, p.pad_left[0] = 3;
    expect_refused("padding beyond the filter", &p, CK_ERROR_INVALID_ARGUMENT, "extent");
    p = p0, p.pad_right[1] = -1;
    expect_refused("negative padding", &p, CK_ERROR_INVALID_ARGUMENT, ">= 0");
    p = p0, p.filter[0] = 11;
    expect_refused("filter longer than the input", &p, CK_ERROR_INVALID_ARGUMENT, "longer");
    p = p0, p.ndim = 4;
    expect_refused("4 spatial dims", &p, CK_ERROR_INVALID_ARGUMENT, "ndim");
    p = p0, p.in_dtype = CK_DTYPE_I8, p.wei_dtype = CK_DTYPE_FP8_E4M3;
    expect_refused("int8 x fp8", &p, CK_ERROR_UNSUPPORTED, "both fp8");
    p = p0, p.direction = CK_CONV_BWD_WEIGHT, p.bias = 1;
    expect_refused("bias in backward", &p, CK_ERROR_UNSUPPORTED, "forward epilogues");
    /* execute: NULL and misaligned pointers */
    ck_conv_plan *plan = NULL;
    CHECK_OK(ck_conv_plan_create_ex(g_ctx, &p0, 1, &plan));
    if (plan) {
        ck_conv_args a;
        ck_conv_args_init(&a);
        CHECK_STATUS(ck_conv_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "must not be NULL") != NULL);
        ck_conv_plan_destroy(plan);
    }
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_im2col_worked_example);
    RUN_TEST(test_im2col_padding_validity);
    RUN_TEST(test_bad_input);
    RUN_TEST(test_fwd_shapes);
    RUN_TEST(test_bwd_weight_shapes);
    RUN_TEST(test_bwd_data_shapes);
    RUN_TEST(test_fwd_epilogue);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
