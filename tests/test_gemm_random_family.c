/*
 * Random problems of the GEMM family's members against the independent reference kernel of
 * test_gemm_random (tests/kernels/gemm_ref.cu: one thread per element, double) and an epilogue
 * evaluated here in double, tolerance derived here from K, the types and sum |a b|:
 *
 *   grouped  ck_gemm_grouped_*: 1 .. 12 groups (6 on the emulator) of random M, N, K (each 0
 *            now and then), any leading dimension, pointers off 16-byte alignment, the list in
 *            device memory
 *   streamk  ck_gemm_plan_create_opt with CK_GEMM_DECOMP_STREAM_K, run twice: same bits
 *   splitk   CK_GEMM_DECOMP_SPLIT_K (2 .. 16 ranges), run twice: same bits
 *   atomic   CK_GEMM_DECOMP_SPLIT_K_ATOMIC (2 .. 16 ranges), within the tolerance
 *
 *   CK_GEMM_RANDOM_N        problems per member (default 2 on the emulator, 1000 on a GPU)
 *   CK_GEMM_RANDOM_MAX      largest M, N, K (default 48 on the emulator, 2048 on a GPU)
 *   CK_GEMM_RANDOM_SEED     seed (default 1)
 *   CK_GEMM_RANDOM_MEMBERS  comma-separated members (default all four)
 *
 * Types bf16 / f16 in, D of the input type or f32, random orders (the split and stream-K
 * members: the sm90 family's K-major operands, 16-byte leading dimensions), C, bias and
 * activation drawn from a small pool per member so that a GPU run compiles few kernels. The
 * split / stream-K members need the sm90 family (an sm_90a GPU or the emulator); elsewhere
 * their refusal is counted, not failed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ck/ck.h"
#include "ck/gemm.h"
#include "core/numeric_conv.h"
#include "gemm_act_ref.h"
#include "kernel_harness.h"

static uint64_t rng, crng, seed_;
static ck_kernel *refk;
static ck_context *ctx;
static long long maxdim_;
static int ran_, refused_;

static long long rnd(long long lo, long long hi)
{
    return lo + (long long)(ckt_rand64(&rng) % (uint64_t)(hi - lo + 1));
}

static long long crnd(long long lo, long long hi)
{
    return lo + (long long)(ckt_rand64(&crng) % (uint64_t)(hi - lo + 1));
}

static double unit(void)
{
    return (double)(ckt_rand64(&rng) >> 11) * 0x1p-53;
}

static long long log_size(long long max)
{
    long long v = (long long)exp(unit() * log((double)max));
    return v < 1 ? 1 : v > max ? max : v;
}

static int esize(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

static double decode(ck_dtype t, const unsigned char *p, long long i)
{
    if (t == CK_DTYPE_F32)
        return ((const float *)p)[i];
    return ck_nc_to_f64((int)t, ((const uint16_t *)p)[i]);
}

static void encode(ck_dtype t, unsigned char *p, long long i, double v)
{
    if (t == CK_DTYPE_F32)
        ((float *)p)[i] = (float)v;
    else
        ((uint16_t *)p)[i] =
            (uint16_t)ck_nc_from_f64((int)t, v, CK_NC_ROUND_NEAREST_EVEN, CK_NC_SATURATE, 0);
}

static long long at(ck_gemm_order o, long long ld, long long i, long long j)
{
    return o == CK_GEMM_ROW_MAJOR ? i * ld + j : i + j * ld;
}

/* One product's operands on the host and the device: A (m x k), B (k x n), C, D (m x n) in
 * the problem's orders with leading dimensions lda .. ldd; bias of M or N. */
typedef struct prod {
    long long m, n, k, lda, ldb, ldd;
    unsigned char *ha, *hb, *hc, *hd, *hbias;
    void *a_base, *b_base, *c_base, *d_base, *bias_base; /* allocations */
    void *da, *db, *dc, *dd, *dbias;                     /* the operands (maybe offset) */
    size_t sa, sb, sd;
} prod;

static size_t span(ck_gemm_order o, long long r, long long c, long long ld)
{
    long long lines = o == CK_GEMM_ROW_MAJOR ? r : c;
    return (size_t)(lines > 0 ? lines * ld : 0);
}

static void *up(const void *h, size_t bytes, int off, void **base)
{
    *base = ckk_upload(NULL, bytes + (size_t)off + 16);
    char *d = (char *)*base + off;
    if (bytes)
        CHECK_OK(ck_memcpy_h2d(ckk_device, d, h, bytes, NULL));
    return d;
}

/* Random operands of a product of problem p (sizes and lds in *x), uploaded `off` bytes past
 * each allocation's start (a multiple of the element size). */
static void prod_make(prod *x, const ck_gemm_problem *p, int use_c, int off)
{
    long long m = x->m, n = x->n, k = x->k;
    int ea = esize(p->a.dtype), ed = esize(p->d.dtype);
    x->sa = span(p->a.order, m, k, x->lda), x->sb = span(p->b.order, k, n, x->ldb);
    x->sd = span(p->d.order, m, n, x->ldd);
    x->ha = calloc(x->sa + 1, (size_t)ea), x->hb = calloc(x->sb + 1, (size_t)ea);
    x->hc = calloc(x->sd + 1, (size_t)ed), x->hd = calloc(x->sd + 1, (size_t)ed);
    x->hbias = calloc((size_t)(m > n ? m : n) + 1, 4);
    for (size_t i = 0; i < x->sa; ++i)
        encode(p->a.dtype, x->ha, (long long)i, 2 * unit() - 1);
    for (size_t i = 0; i < x->sb; ++i)
        encode(p->b.dtype, x->hb, (long long)i, 2 * unit() - 1);
    for (size_t i = 0; i < x->sd; ++i) {
        encode(p->d.dtype, x->hd, (long long)i, 2 * unit() - 1);
        encode(p->d.dtype, x->hc, (long long)i, 2 * unit() - 1);
    }
    for (long long i = 0; i < (m > n ? m : n); ++i)
        ((float *)x->hbias)[i] = (float)(2 * unit() - 1);
    int oa = off * ea, od = off * ed;
    x->da = up(x->ha, x->sa * (size_t)ea, oa, &x->a_base);
    x->db = up(x->hb, x->sb * (size_t)ea, oa, &x->b_base);
    x->dd = up(x->hd, x->sd * (size_t)ed, od, &x->d_base);
    x->dc = use_c ? up(x->hc, x->sd * (size_t)ed, 0, &x->c_base) : NULL;
    x->dbias = up(x->hbias, (size_t)(m > n ? m : n) * 4, 0, &x->bias_base);
}

static void prod_free(prod *x)
{
    ck_free(ckk_device, x->a_base), ck_free(ckk_device, x->b_base);
    ck_free(ckk_device, x->c_base), ck_free(ckk_device, x->d_base);
    ck_free(ckk_device, x->bias_base);
    free(x->ha), free(x->hb), free(x->hc), free(x->hd), free(x->hbias);
    memset(x, 0, sizeof *x);
}

/* Check D (downloaded) of product x against the reference kernel: every element, and every
 * element of D's buffer outside the product unchanged. Returns the wrong ones. */
static long long prod_check(const prod *x, const ck_gemm_problem *p, const ck_gemm_args *args,
                            int use_c, const char *what)
{
    long long m = x->m, n = x->n, k = x->k, bad = 0;
    if (m == 0 || n == 0)
        return 0;
    int ed = esize(p->d.dtype);
    unsigned char *out = malloc(x->sd * (size_t)ed + 1);
    double *ref = calloc((size_t)(m * n), sizeof *ref), *absd = calloc((size_t)(m * n), 8);
    void *dref = ckk_upload(NULL, (size_t)(m * n) * 8),
         *dabs = ckk_upload(NULL, (size_t)(m * n) * 8);
    long long sa0 = p->a.order == CK_GEMM_ROW_MAJOR ? x->lda : 1;
    long long sa1 = p->a.order == CK_GEMM_ROW_MAJOR ? 1 : x->lda;
    long long sb0 = p->b.order == CK_GEMM_ROW_MAJOR ? x->ldb : 1;
    long long sb1 = p->b.order == CK_GEMM_ROW_MAJOR ? 1 : x->ldb;
    int ta = (int)p->a.dtype, tb = (int)p->b.dtype;
    const void *da = x->da, *db = x->db;
    CHECK_OK(ckk_launch(refk, (unsigned)((m * n + 127) / 128), 1, 1, 128, 1, 1, 0, 13, &da,
                        sizeof da, &ta, sizeof ta, &sa0, sizeof sa0, &sa1, sizeof sa1, &db,
                        sizeof db, &tb, sizeof tb, &sb0, sizeof sb0, &sb1, sizeof sb1, &m, sizeof m,
                        &n, sizeof n, &k, sizeof k, &dref, sizeof dref, &dabs, sizeof dabs));
    ckk_download(ref, dref, (size_t)(m * n) * 8);
    ckk_download(absd, dabs, (size_t)(m * n) * 8);
    ckk_download(out, x->dd, x->sd * (size_t)ed);
    unsigned char *seen = calloc(x->sd + 1, 1);
    double s = args->alpha, u_out = ldexp(1.0, -(p->d.dtype == CK_DTYPE_F32   ? 23
                                                 : p->d.dtype == CK_DTYPE_F16 ? 10
                                                                              : 7) -
                                                   1);
    double acc = 16 * sqrt((double)(k > 0 ? k : 1)) * 0x1p-24 + 0x1p-22;
    for (long long i = 0; i < m; ++i)
        for (long long j = 0; j < n; ++j) {
            long long o = at(p->d.order, x->ldd, i, j);
            seen[o] = 1;
            double xv =
                s * ref[i * n + j] + (use_c ? args->beta * decode(p->d.dtype, x->hc, o) : 0);
            if (p->bias)
                xv += ((const float *)x->hbias)[p->bias == CK_GEMM_BIAS_ROW ? i : j];
            double want = gemm_ref_act(p->activation, xv), got = decode(p->d.dtype, out, o);
            double tol = 1.2 * fabs(s) * absd[i * n + j] * acc + fabs(want) * u_out * 2 +
                         (p->d.dtype == CK_DTYPE_F16 ? 0x1p-24 : 0) + 1e-6;
            if (!(fabs(got - want) <= tol)) {
                if (bad++ < 3)
                    CHECK_MSG(0, "%s %lldx%lldx%lld: D(%lld,%lld) = %.9g, expected %.9g (tol %.3g)",
                              what, m, n, k, i, j, got, want, tol);
            } else {
                ++ckt_pass_;
            }
        }
    for (size_t e = 0; e < x->sd; ++e)
        if (!seen[e] && memcmp(out + e * (size_t)ed, x->hd + e * (size_t)ed, (size_t)ed)) {
            CHECK_MSG(0, "%s: D element %zu outside the product was written", what, e);
            ++bad;
            break;
        }
    free(seen), free(out), free(ref), free(absd);
    ck_free(ckk_device, dref), ck_free(ckk_device, dabs);
    return bad;
}

/* The member's configuration of problem i: types, orders, C, bias, activation from a pool of
 * 8 per member and seed. */
static int configure(int member, int i, ck_gemm_problem *p, int *use_c)
{
    crng = seed_ * 1000003u + (uint64_t)member * 101u + (uint64_t)(i % 8);
    ck_gemm_problem_init(p);
    p->a.dtype = p->b.dtype = crnd(0, 1) ? CK_DTYPE_BF16 : CK_DTYPE_F16;
    p->d.dtype = crnd(0, 1) ? CK_DTYPE_F32 : p->a.dtype;
    int sm90 = member != 0;
    p->a.order = sm90 || crnd(0, 1) ? CK_GEMM_ROW_MAJOR : CK_GEMM_COL_MAJOR;
    p->b.order = sm90 || crnd(0, 1) ? CK_GEMM_COL_MAJOR : CK_GEMM_ROW_MAJOR;
    p->d.order = crnd(0, 1) ? CK_GEMM_COL_MAJOR : CK_GEMM_ROW_MAJOR;
    *use_c = crnd(0, 2) == 0;
    if (*use_c)
        p->c.dtype = p->d.dtype, p->c.order = p->d.order;
    if (crnd(0, 2) == 0) {
        p->bias = crnd(0, 1) ? CK_GEMM_BIAS_ROW : CK_GEMM_BIAS_COL;
        p->bias_dtype = CK_DTYPE_F32;
    }
    p->activation = (ck_gemm_activation)crnd(0, 5);
    return (int)crnd(2, 16); /* split-K ranges */
}

static long long ld_for(ck_gemm_order o, long long r, long long c, int aligned)
{
    long long inner = o == CK_GEMM_ROW_MAJOR ? c : r;
    if (inner < 1)
        inner = 1;
    return aligned ? (inner + 7) / 8 * 8 : inner + rnd(0, 2);
}

static void one_grouped(int i)
{
    ck_gemm_problem p;
    int use_c;
    configure(0, i, &p, &use_c);
    int count = (int)rnd(1, ckk_is_host() ? 6 : 12); /* fewer on the emulator: CI time */
    prod x[12];
    ck_gemm_group_desc desc[12];
    memset(x, 0, sizeof x);
    ck_gemm_grouped_plan *plan = NULL;
    ck_status st = ck_gemm_grouped_plan_create(ctx, &p, &plan);
    CHECK_MSG(st == CK_SUCCESS, "grouped plan: %s", ck_last_error());
    if (st)
        return;
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.alpha = (float)(0.5 + unit());
    args.beta = use_c ? (float)(unit() - 0.5) : 0.0f;
    long long budget = ckk_is_host() ? 200000 : 2000000000LL / count;
    for (int g = 0; g < count; ++g) {
        prod *y = &x[g];
        y->m = rnd(0, 9) == 0 ? 0 : log_size(maxdim_);
        y->n = rnd(0, 9) == 0 ? 0 : log_size(maxdim_);
        y->k = rnd(0, 9) == 0 ? 0 : log_size(maxdim_);
        while (y->m * y->n * (y->k > 0 ? y->k : 1) > budget)
            y->k > 1 ? (y->k = (y->k + 1) / 2) : (y->m = (y->m + 1) / 2);
        int aligned = rnd(0, 3) != 0;
        y->lda = ld_for(p.a.order, y->m, y->k, aligned);
        y->ldb = ld_for(p.b.order, y->k, y->n, aligned);
        y->ldd = ld_for(p.d.order, y->m, y->n, aligned);
        prod_make(y, &p, use_c, aligned ? 0 : (int)rnd(1, 7));
        ck_gemm_group_desc *e = &desc[g];
        memset(e, 0, sizeof *e);
        e->m = y->m, e->n = y->n, e->k = y->k;
        e->a = y->da, e->b = y->db, e->c = y->dc, e->d = y->dd, e->bias = y->dbias;
        e->lda = y->lda, e->ldb = y->ldb, e->ldc = y->ldd, e->ldd = y->ldd;
    }
    CHECK_MSG(ck_gemm_grouped_check(plan, desc, count, &args) == CK_SUCCESS, "check: %s",
              ck_last_error());
    void *ddesc = ckk_upload(desc, sizeof desc);
    CHECK_MSG(ck_gemm_grouped_execute(plan, ddesc, count, &args) == CK_SUCCESS, "execute: %s",
              ck_last_error());
    CHECK_OK(ck_context_synchronize(ctx));
    ++ran_;
    long long bad = 0;
    for (int g = 0; g < count; ++g) {
        char what[64];
        snprintf(what, sizeof what, "grouped problem %d group %d of %d", i, g, count);
        bad += prod_check(&x[g], &p, &args, use_c, what);
        prod_free(&x[g]);
    }
    if (bad)
        printf("  grouped problem %d: %lld wrong elements\n", i, bad);
    ck_free(ckk_device, ddesc);
    ck_gemm_grouped_plan_destroy(plan);
}

static void one_decomposed(int member, int i)
{
    static const char *const names[] = {"", "stream-K", "split-K", "atomic split-K"};
    static const ck_gemm_decomposition d[] = {CK_GEMM_DECOMP_AUTO, CK_GEMM_DECOMP_STREAM_K,
                                              CK_GEMM_DECOMP_SPLIT_K,
                                              CK_GEMM_DECOMP_SPLIT_K_ATOMIC};
    ck_gemm_problem p;
    int use_c, splits = configure(member, i, &p, &use_c);
    prod x;
    memset(&x, 0, sizeof x);
    x.m = log_size(maxdim_), x.n = log_size(maxdim_), x.k = log_size(maxdim_ * 4);
    while ((double)x.m * x.n * x.k > (ckk_is_host() ? 3e5 : 4e9))
        x.k > 1 ? (x.k = (x.k + 1) / 2) : (x.m = (x.m + 1) / 2);
    x.lda = ld_for(p.a.order, x.m, x.k, 1), x.ldb = ld_for(p.b.order, x.k, x.n, 1);
    x.ldd = ld_for(p.d.order, x.m, x.n, 1);
    p.m = x.m, p.n = x.n, p.k = x.k;
    p.a.ld = x.lda, p.b.ld = x.ldb, p.d.ld = x.ldd, p.c.ld = x.ldd;
    ck_gemm_plan_options o;
    ck_gemm_plan_options_init(&o);
    o.decomp = d[member];
    o.split_k = member >= 2 ? splits : 0;
    ck_gemm_plan *plan = NULL;
    if (ck_gemm_plan_create_opt(ctx, &p, &o, &plan) != CK_SUCCESS) {
        ++refused_;
        CHECK_MSG(strstr(ck_last_error(), "sm90 family") != NULL, "%s problem %d refused: %s",
                  names[member], i, ck_last_error());
        return;
    }
    prod_make(&x, &p, use_c, 0);
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.alpha = (float)(0.5 + unit());
    args.beta = use_c ? (float)(unit() - 0.5) : 0.0f;
    args.a = x.da, args.b = x.db, args.c = x.dc, args.d = x.dd, args.bias = p.bias ? x.dbias : NULL;
    CHECK_MSG(ck_gemm_plan_execute(plan, &args) == CK_SUCCESS, "execute: %s", ck_last_error());
    CHECK_OK(ck_context_synchronize(ctx));
    ++ran_;
    char what[64];
    snprintf(what, sizeof what, "%s problem %d", names[member], i);
    long long bad = prod_check(&x, &p, &args, use_c, what);
    if (member != 3 && !bad) { /* again on the same inputs: the same bits */
        int ed = esize(p.d.dtype);
        unsigned char *first = malloc(x.sd * (size_t)ed + 1),
                      *again = malloc(x.sd * (size_t)ed + 1);
        ckk_download(first, x.dd, x.sd * (size_t)ed);
        CHECK_OK(ck_memcpy_h2d(ckk_device, x.dd, x.hd, x.sd * (size_t)ed, NULL));
        CHECK_OK(ck_gemm_plan_execute(plan, &args));
        CHECK_OK(ck_context_synchronize(ctx));
        ckk_download(again, x.dd, x.sd * (size_t)ed);
        CHECK_MSG(memcmp(first, again, x.sd * (size_t)ed) == 0, "%s: a second run differs", what);
        free(first), free(again);
    }
    if (bad)
        printf("  %s: %lld wrong elements\n", what, bad);
    prod_free(&x);
    ck_gemm_plan_destroy(plan);
}

int main(void)
{
    const char *e;
    setvbuf(stdout, NULL, _IOLBF, 0);
    seed_ = (e = getenv("CK_GEMM_RANDOM_SEED")) ? strtoull(e, NULL, 10) : 1;
    rng = seed_ * 7919u + 1;
    if (!ckk_open())
        return 1;
    int host = ckk_is_host();
    int n = (e = getenv("CK_GEMM_RANDOM_N")) ? atoi(e) : host ? 2 : 1000;
    maxdim_ = (e = getenv("CK_GEMM_RANDOM_MAX")) ? atoll(e) : host ? 48 : 2048;
    const char *members =
        (e = getenv("CK_GEMM_RANDOM_MEMBERS")) ? e : "grouped,streamk,splitk,atomic";
    printf("seed %llu, %d problems per member (%s), sizes up to %lld\n", (unsigned long long)seed_,
           n, members, maxdim_);
    if (ck_context_create_for_device(ckk_device, &ctx) != CK_SUCCESS) {
        printf("no context: %s\n", ck_last_error());
        return 1;
    }
    refk = ckk_kernel("gemm_ref.cu", "gemm_ref");
    static const char *const names[] = {"grouped", "streamk", "splitk", "atomic"};
    for (int m = 0; m < 4 && refk; ++m) {
        if (!strstr(members, names[m]))
            continue;
        int ran0 = ran_, refused0 = refused_;
        for (int i = 0; i < n; ++i) {
            if (m == 0)
                one_grouped(i);
            else
                one_decomposed(m, i);
        }
        printf("%s: %d problems: %d ran, %d refused\n", names[m], n, ran_ - ran0,
               refused_ - refused0);
    }
    ck_context_destroy(ctx);
    ckk_close();
    return CK_TEST_REPORT();
}
