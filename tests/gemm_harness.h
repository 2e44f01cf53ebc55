/*
 * Shared by the GEMM tests: one case (problem + run-time values), random operands, a run on
 * the context's device and an element-by-element comparison against ck_gemm_reference_value
 * with the tolerance ck_gemm_tolerance derives.
 */
#ifndef CK_TESTS_GEMM_HARNESS_H
#define CK_TESTS_GEMM_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/gemm/gemm_internal.h"
#include "test.h"

typedef struct gcase {
    int64_t m, n, k;
    ck_dtype a, b, d, c; /* c: CK_DTYPE_COUNT for none */
    ck_gemm_order ao, bo, co, dox;
    int pad; /* extra elements in every ld */
    ck_gemm_compute compute;
    ck_gemm_bias bias;
    ck_dtype bias_dt;
    ck_gemm_activation act;
    const char *epi;
    float alpha, beta, scale_a, scale_b, scale_d;
    int alias;    /* C is D (in place) */
    int instance; /* -1: policy; -2: the smallest-tile candidate */
} gcase;

static ck_context *g_ctx;
static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static gcase gc_base(int64_t m, int64_t n, int64_t k, ck_dtype in, ck_dtype out)
{
    gcase c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.n = n;
    c.k = k;
    c.a = c.b = in;
    c.d = out;
    c.c = CK_DTYPE_COUNT;
    c.bias_dt = CK_DTYPE_F32;
    c.alpha = 1;
    c.scale_a = c.scale_b = c.scale_d = 1;
    c.instance = -2;
    return c;
}

static size_t gc_bytes(const ck_gemm_matrix *mt, int64_t rows, int64_t cols)
{
    int64_t lines = mt->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    return (size_t)(lines * mt->ld) * (size_t)ck_gemm_dtype_bytes(mt->dtype);
}

/* Random codes: values in [-1, 1] (integers -8 .. 8 for i8, -100 .. 100 for i32). */
static void gc_fill(void *p, ck_dtype t, size_t n)
{
    int es = ck_gemm_dtype_bytes(t);
    for (size_t i = 0; i < n; ++i) {
        double u = (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1;
        if (t == CK_DTYPE_I8)
            u = floor(u * 8.5);
        if (t == CK_DTYPE_I32)
            u = floor(u * 100);
        uint64_t code = 0;
        ck_convert_from_f64(t, u, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        memcpy((char *)p + i * (size_t)es, &code, (size_t)es);
    }
}

static double gc_get(const void *p, ck_dtype t, int64_t i)
{
    int es = ck_gemm_dtype_bytes(t);
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * es, (size_t)es);
    if (t == CK_DTYPE_I32)
        return (double)(int32_t)(uint32_t)code;
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static void gc_problem(const gcase *c, ck_gemm_problem *p, ck_ew_program *prog)
{
    ck_gemm_problem_init(p);
    p->m = c->m;
    p->n = c->n;
    p->k = c->k;
    p->a.dtype = c->a;
    p->b.dtype = c->b;
    p->d.dtype = c->d;
    p->c.dtype = c->alias ? c->d : c->c;
    p->a.order = c->ao;
    p->b.order = c->bo;
    p->d.order = c->dox;
    p->c.order = c->alias ? c->dox : c->co;
    p->a.ld = (c->ao == CK_GEMM_ROW_MAJOR ? c->k : c->m) + c->pad;
    p->b.ld = (c->bo == CK_GEMM_ROW_MAJOR ? c->n : c->k) + c->pad;
    p->d.ld = (c->dox == CK_GEMM_ROW_MAJOR ? c->n : c->m) + c->pad;
    p->c.ld = c->alias ? p->d.ld : (c->co == CK_GEMM_ROW_MAJOR ? c->n : c->m) + c->pad;
    p->compute = c->compute;
    p->bias = c->bias;
    p->bias_dtype = c->bias_dt;
    p->activation = c->act;
    if (c->epi && ck_ew_parse(c->epi, prog) == CK_SUCCESS)
        p->epilogue = prog;
}

static int gc_pick_instance(const ck_gemm_problem *p)
{
    ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
    int n = 0;
    if (ck_gemm_candidates(g_ctx, p, cand, CK_GEMM_MAX_CANDIDATES, &n) != CK_SUCCESS || n < 1)
        return -1;
    int best = 0;
    for (int i = 1; i < n; ++i)
        if ((long)cand[i].tile_m * cand[i].tile_n < (long)cand[best].tile_m * cand[best].tile_n)
            best = i;
    return cand[best].id;
}

/* Run one case; returns the number of wrong elements (and CHECKs them). */
static long gc_run(const gcase *c)
{
    ck_device *dev = ck_context_device(g_ctx);
    ck_gemm_problem p;
    ck_ew_program prog;
    gc_problem(c, &p, &prog);
    ck_gemm_prob prob;
    ck_status st = ck_gemm_prob_make(&p, &prob);
    CHECK_MSG(st == CK_SUCCESS, "problem: %s", ck_last_error());
    if (st)
        return 1;
    int inst = c->instance == -2 ? gc_pick_instance(&p) : c->instance;
    ck_gemm_plan *plan = NULL;
    st = ck_gemm_plan_create(g_ctx, &p, inst, &plan);
    p = prob.p; /* with every ld resolved */
    CHECK_MSG(st == CK_SUCCESS, "plan %lldx%lldx%lld %s: %s", (long long)c->m, (long long)c->n,
              (long long)c->k, ck_dtype_name(c->a), ck_last_error());
    if (st)
        return 1;
    prob.tf32_truncate = plan->prob.tf32_truncate; /* the reference reads f32 as the kernel */
    size_t sa = gc_bytes(&p.a, p.m, p.k), sb = gc_bytes(&p.b, p.k, p.n);
    size_t sd = gc_bytes(&p.d, p.m, p.n), sc = prob.has_c ? gc_bytes(&p.c, p.m, p.n) : 0;
    size_t nbias = c->bias ? (size_t)(c->bias == CK_GEMM_BIAS_ROW ? c->m : c->n) : 0;
    size_t sbias = nbias * (size_t)ck_gemm_dtype_bytes(c->bias_dt);
    void *ha = malloc(sa), *hb = malloc(sb), *hd = malloc(sd), *hc = sc ? malloc(sc) : NULL;
    void *hbias = sbias ? malloc(sbias) : NULL;
    gc_fill(ha, p.a.dtype, sa / (size_t)ck_gemm_dtype_bytes(p.a.dtype));
    gc_fill(hb, p.b.dtype, sb / (size_t)ck_gemm_dtype_bytes(p.b.dtype));
    gc_fill(hd, p.d.dtype, sd / (size_t)ck_gemm_dtype_bytes(p.d.dtype));
    if (hc)
        gc_fill(hc, p.c.dtype, sc / (size_t)ck_gemm_dtype_bytes(p.c.dtype));
    if (hbias)
        gc_fill(hbias, p.bias_dtype, nbias);
    if (c->alias)
        memcpy(hc, hd, sd);
    void *da = NULL, *db = NULL, *dd = NULL, *dc = NULL, *dbias = NULL;
    CHECK_OK(ck_malloc(dev, sa, &da));
    CHECK_OK(ck_malloc(dev, sb, &db));
    CHECK_OK(ck_malloc(dev, sd, &dd));
    if (hc && !c->alias)
        CHECK_OK(ck_malloc(dev, sc, &dc));
    if (hbias)
        CHECK_OK(ck_malloc(dev, sbias, &dbias));
    CHECK_OK(ck_memcpy_h2d(dev, da, ha, sa, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, db, hb, sb, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dd, hd, sd, NULL));
    if (dc)
        CHECK_OK(ck_memcpy_h2d(dev, dc, hc, sc, NULL));
    if (dbias)
        CHECK_OK(ck_memcpy_h2d(dev, dbias, hbias, sbias, NULL));
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.a = da;
    args.b = db;
    args.c = c->alias ? dd : dc;
    args.d = dd;
    args.bias = dbias;
    args.alpha = c->alpha;
    args.beta = c->beta;
    args.scale_a = c->scale_a;
    args.scale_b = c->scale_b;
    args.scale_d = c->scale_d;
    st = ck_gemm_plan_execute(plan, &args);
    CHECK_MSG(st == CK_SUCCESS, "execute: %s", ck_last_error());
    void *out = malloc(sd);
    CHECK_OK(ck_context_synchronize(g_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, out, dd, sd, NULL));
    ck_gemm_args h = args;
    h.a = ha;
    h.b = hb;
    h.c = hc;
    h.bias = hbias;
    long bad = 0;
    for (int64_t i = 0; i < p.m && !st; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            double mag = 0;
            double ref = ck_gemm_reference_value(&prob, &h, i, j, &mag);
            int64_t off = p.d.order == CK_GEMM_ROW_MAJOR ? i * p.d.ld + j : i + j * p.d.ld;
            uint64_t code = 0;
            ck_convert_from_f64(p.d.dtype, ref, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0,
                                &code);
            double refq = 0;
            if (p.d.dtype == CK_DTYPE_I32)
                refq = (double)(int32_t)(uint32_t)code;
            else
                ck_convert_to_f64(p.d.dtype, code, &refq);
            double got = gc_get(out, p.d.dtype, off);
            double tol = ck_gemm_tolerance(&prob, mag, ref);
            if (!(fabs(got - refq) <= tol)) {
                if (bad < 3)
                    CHECK_MSG(0,
                              "%lldx%lldx%lld %s x %s -> %s (a%c b%c d%c): D(%lld, %lld) = %.9g, "
                              "reference %.9g (tolerance %.3g)",
                              (long long)c->m, (long long)c->n, (long long)c->k,
                              ck_dtype_name(c->a), ck_dtype_name(c->b), ck_dtype_name(c->d),
                              c->ao ? 'c' : 'r', c->bo ? 'c' : 'r', c->dox ? 'c' : 'r',
                              (long long)i, (long long)j, got, refq, tol);
                ++bad;
            }
        }
    /* padding of D (between ld and the extent) must be untouched */
    if (c->pad && !st)
        for (int64_t l = 0; l < (p.d.order == CK_GEMM_ROW_MAJOR ? p.m : p.n); ++l) {
            int64_t contig = p.d.order == CK_GEMM_ROW_MAJOR ? p.n : p.m;
            int es = ck_gemm_dtype_bytes(p.d.dtype);
            size_t off = (size_t)(l * p.d.ld + contig) * (size_t)es;
            if (memcmp((char *)out + off, (char *)hd + off, (size_t)(p.d.ld - contig) * es) != 0) {
                CHECK_MSG(0, "D padding written in line %lld", (long long)l);
                ++bad;
                break;
            }
        }
    if (bad)
        printf("  %ld wrong elements\n", bad);
    ck_free(dev, da);
    ck_free(dev, db);
    ck_free(dev, dd);
    ck_free(dev, dc);
    ck_free(dev, dbias);
    free(ha);
    free(hb);
    free(hc);
    free(hd);
    free(hbias);
    free(out);
    ck_gemm_plan_destroy(plan);
    return bad;
}

#endif
