/*
 * Split-K and stream-K (ck_gemm_plan_create_opt; sm90 family, sm90_stream_k_kernel.h) on the
 * emulator: stream-K over grids of 1 .. T blocks, so that the blocks' shares end at every kind
 * of point (mid-tile, at a tile's end, several blocks in one tile, a block over several
 * tiles), with batches, C, bias, the TMA store of D and odd M, N, K; every element against the
 * CPU reference, every element outside the product untouched, and a second run on the same
 * inputs bit-identical. The deterministic split-K again bit-identical; the atomic split-K
 * against the reference within the tolerance (its bits may differ between runs). Then the
 * policy's choice on an H100-sized grid (stream-K for a tile count just past a wave, nothing
 * for a full wave) and the refusals.
 */
#include "gemm_harness.h"

static const ck_gemm_order C = CK_GEMM_COL_MAJOR;

static void test_stream_k_boundaries(void)
{
    /* 130 x 70 x 504 bf16: 2 tiles of 128 x 128, 8 K steps: T = 16 iterations */
    static const int grids[] = {2, 3, 7, 16};
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; ++i) {
        gcase c = gc_base(130, 70, 504, CK_DTYPE_BF16, CK_DTYPE_F32);
        c.decomp = CK_GEMM_DECOMP_STREAM_K;
        c.grid = grids[i];
        c.bo = C;
        c.repeat = i % 2 == 1; /* the fix-ups sum in a fixed order: the same bits again */
        if (i % 3 == 2) {
            c.c = CK_DTYPE_F32;
            c.beta = -0.5f;
            c.bias = CK_GEMM_BIAS_ROW;
        }
        CHECK_MSG(gc_run(&c) == 0, "stream-K grid %d", grids[i]);
    }
    /* one tile, 10 K steps shared by 4 blocks (two of them wholly inside it); odd sizes */
    gcase c = gc_base(33, 45, 600, CK_DTYPE_BF16, CK_DTYPE_BF16);
    c.decomp = CK_GEMM_DECOMP_STREAM_K;
    c.grid = 4;
    c.bo = C;
    c.repeat = 1;
    gc_run(&c);
    /* batches x tiles x K steps in one line: 3 batches of 2 tiles, 3 K steps (K not a multiple of 64), 5 blocks;
     * C and bias per batch, A broadcast */
    c = gc_base(140, 30, 168, CK_DTYPE_F16, CK_DTYPE_F16);
    c.decomp = CK_GEMM_DECOMP_STREAM_K;
    c.grid = 5;
    c.batch = 3;
    c.bcast = 1;
    c.gap = 8;
    c.bo = C;
    c.c = CK_DTYPE_F16;
    c.beta = 1;
    c.bias = CK_GEMM_BIAS_COL;
    c.repeat = 1;
    gc_run(&c);
    /* the TMA store of D (f16 row-major, alpha only): 2 x 2 tiles, 4 K steps, 3 blocks */
    c = gc_base(136, 144, 256, CK_DTYPE_F16, CK_DTYPE_F16);
    c.decomp = CK_GEMM_DECOMP_STREAM_K;
    c.grid = 3;
    c.alpha = 0.75f;
    gc_run(&c);
    /* the device's own grid (the emulator's workers) */
    c = gc_base(70, 130, 320, CK_DTYPE_BF16, CK_DTYPE_F32);
    c.decomp = CK_GEMM_DECOMP_STREAM_K;
    c.bo = C;
    gc_run(&c);
}

static void test_split_k(void)
{
    /* the deterministic split-K through the options, repeated: the same bits */
    gcase c = gc_base(130, 70, 504, CK_DTYPE_BF16, CK_DTYPE_F32);
    c.decomp = CK_GEMM_DECOMP_SPLIT_K;
    c.bo = C;
    c.split = 3;
    c.repeat = 1;
    c.c = CK_DTYPE_F32;
    c.beta = 0.5f;
    gc_run(&c);
    /* atomics: 2, 3 and 8 ranges (one K step each), D f32 / bf16, C in place and bias,
     * batches; within the tolerance (the order of the additions varies) */
    static const int splits[] = {2, 3, 8};
    for (int i = 0; i < 3; ++i) {
        c = gc_base(i == 1 ? 67 : 130, i == 2 ? 200 : 70, 504, CK_DTYPE_BF16,
                    i == 1 ? CK_DTYPE_BF16 : CK_DTYPE_F32);
        c.decomp = CK_GEMM_DECOMP_SPLIT_K_ATOMIC;
        c.bo = C;
        c.split = splits[i];
        c.repeat = i == 0; /* runs, and the workspace is left at 0 for the next launch */
        if (i == 1) {
            c.c = CK_DTYPE_BF16;
            c.alias = 1;
            c.beta = -1;
            c.bias = CK_GEMM_BIAS_COL;
            c.act = CK_GEMM_ACT_RELU;
        }
        if (i == 2) {
            c.batch = 2;
            c.gap = 8;
        }
        CHECK_MSG(gc_run(&c) == 0, "atomic split-K %d", splits[i]);
    }
}

/* The policy on an H100's 132 multiprocessors: stream-K for 143 tiles of 128 x 128 (one wave
 * and a few: whole tiles would take two waves), none for 132 tiles (a full wave). */
static void test_policy(void)
{
    ck_device_props props;
    memset(&props, 0, sizeof props);
    props.backend = CK_BACKEND_CUDA;
    snprintf(props.target, sizeof props.target, "sm_90a");
    props.cc_major = 9;
    props.multiprocessors = 132;
    props.max_shared_per_block = 227 * 1024;
    const int64_t shapes[][3] = {{13 * 128, 11 * 128, 4096}, {12 * 128, 11 * 256, 4096}};
    for (int s = 0; s < 2; ++s) {
        ck_gemm_problem p;
        ck_gemm_problem_init(&p);
        p.m = shapes[s][0], p.n = shapes[s][1], p.k = shapes[s][2];
        p.b.order = CK_GEMM_COL_MAJOR;
        ck_gemm_prob prob;
        CHECK_OK(ck_gemm_prob_make(&p, &prob));
        ck_gemm_instance ins[64];
        double score[64];
        char reason[256];
        int n = ck_gemm_policy_rank(&prob, &props, ins, score, 64, reason, sizeof reason);
        CHECK(n > 0);
        char name[96] = "";
        if (n > 0)
            ck_gemm_instance_name(&ins[0], name, sizeof name);
        if (s == 0)
            CHECK_MSG(ins[0].decomp == CK_GEMM_DECOMP_STREAM_K, "143 tiles: first is %s", name);
        else
            CHECK_MSG(ins[0].decomp == 0 && ins[0].split_k <= 1, "132 tiles: first is %s", name);
    }
}

static void test_refusals(void)
{
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 40, p.n = 24, p.k = 64;
    p.b.order = CK_GEMM_COL_MAJOR;
    ck_gemm_plan_options o;
    ck_gemm_plan_options_init(&o);
    ck_gemm_plan *plan = NULL;
    o.decomp = CK_GEMM_DECOMP_SPLIT_K;
    o.split_k = 1;
    CHECK(ck_gemm_plan_create_opt(g_ctx, &p, &o, &plan) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "split_k = 1") != NULL, "%s", ck_last_error());
    o.split_k = 17;
    CHECK(ck_gemm_plan_create_opt(g_ctx, &p, &o, &plan) == CK_ERROR_INVALID_ARGUMENT);
    o.decomp = CK_GEMM_DECOMP_STREAM_K;
    o.split_k = 4;
    CHECK(ck_gemm_plan_create_opt(g_ctx, &p, &o, &plan) == CK_ERROR_INVALID_ARGUMENT);
    o.decomp = (ck_gemm_decomposition)9;
    CHECK(ck_gemm_plan_create_opt(g_ctx, &p, &o, &plan) == CK_ERROR_INVALID_ARGUMENT);
    /* i8 runs in the sm80 family only: the sm90 family's reason is in the sentence */
    p.a.dtype = p.b.dtype = CK_DTYPE_I8;
    p.d.dtype = CK_DTYPE_I32;
    o.decomp = CK_GEMM_DECOMP_STREAM_K;
    o.split_k = 0;
    CHECK(ck_gemm_plan_create_opt(g_ctx, &p, &o, &plan) == CK_ERROR_UNSUPPORTED);
    CHECK_MSG(strstr(ck_last_error(), "stream-K runs in the sm90 family") != NULL, "%s",
              ck_last_error());
    CHECK(plan == NULL);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_stream_k_boundaries);
    RUN_TEST(test_split_k);
    RUN_TEST(test_policy);
    RUN_TEST(test_refusals);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
