/*
 * Strided batched GEMM on the emulator: both kernel families (sm80: one block per batch x tile;
 * sm90: the persistent grid's units over batch x tiles (x splits), 3-D tensor maps), batches of
 * 1, 2 and 3, broadcast A / B / C / bias (batch stride 0), gaps between batches, odd M, N, K,
 * C and bias per batch, the TMA store of D, split-K with batches; every element of every batch
 * against the CPU reference, and every element of D outside the product untouched (the gaps
 * between batches included). Then the refusals: D batches that overlap, strides that
 * overflow, sm90's TMA stride rule (the sm80 family takes such a problem).
 */
#include "gemm_harness.h"

static const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;

/* sm80 (portable family): batches 1, 2, 3, broadcast A or B, every order, C and bias. */
static void test_sm80_batches(void)
{
    static const int64_t shapes[][3] = {{37, 29, 45}, {19, 33, 7}, {5, 17, 70}};
    for (int i = 0; i < 6; ++i) {
        const int64_t *sh = shapes[i % 3];
        gcase c = gc_base(sh[0], sh[1], sh[2], i % 2 ? CK_DTYPE_F16 : CK_DTYPE_BF16,
                          i % 3 == 0 ? CK_DTYPE_F32
                          : i % 2    ? CK_DTYPE_F16
                                     : CK_DTYPE_BF16);
        c.want = "sm80";
        c.batch = 1 + i % 3;
        c.ao = i % 2 ? C : R;
        c.bo = i / 2 % 2 ? C : R;
        c.dox = i % 3 == 1 ? C : R;
        c.bcast = i == 2 ? 1 : i == 4 ? 2 : 0; /* A, B broadcast */
        c.gap = i % 2 ? 8 : 3;                 /* aligned and odd gaps between batches */
        c.pad = i % 4 == 3 ? 8 : 0;
        if (i >= 3) { /* C of every batch (or broadcast), bias per batch (or broadcast) */
            c.c = c.d;
            c.co = i % 2 ? R : C;
            c.beta = -0.75f;
            c.alpha = 1.5f;
            c.bias = i % 2 ? CK_GEMM_BIAS_ROW : CK_GEMM_BIAS_COL;
            c.bcast |= i == 5 ? 4 | 8 : 0;
        }
        gc_run(&c);
    }
    /* i8 -> i32 with C in place (C is D in every batch) */
    gcase c = gc_base(21, 13, 40, CK_DTYPE_I8, CK_DTYPE_I32);
    c.want = "sm80";
    c.batch = 3;
    c.gap = 5;
    c.c = CK_DTYPE_I32;
    c.alias = 1;
    c.beta = 2;
    gc_run(&c);
}

/* sm90 (TMA + wgmma): generated epilogue with C and bias per batch, broadcast A / B / C, the
 * TMA store of D, MN-major operands, fp8, and a batched split-K instance. */
static void test_sm90_batches(void)
{
    /* TMA needs leading dimensions and A / B batch strides of a multiple of 16 bytes: K = 104 */
    gcase c = gc_base(130, 70, 104, CK_DTYPE_BF16, CK_DTYPE_BF16);
    c.want = "sm90";
    c.batch = 2;
    c.gap = 8;
    c.c = CK_DTYPE_F32;
    c.beta = 0.5f;
    c.bias = CK_GEMM_BIAS_COL;
    c.bias_dt = CK_DTYPE_BF16;
    c.bo = C;
    gc_run(&c);
    c.batch = 3;
    c.gap = 0;
    c.bcast = 1 | 4 | 8; /* A, C and bias broadcast */
    c.bias = CK_GEMM_BIAS_ROW;
    c.dox = C;
    gc_run(&c);
    /* MN-major A and B (M and N multiples of 8 elements for TMA), odd K */
    c = gc_base(72, 48, 37, CK_DTYPE_BF16, CK_DTYPE_F32);
    c.want = "sm90";
    c.batch = 2;
    c.gap = 24;
    c.ao = C;
    c.bo = R;
    gc_run(&c);
    /* the TMA store of D (16-bit row-major, alpha only), B broadcast */
    c = gc_base(67, 136, 48, CK_DTYPE_F16, CK_DTYPE_F16);
    c.want = "sm90";
    c.batch = 3;
    c.bcast = 2;
    c.gap = 16;
    gc_run(&c);
    /* fp8, odd M and N */
    c = gc_base(33, 45, 64, CK_DTYPE_FP8_E4M3, CK_DTYPE_F32);
    c.want = "sm90";
    c.batch = 2;
    c.bo = C;
    c.gap = 16;
    gc_run(&c);
    /* split-K with batches: units = batch x tile x split, the workspace per (batch, tile);
     * K tiles (8) not a multiple of the splits (3), C and bias per batch, A broadcast */
    c = gc_base(140, 30, 504, CK_DTYPE_BF16, CK_DTYPE_F32);
    c.split = 3;
    c.batch = 3;
    c.bo = C;
    c.gap = 8;
    c.c = CK_DTYPE_F32;
    c.beta = 1;
    c.bias = CK_GEMM_BIAS_COL;
    c.bcast = 1;
    gc_run(&c);
}

static ck_status make(ck_gemm_problem *p, ck_gemm_prob *pr)
{
    return ck_gemm_prob_make(p, pr);
}

static void test_refusals(void)
{
    ck_gemm_problem p;
    ck_gemm_prob pr;
    ck_gemm_problem_init(&p);
    CHECK(p.batch == 1);
    p.m = 40, p.n = 24, p.k = 32;
    p.batch = 0;
    CHECK(make(&p, &pr) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "batch = 0") != NULL);
    p.batch = 3;
    p.a.batch_stride = 40 * 32, p.b.batch_stride = 32 * 24;
    p.d.batch_stride = 0; /* every batch the same D */
    CHECK(make(&p, &pr) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "batch stride 0") != NULL, "%s", ck_last_error());
    p.d.batch_stride = 40 * 24 - 1; /* batches overlap by one element */
    CHECK(make(&p, &pr) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "overlap") != NULL, "%s", ck_last_error());
    p.d.batch_stride = 40 * 24;
    CHECK_OK(make(&p, &pr));
    /* batches interleaved between D's rows: ld = 3 * 24, stride 24 */
    p.d.ld = 3 * 24, p.d.batch_stride = 24;
    CHECK_OK(make(&p, &pr));
    p.d.batch_stride = 23; /* interleaved but overlapping */
    CHECK(make(&p, &pr) == CK_ERROR_INVALID_ARGUMENT);
    p.d.ld = 0, p.d.batch_stride = 40 * 24;
    p.a.batch_stride = -1;
    CHECK(make(&p, &pr) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "matrix A has batch stride -1") != NULL);
    p.a.batch_stride = INT64_C(1) << 47; /* 3 batches of that stride: fine in 64 bits */
    CHECK_OK(make(&p, &pr));
    p.batch = 100000;
    p.a.batch_stride = INT64_C(1) << 47;
    CHECK(make(&p, &pr) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "64-bit") != NULL);
    p.a.batch_stride = 40 * 32;
    p.d.batch_stride = 40 * 24;
    p.batch = INT64_C(1) << 31;
    CHECK(make(&p, &pr) == CK_ERROR_INVALID_ARGUMENT);
    p.m = p.n = 100000, p.batch = 1000; /* batch x tiles beyond 32 bits */
    p.a.batch_stride = p.m * p.k, p.b.batch_stride = p.k * p.n, p.d.batch_stride = p.m * p.n;
    CHECK(make(&p, &pr) == CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "split the batch") != NULL);
    p.m = 40, p.n = 24, p.batch = 2;
    p.a.batch_stride = 40 * 32, p.b.batch_stride = 32 * 24, p.d.batch_stride = 40 * 24;
    p.bias = CK_GEMM_BIAS_ROW;
    p.bias_batch_stride = -4;
    CHECK(make(&p, &pr) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "bias batch stride") != NULL);
    p.bias = CK_GEMM_BIAS_NONE;
    /* sm90: A's batch stride of 40 * 32 + 1 bf16 is not 16-byte aligned: refused there, the
     * sm80 family (element-wise copies) takes it */
    p.a.batch_stride = 40 * 32 + 1;
    CHECK_OK(make(&p, &pr));
    ck_device_props pp;
    ck_device_get_props(ck_context_device(g_ctx), &pp);
    char reason[512] = "";
    CHECK(!ck_gemm_family_sm90.supports(&pr, &pp, reason, sizeof reason));
    CHECK_MSG(strstr(reason, "batch stride") != NULL, "%s", reason);
    CHECK(ck_gemm_family_sm80.supports(&pr, &pp, reason, sizeof reason));
    CHECK(!ck_gemm_copy_vec(&pr, 0) && ck_gemm_copy_vec(&pr, 1));
    /* batch 1: strides are ignored (and zeroed: the kernel key does not see them) */
    p.batch = 1;
    p.d.batch_stride = 0;
    p.a.batch_stride = 7;
    CHECK_OK(make(&p, &pr));
    CHECK(pr.p.a.batch_stride == 0);
    /* the tuning key names the batch */
    char k1[256], k2[256];
    ck_gemm_tuning_problem_key(&pr, k1, sizeof k1);
    p.batch = 4, p.a.batch_stride = 0, p.b.batch_stride = 0, p.d.batch_stride = 40 * 24;
    CHECK_OK(make(&p, &pr));
    ck_gemm_tuning_problem_key(&pr, k2, sizeof k2);
    CHECK(strstr(k1, "batch") == NULL && strstr(k2, "batch=4") != NULL);
}

/* ck_gemm_plan_execute: D of all batches must not overlap A, B or C (C not being D). */
static void test_execute_overlap(void)
{
    ck_device *dev = ck_context_device(g_ctx);
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 16, p.n = 16, p.k = 16, p.batch = 2;
    p.a.batch_stride = 256, p.b.batch_stride = 0, p.d.batch_stride = 256;
    p.d.dtype = CK_DTYPE_BF16;
    ck_gemm_plan *plan = NULL;
    CHECK_OK(ck_gemm_plan_create(g_ctx, &p, -1, &plan));
    void *buf = NULL;
    CHECK_OK(ck_malloc(dev, 4096 * 2, &buf));
    ck_gemm_args a;
    ck_gemm_args_init(&a);
    a.a = buf;                    /* A: elements 0 .. 511 */
    a.b = (char *)buf + 1024 * 2; /* B: 1024 .. 1279 */
    a.d = (char *)buf + 256 * 2;  /* D's first batch: 256 .. 511, inside A's second */
    CHECK(ck_gemm_plan_execute(plan, &a) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "D overlaps A") != NULL, "%s", ck_last_error());
    a.d = (char *)buf + 2048 * 2;
    CHECK_OK(ck_gemm_plan_execute(plan, &a));
    CHECK_OK(ck_context_synchronize(g_ctx));
    ck_gemm_plan_destroy(plan);
    ck_free(dev, buf);
}

/* ck_gemm over tensors: a [3, M, K] (misaligned: the element-wise copy path), b [K, N] (rank
 * 2: broadcast), d [3, M, N] with batches interleaved between its rows (strides [N, 3N, 1]),
 * bias [3, N] (one per batch); then c [1, M, N] (broadcast) and a bias vector for all. */
static void test_tensor_form(void)
{
    ck_device *dev = ck_context_device(g_ctx);
    enum { B = 3, M = 11, N = 13, K = 17 };
    uint16_t ha[B * M * K + 1], hb[K * N], hbias[B * N];
    float hd[B * M * N], hc[M * N];
    gc_fill(ha, CK_DTYPE_BF16, B * M * K + 1);
    gc_fill(hb, CK_DTYPE_BF16, K * N);
    gc_fill(hbias, CK_DTYPE_BF16, B * N);
    gc_fill(hc, CK_DTYPE_F32, M * N);
    void *da = NULL, *db = NULL, *dd = NULL, *dbias = NULL, *dc = NULL;
    CHECK_OK(ck_malloc(dev, sizeof ha, &da));
    CHECK_OK(ck_malloc(dev, sizeof hb, &db));
    CHECK_OK(ck_malloc(dev, sizeof hd, &dd));
    CHECK_OK(ck_malloc(dev, sizeof hbias, &dbias));
    CHECK_OK(ck_malloc(dev, sizeof hc, &dc));
    CHECK_OK(ck_memcpy_h2d(dev, da, ha, sizeof ha, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, db, hb, sizeof hb, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dbias, hbias, sizeof hbias, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dc, hc, sizeof hc, NULL));
    ck_tensor a, b, d, bias, c;
    int64_t sa[3] = {B, M, K}, sb[2] = {K, N}, sd[3] = {B, M, N}, dstr[3] = {N, B * N, 1};
    int64_t sbias[2] = {B, N}, sc[3] = {1, M, N};
    CHECK_OK(ck_tensor_init(&a, (char *)da + 2, CK_DTYPE_BF16, 3, sa, NULL));
    CHECK_OK(ck_tensor_init(&b, db, CK_DTYPE_BF16, 2, sb, NULL));
    CHECK_OK(ck_tensor_init(&d, dd, CK_DTYPE_F32, 3, sd, dstr));
    CHECK_OK(ck_tensor_init(&bias, dbias, CK_DTYPE_BF16, 2, sbias, NULL));
    CHECK_OK(ck_tensor_init(&c, dc, CK_DTYPE_F32, 3, sc, NULL));
    for (int pass = 0; pass < 2; ++pass) {
        ck_gemm_options o;
        ck_gemm_options_init(&o);
        o.alpha = 2;
        o.bias = &bias;
        o.bias_mode = CK_GEMM_BIAS_COL;
        if (pass == 1) { /* C broadcast, one bias vector (row 1 of bias) for every batch */
            o.beta = -1;
            bias.rank = 1;
            bias.shape[0] = N, bias.strides[0] = 1;
            bias.data = (uint16_t *)dbias + N;
        }
        CHECK_OK(ck_gemm(g_ctx, &a, &b, pass ? &c : NULL, &d, &o));
        CHECK_OK(ck_context_synchronize(g_ctx));
        CHECK_OK(ck_memcpy_d2h(dev, hd, dd, sizeof hd, NULL));
        for (int bt = 0; bt < B; ++bt)
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < N; ++j) {
                    double ref = 0, mag = 0;
                    for (int k = 0; k < K; ++k) {
                        double x = gc_get(ha, CK_DTYPE_BF16, 1 + (bt * M + i) * K + k) *
                                   gc_get(hb, CK_DTYPE_BF16, k * N + j);
                        ref += 2 * x;
                        mag += fabs(2 * x);
                    }
                    ref += gc_get(hbias, CK_DTYPE_BF16, (pass ? 1 : bt) * N + j);
                    if (pass)
                        ref -= hc[i * N + j];
                    float got = hd[bt * N + i * B * N + j];
                    CHECK_MSG(fabs(got - ref) <= 1e-5 * mag + 1e-5,
                              "pass %d D(%d, %d, %d) = %g, "
                              "want %g",
                              pass, bt, i, j, got, ref);
                }
    }
    /* a batch of 2 against d's 3: refused */
    sa[0] = 2;
    CHECK_OK(ck_tensor_init(&a, da, CK_DTYPE_BF16, 3, sa, NULL));
    CHECK(ck_gemm(g_ctx, &a, &b, NULL, &d, NULL) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "or 1, broadcast") != NULL);
    ck_free(dev, da);
    ck_free(dev, db);
    ck_free(dev, dd);
    ck_free(dev, dbias);
    ck_free(dev, dc);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_refusals);
    RUN_TEST(test_execute_overlap);
    RUN_TEST(test_sm80_batches);
    RUN_TEST(test_sm90_batches);
    RUN_TEST(test_tensor_form);
    ck_context_destroy(g_ctx);
    (void)R;
    (void)C;
    return CK_TEST_REPORT();
}
