/* Convolution with PyTorch's layouts (ck_conv_problem.layout = CK_CONV_LAYOUT_NCHW): X N C S...,
 * W K C/G F... (KCRS), Y N K S..., permuted through ck_permute into and out of the context's
 * workspace. Every element of the written tensor of random inputs is compared with the direct
 * f64 reference, evaluated on copies of the inputs that this test rearranges into CK's layouts
 * with its own index loops: forward (bias, an NCHW residual, relu), backward data (stride 2),
 * backward weight (1-D, groups, dilation), 3-D depthwise; the refusals (bad layout, NULL). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/conv.h"
#include "ops/conv/conv_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x9c4f2a61d3e5b7ull;

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

/* Index in [outer, S..., chan] of element e of [outer, chan, S...] (nd spatial dims). */
static int64_t cl_index(int64_t e, int64_t chan, const int64_t *sp, int nd)
{
    int64_t s = 1;
    for (int d = 0; d < nd; ++d)
        s *= sp[d];
    int64_t pix = e % s, c = (e / s) % chan, o = e / (s * chan);
    return (o * s + pix) * chan + c;
}

/* A copy of NCHW tensor `src` in channels-last order. */
static void *to_cl(const void *src, ck_dtype t, int64_t outer, int64_t chan, const int64_t *sp,
                   int nd)
{
    int64_t n = outer * chan;
    for (int d = 0; d < nd; ++d)
        n *= sp[d];
    int es = es_of(t);
    char *dst = malloc((size_t)n * es);
    for (int64_t e = 0; e < n; ++e)
        memcpy(dst + cl_index(e, chan, sp, nd) * es, (const char *)src + e * es, (size_t)es);
    return dst;
}

typedef struct tcase {
    const char *what;
    ck_conv_direction dir;
    int nd, n, g, c, k; /* c, k: totals */
    int in[3], fil[3], str[3], dil[3], pl[3], pr[3];
    ck_dtype dt;
    int epilogue; /* forward: bias, residual, relu */
} tcase;

static void run(const tcase *z)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.layout = CK_CONV_LAYOUT_NCHW;
    p.direction = z->dir, p.ndim = z->nd, p.n = z->n, p.g = z->g, p.c = z->c, p.k = z->k;
    for (int d = 0; d < z->nd; ++d) {
        p.in[d] = z->in[d], p.filter[d] = z->fil[d];
        p.stride[d] = z->str[d] ? z->str[d] : 1, p.dilation[d] = z->dil[d] ? z->dil[d] : 1;
        p.pad_left[d] = z->pl[d], p.pad_right[d] = z->pr[d];
    }
    p.in_dtype = p.wei_dtype = p.out_dtype = z->dt;
    if (z->epilogue)
        p.bias = p.residual = 1, p.activation = CK_GEMM_ACT_RELU;
    int64_t nx, nw, ny, out[3];
    CHECK_OK(ck_conv_tensor_elements(&p, &nx, &nw, &ny));
    CHECK_OK(ck_conv_output_lengths(&p, out));
    ck_conv_plan *plan = NULL;
    ck_status st = ck_conv_plan_create_ex(g_ctx, &p, 1, &plan);
    CHECK_MSG(st == CK_SUCCESS, "%s: plan: %s", z->what, ck_last_error());
    if (st)
        return;
    int es = es_of(z->dt);
    size_t sx = (size_t)nx * es, sw = (size_t)nw * es, sy = (size_t)ny * es;
    void *hx = malloc(sx), *hw = malloc(sw), *hy = malloc(sy), *hb = malloc((size_t)p.k * 4),
         *hr = malloc((size_t)ny * 4);
    fill(hx, z->dt, nx), fill(hw, z->dt, nw), fill(hy, z->dt, ny);
    fill(hb, CK_DTYPE_F32, p.k), fill(hr, CK_DTYPE_F32, ny);
    ck_device *dev = ck_context_device(g_ctx);
    void *dx, *dw, *dy, *db = NULL, *dr = NULL;
    CHECK_OK(ck_malloc(dev, sx, &dx));
    CHECK_OK(ck_malloc(dev, sw, &dw));
    CHECK_OK(ck_malloc(dev, sy, &dy));
    CHECK_OK(ck_memcpy_h2d(dev, dx, hx, sx, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dw, hw, sw, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dy, hy, sy, NULL));
    if (z->epilogue) {
        CHECK_OK(ck_malloc(dev, (size_t)p.k * 4, &db));
        CHECK_OK(ck_malloc(dev, (size_t)ny * 4, &dr));
        CHECK_OK(ck_memcpy_h2d(dev, db, hb, (size_t)p.k * 4, NULL));
        CHECK_OK(ck_memcpy_h2d(dev, dr, hr, (size_t)ny * 4, NULL));
    }
    ck_conv_args a;
    ck_conv_args_init(&a);
    a.x = dx, a.w = dw, a.y = dy, a.bias = db, a.residual = dr;
    st = ck_conv_plan_execute(plan, &a);
    CHECK_MSG(st == CK_SUCCESS, "%s: execute: %s", z->what, ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    /* the reference on channels-last copies (CK's layouts) */
    int64_t wsp[3] = {z->fil[0], z->fil[1], z->fil[2]};
    ck_conv_args h;
    ck_conv_args_init(&h);
    h.x = to_cl(hx, z->dt, p.n, p.c, p.in, z->nd);
    h.w = to_cl(hw, z->dt, p.k, p.c / p.g, wsp, z->nd);
    h.y = to_cl(hy, z->dt, p.n, p.k, out, z->nd);
    h.bias = hb;
    h.residual = to_cl(hr, CK_DTYPE_F32, p.n, p.k, out, z->nd);
    int fwd = z->dir == CK_CONV_FWD, bww = z->dir == CK_CONV_BWD_WEIGHT;
    int64_t no = fwd ? ny : bww ? nw : nx;
    int64_t chan = fwd ? p.k : bww ? p.c / p.g : p.c;
    const int64_t *sp = fwd ? out : bww ? wsp : p.in;
    void *got = malloc((size_t)no * es);
    CHECK_OK(ck_memcpy_d2h(dev, got, fwd ? dy : bww ? dw : dx, (size_t)no * es, NULL));
    double unit = z->dt == CK_DTYPE_BF16 ? 0x1p-8 : z->dt == CK_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
    int64_t bad = 0;
    for (int64_t e = 0; e < no; ++e) {
        double mag = 0;
        double ref = ck_conv_reference_value(&p, &h, cl_index(e, chan, sp, z->nd), &mag);
        if (z->epilogue)
            ref = ref > 0 ? ref : 0;
        double tol = 2 * unit * fabs(ref) + 1e-6 + mag * 0x1p-18 +
                     (z->dt == CK_DTYPE_F32 ? mag * 0x1p-10 : 0);
        double v = get(got, z->dt, e);
        if (!(fabs(v - ref) <= tol) && bad++ < 3)
            CHECK_MSG(0, "%s: NCHW element %lld: got %.8g, reference %.8g", z->what, (long long)e,
                      v, ref);
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements wrong", z->what, (long long)bad, (long long)no);
    ck_free(dev, dx), ck_free(dev, dw), ck_free(dev, dy);
    if (db)
        ck_free(dev, db), ck_free(dev, dr);
    free((void *)h.x), free((void *)h.w), free((void *)h.y), free((void *)h.residual);
    free(hx), free(hw), free(hy), free(hb), free(hr), free(got);
    ck_conv_plan_destroy(plan);
}

static void test_nchw_directions(void)
{
    tcase f = {"fwd 2-D g2 3x3 stride 2 bias+residual+relu",
               CK_CONV_FWD,
               2,
               2,
               2,
               6,
               8,
               {7, 5},
               {3, 3},
               {2, 1},
               {1, 1},
               {1, 0},
               {1, 2},
               CK_DTYPE_BF16,
               1};
    run(&f);
    tcase d = {"bwd-data 2-D 3x3 stride 2 f16",
               CK_CONV_BWD_DATA,
               2,
               1,
               1,
               8,
               8,
               {7, 7},
               {3, 3},
               {2, 2},
               {1, 1},
               {1, 1},
               {1, 1},
               CK_DTYPE_F16,
               0};
    run(&d);
    tcase w = {"bwd-weight 1-D g2 dilation 2 f32",
               CK_CONV_BWD_WEIGHT,
               1,
               2,
               2,
               8,
               4,
               {13},
               {3},
               {1},
               {2},
               {2},
               {1},
               CK_DTYPE_F32,
               0};
    run(&w);
    tcase t = {"fwd 3-D depthwise 3x3x3",
               CK_CONV_FWD,
               3,
               1,
               4,
               4,
               4,
               {3, 5, 5},
               {3, 3, 3},
               {1, 1, 1},
               {1, 1, 1},
               {1, 1, 1},
               {1, 1, 1},
               CK_DTYPE_BF16,
               0};
    run(&t);
}

static void test_nchw_refusals(void)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.layout = (ck_conv_layout)7;
    int64_t out[3];
    CHECK_STATUS(ck_conv_output_lengths(&p, out), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "layout") != NULL);
    p.layout = CK_CONV_LAYOUT_NCHW;
    p.c = p.k = 8;
    p.in[0] = p.in[1] = 5;
    ck_conv_plan *plan = NULL;
    CHECK_OK(ck_conv_plan_create_ex(g_ctx, &p, 1, &plan));
    ck_conv_args a;
    ck_conv_args_init(&a);
    CHECK_STATUS(ck_conv_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "must not be NULL") != NULL);
    CHECK_STATUS(ck_conv_plan_execute(plan, NULL), CK_ERROR_INVALID_ARGUMENT);
    ck_conv_plan_destroy(plan);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_nchw_directions);
    RUN_TEST(test_nchw_refusals);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
