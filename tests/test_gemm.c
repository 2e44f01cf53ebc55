/*
 * ck_gemm on the device CK_DEVICE chooses (the emulator in CI): every layout x dtype x
 * epilogue feature on small and odd shapes, every element of D against the double-precision
 * CPU reference (ck_gemm_reference_value) with the tolerance ck_gemm_tolerance derives from K,
 * the types and the magnitude of the terms; D's padding must stay untouched. The full cross
 * product is too slow for the emulator, so each axis is covered by a sample of the others.
 */
#include "gemm_harness.h"

static const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;

/* Every layout of A, B and D, f16 and bf16, odd shapes (primes, 1, non-multiples of tiles). */
static void test_layouts_16bit(void)
{
    static const int64_t shapes[][3] = {{37, 29, 45}, {1, 17, 33}, {19, 1, 7}, {23, 31, 1}};
    int s = 0;
    for (int t = 0; t < 2; ++t)
        for (int ao = 0; ao < 2; ++ao)
            for (int bo = 0; bo < 2; ++bo)
                for (int dox = 0; dox < 2; ++dox, ++s) {
                    const int64_t *sh = shapes[s % 4];
                    gcase c = gc_base(sh[0], sh[1], sh[2], t ? CK_DTYPE_F16 : CK_DTYPE_BF16,
                                      s % 3 == 0 ? CK_DTYPE_F32
                                      : t        ? CK_DTYPE_F16
                                                 : CK_DTYPE_BF16);
                    c.ao = ao ? C : R;
                    c.bo = bo ? C : R;
                    c.dox = dox ? C : R;
                    c.pad = s % 2 ? 8 : 0; /* with padding: 16-byte copies where ld allows */
                    gc_run(&c);
                }
}

/* Every layout of the f32 (tf32, 3xtf32), fp8 (each mix) and i8 inputs. */
static void test_dtypes(void)
{
    struct {
        ck_dtype a, b, d;
        ck_gemm_compute compute;
    } t[] = {
        {CK_DTYPE_F32, CK_DTYPE_F32, CK_DTYPE_F32, CK_GEMM_COMPUTE_DEFAULT},
        {CK_DTYPE_F32, CK_DTYPE_F32, CK_DTYPE_F32, CK_GEMM_COMPUTE_F32},
        {CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, CK_DTYPE_BF16, CK_GEMM_COMPUTE_DEFAULT},
        {CK_DTYPE_FP8_E5M2, CK_DTYPE_FP8_E5M2, CK_DTYPE_F32, CK_GEMM_COMPUTE_DEFAULT},
        {CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2, CK_DTYPE_F16, CK_GEMM_COMPUTE_DEFAULT},
        {CK_DTYPE_FP8_E5M2, CK_DTYPE_FP8_E4M3, CK_DTYPE_F32, CK_GEMM_COMPUTE_DEFAULT},
        {CK_DTYPE_I8, CK_DTYPE_I8, CK_DTYPE_I32, CK_GEMM_COMPUTE_DEFAULT},
        {CK_DTYPE_I8, CK_DTYPE_I8, CK_DTYPE_F32, CK_GEMM_COMPUTE_DEFAULT},
    };
    static const int64_t shapes[][3] = {{41, 23, 67}, {7, 40, 3}, {33, 5, 70}, {1, 1, 1}};
    int s = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i)
        for (int ao = 0; ao < 2; ++ao)
            for (int bo = 0; bo < 2; ++bo, ++s) {
                const int64_t *sh = shapes[s % 4];
                gcase c = gc_base(sh[0], sh[1], sh[2], t[i].a, t[i].d);
                c.b = t[i].b;
                c.compute = t[i].compute;
                c.ao = ao ? C : R;
                c.bo = bo ? C : R;
                c.dox = s % 3 == 1 ? C : R;
                c.pad = s % 2 ? 16 : 0;
                gc_run(&c);
            }
}

/* alpha / beta with C (row, column, f32 C with 16-bit D), C aliasing D, bias rows / columns
 * in each type, each activation, a program, fp8 output with a scale, scales of fp8 inputs. */
static void test_epilogue(void)
{
    gcase c = gc_base(45, 38, 50, CK_DTYPE_BF16, CK_DTYPE_BF16);
    c.c = CK_DTYPE_BF16;
    c.alpha = 0.75f;
    c.beta = -1.25f;
    gc_run(&c);
    c.c = CK_DTYPE_F32;
    c.co = C;
    c.dox = R;
    gc_run(&c);
    c = gc_base(33, 47, 20, CK_DTYPE_F16, CK_DTYPE_F16);
    c.alias = 1;
    c.beta = 0.5f;
    c.dox = C;
    c.pad = 3;
    gc_run(&c);
    for (int i = 0; i < 6; ++i) {
        c = gc_base(21 + i, 34 - i, 19 + 2 * i, i % 2 ? CK_DTYPE_BF16 : CK_DTYPE_F16,
                    i % 3 == 0 ? CK_DTYPE_F32 : CK_DTYPE_F16);
        c.bias = i % 2 ? CK_GEMM_BIAS_ROW : CK_GEMM_BIAS_COL;
        c.bias_dt = i % 3 == 0 ? CK_DTYPE_F32 : i % 3 == 1 ? CK_DTYPE_F16 : CK_DTYPE_BF16;
        c.act = (ck_gemm_activation)i; /* none, relu, gelu tanh, gelu erf, silu, sigmoid */
        c.dox = i % 2 ? C : R;
        gc_run(&c);
    }
    c = gc_base(30, 26, 40, CK_DTYPE_BF16, CK_DTYPE_F32);
    c.epi = "relu(x0) * 0.5 + sigmoid(x0) - cast(x0, bf16) * 0.25";
    c.c = CK_DTYPE_F32;
    c.beta = 1;
    gc_run(&c);
    c = gc_base(35, 27, 64, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3);
    c.scale_a = 0.5f;
    c.scale_b = 4.0f;
    c.scale_d = 2.0f;
    gc_run(&c);
    c.d = CK_DTYPE_FP8_E5M2;
    c.bias = CK_GEMM_BIAS_COL;
    gc_run(&c);
    c = gc_base(29, 31, 96, CK_DTYPE_I8, CK_DTYPE_I32);
    c.c = CK_DTYPE_I32;
    c.beta = 2;
    c.alpha = 3;
    c.bias = CK_GEMM_BIAS_ROW;
    gc_run(&c);
    c = gc_base(29, 31, 96, CK_DTYPE_F32, CK_DTYPE_BF16);
    c.compute = CK_GEMM_COMPUTE_F32;
    c.act = CK_GEMM_ACT_GELU_ERF;
    c.bias = CK_GEMM_BIAS_ROW;
    c.bias_dt = CK_DTYPE_BF16;
    gc_run(&c);
}

/* Several tiles in both directions and several k-tiles through the stage ring; the policy's
 * own choice of instance, and every instance of family 80 once (family 90's variants, each
 * tile, stage count, cluster and split, are tests/test_gemm_sm90.c's). */
static void test_instances(void)
{
    gcase c = gc_base(131, 67, 200, CK_DTYPE_BF16, CK_DTYPE_F32);
    c.instance = -1;
    gc_run(&c);
    ck_gemm_problem p;
    ck_ew_program prog;
    c = gc_base(70, 130, 97, CK_DTYPE_F16, CK_DTYPE_F16);
    c.ao = C;
    gc_problem(&c, &p, &prog);
    ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
    int n = 0;
    CHECK_OK(ck_gemm_candidates(g_ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
    CHECK(n >= 4);
    for (int i = 0; i < n; ++i) {
        CHECK(i == 0 || cand[i].score <= cand[i - 1].score);
        if (cand[i].family != 80)
            continue;
        c.instance = cand[i].id;
        if (gc_run(&c))
            printf("  instance %s\n", cand[i].name);
    }
}

/* The 8-warp instances (128x256, 256x128; 128 and 64 bytes of K) over more k-tiles than
 * stages, so that the stage ring and the fragments read one k-slice ahead wrap around, with an
 * odd K tail; K-major and MN-major operands (ldmatrix and ldmatrix.trans). */
static void test_instances_8warp(void)
{
    static const struct {
        ck_dtype t, d;
        ck_gemm_order ao, bo;
    } v[] = {{CK_DTYPE_BF16, CK_DTYPE_F32, R, C},
             {CK_DTYPE_F16, CK_DTYPE_F16, C, R}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
        gcase c = gc_base(135, 260, 5 * 64 + 5, v[i].t, v[i].d);
        c.ao = v[i].ao;
        c.bo = v[i].bo;
        ck_gemm_problem p;
        ck_ew_program prog;
        gc_problem(&c, &p, &prog);
        ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
        int n = 0, big = 0;
        CHECK_OK(ck_gemm_candidates(g_ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
        for (int j = 0; j < n; ++j) {
            if (cand[j].family != 80 || cand[j].tile_m * cand[j].tile_n != 128 * 256)
                continue;
            ++big;
            c.instance = cand[j].id;
            if (gc_run(&c))
                printf("  instance %s\n", cand[j].name);
        }
        CHECK(big == 4);
    }
}

/* Family 90's TMA store of D with the epilogue applied on the way (sm90_value): bias per row
 * and per column of each bias type, every activation, alpha and scale_d, both staging layouts
 * (128x256 with 3 stages: the whole tile; with 4: two halves) and 128x128, a batch with a
 * bias per batch; N a multiple of 8 (the TMA store's condition), M and K odd. */
static void test_sm90_tma_epilogue(void)
{
    static const struct {
        int m, n, k;
        ck_dtype in, d;
        ck_gemm_bias bias;
        ck_dtype bias_dt;
        ck_gemm_activation act;
        float alpha, scale_d;
        int batch;
        const char *want;
    } v[] = {
        {150, 264, 80, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_GEMM_BIAS_COL, CK_DTYPE_F32,
         CK_GEMM_ACT_SILU, 0.5f, 1.0f, 0, "sm90.128x256x64.s4."},
        {150, 264, 80, CK_DTYPE_F16, CK_DTYPE_F16, CK_GEMM_BIAS_ROW, CK_DTYPE_BF16,
         CK_GEMM_ACT_GELU_TANH, 1.0f, 2.0f, 0, "sm90.128x256x64.s3."},
        {131, 136, 72, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_GEMM_BIAS_COL, CK_DTYPE_F16,
         CK_GEMM_ACT_RELU, 1.0f, 1.0f, 0, "sm90.128x128x64.s6."},
        {131, 136, 72, CK_DTYPE_BF16, CK_DTYPE_F16, CK_GEMM_BIAS_NONE, CK_DTYPE_F32,
         CK_GEMM_ACT_SIGMOID, 1.5f, 0.5f, 0, "sm90.128x128x64.s6."},
        {67, 136, 40, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_GEMM_BIAS_ROW, CK_DTYPE_F32,
         CK_GEMM_ACT_GELU_ERF, 1.0f, 1.0f, 3, "sm90.128x256x64.s4."},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
        gcase c = gc_base(v[i].m, v[i].n, v[i].k, v[i].in, v[i].d);
        c.bias = v[i].bias;
        c.bias_dt = v[i].bias_dt;
        c.act = v[i].act;
        c.alpha = v[i].alpha;
        c.scale_d = v[i].scale_d;
        c.batch = v[i].batch;
        c.want = v[i].want;
        if (gc_run(&c))
            printf("  case %zu (%s)\n", i, v[i].want);
    }
}

/* Operands whose rows (or batches) are not multiples of 16 bytes: the policy's plan copies
 * them into padded workspaces and runs the padded problem's plan on the copies (repack.c;
 * the emulator's few workers make it family 80's vector copies here, the H100's family 90);
 * every element against the reference: A only, B only, both, MN-major, a batch with B
 * broadcast. */
static void test_repack(void)
{
    static const struct {
        int m, n, k;
        ck_dtype in, d;
        ck_gemm_order ao, bo;
        int batch, bcast;
    } v[] = {
        {67, 136, 71, CK_DTYPE_BF16, CK_DTYPE_BF16, R, C, 0, 0},  /* both K-major, K odd */
        {45, 61, 40, CK_DTYPE_F16, CK_DTYPE_F32, C, R, 0, 0},     /* both MN-major, M, N odd */
        {64, 100, 64, CK_DTYPE_BF16, CK_DTYPE_F32, R, R, 0, 0},   /* B only (N = 100) */
        {37, 72, 33, CK_DTYPE_BF16, CK_DTYPE_BF16, R, C, 3, 2},   /* batched, B broadcast */
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
        gcase c = gc_base(v[i].m, v[i].n, v[i].k, v[i].in, v[i].d);
        c.ao = v[i].ao;
        c.bo = v[i].bo;
        c.batch = v[i].batch;
        c.bcast = v[i].bcast;
        c.instance = -1;
        ck_gemm_problem p;
        ck_ew_program prog;
        gc_problem(&c, &p, &prog);
        ck_gemm_plan *plan = NULL;
        CHECK_OK(ck_gemm_plan_create(g_ctx, &p, -1, &plan));
        if (plan) {
            CHECK_MSG(plan->repack != NULL, "case %zu: a plan of %s without repacking", i,
                      plan->inst.family == CK_GEMM_FAMILY_SM90 ? "sm90" : "sm80");
            ck_gemm_plan_destroy(plan);
        }
        if (gc_run(&c))
            printf("  case %zu\n", i);
    }
}

/* The one-call tensor form, with a pointer that is not 16-byte aligned (element-wise copies). */
static void test_tensor_form(void)
{
    ck_device *dev = ck_context_device(g_ctx);
    enum { M = 19, N = 13, K = 21 };
    uint16_t ha[M * K + 1], hb[K * N];
    float hd[M * N];
    gc_fill(ha, CK_DTYPE_BF16, M * K + 1);
    gc_fill(hb, CK_DTYPE_BF16, K * N);
    void *da = NULL, *db = NULL, *dd = NULL;
    CHECK_OK(ck_malloc(dev, sizeof ha, &da));
    CHECK_OK(ck_malloc(dev, sizeof hb, &db));
    CHECK_OK(ck_malloc(dev, sizeof hd, &dd));
    CHECK_OK(ck_memcpy_h2d(dev, da, ha, sizeof ha, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, db, hb, sizeof hb, NULL));
    ck_tensor a, b, d;
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, sd[2] = {M, N}, bstr[2] = {1, K};
    CHECK_OK(ck_tensor_init(&a, (char *)da + 2, CK_DTYPE_BF16, 2, sa, NULL)); /* misaligned */
    CHECK_OK(ck_tensor_init(&b, db, CK_DTYPE_BF16, 2, sb, bstr));             /* column-major */
    CHECK_OK(ck_tensor_init(&d, dd, CK_DTYPE_F32, 2, sd, NULL));
    ck_gemm_options o;
    ck_gemm_options_init(&o);
    o.alpha = 2;
    CHECK_OK(ck_gemm(g_ctx, &a, &b, NULL, &d, &o));
    CHECK_OK(ck_context_synchronize(g_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, hd, dd, sizeof hd, NULL));
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double ref = 0, mag = 0;
            for (int k = 0; k < K; ++k) {
                double x =
                    gc_get(ha, CK_DTYPE_BF16, 1 + i * K + k) * gc_get(hb, CK_DTYPE_BF16, k + j * K);
                ref += 2 * x;
                mag += fabs(2 * x);
            }
            CHECK_MSG(fabs(hd[i * N + j] - ref) <= 1e-5 * mag + 1e-6, "D(%d, %d) = %g, want %g", i,
                      j, hd[i * N + j], ref);
        }
    ck_free(dev, da);
    ck_free(dev, db);
    ck_free(dev, dd);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_layouts_16bit);
    RUN_TEST(test_dtypes);
    RUN_TEST(test_epilogue);
    RUN_TEST(test_instances);
    RUN_TEST(test_instances_8warp);
    RUN_TEST(test_sm90_tma_epilogue);
    RUN_TEST(test_repack);
    RUN_TEST(test_tensor_form);
    ck_context_destroy(g_ctx);
    (void)R;
    (void)C;
    return CK_TEST_REPORT();
}
