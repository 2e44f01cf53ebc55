/*
 * ck_attention with a paged K / V cache on the device CK_DEVICE chooses (the emulator in CI):
 * pools of pages in a random order behind the block table, page sizes 16, 24, 32, 40 and 64
 * (key tiles inside one page, and tiles straddling pages: rows addressed one by one),
 * per-sequence key counts (seqlens_k) that end inside a page and empty sequences, both layouts
 * of the pools, GQA, masks, through the sm80 kernel (s_q > 16) and the decode kernel; every
 * element of O and LSE against the f64 reference reading through the same table. A table entry
 * past the pool makes that sequence's O and LSE NaN (and nothing reads outside the pool: run
 * under ASan); problems and pointers refused with a sentence.
 */
#include "attn_harness.h"

static void test_paged(void)
{
    /* 24, 40: rows past a multiple of 16 (the decode kernel's 16-key warp tiles straddle
     * pages); 32: the sm80 kernel's 64-key tile over two pages; 64: one page per tile */
    static const int pages[] = {24, 32, 40, 64};
    for (int x = 0; x < 4; ++x) {
        acase c = ac_base(3, x % 2 ? 40 : 7, 150, 4, x % 2 ? 4 : 1, x == 2 ? 128 : 64);
        int lk[3] = {150, 37, x == 3 ? 0 : 65};
        c.page = pages[x];
        c.seqlens = 1;
        memcpy(c.lk, lk, sizeof lk);
        c.mask = x < 2 ? CK_ATTN_MASK_CAUSAL : CK_ATTN_MASK_NONE;
        c.align = CK_ATTN_BOTTOM_RIGHT;
        c.lse = 1;
        c.bhsd = x % 2;
        c.dt = x % 3 ? CK_DTYPE_BF16 : CK_DTYPE_F16;
        ac_run(&c);
    }
    /* no seqlens_k: every sequence s_k keys; with a bias */
    acase c = ac_base(2, 20, 70, 2, 1, 32);
    c.page = 16;
    c.bias = 16 | 0xF;
    c.lse = 1;
    ac_run(&c);
}

/* A block table entry past the pool: that sequence's rows NaN, the others right. */
static void test_bad_page(void)
{
    acase c = ac_base(2, 30, 64, 2, 1, 64);
    c.page = 32;
    c.bad_page = 1;
    c.lse = 1;
    ac_run(&c);
    c.sq = 2; /* the decode kernel */
    ac_run(&c);
}

static void test_paged_refused(void)
{
    ck_attention_problem p, g;
    ck_attention_problem_init(&g);
    g.b = 2, g.s_q = 4, g.s_k = 100, g.h_q = 2, g.h_k = 1, g.d = g.d_v = 64;
    g.var.page_size = 32, g.var.num_pages = 8, g.var.max_pages = 4;
    ck_attention_plan *plan = NULL;
    p = g, p.var.page_size = 15;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "page_size") != NULL);
    p = g, p.var.page_size = 8;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_UNSUPPORTED);
    p = g, p.var.max_pages = 3; /* 96 < 100 keys */
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.var.num_pages = 0;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.varlen = 1, p.total_q = 8, p.total_k = 100;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_UNSUPPORTED);
    p = g, p.s_q = 40;
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attn_instance in = {64, 64, 4, 0, 1, 0}; /* a key tile of 64 over pages of 32: row by row */
    CHECK_OK(ck_attn_plan_create_instance(a_ctx, &prob, &in, &plan));
    ck_attention_plan_destroy(plan);
    plan = NULL;

    CHECK_OK(ck_attention_plan_create(a_ctx, &g, &plan));
    ck_device *dev = ck_context_device(a_ctx);
    void *buf = NULL;
    CHECK_OK(ck_malloc(dev, 1 << 18, &buf));
    char *b = buf;
    ck_attention_args a;
    ck_attention_args_init(&a);
    a.q = b, a.k = b + 4096, a.v = b + 4096 + 65536, a.o = b + 4096 + 2 * 65536;
    if (plan) {
        CHECK_STATUS(ck_attention_plan_execute(plan, &a), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "block_table") != NULL);
        a.block_table = (const int32_t *)(b + 200000);
        a.o = b + 4096 + 65536; /* O overlaps V's pool (8 pages) */
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
    RUN_TEST(test_paged);
    RUN_TEST(test_bad_page);
    RUN_TEST(test_paged_refused);
    ck_context_destroy(a_ctx);
    return CK_TEST_REPORT();
}
