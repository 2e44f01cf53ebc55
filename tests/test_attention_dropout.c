/*
 * ck_attention's dropout on the device CK_DEVICE chooses (the emulator in CI): Philox4x32-10
 * against the known-answer vectors of its authors (Random123), the kernels' dropout (sm80 and
 * decode, with split-KV, paged K / V, masks) against the f64 reference applying the same keep
 * decisions to every element of O and LSE, the returned mask checked element by element (and
 * its kept fraction near 1 - p), the same seed giving the same bits twice and another seed
 * other bits, and bad probabilities refused.
 */
#include "attn_harness.h"

/* Random123's kat_vectors for philox4x32 with 10 rounds. */
static void test_philox_kat(void)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int v = 0; v < 3; ++v) {
        uint32_t c[4] = {kat[v][0], kat[v][1], kat[v][2], kat[v][3]};
        ck_attn_philox4x32(c, kat[v][4], kat[v][5]);
        for (int w = 0; w < 4; ++w)
            CHECK_MSG(c[w] == kat[v][6 + w], "vector %d word %d: 0x%08x, want 0x%08x", v, w, c[w],
                      kat[v][6 + w]);
    }
    CHECK(ck_attn_dropout_threshold(0.0f) == 0u);
    CHECK(ck_attn_dropout_threshold(0.5f) == 0x80000000u);
}

static void test_dropout_kernels(void)
{
    acase c = ac_base(2, 37, 70, 4, 2, 64); /* sm80 */
    c.dropout = 0.3f;
    c.dmask = 1;
    c.lse = 1;
    c.mask = CK_ATTN_MASK_CAUSAL, c.align = CK_ATTN_BOTTOM_RIGHT;
    ac_run(&c);
    c = ac_base(1, 130, 33, 2, 1, 128); /* two query tiles, f16, a bias */
    c.dropout = 0.1f;
    c.dmask = 1;
    c.dt = CK_DTYPE_F16;
    c.bias = 16 | 0xC;
    ac_run(&c);
    c = ac_base(2, 3, 150, 8, 2, 64); /* decode, split-KV */
    c.inst.decode = 1, c.inst.splits = 3;
    c.dropout = 0.5f;
    c.dmask = 1;
    c.lse = 1;
    ac_run(&c);
    c = ac_base(2, 1, 100, 4, 4, 128); /* decode, paged */
    c.page = 32;
    c.seqlens = 1, c.lk[0] = 77, c.lk[1] = 100;
    c.dropout = 0.2f;
    c.dmask = 1;
    ac_run(&c);
    c = ac_base(2, 21, 50, 2, 1, 32); /* varlen, without the mask */
    int lq[2] = {21, 9}, lk[2] = {17, 50};
    c.varlen = 1;
    memcpy(c.lq, lq, sizeof lq), memcpy(c.lk, lk, sizeof lk);
    c.dropout = 0.4f;
    c.lse = 1;
    ac_run(&c);
}

/* Run one problem with random inputs and the given seed; O's bits to out (n halves). */
static void run_seed(const ck_attention_problem *p, uint64_t seed, uint16_t *out, size_t n,
                     uint8_t *mask)
{
    ck_device *dev = ck_context_device(a_ctx);
    uint64_t keep_rng = a_rng;
    a_rng = 0x1234567ull; /* the same inputs every call */
    uint16_t *h = malloc(n * 2);
    ac_fill(h, n, p->dtype);
    a_rng = keep_rng;
    void *d = NULL;
    size_t nm = (size_t)(p->b * p->h_q * p->s_q * p->s_k);
    CHECK_OK(ck_malloc(dev, 4 * n * 2 + nm, &d));
    char *b = d;
    CHECK_OK(ck_memcpy_h2d(dev, b, h, n * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, b + n * 2, h, n * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, b + 2 * n * 2, h, n * 2, NULL));
    ck_attention_args a;
    ck_attention_args_init(&a);
    a.q = b, a.k = b + n * 2, a.v = b + 2 * n * 2, a.o = b + 3 * n * 2;
    a.dropout_seed = seed, a.dropout_offset = 7;
    a.dropout_mask = (uint8_t *)(b + 4 * n * 2);
    CHECK_OK(ck_attention(a_ctx, p, &a));
    CHECK_OK(ck_context_synchronize(a_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, out, a.o, n * 2, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, mask, a.dropout_mask, nm, NULL));
    ck_free(dev, d);
    free(h);
}

/* Same seed: the same bits; another seed: others; the kept fraction near 1 - p. */
static void test_dropout_determinism(void)
{
    ck_attention_problem p;
    ck_attention_problem_init(&p);
    p.b = 1, p.s_q = 64, p.s_k = 64, p.h_q = 2, p.h_k = 2, p.d = p.d_v = 64;
    p.var.dropout_p = 0.25f;
    size_t n = 64 * 2 * 64, nm = 2 * 64 * 64;
    uint16_t *o1 = malloc(n * 2), *o2 = malloc(n * 2), *o3 = malloc(n * 2);
    uint8_t *m1 = malloc(nm), *m2 = malloc(nm), *m3 = malloc(nm);
    run_seed(&p, 42, o1, n, m1);
    run_seed(&p, 42, o2, n, m2);
    run_seed(&p, 43, o3, n, m3);
    CHECK(memcmp(o1, o2, n * 2) == 0 && memcmp(m1, m2, nm) == 0);
    CHECK(memcmp(o1, o3, n * 2) != 0 && memcmp(m1, m3, nm) != 0);
    size_t kept = 0;
    for (size_t x = 0; x < nm; ++x)
        kept += m1[x];
    double frac = (double)kept / (double)nm; /* 8192 draws: sigma 0.0048 */
    CHECK_MSG(fabs(frac - 0.75) < 0.03, "kept fraction %.4f, want 0.75", frac);
    free(o1), free(o2), free(o3), free(m1), free(m2), free(m3);
}

static void test_dropout_refused(void)
{
    ck_attention_problem p;
    ck_attention_problem_init(&p);
    p.b = 1, p.s_q = 4, p.s_k = 4, p.h_q = 1, p.h_k = 1, p.d = p.d_v = 64;
    ck_attention_plan *plan = NULL;
    float bad[] = {1.0f, -0.1f, (float)NAN, 2.0f};
    for (int x = 0; x < 4; ++x) {
        p.var.dropout_p = bad[x];
        CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "dropout_p") != NULL);
    }
    CHECK(plan == NULL);

    /* execute: the mask overlapping O, O overlapping the bias */
    p.var.dropout_p = 0.5f;
    p.var.bias.dims[0] = p.var.bias.dims[1] = p.var.bias.dims[2] = 1, p.var.bias.dims[3] = 4;
    CHECK_OK(ck_attention_plan_create(a_ctx, &p, &plan));
    ck_device *dev = ck_context_device(a_ctx);
    void *buf = NULL;
    CHECK_OK(ck_malloc(dev, 1 << 14, &buf));
    char *b = buf;
    ck_attention_args a;
    ck_attention_args_init(&a);
    a.q = b, a.k = b + 1024, a.v = b + 2048, a.o = b + 3072, a.bias = b + 8192;
    a.dropout_mask = (uint8_t *)(b + 3072 + 100);
    if (plan) {
        CHECK_STATUS(ck_attention_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "dropout_mask overlaps o") != NULL);
        a.dropout_mask = (uint8_t *)(b + 12288);
        a.bias = b + 3072 + 64;
        CHECK_STATUS(ck_attention_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "o overlaps bias") != NULL);
        a.bias = b + 8192;
        CHECK_OK(ck_attention_plan_execute(plan, &a));
        CHECK_OK(ck_context_synchronize(a_ctx));
    }
    ck_attention_plan_destroy(plan);
    ck_free(dev, buf);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &a_ctx));
    if (!a_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)a_rng);
    RUN_TEST(test_philox_kat);
    RUN_TEST(test_dropout_kernels);
    RUN_TEST(test_dropout_determinism);
    RUN_TEST(test_dropout_refused);
    ck_context_destroy(a_ctx);
    return CK_TEST_REPORT();
}
