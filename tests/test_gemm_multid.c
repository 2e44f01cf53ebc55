/*
 * Multi-D epilogues on the emulator: D = cast(program(extras(act(alpha A B + beta C + bias))))
 * with up to 4 extra tensors (row vectors, column vectors, full matrices in either order and
 * with padded ld; f32, f16, bf16), each added or multiplied in order. Both kernel families
 * (instances chosen by name), odd M, N, K, batches with per-batch and broadcast extras,
 * sm90's split-K and the D shape where sm90 would use its TMA store (disabled with extras);
 * every element against the CPU reference and D's padding untouched. Then the refusals of
 * the problem (count, op, broadcast, type, ld, batch stride) and of the execution (NULL
 * pointer, extra overlapping D or being D).
 */
#include "gemm_harness.h"

static const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;

static ck_gemm_extra xt(ck_gemm_extra_op op, ck_gemm_extra_broadcast bc, ck_dtype t,
                        ck_gemm_order o)
{
    ck_gemm_extra e;
    memset(&e, 0, sizeof e);
    e.op = op;
    e.broadcast = bc;
    e.dtype = t;
    e.order = o;
    return e;
}

static int g_sm90;

/* Run a case; for sm90 (TMA loads: A's and B's ld and batch stride a multiple of 16 bytes)
 * with odd padding and gaps rounded to 8 elements. */
static void run(gcase c)
{
    if (g_sm90) {
        c.pad = c.pad ? 8 : 0;
        c.gap = c.gap ? 8 : 0;
    }
    gc_run(&c);
}

/* The cases of one family (want: "sm80" or "sm90"). */
static void run_family(const char *want)
{
    int sm90 = g_sm90 = want[2] == '9';
    /* gated unit: silu(A B) * D1 (full), then residual + D2 (full, other order) */
    static const int64_t shapes[][3] = {{37, 29, 64}, {19, 45, 104}, {70, 33, 48}};
    for (int i = 0; i < 3; ++i) {
        gcase c = gc_base(shapes[i][0], shapes[i][1], shapes[i][2],
                          i == 1 ? CK_DTYPE_F16 : CK_DTYPE_BF16,
                          i == 0 ? CK_DTYPE_BF16 : i == 1 ? CK_DTYPE_F16 : CK_DTYPE_F32);
        c.want = want;
        c.bo = C; /* K-major B: any N for sm90's TMA */
        c.act = CK_GEMM_ACT_SILU;
        c.nx = 2;
        c.x[0] = xt(CK_GEMM_EXTRA_MUL, CK_GEMM_EXTRA_FULL, i == 2 ? CK_DTYPE_F32 : CK_DTYPE_BF16,
                    i % 2 ? C : R);
        c.x[1] = xt(CK_GEMM_EXTRA_ADD, CK_GEMM_EXTRA_FULL, CK_DTYPE_F32, i % 2 ? R : C);
        c.dox = i == 1 ? C : R;
        c.pad = i == 2 ? 3 : 0;
        run(c);
    }
    /* all four kinds, with C, bias, alpha, an activation and a program after the extras */
    for (int i = 0; i < 2; ++i) {
        gcase c = gc_base(i ? 45 : 66, i ? 23 : 40, 64, CK_DTYPE_BF16,
                          i ? CK_DTYPE_F32 : CK_DTYPE_BF16);
        c.want = want;
        c.bo = C;
        c.c = c.d;
        c.co = i ? C : R;
        c.beta = -0.5f;
        c.alpha = 1.25f;
        c.bias = i ? CK_GEMM_BIAS_ROW : CK_GEMM_BIAS_COL;
        c.act = i ? CK_GEMM_ACT_GELU_TANH : CK_GEMM_ACT_RELU;
        c.epi = i ? "x0 * 0.5 + 1" : NULL;
        c.nx = 4;
        c.x[0] = xt(CK_GEMM_EXTRA_MUL, CK_GEMM_EXTRA_ROW, CK_DTYPE_F16, R);
        c.x[1] = xt(CK_GEMM_EXTRA_ADD, CK_GEMM_EXTRA_COL, CK_DTYPE_BF16, R);
        c.x[2] = xt(CK_GEMM_EXTRA_MUL, CK_GEMM_EXTRA_FULL, CK_DTYPE_F16, i ? R : C);
        c.x[3] = xt(CK_GEMM_EXTRA_ADD, CK_GEMM_EXTRA_COL, CK_DTYPE_F32, R);
        c.pad = i ? 1 : 8;
        run(c);
    }
    /* batches: per-batch extras with gaps, then extras broadcast to every batch */
    gcase c = gc_base(29, 35, 48, CK_DTYPE_F16, CK_DTYPE_F16);
    c.want = want;
    c.bo = C;
    c.batch = 3;
    c.gap = 5;
    c.nx = 3;
    c.x[0] = xt(CK_GEMM_EXTRA_MUL, CK_GEMM_EXTRA_FULL, CK_DTYPE_BF16, R);
    c.x[1] = xt(CK_GEMM_EXTRA_ADD, CK_GEMM_EXTRA_ROW, CK_DTYPE_F32, R);
    c.x[2] = xt(CK_GEMM_EXTRA_ADD, CK_GEMM_EXTRA_FULL, CK_DTYPE_F16, C);
    run(c);
    c.bcast = 1 | 16; /* A and the extras broadcast */
    c.gap = 8;
    run(c);
    /* the shape of sm90's TMA store of D (16-bit, row-major, N % 8 == 0, alpha only): the
     * extras need the generated epilogue */
    c = gc_base(67, 136, 48, CK_DTYPE_BF16, CK_DTYPE_BF16);
    c.want = want;
    c.nx = 1;
    c.x[0] = xt(CK_GEMM_EXTRA_MUL, CK_GEMM_EXTRA_FULL, CK_DTYPE_BF16, R);
    gc_run(&c);
    if (sm90) { /* split-K: the last split's epilogue reads the extras */
        c = gc_base(140, 30, 504, CK_DTYPE_BF16, CK_DTYPE_F32);
        c.split = 3;
        c.bo = C;
        c.nx = 2;
        c.x[0] = xt(CK_GEMM_EXTRA_ADD, CK_GEMM_EXTRA_FULL, CK_DTYPE_F32, C);
        c.x[1] = xt(CK_GEMM_EXTRA_MUL, CK_GEMM_EXTRA_COL, CK_DTYPE_BF16, R);
        gc_run(&c);
    } else { /* i8 -> i32: the epilogue in double, the extras too */
        c = gc_base(21, 13, 40, CK_DTYPE_I8, CK_DTYPE_I32);
        c.want = want;
        c.nx = 2;
        c.x[0] = xt(CK_GEMM_EXTRA_MUL, CK_GEMM_EXTRA_COL, CK_DTYPE_F32, R);
        c.x[1] = xt(CK_GEMM_EXTRA_ADD, CK_GEMM_EXTRA_FULL, CK_DTYPE_F32, R);
        gc_run(&c);
    }
}

static void test_sm80(void)
{
    run_family("sm80");
}

static void test_sm90(void)
{
    run_family("sm90");
}

static void base_problem(ck_gemm_problem *p)
{
    ck_gemm_problem_init(p);
    p->m = 33;
    p->n = 17;
    p->k = 24;
    p->extra_count = 1;
    p->extras[0].op = CK_GEMM_EXTRA_MUL;
    p->extras[0].broadcast = CK_GEMM_EXTRA_FULL;
    p->extras[0].dtype = CK_DTYPE_BF16;
}

static void refused(const ck_gemm_problem *p, const char *needle)
{
    ck_gemm_prob pr;
    ck_status st = ck_gemm_prob_make(p, &pr);
    CHECK_MSG(st != CK_SUCCESS, "accepted a problem that needs '%s'", needle);
    if (st != CK_SUCCESS)
        CHECK_MSG(strstr(ck_last_error(), needle) != NULL, "'%s' lacks '%s'", ck_last_error(),
                  needle);
}

static void test_refusals(void)
{
    ck_gemm_problem p;
    base_problem(&p);
    ck_gemm_prob pr;
    CHECK_OK(ck_gemm_prob_make(&p, &pr));
    CHECK(pr.p.extras[0].ld == 17); /* packed */
    ck_gemm_problem_init(&p);
    CHECK(p.extra_count == 0 && p.extras[3].op == CK_GEMM_EXTRA_NONE);
    base_problem(&p);
    p.extra_count = 5;
    refused(&p, "extra_count = 5");
    p.extra_count = -1;
    refused(&p, "extra_count = -1");
    base_problem(&p);
    p.extras[0].op = CK_GEMM_EXTRA_NONE;
    refused(&p, "extra 0 has op 0");
    p.extras[0].op = (ck_gemm_extra_op)3;
    refused(&p, "extra 0 has op 3");
    base_problem(&p);
    p.extra_count = 2;
    p.extras[1] = p.extras[0];
    p.extras[1].broadcast = (ck_gemm_extra_broadcast)0;
    refused(&p, "extra 1 has broadcast 0");
    p.extras[1].broadcast = (ck_gemm_extra_broadcast)4;
    refused(&p, "extra 1 has broadcast 4");
    base_problem(&p);
    p.extras[0].dtype = CK_DTYPE_FP8_E4M3;
    refused(&p, "extra 0 has type");
    p.extras[0].dtype = CK_DTYPE_I8;
    refused(&p, "accepted: f32, f16, bf16");
    base_problem(&p);
    p.extras[0].ld = 16;
    refused(&p, "leading dimension 16");
    p.extras[0].order = C;
    p.extras[0].ld = 32;
    refused(&p, "below its contiguous extent 33");
    p.extras[0].order = (ck_gemm_order)7;
    refused(&p, "order 7");
    base_problem(&p);
    p.batch = 2;
    p.d.batch_stride = 33 * 17;
    p.extras[0].batch_stride = -4;
    refused(&p, "extra 0 has batch stride -4");
    /* a vector ignores order and ld; a slot beyond the count is ignored */
    base_problem(&p);
    p.extras[0].broadcast = CK_GEMM_EXTRA_COL;
    p.extras[0].ld = 3;
    p.extras[0].order = (ck_gemm_order)9;
    p.extras[2].op = (ck_gemm_extra_op)77;
    CHECK_OK(ck_gemm_prob_make(&p, &pr));
    CHECK(pr.p.extras[0].ld == 0 && pr.p.extras[2].op == CK_GEMM_EXTRA_NONE);
}

static void test_execute(void)
{
    ck_device *dev = ck_context_device(g_ctx);
    ck_gemm_problem p;
    base_problem(&p);
    p.extra_count = 2;
    p.extras[1] = p.extras[0];
    p.extras[1].broadcast = CK_GEMM_EXTRA_ROW;
    ck_gemm_plan *plan = NULL;
    CHECK_OK(ck_gemm_plan_create(g_ctx, &p, -1, &plan));
    if (!plan)
        return;
    void *da = NULL, *db = NULL, *dd = NULL, *dx = NULL;
    CHECK_OK(ck_malloc(dev, 33 * 24 * 2, &da));
    CHECK_OK(ck_malloc(dev, 24 * 17 * 2, &db));
    CHECK_OK(ck_malloc(dev, 2 * 33 * 17 * 2, &dd));
    CHECK_OK(ck_malloc(dev, 33 * 17 * 2, &dx));
    ck_gemm_args a;
    ck_gemm_args_init(&a);
    a.a = da;
    a.b = db;
    a.d = dd;
    a.extra[0] = dx;
    CHECK(ck_gemm_plan_execute(plan, &a) != CK_SUCCESS);
    CHECK(strstr(ck_last_error(), "pointer extra 1 is NULL") != NULL);
    a.extra[1] = dx;
    CHECK_OK(ck_gemm_plan_execute(plan, &a));
    a.extra[0] = dd; /* exactly D */
    CHECK(ck_gemm_plan_execute(plan, &a) != CK_SUCCESS);
    CHECK(strstr(ck_last_error(), "extra 0") && strstr(ck_last_error(), "overlaps D"));
    a.extra[0] = dx;
    a.extra[1] = (char *)dd + 33 * 17 * 2 - 8; /* the row vector's head in D's tail */
    CHECK(ck_gemm_plan_execute(plan, &a) != CK_SUCCESS);
    CHECK(strstr(ck_last_error(), "extra 1") && strstr(ck_last_error(), "overlaps D"));
    a.extra[1] = (char *)dd + 33 * 17 * 2; /* just past D: fine */
    CHECK_OK(ck_gemm_plan_execute(plan, &a));
    CHECK_OK(ck_context_synchronize(g_ctx));
    ck_gemm_plan_destroy(plan);
    ck_free(dev, da);
    ck_free(dev, db);
    ck_free(dev, dd);
    ck_free(dev, dx);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_refusals);
    RUN_TEST(test_execute);
    RUN_TEST(test_sm80);
    RUN_TEST(test_sm90);
    ck_context_destroy(g_ctx);
    (void)R;
    (void)C;
    return CK_TEST_REPORT();
}
