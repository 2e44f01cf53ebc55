/*
 * ck_attention's additive bias and ALiBi on the device CK_DEVICE chooses (the emulator in CI):
 * every broadcast pattern of the bias over [b, h, s_q, s_k] in f32, bf16 and f16, ALiBi slopes
 * with both alignments, with masks, GQA, the soft-cap and LSE, through the sm80 kernel (s_q >
 * 16) and the decode kernel (s_q <= 16); every element of O and LSE against the f64 reference;
 * bias shapes that do not broadcast and missing pointers refused with a sentence.
 */
#include "attn_harness.h"

/* Each broadcast pattern (bit x: full along dim x) in each type, odd shapes. */
static void test_bias_broadcast(void)
{
    static const int patterns[] = {0xF, 0xC, 0x8, 0x4, 0x3, 0x0, 0xA};
    static const ck_dtype types[] = {CK_DTYPE_F32, CK_DTYPE_BF16, CK_DTYPE_F16};
    for (int x = 0; x < 7; ++x) {
        acase c = ac_base(2, x % 2 ? 37 : 5, 70 + 3 * x, 4, 2, 64);
        c.bias = 16 | patterns[x];
        c.bias_dt = types[x % 3];
        c.dt = x % 2 ? CK_DTYPE_BF16 : CK_DTYPE_F16;
        c.lse = 1;
        c.mask = x % 3 == 1 ? CK_ATTN_MASK_CAUSAL : CK_ATTN_MASK_NONE;
        c.align = CK_ATTN_BOTTOM_RIGHT;
        c.bhsd = x % 2;
        ac_run(&c);
    }
}

/* ALiBi alone and with a bias, a window and the soft-cap, both alignments and both kernels. */
static void test_alibi(void)
{
    acase c = ac_base(1, 45, 100, 4, 1, 32);
    c.alibi = 1;
    c.lse = 1;
    ac_run(&c);
    c.mask = CK_ATTN_MASK_CAUSAL, c.align = CK_ATTN_BOTTOM_RIGHT;
    c.sq = 3;
    ac_run(&c);
    c = ac_base(2, 20, 33, 2, 2, 128);
    c.alibi = 1;
    c.bias = 16 | 0x5;
    c.bias_dt = CK_DTYPE_BF16;
    c.mask = CK_ATTN_MASK_WINDOW, c.wl = 12, c.wr = 3;
    c.softcap = 5.0f;
    c.lse = 1;
    ac_run(&c);
}

/* Bias problems refused with a sentence; execute without the bias or the slopes. */
static void test_bias_bad(void)
{
    ck_attention_problem p, g;
    ck_attention_problem_init(&g);
    g.b = 2, g.s_q = 4, g.s_k = 6, g.h_q = 2, g.h_k = 1, g.d = g.d_v = 64;
    ck_attention_plan *plan = NULL;
    int64_t ok[4] = {1, 2, 4, 6};
    p = g, memcpy(p.var.bias.dims, ok, sizeof ok), p.var.bias.dims[2] = 3; /* 3 != 1, 4 */
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "broadcast") != NULL);
    p = g, memcpy(p.var.bias.dims, ok, sizeof ok), p.var.bias.dims[0] = 4;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, memcpy(p.var.bias.dims, ok, sizeof ok), p.var.bias.dtype = CK_DTYPE_I32;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_UNSUPPORTED);
    p = g, memcpy(p.var.bias.dims, ok, sizeof ok), p.var.bias.strides[3] = -1;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, memcpy(p.var.bias.dims, ok, sizeof ok), p.varlen = 1, p.total_q = 8, p.total_k = 12;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_UNSUPPORTED);
    p = g, p.var.alibi = 2;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    CHECK(plan == NULL);

    ck_device *dev = ck_context_device(a_ctx);
    void *buf = NULL;
    CHECK_OK(ck_malloc(dev, 1 << 16, &buf));
    char *b = buf;
    ck_attention_args a;
    ck_attention_args_init(&a);
    a.q = b, a.k = b + 4096, a.v = b + 8192, a.o = b + 16384;
    p = g, memcpy(p.var.bias.dims, ok, sizeof ok), p.var.alibi = 1;
    CHECK_OK(ck_attention_plan_create(a_ctx, &p, &plan));
    if (plan) {
        CHECK_STATUS(ck_attention_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "bias") != NULL);
        a.bias = b + 32768;
        CHECK_STATUS(ck_attention_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "alibi") != NULL);
        a.bias = b + 32770; /* f32: 4-byte alignment */
        a.alibi_slopes = (const float *)(b + 40000);
        CHECK_STATUS(ck_attention_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
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
    RUN_TEST(test_bias_broadcast);
    RUN_TEST(test_alibi);
    RUN_TEST(test_bias_bad);
    ck_context_destroy(a_ctx);
    return CK_TEST_REPORT();
}
