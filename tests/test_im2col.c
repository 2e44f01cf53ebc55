/* ck_im2col (ck/im2col.h) on the device CK_DEVICE chooses (the emulator in CI): the matrix
 * written through the windows generated from conv's im2col descriptor against the direct
 * reference (ck_im2col_reference: index arithmetic, no descriptor), every element bit for bit,
 * over random inputs and a sentinel-filled output (an unwritten element shows): 1-D/2-D/3-D,
 * groups and depthwise, strides, dilations, asymmetric padding, odd sizes, the three types;
 * and the refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/im2col.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x1a2c0117e5ull;

typedef struct icase {
    const char *what;
    int nd, n, g, c; /* c: total */
    int in[3], fil[3], str[3], dil[3], pl[3], pr[3];
    ck_dtype dt;
} icase;

static void problem(const icase *z, ck_conv_problem *p)
{
    ck_conv_problem_init(p);
    p->ndim = z->nd, p->n = z->n, p->g = z->g, p->c = z->c, p->k = z->g;
    for (int d = 0; d < z->nd; ++d) {
        p->in[d] = z->in[d], p->filter[d] = z->fil[d];
        p->stride[d] = z->str[d] ? z->str[d] : 1, p->dilation[d] = z->dil[d] ? z->dil[d] : 1;
        p->pad_left[d] = z->pl[d], p->pad_right[d] = z->pr[d];
    }
    p->in_dtype = p->wei_dtype = p->out_dtype = z->dt;
}

/* shift: x and out placed that many elements past a 16-byte boundary (the vectors narrow) */
static void run(const icase *z, int shift)
{
    ck_conv_problem p;
    problem(z, &p);
    int64_t nx = 0, m = 0, k = 0;
    CHECK_OK(ck_conv_tensor_elements(&p, &nx, NULL, NULL));
    CHECK_OK(ck_im2col_shape(&p, &m, &k));
    int es = z->dt == CK_DTYPE_F32 ? 4 : 2;
    size_t sx = (size_t)nx * es, so = (size_t)(z->g * m * k) * es;
    unsigned char *hx = malloc(sx), *got = malloc(so), *ref = malloc(so);
    for (size_t i = 0; i < sx; i += 2) { /* random bits, never NaN-heavy: small normals */
        uint16_t v = (uint16_t)(0x3000 + ckt_rand64(&g_rng) % 0x1800);
        if (ckt_rand64(&g_rng) & 1)
            v |= 0x8000;
        memcpy(hx + i, &v, 2);
    }
    memset(got, 0x7f, so);
    ck_device *dev = ck_context_device(g_ctx);
    void *dx = NULL, *dout = NULL;
    CHECK_OK(ck_malloc(dev, sx + 16, &dx));
    CHECK_OK(ck_malloc(dev, so + 16, &dout));
    char *x0 = (char *)dx + shift * es, *o0 = (char *)dout + shift * es;
    CHECK_OK(ck_memcpy_h2d(dev, x0, hx, sx, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, o0, got, so, NULL)); /* the sentinel */
    ck_status st = ck_im2col(g_ctx, &p, x0, o0);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", z->what, ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, got, o0, so, NULL));
    CHECK_OK(ck_im2col_reference(&p, hx, ref));
    int64_t bad = 0, zeros = 0;
    for (int64_t e = 0; e < z->g * m * k; ++e) {
        if (memcmp(got + e * es, ref + e * es, (size_t)es) && bad++ < 3)
            CHECK_MSG(0, "%s: element %lld (group %lld, row %lld, column %lld) differs", z->what,
                      (long long)e, (long long)(e / (m * k)), (long long)(e / k % m),
                      (long long)(e % k));
        static const unsigned char zero[4];
        zeros += !memcmp(ref + e * es, zero, (size_t)es);
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements differ", z->what, (long long)bad,
              (long long)(z->g * m * k));
    /* the case has padding: some zeros, but not only zeros */
    CHECK_MSG(zeros < z->g * m * k, "%s: the reference is all zeros", z->what);
    ck_free(dev, dx);
    ck_free(dev, dout);
    free(hx), free(got), free(ref);
}

static void test_im2col_shapes(void)
{
    static const icase cases[] = {
        {"2-D 3x3 pad 1 c8 bf16",
         2,
         2,
         1,
         8,
         {7, 7},
         {3, 3},
         {1, 1},
         {1, 1},
         {1, 1},
         {1, 1},
         CK_DTYPE_BF16},
        {"2-D 5x5 stride 2 asymmetric pad g2 c16 f16",
         2,
         1,
         2,
         16,
         {13, 9},
         {5, 5},
         {2, 2},
         {1, 1},
         {2, 0},
         {1, 3},
         CK_DTYPE_F16},
        {"2-D 3x3 dilation 2 stride (1,3) c3 (odd) bf16",
         2,
         2,
         1,
         3,
         {13, 13},
         {3, 3},
         {1, 3},
         {2, 2},
         {2, 1},
         {0, 4},
         CK_DTYPE_BF16},
        {"2-D depthwise g16 c1 3x3",
         2,
         1,
         16,
         16,
         {7, 5},
         {3, 3},
         {1, 2},
         {1, 1},
         {1, 1},
         {1, 1},
         CK_DTYPE_BF16},
        {"1-D filter 5 stride 2 dilation 2 g2 c4 f16",
         1,
         3,
         2,
         8,
         {13},
         {5},
         {2},
         {2},
         {3},
         {2},
         CK_DTYPE_F16},
        {"3-D 3x3x3 stride (1,2,1) c4 f32",
         3,
         1,
         1,
         4,
         {5, 7, 7},
         {3, 3, 3},
         {1, 2, 1},
         {1, 1, 1},
         {1, 0, 1},
         {1, 1, 0},
         CK_DTYPE_F32},
        {"3-D 1x1x3 on 1x1x7 g3 c6 f32",
         3,
         2,
         3,
         18,
         {1, 1, 7},
         {1, 1, 3},
         {1, 1, 1},
         {1, 1, 1},
         {0, 0, 2},
         {0, 0, 0},
         CK_DTYPE_F32},
        {"2-D 1x1 spatial 1 c24",
         2,
         5,
         1,
         24,
         {1, 1},
         {1, 1},
         {1, 1},
         {1, 1},
         {0, 0},
         {0, 0},
         CK_DTYPE_BF16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run(&cases[i], 0);
    run(&cases[0], 1); /* pointers 2 bytes past 16: element accesses */
    run(&cases[5], 2); /* 8 bytes past 16: f32 pairs */
}

static void test_im2col_refusals(void)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.c = p.k = 8;
    p.in[0] = p.in[1] = 5;
    int64_t nx = 0, m = 0, k = 0;
    CHECK_OK(ck_conv_tensor_elements(&p, &nx, NULL, NULL));
    CHECK_OK(ck_im2col_shape(&p, &m, &k));
    CHECK_EQ_INT(m, 25);
    CHECK_EQ_INT(k, 8);
    ck_device *dev = ck_context_device(g_ctx);
    void *buf = NULL;
    CHECK_OK(ck_malloc(dev, 4096, &buf));
    char *b = buf;
    CHECK_STATUS(ck_im2col(g_ctx, &p, NULL, b), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_im2col(g_ctx, &p, b, b + 64), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "overlaps") != NULL);
    CHECK_STATUS(ck_im2col(g_ctx, &p, b, b + 1 + 2048), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "aligned") != NULL);
    CHECK_STATUS(ck_im2col(g_ctx, NULL, b, b + 2048), CK_ERROR_INVALID_ARGUMENT);
    p.direction = CK_CONV_BWD_DATA;
    CHECK_STATUS(ck_im2col(g_ctx, &p, b, b + 2048), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "direction") != NULL);
    p.direction = CK_CONV_FWD;
    p.layout = CK_CONV_LAYOUT_NCHW;
    CHECK_STATUS(ck_im2col(g_ctx, &p, b, b + 2048), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "ck_permute") != NULL);
    p.layout = CK_CONV_LAYOUT_NHWGC;
    p.in_dtype = p.wei_dtype = CK_DTYPE_FP8_E4M3; /* a valid 8-bit convolution */
    CHECK_STATUS(ck_im2col(g_ctx, &p, b, b + 2048), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "in place") != NULL);
    p.in_dtype = p.wei_dtype = p.out_dtype;
    p.stride[0] = 0;
    CHECK_STATUS(ck_im2col(g_ctx, &p, b, b + 2048), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "stride") != NULL);
    p.stride[0] = 1;
    p.c = 6, p.g = 4;
    CHECK_STATUS(ck_im2col_shape(&p, &m, &k), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "divisible") != NULL);
    ck_free(dev, buf);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_im2col_shapes);
    RUN_TEST(test_im2col_refusals);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
