/* 8-bit convolution (ck/conv.h): fp8 e4m3 / e5m2 (with per-tensor scales) and int8 inputs in
 * the three directions on the device CK_DEVICE chooses (the emulator in CI): forward on the sm80
 * route (every 8-bit pair), on the sm90 route (fp8, wgmma) and as a plain GEMM (1x1), backward
 * data (stride 1 and strided residue classes) and backward weight on the sm80 route (8-bit
 * operands read N-major: mma.sync's gathered fragments). Every element of random inputs against
 * the direct f64 reference over the decoded codes (ck_conv_reference_value, scaled and cast by
 * the test); i32 outputs must be exact. Shapes: 1-D/2-D/3-D, groups, strides, dilations,
 * asymmetric padding, odd sizes and C = 3 (element-wise copies). Also the policy's reasons
 * (sm90 refuses the 8-bit backward directions and i8, the direct depthwise kernel refuses 8-bit
 * types), the NCHW front end with fp8, and the refusals of bad types and scales. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/conv.h"
#include "ops/common/op_common.h"
#include "ops/conv/conv_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x8b17c0a7e5ull;

static int es_of(ck_dtype t)
{
    return ck_dtype_get(t)->storage_bits / 8;
}

static double urand(void)
{
    return (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* fp8 and float types: uniform in [-2, 2] rounded to the type; i8: every code, -128 .. 127 */
static void fill(void *p, ck_dtype t, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        uint64_t code = 0;
        if (t == CK_DTYPE_I8)
            code = (uint64_t)(ckt_rand64(&g_rng) >> 56);
        else
            ck_convert_from_f64(t, urand() * 4 - 2, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0,
                                &code);
        memcpy((char *)p + i * es_of(t), &code, (size_t)es_of(t));
    }
}

static double get(const void *p, ck_dtype t, int64_t i)
{
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * es_of(t), (size_t)es_of(t));
    if (t == CK_DTYPE_I32) /* sign of the 32-bit code */
        return (double)(int32_t)(uint32_t)code;
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

typedef struct qcase {
    ck_conv_direction dir;
    int ndim, n, g, c, k;
    int in[3], fil[3], str[3], dil[3], pl[3], pr[3];
    ck_dtype a, b, out; /* the two read tensors (the GEMM's A and B) and the written one */
    int bias, residual;
    ck_gemm_activation act;
    float sa, sb, so; /* scales of A's, B's and the written tensor */
    int pick;         /* CK_CONV_PICK_* */
    ck_conv_layout layout;
} qcase;

static qcase base(ck_conv_direction dir, int ndim, int n, int g, int c, int k, int len, int fil,
                  ck_dtype a, ck_dtype b, ck_dtype out)
{
    qcase z;
    memset(&z, 0, sizeof z);
    z.dir = dir, z.ndim = ndim, z.n = n, z.g = g, z.c = c, z.k = k;
    for (int d = 0; d < 3; ++d)
        z.in[d] = len, z.fil[d] = fil, z.str[d] = z.dil[d] = 1;
    z.a = a, z.b = b, z.out = out;
    z.sa = z.sb = z.so = 1;
    z.pick = CK_CONV_PICK_SM80_SMALLEST;
    return z;
}

static void to_problem(const qcase *z, ck_conv_problem *p)
{
    ck_conv_problem_init(p);
    p->direction = z->dir;
    p->ndim = z->ndim;
    p->n = z->n, p->g = z->g, p->c = (int64_t)z->g * z->c, p->k = (int64_t)z->g * z->k;
    for (int d = 0; d < z->ndim; ++d) {
        p->in[d] = z->in[d], p->filter[d] = z->fil[d], p->stride[d] = z->str[d];
        p->dilation[d] = z->dil[d], p->pad_left[d] = z->pl[d], p->pad_right[d] = z->pr[d];
    }
    /* the direction's read tensors are A and B, its written one `out` */
    if (z->dir == CK_CONV_FWD)
        p->in_dtype = z->a, p->wei_dtype = z->b, p->out_dtype = z->out;
    else if (z->dir == CK_CONV_BWD_DATA)
        p->out_dtype = z->a, p->wei_dtype = z->b, p->in_dtype = z->out;
    else
        p->out_dtype = z->a, p->in_dtype = z->b, p->wei_dtype = z->out;
    p->bias = z->bias, p->residual = z->residual, p->activation = z->act;
    p->bias_dtype = p->residual_dtype = CK_DTYPE_F32;
    p->layout = z->layout;
}

static double act(ck_gemm_activation a, double x)
{
    return a == CK_GEMM_ACT_RELU ? (x > 0 ? x : 0) : x;
}

/* Run one case on the device and compare every element of the written tensor. Returns the
 * plan's route (or -1). */
static int run_case(const char *what, const qcase *z)
{
    ck_conv_problem p;
    to_problem(z, &p);
    int64_t cnt[3];
    ck_status st = ck_conv_tensor_elements(&p, &cnt[0], &cnt[1], &cnt[2]);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", what, ck_last_error());
    if (st)
        return -1;
    ck_conv_plan *plan = NULL;
    st = ck_conv_plan_create_ex(g_ctx, &p, z->pick, &plan);
    CHECK_MSG(st == CK_SUCCESS, "%s: plan: %s", what, ck_last_error());
    if (st)
        return -1;
    int route = (int)ck_conv_plan_route(plan);
    /* the implicit GEMM's K: C / G x the filter's taps */
    int64_t kdepth = p.c / p.g;
    for (int d = 0; d < p.ndim; ++d)
        kdepth *= p.filter[d];
    ck_dtype ty[3] = {p.in_dtype, p.wei_dtype, p.out_dtype};
    ck_device *dev = ck_context_device(g_ctx);
    void *h[5] = {0}, *d[5] = {0};
    size_t sz[5];
    for (int i = 0; i < 3; ++i) {
        sz[i] = (size_t)cnt[i] * (size_t)es_of(ty[i]);
        h[i] = malloc(sz[i]);
        fill(h[i], ty[i], cnt[i]);
    }
    sz[3] = (size_t)p.k * 4, sz[4] = (size_t)cnt[2] * 4;
    h[3] = malloc(sz[3]), h[4] = malloc(sz[4]);
    fill(h[3], CK_DTYPE_F32, p.k);
    fill(h[4], CK_DTYPE_F32, cnt[2]);
    for (int i = 0; i < 5; ++i) {
        CHECK_OK(ck_malloc(dev, sz[i], &d[i]));
        CHECK_OK(ck_memcpy_h2d(dev, d[i], h[i], sz[i], NULL));
    }
    /* the scales: A's and B's are the read tensors', `so` the written one's */
    float s3[3] = {1, 1, 1}; /* x, w, y */
    int ia = z->dir == CK_CONV_FWD ? 0 : 2, ib = z->dir == CK_CONV_BWD_WEIGHT ? 0 : 1,
        io = z->dir == CK_CONV_FWD        ? 2
             : z->dir == CK_CONV_BWD_DATA ? 0
                                          : 1;
    s3[ia] = z->sa, s3[ib] = z->sb, s3[io] = z->so;
    ck_conv_args a;
    ck_conv_args_init(&a);
    a.x = d[0], a.w = d[1], a.y = d[2];
    a.bias = p.bias ? d[3] : NULL, a.residual = p.residual ? d[4] : NULL;
    a.scale_x = s3[0], a.scale_w = s3[1], a.scale_y = s3[2];
    a.alpha = 0.75f;
    st = ck_conv_plan_execute(plan, &a);
    CHECK_MSG(st == CK_SUCCESS, "%s: execute: %s", what, ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    ck_dtype ot = ty[io];
    void *got = malloc(sz[io]);
    CHECK_OK(ck_memcpy_d2h(dev, got, d[io], sz[io], NULL));
    ck_conv_args hh = a;
    hh.x = h[0], hh.w = h[1], hh.y = h[2], hh.bias = h[3], hh.residual = h[4];
    /* NCHW: the reference reads CK's layouts; compare through the reference on its own
     * layout-agnostic element order only for NHWGC (the NCHW case checks one fp8 forward
     * whose tensors are laid out by the test below) */
    const ck_dtype_info *oi = ck_dtype_get(ot);
    double unit = oi->is_float ? ldexp(1.0, -oi->mantissa_bits) : 0;
    double floor_abs = oi->is_float && ot != CK_DTYPE_F32 ? oi->min_subnormal : 0;
    int64_t bad = 0;
    for (int64_t e = 0; e < cnt[io]; ++e) {
        double mag = 0, ref = act(p.activation, ck_conv_reference_value(&p, &hh, e, &mag));
        ref /= z->so, mag /= fabs(z->so);
        double lim = oi->max_finite; /* fp8 saturates */
        if (oi->is_float && fabs(ref) > lim)
            ref = ref > 0 ? lim : -lim;
        if (ot == CK_DTYPE_I32) /* exact: the kernel's double, rounded to nearest even */
            ref = nearbyint(ref);
        /* one unit in the last place of the output type, the accumulation's f32 roundings, and
         * on a GPU's fp8 wgmma (the sm90 route) the ~14 bits its running sum keeps within an
         * instruction: one such rounding per 32-deep k-step, as the GEMM's tolerance counts it
         * (the emulator keeps f32; the H200 missed the f32 bound by up to 1.7e-4 here) */
        double tol = ot == CK_DTYPE_I32 ? 0 : unit * fabs(ref) + floor_abs + mag * 0x1p-18;
        if (route == CK_CONV_ROUTE_SM90 && ot != CK_DTYPE_I32)
            tol += ((double)kdepth / 32.0 + 1.0) * 0x1p-13 * mag;
        double v = get(got, ot, e);
        if (!(fabs(v - ref) <= tol) && bad++ < 3)
            CHECK_MSG(0, "%s: element %lld: got %.8g, reference %.8g (tol %.3g)", what,
                      (long long)e, v, ref, tol);
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements wrong", what, (long long)bad,
              (long long)cnt[io]);
    for (int i = 0; i < 5; ++i) {
        ck_free(dev, d[i]);
        free(h[i]);
    }
    free(got);
    ck_conv_plan_destroy(plan);
    return route;
}

static void pad(qcase *z, int d, int l, int r)
{
    z->pl[d] = l, z->pr[d] = r;
}

#define E4 CK_DTYPE_FP8_E4M3
#define E5 CK_DTYPE_FP8_E5M2
#define I8 CK_DTYPE_I8

static void test_forward(void)
{
    /* 2-D 3x3 pad 1 on 7x7, e4m3 -> bf16, scales */
    qcase z = base(CK_CONV_FWD, 2, 2, 1, 16, 16, 7, 3, E4, E4, CK_DTYPE_BF16);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    z.sa = 0.5f, z.sb = 0.25f;
    CHECK_EQ_INT(run_case("fwd e4m3 3x3 -> bf16 (sm80)", &z), CK_CONV_ROUTE_SM80);
    /* the same on the sm90 route (wgmma e4m3, the im2col loader's 16-byte runs) */
    z.pick = CK_CONV_PICK_SM90_SMALLEST;
    CHECK_EQ_INT(run_case("fwd e4m3 3x3 -> bf16 (sm90)", &z), CK_CONV_ROUTE_SM90);
    /* 5x5 stride 2, asymmetric padding, 2 groups on 13x13, e5m2 x e4m3 -> e4m3 (scale_y),
     * bias + relu */
    z = base(CK_CONV_FWD, 2, 1, 2, 16, 8, 13, 5, E5, E4, E4);
    z.str[0] = z.str[1] = 2;
    pad(&z, 0, 2, 1), pad(&z, 1, 0, 3);
    z.bias = 1, z.act = CK_GEMM_ACT_RELU, z.sb = 0.5f, z.so = 4.0f;
    run_case("fwd e5m2 x e4m3 5x5 stride 2 g2 -> e4m3, bias + relu", &z);
    z.pick = CK_CONV_PICK_SM90_SMALLEST;
    CHECK_EQ_INT(run_case("fwd e5m2 x e4m3 5x5 stride 2 g2 -> e4m3 (sm90)", &z),
                 CK_CONV_ROUTE_SM90);
    /* 1-D filter 5, stride 2, dilation 2, g 2, i8 -> i32 (exact) */
    z = base(CK_CONV_FWD, 1, 2, 2, 32, 8, 13, 5, I8, I8, CK_DTYPE_I32);
    z.str[0] = 2, z.dil[0] = 2;
    pad(&z, 0, 3, 2);
    run_case("fwd i8 1-D 5 stride 2 dilation 2 g2 -> i32", &z);
    /* 3-D 3x3x3 stride (1,2,1), i8 -> f32 with scales and a residual */
    z = base(CK_CONV_FWD, 3, 1, 1, 16, 8, 5, 3, I8, I8, CK_DTYPE_F32);
    z.in[1] = 7, z.in[2] = 6;
    z.str[1] = 2;
    pad(&z, 0, 1, 1), pad(&z, 1, 0, 1), pad(&z, 2, 1, 0);
    z.residual = 1, z.sa = 0.01f, z.sb = 0.02f;
    run_case("fwd i8 3-D 3x3x3 -> f32, residual", &z);
    /* an RGB stem: C = 3 (element-wise copies), 7x7 stride (2, 1) on 13x13, e4m3 -> f16 */
    z = base(CK_CONV_FWD, 2, 1, 1, 3, 5, 13, 7, E4, E4, CK_DTYPE_F16);
    z.str[0] = 2;
    pad(&z, 0, 3, 3), pad(&z, 1, 3, 3);
    run_case("fwd e4m3 7x7 c3 stem -> f16", &z);
    /* 1x1 stride 1: a plain GEMM (the GEMM's own policy and kernel), fp8 and i8 */
    z = base(CK_CONV_FWD, 2, 2, 2, 32, 16, 5, 1, E4, E5, CK_DTYPE_BF16);
    z.pick = CK_CONV_PICK_POLICY;
    CHECK_EQ_INT(run_case("fwd e4m3 x e5m2 1x1 -> bf16 (plain GEMM)", &z), CK_CONV_ROUTE_GEMM);
    z.a = z.b = I8, z.out = CK_DTYPE_I32;
    CHECK_EQ_INT(run_case("fwd i8 1x1 -> i32 (plain GEMM)", &z), CK_CONV_ROUTE_GEMM);
}

static void test_backward_data(void)
{
    /* stride 1: one class; e4m3 dY x W -> f32 dX */
    qcase z = base(CK_CONV_BWD_DATA, 2, 2, 1, 16, 16, 7, 3, E4, E4, CK_DTYPE_F32);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    z.sa = 0.5f, z.sb = 2.0f;
    run_case("bwd-data e4m3 3x3 -> f32", &z);
    /* strided: 3x3 stride 2 on 9x7, e5m2 -> e4m3 dX (scale) */
    z = base(CK_CONV_BWD_DATA, 2, 1, 1, 16, 32, 9, 3, E5, E5, E4);
    z.in[1] = 7;
    z.str[0] = z.str[1] = 2;
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 0);
    z.so = 2.0f;
    run_case("bwd-data e5m2 3x3 stride 2 -> e4m3", &z);
    /* 5x5 stride (2, 3) dilation (2, 1), g 2, rows that no tap reaches: i8 -> i32 */
    z = base(CK_CONV_BWD_DATA, 2, 1, 2, 8, 16, 13, 5, I8, I8, CK_DTYPE_I32);
    z.str[0] = 2, z.str[1] = 3, z.dil[0] = 2;
    pad(&z, 0, 3, 2), pad(&z, 1, 2, 1);
    run_case("bwd-data i8 5x5 stride (2,3) dilation (2,1) g2 -> i32", &z);
    /* 1-D filter 3 stride 1 dilation 2 and 3-D: i8 -> bf16 with scales */
    z = base(CK_CONV_BWD_DATA, 1, 2, 2, 16, 8, 11, 3, I8, I8, CK_DTYPE_BF16);
    z.dil[0] = 2;
    pad(&z, 0, 2, 1);
    z.sa = 0.125f, z.sb = 0.0625f;
    run_case("bwd-data i8 1-D dilation 2 g2 -> bf16", &z);
    z = base(CK_CONV_BWD_DATA, 3, 1, 1, 16, 16, 4, 3, E4, E4, CK_DTYPE_BF16);
    z.in[2] = 5;
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1), pad(&z, 2, 0, 1);
    run_case("bwd-data e4m3 3-D 3x3x3 -> bf16", &z);
}

static void test_backward_weight(void)
{
    /* 3x3 pad 1 on 7x7, e4m3 dY x X -> f32 dW */
    qcase z = base(CK_CONV_BWD_WEIGHT, 2, 2, 1, 16, 16, 7, 3, E4, E4, CK_DTYPE_F32);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    z.sa = 0.25f, z.sb = 0.5f;
    run_case("bwd-weight e4m3 3x3 -> f32", &z);
    /* 5x5 stride 2 dilation (1, 2), g 2, odd 13x11: i8 -> i32 */
    z = base(CK_CONV_BWD_WEIGHT, 2, 1, 2, 8, 16, 13, 5, I8, I8, CK_DTYPE_I32);
    z.in[1] = 11;
    z.str[0] = z.str[1] = 2, z.dil[1] = 2;
    pad(&z, 0, 2, 1), pad(&z, 1, 1, 3);
    run_case("bwd-weight i8 5x5 stride 2 dilation (1,2) g2 -> i32", &z);
    /* 3-D 3x3x3 stride (1,2,1): e5m2 x e4m3 -> e4m3 dW (scale) */
    z = base(CK_CONV_BWD_WEIGHT, 3, 1, 1, 16, 16, 5, 3, E5, E4, E4);
    z.str[1] = 2;
    pad(&z, 0, 1, 1), pad(&z, 1, 0, 1), pad(&z, 2, 1, 0);
    z.so = 8.0f;
    run_case("bwd-weight e5m2 x e4m3 3-D -> e4m3", &z);
    /* 1-D filter 7, g 2, i8 -> f16 */
    z = base(CK_CONV_BWD_WEIGHT, 1, 3, 2, 16, 8, 13, 7, I8, I8, CK_DTYPE_F16);
    pad(&z, 0, 3, 3);
    z.sa = z.sb = 1.0f / 64;
    run_case("bwd-weight i8 1-D 7 g2 -> f16", &z);
}

/* The policy: the direct depthwise kernel and the sm90 route refuse what they cannot run, each
 * with its reason, and the implicit GEMM on sm80 takes it (checked on every element). */
static void test_policy(void)
{
    qcase z = base(CK_CONV_FWD, 2, 1, 16, 1, 1, 7, 3, E4, E4, CK_DTYPE_BF16);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    z.pick = CK_CONV_PICK_POLICY;
    CHECK_EQ_INT(run_case("fwd e4m3 depthwise g16 (implicit GEMM)", &z), CK_CONV_ROUTE_SM80);
    ck_conv_problem p;
    ck_conv_prob q;
    ck_conv_class cls;
    ck_gemm_prob loader, plain;
    ck_conv_choice ch;
    char why[384];
    to_problem(&z, &p);
    CHECK_OK(ck_conv_prob_make(&p, &q));
    CHECK(ck_conv_dw_refuses(&q, why, sizeof why));
    CHECK_MSG(strstr(why, "8-bit") != NULL, "depthwise reason: %s", why);
    const ck_device_props *props = ck_op_props(g_ctx);
    struct {
        qcase z;
        const char *phrase;
    } cases[] = {
        {base(CK_CONV_BWD_DATA, 2, 1, 1, 16, 16, 7, 3, E4, E4, CK_DTYPE_F32), "N-major"},
        {base(CK_CONV_BWD_WEIGHT, 2, 1, 1, 16, 16, 7, 3, E4, E4, CK_DTYPE_F32), "N-major"},
        {base(CK_CONV_FWD, 2, 1, 1, 16, 16, 7, 3, I8, I8, CK_DTYPE_I32), "no i8"},
        {base(CK_CONV_FWD, 2, 1, 1, 24, 16, 7, 3, E4, E4, CK_DTYPE_F32), "16-byte runs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        to_problem(&cases[i].z, &p);
        CHECK_OK(ck_conv_prob_make(&p, &q));
        memset(&cls, 0, sizeof cls);
        if (p.direction == CK_CONV_BWD_DATA)
            ck_conv_classes(&q, &cls, 1);
        CHECK_OK(ck_conv_gemm_probs(&q, &cls, &loader, &plain));
        CHECK_OK(ck_conv_policy_choose(&q, &cls, &loader, NULL, props, CK_CONV_PICK_POLICY, &ch));
        CHECK_EQ_INT((int)ch.route, CK_CONV_ROUTE_SM80);
        CHECK_MSG(strstr(ch.why, cases[i].phrase) != NULL, "case %zu: reason \"%s\" lacks \"%s\"",
                  i, ch.why, cases[i].phrase);
    }
    /* fp8 needs sm_89: a plan for an sm_80 device refuses with the GEMM's sentence */
    ck_device_props a100 = *props;
    a100.backend = CK_BACKEND_CUDA;
    a100.cc_major = 8, a100.cc_minor = 0;
    snprintf(a100.target, sizeof a100.target, "sm_80");
    to_problem(&cases[0].z, &p);
    char *src = NULL;
    CHECK_STATUS(ck_conv_source(&p, &a100, CK_CONV_PICK_POLICY, &src), CK_ERROR_UNSUPPORTED);
    CHECK_MSG(strstr(ck_last_error(), "8.9") != NULL, "sm_80: %s", ck_last_error());
    free(src);
}

/* NCHW: X N C H W, W K C/G Y X, Y N K H W in e4m3, through the permute op. The test lays out
 * channels-last copies itself and compares the permuted output with the reference's. */
static void test_nchw(void)
{
    qcase z = base(CK_CONV_FWD, 2, 2, 1, 16, 16, 5, 3, E4, E4, CK_DTYPE_BF16);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    z.layout = CK_CONV_LAYOUT_NCHW;
    ck_conv_problem p;
    to_problem(&z, &p);
    int64_t nx, nw, ny;
    CHECK_OK(ck_conv_tensor_elements(&p, &nx, &nw, &ny));
    ck_conv_plan *plan = NULL;
    CHECK_OK(ck_conv_plan_create_ex(g_ctx, &p, CK_CONV_PICK_SM80_SMALLEST, &plan));
    if (!plan)
        return;
    const int N = 2, C = 16, K = 16, H = 5, W = 5, F = 3;
    unsigned char *xn = malloc((size_t)nx), *xc = malloc((size_t)nx), *wn = malloc((size_t)nw),
                  *wc = malloc((size_t)nw);
    uint16_t *yn = malloc((size_t)ny * 2), *yc = malloc((size_t)ny * 2);
    fill(xn, E4, nx);
    fill(wn, E4, nw);
    for (int n = 0; n < N; ++n) /* N C H W -> N H W C */
        for (int c = 0; c < C; ++c)
            for (int s = 0; s < H * W; ++s)
                xc[(n * H * W + s) * C + c] = xn[(n * C + c) * H * W + s];
    for (int k = 0; k < K; ++k) /* K C Y X -> K Y X C */
        for (int c = 0; c < C; ++c)
            for (int s = 0; s < F * F; ++s)
                wc[(k * F * F + s) * C + c] = wn[(k * C + c) * F * F + s];
    ck_device *dev = ck_context_device(g_ctx);
    void *dx, *dw, *dy;
    CHECK_OK(ck_malloc(dev, (size_t)nx, &dx));
    CHECK_OK(ck_malloc(dev, (size_t)nw, &dw));
    CHECK_OK(ck_malloc(dev, (size_t)ny * 2, &dy));
    CHECK_OK(ck_memcpy_h2d(dev, dx, xn, (size_t)nx, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dw, wn, (size_t)nw, NULL));
    ck_conv_args a;
    ck_conv_args_init(&a);
    a.x = dx, a.w = dw, a.y = dy, a.scale_x = 0.5f, a.scale_w = 1.5f;
    CHECK_OK(ck_conv_plan_execute(plan, &a));
    CHECK_OK(ck_context_synchronize(g_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, yn, dy, (size_t)ny * 2, NULL));
    ck_conv_args h = a;
    h.x = xc, h.w = wc, h.y = yc;
    int bad = 0;
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
            for (int s = 0; s < H * W; ++s) {
                double mag = 0,
                       ref = ck_conv_reference_value(&p, &h, (n * H * W + s) * K + k, &mag);
                double v = get(yn, CK_DTYPE_BF16, (n * K + k) * H * W + s);
                bad += !(fabs(v - ref) <= 2 * 0x1p-8 * fabs(ref) + mag * 0x1p-18);
            }
    CHECK_MSG(bad == 0, "NCHW e4m3: %d elements wrong", bad);
    ck_free(dev, dx), ck_free(dev, dw), ck_free(dev, dy);
    free(xn), free(xc), free(wn), free(wc), free(yn), free(yc);
    ck_conv_plan_destroy(plan);
}

static void expect_refused(const char *what, const ck_conv_problem *p, ck_status want,
                           const char *phrase)
{
    ck_conv_plan *plan = NULL;
    ck_status st = ck_conv_plan_create(g_ctx, p, &plan);
    CHECK_MSG(st == want, "%s: status %d, expected %d", what, (int)st, (int)want);
    const char *msg = ck_last_error();
    CHECK_MSG(strstr(msg, phrase) != NULL, "%s: message \"%s\" lacks \"%s\"", what, msg, phrase);
    CHECK_MSG(msg[0] && msg[strlen(msg) - 1] == '.', "%s: not a sentence: %s", what, msg);
    CHECK(plan == NULL);
}

static void test_bad_input(void)
{
    qcase z = base(CK_CONV_FWD, 2, 2, 1, 16, 16, 7, 3, E4, E4, CK_DTYPE_BF16);
    pad(&z, 0, 1, 1), pad(&z, 1, 1, 1);
    ck_conv_problem p0, p;
    to_problem(&z, &p0);
    p = p0, p.wei_dtype = CK_DTYPE_I8;
    expect_refused("e4m3 x i8", &p, CK_ERROR_UNSUPPORTED, "both fp8");
    p = p0, p.wei_dtype = CK_DTYPE_BF16;
    expect_refused("e4m3 x bf16", &p, CK_ERROR_UNSUPPORTED, "both fp8");
    p = p0, p.out_dtype = CK_DTYPE_I32;
    expect_refused("e4m3 -> i32", &p, CK_ERROR_UNSUPPORTED, "written tensor");
    p = p0, p.out_dtype = CK_DTYPE_I8;
    expect_refused("e4m3 -> i8", &p, CK_ERROR_UNSUPPORTED, "written tensor");
    p = p0, p.compute = CK_GEMM_COMPUTE_F32;
    expect_refused("e4m3 with compute f32", &p, CK_ERROR_INVALID_ARGUMENT, "compute");
    p = p0, p.direction = CK_CONV_BWD_DATA, p.out_dtype = CK_DTYPE_I8; /* dY i8, W e4m3 */
    expect_refused("bwd-data i8 x e4m3", &p, CK_ERROR_UNSUPPORTED, "dY (out_dtype)");
    p = p0, p.in_dtype = p.wei_dtype = CK_DTYPE_BF16, p.out_dtype = CK_DTYPE_FP8_E4M3;
    expect_refused("bf16 -> e4m3", &p, CK_ERROR_UNSUPPORTED, "out_dtype");
    /* execute: scales */
    ck_conv_plan *plan = NULL;
    CHECK_OK(ck_conv_plan_create_ex(g_ctx, &p0, CK_CONV_PICK_SM80_SMALLEST, &plan));
    p = p0, p.in_dtype = p.wei_dtype = CK_DTYPE_BF16;
    ck_conv_plan *plan16 = NULL;
    CHECK_OK(ck_conv_plan_create_ex(g_ctx, &p, CK_CONV_PICK_SM80_SMALLEST, &plan16));
    if (plan && plan16) {
        ck_device *dev = ck_context_device(g_ctx);
        void *buf = NULL;
        CHECK_OK(ck_malloc(dev, 1 << 16, &buf));
        ck_conv_args a;
        ck_conv_args_init(&a);
        a.x = a.w = a.y = buf;
        a.scale_w = 0.0f;
        CHECK_STATUS(ck_conv_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "scale_w = 0") != NULL);
        a.scale_w = 1, a.scale_y = NAN;
        CHECK_STATUS(ck_conv_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "scale_y") != NULL);
        a.scale_y = 1, a.scale_x = 2;
        CHECK_STATUS(ck_conv_plan_execute(plan16, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "8-bit inputs") != NULL);
        ck_free(dev, buf);
    }
    ck_conv_plan_destroy(plan);
    ck_conv_plan_destroy(plan16);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_bad_input);
    RUN_TEST(test_policy);
    RUN_TEST(test_forward);
    RUN_TEST(test_backward_data);
    RUN_TEST(test_backward_weight);
    RUN_TEST(test_nchw);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
