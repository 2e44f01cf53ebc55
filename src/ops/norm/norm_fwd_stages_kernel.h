/*
 * Stages shared by the layernorm / RMSNorm / smooth-quant forward pipelines
 * (norm_fwd_kernel.h: the row in registers; norm_fwd_looped_kernel.h: long rows, streamed):
 * one vector of a row read as x (+ residual), and its y before quantization. The constants are
 * those norm_fwd_kernel.h documents.
 */
#ifndef CK_NORM_FWD_STAGES_KERNEL_H
#define CK_NORM_FWD_STAGES_KERNEL_H
#include "ops/norm/norm_common_kernel.h"

/* a = x (+ residual) of vector v of the row */
CK_DEVICE void norm_fwd_get(const char *x, long long sx, const char *r, long long sr, long long row,
                            int v, float *a)
{
    norm_load(x + (row * sx + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_XT), NORM_XT, a);
#if NORM_RT >= 0
    float b[NORM_VEC];
    norm_load(r + (row * sr + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_RT), NORM_RT, b);
    for (int k = 0; k < NORM_VEC; ++k)
        a[k] += b[k];
#else
    (void)r;
    (void)sr;
#endif
}

/* y (before quantization) of vector v from a */
CK_DEVICE void norm_fwd_y(const char *gamma, const char *beta, const char *smooth, int v,
                          float mean, float rstd, float *a)
{
#if NORM_KIND != 2
    float g[NORM_VEC];
    norm_load(gamma + (long long)v * NORM_VEC * NORM_ESIZE(NORM_GT), NORM_GT, g);
#if NORM_BT >= 0
    float b[NORM_VEC];
    norm_load(beta + (long long)v * NORM_VEC * NORM_ESIZE(NORM_BT), NORM_BT, b);
#endif
    for (int k = 0; k < NORM_VEC; ++k) {
#if NORM_KIND == 0
        float t = (a[k] - mean) * rstd * g[k];
#else
        float t = a[k] * rstd * g[k];
#endif
#if NORM_BT >= 0
        t += b[k];
#endif
        a[k] = t;
    }
#else
    (void)gamma;
    (void)mean;
    (void)rstd;
#endif
    (void)beta;
#if NORM_ST >= 0
    float s[NORM_VEC];
    norm_load(smooth + (long long)v * NORM_VEC * NORM_ESIZE(NORM_ST), NORM_ST, s);
    for (int k = 0; k < NORM_VEC; ++k)
        a[k] *= s[k];
#else
    (void)smooth;
#endif
}

#endif
