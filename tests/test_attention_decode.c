/*
 * ck_attention's decode kernel (s_q <= 16, a head group's rows per block) and split-KV (parts of
 * the key range combined through their LSEs) on the device CK_DEVICE chooses (the emulator in
 * CI): s_q from 1 to 16, GQA ratios 1, 2 and 8 (more rows than one block: two row chunks),
 * head dims 64 to 256 and d_v != d, every mask and alignment, s_k = 0, more parts than key
 * tiles (empty parts), paged K / V with split-KV (the benchmark's decode shape, small),
 * unaligned pointers (element-wise copies), other block shapes, rings of 3 and 4 stages; every
 * element of O and LSE against the f64 reference. The policy's choice of parts (whole waves of
 * resident blocks), its developer switches, and refusals.
 */
#include "attn_harness.h"

static acase dec(int64_t b, int64_t sq, int64_t sk, int64_t hq, int64_t hk, int64_t d, int splits)
{
    acase c = ac_base(b, sq, sk, hq, hk, d);
    c.inst.decode = 1;
    c.inst.splits = splits;
    c.lse = 1;
    return c;
}

static void test_decode_shapes(void)
{
    static const int64_t sqs[] = {1, 2, 5, 16, 3, 1};
    static const int64_t ratio[] = {1, 2, 8, 8, 2, 8};
    static const int splits[] = {1, 3, 1, 2, 7, 4};
    for (int x = 0; x < 6; ++x) {
        acase c = dec(2, sqs[x], 90 + 37 * x, 8, 8 / ratio[x], x % 2 ? 128 : 64, splits[x]);
        c.dt = x % 2 ? CK_DTYPE_F16 : CK_DTYPE_BF16;
        c.bhsd = x % 3 == 1;
        c.mask = x % 3 == 2 ? CK_ATTN_MASK_CAUSAL : CK_ATTN_MASK_NONE;
        c.align = CK_ATTN_BOTTOM_RIGHT;
        ac_run(&c);
    }
}

static void test_decode_dims(void)
{
    static const int64_t dims[][2] = {{96, 96}, {256, 256}, {192, 128}};
    for (int x = 0; x < 3; ++x) {
        acase c = dec(1, 2 + x, 150, 4, 2, dims[x][0], x % 2 ? 1 : 3);
        c.dv = dims[x][1];
        c.pad = x == 0 ? 3 : 0; /* element-wise copies of Q, K, V */
        ac_run(&c);
    }
    acase c = ac_base(2, 2, 70, 4, 1, 96); /* unaligned pointers through ck_attention (the
                                              kernel of pad 3 above) */
    c.shift = 1;
    c.lse = 1;
    ac_run(&c);
}

/* Masks (top-left causal: rows beyond the keys; windows), softcap, s_k = 0, empty parts. */
static void test_decode_masks(void)
{
    acase c = dec(1, 9, 60, 4, 1, 64, 2);
    c.mask = CK_ATTN_MASK_CAUSAL; /* top-left: row i sees keys 0..i */
    ac_run(&c);
    c.mask = CK_ATTN_MASK_WINDOW, c.wl = 20, c.wr = 0, c.align = CK_ATTN_BOTTOM_RIGHT;
    c.softcap = 3.0f;
    ac_run(&c);
    c = dec(1, 12, 5, 2, 1, 64, 3); /* bottom-right causal with s_q > s_k: rows that see none */
    c.mask = CK_ATTN_MASK_CAUSAL, c.align = CK_ATTN_BOTTOM_RIGHT;
    ac_run(&c);
    c = dec(2, 3, 0, 2, 2, 64, 2); /* no keys: O = 0, LSE = -inf */
    ac_run(&c);
    c = dec(1, 1, 100, 2, 1, 64, 20); /* one key tile, 19 empty parts */
    ac_run(&c);
}

/* The benchmark's decode shape in small: GQA 4, s_q 1, paged (page 64), split-KV; and the
 * policy's own choice for it. */
static void test_decode_paged(void)
{
    acase c = dec(3, 1, 300, 8, 2, 128, 3);
    int lk[3] = {300, 129, 64};
    c.page = 64;
    c.seqlens = 1;
    memcpy(c.lk, lk, sizeof lk);
    c.align = CK_ATTN_BOTTOM_RIGHT, c.mask = CK_ATTN_MASK_CAUSAL;
    ac_run(&c);
    c.inst.decode = 0; /* the policy's instance */
    c.alibi = 1;
    ac_run(&c);
}

/* Other decode block shapes (ck prof attention --splitkv N --instance RxNxW) and bad ones. */
static void test_decode_instances(void)
{
    acase c = dec(2, 3, 200, 8, 2, 64, 2);
    c.inst.tile_m = 32, c.inst.tile_n = 16, c.inst.warps = 2;
    ac_run(&c);
    c = dec(1, 1, 300, 4, 1, 128, 1);
    c.inst.tile_m = 16, c.inst.tile_n = 16, c.inst.warps = 8;
    c.page = 64;
    ac_run(&c);
    ck_attention_problem p;
    ac_problem(&c, &p);
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attention_plan *plan = NULL;
    ck_attn_instance bad[] = {{16, 48, 4, 1, 1, 0}, {16, 32, 3, 1, 1, 0}, {80, 32, 4, 1, 1, 0}};
    for (int x = 0; x < 3; ++x)
        CHECK_STATUS(ck_attn_plan_create_instance(a_ctx, &prob, &bad[x], &plan),
                     CK_ERROR_INVALID_ARGUMENT);
    ck_attn_instance big = {16, 64, 8, 1, 1, 0}; /* 512 KiB of K / V stages */
    CHECK_STATUS(ck_attn_plan_create_instance(a_ctx, &prob, &big, &plan), CK_ERROR_UNSUPPORTED);
    p.var.page_size = 16, p.var.max_pages = 19, p.var.num_pages = 40;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attn_instance straddle = {16, 32, 4, 1, 1, 0}; /* 32 keys per warp over pages of 16 */
    CHECK_OK(ck_attn_plan_create_instance(a_ctx, &prob, &straddle, &plan));
    ck_attention_plan_destroy(plan);
}

/* Rings of 3 and 4 stages (CK_ATTN_DECODE_STAGES): paged with a page per warp (the page numbers
 * read a tile ahead) and with pages of 16 under 32 keys per warp (row by row), a ring that wraps
 * many times, masks, soft-cap; and depths the kernel does not take. */
static void test_decode_stages(void)
{
    acase c = dec(3, 1, 700, 8, 2, 128, 2);
    int lk[3] = {700, 257, 63};
    c.page = 64, c.seqlens = 1;
    memcpy(c.lk, lk, sizeof lk);
    c.inst.stages = 3;
    ac_run(&c);
    c = dec(2, 3, 333, 4, 2, 64, 1); /* 11 tiles of 32 keys through 4 stages */
    c.inst.tile_m = 16, c.inst.tile_n = 16, c.inst.warps = 2, c.inst.stages = 4;
    c.mask = CK_ATTN_MASK_CAUSAL, c.align = CK_ATTN_BOTTOM_RIGHT, c.bhsd = 1;
    ac_run(&c);
    c = dec(2, 2, 150, 4, 1, 64, 3); /* pages of 16, 32 keys per warp: rows from their pages */
    c.page = 16;
    c.inst.tile_m = 16, c.inst.tile_n = 32, c.inst.warps = 2, c.inst.stages = 3;
    c.softcap = 5.0f;
    ac_run(&c);
    ck_attention_problem p;
    ac_problem(&c, &p);
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attention_plan *plan = NULL;
    ck_attn_instance bad[] = {{16, 16, 4, 1, 1, 5}, {16, 16, 4, 1, 1, 1}};
    for (int x = 0; x < 2; ++x)
        CHECK_STATUS(ck_attn_plan_create_instance(a_ctx, &prob, &bad[x], &plan),
                     CK_ERROR_INVALID_ARGUMENT);
}

static void test_decode_policy(void)
{
    ck_device_props props;
    memset(&props, 0, sizeof props);
    props.backend = CK_BACKEND_CUDA, props.cc_major = 9, props.multiprocessors = 132;
    props.max_shared_per_block = 227 * 1024;
    props.shared_per_sm = 228 * 1024, props.max_threads_per_sm = 2048;
    static const char *const sw[3] = {"CK_ATTN_DECODE_SPLITS", "CK_ATTN_DECODE_STAGES",
                                      "CK_ATTN_DECODE_INSTANCE"};
    char *saved[3]; /* the switches the run was started with (a GPU run may set them) */
    for (int x = 0; x < 3; ++x) {
        saved[x] = getenv(sw[x]) ? strdup(getenv(sw[x])) : NULL;
        unsetenv(sw[x]);
    }
    ck_attention_problem p;
    ck_attention_problem_init(&p);
    p.b = 1, p.s_q = 1, p.s_k = 8192, p.h_q = 32, p.h_k = 8, p.d = p.d_v = 128;
    ck_attn_prob prob;
    ck_attn_instance in;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    CHECK_OK(ck_attn_decode_policy(&prob, &props, 0, &in));
    CHECK_MSG(in.splits > 1, "b1 h_k 8 s_k 8192: %d parts", in.splits);
    /* the shape: 512 (batch, head) units, six one-warp blocks of 37 KiB per SM: one part
     * keeps 4 blocks in flight on every SM, more parts only add rounds (on the H200: 3540 GB/s
     * for 1 part, 3015 for 2, 3482 for 3, 3605 for 4; bench/RESULTS.md, run R) */
    p.b = 64;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    CHECK_OK(ck_attn_decode_policy(&prob, &props, 0, &in));
    CHECK_MSG(in.splits == 1, "b64 h_k 8: %d parts", in.splits);
    CHECK(in.tile_m == 16 && in.tile_n == 32 && in.warps == 1 && in.decode == 1);
    /* 64 units of 1024 key tiles: 8 parts put 4 blocks on each SM (4049 GB/s on the H200, against
     * 3676 for 12 parts and 2114 for 4) */
    p.b = 8, p.s_k = 32768;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    CHECK_MSG(ck_attn_decode_splits(&prob, &in, 132, 6) == 8, "b8 s_k 32768: %d parts",
              ck_attn_decode_splits(&prob, &in, 132, 6));
    p.s_k = 8192;
    static const int64_t bs[] = {1, 3, 16, 40, 64, 100, 128};
    for (int x = 0; x < 7; ++x) { /* every batch: an SM's 3 resident blocks busy, unless the keys
                                   * run out */
        p.b = bs[x];
        CHECK_OK(ck_attn_prob_make(&p, &prob));
        int s = ck_attn_decode_splits(&prob, &in, 132, 3);
        int64_t on_sm = (8 * bs[x] * s + 131) / 132;
        CHECK_MSG(s >= 1 && s <= 64 && (on_sm >= 3 || s == 64), "b%lld: %d parts, %lld per SM",
                  (long long)bs[x], s, (long long)on_sm);
    }
    p.b = 64, p.s_k = 100; /* two key tiles: not worth a part each */
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    CHECK(ck_attn_decode_splits(&prob, &in, 132, 3) <= 2);
    p.b = 1, p.s_k = 8192; /* a window of 100 keys: at most five 32-key tiles, whatever the batch */
    p.mask = CK_ATTN_MASK_WINDOW, p.window_left = 100, p.window_right = 0;
    p.align = CK_ATTN_BOTTOM_RIGHT;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    CHECK_MSG(ck_attn_decode_splits(&prob, &in, 132, 3) <= 5, "window: %d parts",
              ck_attn_decode_splits(&prob, &in, 132, 3));
    p.b = 64, p.mask = CK_ATTN_MASK_NONE;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    /* the developer switches; values outside their range are ignored */
    setenv("CK_ATTN_DECODE_SPLITS", "5", 1);
    setenv("CK_ATTN_DECODE_STAGES", "3", 1);
    setenv("CK_ATTN_DECODE_INSTANCE", "32x2", 1);
    CHECK_OK(ck_attn_decode_policy(&prob, &props, 0, &in));
    CHECK_MSG(in.splits == 5 && in.stages == 3 && in.tile_n == 32 && in.warps == 2,
              "switches: %d parts, %d stages, n%d w%d", in.splits, in.stages, in.tile_n,
              in.warps);
    CHECK_OK(ck_attn_decode_policy(&prob, &props, 7, &in)); /* the caller's parts first */
    CHECK(in.splits == 7);
    setenv("CK_ATTN_DECODE_SPLITS", "65", 1);
    setenv("CK_ATTN_DECODE_STAGES", "5", 1);
    setenv("CK_ATTN_DECODE_INSTANCE", "24x2", 1);
    CHECK_OK(ck_attn_decode_policy(&prob, &props, 0, &in));
    CHECK_MSG(in.splits == 1 && in.stages == 2 && in.tile_n == 32 && in.warps == 1,
              "ignored switches: %d parts, %d stages, n%d w%d", in.splits, in.stages, in.tile_n,
              in.warps);
    for (int x = 0; x < 3; ++x) {
        if (saved[x])
            setenv(sw[x], saved[x], 1);
        else
            unsetenv(sw[x]);
        free(saved[x]);
    }
    CHECK_STATUS(ck_attn_decode_policy(&prob, &props, 65, &in), CK_ERROR_INVALID_ARGUMENT);
    p.s_q = 17;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    CHECK_STATUS(ck_attn_decode_policy(&prob, &props, 2, &in), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "s_q") != NULL);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &a_ctx));
    if (!a_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)a_rng);
    RUN_TEST(test_decode_shapes);
    RUN_TEST(test_decode_dims);
    RUN_TEST(test_decode_masks);
    RUN_TEST(test_decode_paged);
    RUN_TEST(test_decode_instances);
    RUN_TEST(test_decode_stages);
    RUN_TEST(test_decode_policy);
    ck_context_destroy(a_ctx);
    return CK_TEST_REPORT();
}
