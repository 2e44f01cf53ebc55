/*
 * The layernorm / RMSNorm / smooth-quant forward checked against a double-precision CPU
 * reference (the library's, src/ops/norm/reference.c), every output element (y, residual_out,
 * mean, rstd, y_scale): shared by test_norm and test_norm_long.
 */
#ifndef CK_TESTS_NORM_FWD_CHECK_H
#define CK_TESTS_NORM_FWD_CHECK_H

#include <stdio.h>

#include "norm_test_util.h"
#include "ops/norm/norm_internal.h"

typedef struct fcase {
    ck_norm_kind kind;
    int64_t rows, n, pad; /* row stride = n + pad */
    ck_dtype xt, yt, gt;
    int beta, residual, resout, smooth, stats;
    int special; /* put NaN in row 0 and Inf in row 1 */
} fcase;

/* Tolerance on a y value (before output rounding) computed in f32: the statistics carry
 * relative errors of a few f32 ulps times log2(N) (pairwise/Chan combination), the normalized
 * value |xhat| <= sqrt(N); 4e-5 * (1 + |y|) bounds that for N <= 65536 with margin. Output
 * rounding adds half an ulp of the output type (a value near a midpoint may round either way). */
static double ytol(ck_dtype t, double ref)
{
    return 4e-5 * (1.0 + fabs(ref)) + (t == CK_DTYPE_F32 ? 0.0 : 2.0 * nt_half_ulp(t, ref));
}

static void nt_check_forward(ck_context *ctx, const fcase *c)
{
    uint64_t rng = 1234 + (uint64_t)c->n * 7 + (uint64_t)c->kind;
    int64_t rows = c->rows, n = c->n, ld = n + c->pad;
    int quant = c->yt == CK_DTYPE_I8 || c->yt == CK_DTYPE_FP8_E4M3;
    double qmax = c->yt == CK_DTYPE_I8 ? 127.0 : 448.0;
    nt_buf x, r, y, o, g, b, s, ys, mean, rstd;
    memset(&r, 0, sizeof r);
    memset(&o, 0, sizeof o);
    memset(&b, 0, sizeof b);
    memset(&s, 0, sizeof s);
    memset(&ys, 0, sizeof ys);
    memset(&mean, 0, sizeof mean);
    memset(&rstd, 0, sizeof rstd);
    double *xv = malloc(sizeof(double) * (size_t)(rows * n)),
           *rv = malloc(sizeof(double) * (size_t)(rows * n)), *gv = malloc(sizeof(double) * n),
           *bv = malloc(sizeof(double) * n), *sv = malloc(sizeof(double) * n),
           *yref = malloc(sizeof(double) * n), *arow = malloc(sizeof(double) * n);
    int ok = nt_alloc(ctx, &x, c->xt, rows, n, ld, 0) &&
             nt_alloc(ctx, &y, c->yt, rows, n, ld + 3 * (c->pad > 0), 0) &&
             nt_alloc(ctx, &g, c->gt, 1, n, n, 1);
    if (c->kind == CK_NORM_NONE)
        ok = ok && 1;
    if (c->residual)
        ok = ok && nt_alloc(ctx, &r, c->xt, rows, n, ld, 0);
    if (c->resout)
        ok = ok && nt_alloc(ctx, &o, c->xt, rows, n, n, 0);
    if (c->beta)
        ok = ok && nt_alloc(ctx, &b, c->gt, 1, n, n, 1);
    if (c->smooth)
        ok = ok && nt_alloc(ctx, &s, CK_DTYPE_F32, 1, n, n, 1);
    if (quant)
        ok = ok && nt_alloc(ctx, &ys, CK_DTYPE_F32, 1, rows, rows, 1);
    if (c->stats)
        ok = ok && nt_alloc(ctx, &mean, CK_DTYPE_F32, 1, rows, rows, 1) &&
             nt_alloc(ctx, &rstd, CK_DTYPE_F32, 1, rows, rows, 1);
    CHECK(ok && xv && rv && gv && bv && sv && yref && arow);
    if (!ok || !xv || !rv || !gv || !bv || !sv || !yref || !arow)
        goto done;
    /* x with a common offset so the variance is small relative to the mean (Welford matters) */
    nt_fill(&x, xv, 2.0, 6.0, &rng);
    if (c->special && rows >= 2) {
        nt_put(x.host, c->xt, (size_t)(n / 2), nt_code(c->xt, NAN));
        xv[n / 2] = NAN;
        nt_put(x.host, c->xt, (size_t)(ld + n - 1), nt_code(c->xt, INFINITY));
        xv[n + n - 1] = INFINITY;
    }
    if (c->residual)
        nt_fill(&r, rv, -1.0, 1.0, &rng);
    else
        memset(rv, 0, sizeof(double) * (size_t)(rows * n));
    nt_fill(&g, gv, 0.5, 1.5, &rng);
    if (c->beta)
        nt_fill(&b, bv, -0.5, 0.5, &rng);
    else
        memset(bv, 0, sizeof(double) * n);
    if (c->smooth)
        nt_fill(&s, sv, 0.25, 2.0, &rng);
    nt_upload(ctx, &x);
    if (c->residual)
        nt_upload(ctx, &r);
    nt_upload(ctx, &g);
    if (c->beta)
        nt_upload(ctx, &b);
    if (c->smooth)
        nt_upload(ctx, &s);

    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = c->kind;
    d.epsilon = 1e-5f;
    d.x = &x.ten;
    d.y = &y.ten;
    d.gamma = c->kind == CK_NORM_NONE ? NULL : &g.ten;
    d.beta = c->beta ? &b.ten : NULL;
    d.residual = c->residual ? &r.ten : NULL;
    d.residual_out = c->resout ? &o.ten : NULL;
    d.smooth = c->smooth ? &s.ten : NULL;
    d.y_scale = quant ? &ys.ten : NULL;
    d.mean = c->stats && c->kind == CK_NORM_LAYERNORM ? &mean.ten : NULL;
    d.rstd = c->stats ? &rstd.ten : NULL;
    CHECK_OK(ck_norm_forward(ctx, &d));
    CHECK_OK(ck_context_synchronize(ctx));
    nt_download(ctx, &y);
    if (c->resout)
        nt_download(ctx, &o);
    if (quant)
        nt_download(ctx, &ys);
    if (c->stats) {
        nt_download(ctx, &mean);
        nt_download(ctx, &rstd);
    }
    long bad = 0;
    for (int64_t i = 0; i < rows; ++i) {
        /* a = x + residual rounded to f32 (the kernel adds in f32) */
        for (int64_t j = 0; j < n; ++j) {
            double a = (double)(float)(xv[i * n + j] + rv[i * n + j]);
            arow[j] = a;
            if (c->resout) {
                double got = nt_at(&o, i, j), want = nt_value(c->xt, nt_code(c->xt, a));
                if (!(got == want || (isnan(got) && isnan(want))) && bad++ < 5)
                    fprintf(stderr, "residual_out[%lld][%lld] = %.9g, want %.9g\n", (long long)i,
                            (long long)j, got, want);
            }
        }
        double mu, rs;
        ck_norm_reference_stats(c->kind, n, arow, 1e-5, &mu, &rs);
        ck_norm_reference_y(c->kind, n, arow, mu, rs, gv, c->beta ? bv : NULL,
                            c->smooth ? sv : NULL, yref);
        if (c->stats) {
            double gr = nt_at(&rstd, 0, i);
            if (!(fabs(gr - rs) <= 1e-5 * rs || (isnan(gr) && isnan(rs))) && bad++ < 5)
                fprintf(stderr, "rstd[%lld] = %.9g, want %.9g\n", (long long)i, gr, rs);
            if (c->kind == CK_NORM_LAYERNORM) {
                double gm = nt_at(&mean, 0, i);
                /* a row holding +-Inf: Welford's mean is NaN (Inf - Inf), like PyTorch's CUDA
                 * Welford; the row's y is NaN either way */
                int inf_row = isinf(mu) && isnan(gm);
                if (!(fabs(gm - mu) <= 1e-5 * (fabs(mu) + 1.0 / rs) || (isnan(gm) && isnan(mu)) ||
                      inf_row) &&
                    bad++ < 5)
                    fprintf(stderr, "mean[%lld] = %.9g, want %.9g\n", (long long)i, gm, mu);
            }
        }
        double scale = 0;
        if (quant) {
            double want = ck_norm_reference_scale(n, yref, qmax);
            scale = nt_at(&ys, 0, i);
            if (!(fabs(scale - want) <= 1e-4 * want || (isnan(scale) && isnan(want))) && bad++ < 5)
                fprintf(stderr, "y_scale[%lld] = %.9g, want %.9g\n", (long long)i, scale, want);
        }
        for (int64_t j = 0; j < n; ++j) {
            double got = nt_at(&y, i, j), want = yref[j];
            int good;
            if (quant) {
                /* codes from the kernel's own scale: y/scale in f32 differs from the exact
                 * quotient by the y error (4e-5 relative to max|y|, i.e. 4e-5*qmax in code
                 * units) - the code may be either rounding of the interval around it */
                if (isnan(scale) || isnan(want)) {
                    good = c->yt == CK_DTYPE_I8 ? got == 0 : isnan(got);
                } else {
                    double q = scale > 0 ? want / scale : 0.0, dq = 4e-5 * qmax + 1e-5 * fabs(q);
                    double lo, hi;
                    if (c->yt == CK_DTYPE_I8) {
                        lo = nearbyint(q - dq);
                        hi = nearbyint(q + dq);
                    } else {
                        lo = nt_value(c->yt, nt_code(c->yt, q - dq));
                        hi = nt_value(c->yt, nt_code(c->yt, q + dq));
                    }
                    good = got >= lo && got <= hi;
                }
            } else {
                good = fabs(got - want) <= ytol(c->yt, want) || (isnan(got) && isnan(want));
            }
            if (!good && bad++ < 5)
                fprintf(stderr, "y[%lld][%lld] = %.9g, want %.9g (scale %.9g)\n", (long long)i,
                        (long long)j, got, want, scale);
        }
    }
    CHECK_MSG(bad == 0, "kind %d %lldx%lld pad %lld x %s y %s gamma %s: %ld mismatches",
              (int)c->kind, (long long)rows, (long long)n, (long long)c->pad, ck_dtype_name(c->xt),
              ck_dtype_name(c->yt), ck_dtype_name(c->gt), bad);
done:
    nt_free(ctx, &x);
    nt_free(ctx, &y);
    nt_free(ctx, &g);
    nt_free(ctx, &r);
    nt_free(ctx, &o);
    nt_free(ctx, &b);
    nt_free(ctx, &s);
    nt_free(ctx, &ys);
    nt_free(ctx, &mean);
    nt_free(ctx, &rstd);
    free(xv);
    free(rv);
    free(gv);
    free(bv);
    free(sv);
    free(yref);
    free(arow);
}

#endif
