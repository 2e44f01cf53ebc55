/* layernorm2d / rmsnorm2d backward (dx, dgamma, dbeta) against the library's double CPU
 * reference (src/ops/norm/reference.c) on odd
 * hidden sizes, padded strides and f32/f16/bf16; dgamma/dbeta bit-identical across runs. */
#include <stdio.h>

#include "norm_test_util.h"
#include "ops/norm/norm_internal.h"

static ck_context *ctx;

typedef struct bcase {
    ck_norm_kind kind;
    int64_t rows, n, pad;
    ck_dtype xt, gt, dgt;
} bcase;

static void run_case(const bcase *c, int repeat_check)
{
    uint64_t rng = 99 + (uint64_t)c->n * 13 + (uint64_t)c->kind;
    int64_t rows = c->rows, n = c->n, ld = n + c->pad;
    int ln = c->kind == CK_NORM_LAYERNORM;
    nt_buf x, dy, dx, g, mean, rstd, dg, db;
    memset(&mean, 0, sizeof mean);
    memset(&db, 0, sizeof db);
    double *xv = malloc(sizeof(double) * (size_t)(rows * n)),
           *dyv = malloc(sizeof(double) * (size_t)(rows * n)), *gv = malloc(sizeof(double) * n),
           *mv = malloc(sizeof(double) * rows), *rv = malloc(sizeof(double) * rows),
           *dgr = calloc((size_t)n, sizeof(double)), *dbr = calloc((size_t)n, sizeof(double)),
           *dga = calloc((size_t)n, sizeof(double)), *dba = calloc((size_t)n, sizeof(double)),
           *dxr = malloc(sizeof(double) * n);
    int ok = nt_alloc(ctx, &x, c->xt, rows, n, ld, 0) &&
             nt_alloc(ctx, &dy, c->xt, rows, n, n, 0) &&
             nt_alloc(ctx, &dx, c->xt, rows, n, ld, 0) && nt_alloc(ctx, &g, c->gt, 1, n, n, 1) &&
             nt_alloc(ctx, &rstd, CK_DTYPE_F32, 1, rows, rows, 1) &&
             nt_alloc(ctx, &dg, c->dgt, 1, n, n, 1);
    if (ln)
        ok = ok && nt_alloc(ctx, &mean, CK_DTYPE_F32, 1, rows, rows, 1) &&
             nt_alloc(ctx, &db, c->dgt, 1, n, n, 1);
    CHECK(ok && xv && dyv && gv && mv && rv && dgr && dbr && dga && dba && dxr);
    if (!ok || !xv || !dyv || !gv || !mv || !rv || !dgr || !dbr || !dga || !dba || !dxr)
        goto done;
    nt_fill(&x, xv, -2.0, 3.0, &rng);
    nt_fill(&dy, dyv, -1.0, 1.0, &rng);
    nt_fill(&g, gv, 0.5, 1.5, &rng);
    /* the statistics as the forward writes them (f32), from the double reference */
    for (int64_t i = 0; i < rows; ++i) {
        double mu, rs;
        ck_norm_reference_stats(c->kind, n, xv + i * n, 1e-5, &mu, &rs);
        mv[i] = ln ? (double)(float)mu : 0.0;
        rv[i] = (double)(float)rs;
        nt_put(rstd.host, CK_DTYPE_F32, (size_t)i, nt_code(CK_DTYPE_F32, rv[i]));
        if (ln)
            nt_put(mean.host, CK_DTYPE_F32, (size_t)i, nt_code(CK_DTYPE_F32, mv[i]));
    }
    nt_upload(ctx, &x);
    nt_upload(ctx, &dy);
    nt_upload(ctx, &g);
    nt_upload(ctx, &rstd);
    if (ln)
        nt_upload(ctx, &mean);
    ck_norm_backward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = c->kind;
    d.dy = &dy.ten;
    d.x = &x.ten;
    d.gamma = &g.ten;
    d.mean = ln ? &mean.ten : NULL;
    d.rstd = &rstd.ten;
    d.dx = &dx.ten;
    d.dgamma = &dg.ten;
    d.dbeta = ln ? &db.ten : NULL;
    CHECK_OK(ck_norm_backward(ctx, &d));
    CHECK_OK(ck_context_synchronize(ctx));
    nt_download(ctx, &dx);
    nt_download(ctx, &dg);
    if (ln)
        nt_download(ctx, &db);
    long bad = 0;
    for (int64_t i = 0; i < rows; ++i) {
        ck_norm_reference_bwd(c->kind, n, dyv + i * n, xv + i * n, gv, mv[i], rv[i], dxr, dgr,
                              dbr);
        /* the tolerances' magnitudes */
        double s1 = 0, mag = 0;
        for (int64_t j = 0; j < n; ++j) {
            double xh = (xv[i * n + j] - mv[i]) * rv[i], gd = dyv[i * n + j] * gv[j];
            s1 += gd;
            mag += fabs(gd * xh);
            dga[j] += fabs(dyv[i * n + j] * xh);
            dba[j] += fabs(dyv[i * n + j]);
        }
        double m1 = ln ? s1 / (double)n : 0.0;
        for (int64_t j = 0; j < n; ++j) {
            double xh = (xv[i * n + j] - mv[i]) * rv[i], gd = dyv[i * n + j] * gv[j];
            double want = dxr[j], got = nt_at(&dx, i, j);
            /* f32 terms: each of gd, m1, xh*m2 carries ~1e-6 relative error (the sums over the
             * row ~ n * 2^-24 in the worst order, bounded here by 1e-6 * mean|gd*xh| * ...) */
            double tol = 2e-5 * rv[i] * (fabs(gd) + fabs(m1) + fabs(xh) * (mag / (double)n) + 1) +
                         2.0 * nt_half_ulp(c->xt, want) * (c->xt != CK_DTYPE_F32);
            if (!(fabs(got - want) <= tol) && bad++ < 5)
                fprintf(stderr, "dx[%lld][%lld] = %.9g, want %.9g (tol %.3g)\n", (long long)i,
                        (long long)j, got, want, tol);
        }
    }
    for (int64_t j = 0; j < n; ++j) {
        /* f32 sums of `rows` terms (two stages): 1e-5 of the sum of magnitudes, plus output
         * rounding */
        double got = nt_at(&dg, 0, j), tol = 1e-5 * dga[j] + 1e-30 +
                                            2.0 * nt_half_ulp(c->dgt, dgr[j]) * (c->dgt != CK_DTYPE_F32);
        if (!(fabs(got - dgr[j]) <= tol) && bad++ < 5)
            fprintf(stderr, "dgamma[%lld] = %.9g, want %.9g\n", (long long)j, got, dgr[j]);
        if (ln) {
            got = nt_at(&db, 0, j);
            tol = 1e-5 * dba[j] + 1e-30 + 2.0 * nt_half_ulp(c->dgt, dbr[j]) * (c->dgt != CK_DTYPE_F32);
            if (!(fabs(got - dbr[j]) <= tol) && bad++ < 5)
                fprintf(stderr, "dbeta[%lld] = %.9g, want %.9g\n", (long long)j, got, dbr[j]);
        }
    }
    CHECK_MSG(bad == 0, "backward kind %d %lldx%lld pad %lld %s gamma %s: %ld mismatches",
              (int)c->kind, (long long)rows, (long long)n, (long long)c->pad,
              ck_dtype_name(c->xt), ck_dtype_name(c->gt), bad);
    if (repeat_check) {
        /* determinism: a second run gives the same bits */
        void *first = malloc(nt_bytes(&dg) + (ln ? nt_bytes(&db) : 0));
        if (first) {
            memcpy(first, dg.host, nt_bytes(&dg));
            if (ln)
                memcpy((char *)first + nt_bytes(&dg), db.host, nt_bytes(&db));
            CHECK_OK(ck_memset_d8(ck_context_device(ctx), dg.dev, 0, nt_bytes(&dg), NULL));
            CHECK_OK(ck_norm_backward(ctx, &d));
            CHECK_OK(ck_context_synchronize(ctx));
            nt_download(ctx, &dg);
            CHECK(memcmp(first, dg.host, nt_bytes(&dg)) == 0);
            if (ln) {
                nt_download(ctx, &db);
                CHECK(memcmp((char *)first + nt_bytes(&dg), db.host, nt_bytes(&db)) == 0);
            }
            free(first);
        }
    }
done:
    nt_free(ctx, &x);
    nt_free(ctx, &dy);
    nt_free(ctx, &dx);
    nt_free(ctx, &g);
    nt_free(ctx, &mean);
    nt_free(ctx, &rstd);
    nt_free(ctx, &dg);
    nt_free(ctx, &db);
    free(xv);
    free(dyv);
    free(gv);
    free(mv);
    free(rv);
    free(dgr);
    free(dbr);
    free(dga);
    free(dba);
    free(dxr);
}

static const ck_dtype F32 = CK_DTYPE_F32, F16 = CK_DTYPE_F16, BF16 = CK_DTYPE_BF16;

static void test_layernorm_bwd(void)
{
    const bcase cs[] = {
        {CK_NORM_LAYERNORM, 7, 1, 0, F32, F32, F32},
        {CK_NORM_LAYERNORM, 9, 3, 1, BF16, F32, F32},
        {CK_NORM_LAYERNORM, 40, 17, 3, F16, F16, F32},
        {CK_NORM_LAYERNORM, 5, 1023, 0, F32, F32, F32},
        {CK_NORM_LAYERNORM, 3, 4097, 0, BF16, BF16, BF16},
        {CK_NORM_LAYERNORM, 6, 2048, 8, BF16, F32, F32},
        {CK_NORM_LAYERNORM, 2, 65536, 0, BF16, F32, F32},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        run_case(&cs[i], i == 2 || i == 5);
}

static void test_rmsnorm_bwd(void)
{
    const bcase cs[] = {
        {CK_NORM_RMSNORM, 5, 1, 0, BF16, F32, F32},
        {CK_NORM_RMSNORM, 8, 3, 0, F32, F32, F32},
        {CK_NORM_RMSNORM, 33, 17, 0, BF16, BF16, F32},
        {CK_NORM_RMSNORM, 4, 1023, 2, F16, F32, F16},
        {CK_NORM_RMSNORM, 3, 4097, 0, F32, F32, F32},
        {CK_NORM_RMSNORM, 2, 65536, 0, F32, F32, F32},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        run_case(&cs[i], i == 2);
}

/* The instance the library plans for c (its dx / gamma / dgamma tensors need only shapes). */
static int planned_ring(const bcase *c, int *cslices)
{
    ck_tensor x, dy, dx, g, st, dg;
    int64_t xs[2] = {c->rows, c->n}, xst[2] = {c->n + c->pad, 1}, ds[2] = {c->n, 1};
    int64_t gs[1] = {c->n}, ss[1] = {c->rows}, one[1] = {1};
    char *base = (char *)64; /* never dereferenced: planning reads shapes and alignment */
    ck_tensor_init(&x, base, c->xt, 2, xs, xst);
    ck_tensor_init(&dy, base + (1 << 28), c->xt, 2, xs, ds);
    ck_tensor_init(&dx, base + (2 << 28), c->xt, 2, xs, xst);
    ck_tensor_init(&g, base + (3 << 28), c->gt, 1, gs, one);
    ck_tensor_init(&st, base + (4 << 28), CK_DTYPE_F32, 1, ss, one);
    ck_tensor_init(&dg, base + (5 << 28), c->dgt, 1, gs, one);
    ck_norm_backward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = c->kind;
    d.dy = &dy, d.x = &x, d.gamma = &g, d.rstd = &st, d.dx = &dx, d.dgamma = &dg;
    d.mean = c->kind == CK_NORM_LAYERNORM ? &st : NULL;
    ck_norm_instance in;
    char name[64], problem[128];
    if (ck_norm_backward_plan(ctx, &d, &in, name, sizeof name, problem, sizeof problem) !=
        CK_SUCCESS)
        return -1;
    *cslices = in.cslices;
    return in.ring;
}

/* The shared-memory ring (x and dy of the next rows by cp.async): 16-, 8- and 4-byte vectors
 * (n not a multiple of 8), rows of a block's lane groups and whole blocks, more rows than the
 * grid's row groups (the ring wraps), partial last row groups, padded strides; the combine's
 * slices (automatic and forced, more slices than partial rows, n not a multiple of 32); the
 * previous pipeline (CK_NORM_BWD=0,1) still right. */
static void test_ring_bwd(void)
{
    const struct {
        bcase c;
        const char *env; /* CK_NORM_BWD */
        int ring;        /* the ring expected (1: some stages) */
    } cs[] = {
        {{CK_NORM_LAYERNORM, 300, 1024, 0, BF16, BF16, F32}, NULL, 1},
        {{CK_NORM_RMSNORM, 257, 256, 0, F16, F32, F32}, NULL, 1},
        {{CK_NORM_LAYERNORM, 129, 2052, 4, F32, F32, F32}, NULL, 1},
        {{CK_NORM_LAYERNORM, 70, 1002, 0, BF16, F32, BF16}, NULL, 1},
        {{CK_NORM_RMSNORM, 45, 1004, 0, BF16, BF16, F32}, NULL, 1},
        {{CK_NORM_LAYERNORM, 37, 8192, 0, BF16, BF16, F32}, NULL, 1},
        {{CK_NORM_LAYERNORM, 300, 1000, 0, BF16, F32, F32}, "-1,32", 1},
        {{CK_NORM_RMSNORM, 131, 776, 8, F16, F16, F32}, "2,4", 1},
        {{CK_NORM_LAYERNORM, 300, 1024, 0, BF16, BF16, F32}, "0,1", 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i) {
        if (cs[i].env)
            setenv("CK_NORM_BWD", cs[i].env, 1);
        int cslices = 0, ring = planned_ring(&cs[i].c, &cslices);
        CHECK_MSG(cs[i].ring ? ring >= 2 : ring == 0, "case %zu: ring %d", i, ring);
        if (cs[i].env && strcmp(cs[i].env, "-1,32") == 0)
            CHECK_MSG(cslices == 32, "case %zu: %d combine slices", i, cslices);
        if (cs[i].env && strcmp(cs[i].env, "2,4") == 0)
            CHECK_MSG(ring == 2 && cslices == 4, "case %zu: ring %d slices %d", i, ring, cslices);
        run_case(&cs[i].c, i == 0 || i == 6);
        unsetenv("CK_NORM_BWD");
    }
}

static void test_large_gpu(void)
{
    if (ck_context_backend(ctx) != CK_BACKEND_CUDA)
        return;
    const bcase cs[] = {
        {CK_NORM_LAYERNORM, 16384, 8192, 0, BF16, BF16, F32},
        {CK_NORM_RMSNORM, 4096, 8192, 0, BF16, F32, F32},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        run_case(&cs[i], 1);
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    RUN_TEST(test_layernorm_bwd);
    RUN_TEST(test_rmsnorm_bwd);
    RUN_TEST(test_ring_bwd);
    RUN_TEST(test_large_gpu);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
