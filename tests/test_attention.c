/*
 * ck_attention on the device CK_DEVICE chooses (the emulator in CI): every mask and alignment,
 * MHA / GQA / MQA, every head dim (and d_v != d), bf16 and f16, BSHD and BHSD with padded rows,
 * LSE, odd sequence lengths (1, 17, 64, 130: not multiples of the tiles), fully masked rows
 * (O = 0, LSE = -inf), element-wise copies (odd strides, unaligned pointers through
 * ck_attention); every element of O and LSE against the f64 reference with the tolerance
 * derived from the types, O's padding untouched.
 * The full cross product is too slow for the emulator, so each axis is covered by a sample of
 * the others.
 */
#include "attn_harness.h"

/* Every mask x alignment on odd shapes, s_q < s_k and s_q > s_k, GQA ratio 2, with LSE. */
static void test_masks(void)
{
    static const int64_t shapes[][2] = {{17, 130}, {130, 17}, {64, 64}, {1, 77}};
    struct {
        ck_attn_mask m;
        int64_t wl, wr;
    } masks[] = {{CK_ATTN_MASK_NONE, 0, 0},     {CK_ATTN_MASK_CAUSAL, 0, 0},
                 {CK_ATTN_MASK_WINDOW, 5, 3},   {CK_ATTN_MASK_WINDOW, -1, 0},
                 {CK_ATTN_MASK_WINDOW, 20, -1}, {CK_ATTN_MASK_WINDOW, 0, 0}};
    int s = 0;
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; ++m)
        for (int al = 0; al < 2; ++al, ++s) {
            if (masks[m].m == CK_ATTN_MASK_NONE && al)
                continue;
            const int64_t *sh = shapes[s % 4];
            acase c = ac_base(1, sh[0], sh[1], 2, 1, 64);
            c.mask = masks[m].m;
            c.align = al ? CK_ATTN_BOTTOM_RIGHT : CK_ATTN_TOP_LEFT;
            c.wl = masks[m].wl, c.wr = masks[m].wr;
            c.lse = 1;
            c.bhsd = s % 2;
            ac_run(&c);
        }
}

/* Every head dim (d_v = d and the MLA-like 192 / 128), both types, MHA and MQA,
 * BSHD / BHSD, padded rows, a peaked softmax (scale 1) and the default scale. */
static void test_head_dims(void)
{
    static const int64_t dims[][2] = {{32, 32},   {64, 64},   {96, 96},   {128, 128},
                                      {192, 192}, {256, 256}, {192, 128}, {64, 128}};
    for (int i = 0; i < 8; ++i) {
        acase c = ac_base(i == 3 ? 2 : 1, 17 + 16 * (i % 3), 30 + 20 * (i % 4), 2, i % 3 ? 1 : 2,
                          dims[i][0]);
        c.dv = dims[i][1];
        c.dt = i % 2 ? CK_DTYPE_F16 : CK_DTYPE_BF16;
        c.bhsd = i % 2 == 0;
        c.pad = i % 3 == 2 ? 8 : i == 3 ? 3 : 0; /* 3: element-wise copies, single stores */
        c.scale = i % 4 == 1 ? 1.0f : 0.0f;
        c.mask = i % 3 == 1 ? CK_ATTN_MASK_CAUSAL : CK_ATTN_MASK_NONE;
        c.align = CK_ATTN_BOTTOM_RIGHT;
        c.lse = i % 2;
        ac_run(&c);
    }
}

/* Longer rows than the tiles: GQA ratio 8 (h_q 8, h_k 1) over 2 batches and 4 key tiles, then
 * two query tiles of 128 rows over 3 key tiles (causal): the online softmax's rescaling across
 * tiles. */
static void test_multi_tile(void)
{
    acase c = ac_base(2, 20, 200, 8, 1, 32);
    c.lse = 1;
    c.scale = 0.5f;
    ac_run(&c);
    c = ac_base(1, 150, 150, 2, 2, 128);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.lse = 1;
    c.dt = CK_DTYPE_F16;
    ac_run(&c);
}

/* Variable-length sequences (group mode): empty sequences on either side, s_q > s_k with
 * bottom-right causal rows that see nothing, GQA, LSE [h_q, total_q], both layouts; and grid
 * hints (s_q, s_k) shorter than the sequences: each block walks several query tiles. */
static void test_varlen(void)
{
    acase c = ac_base(5, 70, 80, 4, 2, 64);
    int lq[5] = {17, 0, 70, 1, 40}, lk[5] = {30, 12, 80, 0, 9};
    c.varlen = 1;
    memcpy(c.lq, lq, sizeof lq), memcpy(c.lk, lk, sizeof lk);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.lse = 1;
    ac_run(&c);
    c = ac_base(3, 16, 16, 2, 1, 32);
    int lq2[3] = {150, 3, 64}, lk2[3] = {100, 130, 64};
    c.varlen = 1;
    memcpy(c.lq, lq2, sizeof lq2), memcpy(c.lk, lk2, sizeof lk2);
    c.mask = CK_ATTN_MASK_WINDOW, c.wl = 7, c.wr = 2;
    c.bhsd = 1;
    c.dt = CK_DTYPE_F16;
    c.lse = 1;
    ac_run(&c);
}

/* The logit soft-cap (a peaked softmax: scale 1, cap 2 and 30) with a causal mask and a window. */
static void test_softcap(void)
{
    acase c = ac_base(1, 33, 70, 2, 1, 64);
    c.softcap = 2.0f;
    c.scale = 1.0f;
    c.lse = 1;
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    ac_run(&c);
    c.softcap = 30.0f;
    c.mask = CK_ATTN_MASK_WINDOW, c.wl = 9, c.wr = 4;
    ac_run(&c);
}

/* Other block shapes than the policy's: 8 warps of 16 rows, 2 warps of 64 rows (4 mma tiles
 * each) with a 128-row key tile, 1 warp with a 16-row key tile; and instances refused. */
static void test_instances(void)
{
    acase c = ac_base(1, 140, 90, 2, 1, 64);
    c.inst = (ck_attn_instance){128, 64, 8, 0, 1, 0};
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.lse = 1;
    ac_run(&c);
    c = ac_base(1, 70, 150, 1, 1, 32);
    c.inst = (ck_attn_instance){128, 128, 2, 0, 1, 0};
    ac_run(&c);
    c = ac_base(1, 20, 40, 1, 1, 32);
    c.inst = (ck_attn_instance){16, 16, 1, 0, 1, 0};
    c.lse = 1;
    ac_run(&c);
    ck_attention_problem p;
    ac_problem(&c, &p);
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attention_plan *plan = NULL;
    ck_attn_instance bad[] = {
        {48, 64, 4, 0, 1, 0}, {64, 24, 4, 0, 1, 0}, {64, 64, 3, 0, 1, 0}, {1024, 64, 4, 0, 1, 0}};
    for (int i = 0; i < 4; ++i)
        CHECK_STATUS(ck_attn_plan_create_instance(a_ctx, &prob, &bad[i], &plan),
                     CK_ERROR_INVALID_ARGUMENT);
    p.d = p.d_v = 256;
    memset(&p.q, 0, sizeof p.q), memset(&p.k, 0, sizeof p.k); /* packed BSHD */
    memset(&p.v, 0, sizeof p.v), memset(&p.o, 0, sizeof p.o);
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attn_instance big = {256, 128, 4, 0, 1, 0}; /* 128 K + 2 x 128 K of shared memory */
    CHECK_STATUS(ck_attn_plan_create_instance(a_ctx, &prob, &big, &plan), CK_ERROR_UNSUPPORTED);
    CHECK(plan == NULL);
}

/* Pointers that are not 16-byte aligned (nor O 4-byte aligned): the plan refuses them, the
 * one-call form takes element-wise copies and stores. */
static void test_unaligned(void)
{
    acase c = ac_base(1, 21, 37, 2, 1, 64);
    c.shift = 1;
    c.lse = 1;
    c.mask = CK_ATTN_MASK_CAUSAL;
    ac_run(&c);
}

/* Rows that see no key: bottom-right causal with s_q > s_k, a window right of every key, and
 * s_k = 0: O = 0 and LSE = -inf. */
static void test_fully_masked(void)
{
    acase c = ac_base(1, 40, 9, 1, 1, 64);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.lse = 1;
    CHECK(ac_run(&c) == 0);
    c = ac_base(1, 20, 10, 1, 1, 32);
    c.mask = CK_ATTN_MASK_WINDOW;
    c.wl = 2, c.wr = 0; /* rows 12 .. 19 see nothing, rows 10, 11 see part */
    c.lse = 1;
    CHECK(ac_run(&c) == 0);
    c = ac_base(2, 5, 0, 2, 1, 64);
    c.lse = 1;
    CHECK(ac_run(&c) == 0);
}

/* Every argument refused with a status and a sentence. */
static void test_bad_input(void)
{
    ck_attention_problem p, g;
    ck_attention_problem_init(&g);
    g.b = 1, g.s_q = 4, g.s_k = 4, g.h_q = 2, g.h_k = 1, g.d = g.d_v = 64;
    ck_attention_plan *plan = NULL;
    p = g, p.d = 80;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_UNSUPPORTED);
    p = g, p.d_v = 512;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_UNSUPPORTED);
    p = g, p.h_q = 3, p.h_k = 2;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.h_k = 0;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.s_q = -1;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.dtype = CK_DTYPE_F32;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_UNSUPPORTED);
    p = g, p.mask = CK_ATTN_MASK_WINDOW, p.window_left = -2;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.mask = (ck_attn_mask)7;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.varlen = 1, p.total_q = 8, p.total_k = 8, p.q.batch = 256, p.q.seq = 64,
    p.q.head = 64; /* varlen with a batch stride */
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.varlen = 1, p.total_q = -1;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.softcap = -1.0f;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.align = (ck_attn_align)3;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.k.batch = 256, p.k.seq = -64, p.k.head = 64;
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    p = g, p.o.batch = 64, p.o.seq = 64, p.o.head = 64; /* rows of O overlap */
    CHECK_STATUS(ck_attention_plan_create(a_ctx, &p, &plan), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_attention_plan_create(a_ctx, NULL, &plan), CK_ERROR_INVALID_ARGUMENT);
    CHECK(plan == NULL);

    /* execute: NULL or misaligned pointers, overlapping outputs, a bad scale */
    CHECK_OK(ck_attention_plan_create(a_ctx, &g, &plan));
    if (!plan)
        return;
    ck_device *dev = ck_context_device(a_ctx);
    void *buf = NULL;
    CHECK_OK(ck_malloc(dev, 4096 * 4, &buf));
    char *b = buf;
    ck_attention_args a;
    ck_attention_args_init(&a);
    a.q = b, a.k = b + 2048, a.v = b + 4096, a.o = b + 8192;
    CHECK_STATUS(ck_attention_plan_execute(plan, NULL), CK_ERROR_INVALID_ARGUMENT);
    ck_attention_args x = a;
    x.v = NULL;
    CHECK_STATUS(ck_attention_plan_execute(plan, &x), CK_ERROR_INVALID_ARGUMENT);
    x = a, x.q = b + 2;
    CHECK_STATUS(ck_attention_plan_execute(plan, &x), CK_ERROR_INVALID_ARGUMENT);
    x = a, x.o = b + 2048 + 64; /* O overlaps K */
    CHECK_STATUS(ck_attention_plan_execute(plan, &x), CK_ERROR_INVALID_ARGUMENT);
    x = a, x.scale = -1.0f;
    CHECK_STATUS(ck_attention_plan_execute(plan, &x), CK_ERROR_INVALID_ARGUMENT);
    x = a, x.scale = (float)INFINITY;
    CHECK_STATUS(ck_attention_plan_execute(plan, &x), CK_ERROR_INVALID_ARGUMENT);
    ck_attention_plan_destroy(plan);
    ck_attention_problem l = g;
    l.lse = 1;
    CHECK_OK(ck_attention_plan_create(a_ctx, &l, &plan));
    x = a, x.lse = (float *)(b + 8192 + 128); /* LSE overlaps O */
    if (plan)
        CHECK_STATUS(ck_attention_plan_execute(plan, &x), CK_ERROR_INVALID_ARGUMENT);
    ck_attention_plan_destroy(plan);
    ck_free(dev, buf);
}

/* The pipeline's rounding of P and O (ck_block_mma.h: ck_f32_to_bf16_rne, ck_f32_to_f16_rne)
 * against ck_convert for random bit patterns and the edges (subnormal f16, ties, overflow). */
static void test_rounding(void)
{
    static const char *src =
        "#include \"ck_device.h\"\n#include \"ck_block_mma.h\"\n"
        "CK_KERNEL void conv(const float *x, unsigned short *h, unsigned short *b, int n)\n"
        "{\n"
        "    for (int i = (int)ck_thread_linear(); i < n; i += (int)ck_block_threads()) {\n"
        "        h[i] = (unsigned short)ck_f32_to_f16_rne(x[i]);\n"
        "        b[i] = (unsigned short)ck_f32_to_bf16_rne(x[i]);\n"
        "    }\n"
        "}\n";
    enum { N = 1 << 16 };
    static const uint32_t edges[] = {0x33000000u, 0x33000001u, 0x33800000u, 0x387fffffu,
                                     0x38800000u, 0x477fefffu, 0x477ff000u, 0x7f7fffffu,
                                     0x3f808000u, 0x3f818000u, 0x00000001u, 0x3effffffu};
    ck_device *dev = ck_context_device(a_ctx);
    float *x = malloc(N * 4);
    uint16_t *h = malloc(N * 2), *b = malloc(N * 2);
    for (int i = 0; i < N; ++i) {
        uint32_t u = (uint32_t)ckt_rand64(&a_rng);
        if (i < 24)
            u = edges[i / 2] | (i % 2 ? 0x80000000u : 0);
        else if (i % 2) /* the exponents P and O see: within a few hundred of 1 */
            u = (u & 0x807fffffu) | ((uint32_t)(100 + i % 40) << 23);
        if ((u & 0x7f800000u) == 0x7f800000u)
            u &= 0xbfffffffu; /* finite */
        memcpy(&x[i], &u, 4);
    }
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    void *dx = NULL, *dh = NULL, *db = NULL;
    CHECK_OK(ck_module_load(dev, src, NULL, 0, &m));
    CHECK_OK(ck_module_get_kernel(m, "conv", &k));
    CHECK_OK(ck_malloc(dev, N * 4, &dx));
    CHECK_OK(ck_malloc(dev, N * 2, &dh));
    CHECK_OK(ck_malloc(dev, N * 2, &db));
    CHECK_OK(ck_memcpy_h2d(dev, dx, x, N * 4, NULL));
    int n = N;
    void *args[4] = {&dx, &dh, &db, &n};
    size_t sizes[4] = {sizeof dx, sizeof dh, sizeof db, sizeof n};
    ck_launch_config cfg = {{1, 1, 1}, {256, 1, 1}, {0, 0, 0}, 0, NULL};
    if (k)
        CHECK_OK(ck_launch(k, &cfg, args, sizes, 4));
    CHECK_OK(ck_context_synchronize(a_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, h, dh, N * 2, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, b, db, N * 2, NULL));
    long bad = 0;
    for (int i = 0; i < N; ++i) {
        uint64_t eh = 0, eb = 0;
        ck_convert_from_f64(CK_DTYPE_F16, (double)x[i], CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT,
                            0, &eh);
        ck_convert_from_f64(CK_DTYPE_BF16, (double)x[i], CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT,
                            0, &eb);
        if ((h[i] != eh || b[i] != eb) && bad++ < 5)
            CHECK_MSG(0, "%.9g: f16 0x%04x (want 0x%04x), bf16 0x%04x (want 0x%04x)", (double)x[i],
                      h[i], (unsigned)eh, b[i], (unsigned)eb);
    }
    CHECK(bad == 0);
    ck_free(dev, dx);
    ck_free(dev, dh);
    ck_free(dev, db);
    free(x), free(h), free(b);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &a_ctx));
    if (!a_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)a_rng);
    RUN_TEST(test_rounding);
    RUN_TEST(test_masks);
    RUN_TEST(test_head_dims);
    RUN_TEST(test_multi_tile);
    RUN_TEST(test_varlen);
    RUN_TEST(test_softcap);
    RUN_TEST(test_instances);
    RUN_TEST(test_unaligned);
    RUN_TEST(test_fully_masked);
    RUN_TEST(test_bad_input);
    ck_context_destroy(a_ctx);
    return CK_TEST_REPORT();
}
