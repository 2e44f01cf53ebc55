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

/* Every case one kernel configuration (bf16 x bf16 -> f32, B column-major, C f32 and a row
 * bias, K a multiple of 16 and N odd: the same parameter table) but for the batched one, so that
 * the emulator compiles few kernels; beta 0 leaves C out at run time. */
static gcase sk_case(int64_t m, int64_t n, int64_t k, ck_gemm_decomposition d, int grid)
{
    gcase c = gc_base(m, n, k, CK_DTYPE_BF16, CK_DTYPE_F32);
    c.decomp = d;
    c.grid = grid;
    c.bo = CK_GEMM_COL_MAJOR;
    c.c = CK_DTYPE_F32;
    c.bias = CK_GEMM_BIAS_ROW;
    return c;
}

static void test_stream_k_boundaries(void)
{
    /* 130 x 71 x 256: 2 tiles of 128 x 128, 4 K steps, T = 8 iterations. Grid 3: shares
     * [0, 2), [2, 5), [5, 8): one across the tiles' boundary; 4: two blocks per tile, shares
     * ending at the tile's end; 8: one step each, 4 blocks per tile. */
    static const int grids[] = {3, 4, 8};
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; ++i) {
        gcase c = sk_case(130, 71, 256, CK_GEMM_DECOMP_STREAM_K, grids[i]);
        c.beta = i % 2 ? -0.5f : 0.0f;
        c.alpha = 1.5f;
        c.repeat = i == 0;
        CHECK_MSG(gc_run(&c) == 0, "stream-K grid %d", grids[i]);
    }
    /* one tile, 10 K steps (K 608: the last step partial) shared by 4 blocks; odd M */
    gcase c = sk_case(33, 45, 608, CK_GEMM_DECOMP_STREAM_K, 4);
    c.beta = 1;
    c.repeat = 1; /* the fix-ups sum in a fixed order: the same bits on a second run */
    gc_run(&c);
    /* 2 x 2 tiles, 3 K steps, 5 blocks (shares 0, 2, 4, 7, 9, 12): shares across tile ends and
     * into the next tile row; then the device's own grid (the emulator's workers) */
    c = sk_case(200, 141, 160, CK_GEMM_DECOMP_STREAM_K, 5);
    gc_run(&c);
    c = sk_case(70, 131, 320, CK_GEMM_DECOMP_STREAM_K, 0);
    gc_run(&c);
    /* batches x tiles x K steps in one line: 3 batches of 2 tiles, 3 K steps, 5 blocks; C and
     * bias per batch, A broadcast */
    c = sk_case(140, 31, 160, CK_GEMM_DECOMP_STREAM_K, 5);
    c.batch = 3;
    c.bcast = 1;
    c.gap = 8;
    c.beta = 1;
    gc_run(&c);
}

static void test_split_k(void)
{
    /* the deterministic split-K through the options: the same bits again */
    gcase c = sk_case(130, 71, 512, CK_GEMM_DECOMP_SPLIT_K, 0);
    c.split = 3;
    c.beta = 0.5f;
    c.repeat = 1;
    gc_run(&c);
    /* atomics: 3 and 4 ranges (4: one K step each), with C and bias; within the tolerance
     * (the order of the additions varies); the first run twice: the last split leaves the
     * workspace at 0 for the next launch */
    static const int splits[] = {3, 4};
    for (int i = 0; i < 2; ++i) {
        c = sk_case(i ? 67 : 130, i ? 201 : 71, 256, CK_GEMM_DECOMP_SPLIT_K_ATOMIC, 0);
        c.split = splits[i];
        c.beta = i ? -1.0f : 0.0f;
        c.repeat = i == 0;
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
        /* stream-K measured at half its model on the H100 (sm90.c's score): whole tiles
         * first in both; for 143 tiles stream-K is still offered (ck tune gemm, --stream-k) */
        CHECK_MSG(ins[0].decomp == 0 && ins[0].split_k <= 1, "%d tiles: first is %s",
                  s ? 132 : 143, name);
        int offered = 0;
        for (int i = 0; i < n; ++i)
            offered |= ins[i].decomp == CK_GEMM_DECOMP_STREAM_K;
        CHECK_MSG(offered == (s == 0), "%d tiles: stream-K %s", s ? 132 : 143,
                  offered ? "offered" : "not offered");
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
