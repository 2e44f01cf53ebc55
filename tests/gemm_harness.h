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
    /* strided batches: batch (0 or 1: none); gap = extra elements between batches; bcast bit
     * 0 A, 1 B, 2 C, 3 bias: batch stride 0 (one matrix for every batch) */
    int64_t batch, gap;
    int bcast;
    const char *want; /* with instance -2: only candidates whose name contains this */
    int split;        /* > 1: family 90's 128 x 128 instance with K split this many ways (built
                         here: the policy offers a split only where its model gains) */
    /* multi-D extras: nx of x[] (op, broadcast, dtype, order; ld 0: packed + pad); batched:
     * batch stride lines * ld (or the vector's length) + gap, or 0 with bcast bit 4 */
    int nx;
    ck_gemm_extra x[CK_GEMM_MAX_EXTRAS];
    /* a forced decomposition (ck_gemm_plan_create_opt, with `split` as its split_k), the
     * stream-K grid (0: the device's), and repeat: run again on the same inputs and require
     * the same bits of D (not for the atomic split-K) */
    ck_gemm_decomposition decomp;
    int grid, repeat;
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
    if (c->batch > 1) {
        ck_gemm_matrix *ms[4] = {&p->a, &p->b, &p->c, &p->d};
        int64_t rows[4] = {c->m, c->k, c->m, c->m}, cols[4] = {c->k, c->n, c->n, c->n};
        p->batch = c->batch;
        for (int i = 0; i < 4; ++i) { /* D is never broadcast (bit 3 is the bias) */
            int64_t lines = ms[i]->order == CK_GEMM_ROW_MAJOR ? rows[i] : cols[i];
            ms[i]->batch_stride = i < 3 && (c->bcast >> i) & 1 ? 0 : lines * ms[i]->ld + c->gap;
        }
        if (c->alias)
            p->c.batch_stride = p->d.batch_stride;
        p->bias_batch_stride =
            (c->bcast >> 3) & 1 ? 0 : (c->bias == CK_GEMM_BIAS_ROW ? c->m : c->n) + c->gap;
    }
    p->extra_count = c->nx;
    for (int x = 0; x < c->nx && x < CK_GEMM_MAX_EXTRAS; ++x) {
        ck_gemm_extra *e = &p->extras[x];
        *e = c->x[x];
        int full = e->broadcast == CK_GEMM_EXTRA_FULL;
        if (full && e->ld == 0)
            e->ld = (e->order == CK_GEMM_ROW_MAJOR ? c->n : c->m) + c->pad;
        if (c->batch > 1 && !((c->bcast >> 4) & 1))
            e->batch_stride = (full ? (e->order == CK_GEMM_ROW_MAJOR ? c->m : c->n) * e->ld
                               : e->broadcast == CK_GEMM_EXTRA_ROW ? c->m
                                                                   : c->n) +
                              c->gap;
    }
    p->compute = c->compute;
    p->bias = c->bias;
    p->bias_dtype = c->bias_dt;
    p->activation = c->act;
    if (c->epi && ck_ew_parse(c->epi, prog) == CK_SUCCESS)
        p->epilogue = prog;
}

static int gc_pick_instance(const ck_gemm_problem *p, const char *want)
{
    ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
    int n = 0;
    if (ck_gemm_candidates(g_ctx, p, cand, CK_GEMM_MAX_CANDIDATES, &n) != CK_SUCCESS || n < 1)
        return -1;
    int best = -1;
    for (int i = 0; i < n; ++i)
        if ((!want || strstr(cand[i].name, want)) &&
            (best < 0 ||
             (long)cand[i].tile_m * cand[i].tile_n < (long)cand[best].tile_m * cand[best].tile_n))
            best = i;
    if (best < 0) {
        CHECK_MSG(0, "no candidate named like '%s' (first: %s)", want, cand[0].name);
        return -1;
    }
    return cand[best].id;
}

/* A plan of family 90's 128 x 128 instance with K split `split` ways (the policy's other
 * steps: source, module, prepare). NULL after a failed check. */
static ck_gemm_plan *gc_plan_split(const ck_gemm_prob *prob, int split)
{
    const ck_gemm_family *f = &ck_gemm_family_sm90;
    ck_device_props pp;
    ck_device_get_props(ck_context_device(g_ctx), &pp);
    char reason[512] = "";
    if (!f->supports(prob, &pp, reason, sizeof reason)) {
        CHECK_MSG(0, "sm90 refuses: %s", reason);
        return NULL;
    }
    ck_gemm_instance ins[24];
    int n = f->instances(prob, &pp, ins, 24), pick = -1;
    for (int i = 0; i < n; ++i)
        if (pick < 0 && ins[i].tile_n == 128 && ins[i].cluster <= 1)
            pick = i;
    CHECK(pick >= 0);
    ck_gemm_plan *plan = calloc(1, sizeof *plan);
    if (pick < 0 || !plan) {
        free(plan);
        return NULL;
    }
    plan->ctx = g_ctx, plan->prob = *prob, plan->family = f, plan->inst = ins[pick];
    plan->inst.split_k = split;
    plan->prob.tf32_truncate = 1;
    char *src = NULL;
    ck_module *mod = NULL;
    ck_status st = f->source(&plan->prob, &plan->inst, &src);
    if (!st)
        st = ck_module_load(ck_context_device(g_ctx), src, NULL, 0, &mod);
    free(src);
    if (!st)
        st = ck_module_get_kernel(mod, f->kernel_name, &plan->kernel);
    if (!st)
        st = f->prepare(plan);
    CHECK_MSG(st == CK_SUCCESS, "building the split-K kernel: %s", ck_last_error());
    if (st) {
        ck_gemm_plan_destroy(plan);
        return NULL;
    }
    return plan;
}

/* Elements a matrix of the problem spans over all its batches. */
static size_t gc_span(const ck_gemm_problem *p, const ck_gemm_matrix *mt, int64_t rows,
                      int64_t cols)
{
    int64_t lines = mt->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    return (size_t)((p->batch - 1) * mt->batch_stride + lines * mt->ld);
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
    ck_gemm_plan *plan = NULL;
    if (c->decomp) {
        ck_gemm_plan_options o;
        ck_gemm_plan_options_init(&o);
        o.decomp = c->decomp;
        o.split_k = c->split;
        st = ck_gemm_plan_create_opt(g_ctx, &p, &o, &plan);
        if (!st && c->grid)
            st = ck_gemm_sm90_set_grid(plan, c->grid);
    } else if (c->split > 1) {
        plan = gc_plan_split(&prob, c->split);
        st = plan ? CK_SUCCESS : CK_ERROR_INTERNAL;
    } else {
        int inst = c->instance == -2 ? gc_pick_instance(&p, c->want) : c->instance;
        st = ck_gemm_plan_create(g_ctx, &p, inst, &plan);
    }
    p = prob.p; /* with every ld resolved */
    CHECK_MSG(st == CK_SUCCESS, "plan %lldx%lldx%lld %s: %s", (long long)c->m, (long long)c->n,
              (long long)c->k, ck_dtype_name(c->a), ck_last_error());
    if (st)
        return 1;
    prob.tf32_truncate = plan->prob.tf32_truncate; /* the reference reads f32 as the kernel */
    size_t sa = gc_span(&p, &p.a, p.m, p.k) * (size_t)ck_gemm_dtype_bytes(p.a.dtype);
    size_t sb = gc_span(&p, &p.b, p.k, p.n) * (size_t)ck_gemm_dtype_bytes(p.b.dtype);
    size_t sd = gc_span(&p, &p.d, p.m, p.n) * (size_t)ck_gemm_dtype_bytes(p.d.dtype);
    size_t sc =
        prob.has_c ? gc_span(&p, &p.c, p.m, p.n) * (size_t)ck_gemm_dtype_bytes(p.c.dtype) : 0;
    size_t nbias = c->bias ? (size_t)((p.batch - 1) * p.bias_batch_stride +
                                      (c->bias == CK_GEMM_BIAS_ROW ? c->m : c->n))
                           : 0;
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
    void *hx[CK_GEMM_MAX_EXTRAS] = {0}, *dx[CK_GEMM_MAX_EXTRAS] = {0};
    for (int x = 0; x < p.extra_count; ++x) {
        const ck_gemm_extra *e = &p.extras[x];
        size_t nel =
            e->broadcast == CK_GEMM_EXTRA_FULL
                ? gc_span(&p, &(ck_gemm_matrix){e->dtype, e->order, e->ld, e->batch_stride}, p.m,
                          p.n)
                : (size_t)((p.batch - 1) * e->batch_stride +
                           (e->broadcast == CK_GEMM_EXTRA_ROW ? p.m : p.n));
        size_t bytes = nel * (size_t)ck_gemm_dtype_bytes(e->dtype);
        hx[x] = malloc(bytes);
        gc_fill(hx[x], e->dtype, nel);
        CHECK_OK(ck_malloc(dev, bytes, &dx[x]));
        CHECK_OK(ck_memcpy_h2d(dev, dx[x], hx[x], bytes, NULL));
    }
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    for (int x = 0; x < p.extra_count; ++x)
        args.extra[x] = dx[x];
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
    for (int r = 0; r < c->repeat && !st; ++r) { /* the same inputs again: the same bits */
        void *again = malloc(sd);
        CHECK_OK(ck_memcpy_h2d(dev, dd, hd, sd, NULL));
        CHECK_OK(ck_gemm_plan_execute(plan, &args));
        CHECK_OK(ck_context_synchronize(g_ctx));
        CHECK_OK(ck_memcpy_d2h(dev, again, dd, sd, NULL));
        if (c->decomp != CK_GEMM_DECOMP_SPLIT_K_ATOMIC)
            CHECK_MSG(memcmp(again, out, sd) == 0, "run %d of %lldx%lldx%lld differs in its bits",
                      r + 2, (long long)c->m, (long long)c->n, (long long)c->k);
        free(again);
    }
    ck_gemm_args h = args;
    h.a = ha;
    h.b = hb;
    h.c = hc;
    h.bias = hbias;
    for (int x = 0; x < p.extra_count; ++x)
        h.extra[x] = hx[x];
    long bad = 0;
    int des = ck_gemm_dtype_bytes(p.d.dtype);
    unsigned char *written = calloc(sd / (size_t)des, 1);
    for (int64_t bt = 0; bt < p.batch && !st; ++bt) {
        ck_gemm_args hbt;
        ck_gemm_args_batch(&prob, &h, bt, &hbt);
        int64_t base = bt * p.d.batch_stride;
        for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j) {
                double mag = 0;
                double ref = ck_gemm_reference_value(&prob, &hbt, i, j, &mag);
                int64_t off =
                    base + (p.d.order == CK_GEMM_ROW_MAJOR ? i * p.d.ld + j : i + j * p.d.ld);
                written[off] = 1;
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
                                  "%lldx%lldx%lld %s x %s -> %s (a%c b%c d%c) batch %lld of "
                                  "%lld: D(%lld, %lld) = %.9g, reference %.9g (tolerance %.3g)",
                                  (long long)c->m, (long long)c->n, (long long)c->k,
                                  ck_dtype_name(c->a), ck_dtype_name(c->b), ck_dtype_name(c->d),
                                  c->ao ? 'c' : 'r', c->bo ? 'c' : 'r', c->dox ? 'c' : 'r',
                                  (long long)bt, (long long)p.batch, (long long)i, (long long)j,
                                  got, refq, tol);
                    ++bad;
                }
            }
    }
    /* every element of D's buffer not in the product (ld padding, gaps between batches) must
     * be untouched */
    for (size_t e = 0; e < sd / (size_t)des && !st; ++e)
        if (!written[e] && memcmp((char *)out + e * des, (char *)hd + e * des, (size_t)des)) {
            CHECK_MSG(0, "D element %zu outside the product was written", e);
            ++bad;
            break;
        }
    free(written);
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
    for (int x = 0; x < CK_GEMM_MAX_EXTRAS; ++x) {
        ck_free(dev, dx[x]);
        free(hx[x]);
    }
    free(out);
    ck_gemm_plan_destroy(plan);
    return bad;
}

#endif
