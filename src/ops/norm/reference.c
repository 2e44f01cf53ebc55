/*
 * The layernorm / RMSNorm / smooth-quant CPU reference (norm_internal.h), in double precision,
 * one row at a time: the one the tests and `ck prof layernorm|rmsnorm` check the kernels
 * against. The callers give the row's values as doubles (their inputs' exact values; the
 * forward's a = x + residual rounded to f32, as the kernels add in f32).
 */
#include <math.h>

#include "ops/norm/norm_internal.h"

void ck_norm_reference_stats(ck_norm_kind kind, int64_t n, const double *a, double eps,
                             double *mean, double *rstd)
{
    double sum = 0, ss = 0, m2 = 0;
    for (int64_t j = 0; j < n; ++j) {
        sum += a[j];
        ss += a[j] * a[j];
    }
    double mu = sum / (double)n;
    for (int64_t j = 0; j < n; ++j)
        m2 += (a[j] - mu) * (a[j] - mu);
    *mean = kind == CK_NORM_LAYERNORM ? mu : 0.0;
    *rstd = 1.0 / sqrt((kind == CK_NORM_LAYERNORM ? m2 : ss) / (double)n + eps);
}

void ck_norm_reference_y(ck_norm_kind kind, int64_t n, const double *a, double mean, double rstd,
                         const double *gamma, const double *beta, const double *smooth, double *y)
{
    for (int64_t j = 0; j < n; ++j) {
        double t = kind == CK_NORM_LAYERNORM ? (a[j] - mean) * rstd * gamma[j]
                   : kind == CK_NORM_RMSNORM ? a[j] * rstd * gamma[j]
                                             : a[j];
        if (kind == CK_NORM_LAYERNORM && beta)
            t += beta[j];
        if (smooth)
            t *= smooth[j];
        y[j] = t;
    }
}

double ck_norm_reference_scale(int64_t n, const double *y, double qmax)
{
    double amax = 0;
    for (int64_t j = 0; j < n; ++j) {
        if (isnan(y[j]))
            return NAN;
        if (fabs(y[j]) > amax)
            amax = fabs(y[j]);
    }
    return amax / qmax;
}

void ck_norm_reference_bwd(ck_norm_kind kind, int64_t n, const double *dy, const double *x,
                           const double *gamma, double mean, double rstd, double *dx,
                           double *dgamma, double *dbeta)
{
    double s1 = 0, s2 = 0;
    for (int64_t j = 0; j < n; ++j) {
        double xh = (x[j] - mean) * rstd, gd = dy[j] * gamma[j];
        s1 += gd;
        s2 += gd * xh;
        if (dgamma)
            dgamma[j] += dy[j] * xh;
        if (dbeta)
            dbeta[j] += dy[j];
    }
    double m1 = kind == CK_NORM_LAYERNORM ? s1 / (double)n : 0.0, m2 = s2 / (double)n;
    for (int64_t j = 0; j < n; ++j) {
        double xh = (x[j] - mean) * rstd, gd = dy[j] * gamma[j];
        dx[j] = rstd * (gd - m1 - xh * m2);
    }
}
