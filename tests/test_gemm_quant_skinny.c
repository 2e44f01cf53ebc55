/*
 * The small-M mixed-input variant (family sm80q, quant_skinny.c) on the emulator: f16 / bf16
 * activations of M = 1, 3, 16, 64 rows x packed int4, uint4 with zero points and fp4 weights;
 * groups of 32 (4-byte loads), 64 (8-byte loads), 128, 1024 and per column; odd N, K at group
 * boundaries and a partial last chunk of K; split-K forced to 1, 2, 3, 5 splits (boundaries
 * inside K blocks); C, bias, activation, a multi-D extra and alpha applied once to the full
 * sum, D of either order; a second run bit-identical; D's padding untouched. Every element of D
 * against the CPU reference (reference.c, which reads packed B and its scales through quant.c)
 * within ck_gemm_tolerance. Then the policy: it picks the variant for M <= 64, not for M = 65, rows
 * of B that are not 16-byte multiples, groups of 16, or under CK_GEMM_QSKINNY=0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/gemm/gemm_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x5851f42d4c957f2dull;

static double urand(void) /* [-1, 1) */
{
    return (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1;
}

typedef struct qs_case {
    int64_t m, n, k;
    ck_dtype a, d;
    ck_gemm_packed packed;
    int zeros;
    int group; /* B's scales: BLOCK 1 x group; 0: VECTOR (per column) */
    ck_gemm_order sb_order;
    int scale_a_rows;  /* A's scales: VECTOR (per row) */
    int splits;        /* forced split count (0: the variant's own choice) */
    int alt;           /* 1, 2: the second or third instance (1 or 4 column tiles a warp) */
    int c, bias, relu; /* beta * C (C is D in place), a column bias, relu */
    int pad;           /* extra elements in D's ld */
    int dcol;          /* D column-major */
    int extra;         /* a per-column f32 multiplier (multi-D extra) */
    float alpha;
} qs_case;

static qs_case qcase(int64_t m, int64_t n, int64_t k, ck_gemm_packed f, int group)
{
    qs_case c;
    memset(&c, 0, sizeof c);
    c.m = m, c.n = n, c.k = k, c.packed = f, c.group = group;
    c.a = CK_DTYPE_BF16, c.d = CK_DTYPE_BF16;
    c.sb_order = CK_GEMM_ROW_MAJOR;
    c.alpha = 1;
    return c;
}

static void put(void *p, ck_dtype t, int64_t i, double v)
{
    int es = ck_gemm_dtype_bytes(t);
    uint64_t code = 0;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    memcpy((char *)p + i * es, &code, (size_t)es);
}

static double get(const void *p, ck_dtype t, int64_t i)
{
    int es = ck_gemm_dtype_bytes(t);
    uint64_t code = 0;
    double v = 0;
    memcpy(&code, (const char *)p + i * es, (size_t)es);
    ck_convert_to_f64(t, code, &v);
    return v;
}

static void problem_of(const qs_case *c, ck_gemm_problem *p)
{
    ck_gemm_problem_init(p);
    p->m = c->m, p->n = c->n, p->k = c->k;
    p->a.dtype = c->a, p->d.dtype = c->d;
    p->b.dtype = CK_DTYPE_U8, p->b.order = CK_GEMM_COL_MAJOR;
    p->b.ld = (c->k / 2 + 15) / 16 * 16; /* rows of B padded to 16 bytes */
    p->d.order = c->dcol ? CK_GEMM_COL_MAJOR : CK_GEMM_ROW_MAJOR;
    p->d.ld = (c->dcol ? c->m : c->n) + c->pad;
    p->b_packed = c->packed;
    p->b_zeros = c->zeros;
    p->scale_b.mode = c->group ? CK_GEMM_SCALE_BLOCK : CK_GEMM_SCALE_VECTOR;
    p->scale_b.block_mn = 1, p->scale_b.block_k = c->group;
    p->scale_b.order = c->sb_order;
    if (c->scale_a_rows)
        p->scale_a.mode = CK_GEMM_SCALE_VECTOR;
    if (c->c)
        p->c = p->d;
    if (c->bias)
        p->bias = CK_GEMM_BIAS_COL, p->bias_dtype = CK_DTYPE_F32;
    if (c->relu)
        p->activation = CK_GEMM_ACT_RELU;
    if (c->extra) {
        p->extra_count = 1;
        p->extras[0].op = CK_GEMM_EXTRA_MUL;
        p->extras[0].broadcast = CK_GEMM_EXTRA_COL;
        p->extras[0].dtype = CK_DTYPE_F32;
    }
}

/* The variant's plan with the split count forced (the device's own choice with 0). */
static ck_gemm_plan *plan_of(const ck_gemm_prob *prob, int splits, int alt, char *name, size_t size)
{
    ck_device_props props;
    ck_device_get_props(ck_context_device(g_ctx), &props);
    ck_gemm_instance in[4];
    char why[256] = "";
    int ok = ck_gemm_family_sm80q.supports(prob, &props, why, sizeof why);
    CHECK_MSG(ok, "not supported: %s", why);
    int n = ok ? ck_gemm_family_sm80q.instances(prob, &props, in, 4) : 0;
    CHECK(n > alt);
    if (n <= alt)
        return NULL;
    if (splits)
        in[alt].split_k = splits;
    ck_gemm_instance_name(&in[alt], name, size);
    ck_gemm_plan *plan = NULL;
    CHECK_OK(ck_gemm_plan_build(g_ctx, prob, &in[alt], &plan));
    return plan;
}

/* Run one case (twice: the second run's D must be the same bits); every element of D against
 * the reference. Returns the number of wrong elements. */
static long run(const qs_case *c)
{
    ck_device *dev = ck_context_device(g_ctx);
    ck_gemm_problem p;
    problem_of(c, &p);
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    char name[96] = "";
    ck_gemm_plan *plan = plan_of(&prob, c->splits, c->alt, name, sizeof name);
    if (!plan)
        return 1;
    p = prob.p; /* resolved scale layouts */
    int esa = ck_gemm_dtype_bytes(c->a), esd = ck_gemm_dtype_bytes(c->d);
    int64_t kb = (c->k + (c->group ? c->group : c->k) - 1) / (c->group ? c->group : c->k);
    size_t na = (size_t)(c->m * c->k), nb = (size_t)(c->n * p.b.ld);
    int64_t lines = c->dcol ? c->n : c->m, contig = c->dcol ? c->m : c->n;
    size_t nd = (size_t)(lines * p.d.ld);
    size_t ns = (size_t)(kb * c->n), nsa = (size_t)c->m;
    unsigned char *ha = malloc(na * esa), *hb = malloc(nb), *hd = malloc(nd * esd),
                  *hd0 = malloc(nd * esd), *hd1 = malloc(nd * esd), *hz = malloc(ns);
    float *hs = malloc(ns * 4), *hsa = malloc(nsa * 4), *hbias = malloc((size_t)c->n * 4);
    for (size_t i = 0; i < na; ++i)
        put(ha, c->a, (int64_t)i, urand());
    for (size_t i = 0; i < nb; ++i)
        hb[i] = (unsigned char)(ckt_rand64(&g_rng) >> 56);
    for (size_t i = 0; i < nd; ++i)
        put(hd0, c->d, (int64_t)i, urand());
    for (size_t i = 0; i < ns; ++i) { /* scales of mixed sign, 2^-3 .. 2^3 */
        hs[i] = (float)(ldexp(1 + urand() * 0.5, (int)(urand() * 3.5)) * (urand() < -0.6 ? -1 : 1));
        hz[i] = (unsigned char)(ckt_rand64(&g_rng) >> 60);
    }
    for (size_t i = 0; i < nsa; ++i)
        hsa[i] = (float)(0.5 + urand() * 0.25);
    for (int64_t j = 0; j < c->n; ++j)
        hbias[j] = (float)urand();
    void *da = NULL, *db = NULL, *dd = NULL, *ds = NULL, *dsa = NULL, *dz = NULL, *dbias = NULL;
    CHECK_OK(ck_malloc(dev, na * esa, &da));
    CHECK_OK(ck_malloc(dev, nb, &db));
    CHECK_OK(ck_malloc(dev, nd * esd, &dd));
    CHECK_OK(ck_malloc(dev, ns * 4, &ds));
    CHECK_OK(ck_malloc(dev, nsa * 4, &dsa));
    CHECK_OK(ck_malloc(dev, ns, &dz));
    CHECK_OK(ck_malloc(dev, (size_t)c->n * 4, &dbias));
    CHECK_OK(ck_memcpy_h2d(dev, da, ha, na * esa, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, db, hb, nb, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, ds, hs, ns * 4, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dsa, hsa, nsa * 4, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dz, hz, ns, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dbias, hbias, (size_t)c->n * 4, NULL));
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.a = da, args.b = db, args.d = dd;
    args.c = c->c ? dd : NULL, args.beta = c->c ? 0.5f : 0.0f;
    args.b_scales = ds, args.b_zeros = c->zeros ? dz : NULL;
    args.a_scales = c->scale_a_rows ? dsa : NULL;
    args.bias = c->bias ? dbias : NULL;
    args.extra[0] = c->extra ? dbias : NULL; /* the bias's values as multipliers */
    args.alpha = c->alpha;
    for (int r = 0; r < 2; ++r) { /* D is also C (in place): start from the same D each run */
        CHECK_OK(ck_memcpy_h2d(dev, dd, hd0, nd * esd, NULL));
        CHECK_OK(ck_gemm_plan_execute(plan, &args));
        CHECK_OK(ck_memcpy_d2h(dev, r ? hd1 : hd, dd, nd * esd, NULL));
    }
    CHECK_MSG(memcmp(hd, hd1, nd * esd) == 0, "%s: a second run gave other bits", name);
    ck_gemm_args h = args;
    h.a = ha, h.b = hb, h.d = hd0, h.c = c->c ? hd0 : NULL;
    h.b_scales = hs, h.b_zeros = c->zeros ? hz : NULL, h.a_scales = c->scale_a_rows ? hsa : NULL;
    h.bias = c->bias ? hbias : NULL;
    h.extra[0] = c->extra ? hbias : NULL;
    long bad = 0;
    for (int64_t l = 0; l < lines; ++l)
        for (int64_t e = 0; e < p.d.ld; ++e) {
            int64_t at = l * p.d.ld + e, i = c->dcol ? e : l, j = c->dcol ? l : e;
            if (e >= contig) { /* D's padding untouched */
                if (memcmp(hd + at * esd, hd0 + at * esd, (size_t)esd) && ++bad <= 3)
                    CHECK_MSG(0, "%s: D's padding (line %lld, %lld) was written", name,
                              (long long)l, (long long)e);
                continue;
            }
            double mag = 0, want = ck_gemm_reference_value(&prob, &h, i, j, &mag);
            double got = get(hd, c->d, at), tol = ck_gemm_tolerance(&prob, mag, want);
            if (!(fabs(got - want) <= tol) && ++bad <= 3)
                CHECK_MSG(0, "%s %lldx%lldx%lld: D(%lld, %lld) = %.9g, want %.9g (tol %.3g)", name,
                          (long long)c->m, (long long)c->n, (long long)c->k, (long long)i,
                          (long long)j, got, want, tol);
        }
    if (bad == 0)
        CHECK(1);
    ck_free(dev, da), ck_free(dev, db), ck_free(dev, dd), ck_free(dev, ds), ck_free(dev, dsa);
    ck_free(dev, dz), ck_free(dev, dbias);
    free(ha), free(hb), free(hd), free(hd0), free(hd1), free(hz), free(hs), free(hsa), free(hbias);
    ck_gemm_plan_destroy(plan);
    return bad;
}

/* int4 with groups of 128 at the decode row counts; odd N; split-K at step boundaries. */
static void test_int4_rows(void)
{
    static const int64_t rows[] = {1, 3, 16, 64};
    for (int r = 0; r < 4; ++r) {
        qs_case c = qcase(rows[r], 77, 1280, CK_GEMM_PACKED_INT4, 128);
        c.splits = r % 2 ? 3 : 2; /* 1280 = 2.5 steps of 512 (1.25 ... of 256 at M 64): a
                                     partial last step, splits of unequal steps */
        c.pad = r;
        run(&c);
    }
    qs_case c = qcase(16, 129, 512, CK_GEMM_PACKED_INT4, 128); /* one split, 3 column tiles */
    c.splits = 1;
    run(&c);
    c.alt = 1; /* one column tile a warp: 3 column tiles of 64 */
    c.splits = 2;
    run(&c);
    c.alt = 2; /* four: 256 columns a block */
    c.m = 9;
    c.splits = 3;
    run(&c);
    c = qcase(16, 77, 4096, CK_GEMM_PACKED_INT4, 128); /* 7 splits: the last block loads */
    c.splits = 7;                                      /* 4 splits' partials, then 2 */
    run(&c);
    c = qcase(64, 70, 768, CK_GEMM_PACKED_INT4, 128);
    c.alt = 1; /* and at M = 64: registers of byte pairs */
    c.splits = 3;
    run(&c);
}

/* Groups longer than a step, cut by split boundaries (each split promotes its part); groups of
 * 64 and 32 (8- and 4-byte loads per lane); f16. */
static void test_groups_and_splits(void)
{
    qs_case c = qcase(5, 40, 2048, CK_GEMM_PACKED_INT4, 1024);
    c.splits = 3;
    run(&c);
    c = qcase(9, 33, 384, CK_GEMM_PACKED_UINT4, 64);
    c.a = CK_DTYPE_F16, c.d = CK_DTYPE_F32;
    c.zeros = 1;
    c.sb_order = CK_GEMM_COL_MAJOR;
    c.splits = 5;
    run(&c);
    c = qcase(4, 20, 128, CK_GEMM_PACKED_INT4, 128); /* 5 splits asked, one step of K */
    c.splits = 5;
    run(&c);
    c = qcase(2, 50, 256, CK_GEMM_PACKED_INT4, 32);
    c.a = CK_DTYPE_F16, c.d = CK_DTYPE_F16;
    c.splits = 2;
    run(&c);
}

/* Per-column scales (one K block) with K not a multiple of the chunk (a partial last piece of
 * each line of B), zero points per column, per-row A scales; fp4 with groups of 32. */
static void test_vector_and_fp4(void)
{
    qs_case c = qcase(7, 45, 200, CK_GEMM_PACKED_UINT4, 0);
    c.zeros = 1;
    c.scale_a_rows = 1;
    c.splits = 1;
    run(&c);
    c = qcase(64, 24, 3000, CK_GEMM_PACKED_INT4, 0);
    c.splits = 4;
    run(&c);
    c = qcase(11, 64, 256, CK_GEMM_PACKED_FP4_E2M1, 32);
    c.d = CK_DTYPE_F32;
    c.splits = 2;
    run(&c);
    c = qcase(1, 31, 512, CK_GEMM_PACKED_FP4_E2M1, 128);
    c.a = CK_DTYPE_F16;
    run(&c);
    /* registers of byte pairs (qs_reg: M > 32 with one column tile a warp, M > 56 with two),
     * fp4 and uint4 */
    c = qcase(40, 20, 256, CK_GEMM_PACKED_FP4_E2M1, 64);
    c.splits = 2;
    c.alt = 1;
    run(&c);
    c = qcase(64, 17, 384, CK_GEMM_PACKED_UINT4, 128);
    c.a = CK_DTYPE_F16;
    c.zeros = 1;
    run(&c);
}

/* C (in place), a bias, relu, a multi-D extra and alpha with split-K: the epilogue runs once,
 * on the full sum; D column-major. Row-major A only (column-major A: the tile pipeline). */
static void test_epilogue_with_splits(void)
{
    qs_case c = qcase(3, 70, 1024, CK_GEMM_PACKED_INT4, 128);
    c.c = c.bias = c.relu = 1;
    c.splits = 2;
    c.pad = 5;
    run(&c);
    c = qcase(20, 48, 512, CK_GEMM_PACKED_UINT4, 128);
    c.zeros = 1;
    c.extra = 1;
    c.alpha = 0.75f;
    c.dcol = 1;
    c.pad = 3;
    c.splits = 2;
    c.d = CK_DTYPE_F32;
    run(&c);
    ck_gemm_problem p;
    problem_of(&c, &p);
    p.a.order = CK_GEMM_COL_MAJOR, p.a.ld = 0;
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    ck_device_props props;
    ck_device_get_props(ck_context_device(g_ctx), &props);
    char why[256] = "";
    CHECK(!ck_gemm_family_sm80q.supports(&prob, &props, why, sizeof why));
    CHECK_MSG(strstr(why, "row-major A") != NULL, "reason: %s", why);
}

/* The policy's choice. */
static void test_policy(void)
{
    ck_gemm_problem p;
    qs_case c = qcase(16, 4096, 4096, CK_GEMM_PACKED_INT4, 128);
    ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
    int n = 0;
    static const int64_t rows[] = {1, 16, 64, 65};
    for (int r = 0; r < 4; ++r) {
        c.m = rows[r];
        problem_of(&c, &p);
        CHECK_OK(ck_gemm_candidates(g_ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
        int skinny = n > 0 && strstr(cand[0].name, "qskinny") != NULL;
        CHECK_MSG(skinny == (c.m <= 64), "M = %lld: first candidate %s", (long long)c.m,
                  n > 0 ? cand[0].name : "(none)");
    }
    c.m = 16;
    problem_of(&c, &p);
    p.b.ld = 2049; /* rows of B not 16-byte multiples: the tile pipeline (element-wise copy) */
    CHECK_OK(ck_gemm_candidates(g_ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
    CHECK(n > 0 && strstr(cand[0].name, "qskinny") == NULL);
    problem_of(&c, &p);
    p.scale_b.block_k = 16; /* a chunk of K would span groups */
    CHECK_OK(ck_gemm_candidates(g_ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
    CHECK(n > 0 && strstr(cand[0].name, "qskinny") == NULL);
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    ck_device_props props;
    ck_device_get_props(ck_context_device(g_ctx), &props);
    char why[256] = "";
    CHECK(!ck_gemm_family_sm80q.supports(&prob, &props, why, sizeof why));
    CHECK_MSG(strstr(why, "multiples of 32") != NULL, "reason: %s", why);
    problem_of(&c, &p);
    setenv("CK_GEMM_QSKINNY", "0", 1);
    CHECK_OK(ck_gemm_candidates(g_ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
    CHECK(n > 0 && strstr(cand[0].name, "qskinny") == NULL);
    unsetenv("CK_GEMM_QSKINNY");
    /* on an H100-like device the grid splits K to fill one wave of resident blocks (3 a
     * multiprocessor at M = 16 with 128 columns a block, 2 at M = 64), at most the steps */
    props.multiprocessors = 132;
    props.max_shared_per_block = 227 * 1024;
    props.shared_per_sm = 228 * 1024;
    props.regs_per_sm = 65536;
    props.max_threads_per_sm = 2048;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    ck_gemm_instance in[4];
    n = ck_gemm_family_sm80q.instances(&prob, &props, in, 4);
    CHECK(n == 3 && in[0].tile_n == 128 && in[0].split_k == 8); /* 32 tiles, 8 steps of K */
    CHECK(in[1].tile_n == 64 && in[2].tile_n == 256 && in[2].stages == 2);
    static const int64_t shape[3][4] = {                       /* m, n, k, splits */
                                        {16, 14336, 4096, 3},  /* 112 tiles x 3 <= 396 */
                                        {16, 4096, 14336, 12}, /* 32 x 12 */
                                        {64, 4096, 14336, 8}}; /* 2 a multiprocessor: 32 x 8 */
    for (int i = 0; i < 3; ++i) {
        c.m = shape[i][0], c.n = shape[i][1], c.k = shape[i][2];
        problem_of(&c, &p);
        CHECK_OK(ck_gemm_prob_make(&p, &prob));
        n = ck_gemm_family_sm80q.instances(&prob, &props, in, 4);
        CHECK_MSG(n > 0 && in[0].split_k == shape[i][3], "%lldx%lldx%lld: %d splits",
                  (long long)c.m, (long long)c.n, (long long)c.k, n > 0 ? in[0].split_k : -1);
    }
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    RUN_TEST(test_policy);
    RUN_TEST(test_int4_rows);
    RUN_TEST(test_groups_and_splits);
    RUN_TEST(test_vector_and_fp4);
    RUN_TEST(test_epilogue_with_splits);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
