/*
 * ck_reduce numerics on the context's device (the emulator in CI): odd row lengths, column and
 * split instances, random ranks 1..6 with random axis sets, strided/permuted/broadcast inputs,
 * every op with pre/post-ops, several dtypes, NaN/Inf propagation, determinism. Every output
 * element is compared with the double reference (tolerance in reduce_harness.h).
 */
#include "reduce_harness.h"

static ck_context *ctx;
static int on_gpu;

static void test_row_lengths(void)
{
    const int64_t lens[] = {1, 3, 17, 1023, 4097, 65537};
    for (int i = 0; i < 6; ++i) {
        int64_t shape[2] = {lens[i] > 4097 ? 2 : 5, lens[i]};
        int ax = 1;
        rt_problem p = rt_make(CK_DTYPE_F32, CK_DTYPE_F32, CK_REDUCE_SUM, 2, shape, 1, &ax);
        CHECK_EQ_INT(rt_run(ctx, &p, 100 + (uint64_t)i, NULL, NULL), 0);
        p = rt_make(CK_DTYPE_BF16, i % 8 >= 6 ? CK_DTYPE_I32 : CK_DTYPE_BF16, (ck_reduce_op)(i % 8),
                    2, shape, 1, &ax);
        CHECK_EQ_INT(rt_run(ctx, &p, 200 + (uint64_t)i, NULL, NULL), 0);
        p = rt_make(CK_DTYPE_F16, CK_DTYPE_I32, CK_REDUCE_ARGMAX, 2, shape, 1, &ax);
        CHECK_EQ_INT(rt_run(ctx, &p, 300 + (uint64_t)i, NULL, NULL), 0);
    }
    /* a misaligned row start (odd row stride): narrower vectors */
    int64_t shape[2] = {7, 1001};
    int ax = 1;
    rt_problem p = rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_SUM, 2, shape, 1, &ax);
    CHECK_EQ_INT(rt_run(ctx, &p, 7, NULL, NULL), 0);
}

static void test_instances(void)
{
    /* column (reduce axis 0 of a row-major matrix), split over blocks */
    int64_t shape[2] = {1000, 320};
    int ax0 = 0, ax1 = 1;
    rt_problem p = rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_SUM, 2, shape, 1, &ax0);
    ck_reduce_plan_info info;
    ck_tensor x, y;
    int64_t ys[1] = {320};
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)256, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(1 << 28), CK_DTYPE_F32, 1, ys, NULL));
    CHECK_OK(ck_reduce_plan(ctx, CK_REDUCE_SUM, &x, &ax0, 1, &y, NULL, &info));
    CHECK_EQ_INT(info.kind, 1);
    CHECK_EQ_INT(info.vb, 16);
    CHECK(info.parts > 1);
    CHECK_EQ_INT(rt_run(ctx, &p, 11, NULL, NULL), 0);
    for (int op = 0; op < 8; ++op) {
        int64_t s2[2] = {301, 77};
        p = rt_make(CK_DTYPE_F32, op >= 6 ? CK_DTYPE_I32 : CK_DTYPE_F32, (ck_reduce_op)op, 2, s2,
                    1, &ax0);
        CHECK_EQ_INT(rt_run(ctx, &p, 12 + (uint64_t)op, NULL, NULL), 0);
    }
    /* column with an odd inner length (partial vectors at the edge) and kept outer dims */
    int64_t s3[3] = {3, 129, 203};
    p = rt_make(CK_DTYPE_F16, CK_DTYPE_F16, CK_REDUCE_MAX, 3, s3, 1, &ax1);
    CHECK_EQ_INT(rt_run(ctx, &p, 13, NULL, NULL), 0);
    /* split row: few long rows */
    int64_t s4[2] = {2, 100003};
    p = rt_make(CK_DTYPE_F32, CK_DTYPE_F32, CK_REDUCE_SUM, 2, s4, 1, &ax1);
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)256, CK_DTYPE_F32, 2, s4, NULL));
    ys[0] = 2;
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(1 << 28), CK_DTYPE_F32, 1, ys, NULL));
    CHECK_OK(ck_reduce_plan(ctx, CK_REDUCE_SUM, &x, &ax1, 1, &y, NULL, &info));
    CHECK_EQ_INT(info.kind, 0);
    CHECK(info.parts > 1);
    CHECK_EQ_INT(rt_run(ctx, &p, 14, NULL, NULL), 0);
    p.op = CK_REDUCE_ARGMIN;
    p.yt = CK_DTYPE_I32;
    CHECK_EQ_INT(rt_run(ctx, &p, 15, NULL, NULL), 0);
    p.op = CK_REDUCE_NORM2;
    p.yt = CK_DTYPE_F64;
    CHECK_EQ_INT(rt_run(ctx, &p, 16, NULL, NULL), 0);
    /* everything reduced to a scalar (rank 0 y) and kept as [1, 1] */
    int both[2] = {0, 1};
    int64_t s5[2] = {37, 1500};
    p = rt_make(CK_DTYPE_F32, CK_DTYPE_F32, CK_REDUCE_MEAN, 2, s5, 2, both);
    CHECK_EQ_INT(rt_run(ctx, &p, 17, NULL, NULL), 0);
    p.keep = 1;
    CHECK_EQ_INT(rt_run(ctx, &p, 18, NULL, NULL), 0);
}

static void test_random(void)
{
    const ck_dtype xts[] = {CK_DTYPE_F32, CK_DTYPE_F64, CK_DTYPE_F16, CK_DTYPE_BF16,
                            CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2, CK_DTYPE_I8, CK_DTYPE_U8,
                            CK_DTYPE_I32};
    const ck_dtype yts[] = {CK_DTYPE_F32, CK_DTYPE_F64, CK_DTYPE_F16, CK_DTYPE_BF16};
    uint64_t seed = 12345;
    for (int it = 0; it < 36; ++it) {
        rt_problem p;
        memset(&p, 0, sizeof p);
        p.rank = 1 + it % 6;
        int64_t numel = 1;
        for (int d = 0; d < p.rank; ++d) {
            int64_t cap = p.rank <= 2 ? 300 : p.rank <= 4 ? 12 : 6;
            p.shape[d] = 1 + (int64_t)(ckt_rand64(&seed) % (uint64_t)cap);
            numel *= p.shape[d];
        }
        (void)numel;
        p.xt = xts[ckt_rand64(&seed) % 9];
        p.op = (ck_reduce_op)(ckt_rand64(&seed) % 8);
        int arg = p.op == CK_REDUCE_ARGMAX || p.op == CK_REDUCE_ARGMIN;
        p.yt = arg ? CK_DTYPE_I32 : yts[ckt_rand64(&seed) % 4];
        int picked = 0;
        while (!picked)
            for (int d = 0; d < p.rank; ++d)
                if (ckt_rand64(&seed) % 2) {
                    p.axes[p.naxes++] = (ckt_rand64(&seed) % 2) ? d : d - p.rank;
                    picked = 1;
                }
        /* shuffle the axes list: its order must not matter */
        for (int i = p.naxes - 1; i > 0; --i) {
            int j = (int)(ckt_rand64(&seed) % (uint64_t)(i + 1)), t = p.axes[i];
            p.axes[i] = p.axes[j];
            p.axes[j] = t;
        }
        p.mode = (int)(ckt_rand64(&seed) % 4);
        if (arg && p.mode == RT_BROADCAST)
            p.mode = RT_PACKED; /* ties everywhere: still defined, but keep indices informative */
        p.keep = (int)(ckt_rand64(&seed) % 2);
        p.ypad = (int)(ckt_rand64(&seed) % 3 == 0);
        ck_reduce_options_init(&p.opt);
        int pre = (int)(ckt_rand64(&seed) % 3);
        /* argmax of squares: squares are exact in fp32 only for narrow types */
        if (!(arg && pre == 2 && (p.xt == CK_DTYPE_F32 || p.xt == CK_DTYPE_F64)))
            p.opt.pre = (ck_reduce_pre)pre;
        if (!arg && ckt_rand64(&seed) % 3 == 0)
            p.opt.scale = 0.37;
        int nonneg = p.op == CK_REDUCE_SUM_SQUARES || p.op == CK_REDUCE_NORM2 || p.opt.pre != 0;
        if (!arg && nonneg && ckt_rand64(&seed) % 2)
            p.opt.post_sqrt = 1;
        CHECK_MSG(rt_run(ctx, &p, (uint64_t)it * 77 + 5, NULL, NULL) == 0,
                  "random case %d: %s %s->%s rank %d mode %d keep %d", it,
                  ck_reduce_op_name(p.op), ck_dtype_name(p.xt), ck_dtype_name(p.yt), p.rank,
                  p.mode, p.keep);
    }
}

static void test_nan_inf(void)
{
    int64_t shape[2] = {40, 333};
    int ax1 = 1, ax0 = 0;
    for (int op = 0; op < 8; ++op)
        for (int a = 0; a < 2; ++a) {
            rt_problem p = rt_make(CK_DTYPE_F32, op >= 6 ? CK_DTYPE_I32 : CK_DTYPE_F32,
                                   (ck_reduce_op)op, 2, shape, 1, a ? &ax0 : &ax1);
            p.special = 60; /* NaN, +Inf, -Inf at random places */
            CHECK_EQ_INT(rt_run(ctx, &p, 40 + (uint64_t)op, NULL, NULL), 0);
            p.xt = CK_DTYPE_BF16;
            CHECK_EQ_INT(rt_run(ctx, &p, 50 + (uint64_t)op, NULL, NULL), 0);
        }
}

/* argmax/argmin: ties (the first index wins; -0 ties +0), rows of one value (all -Inf), first
 * NaN among several, on row instances with odd N (a block per row, a split row, a warp per
 * row) and the column one; CK_REDUCE_PREV=1 (the previous fold) too. */
static void test_arg_ties_nan(void)
{
    const int64_t shapes[4][2] = {{9, 4099}, {2, 100003}, {70, 999}, {40, 333}};
    const ck_dtype types[3] = {CK_DTYPE_BF16, CK_DTYPE_F32, CK_DTYPE_F16};
    for (int prev = 0; prev < 2; ++prev) {
        setenv("CK_REDUCE_PREV", prev ? "1" : "0", 1);
        for (int sh = 0; sh < 4; ++sh)
            for (int t = 0; t < 3; ++t)
                for (int op = CK_REDUCE_ARGMAX; op <= CK_REDUCE_ARGMIN; ++op)
                    for (int ties = 1; ties <= 5; ++ties) {
                        if (ties == 3 || (sh == 1 && (ties == 2 || t == 2)))
                            continue; /* fewer emulator runs of the long rows */
                        int ax = sh == 3 ? 0 : 1;
                        rt_problem p = rt_make(types[t], CK_DTYPE_I32, (ck_reduce_op)op, 2,
                                               shapes[sh], 1, &ax);
                        p.ties = ties;
                        p.special = ties == 5 ? (int)(shapes[sh][0] * 3) : 0; /* NaNs */
                        CHECK_EQ_INT(rt_run(ctx, &p, 500 + (uint64_t)(ties * 16 + t * 4 + op), NULL,
                                            NULL),
                                     0);
                    }
    }
    unsetenv("CK_REDUCE_PREV");
}

static void test_determinism(void)
{
    int64_t shape[2] = {3, 200000};
    int ax = 1;
    rt_problem p = rt_make(CK_DTYPE_F32, CK_DTYPE_F32, CK_REDUCE_SUM, 2, shape, 1, &ax);
    void *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    CHECK_EQ_INT(rt_run(ctx, &p, 99, &a, &na), 0);
    CHECK_EQ_INT(rt_run(ctx, &p, 99, &b, &nb), 0);
    CHECK(na == nb && a && b && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    int64_t s2[2] = {2000, 400};
    int ax0 = 0;
    p = rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_SUM, 2, s2, 1, &ax0);
    CHECK_EQ_INT(rt_run(ctx, &p, 98, &a, &na), 0);
    CHECK_EQ_INT(rt_run(ctx, &p, 98, &b, &nb), 0);
    CHECK(na == nb && a && b && memcmp(a, b, na) == 0);
    free(a);
    free(b);
}

static void test_gpu_large(void)
{
    if (!on_gpu)
        return;
    int64_t shape[2] = {16384, 8192};
    int ax0 = 0, ax1 = 1;
    rt_problem p = rt_make(CK_DTYPE_BF16, CK_DTYPE_BF16, CK_REDUCE_SUM, 2, shape, 1, &ax1);
    CHECK_EQ_INT(rt_run(ctx, &p, 1, NULL, NULL), 0);
    p = rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_SUM, 2, shape, 1, &ax0);
    CHECK_EQ_INT(rt_run(ctx, &p, 2, NULL, NULL), 0);
    p = rt_make(CK_DTYPE_F32, CK_DTYPE_I32, CK_REDUCE_ARGMAX, 2, shape, 1, &ax1);
    CHECK_EQ_INT(rt_run(ctx, &p, 3, NULL, NULL), 0);
    int64_t s2[2] = {4, 1 << 24};
    p = rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_NORM2, 2, s2, 1, &ax1);
    CHECK_EQ_INT(rt_run(ctx, &p, 4, NULL, NULL), 0);
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    on_gpu = ck_context_backend(ctx) == CK_BACKEND_CUDA;
    RUN_TEST(test_row_lengths);
    RUN_TEST(test_instances);
    RUN_TEST(test_random);
    RUN_TEST(test_nan_inf);
    RUN_TEST(test_arg_ties_nan);
    RUN_TEST(test_determinism);
    RUN_TEST(test_gpu_large);
    printf("%d kernels built\n", ck_context_kernel_count(ctx));
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
