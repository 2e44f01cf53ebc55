/*
 * The sm_90a attention kernel (TMA + wgmma, warp-specialized; src/ops/attention/sm90.c) on the
 * device CK_DEVICE chooses (the emulator in CI, which runs wgmma, TMA, mbarriers and setmaxnreg;
 * an sm_90a GPU): the policy must choose it for every case here (the plan's name says so), and
 * every element of O and LSE must match the f64 reference within the tolerance derived from the
 * types. Covered: bf16 and f16; head dims 64, 128, 192, 256 and d_v != d (192 / 128, 64 / 128,
 * 128 / 64, 64 / 256); both key tiles (128 and 64 rows); every mask and alignment; GQA ratios 1, 2,
 * 8 and MQA; soft-cap; BSHD and BHSD with padded rows; odd s_q and s_k (partial tiles: TMA
 * zero-fill and the mask); variable-length batches (empty sequences, several query tiles per
 * block); rows that see no key (O = 0, LSE = -inf); s_k = 0. Also the refusals that send a problem
 * to the sm80 kernel, each with its reason.
 */
#include "attn_harness.h"

/* P's rounding (ck_cvt_bf16x2 / ck_cvt_f16x2: one cvt.rn per pair on the GPU, its integer model
 * in the emulator) against ck_convert, nearest even, on random values, values near 1 (P's
 * range), f16 subnormals, halfway cases and overflow; NaN gives 0x7fff. */
static void test_pack_rounding(void)
{
    static const char *src =
        "#include \"ck_device.h\"\n"
        "CK_KERNEL void cvt(const float *x, unsigned *h, unsigned *b, int n)\n"
        "{\n"
        "    for (int i = (int)ck_thread_linear(); 2 * i < n; i += (int)ck_block_threads()) {\n"
        "        h[i] = ck_cvt_f16x2(x[2 * i], x[2 * i + 1]);\n"
        "        b[i] = ck_cvt_bf16x2(x[2 * i], x[2 * i + 1]);\n"
        "    }\n"
        "}\n";
    enum { N = 1 << 16 };
    static const uint32_t edges[] = {0x33000000u, 0x33000001u, 0x33800000u, 0x387fffffu,
                                     0x38800000u, 0x477fefffu, 0x477ff000u, 0x7f7fffffu,
                                     0x3f808000u, 0x3f818000u, 0x00000001u, 0x3effffffu};
    ck_device *dev = ck_context_device(a_ctx);
    float *x = malloc(N * 4);
    uint32_t *h = malloc(N * 2), *b = malloc(N * 2);
    for (int i = 0; i < N; ++i) {
        uint32_t u = (uint32_t)ckt_rand64(&a_rng);
        if (i < 24)
            u = edges[i / 2] | (i % 2 ? 0x80000000u : 0);
        else if (i % 2)
            u = (u & 0x807fffffu) | ((uint32_t)(100 + i % 40) << 23);
        if ((u & 0x7f800000u) == 0x7f800000u)
            u &= 0xbfffffffu;
        if (i == N - 1)
            u = 0x7fc00001u; /* NaN */
        memcpy(&x[i], &u, 4);
    }
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    void *dx = NULL, *dh = NULL, *db = NULL;
    CHECK_OK(ck_module_load(dev, src, NULL, 0, &m));
    CHECK_OK(ck_module_get_kernel(m, "cvt", &k));
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
        uint64_t eh = 0x7fff, eb = 0x7fff;
        if (i < N - 1) {
            ck_convert_from_f64(CK_DTYPE_F16, (double)x[i], CK_ROUND_NEAREST_EVEN,
                                CK_OVERFLOW_DEFAULT, 0, &eh);
            ck_convert_from_f64(CK_DTYPE_BF16, (double)x[i], CK_ROUND_NEAREST_EVEN,
                                CK_OVERFLOW_DEFAULT, 0, &eb);
        }
        uint32_t gh = (h[i / 2] >> (16 * (i % 2))) & 0xffffu;
        uint32_t gb = (b[i / 2] >> (16 * (i % 2))) & 0xffffu;
        if ((gh != eh || gb != eb) && bad++ < 5)
            CHECK_MSG(0, "%.9g: f16 0x%04x (want 0x%04x), bf16 0x%04x (want 0x%04x)", (double)x[i],
                      gh, (unsigned)eh, gb, (unsigned)eb);
    }
    CHECK(bad == 0);
    ck_free(dev, dx), ck_free(dev, dh), ck_free(dev, db);
    free(x), free(h), free(b);
}

/* Run the case and check that the policy chose the sm90 kernel for it. */
static void run90(const acase *c)
{
    ck_attention_problem p;
    ac_problem(c, &p);
    ck_attention_plan *plan = NULL;
    ck_status st = ck_attention_plan_create(a_ctx, &p, &plan);
    CHECK_MSG(st == CK_SUCCESS, "plan: %s", ck_last_error());
    if (st)
        return;
    const char *name = ck_attention_plan_name(plan);
    if (strncmp(name, "decode.", 7) == 0 && c->sq <= 16) {
        /* a short query goes to the decode kernel (test_attention_decode.c); the sm90 kernel
         * still takes it when asked: its instance forced */
        ck_attention_plan_destroy(plan);
        acase f = *c;
        f.inst = (ck_attn_instance){128, 64, CK_ATTN_SM90_WARPS, 0, 1, 0};
        ac_run(&f);
        return;
    }
    CHECK_MSG(strncmp(name, "sm90.", 5) == 0, "policy chose %s, not the sm90 kernel", name);
    ck_attention_plan_destroy(plan);
    ac_run(c);
}

/* Every mask x alignment on odd shapes (s_q < s_k, s_q > s_k, one query), GQA ratio 2, LSE. */
static void test_masks(void)
{
    static const int64_t shapes[][2] = {{17, 130}, {130, 17}, {129, 200}, {1, 77}};
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
            c.dt = s % 3 ? CK_DTYPE_BF16 : CK_DTYPE_F16;
            run90(&c);
        }
}

/* Every head dim the kernel takes (128-row key tiles where they fit, else 64), d_v != d,
 * both types, MHA / GQA 8 / MQA, BSHD / BHSD with padded rows, scale 1 and the default. */
static void test_head_dims(void)
{
    static const int64_t dims[][2] = {{64, 64},  {128, 128}, {256, 256}, {192, 128},
                                      {64, 128}, {128, 64},  {192, 192}, {64, 256}};
    static const int64_t heads[][2] = {{2, 2}, {8, 1}, {2, 1}};
    for (int i = 0; i < 8; ++i) {
        const int64_t *hh = heads[i % 3];
        acase c =
            ac_base(1 + i % 2, 33 + 50 * (i % 3), 70 + 40 * (i % 2), hh[0], hh[1], dims[i][0]);
        c.dv = dims[i][1];
        c.dt = i % 2 ? CK_DTYPE_F16 : CK_DTYPE_BF16;
        c.bhsd = i % 2 == 0;
        c.pad = i % 3 == 2 ? 8 : 0;
        c.scale = i % 4 == 1 ? 1.0f : 0.0f;
        c.mask = i % 3 == 1 ? CK_ATTN_MASK_CAUSAL : CK_ATTN_MASK_NONE;
        c.align = CK_ATTN_BOTTOM_RIGHT;
        c.lse = 1;
        run90(&c);
    }
}

/* Several key tiles and both query tiles' warpgroups: the online softmax's rescaling, the ring
 * wrapping its slots (causal, 2 batches), the 64-row key tile forced on d 128 and the 192-row
 * one on d 64. */
static void test_multi_tile(void)
{
    acase c = ac_base(2, 200, 300, 2, 1, 128);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.lse = 1;
    c.scale = 0.5f;
    run90(&c);
    c = ac_base(1, 130, 270, 1, 1, 128);
    c.dt = CK_DTYPE_F16;
    c.lse = 1;
    c.inst = (ck_attn_instance){128, 64, CK_ATTN_SM90_WARPS, 0, 1, 0};
    ac_run(&c);
    c = ac_base(1, 140, 450, 2, 1, 64); /* the 192-row key tile (d_v 64), causal */
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.lse = 1;
    c.inst = (ck_attn_instance){128, 192, CK_ATTN_SM90_WARPS, 0, 1, 0};
    ac_run(&c);
}

/* The logit soft-cap (a peaked softmax: scale 1, caps 2 and 30) with a causal mask and a
 * window. */
static void test_softcap(void)
{
    acase c = ac_base(1, 33, 150, 2, 1, 64);
    c.softcap = 2.0f;
    c.scale = 1.0f;
    c.lse = 1;
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    run90(&c);
    c.softcap = 30.0f;
    c.mask = CK_ATTN_MASK_WINDOW, c.wl = 9, c.wr = 4;
    run90(&c);
}

/* Variable-length sequences (group mode): empty sequences on either side, s_q > s_k with
 * bottom-right causal rows that see nothing, GQA, LSE [h_q, total_q]; and grid hints shorter
 * than the sequences, so that a block walks several query tiles (the Q tile reloaded once its
 * readers are done, the rings continuing across tiles), with a window, BHSD and f16. */
static void test_varlen(void)
{
    acase c = ac_base(5, 70, 80, 4, 2, 64);
    int lq[5] = {17, 0, 70, 1, 140}, lk[5] = {30, 12, 80, 0, 9};
    c.varlen = 1;
    memcpy(c.lq, lq, sizeof lq), memcpy(c.lk, lk, sizeof lk);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.lse = 1;
    run90(&c);
    c = ac_base(3, 16, 16, 2, 1, 128);
    int lq2[3] = {300, 3, 130}, lk2[3] = {200, 260, 64};
    c.varlen = 1;
    memcpy(c.lq, lq2, sizeof lq2), memcpy(c.lk, lk2, sizeof lk2);
    c.mask = CK_ATTN_MASK_WINDOW, c.wl = 70, c.wr = 2;
    c.bhsd = 1;
    c.dt = CK_DTYPE_F16;
    c.lse = 1;
    run90(&c);
}

/* Varlen: the values after a sequence's last key (the next sequence's, in the same V tile) are
 * +inf; they must not reach the sequence's O (0 * inf would be NaN). Sequence 1 has keys but no
 * queries, so only sequence 0 is compared, every element against the reference. */
static void test_varlen_inf_after(void)
{
    acase c = ac_base(2, 70, 200, 2, 1, 64);
    int lq[2] = {70, 0}, lk[2] = {37, 150};
    c.varlen = 1;
    memcpy(c.lq, lq, sizeof lq), memcpy(c.lk, lk, sizeof lk);
    c.lse = 1;
    ck_attention_problem p;
    ac_problem(&c, &p);
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_device *dev = ck_context_device(a_ctx);
    const ck_attention_problem *q = &prob.p;
    int32_t cu[6] = {0, 70, 70, 0, 37, 187}; /* cu_q, then cu_k */
    size_t nq = (size_t)ck_attn_span(&q->q, 1, q->total_q, q->h_q, q->d);
    size_t nk = (size_t)ck_attn_span(&q->k, 1, q->total_k, q->h_k, q->d);
    size_t no = (size_t)ck_attn_span(&q->o, 1, q->total_q, q->h_q, q->d_v);
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nk * 2), *ho = malloc(no * 2);
    float *hl = malloc((size_t)(q->h_q * q->total_q) * 4);
    ac_fill(hq, nq, q->dtype), ac_fill(hk, nk, q->dtype), ac_fill(hv, nk, q->dtype);
    for (int64_t j = 37; j < 187; ++j) /* every value of sequence 1 */
        for (int64_t x = 0; x < q->d_v; ++x)
            hv[ck_attn_offset(&q->v, 0, j, 0) + x] = 0x7f80; /* bf16 +inf */
    void *dq = NULL, *dk = NULL, *dv = NULL, *dO = NULL, *dl = NULL, *dcu = NULL;
    CHECK_OK(ck_malloc(dev, nq * 2, &dq));
    CHECK_OK(ck_malloc(dev, nk * 2, &dk));
    CHECK_OK(ck_malloc(dev, nk * 2, &dv));
    CHECK_OK(ck_malloc(dev, no * 2, &dO));
    CHECK_OK(ck_malloc(dev, (size_t)(q->h_q * q->total_q) * 4, &dl));
    CHECK_OK(ck_malloc(dev, sizeof cu, &dcu));
    CHECK_OK(ck_memcpy_h2d(dev, dq, hq, nq * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dk, hk, nk * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dv, hv, nk * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dcu, cu, sizeof cu, NULL));
    ck_attention_plan *plan = NULL;
    CHECK_OK(ck_attention_plan_create(a_ctx, &p, &plan));
    if (plan)
        CHECK(strncmp(ck_attention_plan_name(plan), "sm90.", 5) == 0);
    ck_attention_args args;
    ck_attention_args_init(&args);
    args.q = dq, args.k = dk, args.v = dv, args.o = dO, args.lse = dl;
    args.cu_seqlens_q = dcu, args.cu_seqlens_k = (const int32_t *)dcu + 3;
    CHECK_OK(ck_attention_plan_execute(plan, &args));
    CHECK_OK(ck_context_synchronize(a_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, ho, dO, no * 2, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, hl, dl, (size_t)(q->h_q * q->total_q) * 4, NULL));
    double scale = ck_attn_scale(&prob, 0.0f), ref[64], lse, mag, smag;
    long bad = 0;
    for (int64_t h = 0; h < q->h_q; ++h)
        for (int64_t i = 0; i < 70; ++i) {
            ck_attn_reference_row(&prob, hq, hk, hv, cu, cu + 3, scale, 0, h, i, ref, &lse, &mag,
                                  &smag);
            for (int64_t x = 0; x < q->d_v; ++x) {
                double got = 0;
                ck_convert_to_f64(q->dtype, ho[ck_attn_offset(&q->o, 0, i, h) + x], &got);
                bad += !(fabs(got - ref[x]) <= ck_attn_tolerance_o(&prob, mag, smag, ref[x]));
            }
            double gl = hl[h * q->total_q + i];
            bad += !(fabs(gl - lse) <= ck_attn_tolerance_lse(&prob, smag, lse));
        }
    CHECK_MSG(bad == 0, "%ld elements of O or LSE wrong with +inf values after the sequence", bad);
    ck_attention_plan_destroy(plan);
    ck_free(dev, dq), ck_free(dev, dk), ck_free(dev, dv), ck_free(dev, dO), ck_free(dev, dl);
    ck_free(dev, dcu);
    free(hq), free(hk), free(hv), free(ho), free(hl);
}

/* O through the generated window instead of the default shared memory + TMA stores
 * (CK_ATTN_SM90_OSTORE=window; every other case here stores with TMA where it fits): odd s_q,
 * BHSD with padded rows (the padding untouched), bf16 and f16, d_v 64 and 128, several tiles
 * per block. */
static void test_o_window(void)
{
    setenv("CK_ATTN_SM90_OSTORE", "window", 1);
    acase c = ac_base(2, 201, 150, 2, 1, 128);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.bhsd = 1, c.pad = 8, c.lse = 1;
    run90(&c);
    c = ac_base(1, 77, 300, 4, 2, 64);
    c.dt = CK_DTYPE_F16;
    c.lse = 1;
    run90(&c);
    c = ac_base(1, 130, 90, 2, 2, 128);
    c.dv = 64;
    run90(&c);
    unsetenv("CK_ATTN_SM90_OSTORE");
}

/* ac_run, after checking that the policy's plan for the case is the sm90 instance `inst`
 * (e.g. "m192n128.w16"). */
static void run90_as(const acase *c, const char *inst)
{
    ck_attention_problem p;
    ac_problem(c, &p);
    ck_attention_plan *plan = NULL;
    CHECK_OK(ck_attention_plan_create(a_ctx, &p, &plan));
    if (plan)
        CHECK_MSG(strncmp(ck_attention_plan_name(plan), "sm90.", 5) == 0 &&
                      strstr(ck_attention_plan_name(plan), inst) != NULL,
                  "plan %s, not the sm90 instance %s", ck_attention_plan_name(plan), inst);
    ck_attention_plan_destroy(plan);
    ac_run(c);
}

/* The persistent walk's orders (CK_ATTN_SM90_ORDER; causal problems with more work items than
 * the emulator's blocks; snake is the default for causal masks, so most causal cases here take
 * it): lpt with L2 sections of 3 (head, batch) pairs (a section across a batch boundary, a short last
 * one), run twice so that the second launch finds the counter the first left (it is zeroed at
 * every launch); snake (every other round reversed) on 192-row query tiles; linear (the default
 * without a mask) on a causal one. */
static void test_orders(void)
{
    setenv("CK_ATTN_SM90_ORDER", "lpt", 1);
    setenv("CK_ATTN_SM90_SECTION", "3", 1);
    acase c = ac_base(2, 260, 300, 4, 2, 128);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.lse = 1;
    for (int twice = 0; twice < 2; ++twice)
        run90_as(&c, "m128n128.w12");
    unsetenv("CK_ATTN_SM90_SECTION");
    setenv("CK_ATTN_SM90_ORDER", "snake", 1);
    setenv("CK_ATTN_SM90_CONSUMERS", "3", 1); /* the policy takes 2 for causal d 64 */
    c = ac_base(2, 400, 300, 2, 1, 64);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.lse = 1;
    run90_as(&c, "m192n128.w16");
    setenv("CK_ATTN_SM90_ORDER", "linear", 1);
    c.b = 1, c.hq = 3, c.hk = 3;
    run90_as(&c, "m192n128.w16");
    unsetenv("CK_ATTN_SM90_CONSUMERS");
    unsetenv("CK_ATTN_SM90_ORDER");
}

/* A plan whose kernel was built for lpt, executed after CK_ATTN_SM90_ORDER changed to linear:
 * its launch passes no work counter, and the kernel walks its items statically (every element
 * of O against the reference, causal, two batches, more items than blocks). */
static void test_order_changed(void)
{
    setenv("CK_ATTN_SM90_ORDER", "lpt", 1);
    acase c = ac_base(2, 300, 300, 3, 1, 128);
    c.mask = CK_ATTN_MASK_CAUSAL;
    ck_attention_problem p;
    ac_problem(&c, &p);
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attention_plan *plan = NULL;
    CHECK_OK(ck_attention_plan_create(a_ctx, &p, &plan));
    setenv("CK_ATTN_SM90_ORDER", "linear", 1);
    ck_device *dev = ck_context_device(a_ctx);
    const ck_attention_problem *q = &prob.p;
    size_t nq = (size_t)ck_attn_span(&q->q, q->b, q->s_q, q->h_q, q->d);
    size_t nk = (size_t)ck_attn_span(&q->k, q->b, q->s_k, q->h_k, q->d);
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nk * 2), *ho = malloc(nq * 2);
    ac_fill(hq, nq, q->dtype), ac_fill(hk, nk, q->dtype), ac_fill(hv, nk, q->dtype);
    void *dq = NULL, *dk = NULL, *dv = NULL, *dO = NULL;
    CHECK_OK(ck_malloc(dev, nq * 2, &dq));
    CHECK_OK(ck_malloc(dev, nk * 2, &dk));
    CHECK_OK(ck_malloc(dev, nk * 2, &dv));
    CHECK_OK(ck_malloc(dev, nq * 2, &dO));
    CHECK_OK(ck_memcpy_h2d(dev, dq, hq, nq * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dk, hk, nk * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dv, hv, nk * 2, NULL));
    CHECK_OK(ck_memset_d8(dev, dO, 0xff, nq * 2, NULL)); /* NaN where nothing is written */
    ck_attention_args args;
    ck_attention_args_init(&args);
    args.q = dq, args.k = dk, args.v = dv, args.o = dO;
    if (plan)
        CHECK_OK(ck_attention_plan_execute(plan, &args));
    CHECK_OK(ck_context_synchronize(a_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, ho, dO, nq * 2, NULL));
    double scale = ck_attn_scale(&prob, 0.0f), ref[128], lse, mag, smag;
    long bad = 0;
    for (int64_t b = 0; b < q->b; ++b)
        for (int64_t h = 0; h < q->h_q; ++h)
            for (int64_t i = 0; i < q->s_q; ++i) {
                ck_attn_reference_row(&prob, hq, hk, hv, NULL, NULL, scale, b, h, i, ref, &lse,
                                      &mag, &smag);
                for (int64_t x = 0; x < q->d_v; ++x) {
                    double got = 0;
                    ck_convert_to_f64(q->dtype, ho[ck_attn_offset(&q->o, b, i, h) + x], &got);
                    bad += !(fabs(got - ref[x]) <= ck_attn_tolerance_o(&prob, mag, smag, ref[x]));
                }
            }
    CHECK_MSG(bad == 0, "%ld elements of O wrong after the order changed under the plan", bad);
    ck_attention_plan_destroy(plan);
    ck_free(dev, dq), ck_free(dev, dk), ck_free(dev, dv), ck_free(dev, dO);
    free(hq), free(hk), free(hv), free(ho);
    unsetenv("CK_ATTN_SM90_ORDER");
}

/* Three consumer warpgroups (192 query rows: the default at d 64) and two, each where the other
 * is the default (CK_ATTN_SM90_CONSUMERS): d 64 with two, d 128 with three (key tiles of 64, the
 * widest the 160 registers hold with d_v 128); three without the ping-pong
 * (CK_ATTN_SM90_PINGPONG=0); the instance 192x128x16 asked for; odd s_q (a partial last query
 * tile), GQA, windows. */
static void test_consumers(void)
{
    acase c = ac_base(1, 250, 200, 4, 2, 64);
    c.mask = CK_ATTN_MASK_WINDOW, c.wl = 70, c.wr = 9;
    c.lse = 1;
    run90_as(&c, "m192n128.w16");
    setenv("CK_ATTN_SM90_CONSUMERS", "2", 1);
    run90_as(&c, "m128n128.w12");
    unsetenv("CK_ATTN_SM90_CONSUMERS");
    c.mask = CK_ATTN_MASK_CAUSAL; /* the policy: two consumers for a causal band at d 64 */
    run90_as(&c, "m128n128.w12");
    setenv("CK_ATTN_SM90_CONSUMERS", "3", 1);
    c = ac_base(2, 201, 190, 2, 2, 128);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.dt = CK_DTYPE_F16;
    c.bhsd = 1;
    c.lse = 1;
    run90_as(&c, "m192n64.w16");
    setenv("CK_ATTN_SM90_PINGPONG", "0", 1);
    run90_as(&c, "m192n64.w16");
    unsetenv("CK_ATTN_SM90_PINGPONG");
    unsetenv("CK_ATTN_SM90_CONSUMERS");
    c = ac_base(1, 100, 333, 2, 1, 64);
    c.lse = 1;
    c.inst = (ck_attn_instance){192, 128, CK_ATTN_SM90_WARPS3, 0, 1, 0};
    ac_run(&c);
}

/* Key tiles of 80 rows (the default at d_v 256) and 64 there (CK_ATTN_SM90_TILE_N=64), 96 at
 * d 128: s_k not a multiple of the tile (zero-filled keys, masked), causal. */
static void test_key_tiles(void)
{
    acase c = ac_base(1, 150, 210, 2, 1, 256);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.lse = 1;
    run90_as(&c, "m128n80.w12");
    setenv("CK_ATTN_SM90_TILE_N", "64", 1);
    run90_as(&c, "m128n64.w12");
    setenv("CK_ATTN_SM90_TILE_N", "96", 1);
    c = ac_base(1, 130, 250, 2, 2, 128);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.dt = CK_DTYPE_F16;
    c.lse = 1;
    run90_as(&c, "m128n96.w12");
    unsetenv("CK_ATTN_SM90_TILE_N");
}

/* Rows that see no key: bottom-right causal with s_q > s_k, a window past every key, s_k = 0. */
static void test_fully_masked(void)
{
    acase c = ac_base(1, 140, 9, 1, 1, 64);
    c.mask = CK_ATTN_MASK_CAUSAL;
    c.align = CK_ATTN_BOTTOM_RIGHT;
    c.lse = 1;
    run90(&c);
    c = ac_base(1, 20, 10, 1, 1, 128);
    c.mask = CK_ATTN_MASK_WINDOW;
    c.wl = 2, c.wr = 0;
    c.lse = 1;
    run90(&c);
    c = ac_base(2, 5, 0, 2, 1, 64);
    c.lse = 1;
    run90(&c);
}

/* Problems the sm90 kernel refuses (the policy takes the sm80 kernel and says why). */
static void test_refusals(void)
{
    ck_device_props props;
    ck_device_get_props(ck_context_device(a_ctx), &props);
    ck_attention_problem g;
    ck_attention_problem_init(&g);
    g.b = 1, g.s_q = 40, g.s_k = 40, g.h_q = 2, g.h_k = 1, g.d = g.d_v = 64;
    struct {
        ck_attention_problem p;
        const char *why;
    } t[5];
    t[0].p = g, t[0].p.d = t[0].p.d_v = 32, t[0].why = "head dims";
    t[1].p = g, t[1].p.q.seq = 68, t[1].p.q.head = 36, t[1].p.q.batch = 68 * 40;
    t[1].why = "multiple of 8";
    t[2].p = g, t[2].p.k.seq = 64, t[2].p.k.head = 64, t[2].p.k.batch = 0; /* K batch stride 0 */
    t[2].p.b = 2, t[2].why = "k's are (batch 0";
    t[3].p = g, t[3].p.d_v = 96, t[3].why = "d_v = 96";
    t[4].p = g, t[4].p.b = 65535, t[4].p.h_q = t[4].p.h_k = 65535; /* 2^32 - 2^17 + 1 items */
    t[4].why = "in 32 bits; this problem has 4294836225";
    for (int i = 0; i < 5; ++i) {
        ck_attn_prob prob;
        CHECK_OK(ck_attn_prob_make(&t[i].p, &prob));
        char why[256] = "";
        CHECK(!ck_attn_sm90_supports(&prob, &props, why, sizeof why));
        CHECK_MSG(strstr(why, t[i].why) != NULL, "refusal %d: '%s'", i, why);
        ck_attention_plan *plan = NULL;
        ck_attn_instance want = {128, 128, CK_ATTN_SM90_WARPS, 0, 1, 0};
        CHECK_STATUS(ck_attn_plan_create_instance(a_ctx, &prob, &want, &plan),
                     CK_ERROR_UNSUPPORTED);
        CHECK_OK(ck_attention_plan_create(a_ctx, &t[i].p, &plan));
        if (plan)
            CHECK(strncmp(ck_attention_plan_name(plan), "sm80.", 5) == 0);
        ck_attention_plan_destroy(plan);
    }
    /* a forced instance of the wrong shape */
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&g, &prob));
    ck_attention_plan *plan = NULL;
    ck_attn_instance bad[4] = {{64, 128, CK_ATTN_SM90_WARPS, 0, 1, 0},
                               {192, 128, CK_ATTN_SM90_WARPS, 0, 1, 0},  /* 3 consumers, 12 warps */
                               {192, 192, CK_ATTN_SM90_WARPS3, 0, 1, 0}, /* 176 > 128 registers */
                               {128, 72, CK_ATTN_SM90_WARPS, 0, 1, 0}};  /* not 16k */
    for (int i = 0; i < 4; ++i) {
        CHECK_STATUS(ck_attn_plan_create_instance(a_ctx, &prob, &bad[i], &plan),
                     CK_ERROR_INVALID_ARGUMENT);
        CHECK(plan == NULL);
        CHECK_MSG(strstr(ck_last_error(), "accepted: m128 w12 or m192 w16") != NULL, "%s",
                  ck_last_error());
    }
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &a_ctx));
    if (!a_ctx)
        return 1;
    ck_device_props props;
    ck_device_get_props(ck_context_device(a_ctx), &props);
    if (props.backend == CK_BACKEND_CUDA && strcmp(props.target, "sm_90a") != 0) {
        printf("device %s is not sm_90a; skipped\n", props.target);
        ck_context_destroy(a_ctx);
        return 0;
    }
    printf("seed 0x%016llx\n", (unsigned long long)a_rng);
    RUN_TEST(test_pack_rounding);
    RUN_TEST(test_masks);
    RUN_TEST(test_head_dims);
    RUN_TEST(test_multi_tile);
    RUN_TEST(test_softcap);
    RUN_TEST(test_varlen);
    RUN_TEST(test_varlen_inf_after);
    RUN_TEST(test_o_window);
    RUN_TEST(test_orders);
    RUN_TEST(test_order_changed);
    RUN_TEST(test_consumers);
    RUN_TEST(test_key_tiles);
    RUN_TEST(test_fully_masked);
    RUN_TEST(test_refusals);
    ck_context_destroy(a_ctx);
    return CK_TEST_REPORT();
}
