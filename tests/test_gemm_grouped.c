/*
 * Grouped GEMM (ck_gemm_grouped_*; grouped.c, grouped_kernel.h, sm90_grouped_kernel.h) on the
 * emulator, on the sm90 kernel (the policy's choice where it takes the types) and on the sm80
 * kernel (forced through ck_gemm_grouped_candidates): lists with
 * empty groups (M, N or K of 0), 1 x 1 x 1 and 1 x N groups, odd shapes, padded and odd leading
 * dimensions and pointers off 16-byte alignment (the element-wise copy path beside the 16-byte
 * one in one launch), C (in place too) and bias, every order and element sizes 4, 2, 1, a list of
 * many small groups (blocks walking several groups), and count 0. Every element of every
 * group's D against the CPU reference, every element of D's buffers outside the products
 * untouched. Then the refusals of ck_gemm_grouped_check (negative sizes, NULL pointers, short
 * leading dimensions, overlaps) and of plan creation and execution.
 */
#include "gemm_harness.h"

static const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;

typedef struct glist {
    ck_gemm_problem p; /* types, orders, C, bias, activation */
    int count;
    int64_t dims[64][3];
    int pad[64];    /* extra elements in every ld of the group */
    int offset[64]; /* elements the group's A, B and D start past a 16-byte boundary */
    int alias;      /* C is D */
    float alpha, beta;
    int family;     /* the family to force (80 or 90); 0: the policy's (sm90 where it can) */
} glist;

static void glist_init(glist *l, ck_dtype in, ck_dtype out, ck_gemm_order ao, ck_gemm_order bo,
                       ck_gemm_order dox)
{
    memset(l, 0, sizeof *l);
    ck_gemm_problem_init(&l->p);
    l->p.a.dtype = l->p.b.dtype = in;
    l->p.d.dtype = out;
    l->p.a.order = ao, l->p.b.order = bo, l->p.d.order = dox, l->p.c.order = dox;
    l->p.m = l->p.n = l->p.k = 48; /* the tile is chosen for this: small, so groups have several */
    l->alpha = 1;
}

static void glist_add(glist *l, int64_t m, int64_t n, int64_t k, int pad, int offset)
{
    l->dims[l->count][0] = m, l->dims[l->count][1] = n, l->dims[l->count][2] = k;
    l->pad[l->count] = pad, l->offset[l->count] = offset;
    l->count++;
}

static int64_t ld_of(ck_gemm_order o, int64_t rows, int64_t cols, int pad)
{
    return (o == R ? cols : rows) + pad;
}

static size_t elems_of(ck_gemm_order o, int64_t rows, int64_t cols, int64_t ld)
{
    int64_t lines = o == R ? rows : cols;
    return lines > 0 ? (size_t)(lines * ld) : 0;
}

/* One buffer of a group: host copy (random), device copy `off` elements into an allocation. */
typedef struct gbuf {
    void *h, *base, *d;
    size_t n; /* elements */
} gbuf;

static void gbuf_make(gbuf *b, ck_dtype t, size_t n, int off)
{
    ck_device *dev = ck_context_device(g_ctx);
    int es = ck_gemm_dtype_bytes(t);
    b->n = n;
    b->h = malloc((n + 1) * (size_t)es);
    gc_fill(b->h, t, n + 1);
    CHECK_OK(ck_malloc(dev, (n + (size_t)off + 1) * (size_t)es, &b->base));
    b->d = (char *)b->base + (size_t)off * (size_t)es;
    CHECK_OK(ck_memcpy_h2d(dev, b->d, b->h, n * (size_t)es, NULL));
}

static void gbuf_free(gbuf *b)
{
    ck_free(ck_context_device(g_ctx), b->base);
    free(b->h);
}

/* Run the list; returns the wrong elements. */
static long glist_run(const glist *l)
{
    ck_device *dev = ck_context_device(g_ctx);
    ck_gemm_grouped_plan *plan = NULL;
    ck_gemm_problem tp = l->p;
    if (l->alias) /* C in place: D's type and order */
        tp.c.dtype = tp.d.dtype, tp.c.order = tp.d.order;
    ck_gemm_plan_options opt;
    ck_gemm_plan_options_init(&opt);
    ck_gemm_candidate cands[64];
    int nc = 0;
    CHECK_OK(ck_gemm_grouped_candidates(g_ctx, &tp, cands, 64, &nc));
    for (int i = 0; i < nc && l->family && opt.instance < 0; ++i)
        if (cands[i].family == l->family)
            opt.instance = cands[i].id;
    CHECK(!l->family || opt.instance >= 0);
    ck_status st = ck_gemm_grouped_plan_create_opt(g_ctx, &tp, &opt, &plan);
    CHECK_MSG(st == CK_SUCCESS, "grouped plan: %s", ck_last_error());
    if (st)
        return 1;
    ck_gemm_candidate cand;
    CHECK_OK(ck_gemm_grouped_plan_instance(plan, &cand));
    /* the policy: the sm90 kernel where it takes the types and orders (the emulator is sm_90a) */
    CHECK(cand.family == (l->family ? l->family : nc > 0 ? cands[0].family : 0));
    printf("  %d groups, instance %s\n", l->count, cand.name);
    const ck_gemm_problem *p = &tp;
    int has_c = p->c.dtype != CK_DTYPE_COUNT || l->alias;
    ck_dtype ct = l->alias ? p->d.dtype : p->c.dtype;
    gbuf a[64], b[64], c[64], d[64], bias[64];
    ck_gemm_group_desc desc[64];
    memset(a, 0, sizeof a), memset(b, 0, sizeof b), memset(c, 0, sizeof c);
    memset(d, 0, sizeof d), memset(bias, 0, sizeof bias);
    for (int g = 0; g < l->count; ++g) {
        int64_t m = l->dims[g][0], n = l->dims[g][1], k = l->dims[g][2];
        ck_gemm_group_desc *e = &desc[g];
        memset(e, 0, sizeof *e);
        e->m = m, e->n = n, e->k = k;
        e->lda = ld_of(p->a.order, m, k, l->pad[g]);
        e->ldb = ld_of(p->b.order, k, n, l->pad[g]);
        e->ldd = ld_of(p->d.order, m, n, l->pad[g]);
        e->ldc = e->ldd;
        gbuf_make(&a[g], p->a.dtype, elems_of(p->a.order, m, k, e->lda), l->offset[g]);
        gbuf_make(&b[g], p->b.dtype, elems_of(p->b.order, k, n, e->ldb), l->offset[g]);
        gbuf_make(&d[g], p->d.dtype, elems_of(p->d.order, m, n, e->ldd), l->offset[g]);
        e->a = a[g].d, e->b = b[g].d, e->d = d[g].d;
        if (has_c && !l->alias) {
            gbuf_make(&c[g], ct, elems_of(p->d.order, m, n, e->ldc), 0);
            e->c = c[g].d;
        }
        if (l->alias)
            e->c = e->d;
        if (p->bias != CK_GEMM_BIAS_NONE) {
            gbuf_make(&bias[g], p->bias_dtype, (size_t)(p->bias == CK_GEMM_BIAS_ROW ? m : n), 0);
            e->bias = bias[g].d;
        }
    }
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.alpha = l->alpha;
    args.beta = l->beta;
    CHECK_MSG(ck_gemm_grouped_check(plan, desc, l->count, &args) == CK_SUCCESS, "check: %s",
              ck_last_error());
    void *ddesc = NULL;
    CHECK_OK(ck_malloc(dev, sizeof desc, &ddesc));
    CHECK_OK(ck_memcpy_h2d(dev, ddesc, desc, sizeof desc, NULL));
    st = ck_gemm_grouped_execute(plan, ddesc, l->count, &args);
    CHECK_MSG(st == CK_SUCCESS, "execute: %s", ck_last_error());
    CHECK_OK(ck_context_synchronize(g_ctx));
    long bad = 0;
    for (int g = 0; g < l->count && !st; ++g) {
        const ck_gemm_group_desc *e = &desc[g];
        int des = ck_gemm_dtype_bytes(p->d.dtype);
        size_t nd = d[g].n;
        void *out = malloc(nd * (size_t)des + 1);
        CHECK_OK(ck_memcpy_d2h(dev, out, d[g].d, nd * (size_t)des, NULL));
        /* the group as a problem of its own for the reference (K of 0: made with K 1, then
         * the sum over no k) */
        ck_gemm_problem q = *p;
        q.m = e->m > 0 ? e->m : 1, q.n = e->n > 0 ? e->n : 1, q.k = e->k > 0 ? e->k : 1;
        q.a.ld = e->lda > 0 ? e->lda : 1, q.b.ld = e->ldb > 0 ? e->ldb : 1;
        q.d.ld = e->ldd > 0 ? e->ldd : 1;
        q.c.dtype = has_c ? ct : CK_DTYPE_COUNT;
        q.c.order = p->d.order, q.c.ld = q.d.ld;
        ck_gemm_prob prob;
        CHECK_OK(ck_gemm_prob_make(&q, &prob));
        prob.p.k = e->k;
        prob.tf32_truncate = cand.family == 90; /* wgmma reads f32 bits as tf32 */
        ck_gemm_args h = args;
        h.a = a[g].h, h.b = b[g].h, h.bias = bias[g].h;
        h.c = l->alias ? d[g].h : c[g].h;
        unsigned char *written = calloc(nd + 1, 1);
        for (int64_t i = 0; i < e->m; ++i)
            for (int64_t j = 0; j < e->n; ++j) {
                double mag = 0, ref = ck_gemm_reference_value(&prob, &h, i, j, &mag), refq = 0;
                size_t off = (size_t)(p->d.order == R ? i * e->ldd + j : i + j * e->ldd);
                written[off] = 1;
                uint64_t code = 0;
                ck_convert_from_f64(p->d.dtype, ref, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0,
                                    &code);
                if (p->d.dtype == CK_DTYPE_I32)
                    refq = (double)(int32_t)(uint32_t)code;
                else
                    ck_convert_to_f64(p->d.dtype, code, &refq);
                double got = gc_get(out, p->d.dtype, (int64_t)off);
                double tol = ck_gemm_tolerance(&prob, mag, ref);
                if (!(fabs(got - refq) <= tol)) {
                    if (bad < 3)
                        CHECK_MSG(0,
                                  "group %d (%lldx%lldx%lld): D(%lld, %lld) = %.9g, reference "
                                  "%.9g (tolerance %.3g)",
                                  g, (long long)e->m, (long long)e->n, (long long)e->k,
                                  (long long)i, (long long)j, got, refq, tol);
                    ++bad;
                }
            }
        for (size_t x = 0; x < nd; ++x)
            if (!written[x] && memcmp((char *)out + x * des, (char *)d[g].h + x * des, des)) {
                CHECK_MSG(0, "group %d: D element %zu outside the product was written", g, x);
                ++bad;
                break;
            }
        free(written);
        free(out);
    }
    for (int g = 0; g < l->count; ++g) {
        gbuf_free(&a[g]), gbuf_free(&b[g]), gbuf_free(&d[g]);
        if (c[g].base)
            gbuf_free(&c[g]);
        if (bias[g].base)
            gbuf_free(&bias[g]);
    }
    ck_free(dev, ddesc);
    ck_gemm_grouped_plan_destroy(plan);
    return bad;
}

/* Empty groups of every kind between real ones, 1 x 1 x 1, a single row and column, tile
 * sized and odd shapes; C, bias, activation. */
static void test_groups_bf16(void)
{
    glist l;
    glist_init(&l, CK_DTYPE_BF16, CK_DTYPE_BF16, R, C, R);
    l.p.c.dtype = CK_DTYPE_F32;
    l.p.bias = CK_GEMM_BIAS_COL;
    l.p.activation = CK_GEMM_ACT_RELU;
    l.alpha = 1.25f, l.beta = -0.5f;
    glist_add(&l, 0, 5, 5, 0, 0);
    glist_add(&l, 37, 29, 45, 0, 0);
    glist_add(&l, 1, 1, 1, 0, 0);
    glist_add(&l, 5, 0, 9, 0, 0);
    glist_add(&l, 1, 7, 13, 3, 1);
    glist_add(&l, 64, 64, 64, 0, 0);
    glist_add(&l, 19, 33, 0, 0, 0); /* K = 0: D = relu(beta C + bias) */
    glist_add(&l, 130, 70, 100, 8, 0);
    glist_add(&l, 23, 1, 40, 1, 3);
    glist_add(&l, 0, 0, 0, 0, 0);
    for (int f = 0; f < 2; ++f) { /* the sm90 kernel (the policy's), then the sm80 one */
        l.family = f ? 80 : 0;
        CHECK(glist_run(&l) == 0);
    }
}

/* f16 MN-major operands, D column-major with C in place, pointers off alignment. */
static void test_groups_f16_orders(void)
{
    glist l;
    glist_init(&l, CK_DTYPE_F16, CK_DTYPE_F16, C, R, C);
    l.alias = 1;
    l.beta = 2;
    glist_add(&l, 40, 24, 72, 0, 0);
    glist_add(&l, 17, 9, 31, 1, 1);
    glist_add(&l, 3, 70, 16, 0, 8);
    glist_add(&l, 66, 66, 66, 5, 0);
    for (int f = 0; f < 2; ++f) {
        l.family = f ? 80 : 90;
        CHECK(glist_run(&l) == 0);
    }
}

/* Other element sizes of the per-group copy test: f32 (tf32; B row-major: the sm80 kernel, B
 * column-major: the sm90 one's tf32), fp8 (sm90) and i8 -> i32 (sm80). */
static void test_groups_types(void)
{
    glist l;
    glist_init(&l, CK_DTYPE_F32, CK_DTYPE_F32, R, R, R);
    glist_add(&l, 33, 17, 20, 0, 0);
    glist_add(&l, 1, 40, 9, 1, 1);
    CHECK(glist_run(&l) == 0);
    glist_init(&l, CK_DTYPE_F32, CK_DTYPE_F32, R, C, R);
    l.family = 90;
    glist_add(&l, 33, 17, 40, 0, 0);
    glist_add(&l, 1, 40, 9, 1, 1);
    glist_add(&l, 7, 0, 9, 0, 0);
    CHECK(glist_run(&l) == 0);
    glist_init(&l, CK_DTYPE_FP8_E4M3, CK_DTYPE_BF16, R, C, R);
    l.family = 90;
    glist_add(&l, 29, 31, 150, 0, 0);
    glist_add(&l, 1, 1, 1, 0, 0);
    glist_add(&l, 9, 20, 33, 3, 7);
    CHECK(glist_run(&l) == 0);
    glist_init(&l, CK_DTYPE_I8, CK_DTYPE_I32, R, C, R);
    glist_add(&l, 21, 13, 40, 0, 0);
    glist_add(&l, 0, 3, 3, 0, 0);
    glist_add(&l, 8, 35, 96, 3, 5);
    CHECK(glist_run(&l) == 0);
}

/* Many small groups: each block walks across several groups' tiles (the kernel of
 * test_groups_bf16). */
static void test_many_groups(void)
{
    glist l;
    glist_init(&l, CK_DTYPE_BF16, CK_DTYPE_BF16, R, C, R);
    l.p.c.dtype = CK_DTYPE_F32;
    l.p.bias = CK_GEMM_BIAS_COL;
    l.p.activation = CK_GEMM_ACT_RELU;
    l.beta = 0.25f;
    for (int g = 0; g < 40; ++g) {
        uint64_t r = ckt_rand64(&g_rng);
        glist_add(&l, (int64_t)(r % 41), (int64_t)(r / 41 % 70), (int64_t)(r / 3000 % 50) + 1,
                  (int)(r / 200000 % 3), (int)(r / 900000 % 2));
    }
    for (int f = 0; f < 2; ++f) {
        l.family = f ? 80 : 90;
        CHECK(glist_run(&l) == 0);
    }
}

/* The sm90 kernel's widest tile (128 x 256: B's copies of 256 rows) with groups of several
 * tile rows and columns and long K (the ring wraps within a group). */
static void test_groups_sm90_wide(void)
{
    glist l;
    glist_init(&l, CK_DTYPE_BF16, CK_DTYPE_F32, R, C, R);
    l.p.m = l.p.n = 4096, l.p.k = 1024; /* the policy's tile for a large product */
    l.family = 90;
    l.p.bias = CK_GEMM_BIAS_ROW;
    glist_add(&l, 140, 300, 333, 0, 0);
    glist_add(&l, 0, 300, 10, 0, 0);
    glist_add(&l, 5, 257, 64, 1, 1);
    CHECK(glist_run(&l) == 0);
}

static void test_refusals(void)
{
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.b.order = C;
    ck_gemm_grouped_plan *plan = NULL;
    p.batch = 2;
    CHECK(ck_gemm_grouped_plan_create(g_ctx, &p, &plan) == CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "batch 1") != NULL);
    p.batch = 1;
    CHECK_OK(ck_gemm_grouped_plan_create(g_ctx, &p, &plan));
    if (!plan)
        return;
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    /* count 0 runs nothing; negative counts and NULL lists are refused */
    CHECK_OK(ck_gemm_grouped_execute(plan, NULL, 0, &args));
    CHECK(ck_gemm_grouped_execute(plan, NULL, -1, &args) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(ck_gemm_grouped_execute(plan, NULL, 2, &args) == CK_ERROR_INVALID_ARGUMENT);
    static uint16_t buf[4096];
    ck_gemm_group_desc g[2];
    memset(g, 0, sizeof g);
    g[0].m = 8, g[0].n = 8, g[0].k = 8;
    g[0].a = buf, g[0].b = buf + 64, g[0].d = buf + 128;
    g[0].lda = 8, g[0].ldb = 8, g[0].ldd = 8;
    g[1] = g[0];
    g[1].m = -3;
    CHECK(ck_gemm_grouped_check(plan, g, 2, &args) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "group 1 is -3 x 8 x 8") != NULL, "%s", ck_last_error());
    g[1].m = 0; /* empty: no pointer needed */
    g[1].a = NULL;
    CHECK_OK(ck_gemm_grouped_check(plan, g, 2, &args));
    g[1].m = 8;
    CHECK(ck_gemm_grouped_check(plan, g, 2, &args) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "group 1: pointer A is NULL") != NULL, "%s", ck_last_error());
    g[1].a = buf;
    g[1].ldb = 7; /* column-major B of 8 rows */
    CHECK(ck_gemm_grouped_check(plan, g, 2, &args) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "ldB = 7") != NULL, "%s", ck_last_error());
    g[1].ldb = 8;
    g[1].d = buf + 100; /* over the end of B */
    CHECK(ck_gemm_grouped_check(plan, g, 2, &args) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "D overlaps B") != NULL, "%s", ck_last_error());
    g[1].d = (char *)(buf + 1024) + 1; /* off its 2-byte elements */
    CHECK(ck_gemm_grouped_check(plan, g, 2, &args) == CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "not aligned") != NULL, "%s", ck_last_error());
    args.scale_d = 0;
    CHECK(ck_gemm_grouped_execute(plan, g, 2, &args) == CK_ERROR_INVALID_ARGUMENT);
    ck_gemm_grouped_plan_destroy(plan);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_groups_bf16);
    RUN_TEST(test_groups_f16_orders);
    RUN_TEST(test_groups_types);
    RUN_TEST(test_many_groups);
    RUN_TEST(test_groups_sm90_wide);
    RUN_TEST(test_refusals);
    ck_context_destroy(g_ctx);
    (void)gc_run; /* the harness's single-problem runner is not used here */
    (void)gc_base;
    return CK_TEST_REPORT();
}
