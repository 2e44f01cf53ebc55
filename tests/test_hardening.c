/*
 * Regression tests of the hardening audit (issue 20), library side: every crash, overflow and
 * silent acceptance it found is refused with a sentence. Parsers (nesting depth), tensor
 * descriptions (byte extents, ranks, NULL), emulator copies against their allocation, launch
 * limits of CUDA, outputs with two elements at one address, non-finite scales.
 */
#include <math.h>
#include <stdlib.h>

#include "ck/ck.h"
#include "kernel_harness.h"

static ck_context *ctx;

/* "((((x0))))" nested `depth` times, or "----x0" with `depth` signs. */
static char *nested(int depth, int signs)
{
    char *s = malloc((size_t)depth * 2 + 8);
    if (!s)
        return NULL;
    size_t at = 0;
    for (int i = 0; i < depth; ++i)
        s[at++] = signs ? '-' : '(';
    memcpy(s + at, "x0", 2);
    at += 2;
    for (int i = 0; !signs && i < depth; ++i)
        s[at++] = ')';
    s[at] = '\0';
    return s;
}

static void test_expression_depth(void)
{
    ck_ew_program p;
    char *deep = nested(50000, 0), *signs = nested(50000, 1), *ok = nested(100, 0);
    CHECK(deep && signs && ok);
    if (!deep || !signs || !ok)
        goto done;
    CHECK_STATUS(ck_ew_parse(deep, &p), CK_ERROR_PARSE);
    CHECK(strstr(ck_last_error(), "nests deeper") != NULL);
    CHECK_STATUS(ck_ew_parse(signs, &p), CK_ERROR_PARSE);
    CHECK_OK(ck_ew_parse(ok, &p));
    CHECK_EQ_INT(p.count, 1);
    /* the same through ck_elementwise_expr (which parses before looking at tensors) */
    float buf[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    ck_tensor t;
    CHECK_OK(ck_tensor_init(&t, buf, CK_DTYPE_F32, 1, shape, NULL));
    CHECK_STATUS(ck_elementwise_expr(ctx, deep, &t, 1, &t), CK_ERROR_PARSE);
done:
    free(deep);
    free(signs);
    free(ok);
}

static void test_tensor_limits(void)
{
    char byte;
    ck_tensor t;
    /* 2^61 f64 elements fit in int64 as elements, not as bytes */
    int64_t big[1] = {(int64_t)1 << 61};
    CHECK_STATUS(ck_tensor_init(&t, &byte, CK_DTYPE_F64, 1, big, NULL), CK_ERROR_OVERFLOW);
    CHECK(strstr(ck_last_error(), "bytes") != NULL);
    int64_t fits[1] = {(int64_t)1 << 59};
    CHECK_OK(ck_tensor_init(&t, &byte, CK_DTYPE_F64, 1, fits, NULL));
    /* strided: the extent in bytes overflows */
    int64_t sh2[2] = {3, 2}, st2[2] = {(int64_t)1 << 61, 1};
    CHECK_STATUS(ck_tensor_init(&t, &byte, CK_DTYPE_F32, 2, sh2, st2), CK_ERROR_OVERFLOW);
    /* hand-filled descriptions with a bad rank: no read past the arrays */
    int64_t s4[1] = {4};
    CHECK_OK(ck_tensor_init(&t, &byte, CK_DTYPE_U8, 1, s4, NULL));
    t.rank = 9;
    CHECK_EQ_INT((int)ck_tensor_numel(&t), 0);
    CHECK_EQ_INT(ck_tensor_is_contiguous(&t), 0);
    CHECK_EQ_INT((int)ck_tensor_extent_bytes(&t), 0);
    t.rank = -1;
    CHECK_EQ_INT((int)ck_tensor_numel(&t), 0);
    CHECK_EQ_INT(ck_tensor_is_contiguous(NULL), 0);
    CHECK_EQ_INT((int)ck_tensor_numel(NULL), 0);
}

static void test_copy_ranges(void)
{
    ck_device *d = ck_context_device(ctx);
    unsigned char host[64];
    uint64_t rng = 20;
    for (int i = 0; i < 64; ++i)
        host[i] = (unsigned char)ckt_rand64(&rng);
    void *p = NULL;
    CHECK_OK(ck_malloc(d, 32, &p));
    if (!p)
        return;
    unsigned char *q = p;
    CHECK_OK(ck_memcpy_h2d(d, p, host, 32, NULL));
    CHECK_OK(ck_memcpy_h2d(d, q + 16, host, 16, NULL));
    CHECK_STATUS(ck_memcpy_h2d(d, p, host, 33, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "past the end") != NULL);
    CHECK_STATUS(ck_memcpy_h2d(d, q + 16, host, 17, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_memcpy_d2h(d, host, q + 1, 32, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_memcpy_d2d(d, p, q + 8, 32, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_memset_d8(d, q + 31, 0, 2, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* host memory is not device memory */
    CHECK_STATUS(ck_memcpy_h2d(d, host, host + 32, 8, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "not inside memory returned by ck_malloc") != NULL);
    unsigned char back[32];
    CHECK_OK(ck_memcpy_d2h(d, back, p, 32, NULL));
    CHECK(memcmp(back, host, 16) == 0 && memcmp(back + 16, host, 16) == 0);
    ck_free(d, p);
    CHECK_STATUS(ck_memcpy_d2h(d, back, p, 1, NULL), CK_ERROR_INVALID_ARGUMENT);
}

static void test_launch_limits(void)
{
    const char *src = "#include \"ck_device.h\"\n"
                      "CK_KERNEL void last_block(int *out)\n"
                      "{\n"
                      "    if (ck_block_idx_x() == ck_grid_dim_x() - 1)\n"
                      "        out[0] = (int)ck_block_idx_x();\n"
                      "}\n";
    ck_device *d = ck_context_device(ctx);
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    CHECK_OK(ck_module_load(d, src, NULL, 0, &m));
    if (m)
        CHECK_OK(ck_module_get_kernel(m, "last_block", &k));
    if (!k)
        return;
    int *out = NULL;
    CHECK_OK(ck_malloc(d, sizeof(int), (void **)&out));
    void *args[1] = {&out};
    size_t sizes[1] = {sizeof out};
    struct {
        unsigned g[3], b[3];
    } bad[] = {
        {{1, 65536, 1}, {1, 1, 1}},       {{1, 1, 65536}, {1, 1, 1}},
        {{0x80000000u, 1, 1}, {1, 1, 1}}, {{0xffffffffu, 0xffffffffu, 0xffffffffu}, {1, 1, 1}},
        {{1, 1, 1}, {1025, 1, 1}},        {{1, 1, 1}, {1, 1, 65}},
        {{1, 1, 1}, {64, 32, 1}}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        ck_launch_config c = {{bad[i].g[0], bad[i].g[1], bad[i].g[2]},
                              {bad[i].b[0], bad[i].b[1], bad[i].b[2]},
                              {0, 0, 0},
                              0,
                              NULL};
        CHECK_STATUS(ck_launch(k, &c, args, sizes, 1), CK_ERROR_INVALID_ARGUMENT);
    }
    /* grid.x above 65535 is fine on a GPU, so it is here */
    ck_launch_config c = {{70000, 1, 1}, {1, 1, 1}, {0, 0, 0}, 0, NULL};
    CHECK_OK(ck_launch(k, &c, args, sizes, 1));
    CHECK_OK(ck_device_synchronize(d));
    int got = 0;
    CHECK_OK(ck_memcpy_d2h(d, &got, out, sizeof got, NULL));
    CHECK_EQ_INT(got, 69999);
    ck_free(d, out);
}

/* Outputs that would have two elements at one address are refused, whatever the op. */
static void test_overlapping_outputs(void)
{
    ck_device *d = ck_context_device(ctx);
    void *xb = NULL, *yb = NULL;
    CHECK_OK(ck_malloc(d, 4096, &xb));
    CHECK_OK(ck_malloc(d, 4096, &yb));
    if (!xb || !yb)
        return;
    float host[32];
    uint64_t rng = 7;
    for (int i = 0; i < 32; ++i)
        host[i] = (float)(ckt_rand64(&rng) % 1000) / 100.0f - 5.0f;
    CHECK_OK(ck_memcpy_h2d(d, xb, host, sizeof host, NULL));
    int64_t shape[2] = {4, 8}, rows_overlap[2] = {4, 1}, stride0[2] = {0, 1}, same[2] = {1, 1},
            ok_strides[2] = {16, 1};
    ck_tensor x, y;
    CHECK_OK(ck_tensor_init(&x, xb, CK_DTYPE_F32, 2, shape, NULL));
    const int64_t *bad[3] = {rows_overlap, stride0, same};
    for (int i = 0; i < 3; ++i) {
        CHECK_OK(ck_tensor_init(&y, yb, CK_DTYPE_F32, 2, shape, bad[i]));
        CHECK_STATUS(ck_softmax(ctx, &x, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "two elements at one address") != NULL);
        CHECK_STATUS(ck_copy(ctx, &x, &y), CK_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(ck_elementwise_expr(ctx, "relu(x0)", &x, 1, &y), CK_ERROR_INVALID_ARGUMENT);
        int perm[2] = {0, 1};
        CHECK_STATUS(ck_permute(ctx, &x, perm, &y), CK_ERROR_INVALID_ARGUMENT);
    }
    /* a padded destination (row stride 16 > 8) is fine, and the copy lands where it should */
    CHECK_OK(ck_tensor_init(&y, yb, CK_DTYPE_F32, 2, shape, ok_strides));
    CHECK_OK(ck_copy(ctx, &x, &y));
    CHECK_OK(ck_context_synchronize(ctx));
    float back[64];
    CHECK_OK(ck_memcpy_d2h(d, back, yb, sizeof back, NULL));
    int good = 1;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 8; ++c)
            good &= back[r * 16 + c] == host[r * 8 + c];
    CHECK(good);
    /* reduce: a stride-0 output, and axes NULL with naxes 1 named as such */
    int64_t s4[1] = {4}, z[1] = {0};
    ck_tensor y4;
    CHECK_OK(ck_tensor_init(&y4, yb, CK_DTYPE_F32, 1, s4, z));
    int ax = 1;
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax, 1, &y4, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "two elements at one address") != NULL);
    CHECK_OK(ck_tensor_init(&y4, yb, CK_DTYPE_F32, 1, s4, NULL));
    CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, NULL, 1, &y4, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "'axes' is NULL") != NULL);
    CHECK(strstr(ck_last_error(), "empty") == NULL);
    ck_free(d, xb);
    ck_free(d, yb);
}

static void test_non_finite_scales(void)
{
    void *xb = (void *)(uintptr_t)(1u << 20), *yb = (void *)(uintptr_t)(1u << 24);
    int64_t shape[2] = {4, 8}, s4[1] = {4};
    ck_tensor x, y, y4;
    CHECK_OK(ck_tensor_init(&x, xb, CK_DTYPE_F32, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y, yb, CK_DTYPE_F32, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y4, yb, CK_DTYPE_F32, 1, s4, NULL));
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    int ax = 1;
    for (int i = 0; i < 3; ++i) {
        ck_softmax_options so;
        ck_softmax_options_init(&so);
        so.scale = (float)bad[i];
        CHECK_STATUS(ck_softmax(ctx, &x, &y, &so), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "scale") != NULL);
        ck_reduce_options ro;
        ck_reduce_options_init(&ro);
        ro.scale = bad[i];
        CHECK_STATUS(ck_reduce(ctx, CK_REDUCE_SUM, &x, &ax, 1, &y4, &ro),
                     CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "scale") != NULL);
    }
}

int main(void)
{
    setenv("CK_DEVICE", "host", 1);
    if (ck_context_create(CK_BACKEND_HOST, 0, &ctx) != CK_SUCCESS) {
        fprintf(stderr, "no emulator: %s\n", ck_last_error());
        return 1;
    }
    RUN_TEST(test_expression_depth);
    RUN_TEST(test_tensor_limits);
    RUN_TEST(test_copy_ranges);
    RUN_TEST(test_launch_limits);
    RUN_TEST(test_overlapping_outputs);
    RUN_TEST(test_non_finite_scales);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
